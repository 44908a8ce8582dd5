"""What a read asks for: the categories it names, the tags it filters on, the line range of a
`get`, and each category's current snapshot (or the error that its file cannot be read); the
search keeps only the tagged entries (`memd.server.methods.search.within`).

Rule: pure selection over snapshots; no waiting, no I/O.
"""

from __future__ import annotations

from memd.core.format.categories import Category
from memd.core.format.tags import InvalidTag, normalize_tag
from memd.server.rpc.wire import file_problem
from memd.server.workspaces.snapshot import Snapshot
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import InvalidParams


def loaded(workspace: Workspace, category: Category) -> Snapshot:
    """Return the category's current snapshot, or raise why its file could not be read."""
    snapshot = workspace.actor(category).snapshot
    if snapshot.error is not None:
        raise snapshot.error
    return snapshot


def readable(
    workspace: Workspace, categories: tuple[Category, ...]
) -> tuple[dict[Category, Snapshot], list[p.FileProblem]]:
    """Return the snapshots of the `categories` that could be read, and a problem for each one
    that could not.

    When none can be read (one category asked for by name, or `.memory/` itself refused), the
    first one's error is raised: such a read has nothing to serve, and the error says how to
    fix it. Otherwise the readable files are served and the others reported beside the
    results, so one bad file does not blind the workspace. A file with conflict markers is
    served as it is.
    """
    snapshots: dict[Category, Snapshot] = {}
    problems: list[p.FileProblem] = []
    for category in categories:
        snapshot = workspace.actor(category).snapshot
        if snapshot.error is None:
            snapshots[category] = snapshot
        else:
            problems.append(file_problem(category, snapshot.error))
    if not snapshots:
        loaded(workspace, categories[0])  # raises its error
    return snapshots, problems


def wanted_tags(tags: list[str] | None) -> frozenset[str]:
    """Return the folded tags a query or list asks for (empty: no filter).

    Raises:
        InvalidParams: one of them cannot be a tag (the message names it).
    """
    try:
        return frozenset(normalize_tag(tag) for tag in tags or ())
    except InvalidTag as exc:
        raise InvalidParams(f"tags: {exc}") from None


def categories_named(workspace: Workspace, name: str | None) -> tuple[Category, ...]:
    """Return `workspace`'s categories called `name` (all of them for None).

    Raises:
        CategoryNotFound: it has no category called `name` (the message names the valid ones).
    """
    return tuple(workspace.categories) if name is None else (workspace.category(name),)


def parse_line_range(lines: str) -> tuple[int, int]:
    """Return (first, last) from "a-b" or "a" (1-based, inclusive).

    Raises:
        InvalidParams: the range is malformed or empty.
    """
    first_text, _, last_text = lines.strip().partition("-")
    try:
        first = int(first_text)
        last = int(last_text) if last_text else first
    except ValueError:
        raise InvalidParams(f"lines must look like '3-7' or '5', got {lines!r}.") from None
    if first < 1 or last < first:
        raise InvalidParams(f"lines {lines!r} is not a range of line numbers from 1 up.")
    return first, last
