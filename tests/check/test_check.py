"""Do the learner-facing checks pass, fail and explain as a learner needs?"""

import re
import warnings

import pytest
import torch

from autograder import check


def test_passing_check_prints_ok(capsys):
    """Does a correct value print one OK line?"""
    check.tensor(torch.tensor([1.0]), torch.tensor([1.0]), "x.grad")
    assert capsys.readouterr().out == "OK x.grad\n"


def test_failing_check_shows_diagnosis_and_values():
    """Does a 2x gradient fail with the accumulation hint and both values?"""
    with pytest.raises(check.CheckFailed, match="exactly 2x") as info:
        check.tensor(torch.tensor([2.0, 4.0]), torch.tensor([1.0, 2.0]), "x.grad")
    assert "expected: [1.0, 2.0]" in str(info.value) and "received: [2.0, 4.0]" in str(info.value)


def test_hidden_checks_do_not_show_values():
    """With show_values=False, are the expected values kept out of the message?"""
    with pytest.raises(check.CheckFailed) as info:
        check.tensor(torch.tensor([2.0, 4.0]), torch.tensor([1.0, 2.0]), "x.grad", show_values=False)
    assert "expected:" not in str(info.value)


def test_unanswered_question_is_named():
    """Does a stub that raises NotImplementedError fail as 'not answered yet'?"""

    def answer():
        raise NotImplementedError()

    with pytest.raises(check.CheckFailed, match="not answered yet"):
        check.call(answer)


def test_learner_exception_becomes_one_line():
    """Is an exception in the learner's code reported by type and first line only?"""

    def answer():
        raise RuntimeError("element 0 of tensors does not require grad\nmore")

    with pytest.raises(check.CheckFailed, match="answer raised RuntimeError: element 0") as info:
        check.call(answer)
    assert "\nmore" not in str(info.value)  # the error's second line (its source line has "\\nmore")


def test_learner_exception_names_the_line_that_raised():
    """Does an exception raised deep in the learner's own helper name that helper's line, not the caller's?"""

    def helper(items):
        return items[3]

    def answer():
        return helper([1, 2])

    with pytest.raises(check.CheckFailed, match="answer raised IndexError") as info:
        check.call(answer)
    assert "raised in helper(), line" in str(info.value) and "return items[3]" in str(info.value)


def test_exception_inside_torch_names_the_learners_line():
    """Does an error raised inside PyTorch name the learner's line that called it, not PyTorch's?"""

    def answer():
        return torch.ones(2) @ torch.ones(3)

    with pytest.raises(check.CheckFailed) as info:
        check.call(answer)
    assert "raised in answer(), line" in str(info.value) and "torch.ones(2) @ torch.ones(3)" in str(info.value)


def test_prediction_reasons_only_for_wrong_entries():
    """Does check.predictions add the reason of each wrong entry, and only of the wrong ones?"""
    reasons = {"a": "a's Node saves its input", "b": "b is a view"}
    with pytest.raises(check.CheckFailed) as info:
        check.predictions({"a": 1, "b": 2}, {"a": 0, "b": 2}, reasons=reasons)
    assert "rethink: a" in str(info.value) and "a's Node saves its input" in str(info.value)
    assert "b is a view" not in str(info.value)


def test_value_hint_says_what_the_run_did():
    """Does a hint keyed by the received value show only the sentence for what the learner's run did?"""
    hint = {"kept": "the graph was kept", "otherwise": "something else"}
    with pytest.raises(check.CheckFailed, match="the graph was kept") as info:
        check.value("kept", "freed", "graphs", hint=hint)
    assert "something else" not in str(info.value)
    with pytest.raises(check.CheckFailed, match="something else"):
        check.value("never built", "freed", "graphs", hint=hint)


