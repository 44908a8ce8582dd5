"""`memd service install|uninstall|status`: run memd as a systemd (Linux) or launchd (macOS) user
service that starts on the first connection.

Rules:
- This module picks the service manager and reports; what the files say is decided in
  `memd.service.units` (pure), the plans in `memd.service.systemd` / `memd.service.launchd`,
  and `memd.service.steps` carries them out.
- Install and uninstall first build a plan: a list of steps (make a directory, write or remove a
  file, stop a daemon, run a command). `--dry-run` prints the plan and changes nothing;
  otherwise each step runs in order and is printed as it happens. The first failing required
  step ends the run with one message saying what to do next (exit code 1); nothing is undone,
  so written unit files stay for the user to enable later.
- Before the service manager takes the socket path, a memd serving that path outside it is
  stopped (SIGTERM, then up to `daemon_process.STOP_TIMEOUT` s for it to exit); otherwise the
  manager would replace the socket under the running daemon and clients would reach one or the
  other.
  "Serving" means it holds the flock on `<socket>.lock` and the pid in `<socket>.pid` is alive.
- Expected failures (no systemctl, no user session, unwritable paths) print a message, never a
  traceback. Progress goes to stdout, warnings and errors to stderr.
- Every function that depends on the platform takes `platform` (default `sys.platform`), so
  the launchd path can be exercised on Linux.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

import msgspec

from memd.service import launchd, systemd, units
from memd.service.commands import EXIT_FAILURE, EXIT_NOT_RUNNING, EXIT_OK, EXIT_USAGE
from memd.service.steps import execute
from memd_client import Client, DaemonUnavailable, MemdError, _paths
from memd_client._paths import default_socket_path

STATUS_TIMEOUT = 2.0
MIN_IDLE_EXIT = 30.0
"""The shortest `--idle-exit` a service gets (start-rate limits of systemd and launchd)."""


def run_service(args: argparse.Namespace) -> int:
    """Carry out `memd service {install,uninstall,status}` and return the exit code."""
    idle_exit: float | None = getattr(args, "idle_exit", None)
    dry_run = bool(getattr(args, "dry_run", False))
    if idle_exit is not None and idle_exit < MIN_IDLE_EXIT:
        print(
            f"--idle-exit must be at least {MIN_IDLE_EXIT:g} s for a service: systemd stops "
            "restarting a service that starts more than 5 times in 10 s, and launchd treats an "
            "agent that exits within 10 s as crashed.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.action == "install":
        return install(dry_run=dry_run, idle_exit=idle_exit)
    if args.action == "uninstall":
        return uninstall(dry_run=dry_run)
    return status(as_json=bool(getattr(args, "json", False)))


def install(
    *, dry_run: bool = False, idle_exit: float | None = None, platform: str = sys.platform
) -> int:
    """Install memd as a user service listening on its default socket, and start listening.

    Linux: writes `memd.socket` and `memd.service` to `$XDG_CONFIG_HOME/systemd/user`, runs
    `systemctl --user daemon-reload`, stops a memd serving the socket outside systemd, then
    `enable --now memd.socket` and `try-restart memd.service` (so a reinstall takes effect).
    macOS: writes `~/Library/LaunchAgents/dev.memd.agent.plist`, stops a memd serving the socket
    outside launchd, then `launchctl bootout` (an older copy) and `bootstrap`. Returns 0, or 1
    on failure.
    """
    if not _supported(platform):
        return EXIT_FAILURE
    argv = exec_argv(idle_exit)
    try:
        plan = systemd.install_plan(argv) if platform == "linux" else launchd.install_plan(argv)
    except ValueError as exc:
        print(
            f"Cannot install memd's service: {exc}; fix that and run `memd service install` again.",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    for warning in _install_warnings(platform):
        print(f"Warning: {warning}", file=sys.stderr)
    code = execute(plan, dry_run=dry_run)
    if code == EXIT_OK:
        print("Dry run: nothing was changed." if dry_run else _installed_message(platform))
    return code


def uninstall(*, dry_run: bool = False, platform: str = sys.platform) -> int:
    """Stop and remove memd's user service; nothing installed is not an error.

    Linux: `systemctl --user disable --now memd.socket memd.service` (a failure such as "not
    loaded" is reported and ignored), remove both unit files (and an enablement link systemctl
    could not remove), then `daemon-reload`. macOS: `launchctl bootout`, then remove the plist.
    """
    if not _supported(platform):
        return EXIT_FAILURE
    plan = systemd.uninstall_plan() if platform == "linux" else launchd.uninstall_plan()
    if not plan:
        print("memd's service is not installed.")
        return EXIT_OK
    code = execute(plan, dry_run=dry_run)
    if code == EXIT_OK:
        print(
            "Dry run: nothing was changed."
            if dry_run
            else "memd's service is removed; run `memd serve` to start the daemon yourself."
        )
    return code


class DaemonInfo(msgspec.Struct):
    """The daemon answering on the service's socket, in `memd service status --json`."""

    pid: int
    version: str
    protocol_version: int
    started_by_service: bool


