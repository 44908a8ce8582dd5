"""Noticing changes made to workspaces' `.memory/` by anyone but memd, with one inotify instance
for the whole daemon.

Theory of operation: a watcher only *notices*; it never reads a file. For each batch of file
events it calls its workspace's `on_change` with the categories whose files were touched, and
the workspace asks those categories' actors to re-read them (each actor ignores the echo of its
own writes, since its file's fingerprint is still the one it wrote). Reads check the files
themselves too (`Workspace.refresh` stats them), so a workspace that is not watched stays
correct; only subscribers hear of outside changes later (at the next read) or not at all.

`WatchHub` is the daemon's one watching service; each loaded workspace runs a
`WorkspaceWatcher` that registers with it. The hub's `mode`:
- "inotify" (Linux): ONE inotify instance for every workspace, read on the event loop (no
  thread per workspace, nothing polled while idle). Each workspace watches two directories:
  `.memory` (its files) and its root (only the name `.memory` counts there: it comes, goes or is
  replaced), so two watches per loaded workspace out of `fs.inotify.max_user_watches`.
- "watchfiles": no inotify here (macOS), or `WATCHFILES_FORCE_POLLING` is set: at most
  FALLBACK_WATCHERS workspaces get a `ThreadedWatch` (watchfiles, one worker thread each,
  polling when forced); the others are checked on access.
- "on-access": inotify exists but no instance could be created (the user's
  `fs.inotify.max_user_instances` are used up by other programs): one warning, and every
  workspace is checked on access.

Rules (inotify mode):
- Watches are added on the event loop (a path lookup, like the stats reads do), so no event can
  arrive between a watch being added and its workspace being known; after each (re)watch every
  file is rescanned, since anything may have changed meanwhile.
- `.memory` deleted, renamed away or replaced, its watch ended (IN_IGNORED, unmount), a name
  `.memory` created, deleted or moved in the root, or the root itself gone: re-watch and rescan.
- IN_Q_OVERFLOW (the kernel dropped events): every workspace re-watches and rescans.
- While `.memory` is missing the root's watch sees it appear; while the root is missing too, it
  is tried again every MISSING_POLL seconds (only that workspace, only while it stays loaded).
- Events are read GATHER seconds after the first of a burst is queued, all at once (at most
  GATHER_HURRIED while a workspace waits for another writer's lock to come and go: `hurry`).
- Events on `.memory/.lock` go to the workspace's `on_lock` (it gives way to HackLM with them).
- Changes are batched per workspace: a batch is reported once its directory has been quiet for
  STEP_MS, or DEBOUNCE_MS after its first change, so a change shows up within a few hundred ms.
- Out of watches (ENOSPC: `fs.inotify.max_user_watches`): ONE warning for the daemon's life;
  that workspace is checked on access and quietly tries again every RETRY_UNWATCHED seconds.
  Other failures are logged once per workspace and retried with a backoff.
- A workspace's watches are removed when it unloads (a watch that two workspaces share, when the
  last one lets go); closing the hub closes the instance, which drops every watch.
- A watcher failure never takes the daemon down.
- Read-only sources (`memd.server.workspaces.source_index`): the hub also watches the
  directories a look at a workspace's sources found (`watch_sources`, at most
  MAX_SOURCE_WATCHES a workspace; the ones it holds already are kept), on the event loop. Each
  event there goes to the workspace's `on_source` as the directory's real path, the name and whether
  only a file's content changed; `.memory/memd.toml` changing, a watched directory going, or lost
  events (IN_Q_OVERFLOW) as "anything may have changed". Where sources cannot all be watched
  (another mode, too many directories, out of watches) `watch_sources` says so and the sources are
  looked at again by age.

Size: the hub and the workspace watcher share one event protocol (placing watches, reading,
dispatching by role and name), told once.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

import anyio
from anyio.abc import TaskStatus

from memd.config import PROJECT_CONFIG_NAME
from memd.core.format.categories import BUILTIN, Categories, Category
from memd.paths import MEMORY_DIR
from memd.server.watch import inotify
from memd.server.watch.inotify import Event, Inotify
from memd.server.watch.watchfiles_watch import (
    DEBOUNCE_MS as DEBOUNCE_MS,
    MAX_RETRY_DELAY,
    MISSING_POLL as MISSING_POLL,
    STEP_MS as STEP_MS,
    ThreadedWatch,
    mentions as mentions,
    touched_categories as touched_categories,
)

logger = logging.getLogger(__name__)

FALLBACK_WATCHERS = 32
"""The most workspaces watched by watchfiles (one thread each) where inotify is not used."""
RETRY_UNWATCHED = 30.0
"""Seconds between a workspace's quiet tries for a watch while the user's watches are used up."""
OVERFLOW_LOG_INTERVAL = 60.0
GATHER = 0.05
"""Seconds the hub lets events gather once some are queued, before it reads them: one commit of
memd's own makes about ten (its lock, its temp file, the swap), and a wake-up for each cost the
write path a loop turn and a contended worker thread. (A change is reported once its directory
has been quiet for STEP_MS anyway.)"""
GATHER_HURRIED = 0.002
"""The gather while a workspace is giving way to a writer waiting for `.memory/.lock`: memd's
next commit waits for that writer's lock events."""

