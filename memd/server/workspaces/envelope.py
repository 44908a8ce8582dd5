"""One queued command and its one-shot reply slot: the actor (or its reply watchdog) sets a value
or an error once; the sender waits for it.

Rule: a reply is set at most once; a command whose sender gave up (`abandoned`) is never applied
afterwards.
"""

from __future__ import annotations

from typing import Any

import anyio

from memd.core.writes import transitions
from memd_client.errors import RpcError


class Envelope:
    """A queued command and its one-shot reply slot: the actor (or the reply watchdog) sets a
    value or an error once, the sender waits for it."""

    __slots__ = ("_error", "_event", "_value", "abandoned", "command", "due")

    def __init__(self, command: transitions.Command, due: float) -> None:
        self.command = command
        self.due = due
        """When the sender stops waiting (anyio's clock): see `CategoryActor._watch_replies`."""
        self.abandoned = False
        """Set when the requester stopped waiting (cancelled at shutdown), or when the command
        was refused on its own (`refuse`): it is never applied later."""
        self._event = anyio.Event()
        self._value: Any = None
        self._error: RpcError | None = None

    def set(self, value: Any) -> None:
        """Reply with `value`, unless a reply was given already."""
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def fail(self, error: RpcError) -> None:
        """Reply with `error`, unless a reply was given already."""
        if not self._event.is_set():
            self._error = error
            self._event.set()

    def refuse(self, error: RpcError) -> None:
        """Reply with `error` and take the command out of its batch."""
        self.fail(error)
        self.abandoned = True

    async def wait(self) -> None:
        """Wait for the reply; the watchdog bounds the wait (no timer per command)."""
        await self._event.wait()

    def result(self) -> Any:
        """Return the value, or raise the error, that was set."""
        if self._error is not None:
            raise self._error
        return self._value
