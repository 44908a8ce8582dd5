"""One client connection: read request frames, run the requests, write the replies.

Rules: each line is a request frame; requests on one connection run concurrently (up to
MAX_IN_FLIGHT, each request of a batch counted) and replies are written whole, one at a time. A
frame over the size limit gets a -32600 error and the connection is closed, and so does a frame
left unfinished for `frame_timeout` seconds. A connection that subscribed to workspaces also gets
notifications, written by its session's pump between replies. Quick reads first let the turns a
write needs go by (`_give_way`) while any request is waiting, so reads cannot starve writers.
The connection knows its daemon only as a `Host`.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from typing import Protocol

import anyio
from anyio.abc import SocketAttribute, SocketStream, TaskGroup
from anyio.lowlevel import checkpoint

from memd.config import Settings
from memd.server.rpc.dispatch import Dispatcher, error_frame
from memd.server.rpc.session import Session
from memd_client._framing import FrameTooLarge, LineDecoder
from memd_client.errors import InvalidRequest, ServerBusy

logger = logging.getLogger(__name__)

MAX_IN_FLIGHT = 64


class Host(Protocol):
    """What a connection needs of the daemon that accepted it."""

    settings: Settings
    requests_waiting: int

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """A scope that the daemon cancels when it stops reading new requests."""

    def shielded(self) -> contextlib.AbstractContextManager[anyio.CancelScope]:
        """A shielded scope that the daemon cancels at its shutdown deadline."""


class Connection:
    """One client connection: read frames, run requests, write replies."""

    def __init__(self, stream: SocketStream, dispatcher: Dispatcher, daemon: Host) -> None:
        self.stream = stream
        self.dispatcher = dispatcher
        self.daemon = daemon
        self.decoder = LineDecoder(max_frame=daemon.settings.max_frame_bytes)
        # Uncontended, these take no trip through the event loop (`fast_acquire`): a request
        # costs a few loop iterations in all, and each one is a measurable part of a query.
        self.send_lock = anyio.Lock(fast_acquire=True)
        self.slots = anyio.Semaphore(MAX_IN_FLIGHT, fast_acquire=True)
        self.session = Session()
        self.raw_socket: socket.socket = stream.extra(SocketAttribute.raw_socket)
        self.broken = False
        """Set when a reply was cut off halfway: nothing more may be sent."""

    async def serve(self) -> None:
        """Serve requests until the peer disconnects or the daemon stops reading; requests in
        flight still get their replies."""
        try:
            async with anyio.create_task_group() as notifications:
                notifications.start_soon(self.session.pump, self._send)
                async with anyio.create_task_group() as requests:
                    with self.daemon.reading():
                        await self._read_loop(requests)
                notifications.cancel_scope.cancel()
        finally:
            self.session.close()

    async def _read_loop(self, requests: TaskGroup) -> None:
        while True:
            # A frame begun must be finished within frame_timeout: a client that sends half a
            # request and stalls would otherwise hold its connection and buffer for ever.
            # Between frames a connection may stay idle (subscribers do).
            timeout = self.daemon.settings.frame_timeout if self.decoder.pending else None
            try:
                with anyio.fail_after(timeout):
                    data = await self.stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except TimeoutError:
                message = (
                    f"Invalid Request: a request stayed incomplete for {timeout:g} s (no "
                    "newline); the connection is closed. End each request with a newline."
                )
                await self._send(error_frame(InvalidRequest(message)))
                return
            try:
                frames = self.decoder.feed(data)
            except FrameTooLarge as exc:
                await self._send(error_frame(InvalidRequest(f"Invalid Request: {exc}")))
                return
            for frame in frames:
                if self.dispatcher.is_quick(frame):
                    # A read that never waits for a writer: answered right here, which saves
                    # starting a task (a good part of a query's cost). Shielded, so that a
                    # request read before shutdown is still answered (until SHUTDOWN_GRACE).
                    with self.daemon.shielded() as shield:
                        if self.daemon.requests_waiting:
                            await _give_way()
                        await self._answer_now(frame)
                    if shield.cancelled_caught:
                        return  # the stop gave up on this connection
                    continue
                weight = self.dispatcher.weight(frame)  # a batch takes a slot per request
                for _ in range(weight):
                    try:
                        self.slots.acquire_nowait()
                    except anyio.WouldBlock:
                        await self.slots.acquire()
                self.daemon.requests_waiting += 1
                requests.start_soon(self._answer, frame, weight)

    async def _answer(self, frame: bytes, weight: int) -> None:
        try:
            await self._answer_now(frame)
        finally:
            self.daemon.requests_waiting -= 1
            for _ in range(weight):
                self.slots.release()

    async def _answer_now(self, frame: bytes) -> None:
        reply = await self.dispatcher.handle_frame(frame, self.session)
        if reply is not None:
            await self._send(reply)

    async def _send(self, reply: bytes) -> None:
        """Send one reply frame; replies never interleave. Most replies fit the socket buffer
        and go out at once, without the trip through the event loop a stream send takes."""
        data = reply + b"\n"
        try:
            self.send_lock.acquire_nowait()
        except anyio.WouldBlock:
            await self.send_lock.acquire()
        try:
            if self.broken:
                return
            try:
                sent = self.raw_socket.send(data)
            except BlockingIOError:
                sent = 0
            except OSError:
                return  # the peer is gone; its read loop ends on its own
            if sent < len(data):
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    try:
                        await self.stream.send(data[sent:])
                    except BaseException:  # cancelled halfway: the stream is out of step
                        self.broken = True
                        raise
        finally:
            self.send_lock.release()


WRITE_TURNS = 4
"""The turns of the event loop a write takes beyond a read's one: its task starts, the actor
wakes, the worker thread returns, the writer wakes with the reply."""


async def _give_way() -> None:
    """Let WRITE_TURNS turns of the event loop go by (a quick read, while writes are waiting).

    A quick read is answered within the turn that reads it; a write needs WRITE_TURNS more. Under
    a saturating read load every turn is long, so without this a writer waited five times as long
    as a reader for each request (and got a fifth of the throughput). Giving way evens that out,
    and costs a few microseconds a read when the loop is not busy.
    """
    for _ in range(WRITE_TURNS):
        await checkpoint()


async def turn_away(stream: SocketStream, limit: int) -> None:
    """Tell a client over the connection limit why it is refused, then close (never blocks)."""
    logger.warning("refused a connection: %d clients are connected already", limit)
    frame = error_frame(
        ServerBusy(f"memd serves {limit} connections already; close idle ones or retry shortly.")
    )
    with contextlib.suppress(OSError):
        stream.extra(SocketAttribute.raw_socket).send(frame + b"\n")
    with anyio.CancelScope(shield=True):
        await stream.aclose()
