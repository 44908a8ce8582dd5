"""memd's side of HackLM's cross-process lock on a `.memory` directory (`.memory/.lock`).

The protocol, byte for byte what HackLM Memory does:
- Taking the lock is an exclusive create of `.memory/.lock`; the holder writes
  `{"pid":<pid>,"ts":<epoch ms>}` (compact, `pid` first, no newline) in one write. (memd writes
  the record first and links it into place, so its lock is never seen empty.)
- Releasing it is deleting the file.
- A waiter may break a lock that is stale.

When memd judges a lock stale (`is_stale`; HackLM breaks any lock whose `ts` is over `STALE_MS`
old or whose pid does not answer `kill(pid, 0)`):
- Never while its holder is alive on this host: a pid that `kill(pid, 0)` reaches (a live
  process of this user, not a zombie) holds the lock however old its `ts` is (a holder stopped
  in a debugger, or busy for 12 s, resumes and writes; breaking its lock would let that write
  overwrite memd's). A waiter gets `LockTimeout` (1005) naming the pid, and writes nothing.
- Unless that live pid is not the holder: on Linux, a process that started after the lock's `ts`
  (from /proc/<pid>/stat and the boot time, give or take `START_SLACK`) cannot have taken it, so
  its pid was reused: the lock is stale (a `.lock` committed to a repository names some old pid).
- A dead pid (or a zombie) is stale at once, as in HackLM.
- A pid memd cannot judge, because `kill` gives EPERM (another user's process, or pid 1 from a
  `.lock` committed to a repository), or a record whose `ts` lies in the future, is judged by
  the age memd itself has observed: stale once this lock object has seen the same lock file
  (device, inode and content) for `STALE_MS`. Each `MemoryDirLock` remembers one sighting (the
  last lock it looked at), so the memory is bounded by the workspaces loaded; `note_lock()` at
  workspace load starts the clock before any write can start waiting. pid 1 is judged this way
  even where memd may signal it (as root): it is init, never a HackLM writer.
- A record naming memd's own pid that this process does not hold is a leftover of an earlier
  process that had the same pid (a SIGKILL and a restart in a container), so it is stale.
- An unparsable lock (a writer died between create and write) is stale once its mtime is more
  than `STALE_MS` old, or memd has seen it for `STALE_MS`; HackLM never breaks it.

Files, never through a link:
- Every operation works in a descriptor of the `.memory` directory opened with `O_NOFOLLOW`
  (`*at()` calls): a `.memory` that is a symbolic link is refused (1004) before anything is
  created, renamed or deleted, so a cloned repository cannot make memd touch another directory.
  A held lock keeps that descriptor until it is released.
- A symlinked `.lock` is unparsable and judged by its own mtime.
- A stale lock is broken by renaming it aside and checking that the renamed file is the one
  judged stale (`_break_stale`), so two breakers never remove each other's fresh lock.
- A held lock's `ts` is rewritten every `REFRESH_INTERVAL` seconds (`held()`), because HackLM
  breaks any lock whose `ts` is older than `STALE_MS`, however long the holder has been busy.
  After `MAX_HOLD` memd stops refreshing it (memd is stuck; HackLM may then break it).
- Release deletes the file only if it is still the one this process created.
- A waiter is seen by the lock's access time: HackLM reads `.lock` each time its exclusive create
  fails (and before each append, to sweep a stale one), while memd reads a lock with O_NOATIME
  (its own user's files), so a lock of memd's whose access time moved while memd held it was
  read by someone else, who is waiting for it (`waiter_seen`, set at release). On a file system
  mounted noatime, or without fine-grained timestamps for a read within the same clock tick as
  the lock's creation, a waiter may go unseen.

How memd holds it: `try_run(work)` takes the lock, runs blocking `work` and releases it, all in
one worker-thread call (memd's writes; the caller waits between attempts with a
`memd.server.workspaces.lock_wait.Backoff` and refreshes long holds with
`refresh_if_held_long`). Everything here blocks and nothing imports anyio: call it in a worker
thread. (`memd.server.workspaces.lock_wait` adds `acquire` and `held()`, which hold the lock
around an async body, for tests and tools.)

Size: one protocol (take, judge, break, refresh, release) whose steps share the descriptor and the
records.
"""

from __future__ import annotations

import collections
import contextlib
import enum
import errno
import logging
import math
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable
from typing import NamedTuple, TypeVar

import msgspec

from memd.core.format.limits import LOCK_TIMEOUT
from memd.fs.processes import PidState, command_name, pid_state, started_at
from memd.fs.storage import STALE_ASIDE_PREFIX, storage_error, symlink_error
from memd_client.errors import FileFormatError, LockTimeout, RpcError

