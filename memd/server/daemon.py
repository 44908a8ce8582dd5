"""The daemon: startup order, the accept loop, connections, reloads and graceful shutdown.

Startup: find the listening socket (one inherited from systemd or launchd, else bind our own:
0600 in a 0700 directory), take the single-instance lock, report ready (log line, and
`READY=1` plus a `STATUS=` line to the service manager), accept connections.

Shutdown (SIGINT, SIGTERM, `Daemon.stop()`, or `idle_exit` seconds with no client when
socket-activated): stop accepting (remove the socket file only if memd bound it itself), stop
reading new requests, let requests in flight finish and reply, close every mailbox, release the
lock and return, all within SHUTDOWN_GRACE seconds (well inside systemd's TimeoutStopSec). At
that deadline, requests still waiting (say, for another tool's `.memory/.lock`, or to send a
reply nobody reads) are cancelled, and logged: their connections close without a reply, and
their commands are never applied afterwards (an abandoned command is dropped from its batch),
so a client that retries does not write twice. SHUTDOWN_DEADLINE seconds after the stop began
the process is gone whatever is stuck (a worker thread blocked in a file operation, a loop
kept busy): `ExitDeadline`, armed by `stop()` and, even while the loop is busy, by the signal
itself, logs what it abandons and ends the process (exit 1).
"No client" also means "no queued write": a connection stays open until its requests are
answered, and a write is answered only once it is durable.

SIGHUP reloads the settings (`Config.reload`): every one applies to what comes next (requests,
connections, loads and writes); a bad file is logged and the running settings are kept.

Connections: each line is a request frame; requests on one connection run concurrently (up to
MAX_IN_FLIGHT, each request of a batch counted, so a batch holds at most that many) and replies
are written whole, one at a time. A frame over the size limit gets a
-32600 error and the connection is closed, and so does a frame left unfinished for
`frame_timeout` seconds. A peer running as another user (root too, unless `allow_root`) gets a
-32600 error and is closed, and so does one connection over `max_connections` (with -32001).
A connection that subscribed to workspaces also gets notifications, written by its session's
pump between replies; closing the connection ends its subscriptions.

Fairness: quick reads (`Methods.quick`) are answered in the turn of the event loop that reads
them; other requests run in tasks. While any of those is waiting, a quick read first lets the
turns a write needs go by (`_give_way`), so a flood of reads cannot starve writers.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import logging
import os
import resource
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import anyio
import msgspec
from anyio.abc import SocketAttribute, SocketListener, SocketStream, TaskGroup, TaskStatus
from anyio.lowlevel import checkpoint

from memd import __version__
from memd.config import ConfigError, Settings
from memd.server import activation
from memd.server.dispatch import Dispatcher, error_frame
from memd.server.exit_deadline import ExitDeadline, busy_threads
from memd.server.handlers import Methods
from memd.server.instance import InstanceLock
from memd.server.notify import notify
from memd.server.session import Session
from memd.server.workspace import Limits, Registry
from memd_client._framing import FrameTooLarge, LineDecoder
from memd_client.errors import InvalidRequest, ServerBusy

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE = 10.0
"""Seconds a stop waits for requests in flight before it cancels them."""
SHUTDOWN_DEADLINE = 12.0
"""Seconds from the start of a stop to the end of the process, whatever is stuck."""
MAX_IN_FLIGHT = 64
STATUS_INTERVAL = 10.0
_OVERLOAD_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


@dataclass(frozen=True, kw_only=True)
class Config:
    """How a daemon runs: where it listens (unless a service manager passes a socket), its
    settings, and how to read them again on SIGHUP (None: SIGHUP only logs)."""

    socket_path: str
    settings: Settings = field(default_factory=Settings)
    handle_signals: bool = True
    reload: Callable[[], Settings] | None = None
    on_ready: Callable[[str], object] | None = None
    idle_exit_from_flag: bool = False
    """True when `--idle-exit` was given: then it is an error without socket activation (from
    the config file it is only ignored, with a warning, as on reload)."""


class Daemon:
    """One memd daemon serving one socket."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.settings = config.settings
        self.socket_path = config.socket_path
        self._accept_scope = anyio.CancelScope()
        self._read_scopes: set[anyio.CancelScope] = set()
        self._open_connections = 0
        self.requests_waiting = 0
        """Requests answered in a task (writes, mostly) and not answered yet: while there are
        any, quick reads give way to them (`_give_way`)."""
        self._all_closed = anyio.Event()
        self._activity = anyio.Event()
        self._stopping = False
        self._registry: Registry | None = None
        self._activated = False
        self._shields: set[anyio.CancelScope] = set()
        self._grace_over = False
        self.exit_deadline: ExitDeadline | None = None
        """Set when this daemon owns its process (`serve`): a stop then arms it."""

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

    @contextlib.contextmanager
    def shielded(self) -> Iterator[anyio.CancelScope]:
        """Shield a request already read from the stop, so it is still answered; shutdown
        cancels it all the same once SHUTDOWN_GRACE has passed."""
        scope = anyio.CancelScope(shield=True)
        if self._grace_over:
            scope.cancel()
        self._shields.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._shields.discard(scope)

    def stop(self, reason: str = "shutting down") -> None:
        """Begin a graceful shutdown."""
        if not self._stopping:
            logger.info("%s", reason)
            notify(f"STOPPING=1\nSTATUS={reason}")
        self._stopping = True
        if self.exit_deadline is not None:
            self.exit_deadline.arm()
        self._accept_scope.cancel()

    def unfinished(self) -> str:
        """Say what a stop would abandon now (read from the exit deadline's thread too)."""
        threads = busy_threads()
        return (
            f"{self._open_connections} open connection(s), {self.requests_waiting} request(s) "
            f"unanswered and {len(threads)} other thread(s) ({', '.join(sorted(threads))})"
        )

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until stopped (see the module docstring for the order of events).

        Raises:
            AlreadyRunning: another daemon serves the socket.
            SocketPathError: the socket path is unusable.
            ActivationError: a service manager passed a socket memd cannot serve on.
            ConfigError: `--idle-exit` was given but no service manager passed a socket.
        """
        inherited = activation.inherited_socket()
        if inherited is not None:
            self.socket_path = inherited.path
            self._activated = True
        elif self.settings.idle_exit is not None:
            if self.config.idle_exit_from_flag:
                raise ConfigError(_IDLE_EXIT_NEEDS_ACTIVATION)
            logger.warning("idle_exit ignored: %s", _IDLE_EXIT_NEEDS_ACTIVATION)
            self.settings = msgspec.structs.replace(self.settings, idle_exit=None)
        instance = InstanceLock(self.socket_path)
        try:
            await anyio.to_thread.run_sync(instance.acquire, inherited is None)
        except BaseException:
            if inherited is not None:
                inherited.sock.close()
            raise
        try:
            if inherited is not None:
                listener: SocketListener = await SocketListener.from_socket(inherited.sock)
            else:
                listener = await anyio.create_unix_listener(self.socket_path, mode=0o600)
            await self._serve(listener, task_status, activated=inherited is not None)
        finally:
            if inherited is None:
                with contextlib.suppress(OSError):
                    os.unlink(self.socket_path)
            instance.release()
        logger.info("stopped")

    async def _serve(
        self, listener: SocketListener, task_status: TaskStatus[None], *, activated: bool
    ) -> None:
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time, limits=_limits(self.settings))
            self._registry = registry
            methods = Methods(registry, started=anyio.current_time(), socket_path=self.socket_path)
            dispatcher = Dispatcher(methods.table, quick=methods.quick, max_batch=MAX_IN_FLIGHT)
            try:
                async with anyio.create_task_group() as connections:
                    if self.config.handle_signals:
                        await connections.start(self._watch_signals)
                    if activated:
                        connections.start_soon(self._exit_when_idle)
                    if os.environ.get("NOTIFY_SOCKET"):
                        connections.start_soon(self._report_status)
                    logger.info(
                        "memd %s serving on %s (%s)",
                        __version__,
                        self.socket_path,
                        "socket-activated" if activated else "own socket",
                    )
                    task_status.started()
                    notify(f"READY=1\nSTATUS={self._status_line()}")
                    if self.config.on_ready is not None:
                        self.config.on_ready(self.socket_path)
                    with self._accept_scope:
                        await self._accept_loop(listener, connections, dispatcher)
                    self._stopping = True
                    deadline = anyio.current_time() + SHUTDOWN_GRACE
                    services.cancel_scope.deadline = deadline
                    with anyio.CancelScope(shield=True):
                        await listener.aclose()
                    if not activated:
                        with contextlib.suppress(OSError):
                            os.unlink(self.socket_path)
                    if not await self._drain_connections(deadline):
                        logger.warning(
                            "stopping after %g s: giving up on %s",
                            SHUTDOWN_GRACE,
                            self.unfinished(),
                        )
                    self._grace_over = True
                    for scope in list(self._shields):
                        scope.cancel()
                    connections.cancel_scope.cancel()
            finally:
                registry.close()

    def _status_line(self) -> str:
        workspaces = len(self._registry.roots) if self._registry is not None else 0
        clients = self._open_connections
        return (
            f"serving on {self.socket_path}: {clients} client{'s' * (clients != 1)}, "
            f"{workspaces} workspace{'s' * (workspaces != 1)}"
        )

    async def _report_status(self) -> None:
        """Keep the service manager's STATUS= line current (checked every STATUS_INTERVAL s)."""
        last = ""
        while True:
            line = self._status_line()
            if line != last:
                notify(f"STATUS={line}")
                last = line
            await anyio.sleep(STATUS_INTERVAL)

    async def _exit_when_idle(self) -> None:
        """Stop once `idle_exit` seconds pass with no connection (socket-activated only)."""
        while True:
            activity = self._activity
            timeout = self.settings.idle_exit
            if timeout is None or self._open_connections:
                await activity.wait()
                continue
            with anyio.move_on_after(timeout):
                await activity.wait()
            if self._activity is activity and self._open_connections == 0:
                self.stop(
                    f"no clients for {timeout:g} s; exiting until the next connection starts memd"
                )
                return

    def _note_activity(self) -> None:
        """Wake the idle timer: a connection opened or closed, or the settings changed."""
        self._activity.set()
        self._activity = anyio.Event()

    async def _watch_signals(
        self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            if self.exit_deadline is not None:
                _arm_on_signals(self.exit_deadline, (signal.SIGINT, signal.SIGTERM))
            task_status.started()
            async for signum in signals:
                logger.info("received %s", signal.Signals(signum).name)
                if signum == signal.SIGHUP:
                    await self.reload()
                else:
                    self.stop()

    async def reload(self) -> None:
        """Read the settings again and apply them; keep the running ones if they are bad."""
        if self.config.reload is None:
            logger.info("no configuration to reload")
            return
        notify(f"RELOADING=1\nMONOTONIC_USEC={time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000}")
        try:
            settings = await anyio.to_thread.run_sync(self.config.reload)
        except ConfigError as exc:
            logger.error("reload failed, keeping the running settings: %s", exc)
        else:
            self.apply(settings)
        notify(f"READY=1\nSTATUS={self._status_line()}")

    def apply(self, settings: Settings) -> None:
        """Switch to `settings`: new requests, connections and lock waits use them."""
        if settings.idle_exit is not None and not self._activated:
            logger.warning("idle_exit ignored: %s", _IDLE_EXIT_NEEDS_ACTIVATION)
            settings = msgspec.structs.replace(settings, idle_exit=None)
        changed = [
            f"{name} {getattr(self.settings, name)} -> {getattr(settings, name)}"
            for name in settings.__struct_fields__
            if getattr(settings, name) != getattr(self.settings, name)
        ]
        self.settings = settings
        logging.getLogger().setLevel(settings.log_level)
        if self._registry is not None:
            self._registry.set_limits(_limits(settings))
        self._note_activity()
        logger.info("settings reloaded: %s", ", ".join(changed) or "nothing changed")

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
            if self._open_connections >= self.settings.max_connections:
                await _turn_away(stream, self.settings.max_connections)
                continue
            self._open_connections += 1
            self._note_activity()
            connections.start_soon(self._connection, stream, dispatcher)

    async def _drain_connections(self, deadline: float) -> bool:
        """Stop reading and wait until every connection closed or `deadline`; return whether
        they all closed."""
        for scope in self._read_scopes:
            scope.cancel()
        if self._open_connections:
            # Shielded: the services' scope has the same deadline, and its cancellation must
            # not skip the giving up that follows.
            with anyio.CancelScope(shield=True), anyio.move_on_at(deadline):
                await self._all_closed.wait()
        return self._open_connections == 0

    async def _connection(self, stream: SocketStream, dispatcher: Dispatcher) -> None:
        try:
            peer = _peer_uid(stream)
            if not peer_allowed(peer, os.geteuid(), allow_root=self.settings.allow_root):
                _refuse_peer(stream, peer)
                return
            await Connection(stream, dispatcher, self).serve()
        except Exception:
            logger.exception("connection handler failed")
        finally:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            self._open_connections -= 1
            self._note_activity()
            if self._open_connections == 0 and self._stopping:
                self._all_closed.set()


_IDLE_EXIT_NEEDS_ACTIVATION = (
    "idle exit needs a socket passed by systemd or launchd, which keep it open while memd is "
    "down; without one, clients would find no daemon. Run memd as a service (`memd service "
    "install --idle-exit SECONDS`) or drop --idle-exit."
)


class Connection:
    """One client connection: read frames, run requests, write replies."""

    def __init__(self, stream: SocketStream, dispatcher: Dispatcher, daemon: Daemon) -> None:
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


async def _turn_away(stream: SocketStream, limit: int) -> None:
    """Tell a client over the connection limit why it is refused, then close (never blocks)."""
    logger.warning("refused a connection: %d clients are connected already", limit)
    frame = error_frame(
        ServerBusy(f"memd serves {limit} connections already; close idle ones or retry shortly.")
    )
    with contextlib.suppress(OSError):
        stream.extra(SocketAttribute.raw_socket).send(frame + b"\n")
    with anyio.CancelScope(shield=True):
        await stream.aclose()


def peer_allowed(peer: int | None, own: int, *, allow_root: bool) -> bool:
    """Return True if a client running as uid `peer` may be served by a daemon running as uid
    `own`: the same user, or root where `allow_root` is set. None (an OS that cannot tell the
    peer's uid) is allowed: there the socket's 0600 mode and 0700 directory keep others out."""
    return peer is None or peer == own or (peer == 0 and allow_root)


def _refuse_peer(stream: SocketStream, peer: int | None) -> None:
    """Log a refused peer with its uid, tell it why, and close (never blocks)."""
    own = os.geteuid()
    logger.warning("refused a connection from uid %s (memd serves uid %d)", peer, own)
    if peer == 0:
        advice = "to let root in, set allow_root = true in its config file and send it SIGHUP."
    else:
        advice = "start your own with `memd serve` and point MEMD_SOCKET (or --socket) at it."
    refusal = InvalidRequest(f"This memd serves uid {own}, not uid {peer}; {advice}")
    with contextlib.suppress(OSError):
        stream.extra(SocketAttribute.raw_socket).send(error_frame(refusal) + b"\n")


_SOL_LOCAL = 0
_LOCAL_PEERCRED = 1
"""macOS and the BSDs: `getsockopt(SOL_LOCAL, LOCAL_PEERCRED)` gives the peer's `struct xucred`."""


def _peer_uid(stream: SocketStream) -> int | None:
    """Return the connecting process's effective uid, or None where the OS cannot tell: Linux's
    SO_PEERCRED (`struct ucred`), else on macOS LOCAL_PEERCRED (`struct xucred`)."""
    raw = stream.extra(SocketAttribute.raw_socket)
    option = getattr(socket, "SO_PEERCRED", None)
    if option is not None:
        size = struct.calcsize("3i")
        _pid, uid, _gid = struct.unpack("3i", raw.getsockopt(socket.SOL_SOCKET, option, size))
        return int(uid)
    if sys.platform == "darwin":
        try:
            return uid_from_xucred(raw.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, 128))
        except OSError:
            return None
    return None


