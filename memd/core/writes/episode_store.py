"""How a store into an episode category (`kind` "episode") decides: every dated event is kept.

Rules:
- An episode is never skipped, updated or merged as a duplicate of another one: two timeouts on
  two days are two episodes, and two on one day may be two as well. The only store that
  writes nothing is the very same content again (a retried call): byte for byte what an entry
  already says (after the store path's whitespace cleaning).
- A new episode without a given slug gets `episode_slug`: its date, then the derived slug of
  the event's words (`slugs.derive_slug`), unique in the file, as
  `2026-11-20-migration-timed-out-prod`; an undated content gets a plain derived slug.
- A given slug upserts as in every category (`transitions`); the caller named the entry.
"""

from __future__ import annotations

from collections.abc import Container

from memd.core.format.episodes import episode_text, leading_date
from memd.core.writes.slugs import MAX_SLUG_LENGTH, derive_slug, unique_slug

EVENT_FALLBACK = "event"
"""The words of the slug of an episode with nothing after its date."""


def episode_slug(content: str, taken: Container[str]) -> str:
    """A new episode's slug (see the module rules), unique against `taken`."""
    date = leading_date(content)
    if date is None:
        return derive_slug(content, taken)
    words = derive_slug(episode_text(content) or EVENT_FALLBACK, ())
    base = f"{date.isoformat()}-{words}"[: MAX_SLUG_LENGTH - 4].rstrip("-")
    return unique_slug(base, taken)
