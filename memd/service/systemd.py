"""memd as a systemd user service (Linux): the install and uninstall plans, and its state.

Rules:
- `memd.socket` and `memd.service` go to `$XDG_CONFIG_HOME/systemd/user`; install runs
  `daemon-reload` first (it proves the user manager is reachable before a daemon is stopped),
  then `enable --now memd.socket` and `try-restart memd.service` (so a reinstall takes effect).
- A memd is the service's when its cgroup is `memd.service`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from memd.service import units
from memd.service.commands import NOT_FOUND, NOT_RUNNABLE, TIMED_OUT, CommandResult, run_command
from memd.service.steps import Command, RemoveFile, Step, WriteFile, missing_dirs, stop_unmanaged
from memd_client import _paths

LINGER_HINT = "`loginctl enable-linger $USER` keeps it running without a login"


def systemctl(*words: str, required: bool = True, hint: str = "") -> Command:
    """Return the step running `systemctl --user <words>`."""
    return Command(("systemctl", "--user", *words), required, hint)


def install_plan(argv: Sequence[str]) -> list[Step]:
    """Return the steps installing `memd.socket` and `memd.service` running `argv`."""
    unit_dir = _paths.systemd_user_dir()
    hint = (
        "The unit files are written; once you have a systemd user session, run "
        f"`systemctl --user daemon-reload && systemctl --user enable --now "
        f"{units.SYSTEMD_SOCKET_UNIT}` ({LINGER_HINT})."
    )
    plan: list[Step] = missing_dirs([(unit_dir, 0o755)])
    plan += [
        WriteFile(os.path.join(unit_dir, name), text.encode())
        for name, text in units.render_systemd(argv).items()
    ]
    # daemon-reload first: it proves the user manager is reachable before a daemon is stopped.
    plan.append(systemctl("daemon-reload", hint=hint))
    plan += stop_unmanaged(_paths.service_socket_path(platform="linux"), "systemd", is_managed)
    plan += [
        systemctl("enable", "--now", units.SYSTEMD_SOCKET_UNIT, hint=hint),
        systemctl("try-restart", units.SYSTEMD_SERVICE_UNIT, hint=hint),
    ]
    return plan


def uninstall_plan() -> list[Step]:
    """Return the steps removing the units (none if neither is installed)."""
    unit_dir = _paths.systemd_user_dir()
    names = (units.SYSTEMD_SOCKET_UNIT, units.SYSTEMD_SERVICE_UNIT)
    installed = [os.path.join(unit_dir, name) for name in names]
    installed = [path for path in installed if os.path.lexists(path)]
    if not installed:
        return []
    link = os.path.join(unit_dir, "sockets.target.wants", units.SYSTEMD_SOCKET_UNIT)
    hint = (
        "The unit files are removed; run `systemctl --user daemon-reload` once you have a "
        "systemd user session."
    )
    plan: list[Step] = [systemctl("disable", "--now", *names, required=False)]
    plan += [RemoveFile(path) for path in installed]
    if os.path.islink(link):  # left behind when systemctl cannot reach the user manager
        plan.append(RemoveFile(link))
    plan.append(systemctl("daemon-reload", hint=hint))
    return plan


def state() -> tuple[list[str], bool]:
    """Return the units' state, one line each, and whether `memd.socket` is active."""
    queries = [
        ("is-enabled", units.SYSTEMD_SOCKET_UNIT),
        ("is-active", units.SYSTEMD_SOCKET_UNIT),
        ("is-active", units.SYSTEMD_SERVICE_UNIT),
    ]
    socket_active = False
    lines = []
    for verb, unit in queries:
        result = run_command(["systemctl", "--user", verb, unit])
        if _unavailable(result):
            return [f"systemctl unavailable: {result.output or f'exit {result.returncode}'}"], False
        answer = result.output.splitlines()[-1] if result.output else f"exit {result.returncode}"
        lines.append(f"systemctl --user {verb} {unit}: {answer}")
        if verb == "is-active" and unit == units.SYSTEMD_SOCKET_UNIT:
            socket_active = result.returncode == 0
    return lines, socket_active


def _unavailable(result: CommandResult) -> bool:
    return result.returncode in (NOT_FOUND, NOT_RUNNABLE, TIMED_OUT) or result.output.startswith(
        "Failed to"
    )


def is_managed(pid: int) -> bool:
    """Return whether memd `pid` was started by systemd: its cgroup is `memd.service`'s."""
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return False
    return any(line.rpartition("/")[2] == units.SYSTEMD_SERVICE_UNIT for line in lines if line)
