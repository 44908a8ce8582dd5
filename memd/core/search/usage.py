"""Usage signals: how often and how recently each memory was stored or recalled.

They live outside the Markdown (in a sidecar state file the shell keeps), may nudge ranking,
and let `cleanup` point at memories nobody uses.

Rules:
- An entry is known by its category and slug, or by its category and content when it has no
  slug (`key`), so a hand edit that keeps the slug keeps the history.
- `recall` counts an entry returned by `query` or `get`; `store` records when it was stored or
  updated. Times are Unix seconds, given by the caller.
- Freshness decays exponentially with a `HALF_LIFE_DAYS` half-life from the latest store or
  recall. The nudge is at most `MAX_NUDGE` of a score (half freshness, half how often it was
  recalled, saturating at `RECALLS_FOR_FULL_CREDIT`): enough to order near-equal matches,
  never enough to lift an entry over a match that is clearly (more than MAX_NUDGE) better.
- An entry is an archive candidate when neither stored nor recalled in the last `UNUSED_DAYS`
  (entries with no history at all are not judged).
- History of entries that no longer exist is dropped when `cleanup` runs (`forget_missing`).
- `outcome` counts a procedure's reported success or failure (`memd.core.search.outcomes`
  ranks by them); a report is a use, so it also sets the latest recall time.
"""

from __future__ import annotations

import math

import msgspec

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.outcomes import Record

HALF_LIFE_DAYS = 90.0
MAX_NUDGE = 0.05
RECALLS_FOR_FULL_CREDIT = 20
UNUSED_DAYS = 180.0
DAY = 86400.0


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """One entry's history: recalls, and the latest recall and store times (0: never); for a
    procedure, how often it was reported to have worked and failed."""

    recalls: int = 0
    recalled_at: float = 0.0
    stored_at: float = 0.0
    successes: int = 0
    failures: int = 0


Key = str
UsageMap = dict[Key, Usage]


def key(category: Category, entry: Entry) -> Key:
    """Return the entry's usage key: `Category/slug`, or `Category:content` without a slug."""
    if entry.slug:
        return category.name + "/" + entry.slug
    return category.name + ":" + entry.content


def recall(usage: Usage | None, now: float) -> Usage:
    """Return `usage` with one more recall at `now`."""
    base = usage or Usage()
    return msgspec.structs.replace(base, recalls=base.recalls + 1, recalled_at=now)


def store(usage: Usage | None, now: float) -> Usage:
    """Return `usage` with a store (or update) at `now`."""
    return msgspec.structs.replace(usage or Usage(), stored_at=now)


def outcome(usage: Usage | None, now: float, *, worked: bool) -> Usage:
    """Return `usage` with one more success (`worked`) or failure, used at `now`."""
    base = usage or Usage()
    if worked:
        return msgspec.structs.replace(base, successes=base.successes + 1, recalled_at=now)
    return msgspec.structs.replace(base, failures=base.failures + 1, recalled_at=now)


def record_of(usage: Usage | None) -> Record:
    """Return the outcome record in `usage` (none: no reports)."""
    if usage is None:
        return Record()
    return Record(usage.successes, usage.failures)


def nudge(usage: Usage | None, now: float) -> float:
    """Return the factor (1 .. 1 + MAX_NUDGE) by which usage may raise a score."""
    if usage is None:
        return 1.0
    latest = max(usage.recalled_at, usage.stored_at)
    age_days = max(0.0, now - latest) / DAY if latest else math.inf
    freshness: float = math.pow(0.5, age_days / HALF_LIFE_DAYS)
    frequency = min(1.0, math.log1p(usage.recalls) / math.log1p(RECALLS_FOR_FULL_CREDIT))
    return 1.0 + MAX_NUDGE * (0.5 * freshness + 0.5 * frequency)


def unused(usage: Usage | None, now: float) -> bool:
    """True when the entry is an archive candidate (see the module rules)."""
    latest = max(usage.stored_at, usage.recalled_at) if usage is not None else 0.0
    return bool(latest) and latest < now - UNUSED_DAYS * DAY
