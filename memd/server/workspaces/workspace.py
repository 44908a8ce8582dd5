"""Workspaces: one per project root, each with five category actors, a watcher, one archive
and a feed of changes for subscribers.

Rules:
- A workspace is identified by the real path of its root, so two spellings of one directory
  (symlinks, `..`) share one set of actors and can never race each other's writes.
- A workspace is loaded on first use; its actors and its watcher run in the daemon's service
  task group. Its watcher registers with the daemon's one `WatchHub` (one inotify instance for
  every workspace, see `memd.server.watch.watcher`).
- Idle unloading: a workspace with no request in flight (a lease, see `Registry.leases`), no
  subscriber and no write under way for `idle_unload` seconds (0: never) is closed: its actors
  drain their queues and stop, its watches go, its usage history is saved and every spelling of
  its path is forgotten. A request for it while it unloads waits for the unload to finish and
  then loads it again; no request ever gets a closed workspace.
- Every write to a file in `.memory/` holds the write lock: first an in-process lock (so memd's
  five actors never contend through the lock file), then HackLM's `.memory/.lock` (so HackLM and
  other tools never interleave with memd). `try_write` takes `.memory/.lock`, writes and releases
  it in one worker-thread call (a `Staging` writing the file before and syncing after it), so a
  commit costs one thread hop; an actor whose `try_write`
  finds it held (BUSY) backs off and tries again until the lock timeout. The archive is only
  appended under it. While a write is in progress, `keep_lock_fresh` rewrites the lock's `ts`
  every REFRESH_INTERVAL seconds, so HackLM never breaks a long hold as stale.
- memd's own temp files (and stale locks renamed aside) left by a crash are removed under the
  write lock, when the workspace loads and before its first write; they are never read as data.
  A `.lock` found at load is taken once, which breaks it if its holder is gone; a `.lock` that
  cannot be judged by its pid (another user's, pid 1, a `ts` in the future) is stale once memd
  has seen it, from the load on, for 10 s (see `hacklm_lock`).
- A `.memory` that is a symbolic link is never followed: loading, reading, sweeping and locking
  create, rename and delete nothing through it, and writes are refused (1004).
- Missing category files are created (with their header, never over a file that appeared)
  under the write lock when a workspace whose `.memory/` exists loads, or at its first write if
  it has none, and no store writes into them for FIRST_USE_SETTLE seconds: HackLM creates
  missing files with an unlocked check-then-write, which would otherwise overwrite a file memd
  had just created with an acknowledged entry; this way it usually overwrites a bare header.
  (If HackLM's header still lands over acknowledged entries, however late, they are stored
  again: see `core.writes.first_use`.)
- The root is the directory that was loaded: its identity (device and inode, no link followed)
  is noted at load and checked under the lock before every write. A root replaced meanwhile (by
  another directory, or by a link, perhaps to the user-wide memory) gets nothing written
  through it: the write is refused (1006, retry), `replaced` is set, and the registry loads the
  path afresh on the next request (refused there if it now names the user-wide memory).
- HackLM gets its turn. A commit holds `.memory/.lock` only to check and rename (its file is
  written and fsynced before, the rename made durable after), so most of a waiting HackLM's
  retries find it free. And once writers have been seen waiting for PATIENCE seconds in a row
  (someone read `.memory/.lock` during memd's holds: HackLM does each time it finds it held,
  see `lock_file`, `waiter_seen`), memd takes the lock again only until just before the
  waiter's next retry (HACKLM_FIRST_SLEEP after its read, by the lock's access time), and then
  not until a waiter's own lock has appeared and gone (its record written into `.lock`, then
  `.lock` removed, as the watcher sees them) or GIVE_WAY_MAX seconds have passed; memd's
  stores queue meanwhile and share the next commit (`wait_turn`). Without inotify only the
  bound ends it.
- Nothing is written while git is working in the workspace's repository (its `index.lock`
  exists: see `git_state`): a write then backs off like one that finds `.memory/.lock` held.
- Outside changes are read once git is done (`_external_change`): a checkout, merge, rebase,
  stash or reset that rewrites several files is seen as one change a file, each `changed`
  saying `git`.
- Subscribers get each change as a `changed` notification, built and encoded once per change.

Size: one workspace: its actors, its write lock (with the sweep and the first-use files) and its
feeds.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import logging
import math
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple, TypeVar

import anyio
from anyio.abc import TaskStatus

from memd.config import DEFAULT_IDLE_UNLOAD
from memd.core.format.archive import ARCHIVE_FILE, ARCHIVE_HEADER, ArchivedEntry, archive_line
from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.limits import MAX_ARCHIVE_BYTES, MAX_ENTRY_CHARS, MAX_FILE_BYTES
from memd.fs import git_state, storage
from memd.fs.lock_file import (
    BUSY,
    DEFAULT_TIMEOUT,
    LOCK_FILE,
    REFRESH_INTERVAL,
    Busy,
    LockCheck,
    MemoryDirLock,
)
from memd.paths import MEMORY_DIR
from memd.server.rpc.session import Session, notification_frame
from memd.server.rpc.wire import entry_info
from memd.server.watch import inotify
from memd.server.watch.watcher import WatchHub, WorkspaceWatcher
from memd.server.workspaces.actor import CategoryActor, Handover, Snapshot
from memd.server.workspaces.lock_wait import Backoff
from memd.server.workspaces.source_index import WorkspaceSources
from memd.server.workspaces.usage_store import UsageStore
from memd.server.workspaces.write_lock import Staging, staged_run
from memd_client import protocol as p
from memd_client.errors import (
    LockTimeout,
    RpcError,
    WorkspaceNotFound,
)

logger = logging.getLogger(__name__)

FIRST_USE_SETTLE = 0.1
"""Seconds the category files memd creates exist before a store writes into them."""

T = TypeVar("T")

GIVE_WAY_MAX = 1.2
"""The longest memd gives way to a writer seen waiting for `.memory/.lock`, in seconds: longer
than HackLM's longest sleep between two attempts (1 s), so it tries once meanwhile."""
HACKLM_FIRST_SLEEP = 0.05
"""HackLM's sleep after its first failed attempt (50 ms x attempt, hacklm-spec.md §5.3)."""
GIVE_WAY_AHEAD = 0.015
"""How long before a waiter's retry memd stops taking the lock (a commit's hold)."""
PATIENCE = 0.3
"""memd gives way once writers have been seen waiting for this many seconds in a row (HackLM
has then failed 3 of its 20 attempts): a short hold lets most of their retries in by itself,
and giving way at every sighting would idle memd through every one of their sleeps."""

