"""Do the explorers show what the lessons say they show?"""
import ipywidgets as widgets

from autograder.explore import leaf_explorer, leaf_facts, run_steps, step_explorer

LINES = ["y = x * 2", "z = y.exp()", "loss = z.sum()"]
SETUP = "x = torch.ones(2, requires_grad=True)"


def test_graph_grows_one_statement_at_a_time():
    """Does each extra statement add its Node to the traced graph?"""
    sizes = [len(run_steps(LINES[:k], k, ["y", "z", "loss"][k - 1], SETUP)[1]) for k in (1, 2, 3)]
    assert sizes == [2, 3, 4]


def test_unknown_variable_gives_empty_graph():
    """Is a variable not defined yet shown as an empty graph, not an error?"""
    assert len(run_steps(LINES, 1, "loss", SETUP)[1]) == 0


def test_leaf_facts_default():
    """By default, is x the only tensor with a .grad, and y, z non-leaves?"""
    rows = {r["tensor"]: r for r in leaf_facts()}
    assert rows["x"]["is_leaf"] and rows["x"]["grad"] == [8.0, 16.0, 24.0]
    assert not rows["y"]["is_leaf"] and rows["y"]["grad"] is None and rows["y"]["grad_fn"] == "MulBackward0"


def test_leaf_facts_retain_grad_and_no_grad():
    """Does retain_grad give y a .grad, and no_grad make y a leaf with no grad_fn?"""
    assert {r["tensor"]: r for r in leaf_facts(retain_grad=True)}["y"]["grad"] == [4.0, 8.0, 12.0]
    y = {r["tensor"]: r for r in leaf_facts(no_grad=True)}["y"]
    assert y["is_leaf"] and not y["requires_grad"] and y["grad_fn"] is None


def test_leaf_facts_detach():
    """Does detach() cut x off: x.grad stays None?"""
    assert {r["tensor"]: r for r in leaf_facts(detach=True)}["x"]["grad"] is None


def test_widgets_build():
    """Do both explorers build as widgets without a running frontend?"""
    assert isinstance(step_explorer(LINES, "loss", SETUP), widgets.Widget)
    assert isinstance(leaf_explorer(), widgets.Widget)


def test_explorer_text_says_to_run_the_cell():
    """Before its cell runs in a live kernel, a notebook shows a widget's plain text: does an
    explorer's say what it is and to run the cell (not VBox(children=...)), within the 110
    characters ipywidgets keeps?"""
    for explorer, name in ((step_explorer(LINES, "loss", SETUP), "step_explorer"), (leaf_explorer(), "leaf_explorer")):
        text = explorer._repr_mimebundle_()["text/plain"]
        assert text == f"Interactive explorer ({name}): run this cell to use it."
        assert "application/vnd.jupyter.widget-view+json" in explorer._repr_mimebundle_()


def test_backward_frees_saved_tensors_not_nodes():
    """Does backward free what sigmoid saved (marked freed, 0 alive bytes) but keep every Node,
    so that a second backward fails?"""
    from autograder.explore_backward import backward_facts
    f = backward_facts("x.sigmoid()")
    assert f["saved before"] == ["SigmoidBackward0.result: float32[3] 12 B v0"]
    assert f["saved after"] == ["SigmoidBackward0.result: freed"]
    assert f["nodes before"] == f["nodes after"] == 3
    assert (f["alive bytes after forward"], f["alive bytes after backward"]) == (12, 0)
    assert "backward through the graph a second time" in f["second backward"]


def test_second_backward_depends_on_what_was_saved():
    """Is a second backward fine for an addition (nothing saved) and with retain_graph, and does
    x * 2 (a saved Python number, 0 bytes) fail all the same?"""
    from autograder.explore_backward import backward_facts
    assert backward_facts("x + 1")["second backward"] == "ok"
    assert backward_facts("x + 1")["x.grad"] == [2.0, 2.0, 2.0]
    retained = backward_facts("x ** 2", retain_graph=True)
    assert retained["second backward"] == "ok" and retained["alive bytes after backward"] == 12
    assert retained["x.grad"] == [4.0, 8.0, 12.0]
    scalar = backward_facts("x * 2")
    assert scalar["alive bytes after forward"] == 0 and scalar["second backward"] != "ok"


def test_accumulation_matches_full_batch_only_when_scaled_right():
    """Do equal micro-batches divided by their count match the full batch, undivided ones give
    k times it, and an uneven split need weighting by size?"""
    from autograder.explore_backward import accumulation_facts
    assert accumulation_facts(micro_batch=3, scale="count")["diagnosis"] == "ok"
    undivided = accumulation_facts(micro_batch=3, scale="none")
    assert undivided["diagnosis"] == "multiple" and undivided["factor"] == 4.0
    assert accumulation_facts(micro_batch=5, scale="count")["diagnosis"] == "mismatch"
    assert accumulation_facts(micro_batch=5, scale="size")["diagnosis"] == "ok"
    assert accumulation_facts(reduction="sum", scale="none")["diagnosis"] == "ok"
    assert accumulation_facts(batchnorm=True)["diagnosis"] == "mismatch"


