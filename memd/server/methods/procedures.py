"""The `procedure` and `outcome` methods, and what the other methods add for procedures
(issue 33; the line format: `memd.core.format.procedures`, the ranking:
`memd.core.search.outcomes`).

Rules:
- `procedure` renders the name and steps as one line and stores it through the one store path
  into `Category.PROCEDURE`, always under a slug (`memd.core.writes.procedure_slugs`: the given
  one, else its namesake's, else a new one), so the store is an upsert by slug: never skipped
  as a duplicate of another procedure, never replacing another. The slug is chosen and stored
  under the workspace's procedure lock (one `procedure` call at a time a workspace), after the
  file is re-read, so two calls at once never pick the same new slug for different names.
- `store` into a procedure category without a slug (`store_named`): content in the procedure
  shape (a name before its first ": ") gets its procedure's slug the same way, under the same
  lock, so a plain store of a procedure also updates its namesake and never replaces, nor is
  skipped for, another procedure; any other content takes the normal store path.
- `outcome` finds the procedure by slug in the workspace's procedure categories (`kind`
  "procedure"); an unknown slug is an error naming where to look. The count goes to the usage
  sidecar (`UsageStore.record_outcome`), never to the Markdown.
- Layer C of `context` (`for_task`, `layer_c`): the procedure categories ranked against the
  task as layer B is, only for a call with text (a block for a file alone, the file hook's, has
  none), without those the agent session was given before, ordered by their outcomes
  (`memd.core.search.procedure_layer.choose`).
- Procedures are reported with their counts (`outcomes`: None for other entries) in `query`
  (through `memd.server.methods.search.Located`),
  `list` and `context` results.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping

import anyio

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.format.procedures import read_procedure, render_procedure
from memd.core.search import given, prompt_block, ranking
from memd.core.search.outcomes import Record
from memd.core.search.procedure_layer import ProcedureHit, choose, record_note
from memd.core.search.shelves import Key
from memd.core.writes.procedure_slugs import procedure_slug
from memd.server.methods.read_filters import loaded
from memd.server.methods.search import Search
from memd.server.rpc.wire import outcome_counts
from memd.server.workspaces.snapshot import Snapshot
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import EntryNotFound

StoreInto = Callable[..., Awaitable[p.StoreResult]]
"""The one store path (`Methods._store_into`)."""

_locks: weakref.WeakKeyDictionary[Workspace, anyio.Lock] = weakref.WeakKeyDictionary()


def procedure_categories(workspace: Workspace) -> tuple[Category, ...]:
    """The workspace's categories holding procedures."""
    return tuple(c for c in workspace.categories if c.kind == "procedure")


def add_outcomes(workspace: Workspace, infos: Iterable[p.EntryInfo]) -> None:
    """Set the counts on each procedure among `infos` (the workspace's own entries)."""
    by_name = {c.name: c for c in procedure_categories(workspace)}
    for info in infos:
        category = by_name.get(info.category)
        if category is not None and info.source == "memory":
            entry = Entry(line=info.line, slug=info.slug, content=info.content)
            info.outcomes = outcome_counts(workspace.usage.record(category, entry))


async def store_procedure(
    workspace: Workspace, params: p.ProcedureParams, store_into: StoreInto
) -> p.StoreResult:
    """The `procedure` method (see the module rules).

    Raises:
        InvalidEntry: the name or a step breaks the line format (the message says what to do),
            or the content breaks a store rule.
    """
    content = render_procedure(params.name, params.steps)
    category = Category.PROCEDURE
    async with _locks.setdefault(workspace, anyio.Lock()):
        await workspace.refresh((category,))
        entries = workspace.actor(category).snapshot.entries
        slug = procedure_slug(params.name, entries, params.slug)
        return await store_into(
            workspace,
            category,
            content,
            slug=slug,
            dry_run=params.dry_run,
            reason="procedure stored again by name",
        )


async def store_named(
    workspace: Workspace, category: Category, params: p.StoreParams, store_into: StoreInto
) -> p.StoreResult:
    """`store` into a procedure category without a slug (see the module rules).

    Raises:
        InvalidEntry: the content breaks a store rule.
    """
    read = read_procedure(params.content)
    async with _locks.setdefault(workspace, anyio.Lock()):
        slug = None
        if read.name is not None:
            await workspace.refresh((category,))
            slug = procedure_slug(read.name, workspace.actor(category).snapshot.entries)
        return await store_into(
            workspace,
            category,
            params.content,
            slug=slug,
            dry_run=params.dry_run,
            replaces=params.replaces,
            reason=params.reason,
        )


async def record_outcome(workspace: Workspace, params: p.OutcomeParams) -> p.OutcomeResult:
    """The `outcome` method (see the module rules).

    Raises:
        EntryNotFound: no procedure has the slug.
    """
    categories = procedure_categories(workspace)
    await workspace.refresh(categories)
    for category in categories:
        for entry in loaded(workspace, category).entries:
            if entry.slug == params.slug:
                worked = params.outcome == "success"
                usage = workspace.usage.record_outcome(category, entry, worked=worked)
                record = Record(usage.successes, usage.failures)
                said = "worked" if worked else "failed"
                return p.OutcomeResult(
                    category=category.name,
                    file=category.file,
                    slug=params.slug,
                    content=entry.content,
                    outcomes=outcome_counts(record),
                    message=f"Recorded that [{params.slug}] {said}; it has {record_note(record)}.",
                    workspace=workspace.root,
                )
    files = " or ".join(c.file for c in categories) or "procedures.md"
    raise EntryNotFound(
        f"No procedure has the slug {params.slug!r} (looked in {files}); `memd list -c "
        "Procedure` shows their slugs."
    )


Ranked = list[tuple[Category, Entry, float]]


async def for_task(
    search: Search,
    workspace: Workspace,
    snapshots: Mapping[Category, Snapshot],
    text: str,
    query: str,
    keep: ranking.Keep[Key] | None,
) -> Ranked:
    """Layer C's candidates for a `context` call with `text` (none without), ranked against
    its `query` (see the module rules)."""
    if not text.strip():
        return []
    return await search.procedures(workspace, snapshots, query, keep)


def layer_c(workspace: Workspace, ranked: Ranked, had: frozenset[int]) -> list[ProcedureHit]:
    """Layer C's procedures: the `ranked` ones the session was not given (`had`), ordered by
    their outcomes."""
    fresh = [hit for hit in ranked if given.entry_key(hit[0].name, hit[1].content) not in had]
    return choose(fresh, workspace.usage.record, floor=prompt_block.MIN_RELATIVE_SCORE)
