"""memd as a launchd agent (macOS): the install and uninstall plans, and its state.

Rules:
- The plist goes to `~/Library/LaunchAgents/dev.memd.agent.plist`, the agent's output to
  `~/Library/Logs/memd.log`; install runs `launchctl bootout` (an older copy, failure ignored)
  and then `bootstrap` in the user's `gui/<uid>` domain.
- A memd is the agent's when `launchctl print` names its pid.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from memd.config import default_log_path
from memd.service import units
from memd.service.commands import NOT_FOUND, NOT_RUNNABLE, TIMED_OUT, run_command
from memd.service.steps import Command, RemoveFile, Step, WriteFile, missing_dirs, stop_unmanaged
from memd_client import _paths


def launchd_log_path() -> str:
    """Return `~/Library/Logs/memd.log`, where the agent's output goes."""
    return default_log_path(platform="darwin")


def user_domain() -> str:
    """Return the launchd domain of the logged-in user, `gui/<uid>`."""
    return f"gui/{os.getuid()}"


def install_plan(argv: Sequence[str]) -> list[Step]:
    """Return the steps installing and loading the agent running `argv`."""
    plist, log = _paths.launchd_plist_path(), launchd_log_path()
    socket_path = _paths.service_socket_path(platform="darwin")
    data = units.render_launchd(argv, socket_path=socket_path, log_path=log)
    domain = user_domain()
    hint = (
        "The plist is written; load it from your login session with "
        f"`launchctl bootstrap {domain} {shlex.quote(plist)}`."
    )
    plan: list[Step] = missing_dirs(
        [
            (os.path.dirname(plist), 0o755),
            (os.path.dirname(socket_path), 0o700),
            (os.path.dirname(log), 0o700),
        ]
    )
    plan.append(WriteFile(plist, data))
    plan += stop_unmanaged(socket_path, "launchd", is_managed)
    plan += [
        Command(("launchctl", "bootout", f"{domain}/{units.LAUNCHD_LABEL}"), required=False),
        Command(("launchctl", "bootstrap", domain, plist), required=True, hint=hint),
    ]
    return plan


def uninstall_plan() -> list[Step]:
    """Return the steps unloading and removing the agent (none if not installed)."""
    plist = _paths.launchd_plist_path()
    if not os.path.lexists(plist):
        return []
    bootout = ("launchctl", "bootout", f"{user_domain()}/{units.LAUNCHD_LABEL}")
    return [Command(bootout, required=False), RemoveFile(plist)]


def state() -> tuple[list[str], bool]:
    """Return the agent's state (one line) and whether launchd has it loaded."""
    target = f"{user_domain()}/{units.LAUNCHD_LABEL}"
    result = run_command(["launchctl", "print", target])
    if result.returncode in (NOT_FOUND, NOT_RUNNABLE, TIMED_OUT):
        return [f"launchctl unavailable: {result.output}"], False
    if result.returncode != 0:
        return [f"launchd: {target} is not loaded"], False
    lines = [line.strip() for line in result.output.splitlines()]
    states = [line for line in lines if line.startswith("state =")]
    return [f"launchd: {target} is loaded" + (f" ({states[0]})" if states else "")], True


def is_managed(pid: int) -> bool:
    """Return whether memd `pid` was started by launchd: `launchctl print` names it."""
    result = run_command(["launchctl", "print", f"{user_domain()}/{units.LAUNCHD_LABEL}"])
    return result.returncode == 0 and any(
        line.strip() == f"pid = {pid}" for line in result.output.splitlines()
    )
