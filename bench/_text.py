"""Generated memory text that the write decision keeps apart.

A generated memory told apart from its neighbours only by numbers ("note 1", "note 2", "w0x1")
differs from them only in values, and memd rightly reads a store of it as a changed value of the
same rule (an update). `word(n)` gives distinct words made only of letters instead, so memories
built from them are different rules and every store of one is a store.
"""

from __future__ import annotations

import string

WIDTH = 4
"""Letters per number: 26**4 = 456,976 distinct words."""


def word(*numbers: int) -> str:
    """A word of letters only, distinct for each tuple of `numbers` (each below 26**WIDTH):
    "k" + WIDTH letters per number + "z" (no English ending a stemmer would strip)."""
    letters = string.ascii_lowercase
    parts = []
    for number in numbers:
        digits = []
        for _ in range(WIDTH):
            number, rest = divmod(number, len(letters))
            digits.append(letters[rest])
        if number:
            raise ValueError(f"{numbers} has a number of {WIDTH + 1} or more letters")
        parts.append("".join(reversed(digits)))
    return "k" + "".join(parts) + "z"
