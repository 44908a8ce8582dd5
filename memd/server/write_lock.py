"""The write lock an actor commits under, as the actor sees it: `WriteLock` (the workspace's,
memd's own writers and HackLM's `.memory/.lock`: see `workspace.Workspace.try_write`), and
`Unlocked` for a directory no other writer uses (and tests).

Rule: `try_write` runs blocking `work(check)` in a worker thread while holding the lock, or
returns BUSY without running it; `check` is called right before each rename.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

import anyio

from memd.core.format.limits import LOCK_TIMEOUT
from memd.fs.lock_file import Busy, LockCheck
from memd_client.errors import LockTimeout, RpcError

T = TypeVar("T")


class WriteLock(Protocol):
    """The write lock of the actor's directory (see `workspace.Workspace.try_write`)."""

    @property
    def lock_timeout(self) -> float:
        """How long a batch may wait for the lock, in seconds."""

    async def try_write(self, work: Callable[[LockCheck], T], *, deadline: float) -> T | Busy:
        """Run blocking `work(check)` in a worker thread under the lock; BUSY if it is held."""

    def lock_timeout_error(self) -> RpcError:
        """Return the error for a batch that waited `lock_timeout` seconds."""

    async def wait_turn(self) -> None:
        """Return once another writer seen waiting for the lock has had its turn (at once if
        none is): an actor calls it before it takes a batch, so stores queued meanwhile share
        the next commit."""


class Unlocked:
    """A `WriteLock` that locks nothing (a directory no other writer uses; tests): `check` runs
    right before each rename."""

    lock_timeout = LOCK_TIMEOUT

    def __init__(self, check: LockCheck | None = None) -> None:
        self._check = check or _lock_still_held

    async def try_write(self, work: Callable[[LockCheck], T], *, deadline: float) -> T | Busy:
        """Run `work(check)` in a worker thread."""
        return await anyio.to_thread.run_sync(work, self._check)

    def lock_timeout_error(self) -> RpcError:
        """Never used: nothing is ever held."""
        return LockTimeout("No lock is held here.")

    async def wait_turn(self) -> None:
        """Nobody else takes this lock: nobody to give way to."""


def _lock_still_held() -> None:
    """The check for writes that need no lock."""
