"""memd's `.memory/.lock` against a real Node process that follows HackLM's lock protocol
(`hacklm_writer.js`): neither side loses a write, and each waits for the other's fresh lock."""

from __future__ import annotations

import functools
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from bench._text import word
from memd.core.format import mdformat
from memd.fs import storage
from memd.fs.lock_file import parse_record
from memd.server.workspaces.lock_wait import MemoryDirLock
from memd_client import Client
from memd_client.errors import LockTimeout
from tests.conftest import DaemonProcess, start_daemon
from tests.line_process import LineProcess

NODE = shutil.which("node")
WRITER = Path(__file__).with_name("hacklm_writer.js")
WAIT = 30.0  # upper bound on every wait for the Node process

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


class Writer(LineProcess):
    """A running `hacklm_writer.js`."""

    def __init__(self, *args: str) -> None:
        assert NODE is not None
        super().__init__([NODE, str(WRITER), *args])


@pytest.fixture
def writers() -> Iterator[list[Writer]]:
    """Node writers started by a test; killed at teardown if still running."""
    started: list[Writer] = []
    yield started
    for writer in started:
        writer.kill()


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    path = tmp_path / ".memory"
    path.mkdir()
    return path


def _append_line(path: Path, line: str) -> str:
    """memd's way of adding a line: read, append, atomic replace; return the new text."""
    found = storage.read_text(str(path))
    text = f"{found[0] if found else ''}\n{line}\n"
    storage.write_atomic(str(path), text)
    return text


async def _finish(writer: Writer) -> int:
    return await anyio.to_thread.run_sync(writer.finish)


def _node_entries(text: str) -> int:
    return text.count(" unique-word-node")


def _wait_for_node_entries(path: Path, count: int, writer: Writer) -> None:
    """Return once `path` holds `count` of Node's entries or Node has exited (bounded)."""
    deadline = time.monotonic() + WAIT
    while _node_entries(path.read_text()) < count and writer.process.poll() is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"node wrote fewer than {count} entries in {WAIT} s")
        time.sleep(0.002)


async def test_node_and_memd_appends_never_lose_a_line(memory: Path, writers: list[Writer]) -> None:
    target = memory / "quirks.md"
    target.write_text("# Quirks\n\nQuirks of this project.\n\n")
    lock = MemoryDirLock(str(memory))
    for n in range(60):
        async with lock.held():
            text = await anyio.to_thread.run_sync(
                _append_line, target, f"- memd entry {n} memd{n}."
            )
            if n == 0:  # Node starts while memd holds the lock, so it has to wait from the start
                writers.append(node := Writer("append", str(target), "60", "node", "10"))
        if n < 10:  # the first rounds take turns: memd waits for one more Node entry each time
            wanted = _node_entries(text) + 1
            await anyio.to_thread.run_sync(_wait_for_node_entries, target, wanted, node)
    assert await _finish(node) == 0, node.stderr()
    assert node.read_line() == "waiting"  # it started while memd held the lock
    assert node.read_line() == "done 60"
    text = target.read_text()
    order = "".join(
        "N" if " unique-word-node" in line else "M"
        for line in text.splitlines()
        if line.startswith("- ")
    )
    assert len(order) == 120
    assert order.count("MN") >= 10, order
    for n in range(60):
        assert text.count(f" unique-word-node{n}.\n") == 1
        assert text.count(f" memd{n}.\n") == 1
    assert not (memory / ".lock").exists()


async def test_memd_waits_for_a_node_holder_then_gets_the_lock(
    memory: Path, writers: list[Writer]
) -> None:
    writers.append(node := Writer("hold", str(memory), "1500"))
    assert await anyio.to_thread.run_sync(node.read_line) == "locked"
    with pytest.raises(LockTimeout) as caught:
        await MemoryDirLock(str(memory), timeout=0.5).acquire()
    assert caught.value.data == {"path": str(memory / ".lock"), "pid": node.pid}
    lock = MemoryDirLock(str(memory), timeout=10)
    with anyio.fail_after(WAIT):
        await lock.acquire()
    try:
        assert await _finish(node) == 0, node.stderr()
        assert lock.is_held
    finally:
        lock.release()


