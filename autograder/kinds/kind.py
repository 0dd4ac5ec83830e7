"""What a kind of mistake is made of (:class:`Kind`), and PyTorch's in-place message, which several modules read
and one writes."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Kind", "LESSONS", "taught", "MODIFIED_INPLACE", "modified_inplace_message"]

# The course's lessons by chapter, as a kind's ``lesson`` names them (tests/explain/test_lesson_anchors.py checks
# this table against notebooks/ and each heading word against its lesson).
LESSONS = {
    0: "notebooks/00_start.ipynb",
    1: "notebooks/01_dynamic_graph.ipynb",
    2: "notebooks/02_leaf_tensors.ipynb",
    3: "notebooks/03_backward_consumes.ipynb",
    4: "notebooks/04_gradient_accumulation.ipynb",
    5: "notebooks/05_inplace_version_counter.ipynb",
    6: "notebooks/06_detach_no_grad.ipynb",
    7: "notebooks/07_graph_memory.ipynb",
    8: "notebooks/08_checkpointing.ipynb",
    9: "notebooks/09_custom_functions.ipynb",
    10: "notebooks/10_hooks.ipynb",
    11: "notebooks/11_mixed_precision.ipynb",
    12: "notebooks/12_higher_order.ipynb",
    13: "notebooks/13_compile.ipynb",
    14: "notebooks/14_distributed.ipynb",
}


def taught(chapter: int, heading_word: str) -> tuple[str, str]:
    """Where the course teaches a kind: ``(chapter's lesson, a word of the heading to link to)``."""
    return LESSONS[chapter], heading_word


@dataclass(frozen=True)
class Kind:
    """One kind of mistake: its family (a key of explain's headlines), the pattern on PyTorch's
    message, where the course teaches it, and str.format templates of its cause and fix."""

    family: str
    pattern: str  # regex on the stable part of PyTorch's message, see NOTE [stable parts] in kinds.table
    lesson: tuple | str  # (notebook, a word of the heading to link to), see lessons.lesson; or a URL
    cause: str  # str.format templates over the details, see explain._values()
    fix: str
    # The exception types (builtin names) the message comes as; the notebook extension explains
    # exactly the union of these (see EXCEPTION_TYPES). Warnings need none.
    types: tuple = ("RuntimeError",)
    # A regex that one of the traceback's "file:function" frames (or a pasted traceback) must match,
    # for a message that is not PyTorch's alone (a Python TypeError raised through autograd's code).
    where: str = ""


# PyTorch's message when a tensor saved for backward was changed in place after it was saved, e.g.
# "one of the variables needed for gradient computation has been modified by an inplace operation:
# [torch.FloatTensor [2, 3]], which is output 0 of SigmoidBackward0, is at version 1; expected
# version 0 instead." The one place that reads it (graph.trace, explain) and writes it
# (memory.SavedTensorMeter, which must raise it itself): the details are optional groups, see
# NOTE [stable parts]; ``type`` is e.g. "torch.FloatTensor" or "torch.cuda.FloatTensor".
MODIFIED_INPLACE = re.compile(
    r"needed for gradient computation has been modified by an inplace operation"
    r"(?:: \[(?P<type>[\w.]+) \[(?P<shape>[\d, ]*)\]\](?:, which is output (?P<output>\d+) "
    r"of (?P<op>\w+),)? is at version (?P<version>\d+); expected version (?P<expected>\d+))?"
)


def modified_inplace_message(tensor_type: str, shape, version: int, expected: int) -> str:
    """PyTorch's message for a saved tensor that was modified in place since it was saved, as
    autograd words it (it matches :data:`MODIFIED_INPLACE`, details included).

    Args:
        tensor_type: ``tensor.type()``, e.g. ``"torch.FloatTensor"``.
        shape: the tensor's shape (a ``torch.Size`` or a sequence of ints).
        version: the tensor's version counter now; expected: its version when it was saved.
    """
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor_type} {list(shape)}] is at version {version}; expected version "
        f"{expected} instead."
    )
