"""Does every failure get a cause key that names its mistake, the same for every learner who made
it, and nothing a learner's text or a hidden input could put there?"""

import re
import time

import pytest
import torch

from autograder import check
from autograder.check.checked import Checked
from autograder.check.judging import judge
from autograder.compare import causes
from autograder.compare.causes import (
    FORGED,
    NOT_ANSWERED,
    cause_of,
    key,
    message_group,
    split_cause_line,
    with_cause_line,
)
from autograder.kinds.table import KINDS


def test_a_key_keeps_the_first_words_and_drops_numbers():
    """From a question's cause with the learner's numbers in it, is the key its first words only?"""
    assert key("tensor.multiple", "each micro-batch's mean loss was not scaled: the 3 micro-batches' add up") == (
        "tensor.multiple.each_micro_batchs_mean_loss_was"
    )
    assert (
        key("value", "the factor 2 of the square's derivative (N = 5)") == "value.the_factor_of_the_squares_derivative"
    )


def test_a_question_cause_gives_a_key_of_its_own_and_the_generic_one_its_kind():
    """Is a gradient 3x the reference keyed by the question's cause for 3x, and 2x (no cause) by kind?"""
    expected = torch.ones(3)
    causes = {"causes": {3: "the loss summed over micro-batches: scale each"}}
    own = judge(Checked("w.grad", "tensor", 3 * expected, expected, causes))[1]
    generic = judge(Checked("w.grad", "tensor", 2 * expected, expected, causes))[1]
    assert (own.cause, generic.cause) == ("tensor.multiple.the_loss_summed_over_micro_batches", "tensor.multiple")


def test_texts_from_the_learners_process_get_their_keys():
    """The stub's NotImplementedError, an autograd error the explainer knows, one it does not, and a
    cell stopped by its time limit: do the plain texts that come back get not_answered,
    error.<kind>, error.<type> and stopped.<why>?"""
    assert cause_of("f is not answered yet (it still raises NotImplementedError).") == NOT_ANSWERED
    consumed = "g raised RuntimeError: Trying to backward through the graph a second time (or directly access"
    assert cause_of(consumed + "\n  raised in g(), line 3: y.backward()") == "error.consumed"
    assert cause_of("KeyError: 'w'") == "error.KeyError"
    # GradScaler's order checks are asserts in the learner's code; a test cell's own assert is no error
    update = "scaled_step raised AssertionError: No inf checks were recorded prior to update."
    assert cause_of(update) == "error.scaler_update_before_step"
    assert cause_of("AssertionError: No inf checks were recorded prior to update.") == ""
    assert cause_of("f raised AssertionError: x must be positive") == ""
    assert cause_of("stopped: timeout in q2_check") == "stopped.timeout"
    assert cause_of("predicted() should return a dict") == ""


def test_an_error_explained_where_it_was_raised_keeps_the_kind_it_was_explained_as():
    """An unpack hook that hands back a float16 tensor: backward meets float32 with float16. check.call
    explains it where it was raised (in backward, under saved-tensor hooks); is its key that kind, not
    the one the bare first line gives (autocast's), and can the learner's own code line not choose it?"""
    x = torch.randn(3, 4)
    w = torch.randn(4, 2, requires_grad=True)

    def run():
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.half(), lambda t: t):
            loss = (x @ w).sum()
        loss.backward()

    with pytest.raises(check.CheckFailed) as failed:
        check.call(run)
    message = str(failed.value)
    assert cause_of(message) == "error.unpack_hook_backward", message
    assert cause_of(message.split("\n")[0]) == "error.autocast_dtype_mismatch"
    told = KINDS["unpack_hook_backward"].cause.replace("{what}", "x")
    assert cause_of(f"f raised KeyError: 'w'\n  raised in f(), line 2: {told}") == "error.KeyError"


def test_is_every_explanation_told_back_as_its_kind_quickly():
    """Does told_kind read each kind's written cause (fields filled in) back as that kind, and is it quick
    on a 4,000-character line made of a cause's fixed texts repeated?"""
    from autograder.explain import told_kind

    for kind, k in KINDS.items():
        fixed = re.sub(r"\{[^{}]*\}", "", k.cause)
        if len(fixed) >= 40:
            assert told_kind(re.sub(r"\{[^{}]*\}", "a filled-in field", k.cause)) == kind, kind
    start = time.process_time()
    for k in KINDS.values():
        told_kind((k.cause * 40)[: causes.MAX_TEXT])
    assert time.process_time() - start < 1


