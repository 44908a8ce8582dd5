"""The absolute shutdown deadline: once a stop begins, the process is gone within a fixed time,
whatever is stuck.

A graceful stop runs in the event loop, and some things never yield to it: a worker thread
blocked in a file operation (the interpreter waits for it at exit), or a loop kept busy by one
request. So a watchdog thread, started with the daemon and idle until armed, enforces the limit.

Rules:
- `arm()` starts the clock; only the first call counts. It takes no lock the thread that
  calls it might hold already, so a signal handler may call it (even one nested in another).
- At the deadline, if the process is still there, the watchdog logs one line saying what it
  abandons (`describe()`), flushes the log handlers and ends the process with `os._exit`
  (exit code EXIT_ABANDONED): no cleanup that could block again runs.
- `close()` stops the watchdog without firing (for a daemon run inside another program).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

EXIT_ABANDONED = 1
"""The exit code of a stop that had to abandon work at the deadline."""
WATCHDOG_NAME = "memd exit deadline"


class ExitDeadline:
    """A watchdog that ends the process `seconds` after `arm()`, unless it is gone by then."""

    def __init__(
        self,
        seconds: float,
        describe: Callable[[], str],
        *,
        exit_process: Callable[[int], object] = os._exit,
    ) -> None:
        self.seconds = seconds
        self._describe = describe
        self._exit = exit_process
        self._armed_at: float | None = None
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=WATCHDOG_NAME, daemon=True)
        self._thread.start()

    @property
    def armed(self) -> bool:
        """Whether the clock is running."""
        return self._armed_at is not None

    def arm(self) -> None:
        """Start the clock (only the first call counts)."""
        if self._armed_at is not None:
            return  # checked first: a nested signal handler must not take the Event's lock
        self._armed_at = time.monotonic()
        self._wake.set()

    def close(self) -> None:
        """Stop the watchdog without ending the process."""
        self._closed.set()
        self._wake.set()
        self._thread.join()

    def _watch(self) -> None:
        self._wake.wait()
        armed_at = self._armed_at
        if armed_at is None:
            return  # closed before it was armed
        if self._closed.wait(max(0.0, armed_at + self.seconds - time.monotonic())):
            return
        with contextlib.suppress(Exception):
            logger.error(
                "shutdown deadline of %g s passed; exiting now and abandoning %s",
                self.seconds,
                self._describe(),
            )
            for handler in logging.getLogger().handlers:
                handler.flush()
        self._exit(EXIT_ABANDONED)


def busy_threads() -> list[str]:
    """Return the names of the threads alive besides the main thread and the watchdog (worker
    threads still busy, or idle ones not yet retired)."""
    return [
        thread.name
        for thread in threading.enumerate()
        if thread is not threading.main_thread() and thread.name != WATCHDOG_NAME
    ]
