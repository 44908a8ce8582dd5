"""`Session`: one client connection's subscriptions and its outbox of notifications.

Rules:
- Publishing never waits: `offer` puts a notification frame in a bounded outbox (OUTBOX_SIZE)
  and returns, so a subscriber that reads slowly can never slow a writer down.
- When the outbox is full, the notification is dropped, and so is every later one for the same
  workspace until the outbox has drained; then one `resync` notification tells the subscriber
  how many it missed, so it can re-read with `list`. Nothing is dropped silently.
- `pump` (run in the connection's task group) sends the outbox in order; `close` unsubscribes
  the session from every workspace it watched.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio
import msgspec

from memd_client import protocol as p

OUTBOX_SIZE = 256

_encoder = msgspec.json.Encoder()


class Feed(Protocol):
    """What a session subscribes to: a workspace's change feed."""

    root: str

    def unsubscribe(self, session: Session) -> object: ...


def notification_frame(method: str, params: msgspec.Struct) -> bytes:
    """Return the encoded JSON-RPC notification (without the newline)."""
    return _encoder.encode(p.Notification(method=method, params=params))


class Session:
    """The per-connection state that outlives a single request."""

    def __init__(self, capacity: int = OUTBOX_SIZE) -> None:
        self.capacity = capacity
        self.feeds: dict[str, Feed] = {}
        self._outbox: collections.deque[bytes] = collections.deque()
        self._dropped: dict[str, int] = {}
        self._wakeup = anyio.Event()

    def offer(self, root: str, frame: bytes) -> None:
        """Queue a notification frame for workspace `root` without ever waiting."""
        if root in self._dropped:
            self._dropped[root] += 1
        elif len(self._outbox) >= self.capacity:
            self._dropped[root] = 1
        else:
            self._outbox.append(frame)
        self._wakeup.set()

    async def pump(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        """Send queued notifications in order, then a `resync` for each workspace that
        overflowed; runs until cancelled."""
        while True:
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
            while self._outbox:
                await send(self._outbox.popleft())
            dropped, self._dropped = self._dropped, {}
            for root, count in dropped.items():
                message = (
                    f"{count} change notification(s) for {root} were dropped because this "
                    "connection read them too slowly; call `list` to catch up."
                )
                await send(
                    notification_frame(
                        "resync", p.Resync(workspace=root, dropped=count, message=message)
                    )
                )

    def close(self) -> None:
        """Unsubscribe from every workspace."""
        for feed in list(self.feeds.values()):
            feed.unsubscribe(self)
        self.feeds.clear()
