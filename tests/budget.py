"""How hard the property tests search, chosen by one variable: `MEMD_TEST_BUDGET`.

- `ci` (the default; `make test`): each property runs the examples its test names.
- `quick` (`make test-quick`, the edit loop): a tenth of them, at least `QUICK_LEAST`.
- `deep` (`make fuzz`, or a long run by hand): the test's `deep` count, else ten times `ci`.

Every `@settings(max_examples=...)` in the suite goes through `examples`, and a property that
names no count gets `examples(100)` (Hypothesis's default, under `ci`) from the one profile in
`tests/conftest.py` (with no deadline, the failing example's blob printed), so one variable
scales them all.
"""

from __future__ import annotations

import os

VARIABLE = "MEMD_TEST_BUDGET"
BUDGETS = ("quick", "ci", "deep")
QUICK_LEAST = 10


def budget() -> str:
    """Return the budget `MEMD_TEST_BUDGET` names (`ci` when unset).

    Raises:
        ValueError: the variable names no budget.
    """
    chosen = os.environ.get(VARIABLE) or "ci"
    if chosen not in BUDGETS:
        raise ValueError(f"{VARIABLE}={chosen!r} is not a test budget; use one of {BUDGETS}")
    return chosen


def examples(ci: int, *, deep: int | None = None) -> int:
    """Return how many examples a property runs under the chosen budget.

    Args:
        ci: Its examples in `make test`.
        deep: Its examples in a deep run (default: ten times `ci`).
    """
    chosen = budget()
    if chosen == "quick":
        return max(QUICK_LEAST, ci // 10)
    if chosen == "deep":
        return deep if deep is not None else 10 * ci
    return ci
