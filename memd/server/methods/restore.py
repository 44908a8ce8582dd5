"""The `restore` method: bring an archived entry back into its category, through its actor.

Rules:
- It finds the newest archive line with the slug (or the exact text), in `category` if given,
  and puts its text back word for word under its slug (a slug-less one under a derived slug;
  `transitions.Restore`), recorded as action "restore" (so `memd undo` can take it back).
- It refuses when the slug now holds another text (saying how to keep both), reports
  "unchanged" when the category holds the text already, and follows the review policy as a
  store does: an agent's restore of a text the project reviews (or an instruction-like one)
  waits in the inbox ("pending").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio

from memd.core.format.archive import ArchiveLine, archive_lines
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.fs import storage
from memd.server.methods import provenance
from memd.server.methods.undo import edit_maker, put_back
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import EntryNotFound, InvalidParams

Hold = Callable[[Workspace, Category, p.StoreParams], Awaitable[p.StoreResult | None]]
"""Put a store into the review inbox if it must wait (`review.hold`); None: it goes direct."""


async def restore(workspace: Workspace, params: p.RestoreParams, hold: Hold) -> p.RestoreResult:
    """The `restore` method (see the module rules)."""
    if (params.slug is None) == (params.text is None):
        raise InvalidParams(
            "restore needs either a slug or an archived entry's exact text; pass one of them "
            "(e.g. `memd restore use-tabs`)."
        )
    found = await anyio.to_thread.run_sync(_newest_archived, workspace.archive_path, params)
    if found is None:
        name = params.slug if params.slug is not None else repr(params.text)
        raise EntryNotFound(
            f"No archived entry {name} in {workspace.archive_path}; `memd blame` lists the "
            "archive lines naming an entry."
        )
    category = workspace.category(found.category)
    content, slug = found.content, found.slug
    result = p.RestoreResult(
        outcome="restored",
        category=category.name,
        slug=slug,
        content=content,
        dry_run=params.dry_run,
        workspace=workspace.root,
    )
    await workspace.refresh((category,))
    checked = _restorable(workspace.actor(category).snapshot.entries, category, slug, content)
    if checked is not None:
        return _with(result, *checked)
    held = await hold(
        workspace,
        category,
        p.StoreParams(
            workspace=params.workspace,
            category=category.name,
            content=content,
            slug=slug,
            dry_run=params.dry_run,
            writer=params.writer,
        ),
    )
    if held is not None:
        result.inbox_id = held.inbox_id
        return _with(result, "pending", held.message)
    if params.dry_run:
        return _with(result, "restored", f"Would restore it into {category.file}.")
    back = await put_back(workspace.actor(category), slug, content)
    if back.action != "stored":
        checked = _restorable(
            [] if back.matched is None else [back.matched], category, slug, content
        )
        return _with(result, *(checked or ("refused", "It changed just now; try again.")))
    edit = edit_maker(category, action="restore")(back.slug, content, None)
    workspace.provenance.add([edit], provenance.current_writer())
    result.slug, result.line = back.slug, back.line
    return _with(result, "restored", f"Restored into {category.file}:{back.line}.")


def _restorable(
    entries: Sequence[Entry], category: Category, slug: str | None, content: str
) -> tuple[p.RestoreOutcome, str] | None:
    """Why the archived entry cannot (or need not) come back now; None: it can."""
    now = next((e for e in entries if slug and e.slug == slug), None)
    if now is not None and now.content == content:
        return ("unchanged", f"[{slug}] is in {category.file} already.")
    if now is not None:
        return (
            "refused",
            f'[{slug}] says "{now.content}" now, so the archived text was not brought back; '
            f"to keep both, store it under a new slug (`memd store -c {category.name} --slug "
            f"{slug}-2 ...`) or see `memd blame {slug}`.",
        )
    if any(e.content == content for e in entries):
        return ("unchanged", f"{category.file} holds its text already.")
    return None


def _with(result: p.RestoreResult, outcome: p.RestoreOutcome, message: str) -> p.RestoreResult:
    result.outcome, result.message = outcome, message
    return result


def _newest_archived(path: str, params: p.RestoreParams) -> ArchiveLine | None:
    try:
        text = storage.read_regular_bytes(path).decode("utf-8", "replace")
    except OSError:
        return None
    wanted = params.category.casefold() if params.category else None
    for line in reversed(archive_lines(text)):
        if wanted is not None and line.category.casefold() != wanted:
            continue
        if (params.slug is not None and line.slug == params.slug) or (
            params.text is not None and line.content == params.text
        ):
            return line
    return None
