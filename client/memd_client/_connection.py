"""The sans-I/O half of a client: build request frames, match and decode response frames.

Both `Client` (blocking) and `AsyncClient` (anyio) move bytes; this module decides what they mean.
"""

from __future__ import annotations

import itertools
import os
from typing import Any, TypeVar

import msgspec

from memd_client._framing import LineDecoder
from memd_client._paths import default_socket_path
from memd_client.errors import MemdError, from_wire
from memd_client.protocol import Response

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
# Replies can be large (a `list` of thousands of entries); requests are capped by the daemon.
MAX_REPLY_FRAME = 256 * 1024 * 1024

_encoder = msgspec.json.Encoder()
_response_decoder = msgspec.json.Decoder(Response)


class ProtocolViolation(MemdError):
    """Raised when the daemon's reply is not a valid response to the request sent."""


class Connection:
    """Request ids and response matching for one socket connection."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def request(self, method: str, params: msgspec.Struct) -> tuple[int, bytes]:
        """Return a fresh request id and the frame (ending in a newline) that carries it."""
        request_id = next(self._ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return request_id, _encoder.encode(body) + b"\n"

    def response(self, frame: bytes, request_id: int, result_type: type[T]) -> T:
        """Decode `frame` as the reply to `request_id`, returning its typed result.

        Raises:
            RpcError: the daemon answered with an error (its matching subclass).
            ProtocolViolation: the frame is not a response to this request.
        """
        try:
            response = _response_decoder.decode(frame)
        except msgspec.DecodeError as exc:
            raise ProtocolViolation(f"The daemon sent an unreadable reply ({exc}).") from None
        if isinstance(response.error, msgspec.UnsetType):
            if response.id != request_id:
                raise ProtocolViolation(
                    f"The daemon answered request {response.id!r} while {request_id} was waiting."
                )
            return _convert(response.result, result_type)
        if response.id not in (request_id, None):
            raise ProtocolViolation(f"The daemon answered request {response.id!r} unexpectedly.")
        raise from_wire(response.error)


def _convert(result: Any, result_type: type[T]) -> T:
    try:
        return msgspec.convert(result, result_type)
    except msgspec.ValidationError as exc:
        raise ProtocolViolation(
            f"The daemon's reply did not have the expected shape: {exc}."
        ) from None


class ClientBase:
    """What both clients share: where to connect, the default workspace, framing and ids."""

    def __init__(
        self,
        socket_path: str | os.PathLike[str] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.socket_path = default_socket_path(socket_path)
        self.workspace = os.path.abspath(os.fspath(workspace)) if workspace is not None else None
        self.timeout = timeout
        self._connection = Connection()
        self._reset_decoder()

    def _reset_decoder(self) -> None:
        self._decoder = LineDecoder(max_frame=MAX_REPLY_FRAME)
