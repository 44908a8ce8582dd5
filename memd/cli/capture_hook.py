"""The Claude Code capture hook: `memd extract --hook claude`, run at SessionEnd and PreCompact,
queues what the person said in the session (preferences, corrections, constraints) into the
review inbox.

Rules:
- It reads ONE JSON object from stdin, waiting at most STDIN_DEADLINE seconds in all and
  reading at most MAX_INPUT_BYTES: Claude Code may never close the hook's stdin, so it never
  reads to end of file.
- It takes `hook_event_name`, `transcript_path` and `cwd` (the workspace is found from `cwd` as
  every verb finds one). Only SessionEnd and PreCompact do anything; any other event, or an
  input without an absolute `transcript_path`, does nothing.
- It sends one `extract` with the transcript, `propose`, `since_last` and `workspace_only`,
  starting a daemon if none runs (within AUTOSTART_TIMEOUT), and waits at most REQUEST_TIMEOUT
  for the answer: Claude Code waits for PreCompact before it compacts, and the daemon finishes
  a request whose client left (the candidates still land in the inbox). The daemon reads the
  file; a repeat (PreCompact fires several times, SessionEnd follows) reads only what was
  appended (see `memd.server.methods.capture`).
- A session that ran outside the workspace found from the input (its transcript's `cwd`) is
  never queued: the daemon lists it only, and the hook logs that it skipped it. No answer within
  REQUEST_TIMEOUT is not a failure (nothing is logged).
- It prints NOTHING and ALWAYS exits 0, whatever happens (no daemon, bad JSON, a missing file, a
  timeout, `chat = false`): exit 2 at PreCompact would block the compaction, and anything on
  stdout or stderr is noise in the agent's session. Its stdout and stderr are pointed at
  /dev/null first (a daemon it starts would inherit them). A failure is one line appended to
  memd's log file, if that file exists; nothing else records it.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import select
import sys
import time
from typing import Any, NamedTuple

from memd.cli import hook
from memd.cli.hook import Plan

STDIN_DEADLINE = 2.0
"""Seconds the hook waits for its JSON input, in all."""
AUTOSTART_TIMEOUT = 5.0
"""Seconds the hook may spend starting a daemon."""
REQUEST_TIMEOUT = 1.0
"""Seconds the hook waits for the daemon's answer: enough to send the request and hear a quick
answer (the daemon finishes the work regardless)."""
MAX_INPUT_BYTES = 1 << 20
EVENTS = frozenset({"SessionEnd", "PreCompact"})
"""The hook events that capture (the others do nothing)."""
COMMAND = ["extract", "--hook", "claude"]


class Capture(NamedTuple):
    """What a hook input asks for: the event, the transcript, and where the session ran."""

    event: str
    transcript: str
    cwd: str | None


def fast_plan(argv: list[str]) -> Plan | None:
    """The plan if `argv` is the plain capture hook command, with at most `--socket PATH`
    before or after it (None: it is not; the full command line parser runs)."""
    return hook.fast_plan(argv, COMMAND)


def read_one_object(fd: int, deadline: float) -> Any:
    """The first JSON value on `fd`, read until it is complete, the input ends, MAX_INPUT_BYTES
    were read or `deadline` (a `time.monotonic()` time) passes.

    Raises:
        ValueError: no complete JSON value came in time (the message says why).
    """
    decoder = json.JSONDecoder()
    data = b""
    while len(data) < MAX_INPUT_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ValueError("no complete JSON input before the deadline")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
        value = _complete(decoder, data)
        if value is not None:
            return value[0]
    value = _complete(decoder, data)
    if value is None:
        raise ValueError("the input is not one JSON value")
    return value[0]


def _complete(decoder: json.JSONDecoder, data: bytes) -> tuple[Any] | None:
    try:
        text = data.decode("utf-8")
        value, _ = decoder.raw_decode(text, len(text) - len(text.lstrip()))
    except (UnicodeDecodeError, ValueError):
        return None
    return (value,)


def capture_of(hook: Any) -> Capture | None:
    """What the hook input `hook` asks to capture (None: nothing; see the module's rules)."""
    if not isinstance(hook, dict) or hook.get("hook_event_name") not in EVENTS:
        return None
    transcript, cwd = hook.get("transcript_path"), hook.get("cwd")
    if not isinstance(transcript, str) or not os.path.isabs(transcript):
        return None
    return Capture(hook["hook_event_name"], transcript, cwd if isinstance(cwd, str) else None)


def run_capture_hook(
    socket_path: str | None, workspace: str | None = None, *, autostart: bool = True
) -> int:
    """Run the capture hook on this process's stdin (see the module's rules); always 0.
    `workspace` replaces the one found from the input's `cwd`; `autostart` False never starts
    a daemon."""
    try:
        _silence()
        _capture(socket_path, workspace, autostart)
    except BaseException as exc:  # a hook must never fail its agent
        _log(f"capture hook: {type(exc).__name__}: {exc}")
    return 0


def _silence() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                os.dup2(devnull, fd)
    finally:
        os.close(devnull)
    import logging

    logging.getLogger("memd_client").addHandler(logging.NullHandler())


def _capture(socket_path: str | None, workspace: str | None, autostart: bool) -> None:
    try:
        hook = read_one_object(sys.stdin.fileno(), time.monotonic() + STDIN_DEADLINE)
    except (OSError, ValueError) as exc:
        _log(f"capture hook: not a Claude Code hook input ({exc}); nothing captured")
        return
    capture = capture_of(hook)
    if capture is None:
        return
    from memd_client import Client, MemdError, find_workspace
    from memd_client.errors import RequestTimeout

    try:
        root = workspace or find_workspace(capture.cwd)
        with Client(
            socket_path,
            workspace=root,
            timeout=REQUEST_TIMEOUT,
            autostart=autostart,
            autostart_timeout=AUTOSTART_TIMEOUT,
            client_name="memd-capture-hook",
        ) as client:
            result = client.extract(
                transcript=capture.transcript, propose=True, since_last=True, workspace_only=True
            )
        if result.proposed is None:  # the session ran elsewhere: listed, nothing queued
            _log(f"capture hook ({capture.event}, {capture.transcript}): {result.message}")
    except RequestTimeout:
        return  # expected for a long session: the daemon finishes it without us
    except (MemdError, OSError) as exc:
        message = exc.message if isinstance(exc, MemdError) else str(exc)
        _log(f"capture hook ({capture.event}, {capture.transcript}): {message}")


def _log(line: str) -> None:
    """Append `line` to memd's log file if it exists (never creates it)."""
    with contextlib.suppress(Exception):
        from memd.config import default_log_path

        path = default_log_path()
        if not os.path.isfile(path):
            return
        stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        with os.fdopen(fd, "a", encoding="utf-8") as log:
            log.write(f"{stamp} WARNING memd.capture_hook: {line}\n")
