"""The absolute shutdown deadline: once armed, the process ends at the deadline whatever is
stuck, saying what it abandoned; never before it is armed, and never after `close()`."""

from __future__ import annotations

import logging
import threading

import pytest

from memd.server.daemon.exit_deadline import (
    EXIT_ABANDONED,
    WATCHDOG_NAME,
    ExitDeadline,
    busy_threads,
)

WAIT = 10.0


class Exits:
    """Records the exit code the watchdog asked for, instead of ending the test run."""

    def __init__(self) -> None:
        self.codes: list[int] = []
        self.called = threading.Event()

    def __call__(self, code: int) -> None:
        self.codes.append(code)
        self.called.set()


def test_an_armed_deadline_ends_the_process_and_says_what_it_abandons(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exits = Exits()
    deadline = ExitDeadline(0.05, lambda: "1 open connection(s)", exit_process=exits)
    with caplog.at_level(logging.ERROR):
        deadline.arm()
        assert exits.called.wait(WAIT)
        deadline.close()
    assert exits.codes == [EXIT_ABANDONED]
    assert "abandoning 1 open connection(s)" in caplog.text


def test_only_the_first_arm_counts() -> None:
    deadline = ExitDeadline(60, str, exit_process=Exits())
    deadline.arm()
    first = deadline._armed_at
    deadline.arm()
    assert deadline._armed_at == first
    deadline.close()


def test_an_unarmed_or_closed_deadline_never_ends_the_process() -> None:
    exits = Exits()
    ExitDeadline(0.01, str, exit_process=exits).close()
    armed = ExitDeadline(60, str, exit_process=exits)
    armed.arm()
    armed.close()
    assert not exits.called.is_set()


def test_the_watchdog_is_not_counted_among_busy_threads() -> None:
    deadline = ExitDeadline(60, str, exit_process=Exits())
    assert WATCHDOG_NAME in [thread.name for thread in threading.enumerate()]
    assert WATCHDOG_NAME not in busy_threads()
    deadline.close()
