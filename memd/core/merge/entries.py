"""The three-way merge of a category file, entry by entry (the first half of issue 22).

Theory of operation: each version's lines get an identity. An entry's is its key, matched
across versions: its slug, or for a slug-less entry its normalised text (`entry_key`); a key
seen twice in one file is told apart by its occurrence (first, second...). Any other line's is
its text. First every entry is decided once, from its three versions (`plan`); then the lines
are aligned by identity (`diff3.regions`) and written region by region, each entry at its
place, written once, as decided.

Rules for entries (issue 22):
- Unchanged on one side: the other side's version wins (a change, a deletion, an addition).
- Changed the same way on both sides (or deleted on both): that change.
- Changed on both sides to different text: a conflict, with markers around that entry only.
- Added on both sides under one key with different text (same slug, or the same normalised
  text written differently): a conflict.
- Two new entries, one per side, that memd's own store rule calls duplicates (`dedup.decide`,
  run exactly as a store runs it, through `DedupIndex`: theirs' entry as the new content, ours'
  new entries as the category; a skip or an update is a duplicate) are a conflict, written at
  ours' entry, unless their texts are equal.
- Additions are kept in a stable order: ours' where ours put them; theirs' new entries, where
  both sides changed the same stretch, after the last entry of the result (in theirs' order),
  each after a blank line unless the file's last two entries are on adjacent lines (memd's own
  insert rule, `mdformat.insert_entry`). Where only theirs changed a stretch, theirs' layout
  is taken whole, additions included.

Rules for every other line (headers, prose, blank lines, foreign lines):
- The line-level three-way rule (`lines`): a stretch unchanged on one side takes the other.
- Where both sides changed a stretch (say, each added entries at the end), blank lines are
  layout, not content: the non-blank non-entry lines decide. Unchanged on one side, the other
  side's lines (and blank layout) are taken; changed on both to different lines, both sides'
  non-entry lines are written as a conflict, and the stretch's entries follow it unmarked.
- Line endings: a line's ending is merged like its text; lines the merge adds take the file's
  ending. A missing final newline stays missing while that line stays last.

Decisions where the issue is silent (the one rule: never lose a memory):
- Deleted on one side and changed on the other: a conflict (one side of the markers empty);
  the changed entry is kept inside it, for a person to decide.
- Deleted on one side and moved (or deleted and stored again elsewhere) on the other: kept, at
  its new place, as git's line merge keeps it. An entry is moved when that side's alignment
  with base does not keep it in place.
- Two new entries with the same text under different slugs: not a conflict, both kept (the
  issue's "unless one side's text equals the other's"; dropping either would lose its slug,
  and `memd cleanup` merges them later).
- An entry moved on one side and changed on the other: moved and changed. An entry whose
  place the alignment cannot name (it was kept, but no side's layout holds it there) is written
  at the end of the stretch it came from, or else after the last entry: never dropped.
- Slug-less text is normalised by whitespace and case only (not `wording.normal_form`, which
  also ignores small words): a reworded entry is a changed entry, not the same one.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator

import msgspec

from memd.core.format import merge_markers
from memd.core.format.mdformat import (
    Document,
    Entry,
    Line,
    is_blank,
    line_ending,
    parse,
    parse_entry_line,
)
from memd.core.merge.diff3 import Region, matching, regions
from memd.core.merge.lines import shortcut, three_way
from memd.core.merge.result import MergeResult, Output
from memd.core.writes.dedup import CANDIDATES, Verdict, decide
from memd.core.writes.dedup_index import DedupIndex

EntryId = tuple[str, str, str, int]
"""An entry's identity: ("entry", "slug" or "text", the slug or normalised text, occurrence)."""


def entry_key(slug: str | None, content: str) -> tuple[str, str]:
    """Return what matches an entry across versions: its slug, else its normalised text."""
    if slug is not None:
        return "slug", slug
    return "text", " ".join(content.split()).casefold()


