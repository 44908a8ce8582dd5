"""Undo's rules, as pure functions: which recorded operations an undo takes back, and the write
that takes back each change of one (the shell runs those writes through the category actors:
`memd.server.methods.undo`).

Rules:
- An operation is one recorded write (`record.Change.operation`): a store, an update, a
  delete, an applied cleanup, a restore, a hand edit or a git merge the watcher saw. An undo is
  recorded as an operation of its own (action "undo", `undoes` naming the operation it took
  back). Undos, and operations an undo named, are never undone: a second `memd undo` takes the
  next older operation. There is no redo: `memd restore` (or a store) brings back what an undo
  archived.
- Without `to`, an undo takes the newest operation not undone; with `to`, every operation
  recorded after that time, newest first (at most MAX_OPERATIONS).
- Each change of an operation is taken back against the category's entries now, and only if
  its line still says what the operation wrote; otherwise it is refused, saying what the line
  says now and how to look (`memd blame`):
  - added (no `replaced`): its line is removed (archived), found by its slug, or by its text
    for a slug-less one (a line given a slug since is found by its text too, and acted on by
    that slug); a line gone already is "unchanged".
  - changed (both texts), with a slug: its old text is set back (a store by slug that
    `replaces` what the operation wrote; the newer text is archived). Slug-less: the old text
    comes back as a new line (under a slug derived from it) and the reworded line is removed
    (archived); a reworded line given a slug since is set back by that slug.
  - removed (no `text`): its text comes back word for word under its slug, unless that slug
    now holds another text (refused) or that text already ("unchanged"); another line saying
    the same (a merged repeat) does not stop it. A slug-less one comes back under a slug
    derived from its text (a repeat of a line there may come back so).
  - A slug given to a slug-less entry (a cleanup's: the same text gone without a slug and come
    with one) is "unchanged": the text is the same, and the slug stays.
- The steps of one operation run removals first, then set-backs, then put-backs: a text that
  moved from one slug to another is taken away before it is put back (a put-back skips a text
  the category still holds). Each step is one conditional write, so a line changed between the
  plan and the write is refused too, never overwritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import msgspec

from memd.core.format.mdformat import Entry
from memd.core.provenance.record import Change

MAX_OPERATIONS = 1000
"""The most operations one undo takes back."""

StepKind = Literal["remove", "set_back", "reword", "put_back", "unchanged", "refused"]
"""The write that takes one change back (`unchanged`, `refused`: none)."""

_ORDER: dict[StepKind, int] = {
    "remove": 0,
    "set_back": 1,
    "reword": 1,
    "put_back": 2,
    "unchanged": 3,
    "refused": 3,
}


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """How one change is taken back, and why (the result's reason for a person)."""

    change: Change
    kind: StepKind
    reason: str = ""
    slug: str | None = None
    """The slug of the line the step acts on: the change's, or for a slug-less change the one
    its line was given since (a cleanup's); None: a slug-less line, found by its text."""

    @property
    def target(self) -> str | None:
        """The slug to act by (None: the slug-less line saying the change's text)."""
        return self.slug or self.change.slug or None


def undone_operations(changes: Iterable[Change]) -> set[int]:
    """The operations an undo took back."""
    return {c.undoes for c in changes if c.action == "undo" and c.undoes is not None}


def operations_to_undo(changes: Sequence[Change], after: float | None) -> list[list[Change]]:
    """The operations an undo takes back, newest first, each its changes in recorded order:
    the newest not undone (`after` None), or every one not undone recorded after `after`."""
    undone = undone_operations(changes)
    operations: dict[int, list[Change]] = {}
    for change in changes:
        if change.action != "undo" and change.operation not in undone:
            operations.setdefault(change.operation, []).append(change)
    newest_first = [operations[n] for n in sorted(operations, reverse=True)]
    if after is None:
        return newest_first[:1]
    return [operation for operation in newest_first if operation[0].at > after]


def plan(operation: Sequence[Change], entries: Mapping[str, Sequence[Entry]]) -> list[Step]:
    """The steps that take back `operation`, given each category's entries now (by category
    name; a category not there is refused), in the order they must run (see the rules)."""
    given_slugs = _slugs_given(operation)
    steps = [
        Step(change=c, kind="unchanged", reason="a slug was given to it; it stays")
        if n in given_slugs
        else _step(c, entries.get(c.category))
        for n, c in enumerate(operation)
    ]
    return sorted(steps, key=lambda step: _ORDER[step.kind])


def _slugs_given(operation: Sequence[Change]) -> set[int]:
    """The places in `operation` of the changes that only gave a slug-less entry a slug: a
    text gone without a slug paired with the same text come with one, in the same category
    (one pair for each, so a slug-less repeat merged away still comes back)."""
    gone = Counter((c.category, c.replaced) for c in operation if not c.slug and c.text is None)
    came = Counter((c.category, c.text) for c in operation if c.slug and c.replaced is None)
    pairs = gone & came
    kept_gone, kept_came = Counter(pairs), Counter(pairs)
    found: set[int] = set()
    for n, change in enumerate(operation):
        if change.slug and change.replaced is None and kept_came[(change.category, change.text)]:
            kept_came[(change.category, change.text)] -= 1
            found.add(n)
        elif (
            not change.slug
            and change.text is None
            and kept_gone[(change.category, change.replaced)]
        ):
            kept_gone[(change.category, change.replaced)] -= 1
            found.add(n)
    return found


def _step(change: Change, entries: Sequence[Entry] | None) -> Step:
    if entries is None:
        return Step(
            change=change,
            kind="refused",
            reason=f"the category {change.category} is not configured here any more",
        )
    if change.replaced is None:
        return _added(change, entries)
    if change.text is None:
        return _removed(change, entries, change.replaced)
    return _changed(change, entries, change.text, change.replaced)


def _added(change: Change, entries: Sequence[Entry]) -> Step:
    text = change.text or ""
    if change.slug:
        now = _with_slug(entries, change.slug)
        if now is None:
            return Step(change=change, kind="unchanged", reason="it is gone already")
        if now.content != text:
            return _refused(change, now.content)
        return Step(change=change, kind="remove")
    line = _holding(entries, text)
    if line is not None:
        return Step(change=change, kind="remove", slug=line.slug)
    return Step(change=change, kind="unchanged", reason="it is gone already")


def _removed(change: Change, entries: Sequence[Entry], text: str) -> Step:
    if change.slug:
        now = _with_slug(entries, change.slug)
        if now is not None and now.content == text:
            return Step(change=change, kind="unchanged", reason="it is back already")
        if now is not None:
            return Step(
                change=change,
                kind="refused",
                reason=f'its slug [{change.slug}] says "{now.content}" now; see `memd blame '
                f"{change.slug}`, and bring the old text back beside it with `memd store`",
            )
    return Step(change=change, kind="put_back")


def _changed(change: Change, entries: Sequence[Entry], text: str, old: str) -> Step:
    if change.slug:
        now = _with_slug(entries, change.slug)
        if now is not None and now.content == text:
            return Step(change=change, kind="set_back")
        if now is not None and now.content == old:
            return Step(change=change, kind="unchanged", reason="it says the old text already")
        return _refused(change, None if now is None else now.content)
    line = _holding(entries, text)
    if line is not None and line.slug:
        return Step(change=change, kind="set_back", slug=line.slug)
    if line is not None:
        return Step(change=change, kind="reword")
    if any(e.content == old for e in entries):
        return Step(change=change, kind="unchanged", reason="it says the old text already")
    return _refused(change, None)


def _refused(change: Change, now: str | None) -> Step:
    """A refusal naming the line's state now and how to look at its history."""
    look = (
        f"`memd blame {change.slug}`"
        if change.slug
        else f"`memd blame --text {_quoted(change.text or '')}`"
    )
    said = "it is gone" if now is None else f'it says "{now}"'
    return Step(
        change=change,
        kind="refused",
        reason=f"it changed since: {said} now, not what operation {change.operation} wrote; "
        f"see {look}",
    )


def _holding(entries: Sequence[Entry], text: str) -> Entry | None:
    """The slug-less line saying `text`, else a line given a slug since that says it."""
    plain = next((e for e in entries if not e.slug and e.content == text), None)
    return plain or next((e for e in entries if e.content == text), None)


def _with_slug(entries: Sequence[Entry], slug: str) -> Entry | None:
    return next((entry for entry in entries if entry.slug == slug), None)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def after_steps(
    entries: Mapping[str, Sequence[Entry]], steps: Iterable[Step]
) -> dict[str, list[Entry]]:
    """Each category's entries as `steps` would leave them (a dry run of several operations
    plans each older one against what the newer ones' steps would leave; line numbers are not
    kept, and a put-back slug-less text stays slug-less here)."""
    result = {name: list(found) for name, found in entries.items()}
    for step in steps:
        change, found = step.change, result.get(step.change.category)
        if found is None or step.kind in ("unchanged", "refused"):
            continue
        if step.kind in ("remove", "reword"):
            gone = _find(found, step.target, change.text or "")
            if gone is not None:
                found.remove(gone)
        if step.kind == "set_back":
            was = _find(found, step.target, change.text or "")
            if was is not None:
                back = Entry(line=was.line, slug=was.slug, content=change.replaced or "")
                found[found.index(was)] = back
        if step.kind in ("put_back", "reword"):
            found.append(Entry(line=0, slug=change.slug, content=change.replaced or ""))
    return result


def _find(entries: Sequence[Entry], slug: str | None, text: str) -> Entry | None:
    if slug:
        return _with_slug(entries, slug)
    return next((e for e in entries if not e.slug and e.content == text), None)
