"""Does every question that lets the learner choose (a dtype, a way of doing it) give full marks to the
solution written with each allowed choice, graded as the class grader grades (references withheld, judged
against the instructor's run), and does the visible check say the same as the hidden ones?"""

import pytest

from tests.grading import inprocess


def _answer(exercise: str, gid: str) -> str:
    return next(c.source for c in inprocess.source(exercise).cells if inprocess.grade_id(c) == gid)


def _replaced(exercise: str, gid: str, old: str, new: str) -> str:
    text = _answer(exercise, gid)
    assert old in text, (exercise, gid, old)
    return text.replace(old, new)


# (exercise, answer grade_id, the choice, the solution's answer cell written with that choice)
CHOICES = {
    "ex10 q4: activations in bfloat16": (
        "ex10_hooks",
        lambda: {"q4_answer": _replaced("ex10_hooks", "q4_answer", "torch.float16", "torch.bfloat16")},
    ),
    "ex10 q4: activations in float16, stored with .half()": (
        "ex10_hooks",
        lambda: {"q4_answer": _replaced("ex10_hooks", "q4_answer", "t.to(torch.float16)", "t.half()")},
    ),
    "ex09 q1: the output saved, not x": (
        "ex09_functions",
        lambda: {"q1_answer": _SOFTPLUS_SAVING_THE_OUTPUT},
    ),
    "ex14 q1: gradients averaged with dist.all_reduce, no DDP": (
        "ex14_distributed",
        lambda: {"q1_answer": _RANK_GRADS_BY_ALL_REDUCE},
    ),
}

_SOFTPLUS_SAVING_THE_OUTPUT = """class StableSoftplus(Function):
    @staticmethod
    def forward(x, beta):
        z = beta * x
        return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)   # sigmoid(beta x) = 1 - exp(-beta y)
        ctx.beta = inputs[1]

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return grad_y * -torch.expm1(-ctx.beta * y), None
"""

_RANK_GRADS_BY_ALL_REDUCE = """def rank_grads(rank, world_size, model, x, y):
    nn.functional.mse_loss(model(x.chunk(world_size)[rank]), y.chunk(world_size)[rank]).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size
    return {name: p.grad for name, p in model.named_parameters()}
"""


@pytest.mark.parametrize("choice", CHOICES)
def test_each_allowed_choice_gets_full_marks(choice):
    """Is the solution, written with this allowed choice, given full marks, visible and hidden checks alike?"""
    exercise, answers = CHOICES[choice]
    answers = answers()
    result = inprocess.grade(inprocess.source(exercise), inprocess.solution_run(exercise), answers)
    assert not any(result.values()), result
    # the learner's own notebook (references computed in-process) says OK too
    own = inprocess.run(inprocess.source(exercise), withheld=False, answers=answers)
    assert not own.errors, own.errors


def test_a_choice_the_question_does_not_allow_is_named():
    """Is a pack hook that keeps activations in float32 told which dtypes the question allows?"""
    answers = {"q4_answer": _replaced("ex10_hooks", "q4_answer", "t.to(torch.float16)", "t.clone()")}
    result = inprocess.grade(inprocess.source("ex10_hooks"), inprocess.solution_run("ex10_hooks"), answers)
    assert "bytes kept for backward is too high" in result["q4_check"]