class ServiceStatus(msgspec.Struct):
    """`memd service status --json`: the unit files (path: present), whether all are
    installed, the service manager's view (one line per question asked), whether it holds the
    socket, and the daemon answering on it (None: none, `daemon_error` may say why)."""

    files: dict[str, bool]
    installed: bool
    manager: list[str]
    listening: bool
    socket: str
    daemon: DaemonInfo | None
    daemon_error: str | None = None


def status(*, platform: str = sys.platform, as_json: bool = False) -> int:
    """Print what is installed, what the service manager says and whether a daemon answers (as
    lines, or with `as_json` one `ServiceStatus` object).

    Returns 0 when the service is installed and either a daemon answers on the default socket
    or the manager holds the socket (so one starts on demand), else 3.
    """
    if not _supported(platform):
        return EXIT_FAILURE
    found = _status(platform)
    if as_json:
        print(msgspec.json.format(msgspec.json.encode(found), indent=2).decode())
    else:
        print("\n".join(_status_lines(found)))
    running = found.daemon is not None or found.listening
    return EXIT_OK if found.installed and running else EXIT_NOT_RUNNING


def _supported(platform: str) -> bool:
    if platform in ("linux", "darwin"):
        return True
    print(
        f"memd service supports Linux (systemd) and macOS (launchd), not {platform}; "
        "run `memd serve` from your own startup script instead.",
        file=sys.stderr,
    )
    return False


def memd_command() -> list[str]:
    """Return the absolute command that runs memd, for the service manager.

    The `memd` script beside `sys.executable` (symlinks kept, so a venv's `bin/` stays), else
    `memd` on PATH, else `sys.executable -m memd`.
    """
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "memd")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return [beside]
    found = shutil.which("memd")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "memd"]


def exec_argv(idle_exit: float | None = None) -> list[str]:
    """Return the daemon's whole command line: `memd serve`, with `--idle-exit` if given."""
    extra = ["--idle-exit", format_seconds(idle_exit)] if idle_exit else []
    return [*memd_command(), "serve", *extra]


def format_seconds(seconds: float) -> str:
    """Return `seconds` as an argument: `600` for 600.0, `0.5` for 0.5, never an exponent."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))


def _install_warnings(platform: str) -> list[str]:
    warnings = []
    listening = _paths.service_socket_path(platform=platform)
    clients = default_socket_path(platform=platform)
    if clients != listening:
        if os.environ.get("MEMD_SOCKET"):
            reason, fix = "MEMD_SOCKET is set", f"unset MEMD_SOCKET or set it to {listening}"
        else:
            runtime = os.path.dirname(os.path.dirname(listening))
            reason, fix = "XDG_RUNTIME_DIR is not set", f"set XDG_RUNTIME_DIR={runtime}"
        warnings.append(
            f"the service listens on {listening}, but clients started from this shell look for "
            f"memd at {clients} ({reason}); {fix} so they find the service."
        )
    return warnings


def _installed_message(platform: str) -> str:
    manager = units.SYSTEMD_SOCKET_UNIT if platform == "linux" else "launchd"
    return (
        f"{manager} is listening on {_paths.service_socket_path(platform=platform)}; "
        "the daemon starts on the first request."
    )


def is_managed(pid: int, platform: str) -> bool:
    """Return whether memd `pid` was started by the service manager (so is not in the way).

    Linux: its cgroup is `memd.service`'s. macOS: `launchctl print` names it as the agent's pid.
    """
    return systemd.is_managed(pid) if platform == "linux" else launchd.is_managed(pid)


def _status(platform: str) -> ServiceStatus:
    if platform == "linux":
        unit_dir = _paths.systemd_user_dir()
        names = (units.SYSTEMD_SOCKET_UNIT, units.SYSTEMD_SERVICE_UNIT)
        paths = [os.path.join(unit_dir, name) for name in names]
    else:
        paths = [_paths.launchd_plist_path()]
    files = {path: os.path.exists(path) for path in paths}
    installed = all(files.values())
    manager: list[str] = []
    listening = False
    if installed:
        manager, listening = systemd.state() if platform == "linux" else launchd.state()
    path = _paths.service_socket_path(platform=platform)
    daemon, error = _daemon_state(path, platform)
    return ServiceStatus(files, installed, manager, listening, path, daemon, error)


def _daemon_state(path: str, platform: str) -> tuple[DaemonInfo | None, str | None]:
    try:
        with Client(path, timeout=STATUS_TIMEOUT) as client:
            info = client.status()
    except DaemonUnavailable:
        return None, None
    except MemdError as exc:
        return None, exc.message
    managed = is_managed(info.pid, platform)
    return DaemonInfo(info.pid, info.version, info.protocol_version, managed), None


def _status_lines(found: ServiceStatus) -> list[str]:
    lines = [f"installed: {path}" for path, present in found.files.items() if present]
    missing = [path for path, present in found.files.items() if not present]
    if missing:
        lines.append(f"not installed: {', '.join(missing)} (run `memd service install`)")
    lines += found.manager
    info = found.daemon
    if info is None:
        why = f": {found.daemon_error}" if found.daemon_error else ""
        lines.append(f"no daemon answering on {found.socket}{why}")
        return lines
    started_by = "the service" if info.started_by_service else "hand or a client, not the service"
    lines.append(
        f"memd {info.version} (protocol {info.protocol_version}) is answering on {found.socket}, "
        f"pid {info.pid} (started by {started_by})"
    )
    return lines
