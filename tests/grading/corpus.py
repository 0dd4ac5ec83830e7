"""Wrong answers that are NOT among the typical mistakes (``autograder/grading/mistakes``), and correct
answers written in unusual ways: a corpus to keep the grader's feedback honest.

``WRONG = {exercise: {student_id: {"answers": {answer grade_id: source}, "fails": {test grade_id: phrase},
"cause": what the learner actually did}}}``, as the typical mistakes, where each phrase is the words of
the feedback that name the actual cause (not merely that the value is wrong); an entry whose feedback does not
fully name it says so in ``"named"`` (how far it does), and its phrase is then the nearest words it has.
``CORRECT = {exercise: {student_id: {"answers": {...}}}}``: each must get full marks.
Used by ``tests/grading/test_corpus.py``.
"""

WRONG = {
    "ex01_graph": {
        "c01-rows-written-as-five": {
            "cause": "writes the visible N = 5 as a number for the mean's 1/N: right on the visible check, off by a "
            "constant factor on hidden ones (the hidden message must say so without their N)",
            "answers": {
                "q2_answer": """def grad_wb(w, b, x, y):
    p = torch.tanh(x @ w + b)
    dL_dz = 2 * (p - y) / 5 * (1 - p ** 2)
    return {"w": x.T @ dL_dz, "b": dL_dz.sum()}
"""
            },
            "fails": {"q2_check": "a constant factor, the same for every element, but no whole number"},
        },
        "c01-kinds-of-condition": {
            "cause": "counts the Nodes of the loop condition h.abs().max() as part of the result's graph, for x_a",
            "answers": {
                "q1_answer": """def predicted_counts():
    return {"x_a": {"SumBackward0": 1, "MulBackward0": 4, "TanhBackward0": 1, "AddBackward0": 1,
                    "AccumulateGrad": 2, "AbsBackward0": 3},
            "x_b": {"SumBackward0": 1, "MulBackward0": 2, "TanhBackward0": 1, "AddBackward0": 1,
                    "AccumulateGrad": 2}}
"""
            },
            "fails": {"q1_check": "is it reachable from the result"},
        },
        "c01-loop-count": {
            "cause": "runs the while loop once too often for x_a",
            "answers": {
                "q1_answer": """def predicted_counts():
    return {"x_a": {"SumBackward0": 1, "MulBackward0": 5, "TanhBackward0": 1, "AddBackward0": 1,
                    "AccumulateGrad": 2},
            "x_b": {"SumBackward0": 1, "MulBackward0": 2, "TanhBackward0": 1, "AddBackward0": 1,
                    "AccumulateGrad": 2}}
"""
            },
            "fails": {"q1_check": "pass of the while loop"},
        },
        "c01-walk-index": {
            "cause": "a helper reads next_functions[1] of every Node, which fails for Nodes with one input",
            "answers": {
                "q3_answer": """def children(node):
    return [node.next_functions[0][0], node.next_functions[1][0]]


def count_nodes(t):
    seen, todo = set(), [t.grad_fn] if t.grad_fn is not None else []
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        todo.extend(children(node))
    return len(seen)
"""
            },
            "fails": {"q3_check": "raised in children(), line 2"},
        },
    },
    "ex02_leaves": {
        "c02-retain-ignored": {
            "cause": "predicts h.grad to be None, as if retain_grad() did not keep a non-leaf's gradient",
            "answers": {
                "q1_answer": """def predictions():
    return {
        "is_leaf":       {"w": True,  "v": False, "u": True,  "h": False, "g": False, "s": True,  "k": True},
        "requires_grad": {"w": True,  "v": True,  "u": True,  "h": True,  "g": True,  "s": False, "k": False},
        "grad is None":  {"w": False, "v": True,  "u": True,  "h": True,  "g": True,  "s": True,  "k": True},
    }
"""
            },
            "fails": {"q1_check": "non-leaves that asked to retain their gradient"},
        },
        "c02-retain-after-backward": {
            "cause": "calls retain_grad() after backward(): h.grad is None and .detach() on it raises",
            "answers": {
                "q2_answer": """def grad_of_hidden(x, w1, w2):
    h, loss = forward(x, w1, w2)
    loss.backward()
    h.retain_grad()
    return h.grad.detach()
"""
            },
            "fails": {"q2_check": "line 5: return h.grad.detach()"},
        },
        "c02-detach-leaf": {
            "cause": "thinks a detached tensor still requires grad",
            "answers": {
                "q1_answer": """def predictions():
    return {
        "is_leaf":       {"w": True,  "v": False, "u": True,  "h": False, "g": False, "s": True,  "k": True},
        "requires_grad": {"w": True,  "v": True,  "u": True,  "h": True,  "g": True,  "s": False, "k": True},
        "grad is None":  {"w": False, "v": True,  "u": True,  "h": False, "g": True,  "s": True,  "k": True},
    }
"""
            },
            "fails": {"q1_check": "k is g.detach()"},
        },
    },
    "ex03_backward": {
        "h-03-loop-retain-all": {
            "cause": "thinks retain_graph=True keeps every step's graph alive; each new loss replaces the old, so "
            "one graph is alive after the loop (the message must not say backward freed it)",
            "answers": {
                "q4_answer": """def loop_bytes(n, d, h, steps):
    one_step = 4 * n * (d + h + 1)   # Linear 1 input, ReLU output (= Linear 2 input), out - y for the square
    return {"peak without retain_graph": one_step,
            "alive after the loop with retain_graph": steps * one_step,
            "peak with retain_graph": steps * one_step}
"""
            },
            "fails": {"q4_check": "with retain_graph=True, only when nothing references the graph any more"},
        },
        "c03-steps-minus-one": {
            "cause": "takes the retained peak to be steps - 1 graphs (right for 3 steps only): a hidden test's "
            "message names the steps' graphs too few, without its figures",
            "answers": {
                "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * d + n * h + n)
    return {"peak without retain_graph": graph, "alive after the loop with retain_graph": graph,
            "peak with retain_graph": (steps - 1) * graph}
"""
            },
            "fails": {"q4_check": "Which graph is still alive at that moment (retain_graph=True"},
        },
        "c03-summed-two-forwards": {
            "cause": "grads_summed computes each loss from its own forward, then backwards their sum",
            "answers": {
                "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    loss1 = losses(trunk, head1, head2, x, y1, y2)[0]
    loss2 = losses(trunk, head1, head2, x, y1, y2)[1]
    (loss1 + loss2).backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    loss1.backward(retain_graph=True)
    loss2.backward()
    return {name: p.grad.detach().clone() for name, p in named_parameters(trunk, head1, head2).items()}
"""
            },
            "fails": {"q2_check": "grads_summed ran the trunk's forward more than once"},
        },
        "c03-constant-not-saved": {
            "cause": "thinks a product with a constant (no grad) saves nothing",
            "answers": {
                "q1_answer": """def second_backward():
    return {"A": "ok", "B": "ok", "C": "ok", "D": "error",
            "E": "ok", "F": "error", "G": "error", "H": "ok"}
"""
            },
            "fails": {"q1_check": "MulBackward0 in its graph keeps something"},
        },
        "c03-previous-graph-at-every-peak": {
            "cause": "counts the previous step's graph at the peak even without retain_graph",
            "answers": {
                "q4_answer": """def loop_bytes(n, d, h, steps):
    graph = 4 * (n * d + n * h + n)
    return {"peak without retain_graph": 2 * graph,
            "alive after the loop with retain_graph": graph,
            "peak with retain_graph": 2 * graph}
"""
            },
            "fails": {"q4_check": "one step's graph counted too many"},
        },
        "c03-grad-not-scalar": {
            "cause": "differentiates the non-scalar f(x) without summing: autograd.grad needs grad_outputs",
            "answers": {
                "q3_answer": """def derivatives(f, x):
    x = x.detach().requires_grad_()
    (first,) = torch.autograd.grad(f(x), x, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), x)
    return first.detach(), second.detach()
"""
            },
            "fails": {"q3_check": "line 3: (first,) = torch.autograd.grad(f(x), x, create_graph=True)"},
        },
    },
    "ex04_accumulation": {
        "h-04-mean-micro-batch": {
            "cause": "takes the accumulation peak on the mean micro-batch size (n // number of micro-batches)",
            "answers": {
                "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + 2)
    k = -(-n // micro_batch)
    return {"full batch peak": per_sample * n, "accumulation peak": per_sample * (n // k)}
"""
            },
            "fails": {"q3_check": "the peak is the largest micro-batch's"},
        },
        "c04-retain-graph": {
            "cause": "backwards each micro-batch with retain_graph=True: its graph stays alive into the next forward",
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    n = len(x)
    for xb, yb in zip(x.split(micro_batch), y.split(micro_batch)):
        loss = F.mse_loss(model(xb), yb) * (len(xb) / n)
        loss.backward(retain_graph=True)
"""
            },
            "fails": {"q2_check": "backward(retain_graph=True) keeps the saved tensors"},
        },
        "c04-loss-counted": {
            "cause": "counts the loss itself among the saved tensors",
            "answers": {
                "q3_answer": """def accumulation_bytes(n, micro_batch, d, h):
    per_sample = 4 * (d + h + 1 + 1)
    return {"full batch peak": n * per_sample + 4, "accumulation peak": min(micro_batch, n) * per_sample + 4}
"""
            },
            "fails": {"q3_check": "the loss (a 0-dim tensor) counted, though no Node saves it"},
        },
        "c04-logged-follows": {
            "cause": "thinks the logged .grad follows w.grad to its new tensor after zero_grad()",
            "answers": {
                "q1_answer": """def predicted_grads():
    return {"a": [3.0, 3.0], "b": [5.0, -1.0], "c": [0.0, 0.0], "d": [3.0, 12.0],
            "e": None, "f": [4.0, 4.0], "g": [4.0, 4.0]}
"""
            },
            "fails": {"q1_check": "logged is the tensor object .grad was when it was logged"},
        },
    },
    "ex05_inplace": {
        "h-05-clone-free": {
            "cause": "thinks the clone costs nothing saved: it is a new storage, and the sigmoid's output stays saved",
            "answers": {
                "q4_answer": """def saved_bytes(n, d, h):
    same = 4 * n * d + 3 * 4 * n * h + 4 * n
    return {"before": same, "after": same}
"""
            },
            "fails": {"q4_check": "SigmoidBackward0 still saves its own output"},
        },
        "c05-product-shares-counter": {
            "cause": "thinks f = a * 1 shares a's version counter",
            "answers": {
                "q1_answer": """def versions():
    return {"a": 4, "b": 4, "c": 1, "d": 4, "e": 1, "f": 4, "g": 1}
"""
            },
            "fails": {"q1_check": "f = a * 1 is an out-of-place result"},
        },
        "c05-sin-saves-output": {
            "cause": "thinks sin saves its output, so y *= 2 would break its backward",
            "answers": {
                "q2_answer": """def classify():
    return {"A": "fine", "B": "raises", "C": "raises", "D": "raises", "E": "raises", "F": "fine",
            "G": "raises", "H": "fine", "I": "raises", "J": "fine"}
"""
            },
            "fails": {"q2_check": "SinBackward0 saves self"},
        },
        "c05-h-counted": {
            "cause": "counts h = x @ w among the saved tensors (sigmoid and tanh save their outputs, not h)",
            "answers": {
                "q4_answer": """def saved_bytes(n, d, h):
    before = 4 * (n * d + 4 * n * h + n)
    return {"before": before, "after": before + 4 * n * h}
"""
            },
            "fails": {"q4_check": "h = x @ w (sigmoid and tanh save their outputs) counted, though no Node saves it"},
        },
    },
    "ex06_grad_modes": {
        "c06-rebind": {
            "cause": "soft_update rebinds the loop variable: the module's parameters never change",
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    with torch.no_grad():
        for p_target, p_online in zip(target.parameters(), online.parameters()):
            p_target = (1 - tau) * p_target + tau * p_online
"""
            },
            "fails": {"q5_check": "left every target parameter as it was before the call"},
        },
        "c06-enable-inside-no-grad": {
            "cause": "thinks enable_grad() cannot switch recording back on inside no_grad()",
            "answers": {
                "q1_answer": """def predictions():
    return {"a": True, "b": False, "c": True, "layer.weight": True, "d": False, "e": False, "f": True,
            "g": False, "h": False, "k": True}
"""
            },
            "fails": {"q1_check": "d = w * 2 runs inside enable_grad()"},
        },
        "c06-head-detached-too": {
            "cause": "runs the backbone in grad mode and detaches its output: the backbone saves its activations",
            "answers": {
                "q3_answer": """def head_loss(backbone, head, x, target):
    features = backbone(x)
    return F.cross_entropy(head(features.detach()), target)
"""
            },
            "fails": {"q3_check": "saved its activations for backward while it ran"},
        },
    },
    "ex07_memory": {
        "c07-detached-log": {
            "cause": "logs detached loss tensors (no graph), not Python floats",
            "answers": {
                "q2_answer": """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            val_loss = F.mse_loss(model(val_x), val_y)
        log.append((loss.detach(), val_loss))
    return log
"""
            },
            "fails": {"q2_check": "these tensors hold no graph"},
        },
        "c07-layer-outputs": {
            "cause": "counts every layer's output, including the Linear outputs that no Node saves",
            "answers": {
                "q1_answer": """def saved_bytes(n, d, h1, h2):
    return 4 * (n * d + 2 * n * h1 + 2 * n * h2 + 2 * n)
"""
            },
            "fails": {"q1_check": "possibilities"},
        },
        "c07-retain-frees": {
            "cause": "thinks the retained graph of the last step is freed after the loop in C",
            "answers": {
                "q3_answer": """def steps_alive():
    return {"A": 0, "B": 4, "C": 0, "D": 4, "E": 4, "F": 0, "G": 0}
"""
            },
            "fails": {"q3_check": "which graph is still referenced after the loop"},
        },
    },
    "ex08_checkpoint": {
        "c08-default-like-b": {
            "cause": "thinks leaving use_reentrant out gives the non-reentrant variant's gradients",
            "answers": {
                "q3_answer": """def predictions():
    return {
        "A": {"h.requires_grad": False, "block grad is None": True, "head grad is None": False},
        "B": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
        "C": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
        "D": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
    }
"""
            },
            "fails": {"q3_check": "use_reentrant left out: which variant runs by default"},
        },
        "c08-c-like-a": {
            "cause": "thinks an input that requires grad does not help the reentrant checkpoint",
            "answers": {
                "q3_answer": """def predictions():
    return {
        "A": {"h.requires_grad": False, "block grad is None": True, "head grad is None": False},
        "B": {"h.requires_grad": True, "block grad is None": False, "head grad is None": False},
        "C": {"h.requires_grad": False, "block grad is None": True, "head grad is None": False},
        "D": {"h.requires_grad": False, "block grad is None": True, "head grad is None": False},
    }
"""
            },
            "fails": {"q3_check": "a reentrant checkpoint whose input requires grad"},
        },
    },
}

CORRECT = {
    "ex01_graph": {
        "u01-recursive": {
            "answers": {
                "q3_answer": """def count_nodes(t):
    def visit(node, seen):
        if node is not None and node not in seen:
            seen.add(node)
            for child, _ in node.next_functions:
                visit(child, seen)
        return seen
    return len(visit(t.grad_fn, set()))
"""
            }
        }
    },
    "ex02_leaves": {
        "u02-hook": {
            "answers": {
                "q2_answer": """def grad_of_hidden(x, w1, w2):
    caught = {}
    h, loss = forward(x, w1, w2)
    h.register_hook(lambda g: caught.setdefault("h", g))
    loss.backward()
    return caught["h"].detach()
"""
            }
        }
    },
    "ex03_backward": {
        "u03-autograd-grad-into-grad": {
            "answers": {
                "q2_answer": """def grads_summed(trunk, head1, head2, x, y1, y2):
    params = named_parameters(trunk, head1, head2)
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    return dict(zip(params, torch.autograd.grad(loss1 + loss2, list(params.values()))))


def grads_two_passes(trunk, head1, head2, x, y1, y2):
    params = named_parameters(trunk, head1, head2)
    loss1, loss2 = losses(trunk, head1, head2, x, y1, y2)
    first = torch.autograd.grad(loss1, list(params.values()), retain_graph=True, allow_unused=True)
    second = torch.autograd.grad(loss2, list(params.values()), allow_unused=True)
    return {name: (0 if a is None else a) + (0 if b is None else b) for name, a, b in zip(params, first, second)}
"""
            }
        }
    },
    "ex04_accumulation": {
        "u04-sum-then-divide": {
            "answers": {
                "q2_answer": """def accumulate(model, x, y, micro_batch):
    for start in range(0, len(x), micro_batch):
        xb, yb = x[start:start + micro_batch], y[start:start + micro_batch]
        (F.mse_loss(model(xb), yb, reduction="sum") / (len(x) * y.shape[1])).backward()
"""
            }
        }
    },
    "ex05_inplace": {
        "u05-out-of-place-gate": {
            "answers": {
                "q3_answer": """def gated_fixed(x, w, v):
    h = x @ w
    g = torch.sigmoid(h) * 2
    g = torch.where(torch.arange(g.shape[1]) == 0, torch.ones_like(g), g)
    return (((g * torch.tanh(h)) @ v) ** 2).mean()
"""
            }
        }
    },
    "ex06_grad_modes": {
        "u06-lerp": {
            "answers": {
                "q5_answer": """def soft_update(target, online, tau):
    with torch.no_grad():
        for p_target, p_online in zip(target.parameters(), online.parameters()):
            p_target.lerp_(p_online, tau)
"""
            }
        }
    },
    "ex07_memory": {
        "u07-float-cast": {
            "answers": {
                "q2_answer": """def train_and_log(model, opt, batches, val_x, val_y):
    log = []
    for x, y in batches:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        with torch.inference_mode():
            val = float(F.mse_loss(model(val_x), val_y))
        log.append((float(loss.detach()), val))
    return log
"""
            }
        }
    },
    "ex08_checkpoint": {
        "u08-per-block": {
            "answers": {
                "q3_answer": """def predictions():
    facts = lambda grads_flow: {"h.requires_grad": grads_flow, "block grad is None": not grads_flow,
                                "head grad is None": False}
    return {variant: facts(variant in "BC") for variant in "ABCD"}
"""
            }
        }
    },
}

from tests.grading.corpus_9_14 import CORRECT as _CORRECT_9_14  # noqa: E402 -- chapters 9 to 14, kept apart
from tests.grading.corpus_9_14 import WRONG as _WRONG_9_14  # noqa: E402

WRONG.update(_WRONG_9_14)
CORRECT.update(_CORRECT_9_14)

# A held-out set written by a tutor from the lessons and exercises only (issue 25), kept apart with its judgements.
from autograder.grading.mistakes import MISTAKES as _MISTAKES  # noqa: E402
from tests.grading.corpus_fresh import CORRECT as _CORRECT_FRESH  # noqa: E402
from tests.grading.corpus_fresh import WRONG as _WRONG_FRESH  # noqa: E402

# 12 of its wrong answers turned out to be, character for character, typical mistakes (a prediction dict
# with one value flipped, the one-line slip of a solution): those are tested as typical mistakes already.
_TYPICAL = {source for cases in _MISTAKES.values() for case in cases.values() for source in case["answers"].values()}
for _mine, _fresh in ((WRONG, _WRONG_FRESH), (CORRECT, _CORRECT_FRESH)):
    for _exercise, _cases in _fresh.items():
        _new = {sid: case for sid, case in _cases.items() if not set(case["answers"].values()) & _TYPICAL}
        _mine.setdefault(_exercise, {}).update(_new)
