"""One writer among several, over a real daemon: hand edits, subscriptions, crash debris."""

from __future__ import annotations

import contextlib
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec

from bench._text import word
from memd.core.format import mdformat
from memd.core.format.categories import HACKLM_CATEGORIES
from memd_client import Changed, Client, MemdError, Resync
from memd_client.aio import AsyncClient
from tests.conftest import DaemonProcess, start_daemon, write_big_quirks
from tests.e2e.test_protocol_socket import connect


class Lines:
    """Reads newline-ended JSON frames from a socket, one at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def next(self) -> Any:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise AssertionError("the daemon closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return msgspec.json.decode(line)


def send_request(sock: socket.socket, request_id: int, method: str, workspace: Path) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {"workspace": str(workspace)},
    }
    sock.sendall(msgspec.json.encode(request) + b"\n")


def subscribe(path: Path, workspace: Path) -> tuple[socket.socket, Lines]:
    sock = connect(path)
    send_request(sock, 1, "subscribe", workspace)
    lines = Lines(sock)
    reply = lines.next()
    assert reply["result"] == {"workspace": str(workspace), "subscribed": True}
    return sock, lines


def test_a_hand_edit_between_two_stores_survives(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Quirk", content="The build needs GNU make.", slug="make")
        path = workspace / ".memory" / "quirks.md"
        path.write_text(path.read_text() + "- [by-hand] Typed by a person in an editor.\n")
        client.store(category="Quirk", content="Tests run under pytest-xdist.", slug="xdist")
    text = path.read_text()
    for line in (
        "- [make] The build needs GNU make.",
        "- [by-hand] Typed by a person in an editor.",
        "- [xdist] Tests run under pytest-xdist.",
    ):
        assert text.count(line) == 1


def test_subscribers_see_memd_commits_and_outside_edits(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock, notes = subscribe(daemon.socket_path, workspace)
    with sock, Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Decision", content="Use SQLite for the cache.", slug="cache")
        note = notes.next()
        assert note["method"] == "changed"
        assert note["params"]["source"] == "memd"
        assert note["params"]["category"] == "Decision"
        assert [e["slug"] for e in note["params"]["entries"]] == ["cache"]
        assert "id" not in note

        path = workspace / ".memory" / "decisions.md"
        path.write_text(path.read_text() + "- [edited] Added by hand.\n")
        note = notes.next()
        assert (note["params"]["source"], note["params"]["file"]) == ("external", "decisions.md")
        assert [e["slug"] for e in note["params"]["entries"]] == ["cache", "edited"]

        send_request(sock, 2, "unsubscribe", workspace)
        assert notes.next()["result"] == {"workspace": str(workspace), "subscribed": True}
        client.store(category="Decision", content="Nobody is told about this one.", slug="quiet")
        send_request(sock, 3, "unsubscribe", workspace)
        # Unsubscribed: the next frame is the reply to the second unsubscribe, no notification.
        assert notes.next() == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"workspace": str(workspace), "subscribed": False},
        }


def test_a_slow_subscriber_never_slows_writers_and_is_told_to_resync(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock, notes = subscribe(daemon.socket_path, workspace)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    with sock, Client(daemon.socket_path, workspace=workspace, timeout=30) as client:
        for n in range(600):  # each commit queues one notification the subscriber never reads
            client.store(category="Quirk", content=f"Quirk {word(n)} about {word(n, 1)}.")
        seen: list[str] = []
        while "resync" not in seen:
            seen.append(notes.next()["method"])
    assert seen.count("changed") < 600
    assert len((workspace / ".memory" / "quirks.md").read_text().splitlines()) > 600


def test_a_slow_subscriber_to_a_big_category_is_bounded_in_bytes_not_only_in_count(
    daemon: DaemonProcess, workspace: Path
) -> None:
    write_big_quirks(workspace, 4_000)  # each `changed`: about 600 KB
    sock, notes = subscribe(daemon.socket_path, workspace)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    with sock, Client(daemon.socket_path, workspace=workspace, timeout=30) as client:
        for n in range(40):  # 24 MB of notifications, far under 256 of them
            client.store(category="Quirk", content=f"Quirk {word(n)} about {word(n, 1)}.")
        seen: list[str] = []
        while "resync" not in seen and len(seen) < 40:
            seen.append(notes.next()["method"])
    assert "resync" in seen
    assert seen.count("changed") < 20  # at most 8 MiB of them were held


def test_crash_debris_is_removed_at_load_and_never_read(short_tmp: Path, workspace: Path) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "quirks.md").write_text("# Quirks\n\n- [real] A real quirk.\n")
    debris = [
        memory / ".quirks.md.memd-0123456789ab.tmp",
        memory / ".decisions.md.memd-ba9876543210.tmp",
        memory / ".lock.memd-stale-5f5f5f",
    ]
    for path in debris:
        path.write_text("- [ghost] Half-written entry from a crash.\n")
    # A lock left by a process that is gone (HackLM's format): memd breaks it.
    (memory / ".lock").write_text('{"pid":999999999,"ts":1}')
    server = start_daemon(short_tmp)
    try:
        with Client(server.socket_path, workspace=workspace) as client:
            assert [e.content for e in client.list().entries] == ["A real quirk."]
            client.store(category="Quirk", content="Stored after the crash.", slug="after")
        assert not any(path.exists() for path in debris)
        assert not (memory / ".lock").exists()
        # Nothing but the category files: the missing ones are created at load, with their
        # headers, so HackLM's unlocked bootstrap can never overwrite one memd creates.
        assert sorted(p.name for p in memory.iterdir()) == sorted(c.file for c in HACKLM_CATEGORIES)
        assert "removed .quirks.md.memd-0123456789ab.tmp" in server.stderr()
    finally:
        assert server.stop() == 0


def test_a_first_store_never_takes_its_own_file_for_crash_debris(
    daemon: DaemonProcess, workspace: Path
) -> None:
    """A commit's file is written at its temp name before the lock is taken, and the first hold
    of the lock sweeps debris: only debris older than the workspace's load goes."""
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            origin="user", category="Security", content="Never commit the .env file.", slug="no-env"
        )
        assert [e.slug for e in client.list(category="Security").entries] == ["no-env"]
    assert "left behind by a crash" not in daemon.stderr()


