"""`memd service install|uninstall|status`: run memd as a systemd (Linux) or launchd (macOS) user
service that starts on the first connection.

Rules:
- What the files say is decided in `memd.units` (pure); this module finds the paths, writes the
  files and runs `systemctl` / `launchctl`.
- Install and uninstall first build a plan: a list of steps (make a directory, write or remove a
  file, stop a daemon, run a command). `--dry-run` prints the plan and changes nothing;
  otherwise each step runs in order and is printed as it happens. The first failing required
  step ends the run with one message saying what to do next (exit code 1); nothing is undone,
  so written unit files stay for the user to enable later.
- Every external command goes through `run_command`: output captured, bounded by a timeout.
- Files are written with memd's own durable writer (`storage.write_atomic`): a temp file in
  the same directory, fsync, rename, fsync the directory; a new file is mode 0644.
- Before the service manager takes the socket path, a memd serving that path outside it is
  stopped (SIGTERM, then up to `STOP_TIMEOUT` s for it to exit); otherwise the manager would
  replace the socket under the running daemon and clients would reach one or the other.
  "Serving" means it holds the flock on `<socket>.lock` and the pid in `<socket>.pid` is alive.
- Expected failures (no systemctl, no user session, unwritable paths) print a message, never a
  traceback. Progress goes to stdout, warnings and errors to stderr.
- Every function that depends on the platform takes `platform` (default `sys.platform`), so
  the launchd path can be exercised on Linux.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from memd import units
from memd.background import default_log_path
from memd.processes import pid_alive
from memd.server import storage
from memd.server.instance import read_pid
from memd_client import Client, DaemonUnavailable, MemdError, StorageError, _paths
from memd_client._paths import default_socket_path

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_RUNNING = 0, 1, 2, 3
COMMAND_TIMEOUT = 30.0
"""Seconds any `systemctl` / `launchctl` call may take."""
STOP_TIMEOUT = 15.0
"""Seconds an unmanaged daemon gets to exit after SIGTERM (it drains writes within ~10 s)."""
STOP_POLL = 0.05
STATUS_TIMEOUT = 2.0
MIN_IDLE_EXIT = 30.0
"""The shortest `--idle-exit` a service gets (start-rate limits of systemd and launchd)."""
NOT_FOUND, NOT_RUNNABLE, TIMED_OUT = 127, 126, 124
"""`run_command` return codes for a command that did not run or finish (shell conventions)."""
LINGER_HINT = "`loginctl enable-linger $USER` keeps it running without a login"

T = TypeVar("T")


class CommandResult(NamedTuple):
    """What a command did: its exit code and its stdout and stderr, merged and stripped."""

    returncode: int
    output: str


def run_command(argv: Sequence[str], *, timeout: float = COMMAND_TIMEOUT) -> CommandResult:
    """Run `argv` with no input and return its exit code and output; never raises OSError.

    A missing program returns `NOT_FOUND`, one that cannot be executed `NOT_RUNNABLE` and one
    that outlives `timeout` (it is killed) `TIMED_OUT`, each with a sentence as output.
    """
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        return CommandResult(NOT_FOUND, f"{argv[0]} was not found on PATH")
    except subprocess.TimeoutExpired:
        return CommandResult(TIMED_OUT, f"{argv[0]} did not finish within {timeout:g} s")
    except OSError as exc:
        return CommandResult(NOT_RUNNABLE, f"{argv[0]} could not run: {exc.strerror or exc}")
    return CommandResult(done.returncode, done.stdout.strip())


# ---------------------------------------------------------------------------- entry points


def run_service(args: argparse.Namespace) -> int:
    """Carry out `memd service {install,uninstall,status}` and return the exit code."""
    idle_exit: float | None = getattr(args, "idle_exit", None)
    dry_run = bool(getattr(args, "dry_run", False))
    if idle_exit is not None and args.action != "install":
        print("--idle-exit only applies to `memd service install`.", file=sys.stderr)
        return EXIT_USAGE
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
    return status()


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
        plan = _systemd_install_plan(argv) if platform == "linux" else _launchd_install_plan(argv)
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
    plan = _systemd_uninstall_plan() if platform == "linux" else _launchd_uninstall_plan()
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


def status(*, platform: str = sys.platform) -> int:
    """Print what is installed, what the service manager says and whether a daemon answers.

    Returns 0 when the service is installed and either a daemon answers on the default socket
    or the manager holds the socket (so one starts on demand), else 3.
    """
    if not _supported(platform):
        return EXIT_FAILURE
    installed = _print_installed(platform)
    listening = _print_manager_state(platform) if installed else False
    answering = _print_daemon_state(platform)
    return EXIT_OK if installed and (answering or listening) else EXIT_NOT_RUNNING


def _supported(platform: str) -> bool:
    if platform in ("linux", "darwin"):
        return True
    print(
        f"memd service supports Linux (systemd) and macOS (launchd), not {platform}; "
        "run `memd serve` from your own startup script instead.",
        file=sys.stderr,
    )
    return False


# ---------------------------------------------------------------------------- what to run


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


# ---------------------------------------------------------------------------- paths


def launchd_log_path() -> str:
    """Return `~/Library/Logs/memd.log`, where the agent's output goes."""
    return default_log_path(platform="darwin")


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


