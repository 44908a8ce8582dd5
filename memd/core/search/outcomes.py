"""How recorded outcomes rank procedures (issue 33): a proven procedure before an unproven
equal, a failing one sinking.

Rules:
- A procedure's record is how often it was reported to have worked and to have failed
  (`outcome`; kept in the usage sidecar, `memd.core.search.usage`, never in the Markdown).
- Its success rate is smoothed (Laplace): (successes + 1) / (successes + failures + 2), 0.5
  with no record, so a single report moves it and no count of reports makes it 0 or 1.
- Its score factor (`outcome_factor`) is 1 + OUTCOME_WEIGHT * (2 * rate - 1): 1 with no record
  or as many successes as failures, from 1 - OUTCOME_WEIGHT to 1 + OUTCOME_WEIGHT otherwise
  (one success 1.067, five 1.143; one failure 0.933, five 0.857). A clearly better match
  by words still wins over a proven but weaker one.
- A procedure is proven (`proven`) when it has more successes than failures.
- Ranked procedures (`rank_procedures`): proven ones first, then by score times factor (capped
  at 1, rounded like every score), then in the order given (the ranking's own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

OUTCOME_WEIGHT = 0.2
"""How far outcomes move a procedure's score at most, as a fraction of it."""
DECIMALS = 4


class Record(NamedTuple):
    """How often a procedure worked and failed."""

    successes: int = 0
    failures: int = 0


NO_RECORD = Record()


def success_rate(record: Record) -> float:
    """The smoothed success rate (see the module rules)."""
    return (record.successes + 1) / (record.successes + record.failures + 2)


def outcome_factor(record: Record) -> float:
    """The factor a procedure's score is multiplied by (see the module rules)."""
    return 1.0 + OUTCOME_WEIGHT * (2.0 * success_rate(record) - 1.0)


def proven(record: Record) -> bool:
    """True when the procedure worked more often than it failed."""
    return record.successes > record.failures


def ranked_score(score: float, record: Record) -> float:
    """`score` moved by the record's factor, capped at 1 and rounded."""
    return round(min(1.0, score * outcome_factor(record)), DECIMALS)


Item = TypeVar("Item")


def rank_procedures(
    items: Sequence[Item], score: Callable[[Item], float], record: Callable[[Item], Record]
) -> list[tuple[Item, float]]:
    """`items` with their ranked scores, proven first, then best ranked score first, then in
    the given order (see the module rules)."""
    scored = [
        (item, ranked_score(score(item), record(item)), proven(record(item))) for item in items
    ]
    order = sorted(range(len(scored)), key=lambda n: (not scored[n][2], -scored[n][1], n))
    return [(scored[n][0], scored[n][1]) for n in order]