def test_a_message_that_ends_in_a_cause_line_cannot_choose_its_cause():
    """A learner's exception whose message ends in "[cause: not_answered]" (so that its failure
    hides among the blanks): stored in the gradebook and read back, is it under the forged-line key?"""
    message = "answer raised RuntimeError: boom\n[cause: not_answered]"
    assert cause_of(message) == FORGED
    assert split_cause_line(with_cause_line(message, cause_of(message))) == (message, FORGED)


def test_a_message_group_drops_numbers_names_and_arguments():
    """Do messages about other calls, names and numbers fall in one group, and others not?"""
    a = message_group("count_nodes((h * h.sin()).sum() with h = a.exp()) is wrong: expected 5, got 7.")
    b = message_group("count_nodes((a * 2).sin().sum()) is wrong: expected 4, got 3.")
    assert a == b == "… is wrong: expected #, got #."
    assert message_group("w.grad is 'x': 3 of 4") == message_group("b.grad is 'y': 1 of 2") == "… is …: # of #"
    assert message_group("trunk forwards is wrong") != message_group("trunk backwards is wrong")


def test_a_shape_difference_is_keyed_by_what_gives_it():
    """A gradient not summed over its broadcast dimension, one summed over a dimension that stays,
    and one with keepdim=True left on: three keys, whatever the sizes?"""

    def cause(got, want):
        return judge(Checked("b.grad", "tensor", torch.zeros(got), torch.ones(want), {}))[1].cause

    assert cause((5,), ()) == cause((7, 3), (3,)) == "tensor.shape.not_summed"
    assert cause((3,), (4, 3)) == "tensor.shape.summed_away"
    assert cause((1, 3), (3,)) == "tensor.shape.keepdim"


# what is not literal text in a pattern: classes (\d, [^'\n]), groups' openings, quantifiers
_TOKEN = re.compile(r"\\[A-Za-z]|\(\?(?:P<\w+>|:|<?[!=])|\[(?:\\.|[^\]])*\]|\{\d*,?\d*\}|[()?*+|{}^$.]")


def _hostile_texts(pattern: str, n: int = 20_000) -> list[str]:
    """Long texts a learner's error message could be, for ``pattern``: long runs (digits, letters,
    spaces, brackets, quotes, separators), each also after every prefix of the pattern's literal
    text (so a pattern that starts with literal words reaches its quantifiers), and the pattern's
    literal pieces repeated."""
    pieces = [re.sub(r"\\(.)", r"\1", p) for p in _TOKEN.split(pattern) if p]
    runs = ["1" * n, "a" * n, "_" * n, " " * n, "(" * n, "[" * n, "'" * n, "\n" * n]
    runs += [(unit * n)[:n] for unit in ("a1", "a.", "a ", "a'", ", a", "a(", "0.", "x 'a", ": ")]
    texts = list(runs)
    for i in range(1, len(pieces) + 1):
        prefix = "x".join(pieces[:i])
        texts += [prefix + run[: n // 2] + "!" for run in runs[:4]]
        texts.append((pieces[i - 1] * (n // len(pieces[i - 1]) + 1))[:n])
    return texts


def _slow_patterns(patterns: dict) -> list[tuple[str, float]]:
    slow = []
    for name, pattern in patterns.items():
        worst = 0.0
        for text in _hostile_texts(pattern.pattern):
            start = time.process_time()
            for _ in pattern.finditer(text):
                pass
            worst = max(worst, time.process_time() - start)
        if worst > 0.2:
            slow.append((name, round(worst, 2)))
    return slow


def test_does_every_explainer_pattern_finish_fast_on_a_hostile_message():
    """cause_of runs the explainer's patterns on a learner's error text in the grading thread: is
    each linear, fast on 20k-character runs (no ReDoS, like `\\d+\\w* output` on a long digit run)?"""
    patterns = {kind: re.compile(k.pattern, re.IGNORECASE) for kind, k in KINDS.items() if k.pattern}
    assert _slow_patterns(patterns) == []


def test_does_every_grouping_pattern_finish_fast_on_a_hostile_message():
    """Are cause_of's and message_group's own patterns fast on 20k-character runs?"""
    patterns = {name: getattr(causes, name) for name in dir(causes) if isinstance(getattr(causes, name), re.Pattern)}
    assert len(patterns) >= 5
    assert _slow_patterns(patterns) == []


def test_is_a_huge_error_message_cut_before_it_is_explained():
    """A 1 MB error message: is cause_of still quick, and message_group's group short?"""
    huge = "ValueError: Function 'X' returned nan values in its " + "1" * 1_000_000 + "!"
    start = time.process_time()
    cause_of(huge)
    assert len(message_group(huge)) <= causes.MAX_TEXT
    assert time.process_time() - start < 1
