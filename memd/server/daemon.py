"""The daemon: startup order, the accept loop, connections and graceful shutdown.

Startup: take the single-instance lock, bind the socket (0600 in a 0700 directory), report
ready (log line and sd_notify READY=1), accept connections.

Shutdown (SIGINT, SIGTERM or `Daemon.stop()`): stop accepting and remove the socket file, stop
reading new requests, let requests in flight finish and reply (up to SHUTDOWN_GRACE seconds),
then close every mailbox so the actors finish their queued writes, release the lock and return.

Connections: each line is a request frame; requests on one connection run concurrently (up to
MAX_IN_FLIGHT) and replies are written whole, one at a time. A frame over the size limit gets a
-32600 error and the connection is closed. Peers running as another user are refused. A
connection that subscribed to workspaces also gets notifications, written by its session's
pump between replies; closing the connection ends its subscriptions.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import socket
import struct
import time
from collections.abc import Iterator

import anyio
import msgspec
from anyio.abc import SocketAttribute, SocketListener, SocketStream, TaskGroup, TaskStatus

from memd import __version__
from memd.server.dispatch import Dispatcher, error_frame
from memd.server.hacklm_lock import DEFAULT_TIMEOUT as LOCK_TIMEOUT
from memd.server.handlers import Methods
from memd.server.instance import InstanceLock
from memd.server.notify import notify
from memd.server.session import Session
from memd.server.workspace import Registry
from memd_client._framing import DEFAULT_MAX_FRAME, FrameTooLarge, LineDecoder
from memd_client.errors import InvalidRequest

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE = 10.0
MAX_IN_FLIGHT = 64
_OVERLOAD_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class Config(msgspec.Struct, frozen=True, kw_only=True):
    """How a daemon runs."""

    socket_path: str
    max_frame: int = DEFAULT_MAX_FRAME
    lock_timeout: float = LOCK_TIMEOUT
    handle_signals: bool = True


class Daemon:
    """One memd daemon serving one socket."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._accept_scope = anyio.CancelScope()
        self._read_scopes: set[anyio.CancelScope] = set()
        self._open_connections = 0
        self._all_closed = anyio.Event()
        self._stopping = False

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Scope a connection's reading; shutdown cancels it (at once if already stopping)."""
        scope = anyio.CancelScope()
        self._read_scopes.add(scope)
        try:
            with scope:
                if self._stopping:
                    scope.cancel()
                yield
        finally:
            self._read_scopes.discard(scope)

    def stop(self) -> None:
        """Begin a graceful shutdown."""
        if not self._stopping:
            logger.info("shutting down")
            notify("STOPPING=1")
        self._stopping = True
        self._accept_scope.cancel()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until stopped (see the module docstring for the order of events).

        Raises:
            AlreadyRunning: another daemon serves the socket.
            SocketPathError: the socket path is unusable.
        """
        instance = InstanceLock(self.config.socket_path)
        await anyio.to_thread.run_sync(instance.acquire)
        try:
            listener = await anyio.create_unix_listener(self.config.socket_path, mode=0o600)
            await self._serve(listener, task_status)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self.config.socket_path)
            instance.release()
        logger.info("stopped")

    async def _serve(self, listener: SocketListener, task_status: TaskStatus[None]) -> None:
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time, lock_timeout=self.config.lock_timeout)
            methods = Methods(
                registry, started=anyio.current_time(), socket_path=self.config.socket_path
            )
            dispatcher = Dispatcher(methods.table)
            try:
                async with anyio.create_task_group() as connections:
                    if self.config.handle_signals:
                        await connections.start(self._watch_signals)
                    logger.info(
                        "memd %s serving on %s (pid %d)",
                        __version__,
                        self.config.socket_path,
                        os.getpid(),
                    )
                    task_status.started()
                    notify(f"READY=1\nSTATUS=serving on {self.config.socket_path}")
                    with self._accept_scope:
                        await self._accept_loop(listener, connections, dispatcher)
                    self._stopping = True
                    with anyio.CancelScope(shield=True):
                        await listener.aclose()
                    with contextlib.suppress(OSError):
                        os.unlink(self.config.socket_path)
                    await self._drain_connections()
                    connections.cancel_scope.cancel()
            finally:
                registry.close()

    async def _watch_signals(
        self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            task_status.started()
            async for signum in signals:
                logger.info("received %s", signal.Signals(signum).name)
                self.stop()

    async def _accept_loop(
        self, listener: SocketListener, connections: TaskGroup, dispatcher: Dispatcher
    ) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if exc.errno not in _OVERLOAD_ERRNOS:
                    raise
                logger.warning("accept failed (%s); retrying shortly", exc)
                await anyio.sleep(0.1)
                continue
            self._open_connections += 1
            connections.start_soon(self._connection, stream, dispatcher)

    async def _drain_connections(self) -> None:
        for scope in self._read_scopes:
            scope.cancel()
        if self._open_connections:
            with anyio.move_on_after(SHUTDOWN_GRACE):
                await self._all_closed.wait()

    async def _connection(self, stream: SocketStream, dispatcher: Dispatcher) -> None:
        try:
            if _peer_uid(stream) not in (None, os.geteuid()):
                logger.warning("refused a connection from another user")
                return
            await Connection(stream, dispatcher, self).serve()
        except Exception:
            logger.exception("connection handler failed")
        finally:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            self._open_connections -= 1
            if self._open_connections == 0 and self._stopping:
                self._all_closed.set()


class Connection:
    """One client connection: read frames, run requests, write replies."""

    def __init__(self, stream: SocketStream, dispatcher: Dispatcher, daemon: Daemon) -> None:
        self.stream = stream
        self.dispatcher = dispatcher
        self.daemon = daemon
        self.decoder = LineDecoder(max_frame=daemon.config.max_frame)
        self.send_lock = anyio.Lock()
        self.slots = anyio.Semaphore(MAX_IN_FLIGHT)
        self.session = Session()

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
            try:
                data = await self.stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            try:
                frames = self.decoder.feed(data)
            except FrameTooLarge as exc:
                await self._send(error_frame(InvalidRequest(f"Invalid Request: {exc}")))
                return
            for frame in frames:
                await self.slots.acquire()
                requests.start_soon(self._answer, frame)

    async def _answer(self, frame: bytes) -> None:
        try:
            reply = await self.dispatcher.handle_frame(frame, self.session)
            if reply is not None:
                await self._send(reply)
        finally:
            self.slots.release()

    async def _send(self, reply: bytes) -> None:
        async with self.send_lock:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self.stream.send(reply + b"\n")


def _peer_uid(stream: SocketStream) -> int | None:
    """Return the connecting process's uid (Linux), or None where the OS cannot tell."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = stream.extra(SocketAttribute.raw_socket)
    size = struct.calcsize("3i")
    _pid, uid, _gid = struct.unpack("3i", raw.getsockopt(socket.SOL_SOCKET, option, size))
    return int(uid)


async def serve(
    config: Config, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Run a daemon with `config` until it is stopped by a signal."""
    await Daemon(config).run(task_status=task_status)
