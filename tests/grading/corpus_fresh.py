"""A fresh, held-out set of wrong answers (and correct answers written in unusual ways), for issue 25.

Written by a tutor from the lessons and the learners' exercise notebooks only (not from the grader's checks,
hints, causes or typical mistakes, nor from the other corpora), then graded through
``python -m autograder grade``. Same shape as ``tests/grading/corpus.py``: ``WRONG = {exercise: {student_id:
{"cause", "answers", "fails"}}}`` (every other answer cell is the solution's), plus for each entry
``"judged"`` (does the message name the actual cause: "named", "partly", "not named" or "misleading") and
``"message"`` (the grader's message at the time, first 300 characters). ``fails`` maps each test cell that
failed to words of its message (for an entry not fully named, the nearest words). ``CORRECT`` answers must
get full marks. Not wired into the tests here.
"""

WRONG = {
    "ex01_graph": {
        "f01-01-x-gets-node": {
            "cause": "predicts an AccumulateGrad Node for the data input x too (3 instead of 2), for both inputs",
            "answers": {
                "q1_answer": "def predicted_counts():\n"
                "    return {\n"
                '        "x_a": {"SumBackward0": 1, '
                '"MulBackward0": 4, "TanhBackward0": 1, '
                '"AddBackward0": 1,\n'
                '                "AccumulateGrad": 3},\n'
                '        "x_b": {"SumBackward0": 1, '
                '"MulBackward0": 2, "TanhBackward0": 1, '
                '"AddBackward0": 1,\n'
                '                "AccumulateGrad": 3},\n'
                "    }\n"
            },
            "fails": {"q1_check": "one per leaf that requires grad"},
            "judged": "named",
            "message": "4 of 5 Node counts for x_a are right; rethink: "
            "AccumulateGrad\n"
            "  - AccumulateGrad: one per leaf that requires grad, "
            "however often it is used: which leaves require grad?\n"
            "[cause: prediction.node_counts_for_x_a.AccumulateGrad]",
        },
        "f01-01-bias-mean": {
            "cause": "averages the bias gradient over the N rows (mean) instead of "
            "summing it: b's gradient is 1/N too small",
            "answers": {
                "q2_answer": "def grad_wb(w, b, x, y):\n"
                "    p = torch.tanh(x @ w + b)\n"
                "    dL_dp = 2 * (p - y) / y.numel()\n"
                "    dL_dz = dL_dp * (1 - p ** 2)\n"
                '    return {"w": x.T @ dL_dz, "b": '
                "dL_dz.mean()}\n"
            },
            "fails": {"q2_check": "the 1/N of the mean applied twice"},
            "judged": "named",
            "message": "b is exactly 1/5 of the expected value: the 1/N of the mean "
            "applied twice (N = 5 rows here).\n"
            "  expected: 0.23603582382202148\n"
            "  received: 0.04720715433359146\n"
            "[cause: tensor.fraction.the_n_of_the_mean_applied]",
        },
        "f01-01-skip-accumulate": {
            "cause": "does not count AccumulateGrad Nodes (thinks leaves are not Nodes)",
            "answers": {
                "q3_answer": "def count_nodes(t):\n"
                "    seen = set()\n"
                "    stack = [t.grad_fn] if t.grad_fn is "
                "not None else []\n"
                "    while stack:\n"
                "        node = stack.pop()\n"
                "        if node in seen:\n"
                "            continue\n"
                "        seen.add(node)\n"
                "        stack.extend(nxt for nxt, _ in "
                "node.next_functions if nxt is not "
                "None)\n"
                "    return len([n for n in seen if "
                "type(n).__name__ != "
                '"AccumulateGrad"])\n'
            },
            "fails": {"q3_check": "Every Node counts, AccumulateGrad too"},
            "judged": "named",
            "message": "count_nodes((a * 2).sin().sum()) is wrong: expected "
            "4, got 3. Every Node counts, AccumulateGrad too: "
            "follow every entry of next_functions (skipping the "
            "None ones) until no new Node turns up\n"
            "[cause: value.every_node_counts_accumulategrad_too]",
        },
    },
    "ex02_leaves": {
        "f01-02-double-leaf": {
            "cause": "thinks .double() after requires_grad=True keeps v a leaf that gets its .grad",
            "answers": {
                "q1_answer": "def predictions():\n"
                "    return {\n"
                '        "is_leaf":       {"w": True,  "v": '
                'True,  "u": True,  "h": False, "g": False, '
                '"s": True,  "k": True},\n'
                '        "requires_grad": {"w": True,  "v": '
                'True,  "u": True,  "h": True,  "g": True,  '
                '"s": False, "k": False},\n'
                '        "grad is None":  {"w": False, "v": '
                'False, "u": True,  "h": False, "g": True,  '
                '"s": True,  "k": True},\n'
                "    }\n"
            },
            "fails": {"q1_check": "v is the result of .double() on a tensor that requires grad"},
            "judged": "named",
            "message": "13 of 14 is_leaf and requires_grad predictions are "
            "right; rethink: v.is_leaf\n"
            "  - v.is_leaf: v is the result of .double() on a tensor "
            "that requires grad; a tensor is a leaf exactly when it "
            "has no grad_fn\n"
            "[cause: "
            "prediction.is_leaf_and_requires_grad_predictions.v.is_leaf]",
        },
        "f01-02-two-forwards": {
            "cause": "runs forward twice, taking h from the first run and the "
            "loss from the second: h is not in that loss's graph",
            "answers": {
                "q2_answer": "def grad_of_hidden(x, w1, w2):\n"
                "    h, _ = forward(x, w1, w2)\n"
                "    _, loss = forward(x, w1, w2)\n"
                "    (g,) = torch.autograd.grad(loss, h)\n"
                "    return g\n"
            },
            "fails": {"q2_check": "a tensor the outputs do not depend on"},
            "judged": "partly",
            "message": "grad_of_hidden raised RuntimeError: The differentiated "
            "Tensor at index 0 appears to not have been used in the "
            "graph. Set allow_unused=True if this is the desired "
            "behavior.\n"
            "  raised in grad_of_hidden(), line 4: (g,) = "
            "torch.autograd.grad(loss, h)\n"
            "torch.autograd.grad was asked for the gradient with re",
        },
        "f01-02-param-float32": {
            "cause": "wraps the values in nn.Parameter (a leaf that requires "
            "grad) but draws them in float32, not float64",
            "answers": {
                "q3_answer": "def make_param(*shape):\n    return torch.nn.Parameter(0.1 * torch.randn(*shape))\n"
            },
            "fails": {"q3_check": "returned dtype torch.float32"},
            "judged": "named",
            "message": "make_param(3, 2) returned dtype torch.float32 and "
            "shape (3, 2), expected torch.float64 and (3, 2) "
            "(create it with dtype=torch.float64).",
        },
    },
    "ex03_backward": {
        "f01-03-zero-between": {
            "cause": "zeroes the gradients between the two backward passes, so only loss2's gradients remain",
            "answers": {
                "q2_answer": "def grads_summed(trunk, head1, head2, "
                "x, y1, y2):\n"
                "    loss1, loss2 = losses(trunk, head1, "
                "head2, x, y1, y2)\n"
                "    (loss1 + loss2).backward()\n"
                "    return {name: "
                "p.grad.detach().clone() for name, p in "
                "named_parameters(trunk, head1, "
                "head2).items()}\n"
                "\n"
                "\n"
                "def grads_two_passes(trunk, head1, "
                "head2, x, y1, y2):\n"
                "    loss1, loss2 = losses(trunk, head1, "
                "head2, x, y1, y2)\n"
                "    loss1.backward(retain_graph=True)\n"
                "    for m in (trunk, head1, head2):\n"
                "        m.zero_grad()          # start "
                "clean for the second loss\n"
                "    loss2.backward()\n"
                "    return {name: "
                "p.grad.detach().clone() for name, p in "
                "named_parameters(trunk, head1, "
                "head2).items()}\n"
            },
            "fails": {"q2_check": "'NoneType' object has no attribute 'detach'"},
            "judged": "not named",
            "message": "grads_two_passes raised AttributeError: 'NoneType' "
            "object has no attribute 'detach'\n"
            "  raised in <dictcomp>(), line 13: return {name: "
            "p.grad.detach().clone() for name, p in "
            "named_parameters(trunk, head1, head2).items()}\n"
            "[cause: error.AttributeError]",
        },
        "f01-03-first-not-detached": {
            "cause": "returns the first derivative still attached to "
            "its create_graph=True graph (only the second is "
            "detached)",
            "answers": {
                "q3_answer": "def derivatives(f, x):\n"
                "    x = "
                "x.detach().requires_grad_()\n"
                "    (first,) = "
                "torch.autograd.grad(f(x).sum(), "
                "x, create_graph=True)\n"
                "    (second,) = "
                "torch.autograd.grad(first.sum(), "
                "x)\n"
                "    return first, "
                "second.detach()\n"
            },
            "fails": {"q3_check": "is still attached to the autograd graph"},
            "judged": "named",
            "message": "f'(x) is still attached to the autograd graph "
            "(a leaf, requires_grad=True). "
            "create_graph=True, which the second derivative "
            "needs, leaves f'(x) in the graph: return "
            "first.detach().\n"
            "  expected: [0.75, 3.0, 12.0]\n"
            "  received: [0.75, 3.0, 12.0]\n"
            "[cause: "
            "tensor.attached.create_graph_true_which_the_second]",
        },
        "f01-03-all-steps-retained": {
            "cause": "thinks retain_graph=True keeps every step's graph "
            "alive, so the peak grows with steps (steps graphs "
            "instead of 2)",
            "answers": {
                "q4_answer": "def loop_bytes(n, d, h, steps):\n"
                "    graph = 4 * (n * d + n * h + "
                "n)\n"
                '    return {"peak without '
                'retain_graph": graph,\n'
                '            "alive after the loop '
                'with retain_graph": graph,\n'
                '            "peak with '
                'retain_graph": steps * graph}\n'
            },
            "fails": {"q4_check": "Is a graph counted that backward() already freed"},
            "judged": "named",
            "message": "peak with retain_graph (n=8, d=10, h=20) is 992 "
            "B too high: exactly the size of one step's "
            "graph. Is a graph counted that backward() "
            "already freed, or that nothing references any "
            "more?\n"
            "  expected: 1984 B\n"
            "  received: 2976 B\n"
            "[cause: bytes.steps.too_high]",
        },
    },
    "ex04_accumulation": {
        "f01-04-logged-snapshot": {
            "cause": "thinks `logged = w.grad` is a snapshot of the "
            "values at that moment ([3, 3]), not the same "
            "tensor that zero_grad(set_to_none=False) zeroes "
            "and the next backward adds into",
            "answers": {
                "q1_answer": "def predicted_grads():\n"
                '    return {"a": [3.0, 3.0], '
                '"b": [5.0, -1.0], "c": [0.0, '
                '0.0], "d": [3.0, 12.0],\n'
                '            "e": None, "f": '
                '[4.0, 4.0], "g": [3.0, 3.0]}\n'
            },
            "fails": {"q1_check": "not a copy"},
            "judged": "named",
            "message": "3 of 4 predictions for d to g are right; "
            "rethink: g\n"
            "  - g: logged is the tensor object .grad was "
            "when it was logged, not a copy: which calls "
            "change that tensor in place, and which give "
            ".grad a new tensor? (a hidden test: its inputs "
            "are not shown)\n"
            "[cause: prediction.predictions_for_d_to_g.g]",
        },
        "f01-04-one-over-k": {
            "cause": "weights each micro-batch loss by 1/k (k "
            "micro-batches) instead of len(micro)/N: wrong when "
            "the last micro-batch is smaller",
            "answers": {
                "q2_answer": "def accumulate(model, x, y, "
                "micro_batch):\n"
                "    chunks = "
                "list(zip(x.split(micro_batch), "
                "y.split(micro_batch)))\n"
                "    k = len(chunks)\n"
                "    for xb, yb in chunks:\n"
                "        (F.mse_loss(model(xb), yb) / "
                "k).backward()\n"
            },
            "fails": {"q2_check": "was_grad_zeroed_inside_the_loop"},
            "judged": "misleading",
            "message": "gradients is wrong on a hidden test (a hidden test "
            "shows neither its inputs nor its values).\n"
            "[cause: "
            "tensor.mismatch.was_grad_zeroed_inside_the_loop]",
        },
        "f01-04-tanh-twice": {
            "cause": "counts the Tanh output twice (saved by Tanh and by the second Linear) although it is one storage",
            "answers": {
                "q3_answer": "def accumulation_bytes(n, "
                "micro_batch, d, h):\n"
                "    per_sample = 4 * (d + h + h + 1 + "
                "1)\n"
                '    return {"full batch peak": n * '
                'per_sample, "accumulation peak": '
                "min(micro_batch, n) * per_sample}\n"
            },
            "fails": {"q3_check": "exactly the size of the Tanh output. Was it counted twice?"},
            "judged": "named",
            "message": "full batch peak (n=12, micro_batch=4, d=8, h=32) is "
            "1536 B too high: exactly the size of the Tanh "
            "output. Was it counted twice? A storage saved by "
            "several Nodes (or through views) is kept, and "
            "counted, once. Or is it the first Linear's output "
            "(Tanh saves its output), which no Node saves for "
            "backward",
        },
    },
    "ex05_inplace": {
        "f01-05-data-shares-counter": {
            "cause": "thinks a.data shares a's version counter (like detach), so e.add_(1) bumps a, b, d too",
            "answers": {
                "q1_answer": 'def versions():\n    return {"a": 5, "b": 5, "c": 1, "d": 5, "e": 5, "f": 0, "g": 1}\n'
            },
            "fails": {"q1_check": ".data has a counter of its own"},
            "judged": "named",
            "message": "2 of 4 _version predictions (a, b, c, f) are "
            "right; rethink: a, b\n"
            "  - a: count every in-place write to a's "
            "storage made through a itself or through "
            "anything sharing its version counter (views, "
            "detach()); .data has a counter of its own\n"
            "  - b: b = a[1:3] is a view of a: whose version "
            "counter does it r",
        },
        "f01-05-all-save-output": {
            "cause": "thinks sin and ** 2 save their output (like exp), so C and J raise",
            "answers": {
                "q2_answer": "def classify():\n"
                '    return {"A": "fine", "B": '
                '"raises", "C": "raises", "D": '
                '"raises", "E": "raises", "F": '
                '"fine",\n'
                '            "G": "raises", "H": '
                '"fine", "I": "raises", "J": '
                '"raises"}\n'
            },
            "fails": {"q2_check": "SinBackward0 saves self"},
            "judged": "named",
            "message": "3 of 4 answers (A to D) are right; rethink: C\n"
            "  - C: before the in-place line, SinBackward0 saves "
            "self: does the in-place write reach one of those "
            "(or a leaf that requires grad), through views and "
            "detach() too?\n"
            "[cause: prediction.answers.C]",
        },
        "f01-05-detach-gate": {
            "cause": "silences the in-place error by detaching the sigmoid: the "
            "gate gets no gradient, so w's gradient is wrong",
            "answers": {
                "q3_answer": "def gated_fixed(x, w, v):\n"
                "    h = x @ w\n"
                "    g = torch.sigmoid(h).detach()\n"
                "    g *= 2\n"
                "    g[:, 0] = 1\n"
                "    out = g * torch.tanh(h)\n"
                "    return ((out @ v) ** 2).mean()\n"
            },
            "fails": {"q3_check": "the in-place changes were hidden from autograd"},
            "judged": "partly",
            "message": "d loss / d w differs from the expected value (relative "
            "error 3.7e-01 in max-norm; the test is elementwise, "
            "|received - expected| <= atol + rtol * |expected| with "
            "rtol=1e-07, atol=1e-07, and its worst element is off by "
            "1.8 where 4.6e-07 is allowed). The loss is right, so "
            "the in-place changes were hid",
        },
    },
    "ex06_grad_modes": {
        "f01-06-clone-still-inference": {
            "cause": "thinks a clone() of an inference tensor made "
            "outside inference mode is still an inference "
            "tensor (E)",
            "answers": {
                "q2_answer": "def errors():\n"
                '    return {"A": '
                '"not_built", "B": '
                '"inference_tensor", "C": '
                'None, "D": '
                '"inference_tensor", "E": '
                '"inference_tensor",\n'
                '            "F": '
                '"modified_inplace", "G": '
                '"leaf_inplace", "H": None, '
                '"I": "consumed", "J": None,\n'
                '            "K": None, "L": '
                '"not_built"}\n'
            },
            "fails": {"q2_check": "every line runs"},
            "judged": "not named",
            "message": "11 of 12 answers are right; rethink: E\n"
            "  - E: every line runs: look again at what "
            "each line needs (a graph, a saved tensor, "
            "a tensor it may change) (a hidden test: "
            "its inputs are not shown)\n"
            "[cause: prediction.answers.E]",
        },
        "f01-06-detach-features": {
            "cause": "detaches the backbone's features instead of "
            "running it under no_grad: gradients are right but "
            "the backbone still records and saves its "
            "activations",
            "answers": {
                "q3_answer": "def head_loss(backbone, head, x, "
                "target):\n"
                "    features = "
                "backbone(x).detach()\n"
                "    return "
                "F.cross_entropy(head(features), "
                "target)\n"
            },
            "fails": {"q3_check": "exactly what the backbone saves when it runs in grad mode"},
            "judged": "named",
            "message": "peak bytes saved during head_loss (N=5) is 336 B "
            "too high: exactly what the backbone saves when "
            "it runs in grad mode (run it under "
            "torch.no_grad()).\n"
            "  expected: 264 B\n"
            "  received: 600 B\n"
            "[cause: "
            "bytes.extra.what_the_backbone_saves_when_it]",
        },
        "f01-06-update-recorded": {
            "cause": "updates the target parameters in place without "
            "torch.no_grad(): an in-place change of a leaf that "
            "requires grad",
            "answers": {
                "q5_answer": "def soft_update(target, online, "
                "tau):\n"
                "    for p_target, p_online in "
                "zip(target.parameters(), "
                "online.parameters()):\n"
                "        p_target.mul_(1 - "
                "tau).add_(p_online, alpha=tau)\n"
            },
            "fails": {"q5_check": "a leaf Variable that requires grad is being used in an in-place operation"},
            "judged": "named",
            "message": "soft_update raised RuntimeError: a leaf Variable "
            "that requires grad is being used in an in-place "
            "operation.\n"
            "  raised in soft_update(), line 3: "
            "p_target.mul_(1 - tau).add_(p_online, "
            "alpha=tau)\n"
            "You modified in place a leaf tensor that "
            "requires grad (a parameter, or a tensor created "
            "with requires_grad=",
        },
    },
    "ex07_memory": {
        "f01-07-target-saved": {
            "cause": "counts the target y as saved by the subtraction net(x) - y (one [n, 1] tensor too many)",
            "answers": {
                "q1_answer": "def saved_bytes(n, d, h1, h2):\n    return 4 * (n * d + n * h1 + n * h2 + n + n)\n"
            },
            "fails": {"q1_check": "exactly the size of net(x) - y"},
            "judged": "partly",
            "message": "saved bytes for n=8, d=5, h1=6, h2=3 is 32 B too high: "
            "exactly the size of net(x) - y (saved by ** 2). Was it "
            "counted twice? A storage saved by several Nodes (or "
            "through views) is kept, and counted, once. Or is it "
            "net(x) (** 2 saves net(x) - y), which no Node saves for "
            "backward?\n"
            "  expected: 480 B\n"
            "  ",
        },
        "f01-07-zero-before-step": {
            "cause": "calls opt.zero_grad() between backward() and step(), "
            "so the optimizer steps with zero gradients and the "
            "model never trains",
            "answers": {
                "q2_answer": "def train_and_log(model, opt, "
                "batches, val_x, val_y):\n"
                "    log = []\n"
                "    for x, y in batches:\n"
                "        loss = F.mse_loss(model(x), "
                "y)\n"
                "        loss.backward()\n"
                "        opt.zero_grad()\n"
                "        opt.step()\n"
                "        with torch.no_grad():\n"
                "            val_loss = "
                "F.mse_loss(model(val_x), val_y)\n"
                "        log.append((loss.item(), "
                "val_loss.item()))\n"
                "    return log\n"
            },
            "fails": {"q2_check": "logged losses differs from the expected value"},
            "judged": "not named",
            "message": "logged losses differs from the expected value "
            "(relative error 1.6e-02 in max-norm; the test is "
            "elementwise, |received - expected| <= atol + rtol * "
            "|expected| with rtol=1e-07, atol=1e-07, and its "
            "worst element is off by 0.025 where 2.1e-07 is "
            "allowed).\n"
            "  expected: [[0.6628234386444092, 1.101771473884",
        },
        "f01-07-kept-losses-keep-graph": {
            "cause": "thinks a loss kept after backward() still keeps its graph's saved tensors (A and G: 4)",
            "answers": {
                "q3_answer": 'def steps_alive():\n    return {"A": 4, "B": 4, "C": 1, "D": 4, "E": 4, "F": 0, "G": 4}\n'
            },
            "fails": {"q3_check": "what does a kept loss still hold?"},
            "judged": "named",
            "message": "2 of 3 predictions for A, B and C are right; "
            "rethink: A\n"
            "  - A: each loss is backwarded (without "
            "retain_graph) before the list keeps it: what "
            "does a kept loss still hold?\n"
            "[cause: "
            "prediction.predictions_for_a_b_and_c.A]",
        },
    },
    "ex08_checkpoint": {
        "f01-08-no-rng-state": {
            "cause": "passes preserve_rng_state=False, so dropout draws "
            "other masks when a segment is recomputed and the "
            "gradients change",
            "answers": {
                "q1_answer": "def forward_checkpointed(model, x):\n"
                "    segments = max(2, "
                "round(math.sqrt(len(model))))\n"
                "    return "
                "checkpoint_sequential(model, "
                "segments, x, use_reentrant=False, "
                "preserve_rng_state=False)\n"
            },
            "fails": {"q1_check": "preserve_rng_state=False"},
            "judged": "named",
            "message": "0.0.weight differs from the expected value "
            "(relative error 8.2e-01 in max-norm; the test is "
            "elementwise, |received - expected| <= atol + rtol * "
            "|expected| with rtol=1.3e-06, atol=1e-05, and its "
            "worst element is off by 0.00022 where 1e-05 is "
            "allowed).\n"
            "  (the same for 0.0.bias, 1.0.weight, 1.0.bias, 2",
        },
        "f01-08-sqrt-rule": {
            "cause": "returns the sqrt(n) rule of thumb without measuring",
            "answers": {"q2_answer": "def best_segments(model, x):\n    return max(1, round(math.sqrt(len(model))))\n"},
            "fails": {"q2_check": "the sqrt(n) rule assumes"},
            "judged": "named",
            "message": "best segment count is wrong. the sqrt(n) rule assumes "
            "a block saves about as much as its input, which this "
            "model's blocks do not; fewer, longer segments are "
            "recomputed whole in backward, so the recomputation "
            "raises the peak: measure the peak of every count from "
            "1 to len(model) (a hidden test: its in",
        },
        "f01-08-default-nonreentrant": {
            "cause": "thinks leaving use_reentrant out gives the non-reentrant variant (D like B)",
            "answers": {
                "q3_answer": "def predictions():\n"
                "    return {\n"
                '        "A": '
                '{"h.requires_grad": False, '
                '"block grad is None": True, '
                '"head grad is None": False},\n'
                '        "B": '
                '{"h.requires_grad": True, '
                '"block grad is None": False, '
                '"head grad is None": False},\n'
                '        "C": '
                '{"h.requires_grad": True, '
                '"block grad is None": False, '
                '"head grad is None": False},\n'
                '        "D": '
                '{"h.requires_grad": True, '
                '"block grad is None": False, '
                '"head grad is None": False},\n'
                "    }\n"
            },
            "fails": {"q3_check": "which variant runs by default in this PyTorch?"},
            "judged": "named",
            "message": "3 of 4 h.requires_grad predictions are "
            "right; rethink: D: h.requires_grad\n"
            "  - D: h.requires_grad: use_reentrant left "
            "out: which variant runs by default in this "
            "PyTorch?; the reentrant variant is one "
            "Function whose inputs are the block's "
            "arguments only\n"
            "[cause: "
            "prediction.h_requires_grad_predictions.D",
        },
    },
}

