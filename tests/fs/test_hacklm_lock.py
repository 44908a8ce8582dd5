"""memd's implementation of HackLM's `.memory/.lock` protocol, on real files."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import given, strategies as st

from memd.fs import lock_file as hacklm_lock, processes, storage
from memd.fs.lock_file import (
    STALE_MS,
    Holder,
    LockCheck,
    LockRecord,
    encode_record,
    is_stale,
    parse_record,
    probe_holder,
)
from memd.fs.processes import PidState, pid_alive
from memd.fs.storage import STALE_ASIDE_PREFIX
from memd.server.workspaces import lock_wait
from memd.server.workspaces.lock_wait import MemoryDirLock
from memd_client.errors import FileFormatError, LockTimeout, StorageError

NOW_MS = 1_700_000_000_000
OLD = time.time() - 60  # an mtime well past STALE_MS


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of a running process that is not this one."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=10)
    return process.pid


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    path = tmp_path / ".memory"
    path.mkdir()
    return path


def _now_ms() -> int:
    return int(time.time() * 1000)


def _write_lock(memory: Path, data: bytes) -> Path:
    lock = memory / ".lock"
    lock.write_bytes(data)
    return lock


def _holder(lock_file: Path) -> int | None:
    record = parse_record(lock_file.read_bytes())
    return record.pid if record else None


def _counted(memory: Path) -> int:
    """How many lock objects of this process count as holding or taking `memory`'s lock."""
    st = memory.stat()
    return hacklm_lock._IN_PROCESS.get((st.st_dev, st.st_ino), 0)


def _debris(memory: Path) -> list[str]:
    return [name for name in os.listdir(memory) if name.startswith(STALE_ASIDE_PREFIX)]


# --- record format -----------------------------------------------------------------------------


def test_encode_record_is_hacklms_exact_bytes() -> None:
    assert encode_record(123, 1700000000000) == b'{"pid":123,"ts":1700000000000}'


def test_parse_record_reads_hacklm_record_and_ignores_extra_keys() -> None:
    assert parse_record(b'{"pid":123,"ts":1700000000000}') == LockRecord(123, 1700000000000)
    assert parse_record(b'{ "ts": 5, "pid": 7, "host": "x" }\n') == LockRecord(7, 5)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"null",
        b"[1, 2]",
        b'"pid"',
        b"{}",
        b'{"pid":1}',
        b'{"ts":1}',
        b'{"pid":0,"ts":1}',
        b'{"pid":-5,"ts":1}',
        b'{"pid":1.0,"ts":1}',
        b'{"pid":"12","ts":1}',
        b'{"pid":true,"ts":1}',
        b'{"pid":1,"ts":false}',
        b'{"pid":1,"ts":1.5}',
        b'{"pid":1,"ts":null}',
        b'{"pid":1,"ts":1',
        b"\xff\xfe",
        b"[" * 100_000,
    ],
)
def test_parse_record_rejects_anything_else(data: bytes) -> None:
    assert parse_record(data) is None


@given(st.integers(min_value=1), st.integers())
def test_encode_parse_round_trip(pid: int, ts: int) -> None:
    assert parse_record(encode_record(pid, ts)) == LockRecord(pid, ts)


@given(st.binary(max_size=200))
def test_parse_record_never_crashes_on_junk(data: bytes) -> None:
    result = parse_record(data)
    assert result is None or isinstance(result, LockRecord)


# --- staleness rule ----------------------------------------------------------------------------


_PIDS = {42: Holder.ALIVE, 666: Holder.GONE, 77: Holder.UNKNOWN}


def _judge(
    record: LockRecord | None,
    *,
    mtime_ms: int = 0,
    held_here: bool = False,
    seen_for_ms: float = 0,
) -> bool:
    """is_stale at NOW_MS, for a process with pid 1000; pid 42 is a live process of ours, 666 is
    dead and 77 is another user's (EPERM)."""
    return is_stale(
        record,
        now_ms=NOW_MS,
        mtime_ms=mtime_ms,
        seen_for_ms=seen_for_ms,
        holder=lambda judged: _PIDS[judged.pid],
        own_pid=1000,
        held_here=held_here,
    )


LONG = STALE_MS + 1  # seen for longer than STALE_MS