CRASH_ROUNDS = 3
CRASH_CLIENTS = 32


def _store_until_killed(
    socket_path: Path, workspace: Path, name: tuple[int, int], acked: list[str]
) -> None:
    """Store distinct entries until the daemon dies; record each acknowledged content."""
    with Client(socket_path, workspace=workspace, timeout=20) as client:
        for n in range(10_000):
            token = word(*name, n)  # unique letter words: every store is a new rule
            content = f"Crash test {token}a with {token}b and {token}c."
            try:
                result = client.store(category="Decision", content=content)
            except MemdError:
                return
            assert result.action == "stored", result.message
            acked.append(content)


def test_sigkill_under_load_loses_no_acknowledged_store(short_tmp: Path, workspace: Path) -> None:
    rng = random.Random(20261122)
    acked: list[str] = []
    for round_ in range(CRASH_ROUNDS):
        server = start_daemon(short_tmp)
        started = len(acked)
        threads = [
            threading.Thread(
                target=_store_until_killed,
                args=(server.socket_path, workspace, (round_, c), acked),
            )
            for c in range(CRASH_CLIENTS)
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60
        # Kill at a random moment once stores are flowing (a count, not a sleep).
        target = started + rng.randrange(50, 400)
        while len(acked) < target and time.monotonic() < deadline:
            time.sleep(0.001)
        server.process.kill()
        server.process.wait(timeout=20)
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive()
        assert len(acked) > started

    server = start_daemon(short_tmp)
    after = "Recovery stores work after a restart."
    try:
        with Client(server.socket_path, workspace=workspace) as client:
            listed = [e.content for e in client.list(category="Decision").entries]
            # a write breaks the lock a killed daemon may have left (its pid is dead)
            assert client.store(category="Decision", content=after).action == "stored"
    finally:
        assert server.stop() == 0
    memory = workspace / ".memory"
    text = (memory / "decisions.md").read_text(encoding="utf-8")
    entries = mdformat.entries(mdformat.parse(text))
    contents = [e.content for e in entries]
    assert contents == [*listed, after]
    assert len(set(contents)) == len(contents)
    assert set(acked) <= set(contents)
    assert len({e.slug for e in entries}) == len(entries)
    assert [p.name for p in memory.iterdir() if p.name.startswith(".")] == []


# ---------------------------------------------------------------------------- client library


async def test_async_subscription_yields_typed_events(
    daemon: DaemonProcess, workspace: Path
) -> None:
    client = AsyncClient(daemon.socket_path, workspace=workspace)
    async with client, client.subscribe() as events:
        await client.store(category="Preference", content="Prefer short functions.", slug="s")
        with anyio.fail_after(10):
            event = await events.__anext__()
        assert isinstance(event, Changed)
        assert (event.source, event.category, event.file) == (
            "memd",
            "Preference",
            "preferences.md",
        )
        assert [e.slug for e in event.entries] == ["s"]
        path = workspace / ".memory" / "preferences.md"
        path.write_text(path.read_text().replace("short", "small"))
        with anyio.fail_after(10):
            event = await events.__anext__()
        assert isinstance(event, Changed)
        assert event.source == "external"
        assert [e.content for e in event.entries] == ["Prefer small functions."]


def test_blocking_client_calls_back_for_each_change(daemon: DaemonProcess, workspace: Path) -> None:
    received: queue.Queue[Changed | Resync] = queue.Queue()
    client = Client(daemon.socket_path, workspace=workspace)
    with client, client.subscribe(received.put):
        client.store(origin="user", category="Security", content="Never log tokens.", slug="tokens")
        event = received.get(timeout=10)
    assert isinstance(event, Changed)
    assert (event.source, [e.slug for e in event.entries]) == ("memd", ["tokens"])


def test_memd_watch_prints_changes(daemon: DaemonProcess, workspace: Path) -> None:
    command = [sys.executable, "-m", "memd", "watch", "--json", "--socket", str(daemon.socket_path)]
    watcher = subprocess.Popen(
        [*command, "--workspace", str(workspace)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    stdout, stderr = watcher.stdout, watcher.stderr
    assert stdout is not None and stderr is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        # Store until the watcher's subscription is in place and it prints a change.
        with Client(daemon.socket_path, workspace=workspace) as client:
            deadline = time.monotonic() + 20
            line = b""
            n = 0
            while not line and time.monotonic() < deadline:
                n += 1
                client.store(category="Quirk", content=f"Watch probe {word(n)} and {word(n, 1)}.")
                with contextlib.suppress(queue.Empty):
                    line = lines.get(timeout=0.2)
        event = msgspec.json.decode(line)
        assert event["method"] == "changed"
        assert (event["params"]["file"], event["params"]["source"]) == ("quirks.md", "memd")
    finally:
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(timeout=20) == 0
        stdout.close()
        stderr.close()
