"""Workspaces: one per project root, each with five category actors, a watcher, one archive
and a feed of changes for subscribers.

Rules:
- A workspace is identified by the real path of its root, so two spellings of one directory
  (symlinks, `..`) share one set of actors and can never race each other's writes.
- A workspace is loaded on first use; its actors and its watcher run in the daemon's service
  task group.
- Every write to a file in `.memory/` holds the write lock: first an in-process lock (so memd's
  five actors never contend through the lock file), then HackLM's `.memory/.lock` (so HackLM and
  other tools never interleave with memd). `try_write` takes `.memory/.lock`, writes and releases
  it in one worker-thread call, so a commit costs one thread hop; an actor whose `try_write`
  finds it held (BUSY) backs off and tries again until the lock timeout. The archive is only
  appended under it. While a write is in progress, `keep_lock_fresh` rewrites the lock's `ts`
  every REFRESH_INTERVAL seconds, so HackLM never breaks a long hold as stale.
- memd's own temp files (and stale locks renamed aside) left by a crash are removed under the
  write lock, when the workspace loads and before its first write; they are never read as data.
  A `.lock` found at load is taken once, which breaks it if its holder is gone.
- Subscribers get each change as a `changed` notification, built and encoded once per change.
"""

from __future__ import annotations

import datetime
import functools
import logging
import os
from collections.abc import Callable, Iterable
from typing import NamedTuple, TypeVar

import anyio
from anyio.abc import TaskGroup, TaskStatus

from memd.core.archive import ARCHIVE_FILE, ARCHIVE_HEADER, ArchivedEntry, archive_line
from memd.core.categories import CATEGORIES, Category
from memd.core.limits import MAX_ARCHIVE_BYTES, MAX_ENTRY_CHARS, MAX_FILE_BYTES
from memd.server import storage
from memd.server.actor import CategoryActor, Snapshot
from memd.server.hacklm_lock import (
    DEFAULT_TIMEOUT,
    LOCK_FILE,
    REFRESH_INTERVAL,
    Backoff,
    Busy,
    LockCheck,
    MemoryDirLock,
)
from memd.server.session import Session, notification_frame
from memd.server.usage_store import UsageStore
from memd.server.watcher import WorkspaceWatcher
from memd.server.wire import entry_info
from memd_client import protocol as p
from memd_client.errors import InvalidParams, RpcError, ShuttingDown, WorkspaceNotFound

logger = logging.getLogger(__name__)

MEMORY_DIR = ".memory"

T = TypeVar("T")


