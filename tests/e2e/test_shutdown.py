"""SIGTERM under load: every acknowledged store is on disk, the rest are told, exit 0 within a
bounded time; a write given up on at the deadline is never applied afterwards."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import msgspec
import pytest

from memd.core.format import mdformat
from memd.server.daemon.exit_deadline import EXIT_ABANDONED
from memd.server.daemon.lifecycle import SHUTDOWN_DEADLINE, SHUTDOWN_GRACE
from tests.conftest import start_daemon, store_frames, write_big_quirks


def test_sigterm_finishes_queued_writes_and_replies(short_tmp: Path, workspace: Path) -> None:
    daemon = start_daemon(short_tmp)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(daemon.socket_path))
    frames = store_frames(workspace, "Decision", 300, prefix="Shutdown")
    sock.sendall(frames)
    first = sock.recv(1)
    daemon.process.send_signal(signal.SIGTERM)
    buffer = first
    while chunk := sock.recv(65536):
        buffer += chunk
    sock.close()
    assert daemon.process.wait(timeout=30) == 0, daemon.stderr()
    replies = [msgspec.json.decode(line) for line in buffer.split(b"\n") if line.strip()]
    acknowledged = {r["result"]["content"] for r in replies if "result" in r}
    refused = [r["error"]["code"] for r in replies if "error" in r]
    assert acknowledged
    assert set(refused) <= {-32002}
    text = (workspace / ".memory" / "decisions.md").read_text()
    on_disk = {e.content for e in mdformat.entries(mdformat.parse(text))}
    assert acknowledged <= on_disk
    assert not daemon.socket_path.exists()


class FreshLock:
    """Holds `.memory/.lock` the HackLM way (`{"pid", "ts"}`), keeping `ts` fresh, so memd
    neither gets it nor may break it; released (removed) on `release()`."""

    REFRESH_EVERY = 1.0  # well inside HackLM's 10 s staleness rule

    def __init__(self, path: Path) -> None:
        self.path = path
        self._done = threading.Event()
        self._write(exclusive=True)
        self._thread = threading.Thread(target=self._refresh, daemon=True)
        self._thread.start()

    def _write(self, *, exclusive: bool = False) -> None:
        record = msgspec.json.encode({"pid": os.getpid(), "ts": int(time.time() * 1000)})
        if exclusive:
            with self.path.open("xb") as handle:
                handle.write(record)
            return
        temp = self.path.with_name(".lock.refresh")
        temp.write_bytes(record)
        temp.replace(self.path)

    def _refresh(self) -> None:
        while not self._done.wait(self.REFRESH_EVERY):
            self._write()

    def release(self) -> None:
        self._done.set()
        self._thread.join()
        self.path.unlink()


def test_sigterm_gives_up_on_a_write_stuck_behind_a_lock_and_never_applies_it(
    short_tmp: Path, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    lock = FreshLock(memory / ".lock")
    daemon = start_daemon(short_tmp, "--lock-timeout", "60")
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(60)
        sock.connect(str(daemon.socket_path))
        status = {"jsonrpc": "2.0", "id": "status", "method": "status", "params": {}}
        sock.sendall(store_frames(workspace, "Decision", 1, prefix="Stuck"))
        sock.sendall(msgspec.json.encode(status) + b"\n")
        # Requests on a connection run concurrently: the status reply proves the store is in.
        first = msgspec.json.decode(sock.recv(65536).split(b"\n")[0])
        assert first["id"] == "status"
        started = time.monotonic()
        daemon.process.send_signal(signal.SIGTERM)
        assert daemon.process.wait(timeout=60) == 0, daemon.stderr()
        assert time.monotonic() - started < SHUTDOWN_GRACE + 5
        assert sock.recv(65536) == b""  # closed with no reply: the client may retry safely
        sock.close()
    finally:
        lock.release()
    assert not (memory / "decisions.md").exists()


def wait_or_kill(process: subprocess.Popen[bytes]) -> int:
    """Wait for `process` to exit, a little longer than SHUTDOWN_DEADLINE; kill it (and fail)
    if it is still there."""
    try:
        return process.wait(timeout=SHUTDOWN_DEADLINE + 10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("memd was still running long after its shutdown deadline") from None


def test_sigterm_exits_by_the_deadline_even_with_a_reply_nobody_reads(
    short_tmp: Path, workspace: Path
) -> None:
    write_big_quirks(workspace, 8_000)  # each listing: about 1.2 MB
    daemon = start_daemon(short_tmp)
    listing = {"workspace": str(workspace), "category": "Quirk"}
    requests = b"".join(
        msgspec.json.encode({"jsonrpc": "2.0", "id": n, "method": "list", "params": listing})
        + b"\n"
        for n in range(8)
    )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stuck:
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(str(daemon.socket_path))
        stuck.sendall(requests)  # and never reads: the daemon's reply can never be sent
        assert stuck.recv(1, socket.MSG_PEEK)  # a reply has begun
        daemon.process.send_signal(signal.SIGTERM)
        code = wait_or_kill(daemon.process)
    assert code == 0, daemon.stderr()
    assert "giving up on 1 open connection" in daemon.stderr()
    assert not daemon.socket_path.exists()


def test_sigterm_exits_by_the_deadline_even_with_a_worker_thread_stuck_in_a_file(
    short_tmp: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "quirks.md").write_text("# Quirks\n\n- [old] An old quirk.\n")
    # A file operation that never returns (a hung network file system): the daemon's archive
    # append sleeps for an hour, patched in by a sitecustomize on the daemon's PYTHONPATH.
    stall = short_tmp / "stall"
    stall.mkdir()
    (stall / "sitecustomize.py").write_text(
        "import time\nimport memd.fs.storage as storage\n"
        "storage.append_lines = lambda *args, **kwargs: time.sleep(3600)\n"
    )
    path = os.pathsep.join([str(stall), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    daemon = start_daemon(short_tmp)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(SHUTDOWN_DEADLINE + 10)
        sock.connect(str(daemon.socket_path))
        delete = {
            "jsonrpc": "2.0",
            "id": "delete",
            "method": "delete",
            "params": {"workspace": str(workspace), "category": "Quirk", "slug": "old"},
        }
        status = {"jsonrpc": "2.0", "id": "status", "method": "status"}
        sock.sendall(msgspec.json.encode(delete) + b"\n" + msgspec.json.encode(status) + b"\n")
        first = msgspec.json.decode(sock.recv(65536).split(b"\n")[0])
        assert first["id"] == "status"  # the delete is stuck in its worker thread
        daemon.process.send_signal(signal.SIGTERM)
        code = wait_or_kill(daemon.process)
    assert code == EXIT_ABANDONED, daemon.stderr()
    assert f"shutdown deadline of {SHUTDOWN_DEADLINE:g} s passed" in daemon.stderr()
    assert "AnyIO worker thread" in daemon.stderr()  # what it abandoned
    assert not daemon.socket_path.exists()