# ---------------------------------------------------------------------------- plans


@dataclass(frozen=True)
class MakeDir:
    """Create a missing directory with `mode`."""

    path: str
    mode: int


@dataclass(frozen=True)
class WriteFile:
    """Write `content` to `path` atomically, mode 0644."""

    path: str
    content: bytes


@dataclass(frozen=True)
class RemoveFile:
    """Remove `path`; already gone is fine."""

    path: str


@dataclass(frozen=True)
class StopDaemon:
    """SIGTERM the memd `pid` serving `socket_path` outside `manager`, and wait for it to exit."""

    pid: int
    socket_path: str
    manager: str


@dataclass(frozen=True)
class Command:
    """Run `argv`; if it fails and `required`, stop with `hint` (else report and go on)."""

    argv: tuple[str, ...]
    required: bool
    hint: str = ""


Step = MakeDir | WriteFile | RemoveFile | StopDaemon | Command


def _systemctl(*words: str, required: bool = True, hint: str = "") -> Command:
    return Command(("systemctl", "--user", *words), required, hint)


def _systemd_install_plan(argv: Sequence[str]) -> list[Step]:
    unit_dir = _paths.systemd_user_dir()
    hint = (
        "The unit files are written; once you have a systemd user session, run "
        f"`systemctl --user daemon-reload && systemctl --user enable --now "
        f"{units.SYSTEMD_SOCKET_UNIT}` ({LINGER_HINT})."
    )
    plan: list[Step] = _missing_dirs([(unit_dir, 0o755)])
    plan += [
        WriteFile(os.path.join(unit_dir, name), text.encode())
        for name, text in units.render_systemd(argv).items()
    ]
    # daemon-reload first: it proves the user manager is reachable before a daemon is stopped.
    plan.append(_systemctl("daemon-reload", hint=hint))
    plan += _stop_unmanaged(_paths.service_socket_path(platform="linux"), "linux")
    plan += [
        _systemctl("enable", "--now", units.SYSTEMD_SOCKET_UNIT, hint=hint),
        _systemctl("try-restart", units.SYSTEMD_SERVICE_UNIT, hint=hint),
    ]
    return plan


def _launchd_install_plan(argv: Sequence[str]) -> list[Step]:
    plist, log = _paths.launchd_plist_path(), launchd_log_path()
    socket_path = _paths.service_socket_path(platform="darwin")
    data = units.render_launchd(argv, socket_path=socket_path, log_path=log)
    domain = _launchd_domain()
    hint = (
        "The plist is written; load it from your login session with "
        f"`launchctl bootstrap {domain} {shlex.quote(plist)}`."
    )
    plan: list[Step] = _missing_dirs(
        [
            (os.path.dirname(plist), 0o755),
            (os.path.dirname(socket_path), 0o700),
            (os.path.dirname(log), 0o700),
        ]
    )
    plan.append(WriteFile(plist, data))
    plan += _stop_unmanaged(socket_path, "darwin")
    plan += [
        Command(("launchctl", "bootout", f"{domain}/{units.LAUNCHD_LABEL}"), required=False),
        Command(("launchctl", "bootstrap", domain, plist), required=True, hint=hint),
    ]
    return plan