class Workspace:
    """One project root: its `.memory/` directory, five actors, a watcher and the archive."""

    def __init__(
        self,
        root: str,
        *,
        clock: Callable[[], float],
        lock_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.root = root
        self.memory_dir = os.path.join(root, MEMORY_DIR)
        self.archive_path = os.path.join(self.memory_dir, ARCHIVE_FILE)
        self.max_archive_bytes = MAX_ARCHIVE_BYTES
        self._mutex = anyio.Lock()
        self._dir_lock = MemoryDirLock(self.memory_dir, timeout=lock_timeout)
        self._swept = False
        self._sweep_scope = anyio.CancelScope()
        self._subscribers: set[Session] = set()
        self.watcher = WorkspaceWatcher(root, self.memory_dir, self._external_change)
        self.usage = UsageStore(root, clock=clock)
        self._usage_scope = anyio.CancelScope()
        self._keeper_scope = anyio.CancelScope()
        self.actors = {
            category: CategoryActor(
                self.memory_dir,
                category,
                archive=self.archive,
                clock=clock,
                write_lock=self,
                on_change=self._publish,
            )
            for category in CATEGORIES
        }

    @property
    def lock_timeout(self) -> float:
        """How long a write waits for another tool's `.memory/.lock`, in seconds."""
        return self._dir_lock.timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._dir_lock.timeout = seconds

    @property
    def max_file_bytes(self) -> int:
        """The size cap of each category file (see `CategoryActor.max_file_bytes`)."""
        return self.actors[CATEGORIES[0]].max_file_bytes

    @max_file_bytes.setter
    def max_file_bytes(self, limit: int) -> None:
        for actor in self.actors.values():
            actor.max_file_bytes = limit

    def apply(self, limits: Limits) -> None:
        """Make every write and load from now on keep to `limits`."""
        self.lock_timeout = limits.lock_timeout
        self.max_file_bytes = limits.max_file_bytes
        self.max_archive_bytes = limits.max_archive_bytes

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load every category file, start watching, report ready, and serve until closed."""
        async with anyio.create_task_group() as tg:
            # The usage history and the five files load at once (each is a few worker-thread
            # hops, and under load every hop waits for a turn of the event loop); the watcher
            # starts once they are loaded, since the changes it finds are synced into them.
            async with anyio.create_task_group() as loading:
                loading.start_soon(anyio.to_thread.run_sync, self.usage.load)
                for actor in self.actors.values():
                    loading.start_soon(tg.start, actor.run)
            await tg.start(self.watcher.run)
            tg.start_soon(self._sweep_at_load)
            tg.start_soon(self._keep_usage)
            tg.start_soon(self._keep_lock_fresh)
            task_status.started()

    async def _keep_usage(self) -> None:
        with self._usage_scope:
            await self.usage.keep_saving()

    async def _keep_lock_fresh(self) -> None:
        with self._keeper_scope:
            while True:
                await anyio.sleep(REFRESH_INTERVAL)
                if self._dir_lock.is_held:
                    await anyio.to_thread.run_sync(self._dir_lock.refresh_if_held_long)

    def close(self) -> None:
        """Stop taking writes and stop watching; queued writes still finish."""
        self.watcher.stop()
        self._sweep_scope.cancel()
        self._usage_scope.cancel()  # saves the usage history once more
        self._keeper_scope.cancel()  # writes in progress are short; a stuck one is not refreshed
        for actor in self.actors.values():
            actor.close()

    def lock_timeout_error(self) -> RpcError:
        """Return the error for a write that waited `lock_timeout` seconds for the lock."""
        return self._dir_lock.timeout_error()

    async def try_write(self, work: Callable[[LockCheck], T], *, deadline: float) -> T | Busy:
        """Run blocking `work(check)` in one worker thread while holding the write lock; `check`
        raises if another process broke `.memory/.lock` meanwhile (call it right before each
        rename). The in-process lock is waited for until `deadline` (anyio's clock); HackLM's
        lock is tried once. Debris left by a crash is removed under the lock first, once.

        Returns:
            What `work` returned, or BUSY (without running `work`) if another process holds
            `.memory/.lock`: back off and try again.

        Raises:
            LockTimeout: memd's own writers kept the in-process lock until `deadline`.
            Exception: whatever `work` raises.
        """
        try:
            self._mutex.acquire_nowait()
        except anyio.WouldBlock:
            acquired = False
            with anyio.move_on_at(deadline):
                await self._mutex.acquire()
                acquired = True
            if not acquired:
                raise self._dir_lock.timeout_error() from None
        try:
            if work is _nothing and self._swept:
                return None  # type: ignore[return-value]  # a sweep, after a write swept
            return await anyio.to_thread.run_sync(
                self._dir_lock.try_run, functools.partial(self._swept_first, work)
            )
        finally:
            self._mutex.release()

    def _swept_first(self, work: Callable[[LockCheck], T], check: LockCheck) -> T:
        if not self._swept:
            for name in storage.remove_debris(self.memory_dir):
                logger.warning("removed %s left behind by a crash", name)
            self._swept = True
        return work(check)

    async def _sweep_at_load(self) -> None:
        with self._sweep_scope:
            has_debris = await anyio.to_thread.run_sync(
                lambda: storage.has_debris(self.memory_dir, lock_file=LOCK_FILE)
            )
            if not has_debris:
                return
            backoff = Backoff(anyio.current_time() + self._dir_lock.timeout)
            try:
                # A write may sweep first (under the mutex, try_write then skips the lock).
                while isinstance(await self.try_write(_nothing, deadline=backoff.deadline), Busy):
                    await backoff.pause(self._dir_lock.timeout_error)
            except RpcError as error:
                logger.warning("left debris in %s for now: %s", self.memory_dir, error.message)

    async def refresh(self, categories: Iterable[Category]) -> None:
        """Make the snapshots of `categories` current with their files on disk.

        The files are stat'ed right here, on the event loop: a stat of a local file takes a few
        microseconds, a worker-thread hop about a hundred, and every read pays this. Only actors
        whose file changed re-read it (in a worker thread).

        Raises:
            StorageError: a file could not even be checked.
        """
        actors = [self.actors[c] for c in categories]
        stale = [a for a in actors if a.is_stale(storage.current_fingerprint(a.path))]
        if len(stale) == 1:
            await stale[0].sync()
        elif stale:
            async with anyio.create_task_group() as tg:
                for actor in stale:
                    tg.start_soon(actor.sync)

    async def _external_change(self, categories: frozenset[Category]) -> None:
        try:
            await self.refresh(categories)
        except RpcError as error:
            logger.warning("cannot check %s after a change: %s", self.memory_dir, error.message)

    def actor(self, category: Category) -> CategoryActor:
        """Return the actor that owns `category`'s file."""
        return self.actors[category]

    def archive(self, records: list[ArchivedEntry]) -> None:
        """Append `records` to the archive durably, all or nothing. Blocks: called in a
        `try_write` (under the write lock), before the entries leave their file. An archive that
        would pass `max_archive_bytes` is first moved aside to `archive-<today>.md` (never
        deleted; logged) and a new one is started.

        Raises:
            FileFormatError: the archive is a symbolic link or not a regular file (a FIFO).
            StorageError: the archive could not be written; it is as it was.
        """
        today = datetime.date.today().isoformat()
        lines = [archive_line(record, date=today) for record in records]
        moved = storage.move_aside_if_full(
            self.archive_path, lines, self.max_archive_bytes, header=ARCHIVE_HEADER, date=today
        )
        if moved is not None:
            logger.warning(
                "%s reached max_archive_bytes (%d); its records are now in %s",
                self.archive_path,
                self.max_archive_bytes,
                moved,
            )
        storage.append_lines(self.archive_path, lines, header=ARCHIVE_HEADER)

    # ------------------------------------------------------------------ subscriptions

    def subscribe(self, session: Session) -> None:
        """Send this workspace's changes to `session` from now on."""
        self._subscribers.add(session)
        session.feeds[self.root] = self

    def unsubscribe(self, session: Session) -> bool:
        """Stop sending changes to `session`; return whether it was subscribed."""
        session.feeds.pop(self.root, None)
        subscribed = session in self._subscribers
        self._subscribers.discard(session)
        return subscribed

    def _publish(self, category: Category, snapshot: Snapshot, source: p.Source) -> None:
        if not self._subscribers:
            return
        changed = p.Changed(
            workspace=self.root,
            category=category.value,
            file=category.file,
            source=source,
            entries=[
                entry_info(category, entry, snapshot.tags.get(entry.line, frozenset()))
                for entry in snapshot.entries
            ],
            error=None if snapshot.error is None else snapshot.error.message,
        )
        frame = notification_frame("changed", changed)
        for session in list(self._subscribers):
            session.offer(self.root, frame)


class Limits(NamedTuple):
    """The limits a daemon's settings put on writes and loads (see `memd.config`)."""

    lock_timeout: float = DEFAULT_TIMEOUT
    """How long a write waits for another tool's `.memory/.lock`, in seconds."""
    max_file_bytes: int = MAX_FILE_BYTES
    """The largest category file loaded or grown by a store."""
    max_entry_chars: int = MAX_ENTRY_CHARS
    """The longest memory stored, in characters."""
    max_archive_bytes: int = MAX_ARCHIVE_BYTES
    """The size past which `.memory/archive.md` is moved aside to a dated file."""


DEFAULT_LIMITS = Limits()


class Registry:
    """The loaded workspaces, keyed by real path; loads new ones into `services`."""

    def __init__(
        self,
        services: TaskGroup,
        *,
        clock: Callable[[], float],
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._services = services
        self._clock = clock
        self.limits = limits
        self._workspaces: dict[str, Workspace] = {}
        self._by_given_path: dict[str, Workspace] = {}
        self._loading: dict[str, tuple[Workspace, anyio.Event]] = {}
        self.closed = False

    def set_limits(self, limits: Limits) -> None:
        """Apply `limits` to every write and load from now on, in every workspace (loading
        ones too)."""
        self.limits = limits
        for workspace in [*self._workspaces.values(), *(w for w, _ in self._loading.values())]:
            workspace.apply(limits)

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
        """Load the workspace at `root` once; workspaces load side by side, and a request for
        one that is loading waits for it (or loads it, if that load failed)."""
        while (workspace := self._workspaces.get(root)) is None:
            if root in self._loading:
                await self._loading[root][1].wait()
                continue
            workspace = Workspace(root, clock=self._clock)
            workspace.apply(self.limits)
            loaded = anyio.Event()
            self._loading[root] = (workspace, loaded)
            try:
                await self._services.start(workspace.run)
                self._workspaces[root] = workspace
                logger.info("loaded workspace %s", root)
            finally:
                del self._loading[root]
                loaded.set()
        return workspace

    def close(self) -> None:
        """Stop every workspace taking writes; queued writes still finish."""
        self.closed = True
        for workspace in self._workspaces.values():
            workspace.close()


def _nothing(check: LockCheck) -> None:
    """The write of a sweep: nothing but taking the lock (which removes debris first)."""


SYSTEM_TREES = ("/proc", "/sys", "/dev")
"""Kernel file systems: never a workspace, whatever a client asks."""


def resolve_root(path: str) -> str:
    """Return the real path of workspace `path`.

    Raises:
        InvalidParams: `path` is not absolute, holds a control character or resolves into
            /proc, /sys or /dev.
        WorkspaceNotFound: `path` is not an existing directory.
    """
    if not os.path.isabs(path):
        raise InvalidParams(
            f"workspace must be an absolute path, got {path!r}; pass the project root's full path."
        )
    if any(ord(character) < 32 or character == "\x7f" for character in path):
        raise InvalidParams(
            f"workspace {path!r} holds a control character (NUL, newline...); pass the project "
            "root's real path."
        )
    real = os.path.realpath(path)
    given = os.path.normpath(path)  # /proc/self/cwd resolves to a real directory: check both
    system = next(
        (
            tree
            for tree in SYSTEM_TREES
            for checked in (given, real)
            if (checked + "/").startswith(tree + "/")
        ),
        None,
    )
    if system is not None:
        raise InvalidParams(
            f"workspace {path!r} is under {system}, a kernel file system, not a project; pass "
            "a project root."
        )
    if not os.path.isdir(real):
        raise WorkspaceNotFound(
            f"Workspace {path} is not an existing directory; pass a project root that exists."
        )
    return real
