"""How a memory is written for people and agents outside the Markdown files: one shared style
for the CLI, the MCP tools and the prompt block."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

EntryRef = tuple[int, str | None, str]
"""An entry as a cleanup plan names it: (line, slug, content)."""


class PlannedEntry(Protocol):
    """An entry of a cleanup plan as the wire carries it (`memd_client.protocol.EntryInfo`)."""

    @property
    def line(self) -> int: ...
    @property
    def slug(self) -> str | None: ...
    @property
    def content(self) -> str: ...


class PlannedMerge(Protocol):
    """A merge of a cleanup plan (`MergeInfo`)."""

    @property
    def file(self) -> str: ...
    @property
    def kept(self) -> PlannedEntry: ...
    @property
    def removed(self) -> Sequence[PlannedEntry]: ...
    @property
    def why(self) -> Sequence[str]: ...
    @property
    def slug(self) -> str: ...


class PlannedPrune(Protocol):
    """A prune of a cleanup plan (`PruneInfo`)."""

    @property
    def file(self) -> str: ...
    @property
    def entry(self) -> PlannedEntry: ...
    @property
    def score(self) -> int: ...
    @property
    def why(self) -> str: ...


class PlannedSlug(Protocol):
    """A slug given by a cleanup plan (`SlugInfo`)."""

    @property
    def file(self) -> str: ...
    @property
    def entry(self) -> PlannedEntry: ...
    @property
    def slug(self) -> str: ...


class CleanupPlan(Protocol):
    """A cleanup plan or its result (`CleanupResult`): what each front end renders."""

    @property
    def merged(self) -> Sequence[PlannedMerge]: ...
    @property
    def pruned(self) -> Sequence[PlannedPrune]: ...
    @property
    def slugged(self) -> Sequence[PlannedSlug]: ...


def cleanup_actions(plan: CleanupPlan) -> list[tuple[str, str]]:
    """Return (verb, what and why) for every action of a cleanup plan, in reading order: each
    merge (keep, then fold), then prunes, then slugs. The CLI and the MCP text both print these."""
    actions: list[tuple[str, str]] = []
    for merge in plan.merged:
        removed = [_ref(entry) for entry in merge.removed]
        actions += merge_actions(merge.file, _ref(merge.kept), removed, merge.why, merge.slug)
    for prune in plan.pruned:
        why = prune.why or f"over the limit; it scores {prune.score}"  # a daemon before `why`
        actions.append(prune_action(prune.file, _ref(prune.entry), why))
    for slugged in plan.slugged:
        actions.append(slug_action(slugged.file, _ref(slugged.entry), slugged.slug))
    return actions


def _ref(entry: PlannedEntry) -> EntryRef:
    return (entry.line, entry.slug, entry.content)


def entry_label(category: str, slug: str | None) -> str:
    """Return `[Category] [slug]`, or `[Category]` for an entry without a slug."""
    return f"[{category}] [{slug}]" if slug else f"[{category}]"


def entry_text(category: str, slug: str | None, content: str) -> str:
    """Return `[Category] [slug] content`."""
    return f"{entry_label(category, slug)} {content}"


_MATCHED = {"semantic": "[by meaning]", "both": "[words and meaning]"}


def match_label(match: str) -> str:
    """Return what found a query hit, as its line shows it: "[by meaning]" (the semantic
    model alone) or "[words and meaning]" (both); "" for a keyword match, the usual case."""
    return _MATCHED.get(match, "")


class SearchState(Protocol):
    """What a workspace's `stats` says of semantic search (`memd_client.protocol`)."""

    @property
    def state(self) -> str: ...
    @property
    def reason(self) -> str | None: ...


def search_mode(semantic: SearchState | None, ready: int, entries: int) -> str:
    """Return how a query in mode auto ranks this workspace now, and why, as one sentence
    ("" from a daemon too old to say): by words and meaning once the model is loaded and every
    entry has a vector, else by words, saying what it waits for or why it is off."""
    if semantic is None:
        return ""
    if semantic.state == "off":
        return f"Search: by words; semantic search is off ({semantic.reason})."
    if semantic.state == "unloaded":
        return "Search: by words; the semantic model loads on the first query."
    if semantic.state == "loading":
        return "Search: by words while the semantic model loads."
    if ready < entries:
        return f"Search: by words until every entry is embedded ({ready} of {entries} done)."
    return f"Search: by words and meaning ({entries} of {entries} entries embedded)."


def loading_progress(ready: int, total: int) -> str:
    """Return "Semantic search is still loading (N of M entries ready)": `ready` of the `total`
    entries searched have a vector (0 while the model itself loads)."""
    return f"Semantic search is still loading ({ready} of {total} entries ready)"


def loading_note(ready: int, total: int, *, found: bool, again: str = "retry") -> str:
    """Return the sentence a result ranked by words alone adds while semantic search is still
    loading: after its word matches (`found`), that they are word matches; after none, that
    only words were matched, and to `again` (a verb phrase: "retry", "call memoryContext
    again") in a few seconds."""
    progress = loading_progress(ready, total)
    if found:
        return f"{progress}; showing word matches."
    return (
        f"{progress}, so only words were matched; {again} in a few seconds to search by "
        "meaning too."
    )


def quote(content: str, width: int = 48) -> str:
    """Return `content` in double quotes, cut at a word boundary to at most about `width`
    characters (then ending in "...") so that a line naming several entries stays readable."""
    if len(content) <= width:
        return f'"{content}"'
    cut = content[:width]
    if " " in cut[width // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return f'"{cut.rstrip(" ,.;:")}..."'


def entry_ref(file: str, line: int, slug: str | None, content: str) -> str:
    """Return `file:line [slug] "short quote"` (no slug part when it has none): one entry named
    unambiguously even when another entry has the same slug."""
    label = f" [{slug}]" if slug else ""
    return f"{file}:{line}{label} {quote(content)}"


def ref_text(file: str, entry: EntryRef) -> str:
    """`entry_ref` of an `EntryRef` in `file`."""
    line, slug, content = entry
    return entry_ref(file, line, slug, content)


def merge_actions(
    file: str, kept: EntryRef, removed: Sequence[EntryRef], whys: Sequence[str], slug: str
) -> list[tuple[str, str]]:
    """Return a cleanup merge as (verb, what and why) actions: "keep" the entry that stays
    (with the slug it gets, and which folded entry it comes from, when it changes), then one
    "fold" per entry folded into it, with why it could be (`whys`, in order; none when
    missing)."""
    text = f"{ref_text(file, kept)}: the most specific wording"
    if slug != kept[1]:
        donor = next((line for line, their, _ in removed if their == slug), None)
        text += f"; it gets the slug [{slug}]" + (f" from {file}:{donor}" if donor else "")
    actions = [("keep", text)]
    for number, entry in enumerate(removed):
        why = f": {whys[number]}" if number < len(whys) and whys[number] else ""
        actions.append(("fold", f"{ref_text(file, entry)} into {file}:{kept[0]}{why}"))
    return actions


def prune_action(file: str, entry: EntryRef, why: str) -> tuple[str, str]:
    """Return a cleanup prune as (verb, what and why)."""
    return ("prune", f"{ref_text(file, entry)}: {why}")


def slug_action(file: str, entry: EntryRef, slug: str) -> tuple[str, str]:
    """Return a cleanup slug assignment as (verb, what)."""
    return ("slug", f"{ref_text(file, entry)} becomes [{slug}]")