ChangeCallback = Callable[[frozenset[Category]], Awaitable[None]]
SourceCallback = Callable[[str | None, str, bool], None]
"""Told of a change where the sources are watched: the directory (None: anything may have
changed), the name and whether only that file's content changed."""
MAX_SOURCE_WATCHES = 8192
"""The most directories watched for one workspace's read-only sources; past it they are looked
at again by age instead."""
CONTENT_ONLY = inotify.IN_MODIFY | inotify.IN_CLOSE_WRITE | inotify.IN_ATTRIB
"""The events that change a file's content or metadata, never which names exist."""
LockCallback = Callable[[int], None]
"""Told the inotify mask of each event on `.memory/.lock` (see
`workspaces.write_lock.WorkspaceLock.lock_event`)."""
WatchMode = Literal["starting", "inotify", "watchfiles", "on-access", "stopped"]
Role = Literal["memory", "root", "sources"]
Placement = Literal["watched", "waiting", "missing", "full", "failed"]
"""What a (re)watch achieved: `.memory` watched; only the root watched (no `.memory` yet);
nothing to watch (no root); out of watches; another error."""

_MEMORY_NAME = os.fsencode(MEMORY_DIR)
_PROJECT_CONFIG_NAME = os.fsencode(PROJECT_CONFIG_NAME)
_LOCK_NAME = b".lock"
_POLLING_OFF = {"", "false", "disable", "disabled"}
_MISSING = {errno.ENOENT, errno.ENOTDIR}


def polling_forced() -> bool:
    """Return True if `WATCHFILES_FORCE_POLLING` asks for polling (as watchfiles reads it)."""
    return os.environ.get("WATCHFILES_FORCE_POLLING", "").lower() not in _POLLING_OFF


