"""memd's side of HackLM's cross-process lock on a `.memory` directory (`.memory/.lock`).

The protocol, byte for byte what HackLM Memory does:
- Taking the lock is an exclusive create of `.memory/.lock`; the holder writes
  `{"pid":<pid>,"ts":<epoch ms>}` (compact, `pid` first, no newline) in one write. (memd writes
  the record first and links it into place, so its lock is never seen empty.)
- Releasing it is deleting the file.
- A waiter may break a lock that is stale: its `ts` is more than `STALE_MS` old, or its pid is
  not a running process.

Where memd is stricter than HackLM:
- A live pid that belongs to another user (`kill` gives EPERM) is alive; memd never breaks it
  early.
- A record naming memd's own pid that this process does not hold is a leftover of an earlier
  process that had the same pid (a SIGKILL and a restart in a container), so it is stale.
- An unparsable lock (a writer died between create and write) is stale once its mtime is more
  than `STALE_MS` old; HackLM never breaks it.
- Symlinks are never followed: a symlinked `.lock` is unparsable and judged by its own mtime.
- A stale lock is broken by renaming it aside and checking that the renamed file is the one
  judged stale (`_break_stale`), so two breakers never remove each other's fresh lock.
- A held lock's `ts` is rewritten every `REFRESH_INTERVAL` seconds (`held()`), because HackLM
  breaks any lock whose `ts` is older than `STALE_MS`, however long the holder has been busy.
- Release deletes the file only if it is still the one this process created.

Two ways to hold it: `try_run(work)` takes the lock, runs blocking `work` and releases it, all in
one worker-thread call (memd's writes; the caller waits between attempts with a `Backoff` and
refreshes long holds with `refresh_if_held_long`); `held()` holds it around an async body,
refreshing it itself. `try_acquire`, `try_run`, `refresh` and `release` block: call them in a
worker thread. `acquire` and `held` do that themselves.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import logging
import os
import random
import secrets
import stat
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import NamedTuple, TypeVar

import anyio
import msgspec

from memd.processes import pid_alive
from memd.server.storage import STALE_ASIDE_PREFIX, storage_error
from memd_client.errors import LockTimeout

LOCK_FILE = ".lock"
STALE_MS = 10_000
DEFAULT_TIMEOUT = 10.0
REFRESH_INTERVAL = 3.0
MAX_HOLD = 60.0  # a hold this long means memd is stuck: stop refreshing, so others can break it

MAX_RECORD_BYTES = 4096  # a lock file is read up to this many bytes; HackLM's is about 30
FIRST_DELAY = 0.02
DELAY_GROWTH = 1.5
MAX_DELAY = 0.25

_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK}
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_REWRITE_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

logger = logging.getLogger(__name__)

T = TypeVar("T")
LockCheck = Callable[[], None]
"""Blocking; raises `LockTimeout` if the lock is no longer ours (so nothing may be written)."""


class Busy:
    """What `try_run` returns when another writer holds the lock (`work` did not run)."""

    def __repr__(self) -> str:
        """Return "BUSY"."""
        return "BUSY"


BUSY = Busy()

DirKey = tuple[int, int]
"""A `.memory` directory's (device, inode): two spellings of one directory share it."""

# How many lock objects of this process hold, or are trying to take, each lock, by the (device,
# inode) of its `.memory` directory (two spellings of one directory must not take each other's
# lock for a leftover). A record with our pid is only a leftover when no other object of ours is
# involved: the count goes up before the lock file is linked into place and down only after it
# is unlinked, so no moment exists where our own fresh lock looks like a leftover.
_IN_PROCESS: collections.Counter[DirKey] = collections.Counter()


class LockRecord(NamedTuple):
    """The content of a lock file: the holder's pid and when it took (or refreshed) the lock."""

    pid: int
    ts: int


def encode_record(pid: int, ts_ms: int) -> bytes:
    """Return the lock file content as HackLM writes it: `{"pid":123,"ts":1700000000000}`."""
    return b'{"pid":%d,"ts":%d}' % (pid, ts_ms)


def parse_record(data: bytes) -> LockRecord | None:
    """Return the record in `data`, or None unless it is a JSON object with an int `pid` > 0 and an
    int `ts` (booleans and floats are not ints)."""
    try:
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    pid, ts = value.get("pid"), value.get("ts")
    if type(pid) is not int or pid <= 0 or type(ts) is not int:
        return None
    return LockRecord(pid, ts)


