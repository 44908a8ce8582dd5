"""Waiting, from a test's thread, for a condition that no event announces (a daemon's files)."""

from __future__ import annotations

import time
from collections.abc import Callable

DEADLINE = 20.0


def wait_until(check: Callable[[], object], *, deadline: float = DEADLINE) -> None:
    """Poll `check` every 5 ms until it is true; fail after `deadline` seconds."""
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"not true within {deadline:g} s: {check}")
        time.sleep(0.005)