def _systemd_uninstall_plan() -> list[Step]:
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
    plan: list[Step] = [_systemctl("disable", "--now", *names, required=False)]
    plan += [RemoveFile(path) for path in installed]
    if os.path.islink(link):  # left behind when systemctl cannot reach the user manager
        plan.append(RemoveFile(link))
    plan.append(_systemctl("daemon-reload", hint=hint))
    return plan


def _launchd_uninstall_plan() -> list[Step]:
    plist = _paths.launchd_plist_path()
    if not os.path.lexists(plist):
        return []
    bootout = ("launchctl", "bootout", f"{_launchd_domain()}/{units.LAUNCHD_LABEL}")
    return [Command(bootout, required=False), RemoveFile(plist)]


def _missing_dirs(directories: Sequence[tuple[str, int]]) -> list[Step]:
    return [MakeDir(path, mode) for path, mode in directories if not os.path.isdir(path)]


def _stop_unmanaged(socket_path: str, platform: str) -> list[Step]:
    pid = serving_pid(socket_path)
    if pid is None or is_managed(pid, platform):
        return []
    return [StopDaemon(pid, socket_path, "systemd" if platform == "linux" else "launchd")]


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


# ---------------------------------------------------------------------------- running plans


class StepFailed(Exception):
    """Raised when a step cannot be carried out; the message says what to do next."""


def execute(plan: Sequence[Step], *, dry_run: bool) -> int:
    """Print (`dry_run`) or carry out each step in order; return 0, or 1 at the first failure."""
    for step in plan:
        if dry_run:
            print(describe(step))
            continue
        try:
            perform(step)
        except StepFailed as exc:
            print(exc, file=sys.stderr)
            return EXIT_FAILURE
    return EXIT_OK


def describe(step: Step) -> str:
    """Return what `step` would do, for `--dry-run` (a file's whole content included)."""
    match step:
        case MakeDir(path, mode):
            return f"would create {path} (mode {mode:04o})"
        case WriteFile(path, content):
            text = content.decode("utf-8", "replace")
            return f"would write {path}:\n{text.rstrip()}\n"
        case RemoveFile(path):
            return f"would remove {path}"
        case StopDaemon(pid, socket_path, manager):
            return f"would stop memd (pid {pid}), which serves {socket_path} outside {manager}"
        case Command(argv):
            return f"would run: {shlex.join(argv)}"


def perform(step: Step) -> None:
    """Carry out `step` and print what was done.

    Raises:
        StepFailed: the step failed; the message says what to do next.
    """
    match step:
        case MakeDir(path, mode):
            _guard(lambda: os.makedirs(path, mode=mode, exist_ok=True), f"create {path}")
            print(f"created {path}")
        case WriteFile(path, content):
            write_file(path, content)
            print(f"wrote {path}")
        case RemoveFile(path):
            if _guard(lambda: _unlink(path), f"remove {path}"):
                print(f"removed {path}")
        case StopDaemon(pid, socket_path, manager):
            stop_daemon(pid, socket_path)
            print(
                f"stopped memd (pid {pid}), which was serving {socket_path} outside {manager}, "
                "so the service can take that path over"
            )
        case Command(argv, required, hint):
            _perform_command(argv, required, hint)


def _guard(action: Callable[[], T], what: str) -> T:
    """Return `action()`, turning an OSError into `StepFailed` saying what could not be done."""
    try:
        return action()
    except OSError as exc:
        raise StepFailed(
            f"Could not {what}: {exc.strerror or exc}; fix that and run the command again."
        ) from None