GIT_WAIT_MAX = 30.0
"""The longest an outside change waits for git to finish before it is read anyway (a git that
hangs, or a lock younger than `git_state.STALE_AFTER` left by one that crashed)."""
GIT_POLL = 0.05
"""How often the index lock is looked at while git works."""
GIT_RECENT = 2.0
"""A change found within this many seconds of git writing its index is git's."""


class Workspace:
    """One project root: its `.memory/` directory, five actors, a watcher and the archive."""

    def __init__(
        self,
        root: str,
        *,
        clock: Callable[[], float],
        lock_timeout: float = DEFAULT_TIMEOUT,
        watches: WatchHub | None = None,
        handed: Mapping[Category, Handover] | None = None,
    ) -> None:
        """`watches` is the daemon's hub; without one the workspace runs a hub of its own.
        `handed`: what an earlier load of this root's files acknowledged (`handovers`)."""
        self.root = root
        self.memory_dir = os.path.join(root, MEMORY_DIR)
        self.archive_path = os.path.join(self.memory_dir, ARCHIVE_FILE)
        self.max_archive_bytes = MAX_ARCHIVE_BYTES
        self._mutex = anyio.Lock()
        self._dir_lock = MemoryDirLock(self.memory_dir, timeout=lock_timeout)
        self._swept = False
        self._created = True  # False: a category file was missing at load
        self._settled_at = 0.0  # time.monotonic() from which files memd created may be written
        self._memory_at_load = False  # `.memory/` was a real directory when the workspace loaded
        self._root_id: tuple[int, int] | None = None  # the root's (device, inode) at load
        self._loaded_ns = time.time_ns()  # debris older than this is a crash's, not in flight
        self.replaced = False  # a write found the root replaced: the registry loads it afresh
        self._git_lock: str | None = None  # the git index lock the last write waited for
        self._git_changes = 0  # outside changes being read after git worked: they say `git`
        self._closed = anyio.Event()  # set by `close`: a wait for git ends there
        self._sweep_scope = anyio.CancelScope()
        self._subscribers: set[Session] = set()
        self._own_hub = WatchHub() if watches is None else None
        self._give_way: _GiveWay | None = None  # a waiter seen: its turn comes first
        self._waiting_since: float | None = None  # writers seen waiting since (anyio's clock)
        self._last_sighting = 0.0
        self._hub = watches or self._own_hub or WatchHub()
        self.sources = WorkspaceSources(root)  # as searches see them (the watcher reports)
        self.watcher = WorkspaceWatcher(
            root, self.memory_dir, self._external_change, self._hub, on_lock=self._lock_event
        )
        self.sources.watch = self.watcher.serve_sources(self.sources.changed)
        self.in_use = 0
        """Requests holding this workspace now (`Registry.leases`)."""
        self.last_used = anyio.current_time()
        """When a request last let go of it (anyio's clock)."""
        self.stopped = anyio.Event()
        """Set once `run` has returned: every actor drained and stopped."""
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
                handed=(handed or {}).get(category),
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

    def apply(self, limits: WorkspaceSettings) -> None:
        """Make every write and load from now on keep to `limits`."""
        self.lock_timeout = limits.lock_timeout
        self.max_file_bytes = limits.max_file_bytes
        self.max_archive_bytes = limits.max_archive_bytes

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load every category file, start watching, report ready, and serve until closed."""
        try:
            await self._run(task_status)
        finally:
            self.stopped.set()

    async def _run(self, task_status: TaskStatus[None]) -> None:
        async with anyio.create_task_group() as tg:
            if self._own_hub is not None:
                await tg.start(self._own_hub.run)
            # The usage history and the five files load at once (each is a few worker-thread
            # hops, and under load every hop waits for a turn of the event loop); the watcher
            # starts once they are loaded, since the changes it finds are synced into them.
            async with anyio.create_task_group() as loading:
                loading.start_soon(anyio.to_thread.run_sync, self.usage.load)
                loading.start_soon(anyio.to_thread.run_sync, self._check_at_load)
                # A `.lock` memd cannot judge by its pid ages from here, before any write waits.
                loading.start_soon(anyio.to_thread.run_sync, self._dir_lock.note_lock)
                for actor in self.actors.values():
                    loading.start_soon(tg.start, actor.run)
            await tg.start(self.watcher.run)
            tg.start_soon(self.sources.run)
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
        self._closed.set()
        self.watcher.stop()
        if self._own_hub is not None:
            self._own_hub.stop()
        self._sweep_scope.cancel()
        self._usage_scope.cancel()  # saves the usage history once more
        self._keeper_scope.cancel()  # writes in progress are short; a stuck one is not refreshed
        self.sources.stop()  # a look in progress is left to its worker thread
        for actor in self.actors.values():
            actor.close()

    def handovers(self) -> dict[Category, Handover]:
        """What each file's next load needs from this one (`CategoryActor.handover`); call it
        once the workspace has stopped."""
        handed = {category: actor.handover() for category, actor in self.actors.items()}
        return {category: handover for category, handover in handed.items() if handover}

    def idle_for(self, now: float) -> float:
        """Return how long the workspace has been idle at `now` (anyio's clock): 0 while a
        request holds it, a session subscribes to it or a write holds its lock."""
        if self.in_use or self._subscribers or self._mutex.locked() or self._dir_lock.is_held:
            return 0.0
        return max(0.0, now - self.last_used)

    def lock_timeout_error(self) -> RpcError:
        """Return the error for a write that waited `lock_timeout` seconds for the lock (or for
        git to finish)."""
        if self._git_lock is None:
            return self._dir_lock.timeout_error()
        return LockTimeout(
            f"git has been working in this repository for over {self.lock_timeout:g} s "
            f"({self._git_lock} exists), so memd wrote nothing to {self.memory_dir}; retry once "
            "it finishes, or remove that file if no git command is running.",
            data={"path": self._git_lock},
        )

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        """Run blocking `work(check)` in one worker thread while holding the write lock; `check`
        raises if another process broke `.memory/.lock` meanwhile (call it right before each
        rename). The in-process lock is waited for until `deadline` (anyio's clock); HackLM's
        lock is tried once. Debris left by a crash is removed under the lock first, once.
        `staging` runs around the hold, in the same call (`write_lock.Staging`).

        Returns:
            What `work` returned, or BUSY (without running `work`) if another process holds
            `.memory/.lock`: back off and try again.

        Raises:
            LockTimeout: memd's own writers kept the in-process lock until `deadline`.
            Exception: whatever `work` raises.
        """
        await self.wait_turn(deadline)
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
            if work is _nothing and ((self._swept and self._created) or not self.has_memory_dir()):
                # A sweep with nothing left to do, or whose `.memory/` went away meanwhile (a
                # sweep never makes it: only a write does).
                return None  # type: ignore[return-value]
            done = await anyio.to_thread.run_sync(
                staged_run,
                staging,
                self._dir_lock.try_run,
                functools.partial(self._prepared_first, work),
            )
        except storage.NotNow as busy:
            self._git_lock = busy.args[0]  # None: waiting for new files to settle
            return BUSY
        finally:
            self._mutex.release()
            if self._dir_lock.waiter_seen:  # someone read our lock: a writer is waiting
                self._dir_lock.waiter_seen = False
                self._saw_waiter(self._dir_lock.waiter_read_ns)
        self._git_lock = None
        return done

    def _saw_waiter(self, read_ns: int) -> None:
        """A writer read our lock at `read_ns` (epoch ns) and is waiting. Writers seen waiting
        for PATIENCE seconds in a row (no pause of GIVE_WAY_MAX between two sightings, no turn
        given meanwhile) get memd to give way: it still commits until GIVE_WAY_AHEAD before the
        waiter's soonest retry (HACKLM_FIRST_SLEEP after its read), then takes no lock until a
        waiter's lock has come and gone."""
        now = anyio.current_time()
        read_at = now - min(max(0.0, (time.time_ns() - read_ns) / 1e9), GIVE_WAY_MAX)
        if self._waiting_since is None or read_at - self._last_sighting > GIVE_WAY_MAX:
            self._waiting_since = read_at
        self._last_sighting = read_at
        if self._give_way is not None and not self._give_way.done.is_set():
            return  # giving way already: its moment stands
        if read_at - self._waiting_since < PATIENCE:
            return
        self._waiting_since = None  # a turn is given: the next wait counts afresh
        begin = max(now, read_at + HACKLM_FIRST_SLEEP - GIVE_WAY_AHEAD)
        self._give_way = _GiveWay(begin, begin + GIVE_WAY_MAX)

    async def wait_turn(self, deadline: float = math.inf) -> None:
        """Return once a writer seen waiting for `.memory/.lock` has had its turn, or
        GIVE_WAY_MAX seconds after memd began giving way (or at `deadline`, anyio's clock); at
        once if none was seen, or while it still sleeps before its retry."""
        way = self._give_way
        if way is None:
            return
        if not way.done.is_set() and anyio.current_time() < way.begin:
            return  # it is still asleep: this commit ends before it retries
        if not way.done.is_set():
            self._hub.hurry(True)  # the lock's events, as they come
            try:
                with anyio.move_on_at(min(way.until, deadline)):
                    await way.done.wait()
            finally:
                self._hub.hurry(False)
        if self._give_way is way:
            self._give_way = None

    def _lock_event(self, mask: int) -> None:
        """An event on `.memory/.lock` (from the watcher): a record written into it is another
        writer's lock (memd links its lock into place, written beforehand); its removal after
        that ends memd's giving way."""
        way = self._give_way
        if way is None:
            return
        if mask & inotify.IN_CLOSE_WRITE:
            way.appeared = True
        elif way.appeared and mask & (inotify.IN_DELETE | inotify.IN_MOVED_FROM):
            way.done.set()

    def _prepared_first(self, work: Callable[[LockCheck], T], check: LockCheck) -> T:
        """Run `work` under the lock, with a check that also stops it while git works; first
        (once) remove debris and create the missing category files. A store waits until files
        memd created have existed FIRST_USE_SETTLE seconds (raises NotNow before that)."""

        def check_git_too() -> None:
            check()
            held = git_state.index_lock_held(self.root)
            if held is not None:
                raise storage.NotNow(held)

        check_git_too()
        self._check_root()
        if not self._swept:
            for name in storage.remove_debris(self.memory_dir, before_ns=self._loaded_ns):
                logger.warning("removed %s left behind by a crash", name)
            self._swept = True
        if not self._created:
            if self._create_missing_files():
                self._settled_at = time.monotonic() + FIRST_USE_SETTLE
            self._created = True
        if work is not _nothing and time.monotonic() < self._settled_at:
            raise storage.NotNow(None)  # HackLM may be between its check and its header
        return work(check_git_too)

    def _check_root(self) -> None:
        """Refuse to write through a root that is no longer the directory loaded (blocking).

        Raises:
            WorkspaceNotFound: the root is gone, a link, or another directory now.
        """
        if self.root_is_replaced():
            self.replaced = True
            raise WorkspaceNotFound(
                f"The workspace directory {self.root} was replaced (removed, moved, or made a "
                "link) while memd had it loaded, so nothing was written; retry, and memd loads "
                "the directory that is there now.",
                data={"path": self.root},
            )

    def root_is_replaced(self) -> bool:
        """Return True if the root is not the directory noted at load (one `lstat`: cheap
        enough for the event loop)."""
        try:
            st = os.lstat(self.root)
        except OSError:
            return True
        return stat.S_ISLNK(st.st_mode) or (st.st_dev, st.st_ino) != self._root_id

    def _create_missing_files(self) -> bool:
        """Create each missing category file with its header, never over one that appears
        meanwhile (blocking, under the write lock); return whether any was created."""
        created = False
        for category in CATEGORIES:
            path = os.path.join(self.memory_dir, category.file)
            if os.path.lexists(path):
                continue
            try:
                storage.write_atomic(path, category.header, follow_links=False, expected=None)
                created = True
            except storage.ChangedOnDisk:
                pass  # created meanwhile: it is someone's file now
            except RpcError as error:
                logger.warning("cannot create %s: %s", path, error.message)
                break
        return created

    def _check_at_load(self) -> None:
        """Note the root's identity, and whether all category files exist (blocking); if not,
        the first hold of the lock creates them: at load if `.memory/` exists, else at the
        first write."""
        with contextlib.suppress(OSError):  # gone already: every write is refused
            st = os.lstat(self.root)
            self._root_id = (st.st_dev, st.st_ino)
        self._memory_at_load = os.path.isdir(self.memory_dir) and not os.path.islink(
            self.memory_dir
        )
        self._created = os.path.islink(self.memory_dir) or all(
            os.path.lexists(os.path.join(self.memory_dir, category.file)) for category in CATEGORIES
        )

    def _needs_preparing(self) -> bool:
        """Return True if `.memory/` holds debris or a lock file, or existed at load and lacks
        a category file (blocking): never create `.memory/` on a read."""
        if storage.has_debris(self.memory_dir, lock_file=LOCK_FILE):
            return True
        return not self._created and self._memory_at_load

    async def _sweep_at_load(self) -> None:
        with self._sweep_scope:
            if not await anyio.to_thread.run_sync(self._needs_preparing):
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
        """Re-read the files a batch of outside changes touched; while git works in the
        repository (its index lock exists), first wait for it to finish (at most
        `GIT_WAIT_MAX` seconds), then look at every file: a checkout, merge, rebase, stash or
        reset is then seen as one change a file, never as a file half-written or missing, and
        its notifications say `git`."""
        if not self._any_stale(categories):
            return  # the echo of memd's own commits: nothing to read, no git to wait for
        by_git = await self._wait_for_git()
        if by_git:
            categories = frozenset(CATEGORIES)
        self._git_changes += by_git
        try:
            await self.refresh(categories)
        except RpcError as error:
            logger.warning("cannot check %s after a change: %s", self.memory_dir, error.message)
        finally:
            self._git_changes -= by_git

    def _any_stale(self, categories: Iterable[Category]) -> bool:
        """Return True if any of `categories`' files differs from its snapshot, or cannot be
        checked (stat'ed on the event loop, as `refresh` does)."""
        try:
            return any(
                actor.is_stale(storage.current_fingerprint(actor.path))
                for actor in (self.actors[category] for category in categories)
            )
        except RpcError:
            return True

    async def _wait_for_git(self) -> bool:
        """Wait while git holds the repository's index lock (until the workspace closes); True
        when it did, or when git wrote its index within the last `GIT_RECENT` seconds (the
        change is git's)."""
        began_ns = time.time_ns()
        waited = False
        with anyio.move_on_after(GIT_WAIT_MAX):
            while await anyio.to_thread.run_sync(git_state.index_lock_held, self.root):
                waited = True
                with anyio.move_on_after(GIT_POLL):
                    await self._closed.wait()
                if self._closed.is_set():
                    return False
        if waited:
            return True
        since = began_ns - int(GIT_RECENT * 1e9)
        return await anyio.to_thread.run_sync(git_state.index_changed_since, self.root, since)

    def has_memory_dir(self) -> bool:
        """Return True if anything is at `.memory` (one `lstat`: cheap enough for the loop);
        a store compares this before and after its write to tell whether it created it."""
        return os.path.lexists(self.memory_dir)

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
            conflict=None if snapshot.conflict is None else snapshot.conflict.message,
            git=source == "external" and self._git_changes > 0,
        )
        frame = notification_frame("changed", changed)
        for session in list(self._subscribers):
            session.offer(self.root, frame)


class _GiveWay:
    """memd giving way to a writer seen waiting for the lock: from `begin` until `done` (its
    lock appeared and went) or `until` (anyio's clock)."""

    def __init__(self, begin: float, until: float) -> None:
        self.begin = begin
        self.until = until
        self.appeared = False
        self.done = anyio.Event()


class WorkspaceSettings(NamedTuple):
    """The daemon's settings a workspace uses (see `memd.config`): limits on writes and loads,
    whether a secret may be stored, and the configured read-only sources."""

    lock_timeout: float = DEFAULT_TIMEOUT
    """How long a write waits for another tool's `.memory/.lock`, in seconds."""
    max_file_bytes: int = MAX_FILE_BYTES
    """The largest category file loaded or grown by a store."""
    max_entry_chars: int = MAX_ENTRY_CHARS
    """The longest memory stored, in characters."""
    idle_unload: float = DEFAULT_IDLE_UNLOAD
    """Seconds a workspace stays loaded with nothing using it (0: for ever)."""
    max_archive_bytes: int = MAX_ARCHIVE_BYTES
    """The size past which `.memory/archive.md` is moved aside to a dated file."""
    allow_secrets: bool = False
    """Store memories that carry a secret value (refused by default: files get committed)."""
    sources: tuple[str, ...] = ()
    """memd's config `sources`: read-only sources besides the defaults
    (`memd.server.workspaces.source_index`)."""


DEFAULT_LIMITS = WorkspaceSettings()


def _nothing(check: LockCheck) -> None:
    """The write of a sweep: nothing but taking the lock (which removes debris first)."""