def test_warnings_go_to_stdout_not_stderr(capsys):
    """Does a PyTorch warning raised by learner code print on stdout, leaving stderr empty?"""

    def answer():
        y = torch.ones(1, requires_grad=True) * 2
        return y.grad  # non-leaf .grad: UserWarning

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert check.call(answer) is None
    captured = capsys.readouterr()
    assert "Warning (UserWarning): The .grad attribute of a Tensor that is not a leaf" in captured.out
    assert captured.err == ""


def test_grads_reports_every_wrong_name():
    """Does check.grads list each wrong or missing gradient?"""
    with pytest.raises(check.CheckFailed) as info:
        check.grads({"w": -torch.ones(2)}, {"w": torch.ones(2), "b": torch.ones(1)})
    assert "w has the opposite sign" in str(info.value) and "b is missing from the dict" in str(info.value)


def test_tensor_and_grads_pass_causes_to_the_diagnosis():
    """Do check.tensor and check.grads name the cause their question gives for a factor?"""
    causes = {0.5: "the factor 2 of the square's derivative forgotten"}
    with pytest.raises(check.CheckFailed, match="1/2 of the expected value: the factor 2 of the square's"):
        check.tensor(torch.ones(2) / 2, torch.ones(2), name="w", causes=causes)
    with pytest.raises(check.CheckFailed) as info:
        check.grads(
            {"w": torch.ones(2) / 2, "b": torch.ones(())}, {"w": torch.ones(2), "b": torch.ones(())}, causes=causes
        )
    assert "w is exactly 1/2 of the expected value: the factor 2" in str(info.value)
    assert not any(line.startswith("b ") for line in str(info.value).splitlines())  # b is right: not listed


def test_causes_travel_in_the_record_to_the_grader():
    """Does the solution's causes option survive the JSON crossing (number keys included) and give the
    grader's judge the same message as the learner's own check?"""
    from autograder.grading.sandbox.values import decode_record, encode_record

    records = []
    check.report_to(records.append)
    try:
        with pytest.raises(check.CheckFailed) as info:
            check.grads(
                {"w": 5 * torch.ones(2)},
                {"w": torch.ones(2)},
                causes={5: "the 1/N of the mean forgotten (N = 5)", "none": "not a leaf"},
            )
    finally:
        check.report_to(None)
    crossed = decode_record(encode_record(records[0]))
    assert crossed.options["causes"] == {5: "the 1/N of the mean forgotten (N = 5)", "none": "not a leaf"}
    ok, message = check.judge(crossed)
    assert not ok and message == str(info.value) and "5x the expected value: the 1/N of the mean" in message


def test_checks_without_causes_keep_their_records_unchanged():
    """Is no causes option recorded when a check gives none (records stay as they were)?"""
    records = []
    check.report_to(records.append)
    try:
        check.tensor(torch.ones(2), torch.ones(2), name="w")
    finally:
        check.report_to(None)
    assert "causes" not in records[0].options


def test_predictions_name_wrong_entries_without_answers():
    """Does check.predictions name the wrong keys but not their right values?"""
    with pytest.raises(check.CheckFailed, match=r"1 of 2 predictions are right; rethink: y\.is_leaf"):
        check.predictions({"x.is_leaf": True, "y.is_leaf": True}, {"x.is_leaf": True, "y.is_leaf": False})


def test_autograd_error_in_learner_code_is_explained():
    """Does a version-counter error raised by the learner's function come with its cause
    (which tensor, which op saved it)?"""

    def answer():
        x = torch.ones(2, requires_grad=True)
        y = x.sigmoid()
        y += 1
        y.sum().backward()

    with pytest.raises(check.CheckFailed, match="answer raised RuntimeError: one of the variables") as info:
        check.call(answer)
    assert "output 0 of Sigmoid" in str(info.value) and "version 1" in str(info.value)


def test_byte_counts_are_checked_exactly():
    """Does check.nbytes accept the exact figure and name a doubled storage?"""
    check.nbytes(224, 224, parts={"x": 128})
    with pytest.raises(check.CheckFailed, match="128 B too high: exactly x counted twice"):
        check.nbytes(352, 224, parts={"x": 128}, unsaved={})  # the check says nothing else is made


