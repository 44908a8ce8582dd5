"""memd client library: typed JSON-RPC over memd's Unix socket.

`Client` is blocking and needs only msgspec; `memd_client.aio.AsyncClient` is the anyio version.
Both can subscribe to a workspace's `Changed` and `Resync` events (`Client.subscribe` with a
callback, `AsyncClient.subscribe` as an async iterator). Importing this package never imports anyio.

The names below are imported on first use, so `import memd_client._paths` (socket and workspace
discovery, stdlib only) stays cheap for the prompt hook's fast path.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memd_client._constants import CLIENT_VERSION as _CLIENT_VERSION

if TYPE_CHECKING:
    from memd_client._constants import PROTOCOL_VERSION
    from memd_client._framing import DEFAULT_MAX_FRAME, FrameTooLarge, LineDecoder
    from memd_client._paths import (
        FoundWorkspace,
        default_socket_path,
        find_workspace,
        find_workspace_with_reason,
    )
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
    from memd_client.protocol import Changed, Resync

__version__ = _CLIENT_VERSION

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
    "FoundWorkspace",
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
    "find_workspace_with_reason",
]

_HOMES = {
    "DEFAULT_MAX_FRAME": "_framing",
    "PROTOCOL_VERSION": "_constants",
    "CategoryNotFound": "errors",
    "Changed": "protocol",
    "Client": "_sync",
    "ConnectionLost": "errors",
    "DaemonUnavailable": "errors",
    "EntryNotFound": "errors",
    "FileFormatError": "errors",
    "FoundWorkspace": "_paths",
    "FrameTooLarge": "_framing",
    "IncompatibleDaemon": "errors",
    "InternalError": "errors",
    "InvalidEntry": "errors",
    "InvalidParams": "errors",
    "InvalidRequest": "errors",
    "LineDecoder": "_framing",
    "LockTimeout": "errors",
    "MemdError": "errors",
    "MethodNotFound": "errors",
    "ParseError": "errors",
    "RequestTimeout": "errors",
    "Resync": "protocol",
    "RpcError": "errors",
    "ServerBusy": "errors",
    "ShuttingDown": "errors",
    "StorageError": "errors",
    "SyncSubscription": "_sync",
    "TransportError": "errors",
    "WorkspaceNotFound": "errors",
    "default_socket_path": "_paths",
    "find_workspace": "_paths",
    "find_workspace_with_reason": "_paths",
}
"""Which submodule defines each public name."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'memd_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"memd_client.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "__version__"])
