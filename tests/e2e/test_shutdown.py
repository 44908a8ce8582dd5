"""SIGTERM under load: every acknowledged store is on disk, the rest are told, exit 0."""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import msgspec
import pytest

from memd.core import mdformat
from tests.conftest import start_daemon, store_frames

pytestmark = pytest.mark.e2e


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