def test_a_byte_count_is_told_by_its_figures_at_other_sizes():
    """Is a figure whose excess is as large as a saved part and as a tensor no Node saves said to be ambiguous,
    and named once the learner's figure at another size (a probe, carried with the value) leaves one reading?"""
    parts, unsaved = {"x": 128, "net(x) - y": 32}, {"the squared errors": 32}
    with pytest.raises(check.CheckFailed, match="possibilities"):
        check.nbytes(192, 160, parts=parts, unsaved=unsaved)
    there = {"expected": 300, "parts": {"x": 240, "net(x) - y": 60}, "unsaved": {"the squared errors": 50}}
    with pytest.raises(check.CheckFailed, match="exactly the squared errors counted, though no Node saves it"):
        check.nbytes(192, 160, parts=parts, unsaved=unsaved, probes=[(350, there)])


def test_a_failed_check_shows_in_ipython_as_its_message_without_the_checkers_frame():
    """Does IPython show a failed check as its message alone, with no frame (and no path) of the check package,
    whatever the traceback mode?"""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    shell.run_line_magic("xmode", "Context")
    with capture_output() as shown:
        shell.run_cell("from autograder import check\ncheck.value(1.0, 2.0, 'f()')")
    assert "CheckFailed: f() is wrong" in shown.stdout + shown.stderr, shown.stdout
    assert "autograder/check" not in shown.stdout + shown.stderr


def test_a_failed_checks_long_lines_are_wrapped_at_spaces():
    """Is a failed check's message shown in lines of at most 88 characters, broken at spaces (an
    error output in JupyterLab would break longer lines inside words), with every word kept?"""
    long = "0.weight is exactly 2x the expected value: " + "the gradients were summed over the ranks " * 4
    shown = check.CheckFailed(long)._render_traceback_()
    assert max(map(len, shown)) <= 88 and len(shown) > 1
    assert " ".join(" ".join(shown).split()) == " ".join(f"CheckFailed: {long}".split())


def test_unanswered_function_called_through_a_helper_is_named_not_the_helper():
    """When a check calls the learner's function through a helper of the check cell, does the
    message name the learner's function (the one still raising NotImplementedError)?"""

    def scaled_step():
        raise NotImplementedError()

    def run():
        return scaled_step()

    with pytest.raises(check.CheckFailed, match=r"^scaled_step is not answered yet") as info:
        check.call(run)
    assert "run " not in str(info.value)


def test_a_librarys_not_implemented_error_is_reported_as_an_error_not_as_a_blank():
    """Is a NotImplementedError with a message (PyTorch: an op not implemented for a dtype or
    device) reported as an error of the learner's code, not as an unanswered question?"""

    def answer():
        raise NotImplementedError("'addmm' not implemented for 'Bool'")

    with pytest.raises(check.CheckFailed, match="answer raised NotImplementedError: 'addmm' not implemented"):
        check.call(answer)


def test_unanswered_function_in_another_process_is_named():
    """Is a learner's function that still raises NotImplementedError in a rank of run_ranks named
    as not answered (not as 'run_ranks raised RankError')?"""
    from autograder.ranks import run_ranks

    def rank_grads(rank, world_size):
        raise NotImplementedError()

    with pytest.raises(check.CheckFailed, match=r"^rank_grads is not answered yet"):
        check.call(run_ranks, rank_grads, 2)


def test_a_name_not_defined_says_to_run_the_answer_cells_first():
    """Does a NameError (a helper defined in an answer cell that was not run) say to run the
    answer cells above first?"""

    def derivatives():
        return StableSoftplus  # noqa: F821 -- the point: not defined

    with pytest.raises(check.CheckFailed, match="the cell that defines it has not run"):
        check.call(derivatives)


