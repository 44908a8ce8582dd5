"""Provenance in the handlers: who the current request's writer is, recording what a store,
delete or cleanup did (`memd.core.provenance.record`), and the `history` method.

Rules:
- The writer is the request's `writer` param (`protocol.Writer`), set for the request's task by
  `Methods._leasing` (`writing_as`); a write without one is recorded as `record.UNKNOWN`.
  `extract` with `store` records its stores with origin "extracted".
- A dry run, a skipped store and a delete that found nothing record nothing.
- `history` reads the record and the archive lines that name the entry (by slug, or by its
  text for an entry without one), at most MAX_ARCHIVED of them, newest last.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import anyio
import msgspec

from memd.core.format.archive import archive_lines
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.provenance import record
from memd.core.writes import transitions
from memd.fs import storage
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import InvalidParams

MAX_ARCHIVED = 50
_writer: contextvars.ContextVar[p.Writer | None] = contextvars.ContextVar("writer", default=None)


@contextlib.contextmanager
def writing_as(params: Any) -> Iterator[None]:
    """Make `params.writer` (if the params have one) the writer of this request's writes."""
    token = _writer.set(getattr(params, "writer", None))
    try:
        yield
    finally:
        _writer.reset(token)


def current_writer() -> p.Writer | None:
    """The writer of this request's writes (None: the request did not say)."""
    return _writer.get()


@contextlib.contextmanager
def extracting() -> Iterator[None]:
    """Record the writes inside as origin "extracted" (the client's name kept)."""
    writer = _writer.get() or p.Writer(client=record.UNKNOWN.client)
    token = _writer.set(msgspec.structs.replace(writer, origin="extracted"))
    try:
        yield
    finally:
        _writer.reset(token)


def record_store(
    workspace: Workspace, category: Category, outcome: transitions.StoreOutcome
) -> None:
    """Record a store that stored or updated an entry."""
    if outcome.dry_run or outcome.action == "skipped":
        return
    updated = outcome.action == "updated"
    replaced = outcome.matched.content if updated and outcome.matched is not None else None
    edit = record.Edit(
        action="update" if updated else "store",
        category=category.name,
        slug=outcome.slug,
        text=outcome.content,
        replaced=replaced,
    )
    workspace.provenance.add([edit], _writer.get())


def record_delete(workspace: Workspace, category: Category, entry: Entry | None) -> None:
    """Record a delete that removed `entry` (None: nothing was deleted)."""
    if entry is None:
        return
    edit = record.Edit(
        action="delete", category=category.name, slug=entry.slug, text=None, replaced=entry.content
    )
    workspace.provenance.add([edit], _writer.get())


def entries_now(workspace: Workspace) -> dict[Category, tuple[Entry, ...]]:
    """Every category's entries as they stand (to diff a cleanup's before and after)."""
    return {c: tuple(actor.snapshot.entries) for c, actor in workspace.actors.items()}


def record_cleanup(
    workspace: Workspace,
    before: Mapping[Category, Sequence[Entry]],
    after: Mapping[Category, Sequence[Entry]],
) -> None:
    """Record what an applied cleanup changed in every category, as one operation."""
    edits = [
        edit
        for category, entries in before.items()
        for edit in record.diff(category.name, entries, after.get(category, ()), action="cleanup")
    ]
    workspace.provenance.add(edits, _writer.get())


async def history(workspace: Workspace, params: p.HistoryParams) -> p.HistoryResult:
    """The `history` method (see the module rules)."""
    if (params.slug is None) == (params.text is None):
        raise InvalidParams(
            "history needs either a slug or an entry's exact text; pass one of them "
            "(e.g. `memd blame use-tabs`)."
        )
    changes = workspace.provenance.changes
    if params.slug is not None:
        found = record.history_of_slug(changes, params.slug)
        wanted = f"[{params.slug}]"
    else:
        assert params.text is not None
        found = record.history_of_text(changes, params.text)
        wanted = params.text
    archived = await anyio.to_thread.run_sync(_archived, workspace.archive_path, params, wanted)
    versions = [p.Version(**msgspec.structs.asdict(change)) for change in found]
    name = params.slug if params.slug is not None else repr(params.text)
    if versions or archived:
        message = f"{len(versions)} recorded versions of {name}" + (
            f", and {len(archived)} archive lines naming it." if archived else "."
        )
    else:
        message = (
            f"No recorded history for {name}: it was written before memd recorded provenance, "
            "or by hand while memd was not running; `memd list` shows what there is."
        )
    return p.HistoryResult(
        versions=versions, archived=archived, message=message, workspace=workspace.root
    )


def _archived(path: str, params: p.HistoryParams, wanted: str) -> list[str]:
    try:
        text = storage.read_regular_bytes(path).decode("utf-8", "replace")
    except OSError:
        return []
    found = []
    for line in archive_lines(text):
        if (params.slug is not None and line.slug == params.slug) or (
            params.text is not None and line.content == wanted
        ):
            found.append(_render(line.date, line.category, line.reason, line.slug, line.content))
    return found[-MAX_ARCHIVED:]


def _render(date: str, category: str, reason: str, slug: str | None, content: str) -> str:
    entry = f"[{slug}] {content}" if slug else content
    return f"{date} | {category} | {reason} | {entry}"
