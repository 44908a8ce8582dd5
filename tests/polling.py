"""Waiting for a condition that no event announces (a registry's state, a kernel's, a file's)."""

from __future__ import annotations

from collections.abc import Callable

import anyio

DEADLINE = 20.0


async def until(check: Callable[..., object], *, deadline: float = DEADLINE) -> None:
    """Poll `check` every 5 ms until it is true; fail after `deadline` seconds."""
    with anyio.fail_after(deadline):
        while not check():  # noqa: ASYNC110  # nothing to wait on but the condition itself
            await anyio.sleep(0.005)