def uid_from_xucred(data: bytes) -> int | None:
    """Return `cr_uid` from a `struct xucred` (`u_int cr_version; uid_t cr_uid; ...`), or None
    if it is short or of a layout version other than 0 (XUCRED_VERSION)."""
    if len(data) < 8:
        return None
    version, uid = struct.unpack_from("=II", data)
    return uid if version == 0 else None


GC_THRESHOLDS = (50_000, 20, 100)
"""The cycle collector's thresholds while serving (Python's are 700, 10, 10)."""


async def serve(
    config: Config, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Run a daemon with `config` until it is stopped by a signal.

    A daemon holds large, long-lived indexes, which the cycle collector's default thresholds
    would have it walk every few hundred allocations: loading a workspace then takes half as
    long again. memd makes few reference cycles, so it collects less often (GC_THRESHOLDS).
    """
    gc.set_threshold(*GC_THRESHOLDS)
    _raise_file_limit()
    daemon = Daemon(config)
    if config.handle_signals:  # this daemon owns the process: a stop may end it
        daemon.exit_deadline = ExitDeadline(SHUTDOWN_DEADLINE, daemon.unfinished)
    await daemon.run(task_status=task_status)


def _arm_on_signals(deadline: ExitDeadline, signums: tuple[signal.Signals, ...]) -> None:
    """Put a Python-level handler that arms `deadline` before the one in place for each of
    `signums` (asyncio's, which only wakes the loop). Python runs it between two bytecodes of
    the main thread, so it arms the deadline even while the event loop is kept busy."""
    for signum in signums:
        previous = signal.getsignal(signum)

        def handler(number: int, frame: object, previous: object = previous) -> None:
            deadline.arm()
            if callable(previous):
                previous(number, frame)

        signal.signal(signum, handler)


def _raise_file_limit() -> None:
    """Lift the soft limit on open files to the hard one (at most 65,536): each client is a
    file descriptor, and the common soft limit of 1,024 is below `max_connections`' reach."""
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = 65_536 if hard == resource.RLIM_INFINITY else min(hard, 65_536)
        if soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _limits(settings: Settings) -> Limits:
    return Limits(
        lock_timeout=settings.lock_timeout,
        max_file_bytes=settings.max_file_bytes,
        max_entry_chars=settings.max_entry_chars,
        idle_unload=settings.idle_unload_seconds,
        max_archive_bytes=settings.max_archive_bytes,
    )
