"""Every conversion from the core's values to the wire's Structs, and the sentences users read
in them (why a store was skipped, updated or stored; what a cleanup plans; what a delete did;
why nothing was found), shared by the methods and the workspaces' change feeds.

Rules:
- Pure, and a leaf: imports only the core and the client package (`memd_client`), so every part
  of the server may use it; callers unpack their own types (a snapshot, a searched file) into
  the plain values taken here.
- One home for every conversion to a result Struct and every sentence a result or a method's
  not-found error carries. Errors refusing bad params say theirs where the rule they enforce
  is checked (`read_filters`, `scopes`, `registry`, ...).

Size: over the ~400-line guide: one short function per result Struct, and the tables of the
sentences a store and a cleanup carry; the one home of both (see the rules).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from memd.core.citations.model import EntryCheck
from memd.core.format.archive import ARCHIVE_FILE
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.format.path_scopes import scope_of
from memd.core.format.procedures import read_procedure, same_name
from memd.core.format.render import entry_ref
from memd.core.format.tags import tags_of
from memd.core.search.file_scope import Reason
from memd.core.search.outcomes import Record
from memd.core.search.prompt_block import Block, Layer, Placed
from memd.core.search.shelves import Key, origin
from memd.core.sources.chunks import Chunk
from memd.core.transcripts.chunks import ChatChunk
from memd.core.writes import transitions
from memd.core.writes.cleanup import MERGE_REASONS, CleanupPlan, Prune
from memd.core.writes.judge import Relation
from memd_client import protocol as p
from memd_client._paths import MEMORY_DIR
from memd_client.errors import EntryNotFound, RpcError


def entry_info(
    category: Category,
    entry: Entry,
    tags: frozenset[str] | None = None,
    source: p.Scope = "project",
) -> p.EntryInfo:
    """Return the wire form of `entry` of the memory `source` names (the workspace's, or the
    user-wide one); `tags` are its tags when already known (a snapshot's `tags`), else they are
    read from its content."""
    if tags is None:
        tags = tags_of(entry.content)
    return p.EntryInfo(
        category=category.name,
        file=category.file,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        tags=sorted(tags) if tags else [],
        source="global" if source == "global" else "memory",
    )


def store_result(
    category: Category, outcome: transitions.StoreOutcome, root: str, created_memory_dir: bool
) -> p.StoreResult:
    """Return the wire result, with a sentence for people, for a store outcome in the workspace
    at `root` (`created_memory_dir`: this store created its `.memory/`)."""
    matched = (
        None
        if outcome.matched is None
        else p.MatchedEntry(
            slug=outcome.matched.slug, content=outcome.matched.content, line=outcome.matched.line
        )
    )
    over_limit = outcome.entries > category.limit
    return p.StoreResult(
        action=outcome.action,
        category=category.name,
        file=category.file,
        line=outcome.line,
        slug=outcome.slug,
        content=outcome.content,
        similarity=outcome.similarity,
        matched=matched,
        message=store_message(category, outcome, over_limit),
        conflict=outcome.conflict,
        over_limit=over_limit,
        dry_run=outcome.dry_run,
        entries=outcome.entries,
        limit=category.limit,
        normalized=outcome.normalized,
        relation=None if outcome.relation is None else outcome.relation.value,
        old_value=outcome.old_value,
        new_value=outcome.new_value,
        workspace=root,
        created_memory_dir=created_memory_dir,
    )


_SKIP_WHY = {
    Relation.SAME: "the same rule, worded the same way",
    Relation.SAYS_LESS: "it already says everything the new text says",
}
_UPDATE_WHY = {
    Relation.TAGS: "the same rule with other tags",
    Relation.ADDS_DETAIL: "the same rule with more detail",
    Relation.VALUE_MADE_EXACT: "the same value made exact",
    Relation.BROADENS: "the same rule, now without its limit",
    Relation.REWORDED: "read as the same rule reworded; if it was a different one, restore it "
    "from .memory/archive.md",
}
"""Why a store without a slug updated an entry; any other update was asked for by its slug."""
_STORE_WHY = {
    Relation.SAME: "the same rule, stored under the slug you gave",
    Relation.SAYS_LESS: "it already says all this; stored under the slug you gave",
    Relation.NARROWS: "a narrower ban; the wider one still holds, so delete it if it should not",
    Relation.OTHER_SUBJECT: "about another subject",
    Relation.OTHER_ROLES: "the same words in other roles",
    Relation.DIFFERENT: "worded too differently to be sure they are one rule; if they are, "
    "delete one",
    Relation.TAGS: "the same rule with other tags, stored under the slug you gave",
    Relation.ADDS_DETAIL: "the same rule with more detail, stored under the slug you gave",
    Relation.VALUE_MADE_EXACT: "the same value made exact, stored under the slug you gave",
    Relation.BROADENS: "the same rule without its limit, stored under the slug you gave",
    Relation.REWORDED: "read as the same rule reworded, stored under the slug you gave",
}
"""Why a store kept both entries; a store without a slug skips or updates for the relations
named "under the slug you gave" (a new slug always makes its own entry)."""


def _other_procedure(category: Category, old: Entry, content: str) -> bool:
    """True when `content`, stored into `category`, is a procedure named other than `old`'s
    (kept beside it for its name, whether or not a slug was given)."""
    if category.kind != "procedure":
        return False
    first, second = read_procedure(old.content).name, read_procedure(content).name
    return first is None or second is None or not same_name(first, second)


def store_message(category: Category, outcome: transitions.StoreOutcome, over_limit: bool) -> str:
    """Return the human sentence describing a store outcome: what was done and why."""
    file, slug, content = category.file, outcome.slug, outcome.content
    old = outcome.matched
    if outcome.action == "skipped" and old is not None:
        why = _SKIP_WHY.get(outcome.relation or Relation.SAME, "the same rule")
        text = (
            f'Already stored as [{slug}] in {file}: "{content}" ({why}); nothing written. To keep '
            "it anyway, store it again with a slug of its own."
        )
    elif outcome.action == "updated" and old is not None and outcome.conflict:
        text = (
            f"Updated [{slug}] in {file}, replacing a contradicting entry (conflict: "
            f'{_conflict_why(outcome)}): "{content}" (was: "{old.content}", now in '
            ".memory/archive.md)"
        )
    elif outcome.action == "updated" and old is not None:
        why = _UPDATE_WHY.get(outcome.relation or Relation.SAME, "set by its slug")
        text = f'Updated [{slug}] in {file} ({why}): "{content}" (replaced: "{old.content}")'
    else:
        text = f'Stored in {file} as [{slug}]: "{content}"'
        kept = _STORE_WHY.get(outcome.relation) if outcome.relation else None
        if kept is not None and old is not None and _other_procedure(category, old, content):
            kept = kept.replace("stored under the slug you gave", "a procedure of another name")
        if outcome.relation is Relation.OTHER_SUBJECT:
            kept = _limit_why(outcome.old_value, outcome.new_value) or kept
        if old is not None and outcome.conflict:
            text += (
                f' (conflict: {_label(old)} says "{old.content}"; '
                f"{_conflict_why(outcome, 'the new entry reverses it')}; both kept, delete the "
                "one that is wrong)"
            )
        elif old is not None and kept is not None:
            text += f' (kept beside {_label(old)} "{old.content}": {kept}{_swap(outcome)})'
    if outcome.normalized:
        text += " (line breaks and runs of whitespace became single spaces: one memory, one line)"
    if outcome.dry_run:
        text = f"Dry run, nothing written; would have done this: {text}"
    if over_limit:
        text += (
            f" {category.name} now holds {outcome.entries} entries, over its limit of "
            f"{category.limit}; run `memd cleanup` to review."
        )
    return text


def _label(entry: Entry) -> str:
    """`[slug]`, or for an entry without one (written by hand or by HackLM) its line."""
    return f"[{entry.slug}]" if entry.slug else f"the entry on line {entry.line}"


def _conflict_why(
    outcome: transitions.StoreOutcome, reversed_why: str = "it reverses the old rule"
) -> str:
    """What changed in a conflicting store or update, as a phrase (`reversed_why` for a
    reversed rule)."""
    old, new = outcome.old_value, outcome.new_value
    if outcome.relation is Relation.REVERSED:
        return reversed_why
    what = "value" if outcome.relation is Relation.CHANGED_VALUE else "choice"
    if old and new:
        return f'the {what} changed from "{old}" to "{new}"'
    return f"the {what} changed"


def _limit_why(dropped: str | None, added: str | None) -> str | None:
    """Why a rule was kept beside another that it widens or narrows (one side of the swap
    empty: the phrase limiting where a rule holds, dropped or added); else None."""
    if dropped and not added:
        return f'a wider rule, without "{dropped}"'
    if added and not dropped:
        return f'a narrower rule, only "{added}"; the wider one still holds'
    return None


def _swap(outcome: transitions.StoreOutcome) -> str:
    """ ", "<new>" instead of "<old>"" when a store named which words differ."""
    if outcome.old_value and outcome.new_value:
        return f', "{outcome.new_value}" instead of "{outcome.old_value}"'
    return ""


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"


def cleanup_result(
    archive_path: str,
    plans: dict[Category, CleanupPlan],
    applied: bool,
    scope: p.Scope = "project",
) -> p.CleanupResult:
    """Return the wire form of the per-category cleanup plans of the memory `scope` names; its
    sentence says what the plan does and whether anything was written, never how to apply it
    (each front end says that in its own terms: `memd cleanup --apply`, `apply: true`)."""

    def info(category: Category, entry: Entry) -> p.EntryInfo:
        return entry_info(category, entry, source=scope)

    merged = [
        p.MergeInfo(
            category=c.name,
            file=c.file,
            kept=info(c, m.kept),
            removed=[info(c, e) for e in m.removed],
            content=m.content,
            slug=m.slug,
            why=[MERGE_REASONS.get(relation, relation.value) for relation in m.relations],
        )
        for c, plan in plans.items()
        for m in plan.merges
    ]
    pruned = [
        p.PruneInfo(
            category=c.name,
            file=c.file,
            entry=info(c, x.entry),
            score=x.score,
            why=prune_why(c, plan.limit, x, sides_kept=bool(plan.kept_sides)),
            tied_with=None if x.tied_with is None else info(c, x.tied_with),
            contradicted_by=None if x.contradicted_by is None else info(c, x.contradicted_by),
        )
        for c, plan in plans.items()
        for x in plan.prunes
    ]
    slugged = [
        p.SlugInfo(category=c.name, file=c.file, entry=info(c, s.entry), slug=s.slug)
        for c, plan in plans.items()
        for s in plan.slugs
    ]
    return p.CleanupResult(
        applied=applied,
        merged=merged,
        pruned=pruned,
        slugged=slugged,
        archive=archive_path,
        message=cleanup_message(plans.values(), applied),
    )


def stale_info(category: Category, entry: Entry, note: str, *, archived: bool) -> p.StaleInfo:
    """The wire form of an entry `cleanup` proposes to archive since its every citation is gone
    from the code (`note` says which)."""
    return p.StaleInfo(
        category=category.name,
        file=category.file,
        entry=entry_info(category, entry),
        why=note,
        archived=archived,
    )


def stale_reason(note: str) -> str:
    """The archive reason of an entry archived by cleanup because its code is gone (no " | ":
    the archive line's separator)."""
    return f"stale: {note}".replace(" | ", " / ")


def prune_why(category: Category, limit: int, prune: Prune, *, sides_kept: bool = False) -> str:
    """Why a pruned entry goes, in words; on a tie, which entry stays instead and why; and the
    newer side of a contradiction that stays (`sides_kept`: the plan kept such entries, which
    may score less)."""
    why = f"over the {category.name} limit of {limit}; it scores {prune.score}"
    tied = prune.tied_with
    if tied is None:
        but = " by its score (a contradiction's newer side stays whatever it scores)"
        why = f"{why}, less than every entry that stays{but if sides_kept else ''}"
    else:
        other = entry_ref(category.file, tied.line, tied.slug, tied.content)
        why = f"{why}, as does {other}, which stays as the newer entry (further down the file)"
    side = prune.contradicted_by
    if side is None:
        return why
    other = entry_ref(category.file, side.line, side.slug, side.content)
    how = _CONTRADICTS.get(prune.relation or Relation.REVERSED, "contradicts it")
    return (
        f"{why}; {other} {how} and stays although the limit would prune it too: cleanup keeps "
        "the newer side of a contradiction"
    )


_CONTRADICTS = {
    Relation.REVERSED: "reverses it",
    Relation.CHANGED_VALUE: "gives it another value",
    Relation.CHANGED_CHOICE: "makes another choice",
}
"""How the entry kept beside a pruned one contradicts it, in words."""


def cleanup_message(plans: Iterable[CleanupPlan], applied: bool) -> str:
    """Return one sentence: what the cleanup did or would do, then that nothing was written or
    where the removed entries went."""
    plans = list(plans)
    merges = sum(len(plan.merges) for plan in plans)
    merged = sum(plan.merged_count for plan in plans) + merges
    pruned = sum(plan.pruned_count for plan in plans)
    slugged = sum(plan.slugged_count for plan in plans)
    if not (merged or pruned or slugged):
        return "Memory is already clean; nothing to merge, prune or slug."
    done = [
        (merged, f"merge{'d' * applied} {_count(merged, 'entry', 'entries')} into {merges}"),
        (pruned, f"prune{'d' * applied} {_count(pruned, 'entry', 'entries')} over the limit"),
        (slugged, f"{'gave' if applied else 'give'} {_count(slugged, 'entry', 'entries')} a slug"),
    ]
    sides = sum(1 for plan in plans for prune in plan.prunes if prune.contradicted_by)
    if sides:
        done[1] = (
            pruned,
            done[1][1] + f" (keeping the newer side of {_count(sides, 'contradiction')})",
        )
    parts = [part for count, part in done if count]
    said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    if not applied:
        return f"Cleanup would {said}; nothing was written."
    if merged or pruned:
        return f"Cleanup {said}; the removed entries are kept in {MEMORY_DIR}/{ARCHIVE_FILE}."
    return f"Cleanup {said}."


def file_problem(category: Category, error: RpcError) -> p.FileProblem:
    """Return why the category's file could not be read (`error`), for a result to carry."""
    return p.FileProblem(
        category=category.name, file=category.file, code=error.code, message=error.message
    )


def query_hit(
    key: Key,
    entry: Entry,
    score: float,
    match: p.Match,
    *,
    memory_dir: str,
    chunk: Chunk | None = None,
    checked: StatusNote = (None, ""),
    record: Record | None = None,
) -> p.QueryHit:
    """One query result, saying where it lives: the workspace's memory (`path` relative to the
    workspace), the user-wide one (`path` absolute, in its `memory_dir`) or a read-only source
    (`chunk` given: its path, the chunk's lines and its own text); `checked` is its status
    against the code it cites and the stale note; `record`, a procedure's outcome record."""
    source = origin(key)
    if chunk is not None:
        assert not isinstance(key, Category)
        return p.QueryHit(
            category="",
            file=key.path,
            line=chunk.start,
            slug=None,
            content=chunk.text,
            score=score,
            match=match,
            source="file",
            path=key.path,
            lines=f"{chunk.start}-{chunk.end}",
        )
    category = key if isinstance(key, Category) else key.category
    assert category is not None
    return p.QueryHit(
        category=category.name,
        file=category.file,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        score=score,
        tags=sorted(tags_of(entry.content)),
        match=match,
        source=source,
        path=(
            os.path.join(memory_dir, category.file)
            if source == "global"
            else f"{MEMORY_DIR}/{category.file}"
        ),
        lines=f"{entry.line}-{entry.line}",
        status=checked[0],
        stale=checked[1],
        outcomes=None if record is None else outcome_counts(record),
    )


def chat_hit(
    said: tuple[str, str, p.Agent], part: ChatChunk, score: float, match: p.Match
) -> p.QueryHit:
    """One query result from a past session: turns `part.first`-`part.last` of the transcript
    `said` names (its absolute path, its session, its agent), its masked words and time."""
    path, session, agent = said
    return p.QueryHit(
        category="",
        file=path,
        line=part.first,
        slug=None,
        content=part.text,
        score=score,
        match=match,
        source="chat",
        path=path,
        lines=f"{part.first}-{part.last}",
        session=session,
        at=part.timestamp,
        agent=agent,
    )


def _placed_source(placed: Placed) -> p.Origin:
    """Where a placed entry lives on the wire."""
    if placed.layer == "chat":
        return "chat"
    return "file" if placed.category is None else placed.source


def outcome_counts(record: Record) -> p.OutcomeCounts:
    """A procedure's outcome record on the wire."""
    return p.OutcomeCounts(successes=record.successes, failures=record.failures)


def context_result(
    block: Block,
    *,
    budget_tokens: int,
    unreadable: list[p.FileProblem],
    root: str,
    loading: p.SemanticLoading | None,
    checked: Callable[[Placed], StatusNote] = lambda placed: (None, ""),
    already_given: int = 0,
) -> p.ContextResult:
    """Return the wire form of a prompt's memory block (`memd.core.search.prompt_block`);
    `checked` gives each placed entry's status and stale note; `already_given` counts the
    entries left out because the session had them."""
    return p.ContextResult(
        markdown=block.markdown,
        tokens=block.tokens,
        budget_tokens=budget_tokens,
        entries=[
            p.ContextEntry(
                layer=placed.layer,
                category="" if placed.category is None else placed.category.name,
                file=placed.path if placed.category is None else placed.category.file,
                line=placed.entry.line,
                slug=placed.entry.slug,
                content=placed.entry.content,
                score=placed.score,
                lines=placed.lines,
                source=_placed_source(placed),
                session=placed.session,
                at=placed.at,
                status=checked(placed)[0],
                stale=checked(placed)[1],
                outcomes=None if placed.record is None else outcome_counts(placed.record),
            )
            for placed in block.entries
        ],
        omitted=block.omitted,
        omitted_procedures=[
            placed.entry.slug or placed.entry.content for placed in block.omitted_procedures
        ],
        unreadable=unreadable,
        workspace=root,
        semantic_loading=loading,
        already_given=already_given,
    )


def why_entry(
    category: Category,
    entry: Entry,
    source: Literal["memory", "global"],
    layer: Layer | None,
    reason: Reason,
    detail: str,
) -> p.WhyEntry:
    """The wire form of one entry `why` explains (`memd.core.search.file_scope`)."""
    scope = scope_of(entry.content)
    return p.WhyEntry(
        category=category.name,
        file=category.file,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        source=source,
        layer=layer,
        reason=reason,
        detail=detail,
        paths=list(scope.globs),
        problem=scope.problem,
    )


StatusNote = tuple[p.CheckStatus | None, str]
"""An entry's status against the code it cites (None: not checked yet) and its stale note."""


def checked_entry(
    category: Category, entry: Entry, check: EntryCheck, note: str, fix: str | None
) -> p.CheckedEntry:
    """The wire form of one entry's check against the code it cites."""
    return p.CheckedEntry(
        category=category.name,
        file=category.file,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        status=check.status,
        anchors=[
            p.AnchorInfo(
                text=found.anchor.text,
                kind=found.anchor.kind,
                status=found.status,
                evidence=found.evidence,
                moved_to=found.moved_to,
            )
            for found in check.anchors
        ],
        note=note,
        fix=fix,
    )


def check_result(
    entries: Sequence[p.CheckedEntry],
    *,
    checked_at: str,
    root: str,
    git: bool,
    unreadable: list[p.FileProblem],
    problem: str = "",
) -> p.CheckResult:
    """The wire form of a workspace's check: stale entries first, then the others, each group in
    category and file order (as given), with the counts."""
    ordered = sorted(entries, key=lambda checked: checked.status != "stale")
    counts = p.CheckCounts(
        ok=sum(e.status == "ok" for e in entries),
        stale=sum(e.status == "stale" for e in entries),
        none=sum(e.status == "none" for e in entries),
    )
    return p.CheckResult(
        entries=list(ordered),
        counts=counts,
        checked_at=checked_at,
        workspace=root,
        git=git,
        unreadable=unreadable,
        problem=problem,
    )


def category_stats(
    category: Category,
    *,
    entries: int,
    exists: bool,
    error: RpcError | None,
    conflict: RpcError | None,
) -> p.CategoryStats:
    """Return one row of `stats`: the category's entry count and limit, whether its file
    exists, and why it cannot be read or holds conflict markers."""
    return p.CategoryStats(
        category=category.name,
        file=category.file,
        entries=entries,
        limit=category.limit,
        exists=exists,
        error=None if error is None else error.message,
        conflict=None if conflict is None else conflict.message,
    )


def source_stats(chunks: dict[str, int], refused: list[str], indexed_at: str) -> dict[str, object]:
    """Return the `stats` fields of a workspace's read-only sources: each file's chunk count
    (`chunks`, by path), the paths refused, and when they were last looked at (ISO 8601)."""
    return {
        "sources": [
            p.SourceStats(path=path, chunks=count) for path, count in sorted(chunks.items())
        ],
        "sources_refused": refused,
        "sources_indexed_at": indexed_at,
    }


def source_lines(path: str, chunks: Sequence[Chunk], text: str, root: str) -> p.EntriesResult:
    """Return `get`'s result for lines of the read-only source `path`: its `text` there and the
    `chunks` within them."""
    return p.EntriesResult(
        entries=[
            p.EntryInfo(category="", file=path, line=part.start, slug=None, content=part.text)
            for part in chunks
        ],
        workspace=root,
        text=text,
    )


def delete_result(
    category: Category, slug: str, deleted: Entry | None, scope: p.Scope, root: str
) -> p.DeleteResult:
    """Return the wire result of deleting `slug` from `category` (`deleted`: the entry archived,
    None when there was none), with its sentence."""
    if deleted is None:
        return p.DeleteResult(
            deleted=False,
            entry=None,
            message=f"No entry [{slug}] in {category.file}; nothing was deleted.",
            workspace=root,
        )
    return p.DeleteResult(
        deleted=True,
        entry=entry_info(category, deleted, source=scope),
        message=f"Deleted [{slug}] from {category.file}; it is kept in {ARCHIVE_FILE}.",
        workspace=root,
    )


def no_entry_with_slug(
    slug: str, categories: Sequence[Category], unreadable: Sequence[p.FileProblem]
) -> EntryNotFound:
    """The error for a `get` by slug that found nothing in `categories` (naming the files that
    could not be searched)."""
    where = categories[0].file if len(categories) == 1 else "any category"
    unsearched = "".join(
        f" ({problem.file} could not be read: {problem.message})" for problem in unreadable
    )
    return EntryNotFound(
        f"No entry [{slug}] in {where}{unsearched}; list the entries "
        "(`list`) to see the slugs that exist."
    )


def not_a_source(path: str, categories: Iterable[Category]) -> EntryNotFound:
    """The error for a `get` of lines from a file that is neither a memory file nor one of the
    workspace's read-only sources."""
    valid = ", ".join(c.file for c in categories)
    hint = " (a user-wide memory file needs scope global)" if os.path.isabs(path) else ""
    return EntryNotFound(
        f"{path} is neither a memory file ({valid}), nor one of this workspace's "
        f"read-only sources, nor a past session of it{hint}; use a path as query results "
        "give it."
    )