@pytest.mark.parametrize(
    ("record", "mtime_ms", "held_here", "seen_for_ms", "stale"),
    [
        (LockRecord(42, NOW_MS), 0, False, 0, False),  # live pid, fresh ts
        (LockRecord(42, NOW_MS - STALE_MS - 1), 0, False, 0, False),  # live pid: never broken
        (LockRecord(42, NOW_MS - 3_600_000), 0, False, LONG, False),  # however long it holds
        (LockRecord(42, NOW_MS + 60_000), 0, False, 0, False),  # ts in the future: not yet
        (LockRecord(42, NOW_MS + 60_000), 0, False, STALE_MS, False),
        (LockRecord(42, NOW_MS + 60_000), 0, False, LONG, True),  # seen for over 10 s
        (LockRecord(42, NOW_MS + 1_000), 0, False, LONG, False),  # within the clock slack
        (LockRecord(666, NOW_MS), 0, False, 0, True),  # dead pid: at once
        (LockRecord(666, NOW_MS + 60_000), 0, False, 0, True),
        (LockRecord(77, NOW_MS), 0, False, 0, False),  # another user's: by observed age
        (LockRecord(77, NOW_MS - 3_600_000), 0, False, STALE_MS, False),
        (LockRecord(77, NOW_MS - 3_600_000), 0, False, LONG, True),
        (LockRecord(1000, NOW_MS), 0, True, 0, False),  # our pid, held by this process
        (LockRecord(1000, NOW_MS - STALE_MS - 1), 0, True, LONG, False),  # we are alive
        (LockRecord(1000, NOW_MS), 0, False, 0, True),  # our pid, not held: a leftover
        (None, NOW_MS, False, 0, False),  # unparsable, fresh mtime
        (None, NOW_MS - STALE_MS, False, STALE_MS, False),
        (None, NOW_MS - STALE_MS - 1, False, 0, True),  # unparsable, old mtime
        (None, NOW_MS + 3_600_000, False, LONG, True),  # mtime in the future, seen for long
    ],
)
def test_is_stale_truth_table(
    record: LockRecord | None, mtime_ms: int, held_here: bool, seen_for_ms: float, stale: bool
) -> None:
    assert _judge(record, mtime_ms=mtime_ms, held_here=held_here, seen_for_ms=seen_for_ms) is stale


@given(
    pid=st.sampled_from([42, 77, 666, 1000]),
    ts_offset=st.integers(-(10**12), 10**12),
    seen_for_ms=st.floats(0, 10**9),
    held_here=st.booleans(),
)
def test_a_live_holder_of_ours_is_never_broken(
    pid: int, ts_offset: int, seen_for_ms: float, held_here: bool
) -> None:
    """Whatever its ts and however long memd has waited: only a ts in the future or a pid memd
    cannot check ages out, and only by what memd has seen."""
    record = LockRecord(pid, NOW_MS + ts_offset)
    stale = _judge(record, held_here=held_here, seen_for_ms=seen_for_ms)
    if (pid == 42 and ts_offset <= hacklm_lock.FUTURE_SLACK_MS) or (pid == 1000 and held_here):
        assert not stale
    if pid == 666 or (pid == 1000 and not held_here):
        assert stale
    if seen_for_ms <= STALE_MS and pid in (42, 77):
        assert not stale


def test_pid_states(live_pid: int, dead_pid: int) -> None:
    assert processes.pid_state(live_pid) is PidState.OURS
    assert processes.pid_state(dead_pid) is PidState.GONE
    assert processes.pid_state(0) is PidState.GONE
    assert processes.pid_state(2**40) is PidState.GONE

    def eperm(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "kill", eperm)
        assert processes.pid_state(4242) is PidState.FOREIGN
        assert pid_alive(4242) is True  # the service installer's question: it exists
        assert probe_holder(LockRecord(4242, _now_ms())) is Holder.UNKNOWN


def test_probe_holder(live_pid: int, dead_pid: int) -> None:
    now = _now_ms()
    assert probe_holder(LockRecord(os.getpid(), now)) is Holder.ALIVE
    assert probe_holder(LockRecord(dead_pid, now)) is Holder.GONE
    assert probe_holder(LockRecord(1, now)) is Holder.UNKNOWN  # init: a committed lock's pid
    if processes.started_at(live_pid) is None:
        pytest.skip("no /proc here: a reused pid cannot be told from its holder")
    # live_pid started just now: it cannot have taken a lock a minute ago (its pid was reused).
    assert probe_holder(LockRecord(live_pid, now - 60_000)) is Holder.GONE
    assert probe_holder(LockRecord(live_pid, now)) is Holder.ALIVE
    started = processes.started_at(os.getpid())
    assert started is not None and abs(started - _start_from_ps(os.getpid())) < 2


