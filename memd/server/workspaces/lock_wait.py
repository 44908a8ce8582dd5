"""Waiting for HackLM's `.memory/.lock` on the event loop: the back-off between attempts, and an
async way to hold the lock around a body (`MemoryDirLock.held`), refreshed while it runs.

Rule: the lock file protocol itself is `memd.fs.lock_file` (blocking, no anyio); this module only
waits and sleeps, with every wait bounded by a deadline.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections.abc import AsyncIterator, Callable

import anyio

from memd.fs import lock_file

logger = logging.getLogger(__name__)


class Backoff:
    """The pauses between attempts to take a lock someone else holds: jittered, growing from
    FIRST_DELAY by DELAY_GROWTH up to MAX_DELAY (`memd.fs.lock_file`), until `deadline`
    (anyio's clock)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._delay = lock_file.FIRST_DELAY

    async def pause(self, timeout_error: Callable[[], Exception]) -> None:
        """Sleep before the next attempt.

        Raises:
            Exception: `timeout_error()`, once the deadline has passed.
        """
        remaining = self.deadline - anyio.current_time()
        if remaining <= 0:
            raise timeout_error()
        await anyio.sleep(min(remaining, self._delay * random.uniform(0.8, 1.2)))
        self._delay = min(self._delay * lock_file.DELAY_GROWTH, lock_file.MAX_DELAY)


class MemoryDirLock(lock_file.MemoryDirLock):
    """The lock file protocol, plus waiting for the lock and holding it around an async body."""

    async def acquire(self, *, deadline: float | None = None) -> None:
        """Take the lock, waiting with jittered back-off while another process holds it.

        `deadline` (anyio's clock) defaults to `timeout` seconds from now; it is tried at least
        once even if it has passed.

        Raises:
            LockTimeout: a holder kept the lock until the deadline.
            FileFormatError, StorageError: as `try_acquire`.
        """
        if deadline is None:
            deadline = anyio.current_time() + self.timeout
        backoff = Backoff(deadline)
        self.forget_wait()
        while True:
            # Not abandoned on cancellation: a lock taken here is always returned to the caller,
            # and the cancellation arrives at its next checkpoint.
            if await anyio.to_thread.run_sync(self.try_acquire):
                return
            await backoff.pause(self.timeout_error)

    @contextlib.asynccontextmanager
    async def held(self, *, deadline: float | None = None) -> AsyncIterator[None]:
        """Hold the lock while the body runs, refreshing its `ts` every `REFRESH_INTERVAL`
        seconds; release it however the body ends (return, exception or cancellation).

        Raises:
            LockTimeout, FileFormatError, StorageError: as `acquire` (with `deadline`).
        """
        await self.acquire(deadline=deadline)
        try:
            failure: BaseException | None = None
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._keep_fresh)
                try:
                    yield
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # re-raised below, so the task group won't wrap it
                    failure = exc
                finally:
                    tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.release)

    async def _keep_fresh(self) -> None:
        for _ in range(int(lock_file.MAX_HOLD / lock_file.REFRESH_INTERVAL)):
            await anyio.sleep(lock_file.REFRESH_INTERVAL)
            await anyio.to_thread.run_sync(self.refresh)
        logger.error(
            "%s has been held for over %g s; no longer refreshing it, so others may break it",
            self.path,
            lock_file.MAX_HOLD,
        )