class Version:
    """One version of the file: its lines, each line's identity, and where each entry is."""

    def __init__(self, text: str) -> None:
        self.lines = parse(text).lines
        self.ids: list[Hashable] = []
        self.entries: dict[EntryId, int] = {}
        self.contents: dict[EntryId, tuple[str | None, str]] = {}
        seen: dict[tuple[str, str], int] = {}
        for index, line in enumerate(self.lines):
            parsed = parse_entry_line(line.text)
            if parsed is None:
                self.ids.append(("line", line.text))
                continue
            kind, key = entry_key(*parsed)
            occurrence = seen.get((kind, key), 0)
            seen[kind, key] = occurrence + 1
            ident: EntryId = ("entry", kind, key, occurrence)
            self.ids.append(ident)
            self.entries[ident] = index
            self.contents[ident] = parsed

    def line_of(self, ident: EntryId) -> Line | None:
        """Return the line of entry `ident`, or None if this version does not hold it."""
        index = self.entries.get(ident)
        return None if index is None else self.lines[index]

    def entry_at(self, index: int) -> EntryId | None:
        """Return the identity of the entry on line `index` (0-based), or None."""
        ident = self.ids[index]
        return ident if ident[0] == "entry" else None  # type: ignore[index,return-value]


class Plan(msgspec.Struct, kw_only=True):
    """What each entry becomes: kept as one line, or a conflict (ours' lines, theirs' lines);
    `absorbed` are theirs' entries written inside a duplicate conflict at ours' entry."""

    keep: dict[EntryId, Line]
    conflicts: dict[EntryId, tuple[tuple[Line, ...], tuple[Line, ...]]]
    absorbed: set[EntryId]


def plan(base: Version, ours: Version, theirs: Version) -> Plan:
    """Decide every entry of the three versions (see the module rules)."""
    keep: dict[EntryId, Line] = {}
    conflicts: dict[EntryId, tuple[tuple[Line, ...], tuple[Line, ...]]] = {}
    in_place: dict[int, set[Hashable]] = {}  # per side: the entries its alignment keeps in place

    def moved(side: Version, ident: EntryId) -> bool:
        if id(side) not in in_place:
            in_place[id(side)] = {
                base.ids[i + k] for i, _, size in matching(base.ids, side.ids) for k in range(size)
            }
        return ident not in in_place[id(side)]

    for ident in {**ours.entries, **theirs.entries, **base.entries}:
        o, a, b = base.line_of(ident), ours.line_of(ident), theirs.line_of(ident)
        chosen: Line | None
        if o is not None and a is None and b == o and moved(theirs, ident):
            chosen = b  # deleted by ours, moved by theirs: kept (never lose a memory)
        elif o is not None and b is None and a == o and moved(ours, ident):
            chosen = a
        elif a == o:
            chosen = b
        elif b in (o, a) or (a is not None and b is not None and a.text == b.text):
            chosen = a
        elif o is not None and a is not None and b is not None and o.text in (a.text, b.text):
            # One side changed only the line's ending (a last line that gained the newline an
            # append after it needed): the other side's text, each part merged on its own.
            chosen = Line(
                b.text if a.text == o.text else a.text, a.eol if a.eol != o.eol else b.eol
            )
        else:
            conflicts[ident] = (() if a is None else (a,), () if b is None else (b,))
            continue
        if chosen is not None:
            keep[ident] = chosen
    found = Plan(keep=keep, conflicts=conflicts, absorbed=set())
    _duplicates(found, base, ours, theirs)
    return found


