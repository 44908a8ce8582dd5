"""The sans-I/O half of a client: build request frames, classify and decode incoming frames.

Both `Client` (blocking) and `AsyncClient` (anyio) move bytes; this module decides what they mean.
An incoming frame is either a notification (`method` and no `id`: decoded into a `Changed` or
`Resync` event; unknown methods are skipped) or a response, matched to the request waiting on it.

Handshake: the first request on every connection is `status`; a daemon whose protocol major
version differs from `PROTOCOL_VERSION`'s is refused (`IncompatibleDaemon`) before anything else
is sent, so an old daemon never carries out a new client's writes or the reverse.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, Raw, UnsetType

from memd_client import _calls, protocol as p
from memd_client._autostart import AUTOSTART_TIMEOUT
from memd_client._constants import CLIENT_VERSION
from memd_client._framing import FrameTooLarge, LineDecoder
from memd_client._paths import default_socket_path
from memd_client.errors import (
    ErrorObject,
    IncompatibleDaemon,
    InvalidParams,
    ProtocolViolation,
    from_wire,
)

_UNKNOWN_WRITER = "unknown field `writer`"
"""What a daemon older than provenance says of a write's `writer` (msgspec's message)."""

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
# Replies can be large (a `list` of thousands of entries); requests are capped by the daemon.
MAX_REPLY_FRAME = 256 * 1024 * 1024

_encoder = msgspec.json.Encoder()


class _Request(msgspec.Struct):
    """The request envelope as sent (field order as JSON-RPC examples write it)."""

    jsonrpc: str
    id: int
    method: str
    params: msgspec.Struct


class Reply(msgspec.Struct):
    """One incoming JSON-RPC object; `params` and `result` stay raw until their type is known."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: p.RequestId | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: Raw = Raw(b"null")
    result: Raw | UnsetType = UNSET
    error: ErrorObject | UnsetType = UNSET

    @property
    def is_notification(self) -> bool:
        """A notification has a method and no id; anything else is treated as a response."""
        return isinstance(self.id, UnsetType) and not isinstance(self.method, UnsetType)


_reply_decoder = msgspec.json.Decoder(Reply)


class Handshake(msgspec.Struct):
    """What the handshake reads from `status`; lenient, so any daemon's answer decodes."""

    version: str = "unknown"
    protocol_version: str | int = "0"
    pid: int = 0


def check_protocol(handshake: Handshake, socket_path: str) -> None:
    """Refuse a daemon whose protocol major version differs from this client's.

    Raises:
        IncompatibleDaemon: the majors differ; the message says how to restart the daemon.
    """
    theirs = str(handshake.protocol_version).split(".")[0]
    ours = str(p.PROTOCOL_VERSION)
    if theirs == ours:
        return
    raise IncompatibleDaemon(
        f"The memd daemon on {socket_path} (memd {handshake.version}, pid {handshake.pid}) speaks "
        f"protocol {handshake.protocol_version}, but this client speaks {ours}; restart the "
        "daemon from the same memd installation as this client (`systemctl --user restart "
        f"memd` if it runs as a service, else `kill {handshake.pid}` and then `memd serve`)."
    )