def _start_from_ps(pid: int) -> float:
    """When `pid` started, from `ps` (an independent reading of the same kernel fact)."""
    etimes = subprocess.run(
        ["ps", "-o", "etimes=", "-p", str(pid)], capture_output=True, text=True, check=True
    ).stdout
    return time.time() - int(etimes)


def test_pid_alive(live_pid: int, dead_pid: int) -> None:
    assert pid_alive(os.getpid())
    assert pid_alive(live_pid)
    assert not pid_alive(dead_pid)
    assert not pid_alive(2**40)  # larger than any pid_t
    assert not pid_alive(0)


# --- taking and releasing ----------------------------------------------------------------------


def test_try_acquire_creates_memory_dir_and_writes_exact_record(tmp_path: Path) -> None:
    memory = tmp_path / ".memory"
    lock = MemoryDirLock(str(memory), clock=lambda: 1_700_000_000.5)
    assert lock.path == str(memory / ".lock")
    assert lock.try_acquire()
    try:
        assert (memory / ".lock").read_bytes() == b'{"pid":%d,"ts":1700000000500}' % os.getpid()
    finally:
        lock.release()
    assert not (memory / ".lock").exists()
    lock.release()  # idempotent


def test_try_acquire_never_creates_the_workspace(tmp_path: Path) -> None:
    lock = MemoryDirLock(str(tmp_path / "gone" / ".memory"))
    with pytest.raises(StorageError, match="Could not create"):
        lock.try_acquire()
    assert not (tmp_path / "gone").exists()


def test_second_lock_in_same_process_waits_for_the_first(memory: Path) -> None:
    first, second = MemoryDirLock(str(memory)), MemoryDirLock(str(memory))
    assert first.try_acquire()
    assert not second.try_acquire()  # our own pid, but held here: not a leftover
    with pytest.raises(RuntimeError):
        first.try_acquire()  # not reentrant
    first.release()
    assert second.try_acquire()
    second.release()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="O_NOATIME is Linux's")
@given(reads=st.lists(st.booleans(), min_size=1, max_size=6))
def test_a_hold_during_which_another_reader_read_the_lock_saw_a_waiter(
    tmp_path_factory: pytest.TempPathFactory, reads: list[bool]
) -> None:
    """HackLM reads `.lock` each time its create fails; memd's own looks (the checks before
    each rename, the release) leave the access time alone, so only the other reader counts."""
    memory = tmp_path_factory.mktemp("ws") / ".memory"
    lock = MemoryDirLock(str(memory))
    for read in reads:

        def work(check: LockCheck, read: bool = read) -> None:
            check()
            if read:
                (memory / ".lock").read_bytes()  # a HackLM waiter, reading the record
            check()

        lock.try_run(work)
        assert lock.waiter_seen is read


def test_release_leaves_a_lock_that_replaced_ours(memory: Path, live_pid: int) -> None:
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    theirs = encode_record(live_pid, _now_ms())
    (memory / "other").write_bytes(theirs)
    os.replace(memory / "other", memory / ".lock")
    lock.release()
    assert (memory / ".lock").read_bytes() == theirs


def test_own_pid_leftover_is_broken(memory: Path) -> None:
    _write_lock(memory, encode_record(os.getpid(), _now_ms()))
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    lock.release()


async def test_live_fresh_lock_times_out_with_holder_pid(memory: Path, live_pid: int) -> None:
    theirs = encode_record(live_pid, _now_ms())
    _write_lock(memory, theirs)
    lock = MemoryDirLock(str(memory), timeout=0.3)
    started = time.monotonic()
    with pytest.raises(LockTimeout, match=f"held by process {live_pid}") as caught:
        await lock.acquire()
    assert 0.3 <= time.monotonic() - started < 5
    assert caught.value.data == {"path": str(memory / ".lock"), "pid": live_pid}
    assert (memory / ".lock").read_bytes() == theirs


async def test_unparsable_lock_times_out_without_pid(memory: Path) -> None:
    _write_lock(memory, b"")
    with pytest.raises(LockTimeout) as caught:
        await MemoryDirLock(str(memory), timeout=0.1).acquire()
    assert caught.value.data == {"path": str(memory / ".lock"), "pid": None}


