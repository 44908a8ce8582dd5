"""The write lock an actor commits under: `WriteLock` as the actor sees it, `WorkspaceLock` (a
workspace's: memd's own writers and HackLM's `.memory/.lock`), and `Unlocked` for a directory no
other writer uses (and tests).

Rules:
- `try_write` runs blocking `work(check)` in a worker thread while holding the lock, or returns
  BUSY without running it; `check` is called right before each rename. A `Staging`'s `before`
  runs in the same worker-thread call before the lock is tried, and its `after` once the lock is
  released, however the attempt ended: the slow part of a write (the temp file and its fsync,
  the directory's fsync) is kept out of the hold.
- A workspace's lock is first an in-process turn (so memd's five actors never contend through
  the lock file), then HackLM's `.memory/.lock` (so HackLM and other tools never interleave with
  memd; the file protocol is `memd.fs.lock_file`). `try_write` takes `.memory/.lock`, writes and
  releases it in one worker-thread call, so a commit costs one thread hop. Writes that queue
  while a hold is under way (other categories' commits, the inbox) share the next hold (and
  once a hold carried several, the next waits GATHER_TURNS turns of the event loop for more
  to join): their
  temp files are staged side by side (one worker thread each, so the file system commits their
  fsyncs together), then one `.memory/.lock` is taken for all their works in turn, then their
  renames are made durable (one directory fsync covers them all: the others share its
  outcome rather than fsync again). Each write's outcome
  is its own: one failing leaves the others' results; a write whose deadline passes while still
  queued is never run; one already in a hold gets its outcome. an actor whose
  `try_write` finds it held (BUSY) backs off and tries again until the lock timeout. While a
  write is in progress, `keep_fresh` rewrites the lock's `ts` every REFRESH_INTERVAL seconds,
  so HackLM never breaks a long hold as stale.
- A `.lock` found at load is taken once (`prepare_now`, if the workspace has anything to
  prepare), which breaks it if its holder is gone; a `.lock` that cannot be judged by its pid
  (another user's, pid 1, a `ts` in the future) is stale once memd has seen it, from the load on
  (`note_lock`), for 10 s (see `lock_file`).
- Under the lock, before the work, the workspace prepares its directory (`Preparation`: the
  root's identity, the debris of a crash, the first-use files); it may answer "not now" (BUSY).
- Nothing is written while git is working in the workspace's repository (its `index.lock`
  exists: see `git_state`): a write then backs off like one that finds `.memory/.lock` held,
  and its timeout error names git's lock.
- HackLM gets its turn. A commit holds `.memory/.lock` only to check and rename, so most of a
  waiting HackLM's retries find it free. And once writers have been seen waiting for PATIENCE
  seconds in a row (someone read `.memory/.lock` during memd's holds: HackLM does each time it
  finds it held, see `lock_file`, `waiter_seen`), memd takes the lock again only until just
  before the waiter's next retry (HACKLM_FIRST_SLEEP after its read, by the lock's access time),
  and then not until a waiter's own lock has appeared and gone (its record written into
  `.lock`, then `.lock` removed, as the watcher reports them to `lock_event`) or GIVE_WAY_MAX
  seconds have passed; memd's stores queue meanwhile and share the next commit (`wait_turn`).
  Without inotify only the bound ends it.

Size: the lock's three parts (the in-process turn and its shared holds, HackLM's file lock,
giving way) are one protocol, read in order.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

import anyio
import anyio.lowlevel

from memd.core.format.limits import LOCK_TIMEOUT
from memd.fs import git_state, storage
from memd.fs.lock_file import BUSY, DEFAULT_TIMEOUT, REFRESH_INTERVAL, Busy, LockCheck
from memd.server.watch import inotify
from memd.server.watch.watcher import WatchHub
from memd.server.workspaces.lock_wait import Backoff, MemoryDirLock
from memd_client.errors import LockTimeout, RpcError

T = TypeVar("T")

GIVE_WAY_MAX = 1.2
"""The longest memd gives way to a writer seen waiting for `.memory/.lock`, in seconds: longer
than HackLM's longest sleep between two attempts (1 s), so it tries once meanwhile."""
HACKLM_FIRST_SLEEP = 0.05
"""HackLM's sleep after its first failed attempt (50 ms x attempt, hacklm-spec.md §5.3)."""
GIVE_WAY_AHEAD = 0.015
"""How long before a waiter's retry memd stops taking the lock (a commit's hold)."""
MAX_GROUP = 64
"""The most writes one hold of the lock carries (`WorkspaceLock.try_write`): at most one per
category actor and inbox at a time, so this is a bound, not a tuning knob."""
GATHER_TURNS = 4
"""How many event-loop turns a hold waits for other writes to queue, once the last hold
carried more than one (several categories committing at once): an actor that has applied
its batch in those turns joins this hold instead of waiting for the next."""
PATIENCE = 0.3
"""memd gives way once writers have been seen waiting for this many seconds in a row (HackLM
has then failed 3 of its 20 attempts): a short hold lets most of their retries in by itself,
and giving way at every sighting would idle memd through every one of their sleeps."""


