"""memd client library: typed JSON-RPC over memd's Unix socket.

`Client` is blocking and needs only msgspec; `memd_client.aio.AsyncClient` is the anyio version.
Both can subscribe to a workspace's `Changed` and `Resync` events (`Client.subscribe` with a
callback, `AsyncClient.subscribe` as an async iterator). Importing this package never imports anyio.
"""

from memd_client._framing import DEFAULT_MAX_FRAME, FrameTooLarge, LineDecoder
from memd_client._paths import default_socket_path, find_workspace
from memd_client._sync import Client, SyncSubscription
from memd_client.errors import (
    CategoryNotFound,
    ConnectionLost,
    DaemonUnavailable,
    EntryNotFound,
    FileFormatError,
    IncompatibleDaemon,
    InternalError,
    InvalidEntry,
    InvalidParams,
    InvalidRequest,
    LockTimeout,
    MemdError,
    MethodNotFound,
    ParseError,
    RequestTimeout,
    RpcError,
    ServerBusy,
    ShuttingDown,
    StorageError,
    TransportError,
    WorkspaceNotFound,
)
from memd_client.protocol import PROTOCOL_VERSION, Changed, Resync

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_FRAME",
    "PROTOCOL_VERSION",
    "CategoryNotFound",
    "Changed",
    "Client",
    "ConnectionLost",
    "DaemonUnavailable",
    "EntryNotFound",
    "FileFormatError",
    "FrameTooLarge",
    "IncompatibleDaemon",
    "InternalError",
    "InvalidEntry",
    "InvalidParams",
    "InvalidRequest",
    "LineDecoder",
    "LockTimeout",
    "MemdError",
    "MethodNotFound",
    "ParseError",
    "RequestTimeout",
    "Resync",
    "RpcError",
    "ServerBusy",
    "ShuttingDown",
    "StorageError",
    "SyncSubscription",
    "TransportError",
    "WorkspaceNotFound",
    "default_socket_path",
    "find_workspace",
]
