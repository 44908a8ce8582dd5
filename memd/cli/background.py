"""`memd serve --background`: start the daemon detached and report whether it came up.

The classic double fork, done before any thread or event loop exists:
1. The command forks; the child starts a new session (no controlling terminal) and forks again,
   and that middle process exits at once. The daemon is reparented to init, so it never lingers
   as a zombie of whoever started it (an editor, an agent, a client library).
2. The daemon changes to "/", reads from /dev/null and appends its log to the log file, and
   reports through a pipe: "pid N", then "ready MESSAGE" or "error CODE MESSAGE".
3. The command waits up to READY_TIMEOUT seconds for that word and prints it: exit 0 once the
   daemon serves, 1 once a daemon that failed has exited (its end of the pipe stays open until
   then), so a refused second daemon is gone by the time the command returns. A daemon that says
   nothing in time is sent SIGTERM, so nothing is left running that nobody knows about.

The log file is rotated to `<log>.1` when it is over LOG_ROTATE_BYTES at start.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

READY_TIMEOUT = 10.0
LOG_ROTATE_BYTES = 1 << 20


class Reporter:
    """The daemon's end of the pipe: say "ready" or "error" once."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def ready(self, message: str) -> None:
        """Tell the waiting command the daemon serves, and let it go."""
        self._say(f"ready {message}")
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def failed(self, message: str, code: int = 1) -> None:
        """Tell the waiting command the daemon could not start and the exit code to return;
        the pipe closes when the daemon exits."""
        self._say(f"error {code} {message}")

    def _say(self, line: str) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.write(self._fd, line.replace("\n", " ").encode() + b"\n")


def detach(log_path: str, *, timeout: float = READY_TIMEOUT) -> int | Reporter:
    """Fork the daemon off. In the calling process, wait for its word, print it, and return the
    exit code; in the daemon, return the `Reporter` to answer with.

    Raises:
        OSError: the log file cannot be opened (raised before anything is forked).
    """
    log_fd = _open_log(log_path)
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    middle = os.fork()
    if middle:
        os.close(write_end)
        os.close(log_fd)
        os.waitpid(middle, 0)
        return _wait_for_word(read_end, log_path, timeout)
    try:
        os.close(read_end)
        os.setsid()
        if os.fork():
            os._exit(0)
        os.chdir("/")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(null)
        os.close(log_fd)
        os.write(write_end, f"pid {os.getpid()}\n".encode())
    except BaseException:
        os._exit(1)
    return Reporter(write_end)


def _open_log(log_path: str) -> int:
    os.makedirs(os.path.dirname(log_path), mode=0o700, exist_ok=True)
    with contextlib.suppress(OSError):
        if os.path.getsize(log_path) > LOG_ROTATE_BYTES:
            os.replace(log_path, log_path + ".1")
    return os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _wait_for_word(fd: int, log_path: str, timeout: float) -> int:
    """Read "pid N" then "ready ..."/"error CODE ..." from the daemon; print it; return the code.

    Reads until "ready", or until the pipe closes (the daemon exited), or until the deadline
    (the daemon is then stopped).
    """
    deadline = time.monotonic() + timeout
    data = b""
    timed_out = False
    try:
        while not _has_word(data, b"ready"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                timed_out = True
                _stop(data)
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    for line in data.decode(errors="replace").splitlines():
        word, _, message = line.partition(" ")
        if word == "ready":
            print(message)
            return 0
        if word == "error":
            code, _, reason = message.partition(" ")
            print(f"memd: {reason}", file=sys.stderr)
            return int(code) if code.isdigit() else 1
    if timed_out:
        print(
            f"memd: the daemon did not report ready within {timeout:g} s and was stopped; "
            f"see {log_path}.",
            file=sys.stderr,
        )
    else:
        print(f"memd: the daemon exited before it was ready; see {log_path}.", file=sys.stderr)
    return 1


def _has_word(data: bytes, word: bytes) -> bool:
    return any(line.split(b" ", 1)[0] == word for line in data.split(b"\n")[:-1])


def _stop(data: bytes) -> None:
    for line in data.decode(errors="replace").splitlines():
        word, _, pid = line.partition(" ")
        if word == "pid" and pid.isdigit():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGTERM)
