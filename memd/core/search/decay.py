"""Episode decay: an episode (a dated event) ranks lower as it ages.

Rules:
- The factor is `0.5 ** (age_days / half_life_days)`: 1 on the episode's day, 0.5 after one
  half-life (`episode_half_life_days` in memd's config, DEFAULT_HALF_LIFE_DAYS by default),
  0.25 after two. It multiplies the episode's score in `query` and in `context`'s ranking, as
  the usage nudge does, so an old episode still matches (a match is decided before any
  factor) but yields to a fresher one or to a rule.
- The age is counted in whole days from the episode's date (`memd.core.format.episodes`) to
  today; a date in the future counts as today. An undated episode (a hand-written line) does
  not decay: memd does not know its age, and keeps it as it is.
- Only entries of an episode category decay; rules never do. Episodes never go to the prompt
  block's layer A (their category's layer is "relevant").
"""

from __future__ import annotations

import datetime

from memd.core.format.episodes import episode_date

DEFAULT_HALF_LIFE_DAYS = 90.0
"""The half-life of an episode's rank, in days (issue 33)."""


def age_days(date: datetime.date | None, today: datetime.date) -> int | None:
    """Whole days from `date` to `today` (0 for a future date); None when undated."""
    if date is None:
        return None
    return max(0, (today - date).days)


def decay_factor(age: float | None, half_life_days: float = DEFAULT_HALF_LIFE_DAYS) -> float:
    """The score factor of an episode `age` days old (None: undated, 1.0); see the rules.

    Raises:
        ValueError: `half_life_days` is not positive.
    """
    if half_life_days <= 0:
        raise ValueError(f"An episode half-life must be positive, got {half_life_days}.")
    if age is None:
        return 1.0
    return float(0.5 ** (max(0.0, age) / half_life_days))


def episode_factor(
    slug: str | None, content: str, today: datetime.date, half_life_days: float
) -> float:
    """The decay factor of the episode entry (`slug`, `content`) on `today`."""
    return decay_factor(age_days(episode_date(slug, content), today), half_life_days)