def test_accumulation_peak_is_one_micro_batch():
    """Is the peak of accumulation the saved bytes of one micro-batch (float64: x, tanh output,
    prediction and target), a quarter of the full batch's for four micro-batches?"""
    from autograder.explore_backward import accumulation_facts
    f = accumulation_facts(micro_batch=3)
    assert f["peak bytes accumulated"] == 3 * (4 + 8 + 1 + 1) * 8
    assert f["peak bytes full batch"] == 4 * f["peak bytes accumulated"]


def test_accumulation_reports_batchnorm_error():
    """Is BatchNorm with one-sample micro-batches reported as an error, not raised?"""
    from autograder.explore_backward import accumulation_facts, accumulation_table
    assert "more than 1 value per channel" in accumulation_facts(micro_batch=1, batchnorm=True)["error"]
    assert "error:" in accumulation_table(micro_batch=1, batchnorm=True)


def test_chapter_3_and_4_widgets_build():
    """Do the backward and accumulation explorers build without a running frontend?"""
    from autograder.explore_backward import accumulation_explorer, backward_explorer
    assert isinstance(backward_explorer(), widgets.Widget)
    assert isinstance(accumulation_explorer(), widgets.Widget)


def test_inplace_facts_saved_input_vs_saved_output():
    """Is `y += 1` fine after ops that save their input or a number, and an error after ops that
    save their output (the seed's claim that `y = x * 2; y += 1` raises is false)?"""
    from autograder.explore_inplace import inplace_facts
    assert inplace_facts("y = x * 2", "y += 1")["verdict"] == "right"
    assert inplace_facts("y = x * 2", "(none)")["saved"] == ["other = 2 (a Python number)"]
    assert inplace_facts("y = x.sin()", "y += 1")["saved"] == ["self = x"]
    sig = inplace_facts("y = x.sigmoid()", "y += 1")
    assert sig["saved"] == ["result = y"] and sig["outcome"] == "modified_inplace"
    assert sig["version"] == 1 and sig["grad"] is None and sig["verdict"] == "raises"


def test_inplace_facts_detach_shares_the_counter_data_does_not():
    """Is y.detach().mul_(2) caught (shared version counter) while y.data.mul_(2) gives silently
    wrong gradients and leaves y._version at 0?"""
    from autograder.explore_inplace import inplace_facts, inplace_table
    assert inplace_facts("y = x.sigmoid()", "y.detach().mul_(2)")["verdict"] == "raises"
    data = inplace_facts("y = x.sigmoid()", "y.data.mul_(2)")
    assert data["version"] == 0 and data["outcome"] == "ok" and data["verdict"] == "silently wrong"
    assert data["grad"] != data["expected"]
    assert "silently wrong" in inplace_table("y = x.sigmoid()")


def test_grad_mode_facts():
    """Do no_grad and inference_mode record nothing and save 0 bytes, does only an inference
    output refuse to be saved later, and does eval() still record a graph?"""
    from autograder.explore_grad_modes import grad_mode_facts, grad_mode_table
    grad = grad_mode_facts("grad mode")
    assert grad["requires_grad"] and grad["grad_fn"] == "AddmmBackward0" and grad["saved_bytes"] > 0
    assert not grad["repeatable"] and grad["backward"] == grad["reuse"] == "ok"
    for mode in ("no_grad", "inference_mode"):
        f = grad_mode_facts(mode)
        assert f["saved_bytes"] == 0 and f["grad_fn"] is None and f["backward"] == "not_built"
    assert grad_mode_facts("no_grad")["reuse"] == "ok"
    assert grad_mode_facts("inference_mode")["reuse"] == "inference_tensor"
    evaluated = grad_mode_facts("grad mode", train=False)
    assert evaluated["grad_fn"] == "AddmmBackward0" and evaluated["repeatable"]
    assert 0 < evaluated["saved_bytes"] < grad["saved_bytes"]       # no dropout mask to save
    detached = grad_mode_facts("grad mode", detach=True)
    assert detached["saved_bytes"] == grad["saved_bytes"] and detached["backward"] == "not_built"
    assert "inference_tensor" in grad_mode_table()


def test_chapter_5_and_6_widgets_build():
    """Do the in-place and grad-mode explorers build without a running frontend?"""
    from autograder.explore_grad_modes import grad_mode_explorer
    from autograder.explore_inplace import inplace_explorer
    assert isinstance(inplace_explorer(), widgets.Widget)
    assert isinstance(grad_mode_explorer(), widgets.Widget)
