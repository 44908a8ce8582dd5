"""The user-wide memory beside each workspace's own: where it lives, and keeping the two apart
(what one search reads from both: `memd.server.methods.search.gather`).

Rules:
- The user-wide memory is an ordinary workspace at `memd.config.global_root()`
  (`$XDG_DATA_HOME/memd/global`, memories in its `.memory/`), served by the same registry,
  actors, lock, watcher and archive as any project.
- Kept apart: a workspace path that resolves to that directory or inside it, by any spelling
  (links, `..`, a bind mount: compared by device and inode too), is refused as a project
  before it loads (a path found apart is trusted for `CHECKED_SECONDS`); a store goes to the
  user-wide memory only when it says `scope` "global".
- The directory is made (mode 0700), or made private if it exists, by every store into it
  (a link there is refused, never followed); a read never makes it,
  and there is nothing to search until it holds `.memory/`.
"""

from __future__ import annotations

import contextlib
import os
import stat

import anyio

from memd.config import global_root
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.fs import real_path
from memd.fs.real_path import Unresolvable
from memd.paths import MEMORY_DIR
from memd.server.workspaces.chat_index import ChatLook
from memd.server.workspaces.registry import Registry, check_spelling
from memd.server.workspaces.source_index import SourcesSnapshot
from memd.server.workspaces.workspace import Workspace
from memd_client.errors import FileFormatError, InvalidParams

CHECKED_SECONDS = 10.0
"""How long a workspace path found apart from the user-wide memory is trusted."""
CHECKED_PATHS = 1024


class Scopes:
    """The project workspaces and the user-wide one (see the module rules)."""

    def __init__(self, registry: Registry, root: str | None = None) -> None:
        self.registry = registry
        self.root = root or global_root()
        self._apart: dict[str, float] = {}
        self._absent_at: float | None = None
        self._creations = 0
        """Counts `user_wide(create=True)` calls: a check for `.memory/` that a creation
        overtook must not record it absent."""
        self._anchor = os.path.realpath(self.root)
        """The user-wide memory's real path: a project resolving to it is refused."""

    def is_user_wide(self, path: str) -> bool:
        """True when `path` is the user-wide memory's directory or inside it, by its real path
        or by identity (device and inode of it or a parent: a link or a bind mount made after
        the daemon started). Blocking (a `stat` a component, `memd.fs.real_path`: linear in
        the path's length): call it in a worker thread."""
        try:
            resolved = real_path.resolve(path)
        except Unresolvable:  # a link loop or too many steps: the registry refuses it, saying so
            return False
        if _inside(resolved.path, os.path.realpath(self.root)):
            return True
        try:
            target = os.stat(self.root)
        except OSError:
            return False  # no user-wide memory yet: nothing to land in
        return (target.st_dev, target.st_ino) in resolved.identities

    async def project(self, path: str) -> Workspace:
        """The project workspace at `path` (checked before it is loaded).

        Raises:
            InvalidParams: `path` is the user-wide memory or inside it (by any spelling).
        """
        check_spelling(path)
        if os.path.isabs(path) and await self._user_wide_path(path):
            raise _user_wide_error(path)
        workspace = await self.registry.get(path)
        if _inside(workspace.root, self._anchor):
            # resolved there (or inside it) since it was last found apart
            self._apart.pop(path, None)
            raise _user_wide_error(path)
        return workspace

    async def _user_wide_path(self, path: str) -> bool:
        """`is_user_wide`, in a worker thread; a path found apart is trusted for
        `CHECKED_SECONDS` (most requests then cost no thread hop), and at most
        `CHECKED_PATHS` are remembered."""
        now = anyio.current_time()
        checked = self._apart.get(path)
        if checked is not None and now - checked < CHECKED_SECONDS:
            return False
        inside = await anyio.to_thread.run_sync(
            self.is_user_wide, path, limiter=self.registry.resolving
        )
        self._apart.pop(path, None)
        if not inside:
            self._apart[path] = now
            if len(self._apart) > CHECKED_PATHS:
                self._apart.pop(next(iter(self._apart)))
        return inside

    async def user_wide(self, *, create: bool) -> Workspace | None:
        """The user-wide memory's workspace; None when it holds nothing yet and `create` is
        false (with `create`, its directory is made)."""
        if create:
            self._creations += 1
            await anyio.to_thread.run_sync(_make_private_dir, self.root)
            self._absent_at = None
        elif not await self._exists():
            return None
        return await self.registry.get(self.root)

    async def _exists(self) -> bool:
        """Whether the user-wide memory holds `.memory/`; found absent, it is believed absent
        for `CHECKED_SECONDS` (a search then costs no thread hop), unless a store made it."""
        now = anyio.current_time()
        if self._absent_at is not None and now - self._absent_at < CHECKED_SECONDS:
            return False
        memory = os.path.join(self.root, MEMORY_DIR)
        creations = self._creations
        exists = await anyio.to_thread.run_sync(os.path.isdir, memory)
        if creations != self._creations:  # a store made it meanwhile: look again next time
            self._absent_at = None
            return exists
        self._absent_at = None if exists else now
        return exists

    async def look(self, workspace: Workspace) -> SourcesSnapshot:
        """The workspace's read-only sources as they are now
        (`memd.server.workspaces.source_index`), under the daemon's settings."""
        limits = self.registry.limits
        return await workspace.sources.refresh(limits.sources, limits.max_file_bytes)

    async def chats(self, workspace: Workspace, *, wait: bool = True) -> ChatLook:
        """The workspace's coding agents' past sessions as they are now
        (`memd.server.workspaces.chat_index`), under the daemon's settings (`chat` off: none);
        not `wait`: none until the first look is taken in the background."""
        limits = self.registry.limits
        return await workspace.chats.refresh(limits.chat, limits.chat_max_age_days, wait=wait)

    async def user_wide_rules(
        self, categories: tuple[Category, ...]
    ) -> tuple[list[tuple[Category, Entry]], list[Category]]:
        """The user-wide memory's entries of its categories named like `categories` (none until
        it exists), and those of its files that cannot be read."""
        user = await self.user_wide(create=False)
        if user is None:
            return [], []
        theirs = [c for c in map(user.categories.get, (c.name for c in categories)) if c]
        await user.refresh(theirs)
        snapshots = {c: user.actor(c).snapshot for c in theirs}
        rules = [
            (category, entry)
            for category, snapshot in snapshots.items()
            if snapshot.error is None
            for entry in snapshot.entries
        ]
        return rules, [c for c, snapshot in snapshots.items() if snapshot.error is not None]


def _make_private_dir(path: str) -> None:
    """Make the user-wide memory's directory, or make an existing one private (0700), on each
    store into it (blocking).

    Raises:
        FileFormatError: it is a symbolic link (never followed, like a project's `.memory`),
            or not a directory.
    """
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise FileFormatError(
            f"memd's user-wide memory {path} is a symbolic link or not a directory; memd never "
            "follows a link there: replace it with a directory of your own (or remove it).",
            data={"path": path},
        )
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, 0o700, follow_symlinks=False)


def _inside(real: str, anchor: str) -> bool:
    """Return True if the real path `real` is `anchor` or below it."""
    return real == anchor or real.startswith(anchor + os.sep)


def _user_wide_error(path: str) -> InvalidParams:
    """The error for a project path that names the user-wide memory."""
    return InvalidParams(
        f"workspace {path} is memd's user-wide memory, not a project; pass a project as the "
        "workspace, and store into the user-wide memory with scope global (memd store --global)."
    )
