"""The steps of an install or uninstall plan, and carrying them out (or printing them).

Rules:
- A plan is a list of steps (make a directory, write or remove a file, stop a daemon, run a
  command). `--dry-run` prints the plan and changes nothing; otherwise each step runs in order
  and is printed as it happens. The first failing required step ends the run with one message
  saying what to do next (exit code 1); nothing is undone.
- Files are written with memd's own durable writer (`storage.write_atomic`): a temp file in
  the same directory, fsync, rename, fsync the directory; a new file is mode 0644.
- Progress goes to stdout; errors, and optional steps that failed, to stderr.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from memd.fs import storage
from memd.service.commands import EXIT_FAILURE, EXIT_OK, StepFailed, run_command
from memd.service.daemon_process import serving_pid, stop_daemon
from memd_client import StorageError

T = TypeVar("T")


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


def missing_dirs(directories: Sequence[tuple[str, int]]) -> list[Step]:
    """Return a `MakeDir` step for each of `directories` (path, mode) that does not exist."""
    return [MakeDir(path, mode) for path, mode in directories if not os.path.isdir(path)]


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
    print(
        f"Warning: `{shown}` failed, carrying on: {result.output or 'no output'}", file=sys.stderr
    )


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


def stop_unmanaged(socket_path: str, manager: str, is_managed: Callable[[int], bool]) -> list[Step]:
    """Return the step stopping the memd serving `socket_path` outside `manager`, if one does.

    `is_managed(pid)` says whether the service manager started that daemon (then it stays).
    """
    pid = serving_pid(socket_path)
    if pid is None or is_managed(pid):
        return []
    return [StopDaemon(pid, socket_path, manager)]