class Staging(Protocol):
    """What a write does around its hold of the lock (blocking, in the worker thread)."""

    def before(self) -> None:
        """Run before the lock is tried (write and fsync the new file at a temp name)."""

    def after(self, synced: storage.DirectorySyncs) -> None:
        """Run once the lock is released, however the attempt ended (make the rename durable,
        or remove the temp file); may raise if a write it finishes failed. `synced` is shared
        by the writes of one hold: a directory fsynced once after all their renames is not
        fsynced again (`storage.Staged.sync`)."""


class WriteLock(Protocol):
    """The write lock of the actor's directory (`WorkspaceLock`, `Unlocked`)."""

    @property
    def lock_timeout(self) -> float:
        """How long a batch may wait for the lock, in seconds."""

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        """Run blocking `work(check)` in a worker thread under the lock, `staging` around it;
        BUSY if it is held."""

    def lock_timeout_error(self) -> RpcError:
        """Return the error for a batch that waited `lock_timeout` seconds."""

    async def wait_turn(self) -> None:
        """Return once another writer seen waiting for the lock has had its turn (at once if
        none is): an actor calls it before it takes a batch, so stores queued meanwhile share
        the next commit."""


class Unlocked:
    """A `WriteLock` that locks nothing (a directory no other writer uses; tests): `check` runs
    right before each rename."""

    lock_timeout = LOCK_TIMEOUT

    def __init__(self, check: LockCheck | None = None) -> None:
        self._check = check or _lock_still_held

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        """Run `work(check)` in a worker thread, `staging` around it."""
        return await anyio.to_thread.run_sync(staged_run, staging, work, self._check)

    def lock_timeout_error(self) -> RpcError:
        """Never used: nothing is ever held."""
        return LockTimeout("No lock is held here.")

    async def wait_turn(self) -> None:
        """Nobody else takes this lock: nobody to give way to."""


def _lock_still_held() -> None:
    """The check for writes that need no lock."""


def staged_run(staging: Staging | None, hold: Callable[..., T], *args: object) -> T:
    """Run `hold(*args)` (blocking) with `staging`'s `before` first and its `after` last, also
    when `hold` raises (then an error of `after`'s own is dropped for `hold`'s)."""
    if staging is None:
        return hold(*args)
    staging.before()
    try:
        done = hold(*args)
    except BaseException:
        with contextlib.suppress(Exception):
            staging.after({})
        raise
    staging.after({})
    return done


class Preparation(Protocol):
    """What the workspace does under the lock before a hold's work (blocking, in the worker
    thread): the first-use preparation of its directory (see `workspace.Workspace`)."""

    def prepare_under_lock(self, *, sweeping: bool) -> None:
        """Run under the lock before each hold's work (`sweeping`: a hold for nothing else);
        raise `storage.NotNow(None)` to have the attempt found BUSY."""

    def nothing_to_prepare(self) -> bool:
        """Return True if a hold for the preparation alone has nothing to do (on the loop)."""