def test_grads_gives_one_diagnosis_for_a_mistake_shared_by_several_gradients():
    """When several gradients are wrong the same way (all summed instead of averaged), does
    check.grads say it once and name the others, and does a passing check name what it checked?"""
    expected = {"w": torch.ones(2), "b": torch.ones(1), "c": torch.ones(3)}
    with pytest.raises(check.CheckFailed) as info:
        check.grads({k: 2 * v for k, v in expected.items()}, expected, name="gradients of rank 0")
    message = str(info.value)
    assert message.count("exactly 2x") == 1 and "(the same for b, c)" in message
    check.grads(expected, expected, name="gradients of rank 0")


def test_grads_says_a_factor_its_elements_show_once_for_a_one_element_gradient_off_by_it_too():
    """When w's elements are all 5/7 of the reference (a count written as a number), is the bias, one element
    off by the same factor, named with it rather than given a mismatch of its own (a mismatch's cause would
    say no constant factor fits)?"""
    expected = {"w": torch.tensor([0.5, -1.0, 2.0]), "b": torch.tensor(0.8)}
    with pytest.raises(check.CheckFailed) as info:
        check.grads({k: v * 5 / 7 for k, v in expected.items()}, expected, causes={"mismatch": "Not a constant factor"})
    message = str(info.value)
    assert "a constant factor, the same for every element" in message and "(the same for b)" in message
    assert "Not a constant factor" not in message


def test_grads_gives_one_short_diagnosis_for_gradients_that_each_lack_the_batch_dimension():
    """When every gradient lacks the same leading dimension (a loss reduced over the batch before
    grad), their shapes differ but the cause does not: does check.grads give the cause once, name
    the others, show no long lists of values, and leave out a hint meant for missing names?"""
    n = 6
    expected = {"0.weight": torch.ones(n, 8, 4), "0.bias": torch.ones(n, 8), "2.bias": torch.ones(n, 1)}
    received = {key: value[0] for key, value in expected.items()}
    hint = {"missing": "Name them as named_parameters() does."}
    with pytest.raises(check.CheckFailed) as info:
        check.grads(received, expected, causes={"shape": "one gradient per sample"}, hint=hint)
    message = str(info.value)
    assert message.count("one gradient per sample") == 1 and "(the same for 0.bias, 2.bias)" in message
    assert "expected: [" not in message and "named_parameters" not in message
    with pytest.raises(check.CheckFailed) as info:  # a name missing: there the hint applies
        check.grads({"w0": torch.ones(8, 4)}, {"0.weight": torch.ones(8, 4)}, hint=hint)
    message = str(info.value)
    assert "0.weight is missing" in message and "w0" in message and message.endswith(hint["missing"])


def test_an_error_in_the_learners_function_called_through_a_helper_names_that_function():
    """When a check cell's helper calls the learner's function, which raises, does the message name
    the learner's function (defined in another cell) and its line, not the check's helper?"""
    cells = {}
    answer = "def scaled_step():\n    raise RuntimeError('unscale_() is being called after step().')\n"
    helper = "def run(step):\n    return step()\n"
    exec(compile(answer, "<q3_answer>", "exec"), cells)
    exec(compile(helper, "<q3_check>", "exec"), cells)
    with pytest.raises(check.CheckFailed, match=r"^scaled_step raised RuntimeError: unscale_") as info:
        check.call(cells["run"], cells["scaled_step"])
    assert "run raised" not in str(info.value)


def test_a_wrong_byte_count_shows_both_figures_in_bytes():
    """Does a failed byte check show the expected and the received figure each with its unit, and a
    received value that is not a number as it came?"""
    with pytest.raises(check.CheckFailed) as info:
        check.nbytes(1760, 880, name="saved bytes")
    assert "expected: 880 B\n  received: 1760 B" in str(info.value)
    with pytest.raises(check.CheckFailed) as info:
        check.nbytes("880", 880, name="saved bytes")
    assert "received: '880'" in str(info.value)


