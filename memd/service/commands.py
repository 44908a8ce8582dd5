"""Running `systemctl` / `launchctl` and reporting a failed step, for `memd service`.

Rules:
- Every external command goes through `run_command`: no input, output captured (stdout and
  stderr merged), bounded by a timeout; it never raises OSError.
- A step that cannot be carried out raises `StepFailed`, whose message says what to do next.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import NamedTuple

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_RUNNING = 0, 1, 2, 3
COMMAND_TIMEOUT = 30.0
"""Seconds any `systemctl` / `launchctl` call may take."""
NOT_FOUND, NOT_RUNNABLE, TIMED_OUT = 127, 126, 124
"""`run_command` return codes for a command that did not run or finish (shell conventions)."""


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


class StepFailed(Exception):
    """Raised when a step cannot be carried out; the message says what to do next."""
