"""`ThreadedWatch`: the fallback watcher, one watchfiles `RustNotify` (and one worker thread)
per workspace, for systems without inotify (macOS) or when `WATCHFILES_FORCE_POLLING` is set.
`memd.server.watch.watcher` runs at most FALLBACK_WATCHERS of these; further workspaces are checked
on access only.

Theory of operation: the watcher only *notices*; it never reads a file. For each batch of file
events it calls `on_change` with the categories whose files were touched, and the workspace
asks those categories' actors to re-read them (each actor ignores the echo of its own writes,
since its file's fingerprint is still the one it wrote).

Rules (tech-notes.md §3, all verified with watchfiles 1.3):
- Watch the `.memory` directory itself, never single files (a watch on a file goes blind after
  the first atomic rename), and non-recursively.
- watchfiles goes blind, silently, once the watched directory is deleted or renamed away. So on
  an event for the directory itself, or when its (device, inode) is no longer what the watch
  started on (checked every IDENTITY_CHECK seconds), the watch restarts, and every file is
  rescanned after each (re)start because creates right after a `mkdir` can be missed.
- While `.memory` does not exist, the workspace root is watched (non-recursively) until it
  appears; while the root does not exist either, it is polled every MISSING_POLL seconds.
- Changes are batched: a batch is reported once the directory has been quiet for STEP_MS, or
  DEBOUNCE_MS after its first change, so a change shows up within a few hundred milliseconds.
- watchfiles' `RustNotify` is used directly (it is what `awatch` wraps) so that "the watch is in
  place" is a point in time: the rescan happens after it, and no change can slip in between.
  `WATCHFILES_FORCE_POLLING` is honoured as watchfiles documents it.
- Stopping sets the `stop_event` that each `watch` call checks every STEP_MS; cancelling instead
  would block for a whole IDENTITY_CHECK.
- A `watch` call keeps one worker thread busy, so a running watcher adds one token to anyio's
  default thread limiter for as long as it runs: file I/O never starves behind watchers.
- A watcher that fails (e.g. the inotify limit is reached) logs, backs off and retries; reads
  still re-check files themselves, so memd stays correct without it, only less prompt.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Awaitable, Callable, Iterable
from typing import NamedTuple

import anyio
from anyio.abc import TaskStatus
from watchfiles import Change
from watchfiles._rust_notify import RustNotify

from memd.core.format.categories import CATEGORIES, Category

logger = logging.getLogger(__name__)

STEP_MS = 50
DEBOUNCE_MS = 200
IDENTITY_CHECK = 1.0
MISSING_POLL = 1.0
MAX_RETRY_DELAY = 30.0
POLL_DELAY_MS = 300
_POLLING_OFF = {"", "false", "disable", "disabled"}

ChangeCallback = Callable[[frozenset[Category]], Awaitable[None]]

_Identity = tuple[int, int]


class _Target(NamedTuple):
    """The directory being watched: `.memory` itself, or the root while `.memory` is missing."""

    path: str
    identity: _Identity
    is_memory_dir: bool


def touched_categories(
    changes: Iterable[tuple[Change, str]], categories: Iterable[Category] = CATEGORIES
) -> frozenset[Category]:
    """Return those of `categories` whose files appear in a batch of watchfiles events.

    Temp files, the lock file, the archive and anything else are not category files.
    """
    by_file = {category.file: category for category in categories}
    found = (by_file.get(os.path.basename(path)) for _, path in changes)
    return frozenset(category for category in found if category is not None)


def mentions(changes: Iterable[tuple[Change, str]], path: str) -> bool:
    """Return True if a batch of events includes `path` itself."""
    return any(changed == path for _, changed in changes)


class ThreadedWatch:
    """Watches one workspace's `.memory/` and reports which category files changed."""

    def __init__(
        self,
        root: str,
        memory_dir: str,
        on_change: ChangeCallback,
        *,
        categories: frozenset[Category] = frozenset(CATEGORIES),
    ) -> None:
        self.root = root
        self._categories = categories
        self.memory_dir = memory_dir
        self._on_change = on_change
        self._stop = anyio.Event()

    def stop(self) -> None:
        """Ask the watcher to return (within about one STEP_MS)."""
        self._stop.set()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Watch until stopped; report ready once the first watch is in place (or once it is
        known that there is nothing to watch yet)."""
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens += 1
        try:
            await self._watch_loop(task_status)
        finally:
            limiter.total_tokens -= 1

    async def _watch_loop(self, task_status: TaskStatus[None]) -> None:
        ready = False
        retry_delay = MISSING_POLL
        while not self._stop.is_set():
            target = await anyio.to_thread.run_sync(self._choose_target)
            notify = None
            if target is not None:
                try:
                    notify = await anyio.to_thread.run_sync(_open, target.path)
                except (OSError, RuntimeError) as exc:  # e.g. out of inotify watches
                    logger.warning("cannot watch %s (%s); retrying", target.path, exc)
            if not ready:
                ready = True
                task_status.started()
            try:
                # Rescan once the watch is in place: anything may have changed meanwhile.
                await self._on_change(self._categories)
                if notify is not None and target is not None:
                    with notify:
                        await self._follow(notify, target)
                    retry_delay = MISSING_POLL
                    continue
            except (OSError, RuntimeError) as exc:  # e.g. a file name that is not UTF-8
                logger.warning("watching %s failed (%s); restarting", self.memory_dir, exc)
            except Exception:  # a watcher bug must never take the daemon down
                logger.exception("watching %s failed; restarting", self.memory_dir)
            if target is None:
                await self._pause(MISSING_POLL)
            else:
                await self._pause(retry_delay)
                retry_delay = min(retry_delay * 2, MAX_RETRY_DELAY)

    def _choose_target(self) -> _Target | None:
        for path in (self.memory_dir, self.root):
            identity = _directory_identity(path)
            if identity is not None:
                return _Target(path, identity, is_memory_dir=path == self.memory_dir)
        return None

    async def _follow(self, notify: RustNotify, target: _Target) -> None:
        """Report changes until the target is replaced, `.memory` comes or goes, or stop."""
        while True:
            raw = await anyio.to_thread.run_sync(
                notify.watch, DEBOUNCE_MS, STEP_MS, int(IDENTITY_CHECK * 1000), self._stop
            )
            if raw == "stop" or raw == "signal":
                return
            if await anyio.to_thread.run_sync(_directory_identity, target.path) != target.identity:
                return
            if raw == "timeout":
                continue
            changes = {(Change(kind), path) for kind, path in raw}
            if mentions(changes, self.memory_dir):
                return  # `.memory` itself was created, deleted or renamed: choose again
            categories = (
                touched_categories(changes, self._categories)
                if target.is_memory_dir
                else frozenset()
            )
            if categories:
                await self._on_change(categories)

    async def _pause(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await self._stop.wait()


def _open(path: str) -> RustNotify:
    """Start watching the directory `path` (non-recursively); blocks briefly."""
    polling = os.environ.get("WATCHFILES_FORCE_POLLING", "").lower() not in _POLLING_OFF
    return RustNotify([path], False, polling, POLL_DELAY_MS, False, False)


def _directory_identity(path: str) -> _Identity | None:
    """Return (device, inode) of the directory at `path`, or None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
