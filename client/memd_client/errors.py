"""One exception hierarchy for memd, shared by the daemon and every client.

```
MemdError                     base; str(exc) is one sentence saying what to do next
├── TransportError            client side only, never on the wire
│   ├── DaemonUnavailable     no daemon answers on the socket (also ConnectionError)
│   ├── ConnectionLost        the daemon closed the connection mid-request
│   ├── RequestTimeout        no reply within the client's timeout (also TimeoutError)
│   └── IncompatibleDaemon    the daemon speaks another protocol major version
├── ProtocolViolation         client side only: the daemon sent something not valid where it came
└── RpcError                  travels on the wire as a JSON-RPC error object
    ├── ParseError        -32700  the bytes were not JSON
    ├── InvalidRequest    -32600  JSON, but not a valid request (or a frame too large)
    ├── MethodNotFound    -32601
    ├── InvalidParams     -32602  the message names the offending field
    ├── InternalError     -32603  a bug in memd; never carries a traceback
    ├── ServerBusy        -32001  the workspace's write queue stayed full
    ├── ShuttingDown      -32002  the daemon is stopping
    ├── CategoryNotFound   1001
    ├── EntryNotFound      1002
    ├── InvalidEntry       1003   well-typed, but breaks a rule of the format
    ├── FileFormatError    1004   a memory file cannot be read as UTF-8 text
    ├── LockTimeout        1005   another writer held .memory/.lock too long (also TimeoutError)
    ├── WorkspaceNotFound  1006   the workspace is not an existing directory
    ├── StorageError       1007   the file system refused a read or write
    ├── MergeConflict      1008   the file holds git conflict markers; resolve the merge
    └── SemanticSearchUnavailable 1009  a query asked for mode semantic, which cannot run now
```

`to_wire` and `from_wire` are the only conversions between exceptions and error objects.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

__all__ = [
    "CategoryNotFound",
    "ConnectionLost",
    "DaemonUnavailable",
    "EntryNotFound",
    "ErrorObject",
    "FileFormatError",
    "IncompatibleDaemon",
    "InternalError",
    "InvalidEntry",
    "InvalidParams",
    "InvalidRequest",
    "LockTimeout",
    "MemdError",
    "MergeConflict",
    "MethodNotFound",
    "ParseError",
    "ProtocolViolation",
    "RequestTimeout",
    "RpcError",
    "SemanticSearchUnavailable",
    "ServerBusy",
    "ShuttingDown",
    "StorageError",
    "TransportError",
    "WorkspaceNotFound",
    "from_wire",
    "to_wire",
]


class ErrorObject(msgspec.Struct, omit_defaults=True):
    """The JSON-RPC error object: `code`, one-sentence `message`, optional `data`."""

    code: int
    message: str
    data: Any = None


class MemdError(Exception):
    """Base of every memd error; `message` is one sentence saying what went wrong and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TransportError(MemdError):
    """Raised when talking to the daemon failed before a reply arrived (client side only)."""


class DaemonUnavailable(TransportError, ConnectionError):
    """Raised when no daemon accepts connections on the socket."""


class ConnectionLost(TransportError):
    """Raised when the daemon closed the connection before replying."""


class RequestTimeout(TransportError, TimeoutError):
    """Raised when the daemon did not reply within the client's timeout."""


class IncompatibleDaemon(TransportError):
    """Raised when the daemon's protocol major version differs from the client's."""


class ProtocolViolation(MemdError):
    """Raised when the daemon sent something that is not valid where it arrived."""


class RpcError(MemdError):
    """Raised for an error reply from the daemon; `code` is its JSON-RPC error code."""

    code: ClassVar[int] = -32000

    def __init__(self, message: str, *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.data = data
        if code is not None and code != type(self).code:
            self.code = code  # type: ignore[misc]  # an unknown code received from the wire


class ParseError(RpcError):
    """Raised when a frame is not valid JSON."""

    code = -32700


class InvalidRequest(RpcError):
    """Raised when a frame is JSON but not a valid JSON-RPC request, or is too large."""

    code = -32600


class MethodNotFound(RpcError):
    """Raised when the method name is not one memd serves."""

    code = -32601


class InvalidParams(RpcError):
    """Raised when params are missing, of the wrong type, or out of range."""

    code = -32602


class InternalError(RpcError):
    """Raised when memd hit a bug; the daemon's log has the details."""

    code = -32603


class ServerBusy(RpcError):
    """Raised when a write queue stayed full for the whole wait; retry shortly."""

    code = -32001


class ShuttingDown(RpcError):
    """Raised when the daemon is stopping and takes no new work."""

    code = -32002


class CategoryNotFound(RpcError):
    """Raised when a category or category file name is not one of the five."""

    code = 1001


class EntryNotFound(RpcError):
    """Raised when no entry has the requested slug or lines."""

    code = 1002


class InvalidEntry(RpcError):
    """Raised when content or a slug breaks a rule of the memory format."""

    code = 1003


class FileFormatError(RpcError):
    """Raised when a memory file cannot be read as text; it is left untouched."""

    code = 1004


class LockTimeout(RpcError, TimeoutError):
    """Raised when another writer held `.memory/.lock` for too long."""

    code = 1005


class WorkspaceNotFound(RpcError):
    """Raised when the workspace path is not an existing directory."""

    code = 1006


class StorageError(RpcError):
    """Raised when the file system refused to read or write a memory file."""

    code = 1007


class MergeConflict(RpcError):
    """Raised for a write to a memory file that holds git conflict markers (a merge in
    progress); reads still serve its last good entries."""

    code = 1008


class SemanticSearchUnavailable(RpcError):
    """Raised for a query in mode semantic when semantic search is off, or not ready yet."""

    code = 1009


_BY_CODE: dict[int, type[RpcError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        ServerBusy,
        ShuttingDown,
        CategoryNotFound,
        EntryNotFound,
        InvalidEntry,
        FileFormatError,
        LockTimeout,
        WorkspaceNotFound,
        StorageError,
        MergeConflict,
        SemanticSearchUnavailable,
    )
}


def to_wire(exc: RpcError) -> ErrorObject:
    """Return the JSON-RPC error object for `exc`."""
    return ErrorObject(code=exc.code, message=exc.message, data=exc.data)


def from_wire(error: ErrorObject) -> RpcError:
    """Return the exception for a received error object; unknown codes give a plain `RpcError`."""
    cls = _BY_CODE.get(error.code)
    if cls is None:
        return RpcError(error.message, data=error.data, code=error.code)
    return cls(error.message, data=error.data)