def is_stale(
    record: LockRecord | None,
    *,
    now_ms: int,
    mtime_ms: int,
    pid_alive: Callable[[int], bool],
    own_pid: int,
    held_here: bool,
) -> bool:
    """Return whether a lock may be broken.

    A parsed record is stale if its `ts` is more than `STALE_MS` before `now_ms`, or its pid is
    dead, or its pid is `own_pid` and this process does not hold the lock (`held_here`), i.e. it
    is a leftover from an earlier process with our pid. An unparsable record (None) is stale only
    if the file's `mtime_ms` is more than `STALE_MS` old.
    """
    if record is None:
        return now_ms - mtime_ms > STALE_MS
    if now_ms - record.ts > STALE_MS:
        return True
    if record.pid == own_pid:
        return not held_here
    return not pid_alive(record.pid)


def _write_new(path: str, data: bytes) -> os.stat_result:
    """Create `path` exclusively (never through a symlink) holding `data`; return its stat.

    Raises:
        FileExistsError: `path` exists.
        OSError: anything else; a partly written file is removed.
    """
    fd = os.open(path, _CREATE_FLAGS, 0o644)
    try:
        st = os.fstat(fd)
        if os.write(fd, data) != len(data):
            raise OSError(errno.ENOSPC, "short write to the lock file")
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)
    return st


class _Seen(NamedTuple):
    """One look at a lock file, without following symlinks; `data` is None if it was unreadable."""

    dev: int
    ino: int
    mtime_ns: int
    data: bytes | None