async def test_node_waits_for_a_fresh_memd_lock(memory: Path, writers: list[Writer]) -> None:
    target = memory / "decisions.md"
    lock_file = memory / ".lock"
    async with MemoryDirLock(str(memory)).held():
        ours = lock_file.stat().st_ino
        writers.append(node := Writer("append", str(target), "1", "late"))
        # Node found the lock busy and backs off; give it a few back-off rounds (~0.6 s).
        assert await anyio.to_thread.run_sync(node.read_line) == "waiting"
        with pytest.raises(subprocess.TimeoutExpired):
            await anyio.to_thread.run_sync(functools.partial(node.finish, timeout=0.6))
        assert lock_file.stat().st_ino == ours  # Node did not break it
        record = parse_record(lock_file.read_bytes())
        assert record is not None
        assert not target.exists()
    assert await _finish(node) == 0, node.stderr()
    assert node.read_line() == "done 1"
    assert target.read_text() == "\n- late entry 0 unique-word-late0.\n"


# ---------------------------------------------------------------------------- with a real daemon


def _daemon_entry(thread: int, n: int) -> str:
    # Letters only: entries told apart by numbers alone would be one rule's changed value.
    return f"Daemon {word(thread, n)} and {word(n, thread)}."


def _store_many(socket_path: Path, workspace: Path, thread: int, count: int) -> None:
    with Client(socket_path, workspace=workspace) as client:
        for n in range(count):
            result = client.store(category="Quirk", content=_daemon_entry(thread, n))
            assert result.action == "stored", result.message


def test_the_daemon_and_a_hacklm_writer_share_one_file(
    daemon: DaemonProcess, workspace: Path, writers: list[Writer]
) -> None:
    target = workspace / ".memory" / "quirks.md"
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Quirk", content="The first quirk, stored by memd.", slug="first")
    writers.append(node := Writer("append", str(target), "40", "node", "5"))
    threads = [
        threading.Thread(target=_store_many, args=(daemon.socket_path, workspace, t, 30))
        for t in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=WAIT * 4)
        assert not thread.is_alive()
    assert node.finish(timeout=WAIT * 4) == 0, node.stderr()
    with Client(daemon.socket_path, workspace=workspace) as client:
        contents = [e.content for e in client.list(category="Quirk").entries]
    text = target.read_text()
    assert contents == [e.content for e in mdformat.entries(mdformat.parse(text))]
    expected = {"The first quirk, stored by memd."}
    expected |= {f"node entry {n} unique-word-node{n}." for n in range(40)}
    expected |= {_daemon_entry(t, n) for t in range(2) for n in range(30)}
    assert sorted(contents) == sorted(expected)
    assert not (workspace / ".memory" / ".lock").exists()


def test_a_held_lock_times_out_one_workspace_and_only_its_writes(
    short_tmp: Path, workspace: Path, writers: list[Writer]
) -> None:
    other = short_tmp / "other"
    other.mkdir()
    server = start_daemon(short_tmp, "--lock-timeout", "0.5")
    try:
        with Client(server.socket_path, workspace=workspace) as client:
            client.store(category="Decision", content="Before the lock.", slug="before")
            writers.append(node := Writer("hold", str(workspace / ".memory"), "30000"))
            assert node.read_line() == "locked"
            with pytest.raises(LockTimeout) as caught:
                client.store(category="Decision", content="Blocked by HackLM.", slug="blocked")
            assert caught.value.code == 1005
            assert f"held by process {node.pid} (node), which is alive" in caught.value.message
            assert "wrote nothing: retry once it is done" in caught.value.message
            # Reads of that workspace and writes elsewhere carry on.
            assert [e.slug for e in client.list().entries] == ["before"]
            client.store(category="Decision", content="Elsewhere.", slug="x", workspace=other)
            node.kill()  # a killed HackLM leaves its lock behind: memd breaks it (dead pid)
            client.store(
                category="Decision", content="Writes resume once HackLM is gone.", slug="after"
            )
            assert [e.slug for e in client.list().entries] == ["before", "after"]
    finally:
        assert server.stop() == 0