def test_a_learners_other_keys_are_listed_cut_short():
    """When a name is missing from the learner's dict, are the dict's other keys listed, at most 8 and
    each cut to 40 characters (a key can be anything a learner made, as long as they like)?"""
    received = {f"{i}" + "x" * 1000: torch.ones(1) for i in range(20)}
    with pytest.raises(check.CheckFailed) as info:
        check.grads(received, {"w": torch.ones(1)}, name="gradients")
    listed = str(info.value).split("other keys: ")[1].split(")")[0].split(", ")
    assert listed[-1] == "..." and len(listed) == 9 and max(map(len, listed)) == 40


def test_gradients_wrong_by_no_constant_factor_get_one_diagnosis():
    """When several gradients are wrong by no constant factor (each with its own relative error),
    is the cause said once, with "(the same for ...)", not once per gradient?"""
    cause = "Not off by a constant factor: a local derivative is missing."
    received = {"w": torch.tensor([1.0, 2.0, 3.0]), "b": torch.tensor([5.0, -1.0])}
    expected = {"w": torch.tensor([1.0, -2.0, 3.5]), "b": torch.tensor([1.0, 2.0])}
    with pytest.raises(check.CheckFailed) as info:
        check.grads(received, expected, name="gradients", causes={"mismatch": cause})
    assert str(info.value).count(cause) == 1 and "(the same for b)" in str(info.value)


def test_the_tolerance_follows_the_learners_choice():
    """With tolerance_by, is a value judged with the tolerance of the choice the learner's code made (the
    grader too, from the solution's record), and is a choice the question does not allow named?"""
    expected = torch.ones(4)
    rounded = expected + 0.03  # within bfloat16's tolerance, not float16's
    by = {"torch.float16": {"rtol": 1e-2, "atol": 1e-3}, "torch.bfloat16": {"rtol": 8e-2, "atol": 8e-3}}
    check.tensor(rounded, expected, name="g", choice="torch.bfloat16", tolerance_by=by)
    with pytest.raises(check.CheckFailed, match=re.escape("the tolerance of torch.float16, which your code chose")):
        check.tensor(rounded, expected, name="g", choice="torch.float16", tolerance_by=by)
    with pytest.raises(
        check.CheckFailed, match=re.escape("allows torch.float16 or torch.bfloat16; your code used torch.float32")
    ):
        check.tensor(expected, expected, name="g", choice="torch.float32", tolerance_by=by)
    solution = check.Checked("g", "tensor", ("torch.float16", expected), expected, {"tolerance_by": by})
    learner = check.Checked("g", "tensor", ("torch.bfloat16", rounded), solution.expected, solution.options)
    assert check.judge(learner)[0]


def test_an_answer_that_is_not_defined_is_told_apart_by_what_the_learner_ran():
    """In a Jupyter kernel running exercise 9 as a learner does, does the check of a class that is
    not defined say "run its answer cell" when that cell never ran, "still raises
    NotImplementedError" (and nothing of not having run it) when the released stub ran, and that it
    stopped with an error when the learner's own class body raised?"""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from autograder.lessons import COURSE_ROOT

    release = nbformat.read(COURSE_ROOT / "exercises" / "ex09_functions" / "ex09_functions.ipynb", as_version=4)
    cell = {c.metadata["nbgrader"]["grade_id"]: c for c in release.cells if "nbgrader" in c.metadata}
    broken = "class StableSoftplus(Function):\n    beta = undefined_name\n"
    runs = [cell["setup"], cell["q1_helpers"], cell["q1_check"], cell["q1_answer"], cell["q1_check"]]
    runs += [nbformat.v4.new_code_cell(broken), cell["q1_check"]]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.source) for c in runs])
    nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(COURSE_ROOT)}}
    ).execute()
    said = [next(o.evalue for o in nb.cells[i].outputs if o.output_type == "error") for i in (2, 4, 6)]
    assert said == [
        "StableSoftplus is not defined yet: no cell run so far defines it "
        "(run its answer cell, then this check again).",
        "StableSoftplus is not answered yet: its answer cell still raises NotImplementedError.",
        "StableSoftplus is not defined: its answer cell ran but stopped with an error before defining it.",
    ]


