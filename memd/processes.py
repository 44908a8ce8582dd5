"""Is a process alive? One answer for the HackLM lock and the service installer."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """Return whether process `pid` exists and is not a zombie.

    A process owned by another user (EPERM) counts as alive; pid <= 0 never does (os.kill would
    address a process group). Zombies are seen through /proc where it exists (Linux).
    """
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except OSError:  # PermissionError (another user's process) and anything unexpected
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rpartition(")")[2].split()
    except OSError:  # no /proc (macOS), or the process just went away
        return True
    return not state or state[0] != "Z"
