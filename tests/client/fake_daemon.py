"""A scripted fake memd daemon for client tests: a Unix socket server in a thread that answers
each connection's handshake (`status`) and hands the connection to that test's handler; and the
frames the tests send through it."""

from __future__ import annotations

import socket
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from memd_client import Changed, Resync
from memd_client._framing import LineDecoder

TIMEOUT = 5.0
WS = "/tmp/memd-test-workspace"

Message = dict[str, Any]


# ---------------------------------------------------------------------------- the fake daemon


class Peer:
    """The fake daemon's end of one accepted connection."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._decoder = LineDecoder()
        self._frames: deque[bytes] = deque()

    def request(self) -> Message:
        """Block until the client's next request arrives and return it."""
        while not self._frames:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("the client closed the connection")
            self._frames.extend(self._decoder.feed(chunk))
        message: Message = msgspec.json.decode(self._frames.popleft())
        return message

    def send(self, *messages: Message) -> None:
        """Send `messages` in one write, so the client may read several frames in one chunk."""
        self.sock.sendall(b"".join(msgspec.json.encode(m) + b"\n" for m in messages))

    def wait_closed(self) -> None:
        """Block until the client closes its end."""
        while self.sock.recv(65536):
            pass


Handler = Callable[[Peer], None]


class FakeDaemon:
    """A Unix socket server in a thread: the n-th accepted connection is served by handler n."""

    def __init__(
        self, directory: Path, handlers: tuple[Handler, ...], status: Message | None = None
    ) -> None:
        self.path = str(directory / "fake.sock")
        self.status = status or STATUS
        self.errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.path)
        self._listener.listen()
        self._listener.settimeout(TIMEOUT)
        self._acceptor = threading.Thread(target=self._accept, args=(handlers,), daemon=True)
        self._acceptor.start()

    def _accept(self, handlers: tuple[Handler, ...]) -> None:
        for handler in handlers:
            try:
                sock, _ = self._listener.accept()
            except OSError as exc:
                self.errors.append(exc)
                return
            thread = threading.Thread(target=self._serve, args=(handler, sock), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, handler: Handler, sock: socket.socket) -> None:
        sock.settimeout(TIMEOUT)
        with sock:
            try:
                peer = Peer(sock)
                handshake = peer.request()
                assert handshake["method"] == "status", handshake
                peer.send(result(handshake, self.status))
                handler(peer)
            except BaseException as exc:
                self.errors.append(exc)

    def finish(self) -> None:
        """Wait for every handler, then re-raise the first failure on the server side."""
        self._acceptor.join(TIMEOUT)
        for thread in self._threads:
            thread.join(TIMEOUT)
        self._listener.close()
        assert not self._acceptor.is_alive()
        assert not any(thread.is_alive() for thread in self._threads)
        if self.errors:
            raise self.errors[0]


# ---------------------------------------------------------------------------- messages


def notification(method: str, params: Any) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def changed(line: int) -> Message:
    entry = {
        "category": "Decision",
        "file": "decisions.md",
        "line": line,
        "slug": None,
        "content": f"Note {line}.",
    }
    params = {
        "workspace": WS,
        "category": "Decision",
        "file": "decisions.md",
        "source": "external",
        "entries": [entry],
        "error": None,
    }
    return notification("changed", params)


RESYNC = notification("resync", {"workspace": WS, "dropped": 3, "message": "Call list."})
UNKNOWN = notification("reloaded", {"anything": [1, 2]})


def result(request: Message, value: Any) -> Message:
    return {"jsonrpc": "2.0", "id": request["id"], "result": value}


def subscribed(request: Message) -> Message:
    assert request["method"] == "subscribe"
    assert request["params"] == {"workspace": WS}
    return result(request, {"workspace": WS, "subscribed": True})


def label(event: Changed | Resync) -> str:
    if isinstance(event, Changed):
        return f"changed {event.entries[0].line}"
    return f"resync {event.dropped}"


STATUS = {"version": "0", "protocol_version": 1, "pid": 1, "uptime_s": 0.5, "workspaces": []}
