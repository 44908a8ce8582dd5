"""Consolidation of episodes in `cleanup`: archive old unrecalled ones, promote recurring lessons.

Theory of operation: `plan_consolidation` looks at one episode category's entries (with when
each was last recalled, from the usage sidecar) and at the Quirks, and returns what it would
archive and which new Quirks it would store; `apply_consolidation` carries the archiving out on
a document (the daemon does the same through its write path: one `Delete` per entry, each only
if the entry still says what was planned, then one store per promotion).

Rules:
- Only episode categories (`kind` "episode") are consolidated, never by name. Age never
  touches a rule: the plan refuses a category whose layer is "always" (Security, Instruction).
- Archive: a dated episode (`memd.core.format.episodes.episode_date`) more than `max_age_days`
  old (`episode_max_age_days` in memd's config, DEFAULT_MAX_AGE_DAYS by default) that nobody
  recalled within `max_age_days` of today (no recall in the usage sidecar, or only older ones)
  is archived with a reason naming its age and its last recall. An undated episode is never
  archived by age (memd does not know it), and neither is a member of a lesson this plan
  promotes (the new Quirk names it).
- Similar episodes (a pure, deterministic rule on words): two episodes are similar when their
  events (`episode_text`, tags left out) share at least MIN_SHARED content keywords (as the
  write decision reads words: `wording.keywords`, stemmed, stop words left out) and those are
  at least MIN_OVERLAP of the keywords of the one with fewer. Dates, outcome and other tags
  play no part.
- A recurring lesson is an episode and every episode similar to it, when they are at least
  MIN_EPISODES. Groups are star-shaped (each member similar to the group's seed; nothing
  chains). Seeds are taken in order of most similar episodes, then earliest line; an episode
  joins at most one group, and a seed counts only the episodes no earlier group took.
- A lesson is promoted into one new Quirk, `Recurring lesson (N episodes: [a], [b], [c]): <the
  newest member's event>` (newest by date, then line; tags left out; at most LESSON_NAMES
  named, then "and N more"), named by slug (a
  slug-less member is named by its line, and a dry run shows it; `cleanup --apply` gives every
  entry its slug first). It is stored under a slug of its own that no Quirk has
  (`lesson-` and the words of its event, made unique), so it is always a new entry: never an
  update of, nor skipped for, a Quirk someone wrote however alike they read. The episodes
  stay. A group already named by a Quirk (any member's
  `[slug]` in any Quirk's content) is not promoted again, so a second plan proposes nothing new.
- Deterministic and lossless: the same input gives the same plan; applying it removes exactly
  the archived entries, so what stays plus what is archived is the original set.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence

import msgspec

from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.format.episodes import episode_date, episode_text
from memd.core.format.mdformat import Document, Entry, parse_entry_line, remove_line
from memd.core.format.tags import strip_tags
from memd.core.writes.slugs import MAX_SLUG_LENGTH, derive_slug, unique_slug
from memd.core.writes.wording import keywords

LESSON_NAMES = 5
"""A lesson's Quirk names at most this many of its episodes (then "and N more"): one line."""
DEFAULT_MAX_AGE_DAYS = 180
"""Episodes older than this, and not recalled within it, are proposed for the archive."""
MIN_SHARED = 3
"""Content keywords two similar episodes share at least."""
MIN_OVERLAP = 0.6
"""The share of the smaller episode's keywords that two similar episodes have in common."""
MIN_EPISODES = 3
"""Similar episodes that make a recurring lesson."""


class Archival(msgspec.Struct, frozen=True, kw_only=True):
    """An episode proposed for the archive: the entry, its age in days and why."""

    entry: Entry
    age_days: int
    reason: str


class Promotion(msgspec.Struct, frozen=True, kw_only=True):
    """A recurring lesson: its episodes (in file order), the Quirk content naming them and
    the new slug it is stored under."""

    episodes: tuple[Entry, ...]
    content: str
    slug: str


class ConsolidationPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What consolidating one episode category would do."""

    category: Category
    archive: tuple[Archival, ...] = ()
    promote: tuple[Promotion, ...] = ()

    @property
    def empty(self) -> bool:
        """True if applying the plan would change nothing."""
        return not (self.archive or self.promote)


def event_words(content: str) -> frozenset[str]:
    """The content keywords of an episode's event (no date, no tags), for similarity."""
    return frozenset(
        word for word in keywords(strip_tags(episode_text(content))) if not word.startswith("#")
    )


def similar(first: frozenset[str], second: frozenset[str]) -> bool:
    """True when two episodes' event words make them similar (see the module rules)."""
    shared = len(first & second)
    smaller = min(len(first), len(second))
    return shared >= MIN_SHARED and shared >= MIN_OVERLAP * smaller


