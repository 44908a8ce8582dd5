"""The effect of each write command on one category file, as pure functions.

`apply(category, doc, command)` returns the new document, the command's outcome and the entries
it removed (for the archive). The actor that owns the file calls it for each queued command in
order, then writes the file once. Nothing here touches the file system.

Store rules (the public contract):
- Content is trimmed and must be one non-empty line of at most MAX_CONTENT_LENGTH characters.
- A given slug upserts: an entry with that slug is replaced in place (unchanged text is
  "skipped"); otherwise the content is deduplicated like a slug-less store, and a new or
  replaced line takes the given slug.
- Without a slug, dedup against the category (`dedup.find_match`): skip, update (replace the
  matched line in place, keeping its slug) or store (a new line with a derived, unique slug).
- A negation flip against the replaced entry is reported as `conflict`; it is never skipped.
- Stores never evict: a category over its limit is reported (`over_limit`) and left to cleanup.
- The text an update replaces goes to the archive, like every other removed entry.
- `dry_run` computes the same outcome and leaves the document unchanged.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from memd.core import mdformat
from memd.core.archive import ArchivedEntry
from memd.core.categories import Category
from memd.core.cleanup import CleanupPlan, apply_cleanup, plan_cleanup
from memd.core.dedup import Verdict, find_match, is_negation_flip, similarity
from memd.core.mdformat import Document, Entry
from memd.core.slugs import derive_slug, validate_slug
from memd_client.errors import InvalidEntry

MAX_CONTENT_LENGTH = 2000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# ---------------------------------------------------------------------------- commands


class Store(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Store `content`, upserting by `slug` if given."""

    content: str
    slug: str | None = None
    dry_run: bool = False


