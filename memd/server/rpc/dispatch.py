"""JSON-RPC 2.0 dispatch: one frame of bytes in, one frame of bytes (or nothing) out.

Decoding happens in stages, and each stage maps its failures to one error code:
1. Frame: not JSON (or not UTF-8, or nested too deep) -> -32700 Parse error.
2. Envelope: JSON, but not a request object -> -32600 Invalid Request (id echoed if readable).
3. Method: unknown -> -32601.
4. Params: decoded with the method's Struct; wrong or unknown fields -> -32602, naming the field.
5. Handler: a memd error goes out with its own code; anything else is logged with its traceback
   and answered with -32603, whose message never carries internals.

Notifications (no `id`) run but are never answered, even on error. A batch is answered with an
array of the non-notification responses, or nothing if there are none; an empty batch is one
-32600 error.

Bounds (a small frame must never make a huge reply, nor exhaust memory):
- A batch holds at most `max_batch` requests (the connection's in-flight cap; each request of a
  batch takes one of its slots, see `weight`). A longer batch is one -32600 error, and none of
  its requests run.
- Each response of a batch is encoded as soon as it is ready. Responses up to
  ALWAYS_KEPT_BYTES (every write's) are always sent; a larger one is sent only while the
  batch's reply stays within MAX_BATCH_REPLY_BYTES, else it is replaced by a -32600 error for
  its id saying the request was carried out but its reply left out. So a batch's reply is at
  most MAX_BATCH_REPLY_BYTES + max_batch * ALWAYS_KEPT_BYTES bytes.
- Invalid UTF-8 or bad JSON inside `params` is a -32700 error for that request only.
- A request that runs out of memory (MemoryError, in its handler or while its reply is
  encoded) gets a -32603 error saying so; the connection and the daemon go on.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from memd.server.rpc.session import Session
from memd_client.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RpcError,
    to_wire,
)
from memd_client.protocol import Request, RequestId, Response

logger = logging.getLogger(__name__)

_encoder = msgspec.json.Encoder()
_any_decoder = msgspec.json.Decoder()
_batch_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_request_decoder = msgspec.json.Decoder(Request)
_DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

Handler = Callable[[Any, Session], Awaitable[Any]]
"""A method's coroutine: its params Struct and the connection's session in, its result out."""

MethodTable = dict[str, tuple[type[msgspec.Struct], Handler]]

MAX_BATCH_ITEMS = 64
"""The most requests one batch may hold, unless the dispatcher is given another cap."""
MAX_BATCH_REPLY_BYTES = 16 * 1024 * 1024
"""The most bytes of large responses a batch's reply may carry (16 MiB)."""
ALWAYS_KEPT_BYTES = 64 * 1024
"""A batch response this small (any write's) is always sent, whatever the batch's total."""


class _MethodOnly(msgspec.Struct):
    method: str = ""


_method_decoder = msgspec.json.Decoder(_MethodOnly)