class WorkspaceLock:
    """The write lock of one workspace's `.memory/`: memd's in-process mutex, then HackLM's
    `.memory/.lock`; no write while git holds the repository's index lock; memd gives way to
    writers seen waiting for `.lock` (the module's rules)."""

    def __init__(
        self,
        root: str,
        memory_dir: str,
        *,
        preparation: Preparation,
        hub: WatchHub,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """`root`: the repository git's index lock is looked for in; `hub`: the watch hub the
        lock's events come through (hurried while memd gives way)."""
        self.root = root
        self.memory_dir = memory_dir
        self._preparation = preparation
        self._hub = hub
        self._queue: list[_Request[Any]] = []  # writes waiting for the next hold
        self._running: anyio.Event | None = None  # set when the group holding the lock is over
        self._last_group = 0  # how many writes the last hold carried
        self._dir_lock = MemoryDirLock(memory_dir, timeout=timeout)
        self._git_lock: str | None = None  # the git index lock the last write waited for
        self._keeper_scope = anyio.CancelScope()
        self._give_way: _GiveWay | None = None  # a waiter seen: its turn comes first
        self._waiting_since: float | None = None  # writers seen waiting since (anyio's clock)
        self._last_sighting = 0.0

    @property
    def lock_timeout(self) -> float:
        """How long a write waits for another tool's `.memory/.lock`, in seconds."""
        return self._dir_lock.timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float) -> None:
        self._dir_lock.timeout = seconds

    @property
    def is_held(self) -> bool:
        """True while a write holds the lock (or memd's own mutex)."""
        return self._running is not None or bool(self._queue) or self._dir_lock.is_held

    def note_lock(self) -> None:
        """Note the `.lock` there is now (blocking, at load): if memd cannot judge it by its
        pid, its age counts from here (see `lock_file.MemoryDirLock.note_lock`)."""
        self._dir_lock.note_lock()

    async def keep_fresh(self) -> None:
        """Rewrite the lock's `ts` every REFRESH_INTERVAL seconds while a write holds it long,
        until `close`."""
        with self._keeper_scope:
            while True:
                await anyio.sleep(REFRESH_INTERVAL)
                if self._dir_lock.is_held:
                    await anyio.to_thread.run_sync(self._dir_lock.refresh_if_held_long)

    def close(self) -> None:
        """Stop refreshing: writes in progress are short; a stuck one is not refreshed."""
        self._keeper_scope.cancel()

    def lock_timeout_error(self) -> RpcError:
        """Return the error for a write that waited `lock_timeout` seconds for the lock (or for
        git to finish)."""
        if self._git_lock is None:
            return self._dir_lock.timeout_error()
        return LockTimeout(
            f"git has been working in this repository for over {self.lock_timeout:g} s "
            f"({self._git_lock} exists), so memd wrote nothing to {self.memory_dir}; "
            "retry once it finishes, or remove that file if no git command is running.",
            data={"path": self._git_lock},
        )

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        """Run blocking `work(check)` in a worker thread while holding the write lock; `check`
        raises if another process broke `.memory/.lock` meanwhile (call it right before each
        rename, it also stops the work while git works). Writes that queue while another group
        holds the lock share the next hold (`_hold_group`). The in-process turn is waited for
        until `deadline` (anyio's clock); HackLM's lock is tried once. The workspace's
        `Preparation` runs under the lock first. `staging` runs around the hold, in the same
        call.

        Returns:
            What `work` returned, or BUSY (without running `work`) if another process holds
            `.memory/.lock`, git holds its index lock, or the preparation said not now: back
            off and try again.

        Raises:
            LockTimeout: memd's own writers kept the in-process lock until `deadline`.
            Exception: whatever `work` raises.
        """
        await self.wait_turn(deadline)
        request: _Request[T] = _Request(work, staging)
        self._queue.append(request)
        try:
            while not request.done:
                running = self._running
                if running is None:  # the lock is free: take it now, whatever the deadline
                    await self._run_group()
                elif anyio.current_time() >= deadline:
                    break
                else:
                    with anyio.move_on_at(deadline):
                        await running.wait()
        finally:
            await self._settle(request)
        if not request.done:
            raise self._dir_lock.timeout_error() from None
        if isinstance(request.error, storage.NotNow):
            self._git_lock = request.error.args[0]  # None: waiting for new files to settle
            return BUSY
        if request.error is not None:
            raise request.error
        self._git_lock = None
        return request.value  # type: ignore[return-value]

    async def _settle(self, request: _Request[Any]) -> None:
        """A write that stops waiting (its deadline, or cancelled): one never started leaves
        the queue (nothing was done for it); one in the group running now waits for its
        outcome, shielded, as a worker-thread call is waited for."""
        if request in self._queue:
            self._queue.remove(request)
            return
        with anyio.CancelScope(shield=True):
            while not request.done and self._running is not None:
                await self._running.wait()

    async def _run_group(self) -> None:
        """Run every write queued now (up to MAX_GROUP) in one worker-thread call and one hold
        of the lock, each write's outcome set on its request; the next group starts once this
        one is over."""
        running = self._running = anyio.Event()
        try:
            if self._last_group > 1:  # writers commit side by side: let them join this hold
                for _ in range(GATHER_TURNS):
                    await anyio.lowlevel.checkpoint()
            group = self._queue[:MAX_GROUP]
            del self._queue[: len(group)]
            self._last_group = len(group)
            if any(r.work is _prepare_only for r in group) and (
                self._preparation.nothing_to_prepare()
            ):
                # A sweep with nothing left to do, or whose `.memory/` went away meanwhile (a
                # sweep never makes it: only a write does).
                for request in group:
                    if request.work is _prepare_only:
                        request.finish(None)
                group = [request for request in group if not request.done]
            with anyio.CancelScope(shield=True):  # it carries other writers' work
                if sum(request.staging is not None for request in group) > 1:
                    # Several files: their temp files written and fsynced side by side, one
                    # thread each, so the file system commits them together (ext4: one
                    # journal commit for concurrent fsyncs), not one after another.
                    async with anyio.create_task_group() as stagers:
                        for request in group:
                            stagers.start_soon(anyio.to_thread.run_sync, _stage_one, request)
                    group = [request for request in group if not request.done]
                    if group:
                        await anyio.to_thread.run_sync(self._hold_group, group, True)
                elif group:
                    await anyio.to_thread.run_sync(self._hold_group, group, False)
        finally:
            self._running = None
            running.set()
            if self._dir_lock.waiter_seen:  # someone read our lock: a writer is waiting
                self._dir_lock.waiter_seen = False
                self._saw_waiter(self._dir_lock.waiter_read_ns)

    def _hold_group(self, group: list[_Request[Any]], staged_already: bool) -> None:
        """Blocking: each write's staging first (its temp file written and fsynced; done
        already with `staged_already`), then one hold of the lock for all their works in turn,
        then each staging's end (the directory's fsync: the first makes every rename of the
        group durable, the rest find nothing left to sync). One write's error is its own: the
        others still run."""
        staged = group if staged_already else [r for r in group if _stage_one(r)]
        try:
            if not staged:
                return
            try:
                held = self._dir_lock.try_run(functools.partial(self._prepared_first, staged))
            except Exception as exc:  # the lock or the preparation failed: nothing ran
                for request in staged:
                    request.fail(exc)
            else:
                if held is BUSY:
                    for request in staged:
                        request.finish(BUSY)
        finally:
            _end_all(staged)

    async def prepare_now(self) -> None:
        """Take the lock for the workspace's preparation alone (a sweep at load), backing off
        while it is held, for at most `lock_timeout` seconds; a write may prepare first (under
        the mutex: this then skips the lock).

        Raises:
            LockTimeout: the lock was held until the timeout.
            RpcError: as `try_write`.
        """
        backoff = Backoff(anyio.current_time() + self._dir_lock.timeout)
        while isinstance(await self.try_write(_prepare_only, deadline=backoff.deadline), Busy):
            await backoff.pause(self._dir_lock.timeout_error)

    def _prepared_first(self, group: list[_Request[Any]], check: LockCheck) -> None:
        """Run each write of `group` under the lock, with a check that also stops it while git
        works; first the workspace's preparation (which may raise NotNow: the group is BUSY)."""

        def check_git_too() -> None:
            check()
            held = git_state.index_lock_held(self.root)
            if held is not None:
                raise storage.NotNow(held)

        check_git_too()
        self._preparation.prepare_under_lock(
            sweeping=all(request.work is _prepare_only for request in group)
        )
        for request in group:
            try:
                request.finish(request.work(check_git_too))
            except Exception as exc:
                request.fail(exc)

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

    def lock_event(self, mask: int) -> None:
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


