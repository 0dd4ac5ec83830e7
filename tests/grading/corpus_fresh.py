"""A fresh, held-out set of wrong answers (and correct answers written in unusual ways), for issue 25.

Written by a tutor from the lessons and the learners' exercise notebooks only (not from the grader's checks,
hints, causes or typical mistakes, nor from the other corpora), then graded through
``python -m autograder grade``. Same shape as ``tests/grading/corpus.py``: ``WRONG = {exercise: {student_id:
{"cause", "answers", "fails"}}}`` (every other answer cell is the solution's), plus for each entry
``"judged"`` (does the message name the actual cause: "named", "partly", "not named" or "misleading") and
``"message"`` (the grader's message at the time, first 300 characters). ``fails`` maps each test cell that
failed to words of its message (for an entry not fully named, the nearest words). ``CORRECT`` answers must
get full marks. Wired into tests/grading/test_corpus.py through corpus.py.
"""

WRONG = {
    "ex01_graph": {
        "f01-01-x-gets-node": {
            "cause": ("predicts an AccumulateGrad Node for the data input x too (3 instead of 2), for both inputs"),
            "answers": {
                "q1_answer": """def predicted_counts():
    return {
        "x_a": {"SumBackward0": 1, "MulBackward0": 4, "TanhBackward0": 1, "AddBackward0": 1,
                "AccumulateGrad": 3},
        "x_b": {"SumBackward0": 1, "MulBackward0": 2, "TanhBackward0": 1, "AddBackward0": 1,
                "AccumulateGrad": 3},
    }
""",
            },
            "fails": {
                "q1_check": "one per leaf that requires grad",
            },
            "judged": "named",
            "message": (
                "4 of 5 Node counts for x_a are right; rethink: AccumulateGrad\n  - "
                "AccumulateGrad: one per leaf that requires grad, however often it is used: which "
                "leaves require grad?\n[cause: prediction.node_counts_for_x_a.AccumulateGrad]"
            ),
        },
        "f01-01-bias-mean": {
            "cause": (
                "averages the bias gradient over the N rows (mean) instead of summing it: b's gradient is 1/N too small"
            ),
            "answers": {
                "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dp = 2 * (p - y) / y.numel()
    dL_dz = dL_dp * (1 - p ** 2)
    return {"w": x.T @ dL_dz, "b": dL_dz.mean()}
""",
            },
            "fails": {
                "q2_check": "the 1/N of the mean applied twice",
            },
            "judged": "named",
            "message": (
                "b is exactly 1/5 of the expected value: the 1/N of the mean applied twice (N = 5 "
                "rows here).\n  expected: 0.23603582382202148\n  received: "
                "0.04720715433359146\n[cause: tensor.fraction.the_n_of_the_mean_applied]"
            ),
        },
        "f01-01-skip-accumulate": {
            "cause": "does not count AccumulateGrad Nodes (thinks leaves are not Nodes)",
            "answers": {
                "q3_answer": """def count_nodes(t):
    seen = set()
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return len([n for n in seen if type(n).__name__ != "AccumulateGrad"])
""",
            },
            "fails": {
                "q3_check": "Every Node counts, AccumulateGrad too",
            },
            "judged": "named",
            "message": (
                "count_nodes((a * 2).sin().sum()) is wrong: expected 4, got 3. Every Node counts, "
                "AccumulateGrad too: follow every entry of next_functions (skipping the None ones) "
                "until no new Node turns up\n[cause: value.every_node_counts_accumulategrad_too]"
            ),
        },
    },
    "ex02_leaves": {
        "f01-02-double-leaf": {
            "cause": ("thinks .double() after requires_grad=True keeps v a leaf that gets its .grad"),
            "answers": {
                "q1_answer": """def predictions():
    return {
        "is_leaf":       {"w": True,  "v": True,  "u": True,  "h": False, "g": False, "s": True,  "k": True},
        "requires_grad": {"w": True,  "v": True,  "u": True,  "h": True,  "g": True,  "s": False, "k": False},
        "grad is None":  {"w": False, "v": False, "u": True,  "h": False, "g": True,  "s": True,  "k": True},
    }
""",
            },
            "fails": {
                "q1_check": "v is the result of .double() on a tensor that requires grad",
            },
            "judged": "named",
            "message": (
                "13 of 14 is_leaf and requires_grad predictions are right; rethink: v.is_leaf\n  - "
                "v.is_leaf: v is the result of .double() on a tensor that requires grad; a tensor "
                "is a leaf exactly when it has no grad_fn\n[cause: "
                "prediction.is_leaf_and_requires_grad_predictions.v.is_leaf]"
            ),
        },
        "f01-02-two-forwards": {
            "cause": (
                "runs forward twice, taking h from the first run and the loss from the second: h "
                "is not in that loss's graph"
            ),
            "answers": {
                "q2_answer": """def grad_of_hidden(x, w1, w2):
    h, _ = forward(x, w1, w2)
    _, loss = forward(x, w1, w2)
    (g,) = torch.autograd.grad(loss, h)
    return g
""",
            },
            "fails": {
                "q2_check": "a tensor from another run of the forward",
            },
            "judged": "named",
            "message": (
                "grad_of_hidden raised RuntimeError: The differentiated Tensor at index 0 appears"
                " to not have been used in the graph. Set allow_unused=True if this is the "
                "desired behavior.\n  raised in grad_of_hidden(), line 4: (g,) = "
                "torch.autograd.grad(loss, h)\ntorch.autograd.grad was asked for the gradient with"
                " re"
            ),
        },
        "f01-02-param-float32": {
            "cause": (
                "wraps the values in nn.Parameter (a leaf that requires grad) but draws them in float32, not float64"
            ),
            "answers": {
                "q3_answer": """def make_param(*shape):
    return torch.nn.Parameter(0.1 * torch.randn(*shape))
""",
            },
            "fails": {
                "q3_check": "returned dtype torch.float32",
            },
            "judged": "named",
            "message": (
                "make_param(3, 2) returned dtype torch.float32 and shape (3, 2), expected "
                "torch.float64 and (3, 2) (create it with dtype=torch.float64)."
            ),
        },
    },
    "ex03_backward": {
        "f01-03-zero-between": {
            "cause": ("zeroes the gradients between the two backward passes, so only loss2's gradients remain"),
            "answers": {
                "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    loss1.backward(retain_graph=True)
    for m in (trunk, head1, head2):
        m.zero_grad()          # start clean for the second loss
    loss2.backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}
""",
            },
            "fails": {
                "q2_check": ".grad was reset between the backward passes",
            },
            "judged": "named",
            "message": (
                "grads_two_passes raised AttributeError: 'NoneType' object has no attribute "
                "'detach'\n  raised in <dictcomp>(), line 13: return {name: "
                "p.grad.detach().clone() for name, p in named_parameters(trunk, head1, "
                "head2).items()}\n.grad was reset between the backward passes (zero_grad(), or "
                ".grad set to None or"
            ),
        },
        "f01-03-first-not-detached": {
            "cause": (
                "returns the first derivative still attached to its create_graph=True graph (only "
                "the second is detached)"
            ),
            "answers": {
                "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), x)
    return first, second.detach()
""",
            },
            "fails": {
                "q3_check": "is still attached to the autograd graph",
            },
            "judged": "named",
            "message": (
                "f'(x) is still attached to the autograd graph (a leaf, requires_grad=True). "
                "create_graph=True, which the second derivative needs, leaves f'(x) in the graph: "
                "return first.detach().\n  expected: [0.75, 3.0, 12.0]\n  received: [0.75, 3.0, "
                "12.0]\n[cause: tensor.attached.create_graph_true_which_the_second]"
            ),
        },
        "f01-03-all-steps-retained": {
            "cause": (
                "thinks retain_graph=True keeps every step's graph alive, so the peak grows with "
                "steps (steps graphs instead of 2)"
            ),
            "answers": {
                "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * d + n * h + n)
    return {"peak without retain_graph": graph,
            "alive after the loop with retain_graph": graph,
            "peak with retain_graph": steps * graph}
""",
            },
            "fails": {
                "q4_check": "Is a graph counted that backward() already freed",
            },
            "judged": "named",
            "message": (
                "peak with retain_graph (n=8, d=10, h=20) is 992 B too high: exactly the size of "
                "one step's graph. Is a graph counted that backward() already freed, or that "
                "nothing references any more?\n  expected: 1984 B\n  received: 2976 B\n[cause: "
                "bytes.steps.too_high]"
            ),
        },
    },
    "ex04_accumulation": {
        "f01-04-logged-snapshot": {
            "cause": (
                "thinks `logged = w.grad` is a snapshot of the values at that moment ([3, 3]), not "
                "the same tensor that zero_grad(set_to_none=False) zeroes and the next backward "
                "adds into"
            ),
            "answers": {
                "q1_answer": """def predicted_grads():
    return {"a": [3.0, 3.0], "b": [5.0, -1.0], "c": [0.0, 0.0], "d": [3.0, 12.0],
            "e": None, "f": [4.0, 4.0], "g": [3.0, 3.0]}
""",
            },
            "fails": {
                "q1_check": "not a copy",
            },
            "judged": "named",
            "message": (
                "3 of 4 predictions for d to g are right; rethink: g\n  - g: logged is the tensor "
                "object .grad was when it was logged, not a copy: which calls change that tensor "
                "in place, and which give .grad a new tensor? (a hidden test: its inputs are not "
                "shown)\n[cause: prediction.predictions_for_d_to_g.g]"
            ),
        },
        "f01-04-one-over-k": {
            "cause": (
                "weights each micro-batch loss by 1/k (k micro-batches) instead of len(micro)/N: "
                "wrong when the last micro-batch is smaller"
            ),
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    chunks = list(zip(x.split(micro_batch), y.split(micro_batch)))
    k = len(chunks)
    for xb, yb in chunks:
        (F.mse_loss(model(xb), yb) / k).backward()
""",
            },
            "fails": {
                "q2_check": "Dividing each loss by the number of micro-batches is right only when",
            },
            "judged": "named",
            "message": (
                "0.weight differs from the expected value (relative error 1.1e-01 in max-norm; "
                "the test is elementwise, |received - expected| <= atol + rtol * |expected| with "
                "rtol=1.3e-06, atol=1e-05, and its worst element is off by 0.61 where 1.5e-05 is "
                "allowed). Not a constant factor of the full-batch gradient: is"
            ),
        },
        "f01-04-tanh-twice": {
            "cause": (
                "counts the Tanh output twice (saved by Tanh and by the second Linear) although it is one storage"
            ),
            "answers": {
                "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + h + 1 + 1)
    return {"full batch peak": n * per_sample, "accumulation peak": min(micro_batch, n) * per_sample}
""",
            },
            "fails": {
                "q3_check": "the Tanh output counted twice",
            },
            "judged": "named",
            "message": (
                "full batch peak (n=12, micro_batch=4, d=8, h=32) is 1536 B too high: exactly the "
                "size of the Tanh output. Was it counted twice? A storage saved by several Nodes "
                "(or through views) is kept, and counted, once. Or is it the first Linear's output "
                "(Tanh saves its output), which no Node saves for backward"
            ),
        },
    },
    "ex05_inplace": {
        "f01-05-data-shares-counter": {
            "cause": ("thinks a.data shares a's version counter (like detach), so e.add_(1) bumps a, b, d too"),
            "answers": {
                "q1_answer": """def versions():
    return {"a": 5, "b": 5, "c": 1, "d": 5, "e": 5, "f": 0, "g": 1}
""",
            },
            "fails": {
                "q1_check": ".data has a counter of its own",
            },
            "judged": "named",
            "message": (
                "2 of 4 _version predictions (a, b, c, f) are right; rethink: a, b\n  - a: count "
                "every in-place write to a's storage made through a itself or through anything "
                "sharing its version counter (views, detach()); .data has a counter of its own\n  "
                "- b: b = a[1:3] is a view of a: whose version counter does it r"
            ),
        },
        "f01-05-all-save-output": {
            "cause": "thinks sin and ** 2 save their output (like exp), so C and J raise",
            "answers": {
                "q2_answer": """def classify():
    return {"A": "fine", "B": "raises", "C": "raises", "D": "raises", "E": "raises", "F": "fine",
            "G": "raises", "H": "fine", "I": "raises", "J": "raises"}
""",
            },
            "fails": {
                "q2_check": "SinBackward0 saves self",
            },
            "judged": "named",
            "message": (
                "3 of 4 answers (A to D) are right; rethink: C\n  - C: before the in-place line, "
                "SinBackward0 saves self: does the in-place write reach one of those (or a leaf "
                "that requires grad), through views and detach() too?\n[cause: "
                "prediction.answers.C]"
            ),
        },
        "f01-05-detach-gate": {
            "cause": (
                "silences the in-place error by detaching the sigmoid: the gate gets no gradient, "
                "so w's gradient is wrong"
            ),
            "answers": {
                "q3_answer": """def gated_fixed(x, w, v):
    h = x @ w
    g = torch.sigmoid(h).detach()
    g *= 2
    g[:, 0] = 1
    out = g * torch.tanh(h)
    return ((out @ v) ** 2).mean()
""",
            },
            "fails": {
                "q3_check": "a tensor cut from the graph (.detach(), .data) reaches the loss without its gradient",
            },
            "judged": "named",
            "message": (
                "d loss / d w differs from the expected value (relative error 3.7e-01 in max-"
                "norm; the test is elementwise, |received - expected| <= atol + rtol * |expected|"
                " with rtol=1e-07, atol=1e-07, and its worst element is off by 1.8 where 4.6e-07 "
                "is allowed). The loss is right, so part of its computation was h"
            ),
        },
    },
    "ex06_grad_modes": {
        "f01-06-clone-still-inference": {
            "cause": (
                "thinks a clone() of an inference tensor made outside inference mode is still an inference tensor (E)"
            ),
            "answers": {
                "q2_answer": """def errors():
    return {"A": "not_built", "B": "inference_tensor", "C": None, "D": "inference_tensor", "E": "inference_tensor",
            "F": "modified_inplace", "G": "leaf_inplace", "H": None, "I": "consumed", "J": None,
            "K": None, "L": "not_built"}
""",
            },
            "fails": {
                "q2_check": "is the clone an inference tensor",
            },
            "judged": "named",
            "message": (
                "11 of 12 answers are right; rethink: E\n  - E: t.clone() runs outside inference mode:"
                " is the clone an inference tensor, or a normal one?"
            ),
        },
        "f01-06-detach-features": {
            "cause": (
                "detaches the backbone's features instead of running it under no_grad: gradients "
                "are right but the backbone still records and saves its activations"
            ),
            "answers": {
                "q3_answer": """def head_loss(backbone, head, x, target):
    features = backbone(x).detach()
    return F.cross_entropy(head(features), target)
""",
            },
            "fails": {
                "q3_check": "saved its activations for backward while it ran",
            },
            "judged": "named",
            "message": (
                "peak bytes saved during head_loss (N=5) is 336 B too high: exactly what the "
                "backbone saves when it runs in grad mode (run it under torch.no_grad()).\n  "
                "expected: 264 B\n  received: 600 B\n[cause: "
                "bytes.extra.what_the_backbone_saves_when_it]"
            ),
        },
        "f01-06-update-recorded": {
            "cause": (
                "updates the target parameters in place without torch.no_grad(): an in-place "
                "change of a leaf that requires grad"
            ),
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    for p_target, p_online in zip(target.parameters(), online.parameters()):
        p_target.mul_(1 - tau).add_(p_online, alpha=tau)
""",
            },
            "fails": {
                "q5_check": ("a leaf Variable that requires grad is being used in an in-place operation"),
            },
            "judged": "named",
            "message": (
                "soft_update raised RuntimeError: a leaf Variable that requires grad is being used "
                "in an in-place operation.\n  raised in soft_update(), line 3: p_target.mul_(1 - "
                "tau).add_(p_online, alpha=tau)\nYou modified in place a leaf tensor that requires "
                "grad (a parameter, or a tensor created with requires_grad="
            ),
        },
    },
    "ex07_memory": {
        "f01-07-target-saved": {
            "cause": ("counts the target y as saved by the subtraction net(x) - y (one [n, 1] tensor too many)"),
            "answers": {
                "q1_answer": """def saved_bytes(n, d, h1, h2):
    return 4 * (n * d + n * h1 + n * h2 + n + n)
""",
            },
            "fails": {
                "q1_check": "the target y (the subtraction saves nothing",
            },
            "judged": "named",
            "message": (
                "saved bytes for n=8, d=5, h1=6, h2=3 is 32 B too high: exactly the size of net(x) - "
                "y (saved by ** 2). Was it counted twice? A storage saved by several Nodes (or "
                "through views) is kept, and counted, once. Or is it net(x) (** 2 saves net(x) - y) "
                "or the target y (the subtraction saves nothing: ** 2 sa"
            ),
        },
        "f01-07-zero-before-step": {
            "cause": (
                "calls opt.zero_grad() between backward() and step(), so the optimizer steps with "
                "zero gradients and the model never trains"
            ),
            "answers": {
                "q2_answer": """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.zero_grad()
        opt.step()
        with torch.no_grad():
            val_loss = F.mse_loss(model(val_x), val_y)
        log.append((loss.item(), val_loss.item()))
    return log
""",
            },
            "fails": {
                "q2_check": "never between backward() and step()",
            },
            "judged": "named",
            "message": (
                "how the optimizer stepped is wrong: expected 'every step saw the gradients of a "
                "backward', got 'a step ran with every .grad zeroed after backward'. opt.step() ran "
                "after a backward had written the gradients, but with every .grad None or zero, so it"
                " changed nothing and the model never trained: zero th"
            ),
        },
        "f01-07-kept-losses-keep-graph": {
            "cause": ("thinks a loss kept after backward() still keeps its graph's saved tensors (A and G: 4)"),
            "answers": {
                "q3_answer": """def steps_alive():
    return {"A": 4, "B": 4, "C": 1, "D": 4, "E": 4, "F": 0, "G": 4}
""",
            },
            "fails": {
                "q3_check": "what does a kept loss still hold?",
            },
            "judged": "named",
            "message": (
                "2 of 3 predictions for A, B and C are right; rethink: A\n  - A: each loss is "
                "backwarded (without retain_graph) before the list keeps it: what does a kept loss "
                "still hold?\n[cause: prediction.predictions_for_a_b_and_c.A]"
            ),
        },
    },
    "ex08_checkpoint": {
        "f01-08-no-rng-state": {
            "cause": (
                "passes preserve_rng_state=False, so dropout draws other masks when a segment is "
                "recomputed and the gradients change"
            ),
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    segments = max(2, round(math.sqrt(len(model))))
    return checkpoint_sequential(model, segments, x, use_reentrant=False, preserve_rng_state=False)
""",
            },
            "fails": {
                "q1_check": "preserve_rng_state=False",
            },
            "judged": "named",
            "message": (
                "0.0.weight differs from the expected value (relative error 8.2e-01 in max-norm; "
                "the test is elementwise, |received - expected| <= atol + rtol * |expected| with "
                "rtol=1.3e-06, atol=1e-05, and its worst element is off by 0.00022 where 1e-05 is "
                "allowed).\n  (the same for 0.0.bias, 1.0.weight, 1.0.bias, 2"
            ),
        },
        "f01-08-sqrt-rule": {
            "cause": "returns the sqrt(n) rule of thumb without measuring",
            "answers": {
                "q2_answer": """def best_segments(model, x):
    return max(1, round(math.sqrt(len(model))))
""",
            },
            "fails": {
                "q2_check": "the sqrt(n) rule assumes",
            },
            "judged": "named",
            "message": (
                "best segment count is wrong. the sqrt(n) rule assumes a block saves about as much "
                "as its input, which this model's blocks do not; fewer, longer segments are "
                "recomputed whole in backward, so the recomputation raises the peak: measure the "
                "peak of every count from 1 to len(model) (a hidden test: its in"
            ),
        },
        "f01-08-default-nonreentrant": {
            "cause": ("thinks leaving use_reentrant out gives the non-reentrant variant (D like B)"),
            "answers": {
                "q3_answer": """def predictions():
    return {
        "A": {"h.requires_grad": False, "block grad is None": True, "head grad is None": False},
        "B": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
        "C": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
        "D": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
    }
""",
            },
            "fails": {
                "q3_check": "which variant runs by default in this PyTorch?",
            },
            "judged": "named",
            "message": (
                "3 of 4 h.requires_grad predictions are right; rethink: D: h.requires_grad\n  - D: "
                "h.requires_grad: use_reentrant left out: which variant runs by default in this "
                "PyTorch?; the reentrant variant is one Function whose inputs are the block's "
                "arguments only\n[cause: prediction.h_requires_grad_predictions.D"
            ),
        },
    },
    "ex09_functions": {
        "f01-09-beta-forgotten": {
            "cause": (
                "backward returns sigmoid(x) instead of sigmoid(beta * x): the chain rule's beta "
                "inside the sigmoid is dropped"
            ),
            "answers": {
                "q1_answer": """class StableSoftplus(Function):
    @staticmethod
    def forward(x, beta):
        z = beta * x
        return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, beta = inputs
        ctx.save_for_backward(x)
        ctx.beta = beta

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return grad_y * torch.sigmoid(x), None
""",
            },
            "fails": {
                "q1_check": "beta goes inside the sigmoid",
            },
            "judged": "named",
            "message": (
                "first derivative (beta=2.0) differs from the expected value (relative error 4.5e-02 "
                "in max-norm; the test is elementwise, |received - expected| <= atol + rtol * "
                "|expected| with rtol=1e-07, atol=1e-07, and its worst element is off by 0.14 where "
                "2e-07 is allowed). Right at beta=1, not here, and not by"
            ),
        },
        "f01-09-saves-two": {
            "cause": (
                "saves z = beta * x besides x: two tensors of x's size instead of one, and z, "
                "computed inside forward, has no graph, so the second derivative through it is lost"
            ),
            "answers": {
                "q1_answer": """class StableSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta):
        z = beta * x
        ctx.save_for_backward(x, z)
        ctx.beta = beta
        return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta

    @staticmethod
    def backward(ctx, grad_y):
        x, z = ctx.saved_tensors
        return grad_y * torch.sigmoid(z), None
""",
            },
            "fails": {
                "q1_check": "a tensor computed inside forward, neither x nor the output",
            },
            "judged": "named",
            "message": (
                "what StableSoftplus saves for backward (beta=1.0) is wrong: expected 'x or the "
                "output', got 'a tensor made inside forward'. StableSoftplus saves for backward a "
                "tensor computed inside forward, neither x nor the output: forward runs without "
                "recording, so that tensor has no graph back to x, and under c"
            ),
        },
        "f01-09-float-mask": {
            "cause": (
                "saves the mask converted to x's dtype ((x > 0).to(x.dtype)), 4 or 8 bytes per element, not a bool mask"
            ),
            "answers": {
                "q2_answer": """class LeanLeakyReLU(Function):
    @staticmethod
    def forward(x, slope):
        return torch.where(x > 0, x, slope * x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, slope = inputs
        ctx.save_for_backward((x > 0).to(x.dtype))
        ctx.slope = slope

    @staticmethod
    def backward(ctx, grad_y):
        (mask,) = ctx.saved_tensors
        return grad_y * (mask + (1 - mask) * ctx.slope), None
""",
            },
            "fails": {
                "q2_check": "Your mask is saved as torch.float32 (4 bytes per element), not torch.bool",
            },
            "judged": "named",
            "message": (
                "what LeanLeakyReLU saves for backward is wrong: expected 'not a mask of 0s and 1s in a dtype "
                "of more than 1 byte', got 'a mask of 0s and 1s in torch.float32'. Your mask is saved as "
                "torch.float32 (4 bytes per element), not torch.bool (1 byte): save x > 0 as it is, without "
                ".to(x.dtype) or .float(), and convert it in backward where needed."
            ),
        },
        "f01-09-w-freed": {
            "cause": (
                "thinks every tensor passed to save_for_backward is freed by backward, w included "
                "(w is held by its AccumulateGrad Node)"
            ),
            "answers": {
                "q3_answer": """def alive():
    return {"x": False, "w": False, "h": True, "g": False, "y_after_del": True}
""",
            },
            "fails": {
                "q3_check": "it is a leaf that requires grad",
            },
            "judged": "named",
            "message": (
                "4 of 5 predictions are right; rethink: w\n  - w: w went through "
                "ctx.save_for_backward too, but it is a leaf that requires grad: the graph reaches "
                "it through an AccumulateGrad Node in the next_functions of Gate's Node, and that "
                "Node holds its leaf. (a hidden test: its inputs are not shown)\n[cause: pre"
            ),
        },
    },
    "ex10_hooks": {
        "f01-10-late-binding": {
            "cause": (
                "the lambda inside the forward hook reads `name` from the loop when backward runs "
                "(late binding): every entry gets the last module's name"
            ),
            "answers": {
                "q1_answer": """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, module in model.named_modules():
        if list(module.children()):
            continue

        def forward_hook(module, args, out):
            out.register_hook(lambda g: log.append((name, g.norm().item())))

        handles.append(module.register_forward_hook(forward_hook))
    return handles
""",
            },
            "fails": {
                "q1_check": "a closure in a loop reads the loop variable when it runs",
            },
            "judged": "named",
            "message": (
                "modules logged is wrong: expected 'every leaf module', got 'one name for several "
                "modules'. The same name was logged for several modules: each hook must bind its "
                "module's name when it is made (a closure in a loop reads the loop variable when "
                "it runs: pass name=name).\n[cause: value.the_same_name_was_l"
            ),
        },
        "f01-10-clip-upper-only": {
            "cause": ("clips only from above (clamp_(max=clip)): negative gradients below -clip are left as they are"),
            "answers": {
                "q2_answer": """def attach_clip_hooks(model, clip):
    def clip_grad(p):
        p.grad.clamp_(max=clip)

    return [p.register_post_accumulate_grad_hook(clip_grad) for p in model.parameters() if p.requires_grad]
""",
            },
            "fails": {
                "q2_check": "the clipping has no lower bound",
            },
            "judged": "named",
            "message": (
                "where .grad lies after 1 backward call is wrong: expected 'within [-clip, clip]', "
                "got 'below -clip only'. Entries of .grad lie below -clip, none above clip: the "
                "clipping has no lower bound; clip_grad_value_ clamps every entry to [-clip, clip]."
            ),
        },
        "f01-10-four-bytes": {
            "cause": (
                "assumes 4 bytes per element (float32) for every gradient instead of the parameter's element_size()"
            ),
            "answers": {
                "q3_answer": """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None

    return [p.register_post_accumulate_grad_hook(step) for p in model.parameters() if p.requires_grad]


def peak_grad_bytes(model, fused):
    sizes = [p.numel() * 4 for p in model.parameters() if p.requires_grad]
    return max(sizes) if fused else sum(sizes)
""",
            },
            "fails": {
                "q3_check": "peak_grad_bytes counts 4 bytes per element",
            },
            "judged": "named",
            "message": (
                "what peak_grad_bytes counts is wrong. peak_grad_bytes counts 4 bytes per element, "
                "but this model's parameters are not all float32: a .grad has its parameter's dtype, "
                "so count p.numel() * p.element_size()."
            ),
        },
        "f01-10-params-packed": {
            "cause": (
                "packs every floating tensor in float16, the parameters (saved weights) too: their "
                "copies count as saved bytes"
            ),
            "answers": {
                "q4_answer": """def half_precision_hooks(params):
    def pack(t):
        if not t.is_floating_point():
            return t
        return (t.dtype, t.to(torch.float16))

    def unpack(packed):
        if isinstance(packed, torch.Tensor):
            return packed
        dtype, half = packed
        return half.to(dtype)

    return pack, unpack
""",
            },
            "fails": {
                "q4_check": "a 16-bit copy of a weight is extra memory",
            },
            "judged": "named",
            "message": (
                "parameters the pack hook copied is wrong: expected 'no parameter copied', got "
                "'copies of 2.weight (1024 B)'. Your pack hook returned a new tensor for a saved "
                "parameter (a Linear saves its weight): a 16-bit copy of a weight is extra memory the"
                " graph keeps (any copy is), while the parameter exists any"
            ),
        },
        "f01-10-lambda-returns": {
            "cause": (
                "meant as a correct answer: the post-accumulate-grad hook is a lambda whose "
                "expression q.grad.copy_(...) returns a tensor; such a hook must return None"
            ),
            "answers": {
                "q2_answer": """def attach_clip_hooks(model, clip):
    handles = []
    for p in model.parameters():
        if p.requires_grad:
            handles.append(p.register_post_accumulate_grad_hook(
                lambda q: q.grad.copy_(torch.clamp(q.grad, min=-clip, max=clip))))
    return handles
""",
            },
            "fails": {
                "q2_check": "A lambda returns what its expression returns",
            },
            "judged": "named",
            "message": (
                "run raised RuntimeError: Tensor post accumulate grad hooks should return None.\n  "
                "raised in run(), line 15: model(x).pow(2).sum().backward()\nA hook registered "
                "with register_post_accumulate_grad_hook returned a value. It gets the parameter "
                "after .grad was written and must return None (it changes p.gra"
            ),
        },
    },
    "ex11_mixed_precision": {
        "f01-11-two-per-linear": {
            "cause": (
                "a rule of thumb: two casts (weight and bias) per nn.Linear module, ignoring the "
                "cast cache, frozen parameters, an input that requires grad and float32 ops"
            ),
            "answers": {
                "q1_answer": """def count_casts(model, x):
    return 2 * sum(isinstance(m, nn.Linear) for m in model.modules())
""",
            },
            "fails": {
                "q1_check": "The input's cast left out",
            },
            "judged": "named",
            "message": (
                "ToCopyBackward0 Nodes of mlp([8, 16, 4]) on an input that requires grad is wrong: "
                "expected 5, got 4. The input's cast left out: x requires grad here, so its cast "
                "to bfloat16 records a ToCopyBackward0 too.\n[cause: "
                "value.the_inputs_cast_left_out]"
            ),
        },
        "f01-11-no-weight-copies": {
            "cause": (
                "counts only the bfloat16 activations: forgets the bfloat16 copies of the weights "
                "that the Linears after the first save (they are not the parameters)"
            ),
            "answers": {
                "q2_answer": """def saved_bytes_bf16(widths, batch):
    return batch * sum(widths[:-1]) * 2
""",
            },
            "fails": {
                "q2_check": "the bfloat16 copy of the weight of layer 2",
            },
            "judged": "named",
            "message": (
                "saved bytes of mlp([8, 16, 16, 4]), batch 3 is 640 B too low: exactly the size of "
                "the bfloat16 copy of the weight of layer 2 + the bfloat16 copy of the weight of "
                "layer 3. Which Node saves it for backward?\n  expected: 880 B\n  received: 240 "
                "B\n[cause: bytes.missing.the_bfloat_copy_of_the_weight]"
            ),
        },
        "f01-11-first-weight-copy": {
            "cause": (
                "counts the bfloat16 weight copy of every Linear, the first one too (its input "
                "needs no grad, so it saves none)"
            ),
            "answers": {
                "q2_answer": """def saved_bytes_bf16(widths, batch):
    activations = batch * sum(widths[:-1]) * 2
    weight_copies = sum(widths[i] * widths[i + 1] for i in range(len(widths) - 1)) * 2
    return activations + weight_copies
""",
            },
            "fails": {
                "q2_check": "the bfloat16 copy of the first layer's weight",
            },
            "judged": "named",
            "message": (
                "saved bytes of mlp([8, 16, 16, 4]), batch 3 is 256 B too high: exactly the size "
                "of the bfloat16 copy of the first layer's weight (its input needs no grad); the "
                "bfloat16 copy of the first layer's weight (its input needs no grad) is not "
                "saved for backward by any Node: count only what backward needs (c"
            ),
        },
        "f01-11-optimizer-step": {
            "cause": (
                "calls optimizer.step() instead of scaler.step(optimizer): the step on the inf batch is not skipped"
            ),
            "answers": {
                "q3_answer": """def scaled_step(model, optimizer, scaler, x, y, max_norm):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scaler.update()
""",
            },
            "fails": {
                "q3_check": "call scaler.step(optimizer)",
            },
            "judged": "named",
            "message": (
                "0.weight differs from the expected value (relative error nan in max-norm; the "
                "test is elementwise, |received - expected| <= atol + rtol * |expected| with "
                "rtol=1.3e-06, atol=1e-05, and its worst element is NaN). a step was taken on "
                "inf/NaN gradients.\n  (the same for 0.bias, 2.weight, 2.bias)\nA step w"
            ),
        },
    },
    "ex12_higher_order": {
        "f01-12-batch-norm": {
            "cause": (
                "takes the norm of the whole [N, d] gradient (one number for the batch) instead of one norm per sample"
            ),
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    return torch.relu(g.norm() - 1) ** 2
""",
            },
            "fails": {
                "q2_check": "one norm for the whole batch",
            },
            "judged": "named",
            "message": (
                "the penalty's value is 0.01801x the expected value: one norm for the whole "
                "batch: take its 2-norm per sample (over dim=1, one per row), not of the whole "
                "[N, d] gradient.\n  expected: 0.4190532863140106\n  received: "
                "0.007547155488282442\n[cause: tensor.fraction.one_norm_for_the_whole_batch]"
            ),
        },
        "f01-12-retain-not-create": {
            "cause": (
                "passes retain_graph=True instead of create_graph=True: the inner gradient is not "
                "recorded, so the penalty does not reach the critic's parameters"
            ),
            "answers": {
                "q2_answer": """def one_sided_penalty(critic, x_hat):
    (g,) = torch.autograd.grad(critic(x_hat).sum(), x_hat, retain_graph=True)
    return (torch.relu(torch.linalg.vector_norm(g, dim=1) - 1) ** 2).mean()
""",
            },
            "fails": {
                "q2_check": "compute the gradient inside it with create_graph=True",
            },
            "judged": "named",
            "message": (
                "0.weight is all zeros but should not be: your penalty is a constant for autograd, "
                "so it does not train the critic: compute the gradient inside it with "
                "create_graph=True, and never detach it (no .detach(), .data, .item() or "
                "torch.no_grad() on the way).\n  (the same for 0.bias, 2.weight)\n[cause: tensor"
            ),
        },
        "f01-12-bytes-frozen": {
            "cause": "per_sample_bytes counts the frozen parameters too",
            "answers": {
                "q3_answer": """def per_sample_grads(model, loss_fn, x, y):
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    frozen = {name: p.detach() for name, p in model.named_parameters() if not p.requires_grad}

    def sample_loss(params, xi, yi):
        out = functional_call(model, {**frozen, **params}, (xi.unsqueeze(0),))
        return loss_fn(out, yi.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


def per_sample_bytes(model, batch_size):
    return batch_size * sum(p.numel() * p.element_size() for p in model.parameters())
""",
            },
            "fails": {
                "q3_check": "per-sample gradients of the frozen parameters",
            },
            "judged": "named",
            "message": (
                "per_sample_bytes(model, batch_size) is 320 B too high: exactly per-sample "
                "gradients of the frozen parameters (they need none).\n  expected: 192 B\n  "
                "received: 512 B\n[cause: bytes.extra.per_sample_gradients_of_the_frozen]"
            ),
        },
        "f01-12-sqrt-norm": {
            "cause": (
                "computes the norm as torch.sqrt((v ** 2).sum(1)) (whose gradient at 0 is inf * 0 "
                "= NaN) inside the double where"
            ),
            "answers": {
                "q5_answer": """def thin_plate(v):
    r = torch.sqrt((v ** 2).sum(dim=1))
    nonzero = r > 0
    safe_r = torch.where(nonzero, r, torch.ones_like(r))
    return torch.where(nonzero, safe_r**2 * torch.log(safe_r), torch.zeros_like(r))
""",
            },
            "fails": {
                "q5_check": "sqrt's 1/(2 sqrt(x)) in a norm written by hand",
            },
            "judged": "named",
            "message": (
                "number of NaN or inf entries in the gradient is wrong: expected 0, got 2. Masking "
                "a result does not mask its gradient: torch.where's backward sends the unused "
                "branch a gradient of 0, and each Node of that branch combines that 0 with its own "
                "derivative or saved values, infinite at 0 (log's 1/r, the f"
            ),
        },
    },
    "ex13_compile": {
        "f01-13-shape-if-breaks": {
            "cause": "thinks an if on x.shape breaks the graph (d: 1)",
            "answers": {
                "q1_answer": """def predicted_breaks():
    return {"a": 0, "b": 1, "c": 0, "d": 1, "e": 1, "f": 2, "g": 1, "h": 1}
""",
            },
            "fails": {
                "q1_check": "a test on a shape",
            },
            "judged": "named",
            "message": (
                "1 of 2 predicted break counts (breaks, not graphs) of c and d are right; rethink: "
                "d\n  - d: explain() names nothing in it that Dynamo cannot trace: Python on what "
                "tracing knows (a loop over range, a test on a shape) runs while tracing, and the "
                "tensor operations go in the graph (a hidden test: its inp"
            ),
        },
        "f01-13-int-no-break": {
            "cause": "thinks int(tensor) is not like .item() (h: 0)",
            "answers": {
                "q1_answer": """def predicted_breaks():
    return {"a": 0, "b": 1, "c": 0, "d": 0, "e": 1, "f": 2, "g": 1, "h": 0}
""",
            },
            "fails": {
                "q1_check": "int() or float() of a tensor, which call it",
            },
            "judged": "named",
            "message": (
                "3 of 4 predicted break counts (breaks, not graphs) of e, f, g and h are right; "
                "rethink: h\n  - h: a tensor turned into a Python number (.item(), and int() or "
                "float() of a tensor, which call it) needs the tensor's value, which tracing does "
                "not have: the graph ends there (a hidden test: its inputs are "
            ),
        },
        "f01-13-eager-double-count": {
            "cause": ("eagerly, counts exp's output and log1p's input (the same storage) twice for softplus_cubed"),
            "answers": {
                "q2_answer": """def predict_saved_bytes(block, n, dtype):
    size = n * torch.empty((), dtype=dtype).element_size()
    if block == "softplus_cubed":
        return {"eager": 3 * size, "aot_eager": 1 * size}
    return {"eager": 4 * size, "aot_eager": 2 * size}
""",
            },
            "fails": {
                "q2_check": "exp(x) (saved by exp and by log1p: one storage) counted twice",
            },
            "judged": "named",
            "message": (
                "predict_saved_bytes('softplus_cubed', 1000, torch.float32)['eager'] is 4000 B too "
                "high: exactly one tensor saved by two Nodes, counted twice (count each storage "
                "once).\n  expected: 8000 B\n  received: 12000 B\n[cause: "
                "bytes.extra.one_tensor_saved_by_two_nodes]"
            ),
        },
        "f01-13-scale-before-branch": {
            "cause": (
                "computes the scale before the branch (order of operations): the scale misses the "
                "+ 1 when the branch is taken"
            ),
            "answers": {
                "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    scale = h.abs().max().detach()
    h = torch.where(h.sum() > 0, h + 1, h)
    return (h / scale).pow(2).sum()
""",
            },
            "fails": {
                "q3_check": "the scale is taken before the if",
            },
            "judged": "named",
            "message": (
                "loss is exactly 4x the expected value: the scale is taken before the if: the "
                "original's scale is h.abs().max() of the h the branch gave (h + 1 where h.sum() "
                "> 0).\n  expected: 8.584909439086914\n  received: 34.370506286621094\n[cause: "
                "tensor.multiple.the_scale_is_taken_before_the]"
            ),
        },
    },
    "ex14_distributed": {
        "f01-14-sum-not-mean": {
            "cause": (
                "all-reduces the gradients with SUM and does not divide by world_size: world_size "
                "times the whole batch's gradient"
            ),
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    shard_x, shard_y = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(model(shard_x), shard_y).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
    return {name: p.grad for name, p in model.named_parameters()}
""",
            },
            "fails": {
                "q1_check": "the gradients were summed over the ranks instead of averaged",
            },
            "judged": "named",
            "message": (
                "0.weight is exactly 2x the expected value: the gradients were summed over the "
                "ranks instead of averaged (divide by world_size, or let DDP average them)\n  (the "
                "same for 0.bias, 2.weight, 2.bias)\n[cause: "
                "tensor.multiple.the_gradients_were_summed_over_the]"
            ),
        },
        "f01-14-registration-order": {
            "cause": (
                "fills the buckets in registration order (model.parameters()), not in the order "
                "gradients become ready (reversed)"
            ),
            "answers": {
                "q2_answer": """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in model.parameters():
        current += p.numel() * p.element_size()
        if current >= bucket_cap_bytes:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    syncs = 1 if use_no_sync else micro_batches
    return syncs * len(buckets), syncs * sum(buckets)
""",
            },
            "fails": {
                "q2_check": "Buckets filled in registration order",
            },
            "judged": "named",
            "message": (
                "all-reduce calls (cap 68 bytes, 2 micro-batches, use_no_sync=False) is wrong: "
                "expected 6, got 8. Buckets filled in registration order: DDP fills them in the "
                "order gradients become ready, the last layer first.\n[cause: "
                "value.buckets_filled_in_registration_order]"
            ),
        },
        "f01-14-once-per-step": {
            "cause": (
                "thinks DDP all-reduces once per training step (at the end), whatever "
                "micro_batches and no_sync: the count ignores micro_batches"
            ),
            "answers": {
                "q2_answer": """def allreduce_per_step(model, bucket_cap_bytes, micro_batches, use_no_sync):
    buckets, current = [], 0
    for p in reversed(list(model.parameters())):
        current += p.numel() * p.element_size()
        if current >= bucket_cap_bytes:
            buckets.append(current)
            current = 0
    if current:
        buckets.append(current)
    return len(buckets), sum(buckets)
""",
            },
            "fails": {
                "q2_check": "every micro-batch's backward all-reduces every bucket",
            },
            "judged": "named",
            "message": (
                "all-reduce calls (cap 68 bytes, 2 micro-batches, use_no_sync=False) is wrong: "
                "expected 6, got 3. One reducing backward only: without no_sync every "
                "micro-batch's backward all-reduces every bucket.\n[cause: "
                "value.one_reducing_backward_only]"
            ),
        },
        "f01-14-reversed-names": {
            "cause": (
                "returns the parameter names in reverse registration order without running "
                "backward (wrong for models that use layers out of order or in branches)"
            ),
            "answers": {
                "q3_answer": """def grad_ready_order(model, x):
    return [name for name, _ in reversed(list(model.named_parameters()))]
""",
            },
            "fails": {
                "q3_check": "That is the reverse of the order of registration",
            },
            "judged": "named",
            "message": (
                "order of the gradients is wrong. That is the reverse of the order of "
                "registration: it is backward's order only when the forward uses the parameters in "
                "the order they were registered, each once. (a hidden test: its inputs are not "
                "shown)\n[cause: value.that_is_the_reverse_of_the]"
            ),
        },
    },
}

CORRECT = {
    "ex01_graph": {
        "f01-01-recursive-walk": {
            "answers": {
                "q3_answer": """def count_nodes(t):
    def visit(node, seen):
        if node is None or node in seen:
            return seen
        seen.add(node)
        for child, _ in node.next_functions:
            visit(child, seen)
        return seen

    return len(visit(t.grad_fn, set()))
""",
            },
        },
    },
    "ex02_leaves": {
        "f01-02-hook": {
            "answers": {
                "q2_answer": """def grad_of_hidden(x, w1, w2):
    caught = {}
    h, loss = forward(x, w1, w2)
    h.register_hook(lambda g: caught.setdefault("h", g))
    loss.backward()
    return caught["h"].detach()
""",
            },
        },
    },
    "ex03_backward": {
        "f01-03-grad-outputs": {
            "answers": {
                "q3_answer": """def derivatives(f, x):
    x = x.detach().clone().requires_grad_(True)
    y = f(x)
    first = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]
    second = torch.autograd.grad(first, x, grad_outputs=torch.ones_like(first))[0]
    return first.detach(), second.detach()
""",
            },
        },
    },
    "ex04_accumulation": {
        "f01-04-rescale-after": {
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    n = x.shape[0]
    for start in range(0, n, micro_batch):
        xb, yb = x[start:start + micro_batch], y[start:start + micro_batch]
        F.mse_loss(model(xb), yb, reduction="sum").backward()
    with torch.no_grad():
        for p in model.parameters():
            p.grad /= n
""",
            },
        },
    },
    "ex06_grad_modes": {
        "f01-06-set-grad-enabled": {
            "answers": {
                "q3_answer": """def head_loss(backbone, head, x, target):
    with torch.set_grad_enabled(False):
        features = backbone(x)
    scores = head(features)
    return F.cross_entropy(scores, target)
""",
            },
        },
    },
    "ex07_memory": {
        "f01-07-one-line": {
            "answers": {
                "q1_answer": """def saved_bytes(n, d, h1, h2):
    return torch.finfo(torch.float32).bits // 8 * n * (d + h1 + h2 + 1)
""",
            },
        },
    },
    "ex08_checkpoint": {
        "f01-08-every-block": {
            "answers": {
                "q1_answer": """def forward_checkpointed(model, x):
    *blocks, head = model
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=False)
    return head(x)
""",
            },
        },
    },
    "ex09_functions": {
        "f01-09-saves-output": {
            "answers": {
                "q1_answer": """class StableSoftplus(Function):
    @staticmethod
    def forward(ctx, x, beta):
        z = beta * x
        y = (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta
        ctx.save_for_backward(y)     # sigmoid(beta x) = 1 - exp(-beta y)
        ctx.beta = beta
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return grad_y * -torch.expm1(-ctx.beta * y), None
""",
            },
        },
    },
    "ex12_higher_order": {
        "f01-12-clamp-norm": {
            "answers": {
                "q5_answer": """def thin_plate(v):
    r = torch.linalg.vector_norm(v, dim=1)
    safe = r.clamp(min=torch.finfo(v.dtype).tiny)
    return torch.where(r > 0, safe.square() * safe.log(), torch.zeros_like(r))
""",
            },
        },
    },
    "ex13_compile": {
        "f01-13-add-bool": {
            "answers": {
                "q3_answer": """def scaled_loss_one_graph(x, w):
    h = torch.tanh(x @ w)
    h = h + (h.sum() > 0).to(h.dtype)
    with torch.no_grad():
        scale = h.abs().max()
    return (h / scale).pow(2).sum()
""",
            },
        },
    },
    "ex14_distributed": {
        "f01-14-manual-mean": {
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    xs, ys = x.chunk(world_size), y.chunk(world_size)
    nn.functional.mse_loss(model(xs[rank]), ys[rank]).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return {name: p.grad for name, p in model.named_parameters()}
""",
            },
        },
        "f01-14-avg-op": {
            "answers": {
                "q1_answer": """def rank_grads(rank, world_size, model, x, y):
    shard_x, shard_y = x.chunk(world_size)[rank], y.chunk(world_size)[rank]
    nn.functional.mse_loss(model(shard_x), shard_y).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    return {name: p.grad for name, p in model.named_parameters()}
""",
            },
        },
        "f01-14-tensor-hooks": {
            "answers": {
                "q3_answer": """def grad_ready_order(model, x):
    order = []
    handles = []
    for name, p in model.named_parameters():
        handles.append(p.register_hook(lambda g, name=name: order.append(name)))
    try:
        model(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    return order
""",
            },
        },
    },
}