class Dispatcher:
    """Turns request frames into response frames using a method table."""

    def __init__(
        self,
        methods: MethodTable,
        *,
        quick: frozenset[str] = frozenset(),
        max_batch: int = MAX_BATCH_ITEMS,
        max_batch_reply: int = MAX_BATCH_REPLY_BYTES,
    ) -> None:
        """`quick` names the methods that never wait for a writer (see `is_quick`);
        `max_batch` and `max_batch_reply` bound a batch (see the module docstring)."""
        self.methods = methods
        self.quick = quick
        self.max_batch = max_batch
        self.max_batch_reply = max_batch_reply
        self._params_decoders = {
            name: msgspec.json.Decoder(params_type) for name, (params_type, _) in methods.items()
        }

    async def handle_frame(self, frame: bytes, session: Session) -> bytes | None:
        """Return the response frame (without newline) for `frame` from the connection whose
        state is `session`, or None for no reply."""
        body = frame.strip()
        if body.startswith(b"["):
            return await self._handle_batch(body, session)
        if body.startswith(b"{"):
            response = await self.handle_request(body, session)
            return None if response is None else _encode(response)
        return _encoder.encode(_not_an_object(body))

    def weight(self, frame: bytes) -> int:
        """Return how many in-flight slots `frame` takes: one per request of a batch this
        dispatcher will run, else one."""
        body = frame.lstrip()
        if not body.startswith(b"["):
            return 1
        try:
            count = len(_batch_decoder.decode(body))
        except _DECODE_ERRORS:
            return 1
        return count if 0 < count <= self.max_batch else 1

    def is_quick(self, frame: bytes) -> bool:
        """True when `frame` is one request (not a batch) for a quick method: one a connection
        may answer before it reads on, since it never waits for a write to finish."""
        if not frame.lstrip().startswith(b"{"):
            return False
        try:
            return _method_decoder.decode(frame).method in self.quick
        except _DECODE_ERRORS:  # (a ValidationError is a DecodeError)
            return False

    async def _handle_batch(self, body: bytes, session: Session) -> bytes | None:
        try:
            items = _batch_decoder.decode(body)
        except _DECODE_ERRORS:
            return _encoder.encode(_error(None, ParseError("Parse error: the batch is not JSON.")))
        if not items:
            return _encoder.encode(_error(None, InvalidRequest("Invalid Request: empty batch.")))
        if len(items) > self.max_batch:
            message = (
                f"Invalid Request: a batch may hold at most {self.max_batch} requests, and this "
                f"one holds {len(items)}; none of them ran. Send them in smaller batches."
            )
            return _encoder.encode(_error(None, InvalidRequest(message)))
        encoded: list[bytes | None] = [None] * len(items)
        large_bytes = 0

        async def run(index: int, item: bytes) -> None:
            nonlocal large_bytes
            response = await self.handle_request(item, session)
            if response is None:
                return
            frame = _encode(response)
            if len(frame) > ALWAYS_KEPT_BYTES:
                if large_bytes + len(frame) > self.max_batch_reply:
                    frame = _encoder.encode(_left_out(response.id, self.max_batch_reply))
                else:
                    large_bytes += len(frame)
            encoded[index] = frame

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(items):
                tg.start_soon(run, index, bytes(item))
        answered = [frame for frame in encoded if frame is not None]
        return b"[" + b",".join(answered) + b"]" if answered else None

    async def handle_request(self, raw: bytes, session: Session) -> Response | None:
        """Return the response to one request object, or None for a notification."""
        try:
            request = _request_decoder.decode(raw)
        except msgspec.ValidationError as exc:
            return _error(_recover_id(raw), InvalidRequest(f"Invalid Request: {exc}."))
        except _DECODE_ERRORS:
            return _error(None, ParseError("Parse error: the message is not valid JSON."))
        request_id = request.id
        try:
            result = await self._call(request, session)
        except RpcError as exc:
            if isinstance(request_id, msgspec.UnsetType):
                return None
            return _error(request_id, exc)
        if isinstance(request_id, msgspec.UnsetType):
            return None
        return Response(id=request_id, result=result)

    async def _call(self, request: Request, session: Session) -> Any:
        entry = self.methods.get(request.method)
        if entry is None:
            known = ", ".join(sorted(self.methods))
            raise MethodNotFound(f"Method not found: {request.method!r}; memd serves {known}.")
        params = self._decode_params(request)
        handler = entry[1]
        return await _run_handler(handler, params, session, request)

    def _decode_params(self, request: Request) -> msgspec.Struct:
        raw = b"{}" if isinstance(request.params, msgspec.UnsetType) else bytes(request.params)
        if not raw.lstrip().startswith(b"{"):
            raise InvalidParams(
                "Invalid params: memd takes params by name, as a JSON object."
                if raw.lstrip().startswith(b"[")
                else "Invalid params: params must be a JSON object."
            )
        try:
            params: msgspec.Struct = self._params_decoders[request.method].decode(raw)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"Invalid params: {exc}.") from None
        except UnicodeDecodeError:
            raise ParseError(
                "Parse error: the params are not valid UTF-8; send every string as UTF-8 text."
            ) from None
        except _DECODE_ERRORS:
            raise ParseError("Parse error: the params are not valid JSON.") from None
        return params


async def _run_handler(
    handler: Handler, params: msgspec.Struct, session: Session, request: Request
) -> Any:
    try:
        return await handler(params, session)
    except RpcError:
        raise
    except MemoryError:
        raise _out_of_memory(request.method) from None
    except Exception:
        logger.exception("internal error in %s (request id %r)", request.method, request.id)
        raise InternalError(
            f"Internal error while handling {request.method}; the memd log has the details."
        ) from None


def _error(request_id: RequestId, exc: RpcError) -> Response:
    return Response(id=request_id, error=to_wire(exc))


def _out_of_memory(method: str) -> InternalError:
    """Log (briefly: memory is short) and return the error for a request that ran out of it."""
    with contextlib.suppress(MemoryError):
        logger.error("out of memory in %s; answered that request with an error", method)
    return InternalError(
        f"memd ran out of memory answering this {method}; ask for less at a time (one "
        "category, fewer requests per batch)."
    )


def _encode(response: Response) -> bytes:
    """Encode `response`; one that runs out of memory on the way is sent as that error."""
    try:
        return _encoder.encode(response)
    except MemoryError:
        method = "request"
    return _encoder.encode(_error(response.id, _out_of_memory(method)))


def _left_out(request_id: RequestId, limit: int) -> Response:
    """The error sent instead of a response that would take a batch's reply over `limit`."""
    message = (
        f"Invalid Request: this request was carried out, but its reply was left out because "
        f"the batch's replies passed {limit} bytes; send it on its own or in a smaller batch."
    )
    return _error(request_id, InvalidRequest(message))


def _not_an_object(body: bytes) -> Response:
    try:
        _any_decoder.decode(body)
    except _DECODE_ERRORS:
        return _error(None, ParseError("Parse error: the message is not valid JSON."))
    return _error(None, InvalidRequest("Invalid Request: a request must be a JSON object."))


def _recover_id(raw: bytes) -> RequestId:
    try:
        value = _any_decoder.decode(raw)
    except _DECODE_ERRORS:
        return None
    if isinstance(value, dict):
        found = value.get("id")
        if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
            return found
    return None


def error_frame(exc: RpcError) -> bytes:
    """Return a response frame carrying `exc` with a null id (for framing-level errors)."""
    return _encoder.encode(_error(None, exc))
