"""Service-manager notifications: `sd_notify` without libsystemd.

Sends one datagram such as b"READY=1" to `$NOTIFY_SOCKET` (a path, or "@name" for the abstract
namespace). Does nothing when the variable is unset; never raises.
"""

from __future__ import annotations

import logging
import os
import socket

logger = logging.getLogger(__name__)


def notify(state: str) -> bool:
    """Send `state` (e.g. "READY=1") to the service manager; return whether it was sent."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address or address[0] not in "/@":
        return False
    target = "\0" + address[1:] if address[0] == "@" else address
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(target)
            sock.sendall(state.encode())
    except OSError as exc:
        logger.warning("could not notify the service manager at %s: %s", address, exc)
        return False
    return True