def _duplicates(found: Plan, base: Version, ours: Version, theirs: Version) -> None:
    """Turn each pair of new entries memd's store rule calls duplicates into a conflict. The
    rule is run both ways (each side's new entry as the content stored among the other side's),
    so swapping the sides finds the same pairs; each of theirs' entries joins the first of
    ours' it pairs with."""

    def new_in(side: Version, other: Version) -> list[EntryId]:
        return [i for i in side.entries if i not in base.entries and i not in other.entries]

    ours_new, theirs_new = new_in(ours, theirs), new_in(theirs, ours)
    pairs = set(_pairs(theirs, theirs_new, ours, ours_new))
    pairs |= {(b, a) for a, b in _pairs(ours, ours_new, theirs, theirs_new)}
    order = {ident: n for n, ident in enumerate(ours_new)}
    partner_of: dict[EntryId, EntryId] = {}
    for b, a in sorted(pairs, key=lambda pair: order[pair[1]]):
        partner_of.setdefault(b, a)
    for ident in theirs_new:
        partner = partner_of.get(ident)
        if partner is None:
            continue
        line = found.keep.pop(ident)
        if partner in found.conflicts:
            mine, others = found.conflicts[partner]
            found.conflicts[partner] = (mine, (*others, line))
        else:
            found.conflicts[partner] = ((found.keep.pop(partner),), (line,))
        found.absorbed.add(ident)


def _pairs(
    side: Version, new: list[EntryId], other: Version, existing: list[EntryId]
) -> Iterator[tuple[EntryId, EntryId]]:
    """Yield (new entry, existing entry) for each of `new` that a store among `existing` would
    skip or turn into an update of that entry (`dedup.decide`, candidates from the same
    `DedupIndex` a store uses), unless their texts are equal."""
    if not new or not existing:
        return
    index = DedupIndex.build((n, other.contents[i][1]) for n, i in enumerate(existing))
    for ident in new:
        content = side.contents[ident][1]
        candidates = [
            Entry(
                line=n, slug=other.contents[existing[n]][0], content=other.contents[existing[n]][1]
            )
            for n in index.ranked(content, CANDIDATES)
        ]
        match = decide(content, candidates)
        if match.verdict is Verdict.STORE or match.entry is None:
            continue
        if match.entry.content != content:  # the same text: both kept (see the decisions)
            yield ident, existing[match.entry.line]


class Writer:
    """Writes the merged lines region by region, each entry once, as the plan says."""

    def __init__(self, decided: Plan, base: Version, ours: Version, theirs: Version) -> None:
        self.plan = decided
        self.base, self.ours, self.theirs = base, ours, theirs
        self.out = Output(line_ending(Document(ours.lines)))
        self.written: set[EntryId] = set(decided.absorbed)
        self.after_last_entry = 0

    def alive(self, ident: EntryId) -> bool:
        """Return True if `ident` is in the result and not yet written."""
        kept = ident in self.plan.keep or ident in self.plan.conflicts
        return kept and ident not in self.written

    def entry(self, ident: EntryId) -> None:
        """Write entry `ident` as decided, unless it is gone or already written."""
        if not self.alive(ident):
            return
        self.written.add(ident)
        if ident in self.plan.conflicts:
            mine, others = self.plan.conflicts[ident]
            self.out.conflict(self._ended(mine), self._ended(others))
        else:
            self.out.add([self.plan.keep[ident]])
        self.after_last_entry = len(self.out.lines)

    def _ended(self, lines: Iterable[Line]) -> list[Line]:
        return [Line(line.text, self.out.eol) for line in lines]

    def layout(self, version: Version, span: range) -> None:
        """Write `version`'s lines in `span`: its other lines as they are, its entries as
        decided."""
        for index in span:
            ident = version.entry_at(index)
            if ident is None:
                self.out.add([version.lines[index]])
            else:
                self.entry(ident)

    def stable(self, region: Region) -> None:
        """Write a region all three versions hold line for line."""
        for i, j, k in zip(region.base, region.ours, region.theirs, strict=True):
            ident = self.base.entry_at(i)
            if ident is None:
                self.out.add(
                    [three_way(self.base.lines[i], self.ours.lines[j], self.theirs.lines[k])]
                )
            else:
                self.entry(ident)

    def unstable(self, region: Region) -> None:
        """Write a region one side or both changed (see the module rules)."""
        o, a, b = self.base, self.ours, self.theirs
        shape_o, shape_a = _shape(o, region.base), _shape(a, region.ours)
        shape_b = _shape(b, region.theirs)
        if shape_a == shape_o:
            chosen: Version | None = b
        elif shape_b in (shape_o, shape_a):
            chosen = a
        else:
            prose_o, prose_a = _prose(o, region.base), _prose(a, region.ours)
            prose_b = _prose(b, region.theirs)
            if prose_a == prose_o and prose_b != prose_o:
                chosen = b
            elif prose_b in (prose_o, prose_a):
                chosen = a
            else:
                chosen = None
        if chosen is None:
            self.out.conflict(_others(a, region.ours), _others(b, region.theirs))
            for index in region.ours:
                ident = a.entry_at(index)
                if ident is not None:
                    self.entry(ident)
        else:
            self.layout(chosen, region.theirs if chosen is b else region.ours)
        self._leftovers(region, chosen or a)

    def _leftovers(self, region: Region, chosen: Version) -> None:
        """Write the region's kept entries that `chosen`'s layout does not hold anywhere, but
        not theirs' new ones (they go after the last entry)."""
        spans = ((self.ours, region.ours), (self.base, region.base), (self.theirs, region.theirs))
        for version, span in spans:
            for index in span:
                ident = version.entry_at(index)
                if ident is None or ident in chosen.entries:
                    continue
                if ident in self.base.entries or ident in self.ours.entries:
                    self.entry(ident)

    def finish(self) -> MergeResult:
        """Write every entry still unwritten after the last entry; return the result."""
        pending = [
            ident
            for version in (self.ours, self.theirs, self.base)
            for ident in version.entries
            if self.alive(ident)
        ]
        tail = Output(self.out.eol)
        lines = self.out.lines
        position = _past_open_hunk(lines, self.after_last_entry or len(lines))
        tight = position >= 2 and all(
            parse_entry_line(line.text) is not None for line in lines[position - 2 : position]
        )
        previous = lines[position - 1] if position else None
        for ident in dict.fromkeys(pending):
            if not tight and previous is not None and not is_blank(previous):
                tail.add([Line("", self.out.eol)])
            self.written.add(ident)
            if ident in self.plan.conflicts:
                mine, others = self.plan.conflicts[ident]
                tail.conflict(self._ended(mine), self._ended(others))
            else:
                tail.add([Line(self.plan.keep[ident].text, self.out.eol)])
            previous = tail.lines[-1]
        self.out.splice(position, tail)
        return self.out.finish()


