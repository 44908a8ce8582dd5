"""Every transport failure becomes a memd error here, and only here.

Rule: `Client` (blocking) and `AsyncClient` (anyio) both import their transport errors from this
module and build none of their own, so the same failure reads the same in both. It imports
neither shell and never anyio: the async shell passes its own broken-stream exceptions in.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from memd_client import _autostart
from memd_client._paths import SUN_PATH_MAX
from memd_client.errors import (
    ConnectionLost,
    DaemonUnavailable,
    MemdError,
    ProtocolViolation,
    RequestTimeout,
)


@contextlib.contextmanager
def transport_errors(
    method: str, timeout: float, broken: tuple[type[Exception], ...] = (OSError,)
) -> Iterator[None]:
    """Turn a timeout into `RequestTimeout` and a `broken` connection into `ConnectionLost`."""
    try:
        yield
    except MemdError:
        raise
    except TimeoutError:
        raise timed_out(method, timeout) from None
    except broken as exc:
        raise lost(method, exc) from None


def unavailable(path: str, exc: OSError) -> DaemonUnavailable:
    """Return the error for a daemon that cannot be reached at `path`, saying what to do."""
    if len(os.fsencode(path)) >= SUN_PATH_MAX:
        return DaemonUnavailable(
            f"Socket path {path} is too long for a Unix socket (max {SUN_PATH_MAX - 1} "
            "bytes); pass a shorter --socket or MEMD_SOCKET."
        )
    reason = exc.strerror or str(exc) or type(exc).__name__
    service = _autostart.installed_service(path)
    if service is not None:
        return DaemonUnavailable(
            f"No memd daemon is answering on {path} ({reason}), and memd runs as a service here "
            f"({service}); start it with {_autostart.service_start_hint()}."
        )
    return DaemonUnavailable(
        f"No memd daemon is answering on {path} ({reason}); start one with `memd serve`."
    )


def timed_out(method: str, timeout: float) -> RequestTimeout:
    """Return the error for a request that got no answer within `timeout` seconds."""
    return RequestTimeout(
        f"memd did not answer {method} within {timeout:g} s; it may be overloaded, or raise the "
        "client timeout."
    )


def lost(method: str, exc: Exception) -> ConnectionLost:
    """Return the error for a connection that broke (`exc`) during `method`."""
    reason = str(exc) or type(exc).__name__
    return ConnectionLost(
        f"The connection to memd broke during {method} ({reason}); retry the request."
    )


def subscription_lost(reason: str) -> ConnectionLost:
    """Return the error for a subscription whose connection broke (`reason` says how)."""
    return ConnectionLost(f"The subscription's connection to memd broke ({reason}).")


def reply_on_subscription() -> ProtocolViolation:
    """Return the error for a reply arriving where only events may come."""
    return ProtocolViolation("The daemon sent a reply on a subscription connection.")
