"""The provenance record of a workspace: a bounded log of changes to entries, and the rules
that make and read it.

Rules:
- One `Change` per entry a write added, changed or removed; the changes of one write operation
  (a store, a delete, a cleanup, a hand edit or a git merge seen by the watcher) share an
  `operation` number, increasing in the order they were recorded.
- An entry is followed by its slug: a moved line, or a reworded one, keeps its slug and so its
  history. An entry without a slug is followed by its text: a change that rewords it records
  the old text as `replaced`, and `history_of_text` walks back from text to replaced text.
- A workspace keeps the newest MAX_CHANGES changes; older ones are dropped (their text is still in
  the archive, which `history` also reads).
- Nothing here is ever written to the Markdown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from memd.core.format.mdformat import Entry

WriteOrigin = Literal["user", "agent", "extracted", "merged"]
"""Who a write comes from (the wire's `protocol.WriteOrigin`)."""
VersionAction = Literal["store", "update", "delete", "cleanup", "edit", "merge", "undo", "restore"]
"""What made a change (the wire's `protocol.VersionAction`)."""


class Writer(msgspec.Struct, frozen=True, kw_only=True):
    """Who makes a write (the wire's `protocol.Writer`)."""

    client: str
    version: str | None = None
    origin: WriteOrigin = "agent"
    session: str | None = None


MAX_CHANGES = 5000
"""The most changes a workspace's record keeps (about 1 MB of JSON at worst)."""

UNKNOWN = Writer(client="unknown", origin="agent")
"""Who a write is recorded as from when its request did not say (an older client)."""
HAND_EDIT = Writer(client="edit", origin="user")
"""A change found on disk that git did not make: a person's (or HackLM's) edit."""
GIT_MERGE = Writer(client="git", origin="merged")
"""A change found on disk while or just after git worked in the repository."""


class Change(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One change to one entry."""

    operation: int
    at: float
    action: VersionAction
    category: str
    slug: str | None = None
    text: str | None = None
    """The entry's text after the change; None: it was removed."""
    replaced: str | None = None
    """Its text before; None: it was new."""
    client: str
    version: str | None = None
    origin: WriteOrigin = "agent"
    session: str | None = None
    undoes: int | None = None
    """For an undo's change: the operation it undid (`memd.core.provenance.undo_plan`)."""


class Edit(msgspec.Struct, frozen=True, kw_only=True):
    """A change to one entry, before it is stamped with the operation, time and writer."""

    action: VersionAction
    category: str
    slug: str | None
    text: str | None
    replaced: str | None


def stamp(
    edits: Iterable[Edit],
    *,
    operation: int,
    at: float,
    writer: Writer,
    undoes: int | None = None,
) -> list[Change]:
    """Turn `edits` into the changes of one operation by `writer` at `at` (an undo's: naming
    the operation it `undoes`)."""
    return [
        Change(
            operation=operation,
            at=at,
            action=edit.action,
            category=edit.category,
            slug=edit.slug,
            text=edit.text,
            replaced=edit.replaced,
            client=writer.client,
            version=writer.version,
            origin=writer.origin,
            session=writer.session,
            undoes=undoes,
        )
        for edit in edits
    ]


def diff(
    category: str,
    before: Sequence[Entry],
    after: Sequence[Entry],
    *,
    action: VersionAction,
) -> list[Edit]:
    """The edits that turn the entries `before` into `after` (order and line numbers ignored).

    Entries with a slug are matched by slug: a new slug was added, a gone one removed, one whose
    text differs changed. Entries without one are matched by text (as a multiset): a text that
    appears was added, one that went was removed; when exactly one slug-less text went and one
    came in the same category, it is one entry reworded (a changed edit)."""
    old_slugs = {e.slug: e.content for e in before if e.slug}
    new_slugs = {e.slug: e.content for e in after if e.slug}
    edits: list[Edit] = []
    for slug, text in new_slugs.items():
        was = old_slugs.get(slug)
        if was is None:
            edits.append(
                Edit(action=action, category=category, slug=slug, text=text, replaced=None)
            )
        elif was != text:
            edits.append(Edit(action=action, category=category, slug=slug, text=text, replaced=was))
    for slug, text in old_slugs.items():
        if slug not in new_slugs:
            edits.append(
                Edit(action=action, category=category, slug=slug, text=None, replaced=text)
            )
    old_plain = Counter(e.content for e in before if not e.slug)
    new_plain = Counter(e.content for e in after if not e.slug)
    gone = list((old_plain - new_plain).elements())
    came = list((new_plain - old_plain).elements())
    if len(gone) == 1 and len(came) == 1:
        edits.append(
            Edit(action=action, category=category, slug=None, text=came[0], replaced=gone[0])
        )
        return edits
    edits.extend(
        Edit(action=action, category=category, slug=None, text=text, replaced=None) for text in came
    )
    edits.extend(
        Edit(action=action, category=category, slug=None, text=None, replaced=text) for text in gone
    )
    return edits


def history_of_slug(changes: Iterable[Change], slug: str) -> list[Change]:
    """The changes to the entry `slug`, oldest first."""
    return [change for change in changes if change.slug == slug]


def history_of_text(changes: Sequence[Change], text: str) -> list[Change]:
    """The changes that led to the slug-less entry saying `text`, oldest first: the newest
    change that wrote `text`, then the one that wrote the text it replaced, and so on (each
    change is taken once, so a text that came back never loops)."""
    found: list[Change] = []
    wanted: str | None = text
    for change in reversed(changes):
        if wanted is None:
            break
        if change.slug is None and change.text == wanted:
            found.append(change)
            wanted = change.replaced
    found.reverse()
    return found
