"""A second held-out set of wrong answers (and correct answers written in unusual ways), for issue 25.

Written by a second tutor (tutor2) from the lessons and the learners' exercise notebooks only (not from the
grader's checks, helpers, hints, causes or typical mistakes, nor from the other corpora, nor from the first
tutor's set), then graded through ``python -m autograder grade``. Same shape as ``corpus_fresh.py``:
``WRONG = {exercise: {student_id: {"cause", "answers", "fails", "judged", "message"}}}``; every other
answer cell is the solution's, copied mechanically. ``judged``: does the message name the actual cause
("named", "partly", "not named" or "misleading"); ``message``: the grader's message at the time (first 300
characters); ``fails``: each test cell that failed, to words of its message. ``CORRECT`` answers must get
full marks. Not wired into the tests here.
"""

WRONG = {
    "ex01_graph": {
        "g01-01-xb-loops-once": {
            "cause": "predicts that the while loop doubles h once for x_b (3 "
            "MulBackward0), though h = x_b*w + b already has an entry "
            "of 4.5 >= 4, so the loop body never runs (2)",
            "answers": {
                "q1_answer": "def predicted_counts():\n"
                "    return {\n"
                '        "x_a": {"MulBackward0": 4, '
                '"AddBackward0": 1, "TanhBackward0": 1, '
                '"SumBackward0": 1, "AccumulateGrad": 2},\n'
                '        "x_b": {"MulBackward0": 3, '
                '"AddBackward0": 1, "TanhBackward0": 1, '
                '"SumBackward0": 1, "AccumulateGrad": 2},\n'
                "    }\n"
            },
            "fails": {"q1_check": "one `h * 2` per pass of the while loop"},
            "judged": "named",
            "message": "4 of 5 Node counts for x_b are right; rethink: "
            "MulBackward0\n"
            "  - MulBackward0: x * w, tanh(h) * w and one `h * 2` "
            "per pass of the while loop: how many passes does this x "
            "make, with these values? (a hidden test: its inputs are "
            "not shown)\n"
            "[cause: prediction.node_counts_for_x_b.MulBackward0]",
        },
        "g01-02-square-no-2": {
            "cause": "forgets the factor 2 of the derivative of the square: dL/dp "
            "= (p - y) / N instead of 2 (p - y) / N, so both gradients "
            "are half",
            "answers": {
                "q2_answer": "def grad_wb(w, b, x, y):\n"
                "    p = torch.tanh(x @ w + b)\n"
                "    n = y.shape[0]\n"
                "    dp = (p - y) / n\n"
                "    dz = dp * (1 - p ** 2)\n"
                '    return {"w": x.T @ dz, "b": '
                "dz.sum()}\n"
            },
            "fails": {"q2_check": "the factor 2 of the square's derivative forgotten"},
            "judged": "named",
            "message": "w is exactly 1/2 of the expected value: the factor 2 of "
            "the square's derivative forgotten: d(p - y)**2 / dp = 2 * "
            "(p - y).\n"
            "  expected: [0.6325944662094116, 0.3459872901439667, "
            "-0.2798413038253784]\n"
            "  received: [0.3162972033023834, 0.17299364507198334, "
            "-0.1399206519126892]\n"
            "  (the same for b)\n"
            "[cause: t",
        },
        "g01-03-no-dedup": {
            "cause": "walks next_functions recursively without remembering the Nodes "
            "already seen, so a Node reached by two paths (e.g. a leaf used "
            "twice) is counted twice",
            "answers": {
                "q3_answer": "def count_nodes(t):\n"
                "    def walk(node):\n"
                "        if node is None:\n"
                "            return 0\n"
                "        return 1 + sum(walk(child) for child, "
                "_ in node.next_functions)\n"
                "    return walk(t.grad_fn)\n"
            },
            "fails": {"q3_check": "A Node reached by several paths is one Node"},
            "judged": "named",
            "message": "count_nodes((h * h.sin()).sum() with h = a.exp()) is wrong: "
            "expected 5, got 7. A Node reached by several paths is one "
            "Node: count it once (keep a set of the Nodes seen)\n"
            "[cause: value.a_node_reached_by_several_paths]",
        },
    },
    "ex02_leaves": {
        "g01-02-detach-not-leaf": {
            "cause": "thinks k = g.detach() is not a leaf (a view of the "
            "non-leaf g); detach() returns a new leaf that does not "
            "require grad",
            "answers": {
                "q1_answer": "def predictions():\n"
                "    return {\n"
                '        "is_leaf":       {"w": True,  '
                '"v": False, "u": True,  "h": False, '
                '"g": False, "s": True,  "k": False},\n'
                '        "requires_grad": {"w": True,  '
                '"v": True,  "u": True,  "h": True,  '
                '"g": True,  "s": False, "k": False},\n'
                '        "grad is None":  {"w": False, '
                '"v": True,  "u": True,  "h": False, '
                '"g": True,  "s": True,  "k": True},\n'
                "    }\n"
            },
            "fails": {"q1_check": "so it is always a leaf"},
            "judged": "named",
            "message": "k: you predict requires_grad=False and "
            "is_leaf=False, which cannot be: a tensor that does "
            "not require grad has no grad_fn, so it is always a "
            "leaf.",
        },
        "g01-02-create-graph-kept": {
            "cause": "uses torch.autograd.grad(loss, h, create_graph=True) "
            "and returns the result as it is: it carries a graph "
            "(requires_grad=True), not detached",
            "answers": {
                "q2_answer": "def grad_of_hidden(x, w1, w2):\n"
                "    h, loss = forward(x, w1, w2)\n"
                "    (g,) = torch.autograd.grad(loss, "
                "h, create_graph=True)\n"
                "    return g\n"
            },
            "fails": {"q2_check": "still attached to the autograd graph (requires_grad=True)"},
            "judged": "named",
            "message": (
                "d loss / d h is still attached to the autograd graph (requires_grad=True). creat"
                "e_graph=True records the gradient's own graph, which only a higher derivative ne"
                "eds: leave it out, and return .detach()ed values.\n  expected: [[-0.0721392259001"
                "7319, 0.023937728255987167], [-0.04035979136824608, 0.013392459601163864], [-0.0"
                "6884127855300903, 0.0228433795273304], [0.023993313312530518, -0.007961624301970"
            ),
        },
        "g01-02-float32-param": {
            "cause": "forgets the dtype: torch.randn(*shape) is float32, so "
            "the parameter is a float32 leaf, not float64",
            "answers": {
                "q3_answer": "def make_param(*shape):\n"
                "    p = 0.1 * torch.randn(*shape)\n"
                "    return p.requires_grad_()\n"
            },
            "fails": {"q3_check": "create it with dtype=torch.float64"},
            "judged": "named",
            "message": "make_param(3, 2) returned dtype torch.float32 and "
            "shape (3, 2), expected torch.float64 and (3, 2) "
            "(create it with dtype=torch.float64).",
        },
    },
    "ex03_backward": {
        "g01-03-mean-saves": {
            "cause": "predicts that B, (a - b).mean(), fails the second time "
            "(thinks MeanBackward0 saves its input); neither Sub nor "
            "Mean saves a tensor, so the second backward runs",
            "answers": {
                "q1_answer": "def second_backward():\n"
                '    return {"A": "ok", "B": "error", "C": '
                '"error", "D": "error",\n'
                '            "E": "ok", "F": "error", "G": '
                '"error", "H": "ok"}\n'
            },
            "fails": {"q1_check": "its graph's Nodes save nothing for backward"},
            "judged": "named",
            "message": "3 of 4 predictions for A to D are right; rethink: B\n"
            "  - B: its graph's Nodes save nothing for backward: "
            "what could the first backward free?\n"
            "[cause: prediction.predictions_for_a_to_d.B]",
        },
        "g01-03-loop-retain-all": {
            "cause": "thinks retain_graph=True keeps every step's graph "
            "alive (steps times one step's bytes); each new loss "
            "replaces the old, so one graph is alive after the "
            "loop and two at the peak",
            "answers": {
                "q4_answer": "def loop_bytes(n, d, h, steps):\n"
                "    one_step = 4 * n * (d + h + 1)   "
                "# Linear 1 input, ReLU output (= "
                "Linear 2 input), out - y for the "
                "square\n"
                '    return {"peak without '
                'retain_graph": one_step,\n'
                '            "alive after the loop '
                'with retain_graph": steps * '
                "one_step,\n"
                '            "peak with '
                'retain_graph": steps * one_step}\n'
            },
            "fails": {"q4_check": "with retain_graph=True, only when nothing references the graph any more"},
            "judged": "named",
            "message": (
                "alive after the loop with retain_graph (n=8, d=10, h=20) is exactly 3x the expec"
                "ted figure: 3 graphs (iterations, micro-batches) counted, where fewer are alive "
                "at that moment? A graph's saved tensors go when backward frees them, or, with re"
                "tain_graph=True, only when nothing references the graph any more (its loss rebou"
                "nd to the next step's).\n  The expected figure is made of: x (the batch) (320 B);"
            ),
        },
        "g01-03-no-create-graph": {
            "cause": "takes the first derivative without "
            "create_graph=True, so it has no graph and the second "
            "torch.autograd.grad raises (element 0 of tensors "
            "does not require grad)",
            "answers": {
                "q3_answer": "def derivatives(f, x):\n"
                "    x = x.detach().requires_grad_()\n"
                "    (first,) = "
                "torch.autograd.grad(f(x).sum(), x)\n"
                "    (second,) = "
                "torch.autograd.grad(first.sum(), x)\n"
                "    return first.detach(), "
                "second.detach()\n"
            },
            "fails": {"q3_check": "ran without create_graph=True"},
            "judged": "named",
            "message": "derivatives raised RuntimeError: element 0 of "
            "tensors does not require grad and does not have a "
            "grad_fn\n"
            "  raised in derivatives(), line 4: (second,) = "
            "torch.autograd.grad(first.sum(), x)\n"
            "You differentiate a gradient a second time "
            "(element 0 of the outputs), and the first "
            "torch.autograd.grad (or back",
        },
    },
    "ex04_accumulation": {
        "g01-04-logged-follows": {
            "cause": "predicts that g = logged.tolist() follows w.grad "
            "to the end ([4, 4]); zero_grad() set w.grad to "
            "None, so the later backward made a new tensor and "
            "logged still holds the old one ([3, 12])",
            "answers": {
                "q1_answer": "def predicted_grads():\n"
                '    return {"a": [3.0, 3.0], "b": '
                '[5.0, -1.0], "c": [0.0, 0.0], '
                '"d": [3.0, 12.0],\n'
                '            "e": None, "f": [4.0, '
                '4.0], "g": [4.0, 4.0]}\n'
            },
            "fails": {"q1_check": "which give .grad a new tensor?"},
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
        "g01-04-per-chunk-weight": {
            "cause": "weights each micro-batch's mean loss by 1 / "
            "number of micro-batches instead of len(xb) / N: "
            "right when all micro-batches are the same size, "
            "wrong when the last one is smaller",
            "answers": {
                "q2_answer": "def accumulate(model, x, y, "
                "micro_batch):\n"
                "    chunks = "
                "list(zip(x.split(micro_batch), "
                "y.split(micro_batch)))\n"
                "    for xb, yb in chunks:\n"
                "        (F.mse_loss(model(xb), "
                "yb) / "
                "len(chunks)).backward()\n"
            },
            "fails": {"q2_check": "Dividing each loss by the number of micro-batches"},
            "judged": "named",
            "message": "0.weight differs from the expected value "
            "(relative error 1.1e-01 in max-norm; the test "
            "is elementwise, |received - expected| <= atol "
            "+ rtol * |expected| with rtol=1.3e-06, "
            "atol=1e-05, and its worst element is off by "
            "0.61 where 1.5e-05 is allowed). Not a "
            "constant factor of the full-batch gradient: "
            "is",
        },
        "g01-04-tanh-twice": {
            "cause": "counts the Tanh output twice (once for TanhBackward0, "
            "once as the input the second Linear saves), though it "
            "is one storage",
            "answers": {
                "q3_answer": "def accumulation_bytes(n, "
                "micro_batch, d, h):\n"
                "    def peak(m):\n"
                "        return 4 * m * (d + h + h + 1 "
                "+ 1)   # x, tanh out, Linear 2 input, "
                "prediction, target\n"
                '    return {"full batch peak": '
                'peak(n), "accumulation peak": '
                "peak(min(micro_batch, n))}\n"
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
        "g01-05-detach-own-counter": {
            "cause": "thinks a.detach() gets its own version counter, so "
            "d.zero_() bumps d only (d = 1) and not a and b "
            "(they end at 3 instead of 4); detach shares the "
            "counter, only .data does not",
            "answers": {
                "q1_answer": 'def versions():\n    return {"a": 3, "b": 3, "c": 1, "d": 1, "e": 1, "f": 0, "g": 1}\n'
            },
            "fails": {"q1_check": "views, detach()); .data has a counter of its own"},
            "judged": "named",
            "message": "2 of 4 _version predictions (a, b, c, f) are "
            "right; rethink: a, b\n"
            "  - a: count every in-place write to a's storage "
            "made through a itself or through anything "
            "sharing its version counter (views, detach()); "
            ".data has a counter of its own\n"
            "  - b: b = a[1:3] is a view of a: whose version "
            "counter does it r",
        },
        "g01-05-clone-after-scale": {
            "cause": "clones g only before g[:, 0] = 1, leaving g *= 2 in "
            "place on the sigmoid's output, which "
            "SigmoidBackward0 saved: backward still raises",
            "answers": {
                "q3_answer": "def gated_fixed(x, w, v):\n"
                "    h = x @ w\n"
                "    g = torch.sigmoid(h)\n"
                "    g *= 2\n"
                "    g = g.clone()\n"
                "    g[:, 0] = 1\n"
                "    out = g * torch.tanh(h)\n"
                "    return ((out @ v) ** "
                "2).mean()\n"
            },
            "fails": {"q3_check": "output 0 of Sigmoid"},
            "judged": "named",
            "message": "backward raised RuntimeError: one of the "
            "variables needed for gradient computation has "
            "been modified by an inplace operation: "
            "[torch.DoubleTensor [4, 5]], which is output 0 of "
            "Sigmoid, is at version 1; expected version 0 "
            "instead. Hint: enable anomaly detection to find "
            "the operation that failed to co",
        },
        "g01-05-clone-free": {
            "cause": "thinks the clone costs nothing saved (after = before); the "
            "clone makes the gate a new storage, and the sigmoid's "
            "output stays saved too: one more [n, h] tensor",
            "answers": {
                "q4_answer": "def saved_bytes(n, d, h):\n"
                "    before = 4 * (n * d + 3 * n * h + n)\n"
                '    return {"before": before, "after": '
                "before}\n"
            },
            "fails": {"q4_check": "SigmoidBackward0 still saves its own output"},
            "judged": "named",
            "message": (
                "saved bytes after (n=4, d=3, h=5) is 80 B too low: exactly the clone's storage: "
                ".clone() copies the sigmoid's output into a new [n, h] storage, which the produc"
                "t saves, while SigmoidBackward0 still saves its own output (in gated they are on"
                "e storage).\n  expected: 384 B\n  received: 304 B\n[cause: byte"
            ),
        },
    },
    "ex06_grad_modes": {
        "g01-06-clone-still-inference": {
            "cause": "predicts that E raises inference_tensor "
            "(thinks a clone of an inference tensor is "
            "still one); cloned outside inference_mode it "
            "is a normal tensor, so E runs",
            "answers": {
                "q2_answer": "def errors():\n"
                '    return {"A": '
                '"not_built", "B": '
                '"inference_tensor", "C": '
                'None, "D": '
                '"inference_tensor",\n'
                '            "E": '
                '"inference_tensor", "F": '
                '"modified_inplace", "G": '
                '"leaf_inplace", "H": None,\n'
                '            "I": "consumed", '
                '"J": None, "K": None, "L": '
                '"not_built"}\n'
            },
            "fails": {"q2_check": "is the clone an inference tensor, or a normal one?"},
            "judged": "named",
            "message": "11 of 12 answers are right; rethink: E\n"
            "  - E: t.clone() runs outside inference "
            "mode: is the clone an inference tensor, or "
            "a normal one? (a hidden test: its inputs "
            "are not shown)\n"
            "[cause: prediction.answers.E]",
        },
        "g01-06-detach-after": {
            "cause": "runs the backbone with grad enabled and detaches its "
            "features afterwards: gradients are right, but the "
            "backbone records a graph and saves its tensors while "
            "the function runs",
            "answers": {
                "q3_answer": "def head_loss(backbone, head, x, "
                "target):\n"
                "    features = backbone(x).detach()\n"
                "    return "
                "F.cross_entropy(head(features), "
                "target)\n"
            },
            "fails": {"q3_check": "what the backbone saves when it runs in grad mode"},
            "judged": "named",
            "message": "peak bytes saved during head_loss (N=5) is 336 B "
            "too high: exactly what the backbone saves when it "
            "runs in grad mode (run it under torch.no_grad()).\n"
            "  expected: 264 B\n"
            "  received: 600 B\n"
            "[cause: "
            "bytes.extra.what_the_backbone_saves_when_it]",
        },
        "g01-06-copy-no-nograd": {
            "cause": "updates the target's parameters in place with copy_ "
            "outside torch.no_grad(): an in-place operation on a "
            "leaf that requires grad raises",
            "answers": {
                "q5_answer": "def soft_update(target, online, "
                "tau):\n"
                "    for pt, po in "
                "zip(target.parameters(), "
                "online.parameters()):\n"
                "        pt.copy_((1 - tau) * pt + "
                "tau * po)\n"
            },
            "fails": {"q5_check": "a leaf Variable that requires grad is being used in an in-place operation"},
            "judged": "named",
            "message": "soft_update raised RuntimeError: a leaf Variable "
            "that requires grad is being used in an in-place "
            "operation.\n"
            "  raised in soft_update(), line 3: pt.copy_((1 - "
            "tau) * pt + tau * po)\n"
            "You modified in place a leaf tensor that requires "
            "grad (a parameter, or a tensor created with "
            "requires_grad=True) while a",
        },
    },
    "ex07_memory": {
        "g01-07-input-free": {
            "cause": "leaves out the input x that the first Linear saves (thinks "
            "data that does not require grad is not saved)",
            "answers": {
                "q1_answer": "def saved_bytes(n, d, h1, h2):\n"
                "    # ReLU output (= Linear 2 input), Tanh "
                "output (= Linear 3 input), out - y for the "
                "square\n"
                "    return 4 * n * (h1 + h2 + 1)\n"
            },
            "fails": {"q1_check": "exactly the size of x (saved by the first Linear)"},
            "judged": "named",
            "message": "saved bytes for n=8, d=5, h1=6, h2=3 is 160 B too low: "
            "exactly the size of x (saved by the first Linear). Which "
            "Node saves it for backward?\n"
            "  expected: 480 B\n"
            "  received: 320 B\n"
            "[cause: bytes.missing.x]",
        },
        "g01-07-val-with-graph": {
            "cause": "logs floats, but computes the validation loss with grad "
            "enabled: its graph (on 64 samples) saves more than one "
            "training step's",
            "answers": {
                "q2_answer": "def train_and_log(model, opt, batches, "
                "val_x, val_y):\n"
                "    log = []\n"
                "    for x, y in batches:\n"
                "        loss = F.mse_loss(model(x), y)\n"
                "        opt.zero_grad()\n"
                "        loss.backward()\n"
                "        opt.step()\n"
                "        val_loss = "
                "F.mse_loss(model(val_x), val_y)\n"
                "        log.append((loss.item(), "
                "val_loss.item()))\n"
                "    return log\n"
            },
            "fails": {"q2_check": "evaluate under torch.no_grad()"},
            "judged": "named",
            "message": "how the validation forwards ran is wrong: expected "
            "'without a graph', got 'in grad mode'. Your loop ran "
            "the validation forward with grad mode on: it records "
            "a graph nobody will backward, whose saved tensors "
            "stay alive until the next one replaces it; evaluate "
            "under torch.no_grad().\n"
            "[cause: value.your",
        },
        "g01-07-total-keeps": {
            "cause": "predicts that G (total = total + loss after each backward) "
            "keeps 4 steps alive; total's graph holds the Nodes, but "
            "backward already freed their saved tensors: 0",
            "answers": {
                "q3_answer": 'def steps_alive():\n    return {"A": 0, "B": 4, "C": 1, "D": 4, "E": 4, "F": 0, "G": 4}\n'
            },
            "fails": {"q3_check": "but each was backwarded (without retain_graph) first"},
            "judged": "named",
            "message": "6 of 7 predictions are right; rethink: G\n"
            "  - G: total links every step's graph, but each was "
            "backwarded (without retain_graph) first (a hidden test: "
            "its inputs are not shown)\n"
            "[cause: prediction.predictions.G]",
        },
    },
    "ex08_checkpoint": {
        "g01-08-reentrant-data": {
            "cause": "uses checkpoint_sequential with use_reentrant=True "
            "on an input that does not require grad: the "
            "checkpointed segments' output does not require "
            "grad, so the blocks' parameters get no gradient",
            "answers": {
                "q1_answer": "def forward_checkpointed(model, "
                "x):\n"
                "    segments = max(1, "
                "round(math.sqrt(len(model))))\n"
                "    return "
                "checkpoint_sequential(model, "
                "segments, x, use_reentrant=True)\n"
            },
            "fails": {"q1_check": "whose inputs do not require grad"},
            "judged": "named",
            "message": "Some parameters got no gradient (.grad still "
            "zero: 0.0.weight, 0.0.bias, 1.0.weight, ...): "
            "your code ran a reentrant checkpoint "
            "(use_reentrant=True, or left out: the default) "
            "whose inputs do not require grad: it records "
            "nothing for backward; pass use_reentrant=False.",
        },
        "g01-08-ties-largest": {
            "cause": "measures every count but keeps the last of the tied counts (<= instead of <), not the smallest",
            "answers": {
                "q2_answer": "def best_segments(model, x):\n"
                "    from autograder.live_memory "
                "import peak_live_bytes\n"
                "    best, best_peak = None, None\n"
                "    for s in range(1, len(model) + "
                "1):\n"
                "        peak = "
                "peak_live_bytes(lambda: "
                "checkpoint_sequential(model, s, x, "
                "use_reentrant=False).sum().backward(),\n"
                "                               "
                "params=model.parameters())\n"
                "        if best_peak is None or peak "
                "<= best_peak:\n"
                "            best, best_peak = s, "
                "peak\n"
                "    return best\n"
            },
            "fails": {"q2_check": "of equal peaks keep the first, the smallest count"},
            "judged": "named",
            "message": "best segment count for 6 blocks of kind 'tanh' is "
            "wrong: expected 2, got 3. 3 segments tie for the "
            "smallest peak with a smaller count: of equal peaks "
            "keep the first, the smallest count (the question's "
            "rule for ties).\n"
            "[cause: value.segments_tie_for_the_smallest_peak]",
        },
        "g01-08-default-nonreentrant": {
            "cause": "thinks leaving use_reentrant out (D) means "
            "the non-reentrant checkpoint (like B); in "
            "this PyTorch the default is still reentrant, "
            "so D behaves like A",
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
    "ex09_functions": {
        "g01-09-save-sigmoid": {
            "cause": "saves sigmoid(beta * x), computed in forward, and "
            "returns grad * s: the saved tensor is a constant for "
            "the double backward, so the second derivative (beta * "
            "s * (1 - s)) is lost",
            "answers": {
                "q1_answer": "class StableSoftplus(Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, beta):\n"
                "        z = beta * x\n"
                "        "
                "ctx.save_for_backward(torch.sigmoid(z))\n"
                "        return (torch.clamp(z, min=0) "
                "+ torch.log1p(torch.exp(-z.abs()))) / "
                "beta\n"
                "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad):\n"
                "        (s,) = ctx.saved_tensors\n"
                "        return grad * s, None\n"
            },
            "fails": {"q1_check": "a tensor computed inside forward"},
            "judged": "named",
            "message": "what StableSoftplus saves for backward (beta=1.0) is "
            "wrong: expected 'x or the output', got 'a tensor "
            "made inside forward'. StableSoftplus saves for "
            "backward a tensor computed inside forward, neither x "
            "nor the output: forward runs without recording, so "
            "that tensor has no graph back to x, and under c",
        },
        "g01-09-naive-forward": {
            "cause": "writes forward as it reads, log1p(exp(beta * x)) / "
            "beta: exp overflows to inf for large beta * x (the "
            "backward is right)",
            "answers": {
                "q1_answer": "class StableSoftplus(Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, beta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.beta = beta\n"
                "        return "
                "torch.log1p(torch.exp(beta * x)) / "
                "beta\n"
                "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad * "
                "torch.sigmoid(ctx.beta * x), None\n"
            },
            "fails": {"q1_check": "Is forward stable (no inf or nan)"},
            "judged": "named",
            "message": "StableSoftplus(x, beta=1.0) differs from the "
            "expected value (relative error inf in max-norm; the "
            "test is elementwise, |received - expected| <= atol "
            "+ rtol * |expected| with rtol=1e-07, atol=1e-07, "
            "and its worst element is off by inf where 8e-05 is "
            "allowed). Is forward stable (no inf or nan) and "
            "divi",
        },
        "g01-09-float-mask": {
            "cause": "saves the mask converted to x's dtype ((x > "
            "0).to(x.dtype)): 4 or 8 bytes per element, not a "
            "torch.bool mask",
            "answers": {
                "q2_answer": "class LeanLeakyReLU(Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, slope):\n"
                "        mask = (x > 0).to(x.dtype)\n"
                "        ctx.save_for_backward(mask)\n"
                "        ctx.slope = slope\n"
                "        return x * (mask + (1 - mask) * "
                "slope)\n"
                "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad):\n"
                "        (mask,) = ctx.saved_tensors\n"
                "        return grad * (mask + (1 - mask) "
                "* ctx.slope), None\n"
            },
            "fails": {"q2_check": "Your mask is saved as torch.float32 (4 bytes per element), not torch.bool"},
            "judged": "named",
            "message": (
                "what LeanLeakyReLU saves for backward is wrong: expected 'not a mask of 0s and 1"
                "s in a dtype of more than 1 byte', got 'a mask of 0s and 1s in torch.float32'. Y"
                "our mask is saved as torch.float32 (4 bytes per element), not torch.bool (1 byte"
                "): save x > 0 as it is, without .to(x.dtype) or .float(), and convert it in back"
                "ward where needed.\n[cause: value.your_mask_is_saved_as_torch]"
            ),
        },
        "g01-09-ctx-attr-freed": {
            "cause": "thinks the ctx attribute h is freed by backward like "
            "the saved tensors; backward frees only what "
            "save_for_backward saved, ctx.h stays alive with the "
            "Node",
            "answers": {
                "q3_answer": "def alive():\n"
                '    return {"x": False, "w": True, '
                '"h": False, "g": False, '
                '"y_after_del": True}\n'
            },
            "fails": {"q3_check": "a ctx attribute lives as long as the Node"},
            "judged": "named",
            "message": "2 of 3 predictions (x, h, g) are right; rethink: "
            "h\n"
            "  - h: h is a ctx attribute (ctx.h = h), not a "
            "saved tensor: backward frees saved tensors, but a "
            "ctx attribute lives as long as the Node, and y "
            "(kept) holds its grad_fn, the Node.\n"
            "[cause: prediction.predictions.h]",
        },
    },
    "ex10_hooks": {
        "g01-10-full-hook-inplace": {
            "cause": "registers register_full_backward_hook on every leaf "
            "module: with nn.ReLU(inplace=True) the module's "
            "output is a view that the in-place op modifies, and "
            "PyTorch raises",
            "answers": {
                "q1_answer": "def attach_grad_norm_hooks(model, "
                "log):\n"
                "    handles = []\n"
                "    for name, module in "
                "model.named_modules():\n"
                "        if "
                "len(list(module.children())) == 0:\n"
                "            def hook(mod, grad_input, "
                "grad_output, name=name):\n"
                "                log.append((name, "
                "grad_output[0].norm().item()))\n"
                "            "
                "handles.append(module.register_full_backward_hook(hook))\n"
                "    return handles\n"
            },
            "fails": {"q1_check": "passes its inputs and outputs through BackwardHookFunction"},
            "judged": "named",
            "message": "run raised RuntimeError: Output 0 of "
            "BackwardHookFunction is a view and is being "
            "modified inplace. This view was created inside a "
            "custom Function (or because an input was returned "
            "as-is) and the autograd logic to handle "
            "view+inplace would override the custom backward "
            "associated with the custom Funct",
        },
        "g01-10-tensor-hook-clip": {
            "cause": "clips with a tensor hook (p.register_hook): it sees "
            "each backward's gradient before it is accumulated, so "
            "the accumulated sum of clipped gradients can exceed "
            "clip",
            "answers": {
                "q2_answer": "def attach_clip_hooks(model, clip):\n"
                "    return [p.register_hook(lambda g: "
                "g.clamp(-clip, clip)) for p in "
                "model.parameters() if "
                "p.requires_grad]\n"
            },
            "fails": {"q2_check": "A tensor hook on a parameter (register_hook) sees only the new contribution"},
            "judged": "named",
            "message": "where .grad lies after 2 backward calls is wrong: "
            "expected 'within [-clip, clip]', got 'outside "
            "[-clip, clip], tensor hooks on the parameters'. "
            "After one backward call .grad was clipped, but after "
            "2 accumulated calls entries lie outside [-clip, "
            "clip]: the clipping did not act on the accumulated "
            ".gra",
        },
        "g01-10-lambda-returns": {
            "cause": "(written as an unusual correct answer, but wrong) the "
            "post-accumulate hook is a lambda, which returns the "
            "tensor clamp_ returns; such hooks must return None, and "
            "PyTorch raises",
            "answers": {
                "q2_answer": "def attach_clip_hooks(model, clip):\n"
                "    return "
                "[p.register_post_accumulate_grad_hook(lambda "
                "p: p.grad.clamp_(-clip, clip))\n"
                "            for p in model.parameters() "
                "if p.requires_grad]\n"
            },
            "fails": {"q2_check": "A lambda returns what its expression returns"},
            "judged": "named",
            "message": "run raised RuntimeError: Tensor post accumulate grad "
            "hooks should return None.\n"
            "  raised in run(), line 16: "
            "model(x).pow(2).sum().backward()\n"
            "A hook registered with "
            "register_post_accumulate_grad_hook returned a value. "
            "It gets the parameter after .grad was written and must "
            "return None (it changes p.gra",
        },
        "g01-10-frozen-counted": {
            "cause": "peak_grad_bytes counts every parameter, frozen ones too "
            "(requires_grad=False parameters get no .grad)",
            "answers": {
                "q3_answer": "def fuse_sgd_into_backward(model, lr):\n"
                "    handles = []\n"
                "    for p in model.parameters():\n"
                "        if p.requires_grad:\n"
                "            def hook(p):\n"
                "                with torch.no_grad():\n"
                "                    p.add_(p.grad, "
                "alpha=-lr)\n"
                "                p.grad = None\n"
                "            "
                "handles.append(p.register_post_accumulate_grad_hook(hook))\n"
                "    return handles\n"
                "\n"
                "\n"
                "def peak_grad_bytes(model, fused):\n"
                "    sizes = [p.numel() * "
                "p.element_size() for p in "
                "model.parameters()]\n"
                "    return max(sizes) if fused else "
                "sum(sizes)\n"
            },
            "fails": {"q3_check": "peak_grad_bytes counts the frozen parameters too"},
            "judged": "named",
            "message": "what peak_grad_bytes counts is wrong. peak_grad_bytes "
            "counts the frozen parameters too: a parameter with "
            "requires_grad=False gets no .grad. (a hidden test: its "
            "inputs are not shown)\n"
            "[cause: value.peak_grad_bytes_counts_the_frozen]",
        },
        "g01-10-unpack-no-cast": {
            "cause": "unpack returns the 16-bit tensor as it is, without "
            "casting it back to its own dtype, so backward mixes "
            "float16 saved activations with float32 gradients",
            "answers": {
                "q4_answer": "def half_precision_hooks(params):\n"
                "    param_storages = "
                "{p.untyped_storage().data_ptr() for p in "
                "params}\n"
                "\n"
                "    def pack(t):\n"
                "        if "
                "t.untyped_storage().data_ptr() in "
                "param_storages:\n"
                "            return t\n"
                "        return t.to(torch.float16)\n"
                "\n"
                "    def unpack(t):\n"
                "        return t\n"
                "\n"
                "    return pack, unpack\n"
            },
            "fails": {"q4_check": "returns a tensor of another dtype or shape than the one pack received"},
            "judged": "named",
            "message": "run raised RuntimeError: expected m1 and m2 to have "
            "the same dtype, but got: float != c10::Half\n"
            "  raised in run(), line 39: grads = "
            "torch.autograd.grad(loss, list(model.parameters()))\n"
            "This error (a dtype mismatch) was raised during "
            "backward, where autograd computes with the tensors "
            "forward saved, un",
        },
    },
    "ex11_mixed_precision": {
        "g01-11-two-per-linear": {
            "cause": "counts two casts per nn.Linear module (weight "
            "and bias), by rule: ignores frozen parameters "
            "(no Node), the cast cache for a layer used "
            "twice and the cast of an input that requires "
            "grad",
            "answers": {
                "q1_answer": "def count_casts(model, x):\n"
                "    return 2 * "
                "sum(isinstance(m, nn.Linear) "
                "for m in model.modules())\n"
            },
            "fails": {"q1_check": "The input's cast left out"},
            "judged": "named",
            "message": "ToCopyBackward0 Nodes of mlp([8, 16, 4]) on "
            "an input that requires grad is wrong: "
            "expected 5, got 4. The input's cast left "
            "out: x requires grad here, so its cast to "
            "bfloat16 records a ToCopyBackward0 too.\n"
            "[cause: value.the_inputs_cast_left_out]",
        },
        "g01-11-weight-casts-excluded": {
            "cause": "leaves out the bfloat16 copies of the "
            "weights that the Linear layers save "
            "(takes them for parameters, which are "
            "excluded): they are new tensors made by "
            "the cast",
            "answers": {
                "q2_answer": "def "
                "saved_bytes_bf16(widths, "
                "batch):\n"
                "    # each Linear saves "
                "its (bfloat16) input; "
                "the ReLU output is the "
                "next Linear's input\n"
                "    return 2 * batch * "
                "sum(widths[:-1])\n"
            },
            "fails": {"q2_check": "the bfloat16 copy of the weight of layer 2"},
            "judged": "named",
            "message": "saved bytes of mlp([8, 16, 16, 4]), "
            "batch 3 is 640 B too low: exactly the "
            "size of the bfloat16 copy of the "
            "weight of layer 2 + the bfloat16 copy "
            "of the weight of layer 3. Which Node "
            "saves it for backward?\n"
            "  expected: 880 B\n"
            "  received: 240 B\n"
            "[cause: "
            "bytes.missing.the_bfloat_copy_of_the_weight]",
        },
        "g01-11-clip-scaled": {
            "cause": "clips the gradients while they are still scaled "
            "(no scaler.unscale_(optimizer) before "
            "clip_grad_norm_), so the clipping uses the scaled "
            "norm",
            "answers": {
                "q3_answer": "def scaled_step(model, optimizer, "
                "scaler, x, y, max_norm):\n"
                "    optimizer.zero_grad()\n"
                '    with torch.autocast("cpu", '
                "dtype=torch.bfloat16):\n"
                "        loss = "
                "torch.nn.functional.mse_loss(model(x), "
                "y)\n"
                "    "
                "scaler.scale(loss).backward()\n"
                "    "
                "torch.nn.utils.clip_grad_norm_(model.parameters(), "
                "max_norm)\n"
                "    scaler.step(optimizer)\n"
                "    scaler.update()\n"
            },
            "fails": {"q3_check": "call scaler.unscale_(optimizer) before clip_grad_norm_"},
            "judged": "named",
            "message": "the total norm of the last gradients, divided "
            "by max_norm is exactly 1/32768 of the expected "
            "value: the scaled gradients were clipped: call "
            "scaler.unscale_(optimizer) before "
            "clip_grad_norm_.\n"
            "  expected: 0.9999997317826202\n"
            "  received: 3.051757923637071e-05\n"
            "[cause: tensor.fraction.the_scaled_gradients",
        },
        "g01-11-no-update": {
            "cause": "forgets scaler.update(): the scale is never halved after the inf step (and never grows)",
            "answers": {
                "q3_answer": "def scaled_step(model, optimizer, "
                "scaler, x, y, max_norm):\n"
                "    optimizer.zero_grad()\n"
                '    with torch.autocast("cpu", '
                "dtype=torch.bfloat16):\n"
                "        loss = "
                "torch.nn.functional.mse_loss(model(x), "
                "y)\n"
                "    scaler.scale(loss).backward()\n"
                "    scaler.unscale_(optimizer)\n"
                "    "
                "torch.nn.utils.clip_grad_norm_(model.parameters(), "
                "max_norm)\n"
                "    scaler.step(optimizer)\n"
            },
            "fails": {"q3_check": "Your code never calls scaler.update()"},
            "judged": "named",
            "message": "scaled_step raised RuntimeError: unscale_() is "
            "being called after step().\n"
            "  raised in scaled_step(), line 6: "
            "scaler.unscale_(optimizer)\n"
            "GradScaler keeps, per optimizer, where it is in "
            "the iteration (scaled, unscaled, stepped), and "
            "only scaler.update() starts the next one; here a "
            "call came out of tha",
        },
    },
    "ex12_higher_order": {
        "g01-12-no-create-graph": {
            "cause": "takes the gradient with respect to x_hat without "
            "create_graph=True: the penalty is not connected "
            "to the critic's parameters (its backward fails "
            "or gives no gradient)",
            "answers": {
                "q2_answer": "def one_sided_penalty(critic, "
                "x_hat):\n"
                "    scores = critic(x_hat)\n"
                "    (g,) = "
                "torch.autograd.grad(scores.sum(), "
                "x_hat)\n"
                "    return (torch.relu(g.norm(dim=1) - 1) "
                "** 2).mean()\n"
            },
            "fails": {"q2_check": "with create_graph=True"},
            "judged": "named",
            "message": "0.weight is all zeros but should not be: your "
            "penalty is a constant for autograd, so it does "
            "not train the critic: compute the gradient "
            "inside it with create_graph=True, and never "
            "detach it (no .detach(), .data, .item() or "
            "torch.no_grad() on the way).\n"
            "  (the same for 0.bias, 2.weight)\n"
            "[cause: tensor",
        },
        "g01-12-batch-norm": {
            "cause": "takes one norm of the whole [N, d] gradient "
            "(g.norm()) instead of one per sample (g.norm(dim=1)), "
            "then squares (norm - 1)",
            "answers": {
                "q2_answer": "def one_sided_penalty(critic, x_hat):\n"
                "    scores = critic(x_hat)\n"
                "    (g,) = "
                "torch.autograd.grad(scores.sum(), "
                "x_hat, create_graph=True)\n"
                "    return torch.relu(g.norm() - 1) ** 2\n"
            },
            "fails": {"q2_check": "one norm for the whole batch"},
            "judged": "named",
            "message": "the penalty's value is 0.01801x the expected value: "
            "one norm for the whole batch: take its 2-norm per "
            "sample (over dim=1, one per row), not of the whole "
            "[N, d] gradient.\n"
            "  expected: 0.4190532863140106\n"
            "  received: 0.007547155488282442\n"
            "[cause: "
            "tensor.fraction.one_norm_for_the_whole_batch]",
        },
        "g01-12-bytes-float32": {
            "cause": "per_sample_bytes assumes 4 bytes per element "
            "(float32) instead of each parameter's "
            "element_size()",
            "answers": {
                "q3_answer": "def per_sample_grads(model, "
                "loss_fn, x, y):\n"
                "    trainable = {n: p.detach() for "
                "n, p in model.named_parameters() "
                "if p.requires_grad}\n"
                "    fixed = {n: p.detach() for n, "
                "p in model.named_parameters() if "
                "not p.requires_grad}\n"
                "    "
                "fixed.update(dict(model.named_buffers()))\n"
                "\n"
                "    def loss_one(params, xi, yi):\n"
                "        out = "
                "functional_call(model, {**params, "
                "**fixed}, (xi.unsqueeze(0),))\n"
                "        return loss_fn(out, "
                "yi.unsqueeze(0))\n"
                "\n"
                "    return vmap(grad(loss_one), "
                "in_dims=(None, 0, 0))(trainable, "
                "x, y)\n"
                "\n"
                "\n"
                "def per_sample_bytes(model, "
                "batch_size):\n"
                "    return sum(batch_size * "
                "p.numel() * 4 for p in "
                "model.parameters() if "
                "p.requires_grad)\n"
            },
            "fails": {"q3_check": "take each tensor's size from its dtype: numel() * element_size()"},
            "judged": "named",
            "message": (
                "per_sample_bytes(model, batch_size) is wrong on a hidden test (a hidden test sho"
                "ws neither its inputs nor its values). The figure is too low by a whole fraction"
                ": each element counted at fewer bytes than its dtype has (4 B per element where "
                "float64 has 8?): take each tensor's size from its dtype: numel() * element_size("
                ").\n[cause: bytes.element_size.fewer_bytes_per_element_than_the]"
            ),
        },
        "g01-12-where-only": {
            "cause": "uses torch.where(r > 0, r**2 * log(r), 0) alone: the "
            "value is right, but the unselected branch's NaN "
            "gradient (log(0), norm at 0) still flows into v at "
            "rows of zeros",
            "answers": {
                "q5_answer": "def thin_plate(v):\n"
                "    r = v.norm(dim=1)\n"
                "    return torch.where(r > 0, r ** 2 "
                "* torch.log(r), "
                "torch.zeros_like(r))\n"
            },
            "fails": {"q5_check": "Masking a result does not mask its gradient"},
            "judged": "named",
            "message": "number of NaN or inf entries in the gradient is "
            "wrong: expected 0, got 2. Masking a result does not "
            "mask its gradient: torch.where's backward sends the "
            "unused branch a gradient of 0, and each Node of "
            "that branch combines that 0 with its own derivative "
            "or saved values, infinite at 0 (log's 1/r, the f",
        },
    },
    "ex13_compile": {
        "g01-13-int-no-break": {
            "cause": "predicts no graph break for h, where int() of a tensor "
            "needs its value in Python (data-dependent), which breaks "
            "the graph like .item()",
            "answers": {
                "q1_answer": "def predicted_breaks():\n"
                '    return {"a": 0, "b": 1, "c": 0, "d": '
                '0, "e": 1, "f": 2, "g": 1, "h": 0}\n'
            },
            "fails": {"q1_check": "int() or float() of a tensor"},
            "judged": "named",
            "message": "3 of 4 predicted break counts (breaks, not graphs) of "
            "e, f, g and h are right; rethink: h\n"
            "  - h: a tensor turned into a Python number (.item(), "
            "and int() or float() of a tensor, which call it) needs "
            "the tensor's value, which tracing does not have: the "
            "graph ends there (a hidden test: its inputs are ",
        },
        "g01-13-four-bytes": {
            "cause": "uses 4 bytes per element whatever the dtype (forgets "
            "float64 is 8 bytes); the counts of saved tensors are right",
            "answers": {
                "q2_answer": "def predict_saved_bytes(block, n, dtype):\n"
                "    size = 4\n"
                '    if block == "softplus_cubed":\n'
                '        return {"eager": 2 * n * size, '
                '"aot_eager": n * size}\n'
                '    return {"eager": 4 * n * size, '
                '"aot_eager": 2 * n * size}\n'
            },
            "fails": {"q2_check": "take each tensor's size from its dtype: numel() * element_size()"},
            "judged": "named",
            "message": (
                "predict_saved_bytes('softplus_cubed', 37, torch.float64)['eager'] is wrong on a "
                "hidden test (a hidden test shows neither its inputs nor its values). The figure "
                "is too low by a whole fraction: each element counted at fewer bytes than its dty"
                "pe has (4 B per element where float64 has 8?): take each tensor's size from its "
                "dtype: numel() * element_size().\n[cause: bytes.element_size.fewer_bytes_per_elem"
            ),
        },
        "g01-13-scale-tensor-grad": {
            "cause": "replaces the Python float scale by the tensor "
            "h.abs().max() without detaching it, so backward "
            "also differentiates through the scale: the "
            "gradients change",
            "answers": {
                "q3_answer": "def scaled_loss_one_graph(x, w):\n"
                "    h = torch.tanh(x @ w)\n"
                "    h = torch.where(h.sum() > 0, h "
                "+ 1, h)\n"
                "    scale = h.abs().max()\n"
                "    return (h / "
                "scale).pow(2).sum()\n"
            },
            "fails": {"q3_check": "A tensor scale needs detach()"},
            "judged": "named",
            "message": "x differs from the expected value (relative error "
            "2.1e-02 in max-norm; the test is elementwise, "
            "|received - expected| <= atol + rtol * |expected| "
            "with rtol=1.3e-06, atol=1e-05, and its worst "
            "element is off by 0.021 where 1e-05 is allowed). "
            "The loss is right but not its gradients: a "
            "gradient flows wh",
        },
        "g01-13-kept-print-item": {
            "cause": "keeps the logging line print(..., h.mean().item()): .item() (and print) still break the graph",
            "answers": {
                "q3_answer": "def scaled_loss_one_graph(x, w):\n"
                "    h = torch.tanh(x @ w)\n"
                '    print("mean activation", '
                "h.mean().item())\n"
                "    h = torch.where(h.sum() > 0, h + "
                "1, h)\n"
                "    scale = h.abs().max().detach()\n"
                "    return (h / "
                "scale).pow(2).sum()\n"
            },
            "fails": {"q3_check": "Unsupported Tensor.item() call"},
            "judged": "named",
            "message": "(graphs, breaks) reported by explain is wrong: "
            "expected (1, 0), got (2, 1). Dynamo's reasons: "
            "['Unsupported Tensor.item() call with "
            "capture_scalar_outputs=False']. A print, .item() "
            "(or float(), int()) and an if on a tensor's value "
            "each break the graph; select with torch.where, keep "
            "the scale a tenso",
        },
    },
    "ex14_distributed": {
        "g01-14-sum-not-mean": {
            "cause": "all-reduces the gradients (a sum over ranks) but "
            "does not divide by world_size: the gradient is "
            "world_size times the whole batch's",
            "answers": {
                "q1_answer": "def rank_grads(rank, world_size, "
                "model, x, y):\n"
                "    xs, ys = "
                "x.chunk(world_size)[rank], "
                "y.chunk(world_size)[rank]\n"
                "    "
                "nn.functional.mse_loss(model(xs), "
                "ys).backward()\n"
                "    for p in model.parameters():\n"
                "        dist.all_reduce(p.grad)\n"
                "    return {name: p.grad for name, p "
                "in model.named_parameters()}\n"
            },
            "fails": {"q1_check": "summed over the ranks instead of averaged"},
            "judged": "named",
            "message": "0.weight is exactly 2x the expected value: the "
            "gradients were summed over the ranks instead of "
            "averaged (divide by world_size, or let DDP average "
            "them)\n"
            "  (the same for 0.bias, 2.weight, 2.bias)\n"
            "[cause: "
            "tensor.multiple.the_gradients_were_summed_over_the]",
        },
        "g01-14-ddp-divide-again": {
            "cause": "wraps the model in DDP and also divides the loss "
            "by world_size (thinks DDP sums): DDP already "
            "averages, so the gradient is 1 / world_size of "
            "the whole batch's",
            "answers": {
                "q1_answer": "def rank_grads(rank, world_size, "
                "model, x, y):\n"
                "    ddp = DDP(model)\n"
                "    xs, ys = "
                "x.chunk(world_size)[rank], "
                "y.chunk(world_size)[rank]\n"
                "    "
                "(nn.functional.mse_loss(ddp(xs), "
                "ys) / world_size).backward()\n"
                "    return {name: p.grad for "
                "name, p in "
                "model.named_parameters()}\n"
            },
            "fails": {"q1_check": "DDP already averages the gradients"},
            "judged": "named",
            "message": (
                "0.weight is exactly 1/2 of the expected value: averaged over the ranks twice: DD"
                "P already averages the gradients (its all-reduce divides their sum by world_size"
                "), so do not also divide the loss by world_size.\n  (the same for 0.bias, 2.weigh"
                "t, 2.bias)\n[cause: tensor.fraction.averaged_over_the_ranks_t"
            ),
        },
        "g01-14-reverse-registration": {
            "cause": "returns the reverse of the registration "
            "order without running backward: right only "
            "when layers are used in registration order "
            "(and then bias/weight order may differ)",
            "answers": {
                "q3_answer": "def grad_ready_order(model, "
                "x):\n"
                "    return [name for name, _ "
                "in "
                "reversed(list(model.named_parameters()))]\n"
            },
            "fails": {"q3_check": "That is the reverse of the order of registration"},
            "judged": "named",
            "message": "order of the gradients is wrong. That is "
            "the reverse of the order of registration: "
            "it is backward's order only when the "
            "forward uses the parameters in the order "
            "they were registered, each once. (a hidden "
            "test: its inputs are not shown)\n"
            "[cause: value.that_is_the_reverse_of_the]",
        },
        "g01-14-hooks-left": {
            "cause": "records the order with "
            "register_post_accumulate_grad_hook but never removes "
            "the hooks (the task asks to remove them)",
            "answers": {
                "q3_answer": "def grad_ready_order(model, x):\n"
                "    order = []\n"
                "    names = {p: n for n, p in "
                "model.named_parameters()}\n"
                "    for p in model.parameters():\n"
                "        "
                "p.register_post_accumulate_grad_hook(lambda "
                "p: order.append(names[p]))\n"
                "    model(x).sum().backward()\n"
                "    return order\n"
            },
            "fails": {"q3_check": "Remove your hooks before returning"},
            "judged": "named",
            "message": "names your list gained in a later backward is wrong: "
            "expected 0, got 4. Remove your hooks before "
            "returning: they still record in every later "
            "backward.\n"
            "[cause: value.remove_your_hooks_before_returning]",
        },
    },
}

CORRECT = {
    "ex01_graph": {
        "g01-c01-stack-ids": {
            "cause": "count_nodes with an explicit stack and a set of seen Nodes, written as a while loop",
            "answers": {
                "q3_answer": "def count_nodes(t):\n"
                "    seen = set()\n"
                "    stack = [t.grad_fn] if t.grad_fn is not "
                "None else []\n"
                "    while stack:\n"
                "        node = stack.pop()\n"
                "        if node in seen:\n"
                "            continue\n"
                "        seen.add(node)\n"
                "        stack.extend(nxt for nxt, _ in "
                "node.next_functions if nxt is not None)\n"
                "    return len(seen)\n"
            },
        }
    },
    "ex02_leaves": {
        "g01-c02-parameter": {
            "cause": "make_param returns an nn.Parameter (a leaf that requires grad) of float64",
            "answers": {
                "q3_answer": "def make_param(*shape):\n"
                "    return "
                "torch.nn.Parameter(torch.randn(*shape, "
                "dtype=torch.float64) * 0.1)\n"
            },
        }
    },
    "ex04_accumulation": {
        "g01-c04-sum-reduction": {
            "cause": "accumulate with reduction='sum' per micro-batch divided by N (and y.numel() for the mean)",
            "answers": {
                "q2_answer": "def accumulate(model, x, y, "
                "micro_batch):\n"
                "    total = y.numel()\n"
                "    for start in range(0, len(x), "
                "micro_batch):\n"
                "        xb, yb = x[start:start + "
                "micro_batch], y[start:start + "
                "micro_batch]\n"
                "        loss = "
                "F.mse_loss(model(xb), yb, "
                'reduction="sum") / total\n'
                "        loss.backward()\n"
            },
        }
    },
    "ex05_inplace": {
        "g01-c05-cat": {
            "cause": "gated_fixed builds the gate out of place with torch.cat (first "
            "column of ones, the rest 2 * sigmoid)",
            "answers": {
                "q3_answer": "def gated_fixed(x, w, v):\n"
                "    h = x @ w\n"
                "    s = 2 * torch.sigmoid(h)\n"
                "    g = torch.cat([torch.ones_like(s[:, :1]), "
                "s[:, 1:]], dim=1)\n"
                "    out = g * torch.tanh(h)\n"
                "    return ((out @ v) ** 2).mean()\n"
            },
        }
    },
    "ex06_grad_modes": {
        "g01-c06-lerp": {
            "cause": "soft_update with Tensor.lerp_ under torch.no_grad()",
            "answers": {
                "q5_answer": "@torch.no_grad()\n"
                "def soft_update(target, online, tau):\n"
                "    for pt, po in zip(target.parameters(), "
                "online.parameters()):\n"
                "        pt.lerp_(po, tau)\n"
            },
        }
    },
    "ex09_functions": {
        "g01-c09-where-backward": {
            "cause": "LeanLeakyReLU with torch.where in forward and backward, the mask as the only saved tensor",
            "answers": {
                "q2_answer": "class LeanLeakyReLU(Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, slope):\n"
                "        mask = x > 0\n"
                "        "
                "ctx.save_for_backward(mask)\n"
                "        ctx.slope = slope\n"
                "        return torch.where(mask, x, "
                "x * slope)\n"
                "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad):\n"
                "        (mask,) = "
                "ctx.saved_tensors\n"
                "        return torch.where(mask, "
                "grad, grad * ctx.slope), None\n"
            },
        }
    },
    "ex12_higher_order": {
        "g01-c12-half-log-r2": {
            "cause": "thin_plate as 0.5 * r2 * log(r2) on the squared "
            "norm, with a safe r2 (ones at zero rows) inside a "
            "double where",
            "answers": {
                "q5_answer": "def thin_plate(v):\n"
                "    r2 = (v * v).sum(dim=1)\n"
                "    zero = r2 == 0\n"
                "    safe = torch.where(zero, "
                "torch.ones_like(r2), r2)\n"
                "    return torch.where(zero, "
                "torch.zeros_like(r2), 0.5 * safe * "
                "torch.log(safe))\n"
            },
        }
    },
    "ex13_compile": {
        "g01-c13-bool-add": {
            "cause": "the branch as h + (h.sum() > 0).to(h.dtype), the scale as torch.amax(h.abs()).detach()",
            "answers": {
                "q3_answer": "def scaled_loss_one_graph(x, w):\n"
                "    h = torch.tanh(x @ w)\n"
                "    h = h + (h.sum() > 0).to(h.dtype)\n"
                "    scale = torch.amax(h.abs()).detach()\n"
                "    return (h / scale).pow(2).sum()\n"
            },
        }
    },
    "ex14_distributed": {
        "g01-c14-flat-buffer": {
            "cause": "averages all gradients with one all_reduce of a flat buffer (torch.cat), then copies them back",
            "answers": {
                "q1_answer": "def rank_grads(rank, world_size, "
                "model, x, y):\n"
                "    "
                "nn.functional.mse_loss(model(x.chunk(world_size)[rank]), "
                "y.chunk(world_size)[rank]).backward()\n"
                "    params = [p for p in "
                "model.parameters() if p.grad is not "
                "None]\n"
                "    flat = "
                "torch.cat([p.grad.reshape(-1) for p "
                "in params])\n"
                "    dist.all_reduce(flat)\n"
                "    flat /= world_size\n"
                "    offset = 0\n"
                "    for p in params:\n"
                "        k = p.numel()\n"
                "        "
                "p.grad.copy_(flat[offset:offset + "
                "k].view_as(p.grad))\n"
                "        offset += k\n"
                "    return {name: p.grad for name, p "
                "in model.named_parameters()}\n"
            },
        }
    },
}
