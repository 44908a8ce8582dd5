"""Workspaces: one per project root, each with five category actors and one archive.

Rules:
- A workspace is identified by the real path of its root, so two spellings of one directory
  (symlinks, `..`) share one set of actors and can never race each other's writes.
- A workspace is loaded on first use; its actors run in the daemon's service task group.
- The archive (`.memory/archive.md`) is appended under a lock, since several actors may archive
  at once.
"""

from __future__ import annotations

import datetime
import logging
import os
from collections.abc import Callable, Sequence

import anyio
from anyio.abc import TaskGroup, TaskStatus

from memd.core.archive import ARCHIVE_FILE, ARCHIVE_HEADER, ArchivedEntry, archive_line
from memd.core.categories import CATEGORIES, Category
from memd.server import storage
from memd.server.actor import CategoryActor
from memd_client.errors import InvalidParams, ShuttingDown, WorkspaceNotFound

logger = logging.getLogger(__name__)

MEMORY_DIR = ".memory"


class Workspace:
    """One project root: its `.memory/` directory, five actors and the archive."""

    def __init__(self, root: str, *, clock: Callable[[], float]) -> None:
        self.root = root
        self.memory_dir = os.path.join(root, MEMORY_DIR)
        self.archive_path = os.path.join(self.memory_dir, ARCHIVE_FILE)
        self._archive_lock = anyio.Lock()
        self.actors = {
            category: CategoryActor(self.memory_dir, category, archive=self.archive, clock=clock)
            for category in CATEGORIES
        }

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load every category file, report ready, and serve until the actors are closed."""
        async with anyio.create_task_group() as tg:
            for actor in self.actors.values():
                await tg.start(actor.run)
            task_status.started()

    def close(self) -> None:
        """Stop taking writes; queued writes still finish."""
        for actor in self.actors.values():
            actor.close()

    async def refresh(self, categories: Sequence[Category]) -> None:
        """Make the snapshots of `categories` current with their files on disk.

        One worker-thread hop stats every file; only actors whose file changed re-read it.

        Raises:
            StorageError: a file could not even be checked.
        """
        actors = [self.actors[c] for c in categories]
        paths = [a.path for a in actors]
        prints = await anyio.to_thread.run_sync(
            lambda: [storage.current_fingerprint(path) for path in paths]
        )
        stale = [
            a for a, fingerprint in zip(actors, prints, strict=True) if a.is_stale(fingerprint)
        ]
        if len(stale) == 1:
            await stale[0].sync()
        elif stale:
            async with anyio.create_task_group() as tg:
                for actor in stale:
                    tg.start_soon(actor.sync)

    def actor(self, category: Category) -> CategoryActor:
        """Return the actor that owns `category`'s file."""
        return self.actors[category]

    async def archive(self, records: list[ArchivedEntry]) -> None:
        """Append `records` to the archive durably (before the entries leave their file)."""
        today = datetime.date.today().isoformat()
        lines = [archive_line(record, date=today) for record in records]
        async with self._archive_lock:
            await anyio.to_thread.run_sync(
                lambda: storage.append_lines(self.archive_path, lines, header=ARCHIVE_HEADER)
            )


class Registry:
    """The loaded workspaces, keyed by real path; loads new ones into `services`."""

    def __init__(self, services: TaskGroup, *, clock: Callable[[], float]) -> None:
        self._services = services
        self._clock = clock
        self._workspaces: dict[str, Workspace] = {}
        self._by_given_path: dict[str, Workspace] = {}
        self._lock = anyio.Lock()
        self.closed = False

    @property
    def roots(self) -> list[str]:
        """The loaded workspace roots, sorted."""
        return sorted(self._workspaces)

    async def get(self, path: str) -> Workspace:
        """Return the workspace at `path`, loading it on first use.

        Raises:
            InvalidParams: `path` is not absolute.
            WorkspaceNotFound: `path` is not an existing directory.
            ShuttingDown: the daemon is stopping.
        """
        if self.closed:
            raise ShuttingDown("memd is shutting down; retry once it is back.")
        known = self._by_given_path.get(path)
        if known is not None:
            return known
        root = await anyio.to_thread.run_sync(resolve_root, path)
        workspace = self._workspaces.get(root)
        if workspace is None:
            workspace = await self._load(root)
        self._by_given_path[path] = workspace
        return workspace

    async def _load(self, root: str) -> Workspace:
        async with self._lock:
            workspace = self._workspaces.get(root)
            if workspace is None:
                workspace = Workspace(root, clock=self._clock)
                await self._services.start(workspace.run)
                self._workspaces[root] = workspace
                logger.info("loaded workspace %s", root)
            return workspace

    def close(self) -> None:
        """Stop every workspace taking writes; queued writes still finish."""
        self.closed = True
        for workspace in self._workspaces.values():
            workspace.close()


def resolve_root(path: str) -> str:
    """Return the real path of workspace `path`.

    Raises:
        InvalidParams: `path` is not absolute.
        WorkspaceNotFound: `path` is not an existing directory.
    """
    if not os.path.isabs(path):
        raise InvalidParams(
            f"workspace must be an absolute path, got {path!r}; pass the project root's full path."
        )
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise WorkspaceNotFound(
            f"Workspace {path} is not an existing directory; pass a project root that exists."
        )
    return real
