"""The effect of each write command on one category file, as pure functions.

`apply_batch(category, catalog, commands)` applies queued commands in order to one version of
the file (a `catalog.Catalog`) and returns the next version, each command's outcome and the
entries they removed (for the archive); the actor that owns the file then writes it once. Each
store costs what it changes, never a scan of the category (`catalog`, `dedup_index`).
`apply(category, doc, command)` is the same for one command on a `Document`. Nothing here touches
the file system.

Store rules (the public contract):
- Content is trimmed and each run of whitespace inside it (newlines, tabs, Unicode line
  separators) becomes one space, so no content can start a second line or fake an entry; the
  outcome says so (`normalized`). What is left must be non-empty and at most the command's
  `max_length` characters long (default MAX_ENTRY_CHARS). Content holding any other control
  character, or another character that can hide text from a person (`controls.first_refused`:
  terminal escapes, C1 controls, bidi overrides, tag characters), is refused whole.
- A given slug upserts: an entry with that slug is replaced in place (unchanged text is
  "skipped"). With `replaces` (what the caller read, e.g. `memd check --fix`), only if the
  first entry with that slug still says exactly that; else nothing changes (`EntryNotFound`:
  someone edited or removed it since), and never without a slug.
- A new slug (one no entry has) always makes its own entry ("stored"): the caller named an
  entry and will ask for it again by that name, so it is never skipped, never replaces another
  entry and never renames one. It is still judged against the category's candidates, and the
  outcome names the entry it relates to (`matched`, `relation`, the swapped values): the first
  candidate it contradicts (a reversed rule, a changed value or choice: `conflict`, both kept
  for a person to resolve), else the entry a slug-less store would have skipped for, updated
  or named (its twin, for the same text).
- Without a slug, `dedup.find_match`'s decision (candidates found through the dedup index, each
  judged by `judge.judge`): skip, update (replace the matched line in place, keeping its slug)
  or store (a new line with a derived, unique slug).
- Every outcome says how the content relates to the entry it was compared with (`relation`,
  and the old and new words of a swap); an update that leaves the old entry wrong (a reversed
  rule, a changed value or choice) is a `conflict`, for a slug upsert too, and so is a new
  slug's entry that contradicts the entry it names (both kept).
- A store into an episode category (`kind` "episode") without a slug never skips, updates or
  merges another episode: only the very same content is skipped, anything else is a new entry
  under a date-first slug (`memd.core.writes.episode_store`).
- Stores never evict: a category over its limit is reported (`over_limit`) and left to cleanup.
- The text an update replaces goes to the archive, like every other removed entry.
- `dry_run` computes the same outcome and leaves the document unchanged.
- `restated` (a model's "restates" verdict, `memd.core.llm.policy`) applies only to a store
  without a slug, not into an episode category, that the decision above would store as a new
  entry without a conflict, and only while the named entry still says exactly what the model
  saw and the content does not contradict it: then the store updates that entry, as the
  decision makes an update (never a skip). Otherwise it changes nothing.
- `ask_first` (a model is there to ask): a store without `restated` that the decision above would
  store as a new entry beside a `matched` one it does not contradict, the one store a model is
  asked about (`memd.core.llm.policy.worth_asking`), is made as a dry run instead: nothing is
  written, and the caller asks and stores again. Any other store is made as usual, in one go.

Size: the store rules (the public contract) beside their one implementation, read together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import msgspec

from memd.core.format import controls, mdformat, secrets
from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.format.limits import MAX_ENTRY_CHARS
from memd.core.format.mdformat import Document, Entry
from memd.core.writes.catalog import Catalog, CatalogEditor
from memd.core.writes.cleanup import CleanupPlan, apply_cleanup, plan_cleanup
from memd.core.writes.dedup import NO_MATCH, Match, Verdict, decide
from memd.core.writes.episode_store import episode_slug
from memd.core.writes.judge import Relation, judge
from memd.core.writes.slugs import derive_slug, validate_slug
from memd_client.errors import EntryNotFound, InvalidEntry, RpcError

# ---------------------------------------------------------------------------- commands


class Restated(msgspec.Struct, frozen=True, kw_only=True):
    """The entry a model said a store restates (`slug`, `content`: as the model saw it); the
    store then updates it (`memd.core.llm.policy`)."""

    slug: str | None
    content: str


class Store(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Store `content`, upserting by `slug` if given."""

    content: str
    slug: str | None = None
    dry_run: bool = False
    max_length: int = MAX_ENTRY_CHARS
    """The longest content accepted, in characters (the daemon's `max_entry_chars`)."""
    allow_secrets: bool = False
    """Store content that carries a secret value (the daemon's `allow_secrets`); a slug never
    carries one either way."""
    replaces: str | None = None
    """With `slug`: update the entry only if it still says exactly this (see the store rules)."""
    reason: str | None = None
    """Why the text an update replaces is archived, in the caller's words (else the store
    decision's own)."""
    restated: Restated | None = None
    """A model's verdict that the content restates an entry (see the store rules)."""
    ask_first: bool = False
    """A model is there to ask: a store it would be asked about (see the store rules) is made
    as a dry run, for the caller to ask and store again with the verdict."""


