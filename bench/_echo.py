"""The socket round-trip floor: a trivial server speaking memd's framing, in its own process.

`python -m bench._echo MODE SOCKET REPLIES` listens on the Unix socket SOCKET and answers each
request frame (newline-delimited JSON, split by the same `LineDecoder` memd uses) with a canned
reply: REPLIES holds one reply frame per line, and a request gets the one with its `id`. It
decodes only the request's id and does nothing else, so its round trip is what any server on
this transport costs. It prints "ready" once listening and serves until killed.

MODE "anyio" serves as memd does (anyio streams on the asyncio loop); "plain" uses blocking
stdlib sockets, one connection at a time, the kernel's floor.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import msgspec
from anyio.abc import SocketStream

from memd_client import LineDecoder

MODES = ("anyio", "plain")
STARTUP_TIMEOUT = 20.0


class _Framed(msgspec.Struct):
    id: int


_id_decoder = msgspec.json.Decoder(_Framed)


def load_replies(path: Path) -> dict[int, bytes]:
    """Return the reply frames in `path` (one per line) by their JSON-RPC id."""
    replies: dict[int, bytes] = {}
    for line in path.read_bytes().splitlines():
        if line.strip():
            replies[_id_decoder.decode(line).id] = line + b"\n"
    return replies


async def _serve_anyio(socket_path: str, replies: dict[int, bytes]) -> None:
    async def handle(stream: SocketStream) -> None:
        decoder = LineDecoder()
        async with stream:
            while True:
                try:
                    data = await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                for frame in decoder.feed(data):
                    await stream.send(replies[_id_decoder.decode(frame).id])

    listener = await anyio.create_unix_listener(socket_path)
    print("ready", flush=True)
    await listener.serve(handle)


def _serve_plain(socket_path: str, replies: dict[int, bytes]) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path)
    server.listen(8)
    print("ready", flush=True)
    while True:
        connection, _ = server.accept()
        decoder = LineDecoder()
        with connection:
            while data := connection.recv(65536):
                for frame in decoder.feed(data):
                    connection.sendall(replies[_id_decoder.decode(frame).id])


@contextlib.contextmanager
def echo_server(mode: str, socket_path: Path, replies: list[bytes]) -> Iterator[Path]:
    """Run an echo server subprocess answering with `replies` (frames); yield its socket path.

    Raises:
        RuntimeError: it did not start.
    """
    replies_path = socket_path.with_suffix(".replies")
    replies_path.write_bytes(b"".join(reply.rstrip(b"\n") + b"\n" for reply in replies))
    server = subprocess.Popen(
        [sys.executable, "-m", "bench._echo", mode, str(socket_path), str(replies_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        with server.stdout:
            if server.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the {mode} echo server did not start")
        yield socket_path
    finally:
        server.terminate()
        server.wait(timeout=STARTUP_TIMEOUT)
        with contextlib.suppress(OSError):
            os.unlink(socket_path)
        replies_path.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    """Serve: MODE SOCKET REPLIES."""
    mode, socket_path, replies_path = argv if argv is not None else sys.argv[1:]
    replies = load_replies(Path(replies_path))
    with contextlib.suppress(KeyboardInterrupt):
        if mode == "anyio":
            anyio.run(_serve_anyio, socket_path, replies)
        elif mode == "plain":
            _serve_plain(socket_path, replies)
        else:
            raise SystemExit(f"unknown mode {mode!r}; use one of {MODES}")


if __name__ == "__main__":
    main()
