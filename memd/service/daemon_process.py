"""The memd already serving a socket: find it and stop it, for `memd service install`.

Rules:
- A daemon serves a path while it holds the flock on `<socket>.lock`; its pid is in
  `<socket>.pid` (`memd.paths.read_pid`). Both must agree (lock held, pid alive), so a stale pid
  file left by a killed daemon never gets an unrelated process signalled.
- Stopping is SIGTERM, then up to `STOP_TIMEOUT` s for it to exit or release the lock.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time

from memd.fs.processes import pid_alive
from memd.paths import read_pid
from memd.service.commands import StepFailed

STOP_TIMEOUT = 15.0
"""Seconds an unmanaged daemon gets to exit after SIGTERM (it drains writes within ~10 s)."""
STOP_POLL = 0.05


def serving_pid(socket_path: str) -> int | None:
    """Return the pid of the memd serving `socket_path`, or None if none is.

    A daemon serves a path while it holds the flock on `<socket>.lock`; its pid is in
    `<socket>.pid`. Both must agree (lock held, pid alive), so a stale pid file left by a
    killed daemon never gets an unrelated process signalled.
    """
    if not lock_held(socket_path + ".lock"):
        return None
    pid = read_pid(socket_path)
    return pid if pid is not None and pid_alive(pid) else None


def lock_held(lock_path: str) -> bool:
    """Return whether some process holds a flock on `lock_path` (a missing file is not held)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def stop_daemon(pid: int, socket_path: str, timeout: float = STOP_TIMEOUT) -> None:
    """Send SIGTERM to memd `pid` and wait until it exits or releases `<socket>.lock`.

    Raises:
        StepFailed: the process is not ours to signal, or it outlived `timeout`.
    """
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        raise StepFailed(
            f"memd (pid {pid}) serves {socket_path} but belongs to another user; stop it, then "
            "run `memd service install` again."
        ) from None
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and lock_held(socket_path + ".lock"):
        if time.monotonic() >= deadline:
            raise StepFailed(
                f"memd (pid {pid}) still serves {socket_path} {timeout:g} s after SIGTERM; stop "
                f"it (`kill {pid}`), then run `memd service install` again."
            )
        time.sleep(STOP_POLL)
