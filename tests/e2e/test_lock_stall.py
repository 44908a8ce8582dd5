"""Issue 17: `.memory/.lock` holders that stall, locks memd cannot judge by their pid, and a
symlinked `.memory`, against a real daemon and the HackLM stand-in (`tests/hacklm_standin.py`).

The rule above all: never lose a memory. A holder whose lock memd broke would overwrite memd's
acknowledged stores when it resumed, so the lock of a live holder is never broken.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.fs.lock_file import encode_record
from memd_client import Client, FileFormatError
from memd_client.errors import LockTimeout
from tests.conftest import READY_TIMEOUT, STOP_TIMEOUT, DaemonProcess, start_daemon, wait_ready
from tests.hacklm_standin import HackLMWriter, Pauses, Subprocess, store_header

WAIT = 60.0  # upper bound on every wait in these tests


@pytest.fixture
def standins() -> Iterator[list[Subprocess]]:
    """Stand-in subprocesses a test starts; killed (and resumed first) at teardown."""
    started: list[Subprocess] = []
    yield started
    for standin in started:
        if standin.process.poll() is None:
            standin.resume()
        standin.kill()


def _entries(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("- ")]


def test_a_paused_holder_is_never_broken_and_nothing_acknowledged_is_lost(
    short_tmp: Path, workspace: Path, standins: list[Subprocess]
) -> None:
    """HackLM takes the lock, reads decisions.md for an upsert, and is paused (SIGSTOP) past
    STALE_MS before it writes. memd must answer 1005 and write nothing; when the holder resumes
    and writes its read-then-write, everything memd acknowledged is still there."""
    server = start_daemon(short_tmp, "--lock-timeout", "11")  # outlasts STALE_MS (10 s)
    memory = workspace / ".memory"
    decisions = memory / "decisions.md"
    try:
        with Client(server.socket_path, workspace=workspace) as client:
            client.store(category="Decision", content="Deploy on Tuesdays.", slug="before")
            args = ["upsert", "Decision", "hacklm", "Use Postgres.", "--stop-at", "upsert-read"]
            standins.append(holder := Subprocess(memory, *args))
            # memd's first store created all five files: HackLM's bootstrap writes none.
            assert holder.wait_for("locked") == []
            holder.stopped_at("upsert-read")
            read_by_holder = decisions.read_bytes()
            with pytest.raises(LockTimeout) as caught:  # waits 11 s: the holder's ts is 10+ s old
                client.store(category="Decision", content="Review every migration.", slug="late")
            assert caught.value.code == 1005
            assert f"held by process {holder.pid}" in caught.value.message
            assert "which is alive" in caught.value.message
            assert "wrote nothing" in caught.value.message
            assert decisions.read_bytes() == read_by_holder  # nothing written meanwhile
            holder.resume()
            assert holder.finish(timeout=WAIT) == 0, holder.stderr()
            assert holder.read_line() == "done inserted"
            client.store(category="Decision", content="Review every migration.", slug="late")
            slugs = [entry.slug for entry in client.list(category="Decision").entries]
        assert slugs == ["before", "hacklm", "late"]
        assert _entries(decisions) == [
            "- [before] Deploy on Tuesdays.",
            "- [hacklm] Use Postgres.",
            "- [late] Review every migration.",
        ]
    finally:
        assert server.stop() == 0
    assert "removed stale lock" not in server.stderr()


def test_an_in_process_holder_paused_while_holding_keeps_its_lock(
    short_tmp: Path, workspace: Path
) -> None:
    """The stand-in in a thread of this (live) process, paused while holding the lock and again
    between its read and its write: memd's stores fail with 1005 and write nothing, then land
    once HackLM has written; HackLM's update and memd's store are both kept."""
    server = start_daemon(short_tmp, "--lock-timeout", "0.3")
    memory = workspace / ".memory"
    quirks = memory / "quirks.md"
    try:
        with Client(server.socket_path, workspace=workspace) as client:
            client.store(category="Quirk", content="The CI cache is per branch.", slug="ci")
            pauses = Pauses("locked", "upsert-read")
            writer = HackLMWriter(memory, hook=pauses)
            thread = threading.Thread(
                target=writer.upsert, args=("Quirk", "ci", "The CI cache is shared.")
            )
            thread.start()
            try:
                assert pauses.wait_reached("locked") == str(memory / ".lock")
                for point in ("locked", "upsert-read"):
                    if point != "locked":
                        pauses.wait_reached(point)
                    before = quirks.read_bytes()
                    with pytest.raises(LockTimeout, match=f"held by process {os.getpid()} "):
                        client.store(category="Quirk", content="Builds run on arm64.", slug="arm")
                    assert quirks.read_bytes() == before
                    pauses.release(point)
            finally:
                pauses.release_all()
                thread.join(timeout=WAIT)
            assert not thread.is_alive()
            client.store(category="Quirk", content="Builds run on arm64.", slug="arm")
            entries = client.list(category="Quirk").entries
        assert [(e.slug, e.content) for e in entries] == [
            ("ci", "The CI cache is shared."),
            ("arm", "Builds run on arm64."),
        ]
    finally:
        assert server.stop() == 0


def _committed_lock_store(server: DaemonProcess, workspace: Path, record: bytes) -> list[str]:
    """Put `record` in `.memory/.lock` as a clone would, then store until memd breaks it;
    return the messages of the refusals on the way."""
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / ".lock").write_bytes(record)
    refusals: list[str] = []
    deadline = time.monotonic() + WAIT
    with Client(server.socket_path, workspace=workspace) as client:
        while True:
            try:
                client.store(category="Decision", content="Pin the toolchain.", slug="pin")
            except LockTimeout as error:
                refusals.append(error.message)
                assert time.monotonic() < deadline, "the lock was never judged stale"
            else:
                break
        assert [e.slug for e in client.list(category="Decision").entries] == ["pin"]
    assert not (memory / ".lock").exists()
    return refusals


def test_a_committed_lock_blocks_writes_for_seconds_not_forever(short_tmp: Path) -> None:
    """A `.lock` committed to a repository names pid 1 (or a time in the future, with a pid that
    is alive here): memd judges it by how long it has seen it, and breaks it after 10 s."""
    server = start_daemon(short_tmp, "--lock-timeout", "2")
    results: dict[str, list[str]] = {}
    future = int(time.time() * 1000) + 86_400_000
    cases = {
        "pid1": encode_record(1, int(time.time() * 1000) - 60_000),
        "future": encode_record(os.getpid(), future),  # this test's own (live) pid
    }

    def run(name: str) -> None:
        workspace = short_tmp / name
        workspace.mkdir()
        results[name] = _committed_lock_store(server, workspace, cases[name])

    try:
        threads = [threading.Thread(target=run, args=(name,)) for name in cases]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=WAIT)
            assert not thread.is_alive()
    finally:
        assert server.stop() == 0
    for name, record in cases.items():
        refusals = results[name]
        assert refusals, f"{name}: a lock memd cannot judge held for a moment at least"
        pid = record.split(b":")[1].split(b",")[0].decode()
        assert f"held by process {pid}, which memd cannot check" in refusals[0]
        assert re.search(r"retry in \d+ s", refusals[0])
    assert server.stderr().count("removed stale lock") == 2


# --------------------------------------------------------------------------- a symlinked .memory

STRACE = shutil.which("strace")
# Every system call that creates, renames or deletes a name, or changes a file (-y prints the
# path behind each descriptor, so calls relative to a directory fd are seen too).
_CHANGING = (
    "openat,open,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,"
    "unlink,unlinkat,rmdir,truncate,ftruncate,chmod,fchmod,fchmodat,utimensat,write,pwrite64"
)


def _changes_in(trace: str, directory: Path) -> list[str]:
    """The traced calls that created, renamed, deleted or wrote something in `directory`."""
    found = []
    for line in trace.splitlines():
        if str(directory) not in line:
            continue
        call = line.split(None, 1)[-1]
        if call.startswith(("openat(", "open(")) and not re.search(r"O_(CREAT|WRONLY|RDWR)", call):
            continue  # opened for reading
        if "= -1 " in call:
            continue  # refused by the kernel: nothing happened
        found.append(line)
    return found


def _start_traced(directory: Path, trace: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """Start `memd serve` under strace; return strace's process and memd's socket."""
    assert STRACE is not None
    socket_path = directory / "traced.sock"
    notify_path = directory / "traced.notify"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(notify_path))
    env = dict(os.environ, NOTIFY_SOCKET=str(notify_path), XDG_STATE_HOME=str(directory / "st"))
    env.pop("MEMD_SOCKET", None)
    log = directory / "traced.log"
    with log.open("wb") as sink:
        tracer = subprocess.Popen(
            [STRACE, "-f", "-qq", "-y", "-e", f"trace={_CHANGING}", "-o", str(trace), "--",
             sys.executable, "-m", "memd", "serve", "--socket", str(socket_path)],
            stdout=sink, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    try:
        wait_ready(receiver, DaemonProcess(socket_path, tracer, log))
    finally:
        receiver.close()
    return tracer, socket_path


@pytest.mark.skipif(STRACE is None, reason="strace is not installed (`make strace-tool`)")
def test_loading_and_writing_a_linked_memory_touches_nothing_behind_the_link(
    short_tmp: Path,
) -> None:
    """A cloned repository's `.memory` points at another directory holding a stale lock and
    memd's debris: loading the workspace, querying, storing and deleting must create, rename,
    delete and write nothing there, as `strace` sees every file system call."""
    victim = short_tmp / "victim"
    victim.mkdir()
    stale = encode_record(999_999_999, 1)
    (victim / ".lock").write_bytes(stale)
    (victim / ".lock.memd-0123456789ab.tmp").write_bytes(b"debris")
    (victim / ".lock.memd-stale-0123456789abcdef").write_bytes(b"debris")
    (victim / "quirks.md").write_text(store_header("Quirk") + "- [x] Theirs.\n")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in victim.iterdir()}
    workspace = short_tmp / "ws"
    workspace.mkdir()
    (workspace / ".memory").symlink_to(victim)
    trace = short_tmp / "trace.txt"
    tracer, socket_path = _start_traced(short_tmp, trace)
    memd_pid = None
    try:
        with Client(socket_path, workspace=workspace, timeout=READY_TIMEOUT) as client:
            memd_pid = client.status().pid
            for action in (
                lambda: client.query("anything"),
                lambda: client.store(category="Quirk", content="Through the link?"),
                lambda: client.delete(category="Quirk", slug="x"),
                lambda: client.list(),
            ):
                with pytest.raises(FileFormatError, match="symbolic link"):
                    action()
            assert client.status().workspaces == [str(workspace)]  # it was loaded
    finally:
        if memd_pid is not None:
            os.kill(memd_pid, signal.SIGTERM)  # not strace's pid: memd must stop on its own
        else:
            tracer.kill()
        assert tracer.wait(timeout=STOP_TIMEOUT) == 0
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in victim.iterdir()} == before
    text = trace.read_text()
    assert "unlinkat(" in text or "unlink(" in text, "the trace is empty: strace saw nothing"
    assert _changes_in(text, victim) == []