def _unlink(path: str) -> bool:
    """Remove `path`; return False if it was already gone."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def _perform_command(argv: Sequence[str], required: bool, hint: str) -> None:
    shown = shlex.join(argv)
    result = run_command(argv)
    if result.returncode == 0:
        print(f"ran: {shown}")
        if result.output:
            print("    " + result.output.replace("\n", "\n    "))
        return
    failure = f"`{shown}` failed (exit {result.returncode}): {result.output or 'no output'}"
    if required:
        raise StepFailed(f"{failure.rstrip('.')}. {hint}".strip())
    print(f"ran: {shown} (failed, carrying on: {result.output or 'no output'})")


def write_file(path: str, content: bytes) -> None:
    """Replace `path` with `content` atomically and durably (memd's own storage writer: temp
    file, fsync, rename, fsync the directory; a new file gets mode 0644).

    Raises:
        StepFailed: the file system refused the write.
    """
    try:
        storage.write_atomic(path, content.decode("utf-8"))
    except StorageError as exc:
        raise StepFailed(exc.message) from None


# ---------------------------------------------------------------------------- the running daemon


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


def is_managed(pid: int, platform: str) -> bool:
    """Return whether memd `pid` was started by the service manager (so is not in the way).

    Linux: its cgroup is `memd.service`'s. macOS: `launchctl print` names it as the agent's pid.
    """
    if platform == "linux":
        try:
            with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            return False
        return any(line.rpartition("/")[2] == units.SYSTEMD_SERVICE_UNIT for line in lines if line)
    result = run_command(["launchctl", "print", f"{_launchd_domain()}/{units.LAUNCHD_LABEL}"])
    return result.returncode == 0 and any(
        line.strip() == f"pid = {pid}" for line in result.output.splitlines()
    )


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


# ---------------------------------------------------------------------------- status


def _print_installed(platform: str) -> bool:
    if platform == "linux":
        unit_dir = _paths.systemd_user_dir()
        names = (units.SYSTEMD_SOCKET_UNIT, units.SYSTEMD_SERVICE_UNIT)
        paths = [os.path.join(unit_dir, name) for name in names]
    else:
        paths = [_paths.launchd_plist_path()]
    present = [path for path in paths if os.path.exists(path)]
    for path in present:
        print(f"installed: {path}")
    missing = [path for path in paths if path not in present]
    if missing:
        print(f"not installed: {', '.join(missing)} (run `memd service install`)")
    return not missing


def _print_manager_state(platform: str) -> bool:
    if platform == "linux":
        return _print_systemd_state()
    return _print_launchd_state()


def _print_systemd_state() -> bool:
    """Print the units' state; return whether `memd.socket` is active."""
    queries = [
        ("is-enabled", units.SYSTEMD_SOCKET_UNIT),
        ("is-active", units.SYSTEMD_SOCKET_UNIT),
        ("is-active", units.SYSTEMD_SERVICE_UNIT),
    ]
    socket_active = False
    for verb, unit in queries:
        result = run_command(["systemctl", "--user", verb, unit])
        if _unavailable(result):
            print(f"systemctl unavailable: {result.output or f'exit {result.returncode}'}")
            return False
        answer = result.output.splitlines()[-1] if result.output else f"exit {result.returncode}"
        print(f"systemctl --user {verb} {unit}: {answer}")
        if verb == "is-active" and unit == units.SYSTEMD_SOCKET_UNIT:
            socket_active = result.returncode == 0
    return socket_active


def _unavailable(result: CommandResult) -> bool:
    return result.returncode in (NOT_FOUND, NOT_RUNNABLE, TIMED_OUT) or result.output.startswith(
        "Failed to"
    )


def _print_launchd_state() -> bool:
    """Print the agent's state; return whether launchd has it loaded."""
    target = f"{_launchd_domain()}/{units.LAUNCHD_LABEL}"
    result = run_command(["launchctl", "print", target])
    if result.returncode in (NOT_FOUND, NOT_RUNNABLE, TIMED_OUT):
        print(f"launchctl unavailable: {result.output}")
        return False
    if result.returncode != 0:
        print(f"launchd: {target} is not loaded")
        return False
    lines = [line.strip() for line in result.output.splitlines()]
    states = [line for line in lines if line.startswith("state =")]
    print(f"launchd: {target} is loaded" + (f" ({states[0]})" if states else ""))
    return True


def _print_daemon_state(platform: str) -> bool:
    path = _paths.service_socket_path(platform=platform)
    try:
        with Client(path, timeout=STATUS_TIMEOUT) as client:
            info = client.status()
    except DaemonUnavailable:
        print(f"no daemon answering on {path}")
        return False
    except MemdError as exc:
        print(f"no daemon answering on {path}: {exc}")
        return False
    started_by = (
        "the service" if is_managed(info.pid, platform) else "hand or a client, not the service"
    )
    print(
        f"memd {info.version} (protocol {info.protocol_version}) is answering on {path}, "
        f"pid {info.pid} (started by {started_by})"
    )
    return True
