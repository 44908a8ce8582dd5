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

Connections are served by `connection.Connection` (frames, concurrency, fairness); a peer
running as another user is refused by `peer` before that, and one connection over
`max_connections` gets -32001 (`connection.turn_away`).

Size: startup, reload and the shutdown sequence, which must be read together.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import logging
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import MappingProxyType

import anyio
import msgspec
from anyio.abc import SocketListener, SocketStream, TaskGroup, TaskStatus

from memd import __version__
from memd.config import ConfigError, Settings
from memd.core.format.categories import BUILTIN, custom_categories
from memd.server.daemon import activation
from memd.server.daemon.exit_deadline import ExitDeadline, busy_threads
from memd.server.daemon.instance import InstanceLock
from memd.server.daemon.notify import notify
from memd.server.methods.handlers import Methods
from memd.server.methods.second_opinion import SecondOpinion
from memd.server.rpc.connection import MAX_IN_FLIGHT, Connection, turn_away
from memd.server.rpc.dispatch import Dispatcher
from memd.server.rpc.peer import peer_allowed, peer_uid, refuse_peer
from memd.server.semantic import SemanticService
from memd.server.workspaces.registry import Registry
from memd.server.workspaces.workspace import WorkspaceSettings

logger = logging.getLogger("memd.server.daemon")  # its log name before the move to daemon/

SHUTDOWN_GRACE = 10.0
"""Seconds a stop waits for requests in flight before it cancels them."""
SHUTDOWN_DEADLINE = 12.0
"""Seconds from the start of a stop to the end of the process, whatever is stuck."""
STATUS_INTERVAL = 10.0
_OVERLOAD_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
"""`accept` failures that mean the system is out of something for a moment: wait, then retry."""
ACCEPT_RETRY_DELAY = 0.1
"""Seconds the accept loop waits after such a failure (as trio's serve_listeners does)."""


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
        self._semantic: SemanticService | None = None
        self._second_opinion = SecondOpinion(self.settings.llm)
        """The daemon's model (`[llm]`); its gap analyses run in `_serve`'s services."""
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
        """Long: the daemon's services and connections, started and stopped in one place."""
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time, limits=_limits(self.settings))
            self._registry = registry
            semantic = SemanticService(
                enabled=self.settings.semantic, model_dir=self.settings.semantic_model
            )
            self._semantic = semantic
            services.start_soon(semantic.run)
            self._second_opinion.tasks = services  # gap analyses end with the services
            methods = Methods(
                registry,
                started=anyio.current_time(),
                socket_path=self.socket_path,
                semantic=semantic,
                second_opinion=self._second_opinion,
            )
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
                semantic.close()

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
        if self._semantic is not None:
            self._semantic.configure(enabled=settings.semantic, model_dir=settings.semantic_model)
        self._second_opinion.configure(settings.llm)
        self._note_activity()
        logger.info("settings reloaded: %s", ", ".join(changed) or "nothing changed")

    async def _accept_loop(
        self, listener: SocketListener, connections: TaskGroup, dispatcher: Dispatcher
    ) -> None:
        """Accept connections until cancelled: each runs in `connections`; one over
        `max_connections` is turned away with an error; an accept that fails because the system
        is out of descriptors or memory is retried after ACCEPT_RETRY_DELAY."""
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if exc.errno not in _OVERLOAD_ERRNOS:
                    raise
                logger.warning("accept failed (%s); retrying in %g s", exc, ACCEPT_RETRY_DELAY)
                await anyio.sleep(ACCEPT_RETRY_DELAY)
                continue
            if self._open_connections >= self.settings.max_connections:
                await turn_away(stream, self.settings.max_connections)
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
            peer = peer_uid(stream)
            if not peer_allowed(peer, os.geteuid(), allow_root=self.settings.allow_root):
                refuse_peer(stream, peer)
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


GC_THRESHOLDS = (50_000, 20, 100)
"""The cycle collector's thresholds while serving (Python's are 700, 10, 10)."""
SWITCH_INTERVAL = 0.0005
"""Seconds a worker thread may keep the GIL while the event loop waits for it (Python's is
0.005): a request arriving during a background code check or index build waits this long at
most per hand-over, not 5 ms."""


async def serve(
    config: Config, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Run a daemon with `config` until it is stopped by a signal.

    A daemon holds large, long-lived indexes, which the cycle collector's default thresholds
    would have it walk every few hundred allocations: loading a workspace then takes half as
    long again. memd makes few reference cycles, so it collects less often (GC_THRESHOLDS).
    A worker thread hands the GIL back to the event loop sooner (SWITCH_INTERVAL).
    """
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
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


def _limits(settings: Settings) -> WorkspaceSettings:
    return WorkspaceSettings(
        lock_timeout=settings.lock_timeout,
        max_file_bytes=settings.max_file_bytes,
        max_entry_chars=settings.max_entry_chars,
        idle_unload=settings.idle_unload_seconds,
        max_archive_bytes=settings.max_archive_bytes,
        allow_secrets=settings.allow_secrets,
        sources=settings.sources,
        chat=settings.chat,
        chat_max_age_days=settings.chat_max_age_days,
        categories=custom_categories(settings.categories, BUILTIN),
        episode_half_life_days=settings.episode_half_life_days,
        episode_max_age_days=settings.episode_max_age_days,
        review=MappingProxyType(dict(settings.review)),
    )