CORRECT = {
    "ex01_graph": {
        "f01-01-recursive-walk": {
            "answers": {
                "q3_answer": "def count_nodes(t):\n"
                "    def visit(node, seen):\n"
                "        if node is None or node in "
                "seen:\n"
                "            return seen\n"
                "        seen.add(node)\n"
                "        for child, _ in "
                "node.next_functions:\n"
                "            visit(child, seen)\n"
                "        return seen\n"
                "\n"
                "    return len(visit(t.grad_fn, "
                "set()))\n"
            }
        }
    },
    "ex02_leaves": {
        "f01-02-hook": {
            "answers": {
                "q2_answer": "def grad_of_hidden(x, w1, w2):\n"
                "    caught = {}\n"
                "    h, loss = forward(x, w1, w2)\n"
                "    h.register_hook(lambda g: "
                'caught.setdefault("h", g))\n'
                "    loss.backward()\n"
                '    return caught["h"].detach()\n'
            }
        }
    },
    "ex03_backward": {
        "f01-03-grad-outputs": {
            "answers": {
                "q3_answer": "def derivatives(f, x):\n"
                "    x = "
                "x.detach().clone().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    first = torch.autograd.grad(y, x, "
                "grad_outputs=torch.ones_like(y), "
                "create_graph=True)[0]\n"
                "    second = torch.autograd.grad(first, "
                "x, "
                "grad_outputs=torch.ones_like(first))[0]\n"
                "    return first.detach(), "
                "second.detach()\n"
            }
        }
    },
    "ex04_accumulation": {
        "f01-04-rescale-after": {
            "answers": {
                "q2_answer": "def accumulate(model, x, y, "
                "micro_batch):\n"
                "    n = x.shape[0]\n"
                "    for start in range(0, n, "
                "micro_batch):\n"
                "        xb, yb = x[start:start + "
                "micro_batch], y[start:start + "
                "micro_batch]\n"
                "        F.mse_loss(model(xb), yb, "
                'reduction="sum").backward()\n'
                "    with torch.no_grad():\n"
                "        for p in "
                "model.parameters():\n"
                "            p.grad /= n\n"
            }
        }
    },
    "ex06_grad_modes": {
        "f01-06-set-grad-enabled": {
            "answers": {
                "q3_answer": "def head_loss(backbone, head, x, "
                "target):\n"
                "    with "
                "torch.set_grad_enabled(False):\n"
                "        features = backbone(x)\n"
                "    scores = head(features)\n"
                "    return "
                "F.cross_entropy(scores, "
                "target)\n"
            }
        }
    },
    "ex07_memory": {
        "f01-07-one-line": {
            "answers": {
                "q1_answer": "def saved_bytes(n, d, h1, h2):\n"
                "    return torch.finfo(torch.float32).bits // "
                "8 * n * (d + h1 + h2 + 1)\n"
            }
        }
    },
    "ex08_checkpoint": {
        "f01-08-every-block": {
            "answers": {
                "q1_answer": "def forward_checkpointed(model, x):\n"
                "    *blocks, head = model\n"
                "    for block in blocks:\n"
                "        x = checkpoint(block, x, "
                "use_reentrant=False)\n"
                "    return head(x)\n"
            }
        }
    },
}