LOCK_FILE = ".lock"
STALE_MS = 10_000
DEFAULT_TIMEOUT = LOCK_TIMEOUT
REFRESH_INTERVAL = 3.0
MAX_HOLD = 60.0  # a hold this long means memd is stuck: stop refreshing, so HackLM can break it
FUTURE_SLACK_MS = 1_000  # a `ts` further ahead of our clock than this is not a holder's
START_SLACK = 2.0  # seconds: a process that started this long after a lock's `ts` did not take it

MAX_RECORD_BYTES = 4096  # a lock file is read up to this many bytes; HackLM's is about 30
FIRST_DELAY = 0.02
DELAY_GROWTH = 1.5
MAX_DELAY = 0.25

_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK}
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_REWRITE_FLAGS = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NO_ATIME = getattr(os, "O_NOATIME", 0)  # Linux: a read that leaves the access time alone
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

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
_COUNTING = threading.Lock()


def _count(key: DirKey) -> None:
    """Count one more lock object of this process holding or taking the lock at `key`."""
    with _COUNTING:
        _IN_PROCESS[key] += 1


def _uncount(key: DirKey) -> None:
    """Count one lock object fewer at `key`; the counter keeps only directories in use."""
    with _COUNTING:
        _IN_PROCESS[key] -= 1
        if _IN_PROCESS[key] <= 0:
            del _IN_PROCESS[key]


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


class Holder(enum.Enum):
    """Who the pid in a lock record is, as far as this host can tell (`probe_holder`)."""

    ALIVE = "alive"
    """A live process of this user that started before the lock's `ts`: the holder."""
    UNKNOWN = "unknown"
    """A process memd may not signal (EPERM: another user's), or pid 1."""
    GONE = "gone"
    """No such process, a zombie, or a process that started after the lock's `ts` (pid reused)."""


def probe_holder(record: LockRecord) -> Holder:
    """Return who `record.pid` is on this host (see `Holder`). Blocks (reads /proc)."""
    if record.pid == 1:
        return Holder.UNKNOWN
    state = pid_state(record.pid)
    if state is PidState.GONE:
        return Holder.GONE
    if state is PidState.FOREIGN:
        return Holder.UNKNOWN
    started = started_at(record.pid)
    if started is not None and started > record.ts / 1000 + START_SLACK:
        return Holder.GONE
    return Holder.ALIVE


def is_stale(
    record: LockRecord | None,
    *,
    now_ms: int,
    mtime_ms: int,
    seen_for_ms: float,
    holder: Callable[[LockRecord], Holder],
    own_pid: int,
    held_here: bool,
) -> bool:
    """Return whether a lock may be broken (the rules are in the module docstring).

    `seen_for_ms` is how long memd has seen this very lock file unchanged; `holder` says who the
    record's pid is (`probe_holder`; it is only asked when the answer matters). A record naming
    `own_pid` is stale unless this process holds the lock (`held_here`). An unparsable record
    (None) is stale once the file's `mtime_ms` or `seen_for_ms` is more than `STALE_MS` old.
    """
    if record is None:
        return now_ms - mtime_ms > STALE_MS or seen_for_ms > STALE_MS
    if record.pid == own_pid:
        return not held_here
    who = holder(record)
    if who is Holder.GONE:
        return True
    if who is Holder.UNKNOWN or record.ts > now_ms + FUTURE_SLACK_MS:
        return seen_for_ms > STALE_MS
    return False