def _look(path: str) -> _Seen | None:
    """Return what is at `path` now, or None if nothing is there."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError:  # ELOOP (a symlink), EACCES, ENXIO (a socket): judged by lstat alone
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        return _Seen(st.st_dev, st.st_ino, st.st_mtime_ns, None)
    try:
        st = os.fstat(fd)
        data = os.read(fd, MAX_RECORD_BYTES) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        data = None
    finally:
        os.close(fd)
    return _Seen(st.st_dev, st.st_ino, st.st_mtime_ns, data)


def _same_lock(seen: _Seen | None, mine: _Seen) -> bool:
    """Return True if `seen` is the lock file `mine` (same file, same record; mtime aside)."""
    return seen is not None and (seen.dev, seen.ino, seen.data) == (mine.dev, mine.ino, mine.data)


def _break_stale(path: str, judged: _Seen) -> bool:
    """Remove the lock at `path` if it is still exactly `judged`; return whether it was removed.

    Renames the lock aside first and checks that the renamed file is `judged`: if another breaker
    already replaced it and a new holder created a fresh lock in between, that fresh lock is put
    back with `os.link`, which fails rather than overwrite a lock created meanwhile. Never raises.
    """
    aside = os.path.join(os.path.dirname(path), STALE_ASIDE_PREFIX + secrets.token_hex(8))
    try:
        if _look(path) != judged:
            return False
        os.rename(path, aside)
    except OSError:
        return False
    try:
        if _look(aside) == judged:
            logger.warning("removed stale lock %s (%s)", path, _describe(judged.data))
            return True
        try:
            os.link(aside, path, follow_symlinks=False)
            logger.warning("%s changed while being broken as stale; put the new one back", path)
        except OSError as exc:
            logger.warning(
                "%s changed while being broken as stale; could not put it back: %s", path, exc
            )
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(aside)


def _describe(data: bytes | None) -> str:
    record = parse_record(data) if data is not None else None
    return f"pid {record.pid}, ts {record.ts}" if record else "unparsable"


class Backoff:
    """The pauses between attempts to take a lock someone else holds: jittered, growing from
    FIRST_DELAY by DELAY_GROWTH up to MAX_DELAY, until `deadline` (anyio's clock)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._delay = FIRST_DELAY

    async def pause(self, timeout_error: Callable[[], Exception]) -> None:
        """Sleep before the next attempt.

        Raises:
            Exception: `timeout_error()`, once the deadline has passed.
        """
        remaining = self.deadline - anyio.current_time()
        if remaining <= 0:
            raise timeout_error()
        await anyio.sleep(min(remaining, self._delay * random.uniform(0.8, 1.2)))
        self._delay = min(self._delay * DELAY_GROWTH, MAX_DELAY)


class MemoryDirLock:
    """HackLM-compatible lock on one `.memory` directory; one instance per directory per process.

    Not reentrant. Use `async with lock.held():` around every write to the directory.
    """

    def __init__(
        self,
        memory_dir: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.memory_dir = os.path.abspath(memory_dir)
        self.path = os.path.join(self.memory_dir, LOCK_FILE)
        self.timeout = timeout
        self._clock = clock
        self._mine: _Seen | None = None  # our lock file (dev, ino) and the record last written
        self._holder: LockRecord | None = None  # the record of the last holder we waited on
        self._key_held: DirKey = (0, 0)  # the `_IN_PROCESS` key counted for the lock we hold
        self._taken_at = 0.0  # time.monotonic() when the lock was taken
        self._held_since = 0.0  # time.monotonic() when the lock was taken or last refreshed
        # Serialises refresh (from another thread) with the holder's checks and release.
        self._guard = threading.Lock()

    @property
    def is_held(self) -> bool:
        """Whether this instance holds the lock now (as far as it knows)."""
        return self._mine is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free or stale (one attempt); return whether it is now ours.

        Creates the `.memory` directory if missing, but never its parents. Blocks.

        Raises:
            StorageError: the file system refused to create the directory or the lock file.
            RuntimeError: this instance already holds the lock.
        """
        if self._mine is not None:
            raise RuntimeError(f"{self.path} is already held by this MemoryDirLock")
        key = self.directory_key()
        _IN_PROCESS[key] += 1
        acquired = False
        try:
            acquired = self._attempt(key)
        finally:
            if acquired:
                self._key_held = key
            else:
                _IN_PROCESS[key] -= 1
        return acquired

    def try_run(self, work: Callable[[LockCheck], T]) -> T | Busy:
        """Take the lock if it is free or stale (one attempt), run `work(ensure_held)` while
        holding it, and release it however `work` ends. Blocks: the whole hold is one call in
        one worker thread.

        Returns:
            What `work` returned, or BUSY (without running `work`) if another writer holds the
            lock.

        Raises:
            StorageError: as `try_acquire`.
            Exception: whatever `work` raises (the lock is released first).
        """
        if not self.try_acquire():
            return BUSY
        try:
            return work(self.ensure_held)
        finally:
            self.release()

    def _attempt(self, key: DirKey) -> bool:
        if self._create():
            return True
        seen = _look(self.path)
        if seen is None:  # released between our create and our look
            return self._create()
        record = parse_record(seen.data) if seen.data is not None else None
        self._holder = record
        stale = is_stale(
            record,
            now_ms=self._now_ms(),
            mtime_ms=seen.mtime_ns // 1_000_000,
            pid_alive=pid_alive,
            own_pid=os.getpid(),
            held_here=_IN_PROCESS[key] > 1,  # another object of ours, besides this one
        )
        if stale and _break_stale(self.path, seen):
            return self._create()
        return False

    def refresh(self) -> None:
        """Rewrite our record with a new `ts`, in place, if the lock file is still ours. Blocks;
        never raises OSError. Safe to call from another thread than the holder's."""
        with self._guard:
            self._refresh()

    def refresh_if_held_long(self) -> None:
        """Refresh the record if this instance has held the lock for REFRESH_INTERVAL seconds
        since taking or last refreshing it, and for less than MAX_HOLD in all (a longer hold
        means memd is stuck: others may then break it). Blocks; never raises OSError; safe to
        call from another thread than the holder's (a `try_run` in progress)."""
        with self._guard:
            if self._mine is None:
                return
            now = time.monotonic()
            if now - self._held_since < REFRESH_INTERVAL:
                return
            if now - self._taken_at >= MAX_HOLD:
                if self._held_since > self._taken_at:  # say it once per hold
                    logger.error(
                        "%s has been held for over %g s; no longer refreshing it, so others "
                        "may break it",
                        self.path,
                        MAX_HOLD,
                    )
                    self._held_since = self._taken_at
                return
            self._refresh()

    def _refresh(self) -> None:
        mine = self._mine
        if mine is None:
            return
        try:
            fd = os.open(self.path, _REWRITE_FLAGS)
        except OSError as exc:
            logger.warning("cannot refresh %s: %s", self.path, exc)
            return
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (mine.dev, mine.ino) or (
                os.pread(fd, MAX_RECORD_BYTES, 0) != mine.data
            ):
                logger.warning("%s was replaced by another writer while memd held it", self.path)
                return
            data = encode_record(os.getpid(), self._now_ms())
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            self._mine = mine._replace(data=data)
            self._held_since = time.monotonic()
        except OSError as exc:
            logger.warning("cannot refresh %s: %s", self.path, exc)
        finally:
            os.close(fd)

    def release(self) -> None:
        """Delete the lock file if it is still the one we created and wrote. Blocks; never raises;
        idempotent."""
        with self._guard:
            mine, self._mine = self._mine, None
        if mine is None:
            return
        try:
            seen = _look(self.path)
            if seen is None:
                logger.warning("%s was removed by another writer while memd held it", self.path)
            elif not _same_lock(seen, mine):
                logger.warning("%s was replaced by another writer; leaving it in place", self.path)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
            _IN_PROCESS[self._key_held] -= 1

    async def acquire(self, *, deadline: float | None = None) -> None:
        """Take the lock, waiting with jittered back-off while another process holds it.

        `deadline` (anyio's clock) defaults to `timeout` seconds from now; it is tried at least
        once even if it has passed.

        Raises:
            LockTimeout: a live holder kept a fresh lock until the deadline.
            StorageError: the file system refused to create the lock file.
        """
        if deadline is None:
            deadline = anyio.current_time() + self.timeout
        backoff = Backoff(deadline)
        self._holder = None
        while True:
            # Not abandoned on cancellation: a lock taken here is always returned to the caller,
            # and the cancellation arrives at its next checkpoint.
            if await anyio.to_thread.run_sync(self.try_acquire):
                return
            await backoff.pause(self.timeout_error)

    @contextlib.asynccontextmanager
    async def held(self, *, deadline: float | None = None) -> AsyncIterator[None]:
        """Hold the lock while the body runs, refreshing its `ts` every `REFRESH_INTERVAL`
        seconds; release it however the body ends (return, exception or cancellation).

        Raises:
            LockTimeout, StorageError: as `acquire` (with `deadline`).
        """
        await self.acquire(deadline=deadline)
        try:
            failure: BaseException | None = None
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep_fresh)
                try:
                    yield
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # re-raised below, so the task group won't wrap it
                    failure = exc
                finally:
                    tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.release)

    async def _keep_fresh(self) -> None:
        for _ in range(int(MAX_HOLD / REFRESH_INTERVAL)):
            await anyio.sleep(REFRESH_INTERVAL)
            await anyio.to_thread.run_sync(self.refresh)
        logger.error(
            "%s has been held for over %g s; no longer refreshing it, so others may break it",
            self.path,
            MAX_HOLD,
        )

    def ensure_held(self) -> None:
        """Check that the lock file is still the one this instance created (call it right before
        writing). Blocks. This is a `LockCheck`.

        Raises:
            LockTimeout: another writer broke or replaced the lock; nothing may be written.
        """
        with self._guard:
            held = self._mine is not None and _same_lock(_look(self.path), self._mine)
        if not held:
            raise LockTimeout(
                f"memd lost {self.path} to another writer before it could write (was its lock "
                "broken as stale?); nothing was written, retry.",
                data={"path": self.path},
            )

    def directory_key(self) -> DirKey:
        """Return the `.memory` directory's (device, inode), creating the directory if it is
        missing (never its parents). Blocks.

        Raises:
            StorageError: the directory cannot be created or checked.
        """
        try:
            st = os.stat(self.memory_dir)
        except FileNotFoundError:
            try:
                os.mkdir(self.memory_dir)
            except FileExistsError:
                pass
            except OSError as exc:
                raise storage_error("create", self.memory_dir, exc) from None
            try:
                st = os.stat(self.memory_dir)
            except OSError as exc:
                raise storage_error("check", self.memory_dir, exc) from None
        except OSError as exc:
            raise storage_error("check", self.memory_dir, exc) from None
        return st.st_dev, st.st_ino

    def _create(self) -> bool:
        """Create the lock file with our record; return False if a lock file already exists.

        The record is written to a temp file first and hard-linked into place (`link` fails if
        the name exists, like O_EXCL), so the lock never exists empty: a crash can leave a temp
        file (debris, swept at the next start) but never an unparsable lock that others must
        wait out. Where hard links are not supported, it falls back to O_EXCL create and write.
        """
        data = encode_record(os.getpid(), self._now_ms())
        temp = os.path.join(self.memory_dir, f"{LOCK_FILE}.memd-{secrets.token_hex(6)}.tmp")
        try:
            st = _write_new(temp, data)
            try:
                os.link(temp, self.path, follow_symlinks=False)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        except FileExistsError:
            return False
        except FileNotFoundError:
            # Our temp file was swept as debris by a writer that holds the lock: try again.
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise storage_error("create", self.path, exc) from None
            try:
                st = _write_new(self.path, data)
            except FileExistsError:
                return False
            except OSError as exc2:
                raise storage_error("create", self.path, exc2) from None
        self._mine = _Seen(st.st_dev, st.st_ino, 0, data)
        self._taken_at = self._held_since = time.monotonic()
        return True

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def timeout_error(self) -> LockTimeout:
        """Return the error for a wait that ran out, naming the last holder seen."""
        pid = self._holder.pid if self._holder else None
        held_by = f"process {pid}" if pid else "a writer that left no readable pid"
        return LockTimeout(
            f"{self.path} has been held by {held_by} (HackLM or another writer) for over "
            f"{self.timeout:g} s; retry shortly, or delete the lock file if that process is gone.",
            data={"path": self.path, "pid": pid},
        )