class _Request(Generic[T]):
    """One write waiting for its hold (`WorkspaceLock.try_write`): its work and staging, then
    its outcome, set once, in the worker thread (`finish` or `fail`)."""

    __slots__ = ("done", "error", "staging", "value", "work")

    def __init__(self, work: Callable[[LockCheck], T], staging: Staging | None) -> None:
        self.work = work
        self.staging = staging
        self.done = False
        self.value: T | Busy | None = None
        self.error: Exception | None = None

    def finish(self, value: T | Busy | None) -> None:
        if not self.done:
            self.value, self.done = value, True

    def fail(self, error: Exception) -> None:
        if not self.done:
            self.error, self.done = error, True

    def ended_badly(self, error: Exception) -> None:
        """The staging's end failed (the rename not made durable): that error is the outcome,
        unless the hold already failed with its own (as `staged_run`)."""
        if self.error is None:
            self.value, self.error, self.done = None, error, True


def _stage_one(request: _Request[Any]) -> bool:
    """Run the request's staging `before` (blocking); return False if it failed (the request
    then holds the error)."""
    try:
        if request.staging is not None:
            request.staging.before()
    except Exception as exc:
        request.fail(exc)
        return False
    return True


def _end_all(staged: list[_Request[Any]]) -> None:
    """Run each request's staging `after` (blocking), however its hold ended; an error of its
    own is the request's only if the hold gave it none. Every rename of the group is made by
    now, so one fsync of their directory makes them all durable: the others share its outcome
    (`synced`)."""
    synced: storage.DirectorySyncs = {}
    for request in staged:
        if request.staging is None:
            continue
        try:
            request.staging.after(synced)
        except Exception as exc:
            request.ended_badly(exc)


class _GiveWay:
    """memd giving way to a writer seen waiting for the lock: from `begin` until `done` (its
    lock appeared and went) or `until` (anyio's clock)."""

    def __init__(self, begin: float, until: float) -> None:
        self.begin = begin
        self.until = until
        self.appeared = False
        self.done = anyio.Event()


def _prepare_only(check: LockCheck) -> None:
    """The write of a sweep: nothing but taking the lock (which prepares the directory first)."""
