"""The shell around episodes: their decay in a search, their consolidation in `cleanup`, and the
archive searched when a query asks (`include_archived`).

Rules:
- Today is the daemon's (its clock, in local time, as the archive's dates are); the pure rules
  live in `memd.core.format.episodes`, `memd.core.search.decay` and
  `memd.core.writes.consolidation`.
- Decay multiplies an episode's score (an entry of a category whose `kind` is "episode"), in
  `query` and in `context`'s ranking alike, with the usage nudge (`search.usage_boost`).
- Consolidation runs after the categories' own cleanup (so with `apply` every entry has its
  slug by then). Archiving goes through each episode category's actor (`Delete` with the
  planned text and the reason: an episode edited meanwhile is left alone and reported as not
  archived); a promotion is one store into the Quirk category through the one store path,
  under the new slug the plan gave it (a new entry, never an update of another Quirk).
- The archive (`.memory/archive.md`; the dated files it was moved aside to are not searched) is
  read only for a query that asks, and at most `max_archive_bytes` of it (memd moves it aside
  before that size); one it cannot use (too big, not text, a link) is named in the query's
  `unreadable` and the live hits are still served. Its records are ranked by the same words
  rules, with the archive's own statistics, per category they were removed from (a record of
  a category the workspace no longer has is left out), and merged with the live hits by score
  (their scores are by words alone: a hybrid query's live scores are on another scale).
- A query's filters apply to archived records as to live entries (`ArchiveFilter`): its
  category, its tags (all of them), its `min_score`; sources without "memory" search no archive.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import NamedTuple

import anyio
import msgspec

from memd.core.format.archive import ARCHIVE_FILE, ArchiveLine, archive_lines
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.format.tags import tags_of
from memd.core.search import ranking
from memd.core.writes import transitions
from memd.core.writes.consolidation import ConsolidationPlan, plan_consolidation
from memd.fs import storage
from memd.paths import MEMORY_DIR
from memd.server.rpc import wire
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import RpcError

Store = Callable[..., Awaitable[p.StoreResult]]
"""The one store path (`Methods._store_into`), for a promotion (with its own new slug)."""


def today() -> datetime.date:
    """The daemon's today (local time, as the archive's dates)."""
    return datetime.date.fromtimestamp(time.time())


async def consolidate(
    workspace: Workspace, *, apply: bool, max_age_days: int, store: Store
) -> tuple[list[p.ConsolidatedInfo], list[p.PromotedInfo]]:
    """Plan (and with `apply`, carry out) the consolidation of every episode category of
    `workspace` (see the module rules)."""
    quirks = [
        entry
        for category in workspace.categories
        if category is Category.QUIRK
        for entry in workspace.actor(category).snapshot.entries
    ]
    consolidated: list[p.ConsolidatedInfo] = []
    promoted: list[p.PromotedInfo] = []
    for category in workspace.categories:
        if category.kind != "episode":
            continue
        plan = _plan(workspace, category, max_age_days, quirks)
        for archival in plan.archive:
            entry = archival.entry
            archived = False
            if apply and entry.slug is not None:
                command = transitions.Delete(
                    slug=entry.slug, content=entry.content, reason=archival.reason
                )
                archived = (await workspace.actor(category).delete(command)).deleted
            consolidated.append(
                p.ConsolidatedInfo(
                    category=category.name,
                    file=category.file,
                    entry=wire.entry_info(category, entry),
                    why=archival.reason,
                    archived=archived,
                )
            )
        for promotion in plan.promote:
            stored = None
            if apply:
                stored = await store(
                    workspace, Category.QUIRK, promotion.content, slug=promotion.slug
                )
            promoted.append(
                p.PromotedInfo(
                    category=Category.QUIRK.name,
                    content=promotion.content,
                    episodes=[wire.entry_info(category, entry) for entry in promotion.episodes],
                    stored=stored,
                )
            )
    return consolidated, promoted


def _plan(
    workspace: Workspace, category: Category, max_age_days: int, quirks: list[Entry]
) -> ConsolidationPlan:
    """The consolidation plan of one episode category, as its file is now."""
    episodes = workspace.actor(category).snapshot.entries
    recalled = {}
    for entry in episodes:
        at = workspace.usage.last_recalled(category, entry)
        if at:
            recalled[entry.line] = datetime.date.fromtimestamp(at)
    return plan_consolidation(
        category,
        episodes,
        today=today(),
        max_age_days=max_age_days,
        last_recalled=recalled,
        quirks=quirks,
    )


def consolidation_message(
    consolidated: Iterable[p.ConsolidatedInfo], promoted: Iterable[p.PromotedInfo], apply: bool
) -> str:
    """One sentence on the consolidation ("" when it proposes nothing)."""
    archive, lessons = list(consolidated), list(promoted)
    if not archive and not lessons:
        return ""
    if apply:
        done = sum(1 for info in archive if info.archived)
        stored = sum(1 for info in lessons if info.stored and info.stored.action != "skipped")
        return (
            f" Episodes: {done} old unrecalled archived, {stored} recurring lesson(s) stored as "
            "Quirks (the episodes stay)."
        )
    return (
        f" Episodes: {len(archive)} old unrecalled to archive, {len(lessons)} recurring "
        "lesson(s) to store as Quirks (the episodes stay)."
    )


class ArchivedHit(msgspec.Struct, frozen=True, kw_only=True):
    """An archived record a query found: its category, the record and its score."""

    category: Category
    record: ArchiveLine
    score: float


class ArchiveFilter(NamedTuple):
    """What a query keeps of the archived records, as of its live entries: their categories,
    the tags each must carry (all of them), and the lowest score."""

    categories: frozenset[Category]
    tags: frozenset[str] = frozenset()
    min_score: float | None = None

    def keeps(self, category: Category, content: str) -> bool:
        """Whether a record of `category` with `content` passes the category and tag filters."""
        return category in self.categories and self.tags <= tags_of(content)


async def search_archive(
    workspace: Workspace, query: str, limit: int, wanted: ArchiveFilter
) -> tuple[list[ArchivedHit], list[p.FileProblem]]:
    """The best `limit` archived records of `workspace` for `query` that `wanted` keeps (see
    the module rules); none when it has no archive, and none but its problem when memd cannot
    use it."""
    path = workspace.archive_path
    try:
        found = await anyio.to_thread.run_sync(read_archive, path, workspace.max_archive_bytes)
    except RpcError as exc:
        return [], [p.FileProblem(category="", file=ARCHIVE_FILE, code=exc.code, message=str(exc))]
    except OSError as exc:
        message = f"{path} could not be read ({exc.strerror}); archived entries were not searched."
        return [], [p.FileProblem(category="", file=ARCHIVE_FILE, code=1007, message=message)]
    if not found:
        return [], []
    records: dict[int, ArchiveLine] = {record.line: record for record in found}
    by_category: dict[Category, list[Entry]] = {}
    for record in found:
        category = workspace.categories.get(record.category.strip())
        if category is not None and wanted.keeps(category, record.content):
            entry = Entry(line=record.line, slug=record.slug, content=record.content)
            by_category.setdefault(category, []).append(entry)
    indexes = [(c, ranking.build_index(tuple(e))) for c, e in by_category.items()]
    result = ranking.search(indexes, query, limit=limit)
    hits = [
        ArchivedHit(category=hit.key, record=records[hit.entry.line], score=hit.score)
        for hit in result.hits
        if hit.score > 0 and (wanted.min_score is None or hit.score >= wanted.min_score)
    ]
    return hits, []


def read_archive(path: str, max_bytes: int) -> tuple[ArchiveLine, ...]:
    """The records of the archive at `path` (blocking; none when it does not exist).

    Raises:
        FileFormatError: it is over `max_bytes` (memd moves it aside before that, so a bigger
            one came from elsewhere), a link or not UTF-8 text.
        StorageError: the file system refused the read.
    """
    if not os.path.exists(path):
        return ()
    read = storage.read_text(path, follow_links=False, max_bytes=max_bytes)
    return () if read is None else archive_lines(read[0])


def archived_query_hit(hit: ArchivedHit) -> p.QueryHit:
    """The wire form of an archived record found by a query."""
    record = hit.record
    return p.QueryHit(
        category=hit.category.name,
        file=ARCHIVE_FILE,
        line=record.line,
        slug=record.slug,
        content=record.content,
        score=hit.score,
        path=f"{MEMORY_DIR}/{ARCHIVE_FILE}",
        lines=f"{record.line}-{record.line}",
        archived=True,
        archived_reason=record.reason,
        archived_on=record.date,
    )
