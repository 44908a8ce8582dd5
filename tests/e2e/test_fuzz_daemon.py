"""Fuzzing the protocol over the socket of a real daemon: every frame gets well-formed JSON-RPC
responses, nothing or a closed connection, and the daemon still serves after it. The inputs are
the dispatcher fuzz suite's (`tests/server/rpc/test_fuzz.py`), and so is the check of a reply."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import msgspec
from hypothesis import given, settings, strategies as st

from tests.budget import examples
from tests.conftest import DaemonProcess
from tests.server.rpc.test_fuzz import FUZZ, _check_reply, _frames


@contextlib.contextmanager
def _connection(path: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(str(path))
    try:
        yield sock
    finally:
        sock.close()


def _lines(sock: socket.socket) -> Iterator[bytes]:
    """The reply lines, until the daemon closes the connection."""
    buffer = b""
    while chunk := sock.recv(65536):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        yield from lines


@settings(FUZZ, max_examples=examples(20, deep=9100))
@given(data=st.data())
def test_a_real_daemon_answers_anything_well_formed_or_closes(
    daemon: DaemonProcess, workspace: Path, data: st.DataObject
) -> None:
    frame = data.draw(_frames(str(workspace))).replace(b"\n", b" ")
    with _connection(daemon.socket_path) as sock:
        # A probe after the frame: its answer shows the frame was handled (or closed on).
        sock.sendall(frame + b'\n{"jsonrpc":"2.0","id":"probe","method":"status"}\n')
        replies = []
        for line in _lines(sock):
            decoded = msgspec.json.decode(line)
            if isinstance(decoded, dict) and decoded.get("id") == "probe":
                break
            replies.append(line)
        for reply in replies:
            _check_reply(frame, reply)
    with _connection(daemon.socket_path) as sock:  # and the daemon still serves
        sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"status"}\n')
        assert b'"result"' in next(_lines(sock))