def plan_consolidation(
    category: Category,
    episodes: Sequence[Entry],
    *,
    today: datetime.date,
    max_age_days: int = DEFAULT_MAX_AGE_DAYS,
    last_recalled: Mapping[int, datetime.date] | None = None,
    quirks: Sequence[Entry] = (),
) -> ConsolidationPlan:
    """Return what consolidating `episodes` (one episode category's entries) would do.

    Args:
        category: The episode category (its `kind` is "episode").
        episodes: Its entries, in file order.
        today: The daemon's today.
        max_age_days: The age past which an unrecalled episode is archived.
        last_recalled: By entry line, the day each episode was last recalled (absent: never).
        quirks: The Quirk entries (a lesson one of them names is not promoted again).

    Raises:
        ValueError: `category` is not an episode category, its layer is "always", or
            `max_age_days` is negative.
    """
    if category.kind != "episode" or category.layer == "always":
        raise ValueError(f"Only episode categories are consolidated, not {category.name}.")
    if max_age_days < 0:
        raise ValueError(f"episode_max_age_days cannot be negative, got {max_age_days}.")
    promote = _promotions(episodes, quirks)
    promoted = {entry.line for promotion in promote for entry in promotion.episodes}
    recalled = last_recalled or {}
    archive = []
    for entry in episodes:
        date = episode_date(entry.slug, entry.content)
        if date is None or entry.line in promoted:
            continue
        age = (today - date).days
        last = recalled.get(entry.line)
        if age <= max_age_days or (last is not None and (today - last).days <= max_age_days):
            continue
        when = "never recalled" if last is None else f"last recalled {last.isoformat()}"
        reason = f"consolidated: an episode {age} days old (over {max_age_days}), {when}"
        archive.append(Archival(entry=entry, age_days=age, reason=reason))
    return ConsolidationPlan(category=category, archive=tuple(archive), promote=promote)


def apply_consolidation(
    doc: Document, plan: ConsolidationPlan
) -> tuple[Document, tuple[ArchivedEntry, ...]]:
    """Remove the plan's archived episodes from `doc` (the document it was planned from) and
    return the new document and one archive record each, in file order (the promotions are
    stores, made by the caller).

    Raises:
        ValueError: an archived entry is no longer on its line in `doc`.
    """
    records = []
    for archival in plan.archive:
        entry = archival.entry
        found = None
        if 1 <= entry.line <= len(doc.lines):
            found = parse_entry_line(doc.lines[entry.line - 1].text)
        if found != (entry.slug, entry.content):
            raise ValueError(
                f"The consolidation plan does not match the document: line {entry.line} is no "
                "longer the episode it planned for; plan the cleanup again."
            )
        records.append(
            ArchivedEntry(
                category=plan.category,
                slug=entry.slug,
                content=entry.content,
                reason=archival.reason,
            )
        )
    for archival in sorted(plan.archive, key=lambda a: a.entry.line, reverse=True):
        doc = remove_line(doc, archival.entry.line)
    return doc, tuple(records)


def _promotions(episodes: Sequence[Entry], quirks: Sequence[Entry]) -> tuple[Promotion, ...]:
    """The recurring lessons of `episodes` not yet named by a Quirk (see the module rules)."""
    words = [event_words(entry.content) for entry in episodes]
    partners: list[set[int]] = [set() for _ in episodes]
    for one in range(len(episodes)):
        for other in range(one + 1, len(episodes)):
            if similar(words[one], words[other]):
                partners[one].add(other)
                partners[other].add(one)
    taken: set[int] = set()
    groups: list[list[int]] = []
    for seed in sorted(range(len(episodes)), key=lambda n: (-len(partners[n]), n)):
        if seed in taken:
            continue
        members = sorted({seed} | (partners[seed] - taken))
        if len(members) < MIN_EPISODES:
            continue
        taken.update(members)
        groups.append(members)
    named = " ".join(quirk.content for quirk in quirks)
    quirk_slugs = {quirk.slug for quirk in quirks if quirk.slug}
    promotions = []
    for members in sorted(groups):
        group = [episodes[n] for n in members]
        if any(entry.slug and f"[{entry.slug}]" in named for entry in group):
            continue
        content = _lesson(group)
        slug = _lesson_slug(content, quirk_slugs)
        quirk_slugs.add(slug)
        promotions.append(Promotion(episodes=tuple(group), content=content, slug=slug))
    return tuple(promotions)


def _lesson_slug(content: str, taken: set[str]) -> str:
    """A lesson's new slug: `lesson-` and its event's words, unique against `taken`."""
    words = derive_slug(content.partition("): ")[2] or content, ())
    return unique_slug(f"lesson-{words}"[: MAX_SLUG_LENGTH - 4].rstrip("-"), taken)


def _lesson(group: Sequence[Entry]) -> str:
    """The Quirk content of a recurring lesson: its episodes by name, the newest one's event."""
    named = [f"[{entry.slug}]" if entry.slug else f"line {entry.line}" for entry in group]
    if len(named) > LESSON_NAMES:
        named = [*named[:LESSON_NAMES], f"and {len(named) - LESSON_NAMES} more"]
    names = ", ".join(named)

    def newest(entry: Entry) -> tuple[datetime.date, int]:
        return (episode_date(entry.slug, entry.content) or datetime.date.min, entry.line)

    event = " ".join(strip_tags(episode_text(max(group, key=newest).content)).split())
    return f"Recurring lesson ({len(group)} episodes: {names}): {event}"
