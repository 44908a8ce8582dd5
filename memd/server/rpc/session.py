"""`Session`: one client connection's subscriptions and its outbox of notifications.

Rules:
- Publishing never waits: `offer` puts a notification frame in an outbox bounded in frames
  (OUTBOX_SIZE) and in bytes (OUTBOX_BYTES) and returns, so a subscriber that reads slowly can
  never slow a writer down, nor make the daemon hold more than that for it. One notification
  larger than OUTBOX_BYTES alone is still queued when the outbox is empty.
- When a notification would take the outbox past either bound, everything it holds is dropped
  with it (every `changed` carries a whole category, so a subscriber that must re-read gains
  nothing from the older ones), and so is every later one for those workspaces until `pump`
  gets to them: then one `resync` notification per workspace tells the subscriber how many it
  missed, so it can re-read with `list`. Nothing is dropped silently.
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
"""The most notifications a connection's outbox holds."""
OUTBOX_BYTES = 8 * 1024 * 1024
"""The most bytes of notifications a connection's outbox holds (8 MiB): about one whole
category at `max_file_bytes`' default, or thousands of small ones."""

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

    def __init__(self, capacity: int = OUTBOX_SIZE, capacity_bytes: int = OUTBOX_BYTES) -> None:
        self.capacity = capacity
        self.capacity_bytes = capacity_bytes
        self.feeds: dict[str, Feed] = {}
        self._outbox: collections.deque[tuple[str, bytes]] = collections.deque()
        self.queued_bytes = 0
        """The bytes of the frames in the outbox."""
        self._dropped: dict[str, int] = {}
        self._wakeup = anyio.Event()

    def offer(self, root: str, frame: bytes) -> None:
        """Queue a notification frame for workspace `root` without ever waiting."""
        if root in self._dropped:
            self._dropped[root] += 1
        elif self._outbox and (
            len(self._outbox) >= self.capacity
            or self.queued_bytes + len(frame) > self.capacity_bytes
        ):
            for queued_root, _ in self._outbox:
                self._dropped[queued_root] = self._dropped.get(queued_root, 0) + 1
            self._outbox.clear()
            self.queued_bytes = 0
            self._dropped[root] = self._dropped.get(root, 0) + 1
        else:
            self._outbox.append((root, frame))
            self.queued_bytes += len(frame)
        self._wakeup.set()

    async def pump(self, send: Callable[[bytes], Awaitable[None]]) -> None:
        """Send queued notifications in order, then a `resync` for each workspace that
        overflowed; runs until cancelled."""
        while True:
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
            while self._outbox:
                _, frame = self._outbox.popleft()
                self.queued_bytes -= len(frame)
                await send(frame)
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