def test_outside_ipython_an_undefined_answer_names_both_likely_causes():
    """Where no input history tells which cells ran (a plain Python namespace), does the check say
    both: the answer cell still raises NotImplementedError, or has not been run?"""
    with pytest.raises(check.CheckFailed) as info:
        check.answered("StableSoftplus", {"torch": torch})
    assert str(info.value).endswith("still raises NotImplementedError (or has not been run).")


def test_a_gradients_cause_follows_what_the_learners_run_did():
    """With observed and causes_by, is a gradient 1/2 of the reference told the cause of what the check saw
    the learner's code do (DDP's own averaging), by the grader too (the learner's observation with the
    solution's options), and an observation the question does not list told the plain causes?"""
    want = {"w": torch.tensor([1.0, -2.0, 3.0])}
    half = {"w": want["w"] / 2}
    causes, by = {0.5: "divided once too often"}, {"DDP": {0.5: "DDP already averages the gradients"}}
    with pytest.raises(check.CheckFailed, match="DDP already averages"):
        check.grads(half, want, causes=causes, observed="DDP", causes_by=by)
    with pytest.raises(check.CheckFailed, match="divided once too often"):
        check.grads(half, want, causes=causes, observed="", causes_by=by)
    check.grads(want, want, causes=causes, observed="DDP", causes_by=by)
    solution = check.Checked("gradients", "grads", ("", want), want, {"causes": causes, "causes_by": by})
    ok, message = check.judge(check.Checked("gradients", "grads", ("DDP", half), want, solution.options))
    assert not ok and "DDP already averages" in message, message
    forged = check.judge(check.Checked("gradients", "grads", (["DDP"], half), want, solution.options))
    assert not forged[0] and "divided once too often" in forged[1], forged


def test_a_failure_never_states_a_cause_the_ok_above_it_contradicts():
    """In one cell, a check of how .grad was kept prints OK ("kept"); does a later failure then leave out the
    cause that says it was reset, and state the one the OK line shows?"""
    from autograder.check.summary import clear_cell

    clear_cell()
    how = "how .grad was kept"
    check.value("kept", "kept", how)
    zeros = {
        "zeros": [
            check.shown(".grad was reset between the passes.", how, "reset"),
            check.shown("each pass added to .grad, so a later write zeroed it.", how, "kept"),
        ]
    }
    with pytest.raises(check.CheckFailed) as info:
        check.tensor(torch.zeros(3), torch.ones(3), "w.grad", causes=zeros)
    assert "was reset" not in str(info.value) and "a later write zeroed it" in str(info.value)
    clear_cell()


def test_a_group_of_gradients_is_not_given_one_gradients_pattern():
    """Where two gradients differ for one reason, is what one gradient's values show (every wrong element in one row)
    said only of it, never extended to the group by "the same for", and are the right gradients listed?"""
    from autograder.check.checked import Checked
    from autograder.check.judging import judge

    e = torch.tensor([[1.0, -2.0, 3.0, 0.5], [0.3, 0.2, -1.0, 2.0], [0.5, 0.5, 0.1, 0.2]])
    one_row = e.clone()
    one_row[1] += 0.3
    alone = judge(Checked("grads", "grads", {"w": one_row, "b": e}, {"w": e, "b": e}, {}))[1]
    assert "every wrong element is in row 1 of 3" in alone and "(right: b)" in alone, alone
    shifted = e + torch.tensor([[0.1, 0.2, 0.3, 0.4]] * 3)
    grouped = judge(Checked("grads", "grads", {"w": one_row, "v": shifted}, {"w": e, "v": e}, {}))[1]
    assert "(the same for v)" in grouped and "Observed" not in grouped, grouped