class Connection:
    """The state of one socket connection: request ids and frames received but not yet read."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._decoder = LineDecoder(max_frame=MAX_REPLY_FRAME)
        self._frames: deque[bytes] = deque()

    def request(self, method: str, params: msgspec.Struct) -> tuple[int, bytes]:
        """Return a fresh request id and the frame (ending in a newline) that carries it."""
        request_id = next(self._ids)
        return request_id, _encoder.encode(_Request("2.0", request_id, method, params)) + b"\n"

    def handshake(self) -> tuple[int, bytes]:
        """Return the id and frame of the handshake request (`status`)."""
        return self.request("status", p.StatusParams())

    def check_handshake(self, reply: Reply, request_id: int, socket_path: str) -> None:
        """Check the daemon's answer to the handshake.

        Raises:
            IncompatibleDaemon: the daemon speaks another protocol major version.
            RpcError, ProtocolViolation: as for `result`.
        """
        check_protocol(self.result(reply, request_id, Handshake), socket_path)

    def receive_data(self, data: bytes) -> None:
        """Buffer bytes read from the socket.

        Raises:
            ProtocolViolation: a frame is too large; the connection must be closed.
        """
        try:
            self._frames.extend(self._decoder.feed(data))
        except FrameTooLarge as exc:
            raise ProtocolViolation(f"The daemon sent a message too large to read: {exc}") from None

    def next_message(self) -> Reply | p.Event | None:
        """Return the next complete response or event, or None when more data is needed.

        Raises:
            ProtocolViolation: a frame is not JSON-RPC, or an event's params are malformed.
        """
        while (reply := self._next_frame()) is not None:
            if not reply.is_notification:
                return reply
            event_type = p.NOTIFICATION_TYPES.get(str(reply.method))
            if event_type is not None:
                return _decode(reply.params, event_type, "notification")
        return None

    def next_reply(self) -> Reply | None:
        """Return the next response, skipping notifications, or None when more data is needed."""
        while (reply := self._next_frame()) is not None:
            if not reply.is_notification:
                return reply
        return None

    def result(self, reply: Reply, request_id: int, result_type: type[T]) -> T:
        """Return the typed result of `reply`, the response to `request_id`.

        Raises:
            RpcError: the daemon answered with an error (its matching subclass).
            ProtocolViolation: the frame is not a response to this request.
        """
        if isinstance(reply.error, UnsetType):
            if reply.id != request_id:
                raise ProtocolViolation(
                    f"The daemon answered request {reply.id!r} while {request_id} was waiting."
                )
            return _decode(reply.result, result_type, "reply")
        if reply.id not in (request_id, None):
            raise ProtocolViolation(f"The daemon answered request {reply.id!r} unexpectedly.")
        raise from_wire(reply.error)

    def _next_frame(self) -> Reply | None:
        if not self._frames:
            return None
        try:
            return _reply_decoder.decode(self._frames.popleft())
        except msgspec.DecodeError as exc:
            raise ProtocolViolation(f"The daemon sent an unreadable message ({exc}).") from None


_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decoder(result_type: type[T]) -> msgspec.json.Decoder[T]:
    """Return the typed decoder for `result_type`, built once per type and reused."""
    found = _decoders.get(result_type)
    if found is None:
        found = _decoders[result_type] = msgspec.json.Decoder(result_type)
    return found


def _decode(raw: Raw | UnsetType, result_type: type[T], what: str) -> T:
    try:
        return _decoder(result_type).decode(raw if isinstance(raw, Raw) else b"null")
    except msgspec.DecodeError as exc:
        raise ProtocolViolation(
            f"The daemon's {what} did not have the expected shape: {exc}."
        ) from None


class ClientBase:
    """What both clients share: where to connect, the default workspace, the connection state.

    The default workspace (`workspace`, used by every call not given `workspace=`) is the one
    passed, else the project root of the current directory when the client is made (the nearest
    ancestor holding `.memory/` or `.git`, else the directory itself), as the CLI picks it.

    With `autostart=True`, a client that finds no daemon (and no installed service) starts one
    with `memd serve --background` and waits for it up to `autostart_timeout` seconds; see
    `memd_client._autostart` for the rules.

    Every write (store, episode, procedure, delete, cleanup, extract) says who makes it
    (`protocol.Writer`, kept in the workspace's provenance): `client_name` and `client_version`
    (default "memd_client" and this library's version), `origin` ("agent" unless the caller is a
    person: the CLI passes "user") and `session` (an agent session id, if known)."""

    def __init__(
        self,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        autostart: bool = False,
        autostart_timeout: float = AUTOSTART_TIMEOUT,
        client_name: str = "memd_client",
        client_version: str | None = CLIENT_VERSION,
        origin: p.WriteOrigin = "agent",
        session: str | None = None,
    ) -> None:
        self.socket_path = default_socket_path(socket_path)
        self.workspace = _calls.client_workspace(workspace)
        self.timeout = timeout
        self.autostart = autostart
        self.autostart_timeout = autostart_timeout
        self._connection = Connection()
        self.writer = p.Writer(
            client=client_name, version=client_version, origin=origin, session=session
        )
        """Who this client's writes are recorded as from."""
        self._daemon_takes_writer = True
        """False once the daemon refused a `writer` (it predates provenance): none is sent."""

    def _stamped(self, call: _calls.Call) -> _calls.Call:
        """`call`, its params given this client's `writer` if they take one and have none (and
        the daemon takes one)."""
        params: Any = call.params
        if (
            self._daemon_takes_writer
            and "writer" in params.__struct_fields__
            and params.writer is None
        ):
            return call._replace(params=msgspec.structs.replace(call.params, writer=self.writer))
        return call

    def _without_writer(self, call: _calls.Call, error: InvalidParams) -> _calls.Call | None:
        """`call` again without its `writer`, if `error` is an older daemon refusing that field
        (a daemon still running after an upgrade of its clients: the request did nothing, so
        it is sent again without it, and no later one carries it); else None.

        Rule: an upgraded client never fails a write only because the daemon is older."""
        params: Any = call.params
        if getattr(params, "writer", None) is None or _UNKNOWN_WRITER not in error.message:
            return None
        self._daemon_takes_writer = False
        return call._replace(params=msgspec.structs.replace(params, writer=None))

    def _reset_connection(self) -> None:
        self._connection = Connection()