def _write_new(dir_fd: int, name: str, data: bytes) -> os.stat_result:
    """Create `name` in `dir_fd` exclusively (never through a symlink) holding `data`; return
    its stat.

    Raises:
        FileExistsError: `name` exists.
        OSError: anything else; a partly written file is removed.
    """
    fd = os.open(name, _CREATE_FLAGS, 0o644, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if os.write(fd, data) != len(data):
            raise OSError(errno.ENOSPC, "short write to the lock file")
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        raise
    os.close(fd)
    return st


class _Seen(NamedTuple):
    """One look at a lock file, without following symlinks; `data` is None if it was unreadable."""

    dev: int
    ino: int
    mtime_ns: int
    data: bytes | None

    @property
    def identity(self) -> tuple[int, int, bytes | None]:
        """What makes it the same lock: the file and its record (mtime aside)."""
        return self.dev, self.ino, self.data


def _look(dir_fd: int, name: str = LOCK_FILE) -> _Seen | None:
    """Return what is at `name` in `dir_fd` now, or None if nothing is there."""
    found = _look_with_atime(dir_fd, name)
    return None if found is None else found[0]


def _open_unseen(name: str, flags: int, dir_fd: int) -> int:
    """Open `name` without moving its access time where this user may (O_NOATIME), else
    plainly (EPERM: another user's file)."""
    if _NO_ATIME:
        try:
            return os.open(name, flags | _NO_ATIME, dir_fd=dir_fd)
        except PermissionError:
            pass
    return os.open(name, flags, dir_fd=dir_fd)


def _look_with_atime(dir_fd: int, name: str = LOCK_FILE) -> tuple[_Seen, int] | None:
    """`_look`, with the file's access time (ns) as found, before this read."""
    try:
        fd = _open_unseen(name, _READ_FLAGS, dir_fd)
    except FileNotFoundError:
        return None
    except OSError:  # ELOOP (a symlink), EACCES, ENXIO (a socket): judged by lstat alone
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return _Seen(st.st_dev, st.st_ino, st.st_mtime_ns, None), st.st_atime_ns
    try:
        st = os.fstat(fd)
        data = os.read(fd, MAX_RECORD_BYTES) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        data = None
    finally:
        os.close(fd)
    return _Seen(st.st_dev, st.st_ino, st.st_mtime_ns, data), st.st_atime_ns


def _same_lock(seen: _Seen | None, mine: _Seen) -> bool:
    """Return True if `seen` is the lock file `mine` (same file, same record; mtime aside)."""
    return seen is not None and seen.identity == mine.identity


def _break_stale(dir_fd: int, path: str, judged: _Seen) -> bool:
    """Remove the lock in `dir_fd` (shown as `path`) if it is still exactly `judged`; return
    whether it was removed.

    Renames the lock aside first and checks that the renamed file is `judged`: if another breaker
    already replaced it and a new holder created a fresh lock in between, that fresh lock is put
    back with `os.link`, which fails rather than overwrite a lock created meanwhile. Never raises.
    """
    aside = STALE_ASIDE_PREFIX + secrets.token_hex(8)
    try:
        if _look(dir_fd) != judged:
            return False
        os.rename(LOCK_FILE, aside, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        return False
    try:
        if _look(dir_fd, aside) == judged:
            logger.warning("removed stale lock %s (%s)", path, _describe(judged.data))
            return True
        try:
            os.link(aside, LOCK_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
            logger.warning("%s changed while being broken as stale; put the new one back", path)
        except OSError as exc:
            logger.warning(
                "%s changed while being broken as stale; could not put it back: %s", path, exc
            )
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(aside, dir_fd=dir_fd)


def _describe(data: bytes | None) -> str:
    record = parse_record(data) if data is not None else None
    return f"pid {record.pid}, ts {record.ts}" if record else "unparsable"


class _Wait(NamedTuple):
    """The last lock a `try_acquire` found held and did not break: for the timeout message."""

    record: LockRecord | None
    holder: Holder | None  # None: not asked (an unparsable record, our own pid)
    seen_for_ms: float


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
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.memory_dir = os.path.abspath(memory_dir)
        self.path = os.path.join(self.memory_dir, LOCK_FILE)
        self.timeout = timeout
        self._clock = clock
        self._monotonic = monotonic
        self._mine: _Seen | None = None  # our lock file (dev, ino) and the record last written
        self._dir_fd: int | None = None  # the `.memory` directory of the lock we hold
        self._wait = _Wait(None, None, 0.0)  # the last holder we waited on
        # The last lock file seen held by someone else, and when (monotonic) it was first seen.
        self._sighting: tuple[tuple[int, int, bytes | None], float] | None = None
        self._key_held: DirKey = (0, 0)  # the `_IN_PROCESS` key counted for the lock we hold
        self._taken_at = 0.0  # time.monotonic() when the lock was taken
        self._held_since = 0.0  # time.monotonic() when the lock was taken or last refreshed
        self._atime_ns = 0  # our lock file's access time when we created it
        self.waiter_seen = False
        """Whether someone read our lock while we held it last (a writer waiting for it: see
        the module docstring); set by `release`."""
        self.waiter_read_ns = 0
        """When (epoch ns, the lock's access time) that waiter read it."""
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
            FileFormatError: `.memory` is a symbolic link (or not a directory): refused before
                anything is created in it.
            StorageError: the file system refused to create the directory or the lock file.
            RuntimeError: this instance already holds the lock.
        """
        if self._mine is not None:
            raise RuntimeError(f"{self.path} is already held by this MemoryDirLock")
        dir_fd = self._open_directory()
        acquired = False
        try:
            try:
                st = os.fstat(dir_fd)
            except OSError as exc:
                raise storage_error("check", self.memory_dir, exc) from None
            key = (st.st_dev, st.st_ino)
            _count(key)
            try:
                acquired = self._attempt(dir_fd, key)
            finally:
                if acquired:
                    self._key_held, self._dir_fd = key, dir_fd
                else:
                    _uncount(key)
        finally:
            if not acquired:
                os.close(dir_fd)
        return acquired

    def try_run(self, work: Callable[[LockCheck], T]) -> T | Busy:
        """Take the lock if it is free or stale (one attempt), run `work(ensure_held)` while
        holding it, and release it however `work` ends. Blocks: the whole hold is one call in
        one worker thread.

        Returns:
            What `work` returned, or BUSY (without running `work`) if another writer holds the
            lock.

        Raises:
            FileFormatError, StorageError: as `try_acquire`.
            Exception: whatever `work` raises (the lock is released first).
        """
        if not self.try_acquire():
            return BUSY
        try:
            return work(self.ensure_held)
        finally:
            self.release()

    def _attempt(self, dir_fd: int, key: DirKey) -> bool:
        if self._create(dir_fd):
            return True
        seen = _look(dir_fd)
        if seen is None:  # released between our create and our look
            return self._create(dir_fd)
        record = parse_record(seen.data) if seen.data is not None else None
        seen_for = self._seen_for(seen)
        asked: list[Holder] = []

        def holder(judged: LockRecord) -> Holder:
            asked.append(probe_holder(judged))
            return asked[-1]

        stale = is_stale(
            record,
            now_ms=self._now_ms(),
            mtime_ms=seen.mtime_ns // 1_000_000,
            seen_for_ms=seen_for,
            holder=holder,
            own_pid=os.getpid(),
            held_here=_IN_PROCESS[key] > 1,  # another object of ours, besides this one
        )
        self._wait = _Wait(record, asked[0] if asked else None, seen_for)
        if stale and _break_stale(dir_fd, self.path, seen):
            return self._create(dir_fd)
        return False

    def _seen_for(self, seen: _Seen) -> float:
        """Return for how many milliseconds this object has seen the lock `seen` (0 the first
        time); remembers only the last lock seen."""
        now = self._monotonic()
        sighting = self._sighting
        if sighting is not None and sighting[0] == seen.identity:
            return (now - sighting[1]) * 1000
        self._sighting = (seen.identity, now)
        return 0.0

    def note_lock(self) -> None:
        """Look at the lock file now, so that its observed age (see the module docstring) counts
        from now: call it when a workspace loads, before any write can start waiting. Creates
        nothing; never raises. Blocks."""
        try:
            dir_fd = os.open(self.memory_dir, _DIR_FLAGS)
        except OSError:
            return  # missing, a link, or unreadable: nothing to note
        try:
            seen = _look(dir_fd)
        finally:
            os.close(dir_fd)
        if seen is not None:
            self._seen_for(seen)

    def refresh(self) -> None:
        """Rewrite our record with a new `ts`, in place, if the lock file is still ours. Blocks;
        never raises OSError. Safe to call from another thread than the holder's."""
        with self._guard:
            self._refresh()

    def refresh_if_held_long(self) -> None:
        """Refresh the record if this instance has held the lock for REFRESH_INTERVAL seconds
        since taking or last refreshing it, and for less than MAX_HOLD in all (a longer hold
        means memd is stuck: HackLM may then break it). Blocks; never raises OSError; safe to
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
        mine, dir_fd = self._mine, self._dir_fd
        if mine is None or dir_fd is None:
            return
        try:
            fd = _open_unseen(LOCK_FILE, _REWRITE_FLAGS, dir_fd)
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
            dir_fd, self._dir_fd = self._dir_fd, None
        if mine is None or dir_fd is None:
            return
        self.waiter_seen = False
        try:
            found = _look_with_atime(dir_fd)
            seen = None if found is None else found[0]
            if found is None or seen is None:
                logger.warning("%s was removed by another writer while memd held it", self.path)
            elif not _same_lock(seen, mine):
                logger.warning("%s was replaced by another writer; leaving it in place", self.path)
            else:
                self.waiter_seen = found[1] != self._atime_ns
                self.waiter_read_ns = found[1]
                with contextlib.suppress(OSError):
                    os.unlink(LOCK_FILE, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
            _uncount(self._key_held)

    def forget_wait(self) -> None:
        """Forget the holder last waited on (a new wait begins)."""
        self._wait = _Wait(None, None, 0.0)

    def ensure_held(self) -> None:
        """Check that the lock file is still the one this instance created (call it right before
        writing). Blocks. This is a `LockCheck`.

        Raises:
            LockTimeout: another writer broke or replaced the lock; nothing may be written.
        """
        with self._guard:
            mine, dir_fd = self._mine, self._dir_fd
            held = mine is not None and dir_fd is not None and _same_lock(_look(dir_fd), mine)
        if not held:
            raise LockTimeout(
                f"memd lost {self.path} to another writer before it could write (was its lock "
                "broken as stale?); nothing was written, retry.",
                data={"path": self.path},
            )

    def _open_directory(self) -> int:
        """Open the `.memory` directory without following a link, creating it if it is missing
        (never its parents). Blocks.

        Raises:
            FileFormatError: it is a symbolic link or not a directory.
            StorageError: it cannot be created or opened.
        """
        try:
            return os.open(self.memory_dir, _DIR_FLAGS)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise self._directory_error(exc) from None
        try:
            os.mkdir(self.memory_dir)  # never through a link: mkdir fails on any existing name
        except FileExistsError:
            pass
        except OSError as exc:
            raise storage_error("create", self.memory_dir, exc) from None
        try:
            return os.open(self.memory_dir, _DIR_FLAGS)
        except OSError as exc:
            raise self._directory_error(exc) from None

    def _directory_error(self, exc: OSError) -> RpcError:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            with contextlib.suppress(OSError):
                if not stat.S_ISLNK(os.lstat(self.memory_dir).st_mode):
                    return FileFormatError(
                        f"{self.memory_dir} is not a directory; move it away so memd can "
                        "create its memory directory there.",
                        data={"path": self.memory_dir},
                    )
            return symlink_error(self.memory_dir)
        return storage_error("open", self.memory_dir, exc)

    def _create(self, dir_fd: int) -> bool:
        """Create the lock file with our record; return False if a lock file already exists.

        The record is written to a temp file first and hard-linked into place (`link` fails if
        the name exists, like O_EXCL), so the lock never exists empty: a crash can leave a temp
        file (debris, swept at the next start) but never an unparsable lock that others must
        wait out. Where hard links are not supported, it falls back to O_EXCL create and write.
        """
        data = encode_record(os.getpid(), self._now_ms())
        temp = f"{LOCK_FILE}.memd-{secrets.token_hex(6)}.tmp"
        try:
            st = _write_new(dir_fd, temp, data)
            try:
                os.link(
                    temp, LOCK_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False
                )
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
        except FileExistsError:
            return False
        except FileNotFoundError:
            # Our temp file was swept as debris by a writer that holds the lock: try again.
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise storage_error("create", self.path, exc) from None
            try:
                st = _write_new(dir_fd, LOCK_FILE, data)
            except FileExistsError:
                return False
            except OSError as exc2:
                raise storage_error("create", self.path, exc2) from None
        self._mine = _Seen(st.st_dev, st.st_ino, 0, data)
        self._atime_ns = st.st_atime_ns
        self._taken_at = self._held_since = time.monotonic()
        return True

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def timeout_error(self) -> LockTimeout:
        """Return the error for a wait that ran out, naming the last holder seen and what to do."""
        record, holder, seen_for_ms = self._wait
        stale_s = STALE_MS / 1000
        if record is None:
            held_by = "a writer (HackLM or another tool) that left no readable pid"
            advice = (
                f"it counts as stale {stale_s:g} s after it was written, so retry then, or "
                "delete the lock file if no writer is running"
            )
        elif holder is Holder.ALIVE and record.ts <= self._now_ms() + FUTURE_SLACK_MS:
            name = command_name(record.pid)
            held_by = f"process {record.pid}{f' ({name})' if name else ''}, which is alive"
            advice = (
                "retry once it is done, or end that process if it is stuck (memd never breaks "
                "the lock of a live process)"
            )
        else:
            held_by = (
                f"process {record.pid}, which memd cannot check (another user's process, a "
                "time in the future, or a lock file copied from elsewhere)"
            )
            left = max(1, math.ceil((STALE_MS - seen_for_ms) / 1000))
            advice = (
                f"memd treats it as stale once it has seen it unchanged for {stale_s:g} s, so "
                f"retry in {left} s, or delete the lock file if it came from a copy or a commit"
            )
        return LockTimeout(
            f"{self.path} is held by {held_by}; memd waited "
            f"{self.timeout:g} s and wrote nothing: {advice}.",
            data={"path": self.path, "pid": record.pid if record else None},
        )
