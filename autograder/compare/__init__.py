"""Compare a learner's tensor with a reference and name the autograd mistake behind a difference.

``diagnose(received, expected)`` returns a :class:`Diagnosis` whose ``kind`` is one of:

=============  =============================================================================
``ok``         equal within the dtype's tolerance
``none``       ``None`` where a tensor was expected (a ``.grad`` that was never populated)
``type``       not a tensor at all
``attached``   still part of a graph (``requires_grad``) where a plain number/tensor was asked for
``shape``      shape, ``dtype`` or ``device`` differ (kinds ``shape``, ``dtype``, ``device``)
``zeros``      all zeros where the reference is not (which path carries no gradient is asked)
``sign``       exactly the negative of the reference
``multiple``   k times the reference, k = 2, 3, ...: gradients accumulated (not zeroed), or a
               loss summed where a mean was meant
``fraction``   1/k of the reference: divided twice, or a mean where a sum was meant
``mismatch``   different in some other way; the relative error is reported
=============  =============================================================================

A shape that differs only by a dimension a broadcast adds (received ``(5,)`` for ``()``, ``(N, D)``
for ``(D,)``) is reported as a gradient not summed over that dimension (or, the other way round,
summed over a dimension it should keep).

The causes above are the generic ones. A check knows better what gives a factor k *in its
question*: ``causes`` maps a factor received / expected (a number: ``2``, ``0.5``, ``-1``, ``n``
computed from the check's inputs) or a kind (``"none"``, ``"zeros"``, ``"attached"``, ``"shape"``,
``"mismatch"``) to the likely cause there, which then replaces the generic one. It is plain data
(numbers and strings), so it can travel in a check's record to the class grader. A cause whose
mechanism the learner's run can show is given with its evidence (``evidence.cause``): it is named
only when the facts the check observed show it, listed as a thing to check when they say nothing,
and never stated when they contradict it.

The package, split by what it diagnoses:

diagnosis     what a comparison says (``Diagnosis``) and the tolerances per dtype
tensors       ``diagnose``: a tensor (a value, a gradient) against the reference
factors       a difference by a constant factor; the element a tolerance test fails worst
shapes        a shape difference in words (a reduction missing over a broadcast dimension, ...)
byte_counts   ``diagnose_bytes``: a byte count against the reference, a part named only where one reading fits
byte_terms    every decomposition of a byte difference into the run's facts (NOTE there)
causes        the cause keys of the class report (``tensor.zeros``, ``bytes.missing.*``, ...)
evidence      a cause as a claim with a test on the learner's run (holds / contradicted / not observed):
              ``cause(text, evidence)``, ``shown(text, fact, *values)``, the table of tests, and ``Held``, the
              only form in which a template takes a cause

It may import torch, ``autograder.explain`` (``causes`` names an error's kind) and nothing else of
the package: the checks (``autograder.check``) and the lessons' explorers import it.
"""

from .byte_counts import diagnose_bytes
from .diagnosis import NONE_GRAD_CAUSES, Diagnosis, tolerances
from .tensors import diagnose

__all__ = ["Diagnosis", "diagnose", "diagnose_bytes", "tolerances", "NONE_GRAD_CAUSES"]
