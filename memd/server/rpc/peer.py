"""Who is connecting: the peer's uid from the socket (SO_PEERCRED on Linux, LOCAL_PEERCRED on
macOS and the BSDs), and the rule of whom a daemon serves.

Rule: only the daemon's own uid is served (root too where `allow_root` is set); a refused peer is
told why in one error frame and closed, and every refusal is logged with its uid.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import sys

from anyio.abc import SocketAttribute, SocketStream

from memd.server.rpc.dispatch import error_frame
from memd_client.errors import InvalidRequest

logger = logging.getLogger(__name__)


def peer_allowed(peer: int | None, own: int, *, allow_root: bool) -> bool:
    """Return True if a client running as uid `peer` may be served by a daemon running as uid
    `own`: the same user, or root where `allow_root` is set. None (an OS that cannot tell the
    peer's uid) is allowed: there the socket's 0600 mode and 0700 directory keep others out."""
    return peer is None or peer == own or (peer == 0 and allow_root)


def refuse_peer(stream: SocketStream, peer: int | None) -> None:
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


def peer_uid(stream: SocketStream) -> int | None:
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