class Delete(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Remove the first entry with `slug` (it goes to the archive)."""

    slug: str


class Cleanup(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Plan merges, prunes and slug assignments; carry them out if `apply`."""

    apply: bool = False


Command = Store | Delete | Cleanup


def may_write(command: Command) -> bool:
    """Return True if `command` can change the file (so its commit must hold the write lock)."""
    if isinstance(command, Store):
        return not command.dry_run
    if isinstance(command, Cleanup):
        return command.apply
    return True


# ---------------------------------------------------------------------------- outcomes


StoreAction = Literal["stored", "updated", "skipped"]


class StoreOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What a store did: action, the entry as it stands, and what it was compared with."""

    action: StoreAction
    line: int
    slug: str | None
    content: str
    similarity: float
    matched: Entry | None
    conflict: bool
    entries: int
    dry_run: bool


class DeleteOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """Whether an entry was deleted, and which."""

    deleted: bool
    entry: Entry | None


class CleanupOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """The cleanup plan for one category, and whether it was applied."""

    plan: CleanupPlan
    applied: bool


Outcome = StoreOutcome | DeleteOutcome | CleanupOutcome


class Transition(msgspec.Struct, frozen=True, kw_only=True):
    """The result of applying one command: new document, outcome, removed entries.

    `doc` is the very object passed in (possibly None) when the command changed nothing.
    """

    doc: Document | None
    outcome: Outcome
    archived: tuple[ArchivedEntry, ...] = ()


# ---------------------------------------------------------------------------- apply


def apply(category: Category, doc: Document | None, command: Command) -> Transition:
    """Return the effect of `command` on `doc` (None: the file does not exist yet).

    Raises:
        InvalidEntry: the command's content or slug breaks a format rule.
    """
    match command:
        case Store():
            base = doc if doc is not None else mdformat.new_document(category)
            new_doc, outcome = store(base, command)
            if command.dry_run or new_doc is base:
                return Transition(doc=doc, outcome=outcome)
            return Transition(doc=new_doc, outcome=outcome, archived=_replaced(category, outcome))
        case Delete():
            if doc is None:
                return Transition(doc=None, outcome=DeleteOutcome(deleted=False, entry=None))
            return delete(category, doc, command.slug)
        case Cleanup():
            return cleanup(category, doc, apply=command.apply)


def _replaced(category: Category, outcome: StoreOutcome) -> tuple[ArchivedEntry, ...]:
    """Return the archive record for the text an update replaced (nothing is silently lost)."""
    old = outcome.matched
    if outcome.action != "updated" or old is None:
        return ()
    how = "replaced by a contradicting entry" if outcome.conflict else "updated"
    reason = f"{how} as [{outcome.slug}]"
    return (ArchivedEntry(category=category, slug=old.slug, content=old.content, reason=reason),)


def clean_content(content: str) -> str:
    """Return `content` trimmed, if it is a valid one-line memory.

    Raises:
        InvalidEntry: it is empty, spans several lines, holds control characters or is too long.
    """
    text = content.strip()
    if not text:
        raise InvalidEntry("Content is empty; pass one sentence to remember.")
    if "\n" in text or "\r" in text:
        raise InvalidEntry("Content must be one line; join the sentences with spaces.")
    if _CONTROL.search(text):
        raise InvalidEntry("Content holds control characters; send plain text.")
    if len(text) > MAX_CONTENT_LENGTH:
        raise InvalidEntry(
            f"Content is {len(text)} characters; keep a memory under {MAX_CONTENT_LENGTH}."
        )
    return text


def store(doc: Document, command: Store) -> tuple[Document, StoreOutcome]:
    """Return `doc` after storing `command` and what happened (see the module rules)."""
    content = clean_content(command.content)
    slug = validate_slug(command.slug) if command.slug is not None else None
    current = mdformat.entries(doc)
    if slug is not None:
        existing = next((e for e in current if e.slug == slug), None)
        if existing is not None:
            return _upsert_existing(doc, existing, content, command.dry_run, len(current))
    match = find_match(content, current)
    count = len(current)
    if match.verdict is Verdict.SKIP and match.entry is not None:
        return doc, _outcome(count, "skipped", match.entry, match.similarity, match.entry, command)
    if match.verdict is Verdict.UPDATE and match.entry is not None:
        new_slug = slug or match.entry.slug or _derive(content, current)
        new_doc = mdformat.replace_line(
            doc, match.entry.line, mdformat.format_entry(new_slug, content)
        )
        written = Entry(line=match.entry.line, slug=new_slug, content=content)
        outcome = _outcome(
            count, "updated", written, match.similarity, match.entry, command, match.conflict
        )
        return new_doc, outcome
    new_slug = slug or _derive(content, current)
    new_doc, line = mdformat.insert_entry(
        doc, mdformat.format_entry(new_slug, content), found=current
    )
    written = Entry(line=line, slug=new_slug, content=content)
    return new_doc, _outcome(count + 1, "stored", written, match.similarity, match.entry, command)


def _upsert_existing(
    doc: Document, existing: Entry, content: str, dry_run: bool, count: int
) -> tuple[Document, StoreOutcome]:
    command = Store(content=content, slug=existing.slug, dry_run=dry_run)
    if existing.content == content:
        return doc, _outcome(count, "skipped", existing, 1.0, existing, command)
    assert existing.slug is not None
    new_doc = mdformat.replace_line(
        doc, existing.line, mdformat.format_entry(existing.slug, content)
    )
    written = Entry(line=existing.line, slug=existing.slug, content=content)
    conflict = is_negation_flip(existing.content, content)
    score = similarity(existing.content, content)
    return new_doc, _outcome(count, "updated", written, score, existing, command, conflict)


def _outcome(
    count: int,
    action: StoreAction,
    entry: Entry,
    score: float,
    matched: Entry | None,
    command: Store,
    conflict: bool = False,
) -> StoreOutcome:
    return StoreOutcome(
        action=action,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        similarity=round(score, 4),
        matched=matched,
        conflict=conflict,
        entries=count,
        dry_run=command.dry_run,
    )


def _derive(content: str, current: tuple[Entry, ...]) -> str:
    return derive_slug(content, {e.slug for e in current if e.slug is not None})


def delete(category: Category, doc: Document, slug: str) -> Transition:
    """Return `doc` without the first entry whose slug is `slug`, archiving it."""
    target = next((e for e in mdformat.entries(doc) if e.slug == slug), None)
    if target is None:
        return Transition(doc=doc, outcome=DeleteOutcome(deleted=False, entry=None))
    record = ArchivedEntry(
        category=category, slug=target.slug, content=target.content, reason="deleted"
    )
    return Transition(
        doc=mdformat.remove_line(doc, target.line),
        outcome=DeleteOutcome(deleted=True, entry=target),
        archived=(record,),
    )


def cleanup(category: Category, doc: Document | None, *, apply: bool) -> Transition:
    """Return the cleanup plan for `doc`, and the cleaned document if `apply`.

    A missing file (None) has an empty plan and stays missing.
    """
    plan = plan_cleanup(category, doc or Document(), limit=category.limit)
    if not apply or plan.empty or doc is None:
        return Transition(doc=doc, outcome=CleanupOutcome(plan=plan, applied=False))
    new_doc, archived = apply_cleanup(doc, plan)
    return Transition(
        doc=new_doc, outcome=CleanupOutcome(plan=plan, applied=True), archived=archived
    )