async def test_acquire_waits_for_the_holder_to_release(memory: Path) -> None:
    first, second = MemoryDirLock(str(memory)), MemoryDirLock(str(memory), timeout=10)
    await first.acquire()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(second.acquire)
            await anyio.sleep(0.05)
            await anyio.to_thread.run_sync(first.release)
    assert second.is_held
    second.release()


async def test_cancelled_while_taking_the_lock_still_releases_it(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = MemoryDirLock(str(memory))
    try_acquire = lock.try_acquire
    with anyio.CancelScope() as scope:

        def acquire_then_cancel() -> bool:
            got = try_acquire()
            anyio.from_thread.run_sync(scope.cancel)
            return got

        monkeypatch.setattr(lock, "try_acquire", acquire_then_cancel)
        async with lock.held():
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert not lock.is_held
    assert not (memory / ".lock").exists()


# --- breaking stale locks ----------------------------------------------------------------------


def test_dead_pid_lock_is_broken(memory: Path, dead_pid: int) -> None:
    _write_lock(memory, encode_record(dead_pid, _now_ms()))
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    assert _holder(memory / ".lock") == os.getpid()
    assert _debris(memory) == []
    lock.release()


def test_old_ts_lock_of_a_live_holder_is_never_broken(memory: Path, live_pid: int) -> None:
    """A holder stopped (SIGSTOP, a debugger) or busy for over 10 s resumes and writes: its lock
    must hold, however old its ts (issue 17). memd's clock runs a minute ahead here, so the
    holder (which started before its ts, as a holder does) looks as if it had held for 60 s."""
    theirs = encode_record(live_pid, _now_ms())
    _write_lock(memory, theirs)
    ticks = itertools.count(0, 60)  # and memd keeps trying, for minutes of its own clock
    lock = MemoryDirLock(
        str(memory), clock=lambda: time.time() + 60, monotonic=lambda: float(next(ticks))
    )
    for _ in range(5):
        assert not lock.try_acquire()
    assert (memory / ".lock").read_bytes() == theirs
    assert _debris(memory) == []


def test_a_reused_pid_does_not_hold_an_old_lock(memory: Path, live_pid: int) -> None:
    """A `.lock` committed to a repository names a pid that some later process now has."""
    if processes.started_at(live_pid) is None:
        pytest.skip("no /proc here: a reused pid cannot be told from its holder")
    _write_lock(memory, encode_record(live_pid, _now_ms() - 3_600_000))
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    lock.release()


@pytest.mark.parametrize("kind", ["another user's pid", "pid 1", "a ts in the future"])
def test_a_lock_memd_cannot_judge_ages_by_what_memd_has_seen(
    memory: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Such a lock (e.g. committed to a repository) blocks writes for STALE_MS after memd first
    saw it, not forever; each change to it starts the count again."""
    if kind == "another user's pid":
        monkeypatch.setattr(hacklm_lock, "pid_state", lambda pid: PidState.FOREIGN)
        record = encode_record(4242, _now_ms())
    elif kind == "pid 1":
        record = encode_record(1, _now_ms() - 3_600_000)
    else:
        record = encode_record(os.getppid(), _now_ms() + 3_600_000)  # our parent: alive
    lock_file = _write_lock(memory, record)
    clock = [100.0]
    lock = MemoryDirLock(str(memory), monotonic=lambda: clock[0])
    lock.note_lock()  # the workspace loads
    clock[0] += STALE_MS / 1000
    assert not lock.try_acquire()
    error = lock.timeout_error()
    assert "memd cannot check" in error.message and "retry in 1 s" in error.message
    lock_file.write_bytes(record[:-1] + b" }")  # changed (rewritten): seen anew
    clock[0] += 0.5
    assert not lock.try_acquire()
    clock[0] += STALE_MS / 1000
    assert not lock.try_acquire()
    clock[0] += 0.001
    assert lock.try_acquire()
    lock.release()
    assert _debris(memory) == []


def test_a_sighting_is_remembered_once_per_lock_object(memory: Path) -> None:
    """The observed-age memory is one entry per `.memory` directory, whatever it sees."""
    clock = [0.0]
    lock = MemoryDirLock(str(memory), monotonic=lambda: clock[0])
    for n in range(50):
        _write_lock(memory, encode_record(1, n))
        lock.note_lock()
        clock[0] += 1
    assert lock._sighting is not None and lock._sighting[0][2] == encode_record(1, 49)
    assert _counted(memory) == 0


async def test_waiting_on_a_live_holder_ends_in_1005_naming_it(memory: Path, live_pid: int) -> None:
    theirs = encode_record(live_pid, _now_ms())
    _write_lock(memory, theirs)
    with pytest.raises(LockTimeout) as caught:
        await MemoryDirLock(str(memory), timeout=0.2).acquire()
    assert caught.value.code == 1005
    message = caught.value.message
    assert f"held by process {live_pid} (python" in message and "which is alive" in message
    assert "wrote nothing" in message and "end that process if it is stuck" in message
    assert (memory / ".lock").read_bytes() == theirs


# --- a symlinked .memory -------------------------------------------------------------------------


@pytest.fixture
def victim(tmp_path: Path, dead_pid: int) -> Path:
    """A directory elsewhere, holding a stale lock, debris and a memory file."""
    path = tmp_path / "victim"
    path.mkdir()
    (path / ".lock").write_bytes(encode_record(dead_pid, 1))
    (path / ".lock.memd-0123456789ab.tmp").write_bytes(b"x")
    (path / f"{STALE_ASIDE_PREFIX}0123456789abcdef").write_bytes(b"x")
    (path / "quirks.md").write_text("# Quirks\n\n- [x] Theirs.\n")
    return path


def _state(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def test_a_symlinked_memory_dir_is_refused_before_any_file_operation(
    tmp_path: Path, victim: Path
) -> None:
    before = _state(victim)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".memory").symlink_to(victim)
    lock = MemoryDirLock(str(workspace / ".memory"))
    with pytest.raises(FileFormatError, match="symbolic link"):
        lock.try_acquire()
    with pytest.raises(FileFormatError, match="symbolic link"):
        lock.try_run(lambda check: None)
    lock.note_lock()
    assert not storage.has_debris(str(workspace / ".memory"), lock_file=".lock")
    assert storage.remove_debris(str(workspace / ".memory")) == []
    assert _state(victim) == before
    assert _counted(victim) == 0


def test_a_dangling_memory_link_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".memory").symlink_to(tmp_path / "made-through-the-link")
    with pytest.raises(FileFormatError, match="symbolic link"):
        MemoryDirLock(str(workspace / ".memory")).try_acquire()
    assert not (tmp_path / "made-through-the-link").exists()


def test_a_memory_file_is_refused_as_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / ".memory").write_text("not a directory")
    with pytest.raises(FileFormatError, match="not a directory"):
        MemoryDirLock(str(tmp_path / ".memory")).try_acquire()


def test_a_memory_dir_swapped_for_a_link_while_held_is_released_where_it_was_taken(
    tmp_path: Path, victim: Path
) -> None:
    memory = tmp_path / ".memory"
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    before = _state(victim)
    memory.rename(tmp_path / "moved")
    memory.symlink_to(victim)
    lock.ensure_held()  # still ours, in the directory it was taken in
    lock.refresh()
    lock.release()
    assert _state(victim) == before
    assert list((tmp_path / "moved").iterdir()) == []


def test_unparsable_lock_is_broken_only_once_its_mtime_is_old(memory: Path) -> None:
    lock_file = _write_lock(memory, b'{"pid":')
    lock = MemoryDirLock(str(memory))
    assert not lock.try_acquire()
    assert lock_file.read_bytes() == b'{"pid":'
    os.utime(lock_file, (OLD, OLD))
    assert lock.try_acquire()
    lock.release()


def test_fifo_lock_is_unparsable_and_never_blocks(memory: Path) -> None:
    os.mkfifo(memory / ".lock")
    lock = MemoryDirLock(str(memory))
    assert not lock.try_acquire()
    os.utime(memory / ".lock", (OLD, OLD))
    assert lock.try_acquire()
    lock.release()


def test_symlinked_lock_is_never_followed(tmp_path: Path, memory: Path, dead_pid: int) -> None:
    target = tmp_path / "outside.txt"
    content = encode_record(dead_pid, 1)  # stale if it were read through the link
    target.write_bytes(content)
    os.utime(target, (OLD, OLD))
    link = memory / ".lock"
    link.symlink_to(target)
    lock = MemoryDirLock(str(memory))
    assert not lock.try_acquire()  # judged by the link's own (fresh) mtime
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    assert lock.try_acquire()
    assert not link.is_symlink()
    assert _holder(link) == os.getpid()
    lock.release()
    assert target.read_bytes() == content
    assert _debris(memory) == []


def _replace_with_fresh(memory: Path, live_pid: int) -> bytes:
    fresh = encode_record(live_pid, _now_ms())
    (memory / "fresh").write_bytes(fresh)
    os.replace(memory / "fresh", memory / ".lock")  # a new inode, as after unlink + create
    return fresh


def test_breaker_rechecks_before_renaming(memory: Path, dead_pid: int, live_pid: int) -> None:
    _write_lock(memory, encode_record(dead_pid, _now_ms()))
    dir_fd = os.open(memory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        judged = hacklm_lock._look(dir_fd)
        assert judged is not None
        fresh = _replace_with_fresh(memory, live_pid)
        assert not hacklm_lock._break_stale(dir_fd, str(memory / ".lock"), judged)
    finally:
        os.close(dir_fd)
    assert (memory / ".lock").read_bytes() == fresh
    assert _debris(memory) == []


def test_two_breakers_race_puts_the_fresh_lock_back(
    memory: Path, dead_pid: int, live_pid: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another breaker removes the stale lock and a new holder creates a fresh one between our
    re-check and our rename: we rename the fresh lock aside, notice, and put it back."""
    lock_file = _write_lock(memory, encode_record(dead_pid, _now_ms()))
    dir_fd = os.open(memory, os.O_RDONLY | os.O_DIRECTORY)
    judged = hacklm_lock._look(dir_fd)
    assert judged is not None
    fresh: list[bytes] = []
    rename = os.rename

    def racing_rename(src: str, dst: str, **dir_fds: int) -> None:
        fresh.append(_replace_with_fresh(memory, live_pid))
        rename(src, dst, **dir_fds)

    monkeypatch.setattr(os, "rename", racing_rename)
    try:
        assert not hacklm_lock._break_stale(dir_fd, str(lock_file), judged)
    finally:
        monkeypatch.undo()
        os.close(dir_fd)
    assert fresh
    assert lock_file.read_bytes() == fresh[0]
    assert _debris(memory) == []
    assert not MemoryDirLock(str(memory)).try_acquire()  # the fresh lock still holds


# --- held() ------------------------------------------------------------------------------------


async def test_held_refreshes_ts_in_place(memory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hacklm_lock, "REFRESH_INTERVAL", 0.01)
    ticks = itertools.count(1_700_000_000)
    lock = MemoryDirLock(str(memory), clock=lambda: float(next(ticks)))
    refreshed = anyio.Event()
    refresh = lock.refresh

    def refresh_and_tell() -> None:
        refresh()
        anyio.from_thread.run_sync(refreshed.set)

    monkeypatch.setattr(lock, "refresh", refresh_and_tell)
    lock_file = memory / ".lock"
    async with lock.held():
        first = lock_file.read_bytes()
        inode = lock_file.stat().st_ino
        with anyio.fail_after(5):
            await refreshed.wait()
        assert parse_record(first) == LockRecord(os.getpid(), 1_700_000_000_000)
        record = parse_record(lock_file.read_bytes())
        assert record is not None
        assert record.pid == os.getpid()
        assert record.ts > 1_700_000_000_000
        assert lock_file.stat().st_ino == inode
    assert not lock_file.exists()


async def test_held_releases_on_exception(memory: Path) -> None:
    lock = MemoryDirLock(str(memory))

    async def fail_while_holding() -> None:
        async with lock.held():
            assert (memory / ".lock").exists()
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await fail_while_holding()
    assert not (memory / ".lock").exists()
    assert not lock.is_held
    assert _counted(memory) == 0


async def test_held_releases_on_cancellation(memory: Path) -> None:
    lock = MemoryDirLock(str(memory))
    with anyio.CancelScope() as scope:
        async with lock.held():
            assert (memory / ".lock").exists()
            scope.cancel()
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert not (memory / ".lock").exists()


def test_the_lock_is_linked_into_place_and_leaves_no_temp_file(tmp_path: Path) -> None:
    memory = tmp_path / ".memory"
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    try:
        assert sorted(os.listdir(memory)) == [".lock"]
        assert os.stat(memory / ".lock").st_nlink == 1
    finally:
        lock.release()
    assert os.listdir(memory) == []
    # A temp file left by a crash before the link is debris that the startup sweep removes.
    assert storage.is_debris(".lock.memd-0123456789ab.tmp")


def test_two_spellings_of_one_directory_share_one_lock(tmp_path: Path) -> None:
    real = tmp_path / "project"
    (real / ".memory").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(real)
    first = MemoryDirLock(str(real / ".memory"))
    second = MemoryDirLock(str(tmp_path / "alias" / ".memory"))
    assert first.try_acquire()
    try:
        # Our own pid in the record, but held by this process: not a leftover to break.
        assert not second.try_acquire()
        first.ensure_held()
    finally:
        first.release()
    assert second.try_acquire()
    second.release()


def test_ensure_held_fails_once_another_writer_replaced_the_lock(tmp_path: Path) -> None:
    lock = MemoryDirLock(str(tmp_path / ".memory"))
    assert lock.try_acquire()
    lock.ensure_held()
    lock_path = tmp_path / ".memory" / ".lock"
    lock_path.unlink()  # broken as stale by someone else, who then took it
    lock_path.write_bytes(encode_record(4242, 1))
    with pytest.raises(LockTimeout, match="lost"):
        lock.ensure_held()
    lock.release()
    assert lock_path.read_bytes() == encode_record(4242, 1)  # not ours, so left alone


# --- try_run() and long holds -----------------------------------------------------------------


def test_try_run_holds_the_lock_only_while_work_runs(memory: Path) -> None:
    lock = MemoryDirLock(str(memory))
    seen: list[bytes] = []

    def work(check: hacklm_lock.LockCheck) -> str:
        check()
        seen.append((memory / ".lock").read_bytes())
        return "done"

    assert lock.try_run(work) == "done"
    assert parse_record(seen[0]) is not None
    assert not (memory / ".lock").exists() and not lock.is_held


def test_try_run_is_busy_while_another_holds_the_lock(memory: Path, live_pid: int) -> None:
    _write_lock(memory, encode_record(live_pid, _now_ms()))
    ran: list[bool] = []
    assert MemoryDirLock(str(memory)).try_run(lambda check: ran.append(True)) is hacklm_lock.BUSY
    assert ran == []
    assert _holder(memory / ".lock") == live_pid


def test_try_run_releases_when_work_fails(memory: Path) -> None:
    lock = MemoryDirLock(str(memory))

    def work(check: hacklm_lock.LockCheck) -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        lock.try_run(work)
    assert not (memory / ".lock").exists()
    assert _counted(memory) == 0


def test_a_long_hold_is_refreshed_from_another_thread(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`refresh_if_held_long` (the workspace's keeper) rewrites `ts` while `try_run`'s work is
    still running, and the holder's own check still recognises the lock as its own."""
    monkeypatch.setattr(hacklm_lock, "REFRESH_INTERVAL", 0.0)
    ticks = itertools.count(1_700_000_000)
    lock = MemoryDirLock(str(memory), clock=lambda: float(next(ticks)))

    def work(check: hacklm_lock.LockCheck) -> tuple[LockRecord | None, LockRecord | None]:
        first = parse_record((memory / ".lock").read_bytes())
        keeper = threading.Thread(target=lock.refresh_if_held_long)
        keeper.start()
        keeper.join()
        check()
        return first, parse_record((memory / ".lock").read_bytes())

    result = lock.try_run(work)
    assert not isinstance(result, hacklm_lock.Busy)
    first, later = result
    assert first is not None and later is not None
    assert later.pid == first.pid and later.ts > first.ts
    lock.refresh_if_held_long()  # not held any more: nothing to do, no error
    assert not (memory / ".lock").exists()


def test_a_hold_past_max_hold_is_no_longer_refreshed(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hacklm_lock, "REFRESH_INTERVAL", 0.0)
    monkeypatch.setattr(hacklm_lock, "MAX_HOLD", 0.0)
    lock = MemoryDirLock(str(memory))
    assert lock.try_acquire()
    try:
        before = (memory / ".lock").read_bytes()
        time.sleep(0.01)
        lock.refresh_if_held_long()
        assert (memory / ".lock").read_bytes() == before
    finally:
        lock.release()


async def test_backoff_waits_until_the_deadline_then_raises() -> None:
    backoff = lock_wait.Backoff(anyio.current_time() + 0.2)
    pauses = 0

    async def pause_until_it_raises() -> None:
        nonlocal pauses
        while True:
            await backoff.pause(lambda: LockTimeout("gave up"))
            pauses += 1

    with anyio.fail_after(5):
        with pytest.raises(LockTimeout):
            await pause_until_it_raises()
    assert pauses >= 2