class WatchHub:
    """The daemon's one watching service: one inotify instance (or the bounded fallback)."""

    def __init__(self, *, fallback_watchers: int = FALLBACK_WATCHERS) -> None:
        self.mode: WatchMode = "starting"
        self.started = anyio.Event()
        self._inotify: Inotify | None = None
        self._by_wd: dict[int, set[tuple[WorkspaceWatcher, Role]]] = {}
        self._watchers: set[WorkspaceWatcher] = set()
        self._threads_left = fallback_watchers
        self._warned_full = False
        self._last_overflow_log = -OVERFLOW_LOG_INTERVAL
        self._scope = anyio.CancelScope()
        self._hurried = 0  # workspaces waiting for another writer's lock events
        self._hurry = anyio.Event()  # set: cut the current gather short

    @property
    def watched(self) -> int:
        """How many workspaces are watched now (the others are checked on access)."""
        return sum(1 for watcher in self._watchers if watcher.watched)

    @property
    def watches(self) -> int:
        """How many inotify watches the daemon holds."""
        return len(self._by_wd)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Choose the mode, report ready, and deliver events until stopped."""
        with self._scope:
            try:
                self.mode, instance = _open_mode()
                self._inotify = instance
                task_status.started()
                self.started.set()
                if instance is None:
                    await anyio.sleep_forever()
                    return
                while True:
                    await anyio.wait_readable(instance.fd)
                    # One wake-up for a burst (a commit is ~10 events), unless someone waits.
                    with anyio.move_on_after(GATHER_HURRIED if self._hurried else GATHER):
                        await self._hurry.wait()
                    if self._hurry.is_set():
                        self._hurry = anyio.Event()
                    for event in instance.read_events():
                        self._dispatch(event)
            finally:
                self.mode = "stopped"
                if self._inotify is not None:
                    self._inotify.close()
                    self._inotify = None
                self._by_wd.clear()

    def stop(self) -> None:
        """Stop delivering events and close the instance."""
        self._scope.cancel()

    def hurry(self, hurried: bool) -> None:
        """Read events within GATHER_HURRIED from now on (`hurried`), or again within GATHER
        (calls are counted: each True is ended by one False)."""
        self._hurried += 1 if hurried else -1
        if hurried:
            self._hurry.set()

    def _dispatch(self, event: Event) -> None:
        if event.mask & inotify.IN_Q_OVERFLOW:
            now = anyio.current_time()
            if now - self._last_overflow_log >= OVERFLOW_LOG_INTERVAL:
                self._last_overflow_log = now
                logger.warning(
                    "the inotify queue overflowed (fs.inotify.max_queued_events); rescanning "
                    "every workspace"
                )
            for watcher in self._watchers:
                watcher.request_rewatch()
                watcher.sources_lost()
            return
        holders = self._by_wd.get(event.wd)
        if not holders:
            return
        if event.mask & inotify.IN_IGNORED:  # the kernel ended this watch: it is gone
            del self._by_wd[event.wd]
        for watcher, role in list(holders):
            watcher.notice(role, event)

    # -------------------------------------------------------------- placing watches

    def place(self, watcher: WorkspaceWatcher) -> Placement:
        """(Re)watch `watcher`'s `.memory` and root, replacing the watches it held. Blocks for
        two path lookups; call on the event loop, so no event for a new watch is missed."""
        self._watchers.add(watcher)
        if self._inotify is None:  # the hub has stopped: the daemon is shutting down
            return "missing"
        wanted: dict[Role, int] = {}
        errors: dict[Role, OSError] = {}
        roles: tuple[tuple[Role, str], ...] = (
            ("memory", watcher.memory_dir),
            ("root", watcher.root),
        )
        for role, path in roles:
            try:
                wanted[role] = self._inotify.add_watch(path)
            except OSError as exc:
                errors[role] = exc
        self._hold(watcher, wanted)
        if any(exc.errno == errno.ENOSPC for exc in errors.values()):
            self._hold(watcher, {})
            if not self._warned_full:
                self._warned_full = True
                logger.warning(
                    "out of inotify watches (fs.inotify.max_user_watches); workspaces that "
                    "cannot be watched are checked when they are read, and subscribers hear "
                    "of outside changes then. Raise the limit (sysctl fs.inotify."
                    "max_user_watches) or lower idle_unload_seconds."
                )
            return "full"
        memory_error, root_error = errors.get("memory"), errors.get("root")
        if memory_error is None:
            return "watched"
        if memory_error.errno in _MISSING and root_error is None:
            return "waiting"
        if memory_error.errno in _MISSING and root_error is not None:
            if root_error.errno in _MISSING:
                return "missing"
            memory_error = root_error
        watcher.failure = f"{memory_error.strerror or memory_error}"
        return "failed"

    def release(self, watcher: WorkspaceWatcher) -> None:
        """Remove every watch `watcher` holds (those no other workspace shares)."""
        self._hold(watcher, {})
        self._hold_sources(watcher, {})
        self._watchers.discard(watcher)

    def watch_sources(
        self, watcher: WorkspaceWatcher, directories: Sequence[str]
    ) -> tuple[bool, bool]:
        """Watch `directories` (real paths) for `watcher`'s sources, and no others; return
        whether every one is watched and whether some were not before. On the event loop (see
        `place`); a directory watched already costs nothing."""
        if self._inotify is None or watcher not in self._watchers:
            return False, False
        if len(directories) > MAX_SOURCE_WATCHES:
            self._hold_sources(watcher, {})
            return False, False
        wanted: dict[str, int] = {}
        every, added = True, False
        for path in directories:
            wd = watcher.source_wds.get(path)
            if wd is not None and (watcher, "sources") in self._by_wd.get(wd, ()):
                wanted[path] = wd
                continue
            try:
                wanted[path] = self._inotify.add_watch(path)
                added = True
            except OSError as exc:
                every = False
                if exc.errno == errno.ENOSPC:
                    self._hold_sources(watcher, {})
                    return False, False
        self._hold_sources(watcher, wanted)
        return every, added

    def _hold_sources(self, watcher: WorkspaceWatcher, wanted: dict[str, int]) -> None:
        for wd in wanted.values():
            self._by_wd.setdefault(wd, set()).add((watcher, "sources"))
        kept = set(wanted.values())
        for wd in watcher.source_wds.values():
            if wd in kept:
                continue
            holders = self._by_wd.get(wd)
            if holders is None:
                continue
            holders.discard((watcher, "sources"))
            if not holders:
                del self._by_wd[wd]
                if self._inotify is not None:
                    self._inotify.rm_watch(wd)
        watcher.source_wds = dict(wanted)
        watcher.source_dirs = {wd: path for path, wd in wanted.items()}

    def _hold(self, watcher: WorkspaceWatcher, wanted: dict[Role, int]) -> None:
        for role, wd in wanted.items():
            self._by_wd.setdefault(wd, set()).add((watcher, role))
        for role, wd in watcher.wds.items():
            if wanted.get(role) == wd:
                continue
            holders = self._by_wd.get(wd)
            if holders is None:
                continue  # the kernel ended it already (IN_IGNORED)
            holders.discard((watcher, role))
            if not holders:
                del self._by_wd[wd]
                if self._inotify is not None:
                    self._inotify.rm_watch(wd)
        watcher.wds = dict(wanted)

    # -------------------------------------------------------------- the fallback

    def take_thread(self) -> bool:
        """Take one of the FALLBACK_WATCHERS watchfiles slots, if one is free."""
        if self._threads_left <= 0:
            return False
        self._threads_left -= 1
        return True

    def give_back_thread(self) -> None:
        """Free a slot taken with `take_thread`."""
        self._threads_left += 1

    def follow(self, watcher: WorkspaceWatcher) -> None:
        """Count `watcher` in `watched` (fallback modes)."""
        self._watchers.add(watcher)

    def forget(self, watcher: WorkspaceWatcher) -> None:
        """Stop counting `watcher` (fallback modes)."""
        self._watchers.discard(watcher)


def _open_mode() -> tuple[WatchMode, Inotify | None]:
    if polling_forced() or not inotify.available():
        return "watchfiles", None
    try:
        return "inotify", Inotify.open()
    except OSError as exc:
        logger.warning(
            "cannot create an inotify instance (%s); outside changes to .memory files are "
            "noticed when they are next read. Close programs holding many (or raise sysctl "
            "fs.inotify.max_user_instances) and restart memd.",
            exc.strerror or exc,
        )
        return "on-access", None


class WorkspaceWatcher:
    """Watches one workspace's `.memory/` through the hub and reports which category files
    changed."""

    def __init__(
        self,
        root: str,
        memory_dir: str,
        on_change: ChangeCallback,
        hub: WatchHub,
        on_lock: LockCallback | None = None,
        on_source: SourceCallback | None = None,
        categories: Categories = BUILTIN,
    ) -> None:
        self.root = root
        self._all = frozenset(categories)
        self._by_name = {os.fsencode(category.file): category for category in categories}
        self.on_source = on_source
        self.memory_dir = memory_dir
        self._on_change = on_change
        self._on_lock = on_lock
        self._hub = hub
        self._stop = anyio.Event()
        self._wake = anyio.Event()
        self._rewatch = False
        self._pending: set[Category] = set()
        self._first = self._last = 0.0
        self._threaded: ThreadedWatch | None = None
        self.wds: dict[Role, int] = {}
        """The watch descriptors held, by role (kept by the hub)."""
        self.source_wds: dict[str, int] = {}
        """The watches on the sources' directories, by real path (kept by the hub)."""
        self.source_dirs: dict[int, str] = {}
        self.placement: Placement | Literal["idle", "threaded", "on access"] = "idle"
        self.failure = ""

    @property
    def watched(self) -> bool:
        """True while outside changes are noticed as they happen."""
        return self.placement in ("watched", "waiting", "threaded")

    def stop(self) -> None:
        """Ask the watcher to return (at once, or within a STEP_MS for the fallback)."""
        self._stop.set()
        self._wake.set()
        if self._threaded is not None:
            self._threaded.stop()

    def request_rewatch(self) -> None:
        """Re-watch and rescan everything (the hub lost events, or the directory changed)."""
        self._rewatch = True
        self._wake.set()

    def serve_sources(
        self, on_source: SourceCallback
    ) -> Callable[[Sequence[str]], tuple[bool, bool]]:
        """Report changes where the sources are watched to `on_source`; return `watch_sources`."""
        self.on_source = on_source
        return self.watch_sources

    def watch_sources(self, directories: Sequence[str]) -> tuple[bool, bool]:
        """Watch the directories of a look at the sources (see `WatchHub.watch_sources`)."""
        return self._hub.watch_sources(self, directories)

    def sources_lost(self) -> None:
        """Events were lost: the sources may have changed anywhere."""
        if self.on_source is not None:
            self.on_source(None, "", False)

    def notice(self, role: Role, event: Event) -> None:
        """Take one event for one of this workspace's watches (called by the hub)."""
        if role == "sources":
            self._notice_source(event)
            return
        if role == "memory" and event.name == _PROJECT_CONFIG_NAME:
            self.sources_lost()  # the project's own sources may be others now
            return
        if event.mask & inotify.SELF_GONE or (role == "root" and event.name == _MEMORY_NAME):
            self.request_rewatch()
            return
        if role == "memory" and event.name == _LOCK_NAME and self._on_lock is not None:
            self._on_lock(event.mask)
            return
        category = self._by_name.get(event.name) if role == "memory" else None
        if category is None:
            return
        now = anyio.current_time()
        if not self._pending:
            self._first = now
        self._last = now
        self._pending.add(category)
        self._wake.set()

    def _notice_source(self, event: Event) -> None:
        directory = self.source_dirs.get(event.wd)
        if self.on_source is None or directory is None:
            return
        if event.mask & inotify.SELF_GONE:
            self.sources_lost()
            return
        content = not event.mask & inotify.IN_ISDIR and not event.mask & ~CONTENT_ONLY
        self.on_source(directory, os.fsdecode(event.name), content)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Watch until stopped; report ready once the first watch is in place (or once it is
        known that there is nothing to watch yet, or that this workspace is checked on access)."""
        with anyio.fail_after(10):  # the registry starts the hub before any workspace
            await self._hub.started.wait()
        if self._hub.mode == "inotify":
            try:
                await self._watch_loop(task_status)
            finally:
                self._hub.release(self)
        elif self._hub.mode == "watchfiles" and self._hub.take_thread():
            self._threaded = ThreadedWatch(
                self.root, self.memory_dir, self._on_change, categories=self._all
            )
            self.placement = "threaded"
            self._hub.follow(self)
            try:
                if self._stop.is_set():
                    task_status.started()
                    return
                await self._threaded.run(task_status=task_status)
            finally:
                self._hub.forget(self)
                self._hub.give_back_thread()
        else:
            self.placement = "on access"
            task_status.started()
            await self._stop.wait()

    async def _watch_loop(self, task_status: TaskStatus[None]) -> None:
        ready = False
        retry_delay = MISSING_POLL
        logged = ""
        while not self._stop.is_set():
            self._rewatch = False
            self._pending.clear()
            placement = self.placement = self._hub.place(self)
            if not ready:
                ready = True
                task_status.started()
            if placement == "failed" and self.failure != logged:
                logged = self.failure  # once per workspace and kind of failure
                logger.warning("cannot watch %s (%s); retrying", self.memory_dir, self.failure)
            try:
                await self._on_change(self._all)  # the watch is in place: rescan everything
                if placement in ("watched", "waiting"):
                    await self._follow()
                    retry_delay = MISSING_POLL
                    continue
            except Exception:  # a watcher bug must never take the daemon down
                logger.exception("watching %s failed; restarting", self.memory_dir)
            if placement == "missing":
                await self._pause(MISSING_POLL)
            elif placement == "full":
                await self._pause(RETRY_UNWATCHED)
            else:
                await self._pause(retry_delay)
                retry_delay = min(retry_delay * 2, MAX_RETRY_DELAY)

    async def _follow(self) -> None:
        """Report batches of changes until a re-watch is needed or the watcher stops."""
        while True:
            if self._wake.is_set():
                self._wake = anyio.Event()
            if self._stop.is_set() or self._rewatch:
                return
            if not self._pending:
                await self._wake.wait()
                continue
            due = min(self._last + STEP_MS / 1000, self._first + DEBOUNCE_MS / 1000)
            if anyio.current_time() < due:
                with anyio.move_on_at(due):
                    await self._wake.wait()
                continue
            batch = frozenset(self._pending)
            self._pending.clear()
            await self._on_change(batch)

    async def _pause(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await self._stop.wait()
