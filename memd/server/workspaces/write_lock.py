"""The write lock an actor commits under, as the actor sees it: `WriteLock` (the workspace's,
memd's own writers and HackLM's `.memory/.lock`: see `workspace.Workspace.try_write`), and
`Unlocked` for a directory no other writer uses (and tests).

Rule: `try_write` runs blocking `work(check)` in a worker thread while holding the lock, or
returns BUSY without running it; `check` is called right before each rename. A `Staging`'s
`before` runs in the same worker-thread call before the lock is tried, and its `after` once
the lock is released, however the attempt ended: the slow part of a write (the temp file and its
fsync, the directory's fsync) is kept out of the hold.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Protocol, TypeVar

import anyio

from memd.core.format.limits import LOCK_TIMEOUT
from memd.fs.lock_file import Busy, LockCheck
from memd_client.errors import LockTimeout, RpcError

T = TypeVar("T")


class Staging(Protocol):
    """What a write does around its hold of the lock (blocking, in the worker thread)."""

    def before(self) -> None:
        """Run before the lock is tried (write and fsync the new file at a temp name)."""

    def after(self) -> None:
        """Run once the lock is released, however the attempt ended (make the rename durable,
        or remove the temp file); may raise if a write it finishes failed."""


class WriteLock(Protocol):
    """The write lock of the actor's directory (see `workspace.Workspace.try_write`)."""

    @property
    def lock_timeout(self) -> float:
        """How long a batch may wait for the lock, in seconds."""

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        """Run blocking `work(check)` in a worker thread under the lock, `staging` around it;
        BUSY if it is held."""

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

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        """Run `work(check)` in a worker thread, `staging` around it."""
        return await anyio.to_thread.run_sync(staged_run, staging, work, self._check)

    def lock_timeout_error(self) -> RpcError:
        """Never used: nothing is ever held."""
        return LockTimeout("No lock is held here.")

    async def wait_turn(self) -> None:
        """Nobody else takes this lock: nobody to give way to."""


def _lock_still_held() -> None:
    """The check for writes that need no lock."""


def staged_run(staging: Staging | None, hold: Callable[..., T], *args: object) -> T:
    """Run `hold(*args)` (blocking) with `staging`'s `before` first and its `after` last, also
    when `hold` raises (then an error of `after`'s own is dropped for `hold`'s)."""
    if staging is None:
        return hold(*args)
    staging.before()
    try:
        done = hold(*args)
    except BaseException:
        with contextlib.suppress(Exception):
            staging.after()
        raise
    staging.after()
    return done