class Delete(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Remove the first entry with `slug` (it goes to the archive, with `reason`); with
    `content`, only if that entry still says exactly this (else nothing is removed). Slug None:
    the first entry without a slug that says exactly `content` (an undo's; none: nothing)."""

    slug: str | None
    content: str | None = None
    reason: str = "deleted"


class Cleanup(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Plan merges, prunes and slug assignments; carry them out if `apply`."""

    apply: bool = False


class Restore(msgspec.Struct, frozen=True, kw_only=True, tag=True):
    """Put back, word for word, an entry this daemon acknowledged that another tool's write
    took away (HackLM's first-use header: `first_use`), or that an undo or `restore` brings
    back; nothing is judged again. Skipped if the file holds its slug or its text by now. Slug
    None: under a slug derived from the text (memd gives every entry it writes one)."""

    slug: str | None
    content: str
    kept_elsewhere: bool = False
    """The text is in the archive already (an undo's, a `restore`'s): a write that fails is
    the caller's error, not archived again."""
    by_slug: bool = False
    """Skipped only if the file holds the slug, never for its text (an undo's put-back of a
    line another line repeats word for word; slug None: never skipped)."""


Command = Store | Delete | Cleanup | Restore


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
    normalized: bool = False
    """The content's whitespace was changed (beyond trimming) to make it one line."""
    relation: Relation | None = None
    """How the content relates to `matched` (None when nothing was compared)."""
    old_value: str | None = None
    """For a swap, the words of `matched` the content replaced ("15", "RabbitMQ")."""
    new_value: str | None = None
    """The words that replaced `old_value`."""


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


class Batch(NamedTuple):
    """The effect of a batch of commands on one file.

    `catalog` is the very catalog passed in (possibly None) when nothing changed; `results`
    holds each command's outcome, or the error that command raised (it then changed nothing).
    """

    catalog: Catalog | None
    results: list[Outcome | RpcError]
    archived: list[ArchivedEntry]
    changed: bool


def apply_batch(category: Category, catalog: Catalog | None, commands: Sequence[Command]) -> Batch:
    """Apply `commands` in order to `catalog` (None: the file does not exist yet); never raises.

    Each command sees the changes of the ones before it. A command that breaks a format rule
    gets its `RpcError` as its result and leaves the file as it was (commands check everything
    before they change anything).
    """
    editor = None if catalog is None else catalog.edit()
    results: list[Outcome | RpcError] = []
    archived: list[ArchivedEntry] = []
    for command in commands:
        try:
            if isinstance(command, Store) and editor is None:
                editor = Catalog.from_document(mdformat.new_document(category)).edit()
            outcome, removed, editor = _apply_one(category, editor, command)
        except RpcError as error:
            results.append(error)
            continue
        results.append(outcome)
        archived.extend(removed)
    if editor is None or not editor.changed:
        return Batch(catalog, results, archived, False)
    return Batch(editor.freeze(), results, archived, True)


def _apply_one(
    category: Category, editor: CatalogEditor | None, command: Command
) -> tuple[Outcome, tuple[ArchivedEntry, ...], CatalogEditor | None]:
    match command:
        case Store():
            assert editor is not None
            outcome, removed = store(category, editor, command)
            return outcome, removed, editor
        case Delete():
            if editor is None:
                return DeleteOutcome(deleted=False, entry=None), (), None
            deleted, removed = delete(
                category, editor, command.slug, content=command.content, reason=command.reason
            )
            return deleted, removed, editor
        case Restore():
            if editor is None:
                editor = Catalog.from_document(mdformat.new_document(category)).edit()
            return restore(editor, command), (), editor
        case Cleanup():
            doc = None if editor is None else editor.document()
            transition = cleanup(category, doc, apply=command.apply)
            if transition.doc is doc or transition.doc is None:
                return transition.outcome, transition.archived, editor
            cleaned = Catalog.from_document(transition.doc).edit()
            cleaned.changed = True
            return transition.outcome, transition.archived, cleaned


def apply(category: Category, doc: Document | None, command: Command) -> Transition:
    """Return the effect of one `command` on `doc` (None: the file does not exist yet).

    Raises:
        InvalidEntry: the command's content or slug breaks a format rule.
    """
    catalog = None if doc is None else Catalog.from_document(doc)
    batch = apply_batch(category, catalog, (command,))
    result = batch.results[0]
    if isinstance(result, RpcError):
        raise result
    new_doc = batch.catalog.doc if batch.changed and batch.catalog is not None else doc
    return Transition(doc=new_doc, outcome=result, archived=tuple(batch.archived))


def _replaced(
    category: Category, outcome: StoreOutcome, given: str | None = None
) -> tuple[ArchivedEntry, ...]:
    """Return the archive record for the text an update replaced (nothing is silently lost),
    with the caller's reason (`given`, on one line) or the store decision's."""
    old = outcome.matched
    if outcome.action != "updated" or old is None or outcome.dry_run:
        return ()
    if given is not None and given.strip():
        said = " ".join(given.split()).replace("|", "/")  # " | " separates the archive line
        reason = f"{said} (updated as [{outcome.slug}])"
    else:
        how = "replaced by a contradicting entry" if outcome.conflict else "updated"
        reason = f"{how} as [{outcome.slug}]"
        if outcome.relation is not None:
            reason += f" ({ARCHIVE_REASONS.get(outcome.relation, 'set by slug')})"
    return (ArchivedEntry(category=category, slug=old.slug, content=old.content, reason=reason),)


ARCHIVE_REASONS = {
    Relation.SAME: "the same rule",
    Relation.SAYS_LESS: "a shorter form of it",
    Relation.TAGS: "new tags",
    Relation.ADDS_DETAIL: "more detail",
    Relation.VALUE_MADE_EXACT: "the value made exact",
    Relation.BROADENS: "a wider rule",
    Relation.REWORDED: "reworded",
    Relation.CHANGED_VALUE: "a new value",
    Relation.CHANGED_CHOICE: "a new choice",
    Relation.REVERSED: "the rule reversed",
}
"""Why an update replaced an entry, for its archive line (no " | ": the line's separator); any
other relation's update was asked for by its slug ("set by slug")."""


def clean_content(content: str, max_length: int = MAX_ENTRY_CHARS) -> str:
    """Return `content` as a one-line memory: trimmed, each whitespace run one space.

    Raises:
        InvalidEntry: it is empty, holds a character `controls.first_refused` refuses (checked
            before whitespace is normalised: Python's `split` also splits at U+001C-U+001F) or
            is over `max_length`.
    """
    refused = controls.first_refused(content)
    if refused is not None:
        raise InvalidEntry(
            f"Content holds U+{ord(refused):04X} ({controls.escape(refused)}), a character that "
            "can hide text from a person reading it; send plain text without terminal escapes, "
            "bidi overrides or other control characters."
        )
    text = " ".join(content.split())
    if not text:
        raise InvalidEntry("Content is empty; pass one sentence to remember.")
    if len(text) > max_length:
        raise InvalidEntry(
            f"Content is {len(text):,} characters, over the {max_length:,}-character cap "
            "(max_entry_chars); shorten it to the lesson itself."
        )
    return text


def refuse_secret(content: str) -> None:
    """Raise if `content` carries a secret value (see `memd.core.format.secrets`).

    Raises:
        InvalidEntry: naming what was found and where, and how to store the rule without it.
    """
    found = secrets.find_secret(content)
    if found is None:
        return
    shown = content[found.start : found.end]
    hint = shown[:4] + "..." if len(shown) > 4 else "..."
    raise InvalidEntry(
        f"Not stored: the content holds what looks like {found.kind} ({hint!r} at characters "
        f"{found.start + 1}-{found.end}), and memory files are meant to be committed; store the "
        'rule without the value (say where it lives, e.g. "in the team vault"), or set '
        "allow_secrets = true in memd's config file if this one must be kept.",
        data={"kind": found.kind, "start": found.start, "end": found.end},
    )


def store(
    category: Category, editor: CatalogEditor, command: Store
) -> tuple[StoreOutcome, tuple[ArchivedEntry, ...]]:
    """Store `command` in `editor` (see the module rules); return what happened and the
    archive record of the text an update replaced.

    Raises:
        InvalidEntry: the content or slug breaks a format rule (nothing changed).
    """
    content = clean_content(command.content, command.max_length)
    if not command.allow_secrets:
        refuse_secret(content)
    outcome, archived = _store_clean(category, editor, command, content)
    if content != command.content.strip():
        outcome = msgspec.structs.replace(outcome, normalized=True)
    return outcome, archived


def _store_clean(
    category: Category, editor: CatalogEditor, command: Store, content: str
) -> tuple[StoreOutcome, tuple[ArchivedEntry, ...]]:
    slug = validate_slug(command.slug) if command.slug is not None else None
    count = editor.count
    if command.replaces is not None:
        _check_replaces(editor, slug, command.replaces)
    if slug is not None:
        existing = editor.first_with_slug(slug)
        if existing is not None:
            return _upsert_existing(category, editor, existing, content, command)
        return _store_new_slug(editor, slug, content, command)
    if category.kind == "episode":
        return _store_episode(editor, content, command)
    match = editor.match(content)
    if command.restated is not None and match.verdict is Verdict.STORE and not match.conflict:
        match = _restated_match(editor, content, command.restated) or match
    if match.verdict is Verdict.SKIP and match.entry is not None:
        return _outcome(count, "skipped", match.entry, match, command), ()
    if match.verdict is Verdict.UPDATE and match.entry is not None:
        new_slug = match.entry.slug or derive_slug(content, editor.taken)
        if not command.dry_run:
            editor.replace(match.entry, new_slug, content)
        written = Entry(line=match.entry.line, slug=new_slug, content=content)
        outcome = _outcome(count, "updated", written, match, command)
        return outcome, _replaced(category, outcome, command.reason)
    asked_about = match.entry is not None and not match.conflict and command.restated is None
    if command.ask_first and asked_about:
        command = msgspec.structs.replace(command, dry_run=True)
    return _insert(editor, derive_slug(content, editor.taken), content, match, command)


def _restated_match(editor: CatalogEditor, content: str, restated: Restated) -> Match | None:
    """The update a model's `restated` verdict makes, if it still applies (the entry
    still says what the model saw, and the content does not contradict it)."""
    if restated.slug is not None:
        target = editor.first_with_slug(restated.slug)
    else:
        target = editor.holding(restated.content)
    if target is None or target.content != restated.content:
        return None
    judgement = judge(target.content, content)
    if judgement.conflict:
        return None
    return msgspec.structs.replace(Match.of(target, judgement), verdict=Verdict.UPDATE)


def _store_episode(
    editor: CatalogEditor, content: str, command: Store
) -> tuple[StoreOutcome, tuple[ArchivedEntry, ...]]:
    """Store an episode without a slug (`memd.core.writes.episode_store`): skipped only when an
    entry says exactly this already, else a new entry under a date-first slug."""
    same = next((entry for entry in editor.candidates(content) if entry.content == content), None)
    if same is not None:
        match = Match(
            verdict=Verdict.SKIP, similarity=1.0, entry=same, conflict=False, relation=Relation.SAME
        )
        return _outcome(editor.count, "skipped", same, match, command), ()
    return _insert(editor, episode_slug(content, editor.taken), content, NO_MATCH, command)


def _store_new_slug(
    editor: CatalogEditor, slug: str, content: str, command: Store
) -> tuple[StoreOutcome, tuple[ArchivedEntry, ...]]:
    """Store `content` as a new entry under `slug`, which no entry has (see the module rules),
    reporting the first candidate it contradicts, else the store decision's match."""
    candidates = editor.candidates(content)
    match = decide(content, candidates)
    if not match.conflict:
        for entry in candidates:
            judgement = judge(entry.content, content)
            if judgement.conflict:
                match = Match.of(entry, judgement)
                break
    return _insert(editor, slug, content, match, command)


def _insert(
    editor: CatalogEditor, slug: str, content: str, match: Match, command: Store
) -> tuple[StoreOutcome, tuple[ArchivedEntry, ...]]:
    """Append `content` under `slug` (unless a dry run); `match` is what it was compared with."""
    count = editor.count
    line = editor.next_line() if command.dry_run else editor.insert(slug, content).line
    written = Entry(line=line, slug=slug, content=content)
    return _outcome(count + 1, "stored", written, match, command), ()


def _check_replaces(editor: CatalogEditor, slug: str | None, replaces: str) -> None:
    """Refuse a store meant to replace `replaces` unless the first entry with `slug` still
    says exactly that.

    Raises:
        InvalidEntry: no slug names the entry to replace.
        EntryNotFound: that entry was edited or removed since the caller read it.
    """
    if slug is None:
        raise InvalidEntry(
            "A store that replaces an entry's text needs that entry's slug; pass `slug`."
        )
    existing = editor.first_with_slug(slug)
    if existing is None or existing.content != replaces:
        raise EntryNotFound(
            f"[{slug}] was edited or removed since it was read, so nothing was stored; read it "
            "again and store against what it says now."
        )


def _upsert_existing(
    category: Category, editor: CatalogEditor, existing: Entry, content: str, asked: Store
) -> tuple[StoreOutcome, tuple[ArchivedEntry, ...]]:
    dry_run = asked.dry_run
    command = Store(content=content, slug=existing.slug, dry_run=dry_run)
    count = editor.count
    match = Match.of(existing, judge(existing.content, content))
    if existing.content == content:
        same = msgspec.structs.replace(match, similarity=1.0, relation=Relation.SAME)
        return _outcome(count, "skipped", existing, same, command), ()
    assert existing.slug is not None
    if not dry_run:
        editor.replace(existing, existing.slug, content)
    written = Entry(line=existing.line, slug=existing.slug, content=content)
    outcome = _outcome(count, "updated", written, match, command)
    return outcome, _replaced(category, outcome, asked.reason)


def _outcome(
    count: int, action: StoreAction, entry: Entry, match: Match, command: Store
) -> StoreOutcome:
    """The outcome of a store that wrote (or would write) `entry`, decided by `match`."""
    return StoreOutcome(
        action=action,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        similarity=round(match.similarity, 4),
        matched=match.entry,
        conflict=match.conflict,
        entries=count,
        dry_run=command.dry_run,
        relation=match.relation,
        old_value=match.old_value,
        new_value=match.new_value,
    )


def restore(editor: CatalogEditor, command: Restore) -> StoreOutcome:
    """Append `command`'s entry as it was acknowledged, unless its slug or text is back."""
    count = editor.count
    by_slug = None if command.slug is None else editor.first_with_slug(command.slug)
    present = by_slug
    if present is None and not command.by_slug:
        present = editor.holding(command.content)
    if present is None:
        slug = command.slug or derive_slug(command.content, editor.taken)
        entry, count = editor.insert(slug, command.content), count + 1
    else:
        entry = present
    return StoreOutcome(
        action="stored" if present is None else "skipped",
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        similarity=0.0 if present is None else 1.0,
        matched=present,
        conflict=False,
        entries=count,
        dry_run=False,
    )


def delete(
    category: Category,
    editor: CatalogEditor,
    slug: str | None,
    *,
    content: str | None = None,
    reason: str = "deleted",
) -> tuple[DeleteOutcome, tuple[ArchivedEntry, ...]]:
    """Remove the first entry whose slug is `slug` from `editor` (with `content`: only if it
    says exactly that; slug None: the first slug-less entry saying `content`); return the
    outcome and its archive record, giving `reason`."""
    if slug is not None:
        target = editor.first_with_slug(slug)
    else:
        target = None if content is None else editor.holding(content, slugless=True)
    if target is None or (content is not None and target.content != content):
        return DeleteOutcome(deleted=False, entry=None), ()
    editor.remove(target)
    record = ArchivedEntry(
        category=category, slug=target.slug, content=target.content, reason=reason
    )
    return DeleteOutcome(deleted=True, entry=target), (record,)


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
