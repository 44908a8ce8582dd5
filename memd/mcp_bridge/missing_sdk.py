"""`memd mcp` without the `mcp` extra: say what to install, on stderr and to the MCP client.

An MCP client whose server exits shows only "Connection closed", and people rarely read the
server's stderr, so before exiting the bridge also answers the client's opening requests with a
JSON-RPC error that carries the same sentence.

Rules:
- The sentence names the distribution (`memd-daemon[mcp]`) and the interpreter memd runs from,
  shell-quoted, since the SDK must be installed into that Python. When the SDK is there but does
  not import (an old version, a broken dependency), the import error is named too.
- stdin carries newline-delimited JSON-RPC (MCP's stdio transport). Each request read (an object
  with a `method` and an `id`, alone or in a batch) gets an error response with code -32603 and
  that sentence on stdout; notifications, responses and unreadable lines get nothing.
- Answering goes on past the first request because clients may probe before they shake hands:
  the MCP SDK's default sends `server/discover` and, on an error, falls back to `initialize`.
- The wait is bounded: nothing is read from a terminal, and reading stops at end of input, once
  an `initialize` is answered (no handshake follows it), after `MAX_ANSWERS` answers, at a line
  over 1 MiB, or `WAIT` seconds after it began, whichever comes first.
"""

from __future__ import annotations

import os
import select
import shlex
import time

import msgspec
from msgspec import UNSET, Raw, UnsetType

from memd_client._framing import FrameTooLarge, LineDecoder

INTERNAL_ERROR = -32603
"""JSON-RPC's "internal error": the server cannot serve at all."""
WAIT = 5.0
"""Seconds to listen for the client's requests; clients send their first one at once."""
MAX_ANSWERS = 4
"""Answers at most (the SDK's probe, a second probe, a handshake and its retry): a few short
lines, so writing them never blocks on a client that does not read."""


def missing_sdk_message(executable: str, cause: str | None = None, *, has_pip: bool = True) -> str:
    """Return the one sentence saying what to install, and where.

    `executable` is the interpreter memd runs from (`sys.executable`); `cause` is the import error
    when the SDK is installed but does not import, None when it is simply not installed.
    `has_pip` says whether that interpreter has pip: an environment `uv tool install` made has
    none, so the sentence then says to install memd again with the extra instead.
    """
    why = f" ({cause})" if cause else ""
    if not has_pip:
        return (
            f"memd mcp needs the MCP SDK{why}; its environment has no pip, so install memd again "
            "with the extra, 'memd-daemon[mcp]', the way you installed it (README: Install)"
        )
    python = shlex.quote(executable or "python3")
    return (
        f"memd mcp needs the MCP SDK{why}; install it into the Python memd runs from: "
        f"{python} -m pip install 'memd-daemon[mcp]'"
    )


class _Incoming(msgspec.Struct):
    """What matters of an incoming JSON-RPC object; the id is echoed back byte for byte."""

    id: Raw | UnsetType = UNSET
    method: str | UnsetType = UNSET


class _Error(msgspec.Struct):
    code: int
    message: str


class _ErrorResponse(msgspec.Struct):
    jsonrpc: str
    id: Raw
    error: _Error


_incoming = msgspec.json.Decoder(_Incoming | list[_Incoming])
_encoder = msgspec.json.Encoder()


def refusal(frame: bytes, message: str) -> tuple[bytes | None, bool]:
    """Return the error response to write for one incoming line (None: nothing to answer) and
    whether the line held an `initialize` request."""
    try:
        decoded = _incoming.decode(frame)
    except msgspec.DecodeError:
        return None, False
    answers: list[_ErrorResponse] = []
    initialize = False
    for incoming in decoded if isinstance(decoded, list) else [decoded]:
        if isinstance(incoming.id, UnsetType) or isinstance(incoming.method, UnsetType):
            continue  # a notification, or a response to a request memd never sent
        answers.append(_ErrorResponse("2.0", incoming.id, _Error(INTERNAL_ERROR, message)))
        initialize = initialize or incoming.method == "initialize"
    if not answers:
        return None, False
    encoded = _encoder.encode(answers if isinstance(decoded, list) else answers[0])
    return encoded + b"\n", initialize


def refuse_requests(message: str, *, stdin: int = 0, stdout: int = 1, wait: float = WAIT) -> int:
    """Answer the requests arriving on `stdin` with `message` (see the module's rules) and
    return how many lines were answered."""
    if os.isatty(stdin):
        return 0
    deadline = time.monotonic() + wait
    decoder = LineDecoder()
    answered = 0
    while answered < MAX_ANSWERS:
        chunk = _read(stdin, deadline - time.monotonic())
        if not chunk:
            break
        try:
            frames = decoder.feed(chunk)
        except FrameTooLarge:
            break
        for frame in frames:
            reply, initialize = refusal(frame, message)
            if reply is not None:
                if not _write(stdout, reply):
                    return answered
                answered += 1
            if initialize or answered >= MAX_ANSWERS:
                return answered
    return answered


def _read(fd: int, timeout: float) -> bytes:
    """Read what `fd` has within `timeout` seconds; b"" at end of input, on timeout or error."""
    if timeout <= 0:
        return b""
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return os.read(fd, 65536) if ready else b""
    except OSError:
        return b""


def _write(fd: int, data: bytes) -> bool:
    """Write all of `data`; False if the reader has gone."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        return False
    return True
