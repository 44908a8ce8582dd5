"""Is a process alive, whose is it, and when did it start? For the HackLM lock and the service
installer."""

from __future__ import annotations

import enum
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


class PidState(enum.Enum):
    """What `kill(pid, 0)` and /proc say about a pid."""

    OURS = "ours"
    """A live process this user may signal (kill succeeded; not a zombie)."""
    FOREIGN = "foreign"
    """A live process of another user (kill gave EPERM)."""
    GONE = "gone"
    """No such process (ESRCH), a zombie, or a pid that cannot exist (<= 0, too large)."""


def pid_state(pid: int) -> PidState:
    """Return whether `pid` is a live process of this user, of another user, or none at all."""
    if pid <= 0:
        return PidState.GONE
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return PidState.GONE
    except PermissionError:
        return PidState.FOREIGN
    except OSError:  # anything unexpected: assume a process we cannot judge is someone else's
        return PidState.FOREIGN
    return PidState.OURS if _not_a_zombie(pid) else PidState.GONE


def _not_a_zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is None or not fields or fields[0] != "Z"


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None without
    /proc (macOS) or once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()
    except OSError:
        return None


def started_at(pid: int) -> float | None:
    """Return when process `pid` started (seconds since the epoch, to within a second: the boot
    time in /proc/stat is whole seconds), or None where /proc cannot tell (macOS, gone)."""
    fields = _stat_fields(pid)
    boot = _boot_time()
    try:
        ticks = int(fields[19]) if fields is not None else None  # field 22 of the whole line
    except (IndexError, ValueError):
        ticks = None
    if ticks is None or boot is None:
        return None
    return boot + ticks / _CLOCK_TICKS


def _boot_time() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("btime "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def command_name(pid: int) -> str | None:
    """Return the short command name of process `pid` (/proc/<pid>/comm), or None."""
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            name = handle.read(64).strip()
    except OSError:
        return None
    printable = "".join(c for c in name if c.isprintable())
    return printable or None


try:
    _CLOCK_TICKS = float(os.sysconf("SC_CLK_TCK"))
except (ValueError, OSError, AttributeError):  # pragma: no cover - every POSIX system has it
    _CLOCK_TICKS = 100.0
