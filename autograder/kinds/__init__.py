"""The kinds of mistakes ``explain`` knows, one module per chapter (``graph``: chapters 1-8; ``functions``: 9,
``hooks``: 10, ``precision``: 11, ``higher_order``: 12, ``compiled``: 13, ``distributed``: 14), then ``told_apart``
and ``notebook``; :mod:`autograder.kinds.table` joins them into ``KINDS``, in the order ``explain`` tries
them."""