def _past_open_hunk(lines: list[Line], position: int) -> int:
    """`position`, or just past the closing marker of a conflict hunk left open there (a side
    that already held an unresolved hunk): a new entry written inside it would go with the
    side a person drops when they resolve it."""
    opened = False
    for line in lines[:position]:
        text = line.text.rstrip()
        if text.startswith("<<<<<<<") and merge_markers.is_marker(text):
            opened = True
        elif text.startswith(">>>>>>>") and merge_markers.is_marker(text):
            opened = False
    if not opened:
        return position
    for index in range(position, len(lines)):
        text = lines[index].text.rstrip()
        if text.startswith(">>>>>>>") and merge_markers.is_marker(text):
            return index + 1
    return position


def _shape(version: Version, span: range) -> list[object]:
    """What decides whether a side changed a region: entries by identity, other lines whole."""
    return [version.entry_at(i) or version.lines[i] for i in span]


def _prose(version: Version, span: range) -> list[Line]:
    """The region's lines that are neither entries nor blank."""
    return [
        version.lines[i]
        for i in span
        if version.entry_at(i) is None and not is_blank(version.lines[i])
    ]


def _others(version: Version, span: range) -> list[Line]:
    """The region's lines that are not entries."""
    return [version.lines[i] for i in span if version.entry_at(i) is None]


def merge_entries(base: str, ours: str, theirs: str) -> MergeResult:
    """Return the entry-aware three-way merge of a category file (see the module rules)."""
    done = shortcut(base, ours, theirs)
    if done is not None:
        return done
    o, a, b = Version(base), Version(ours), Version(theirs)
    writer = Writer(plan(o, a, b), o, a, b)
    for region in regions(o.ids, a.ids, b.ids):
        if region.stable:
            writer.stable(region)
        else:
            writer.unstable(region)
    return writer.finish()
