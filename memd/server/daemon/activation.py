"""Socket activation: adopt the listening socket that systemd or launchd holds for memd.

Rules:
- systemd (`sd_listen_fds(3)`, without libsystemd): when `$LISTEN_PID` is this process's pid,
  `$LISTEN_FDS` sockets start at fd 3. memd adopts the first, marks every passed fd
  close-on-exec, closes any extra ones (with a warning), and unsets `LISTEN_PID`, `LISTEN_FDS`
  and `LISTEN_FDNAMES` so that no child inherits them.
- launchd (macOS): `launch_activate_socket("Listener")` from libSystem, called once through
  ctypes. `ESRCH` (not a launchd job) and `ENOENT` (a job without that socket, e.g. memd run from
  a terminal) mean "not activated": memd binds its own socket.
- The adopted fd must be a listening `AF_UNIX` stream socket; anything else is an
  `ActivationError` that says which setting to fix.
- The service manager owns the socket's path: memd never unlinks an inherited socket, and never
  calls shutdown(2) on it (systemd shares the same socket).
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import socket
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from memd.paths import LAUNCHD_SOCKET_NAME

logger = logging.getLogger(__name__)

LISTEN_FDS_START = 3
LIBSYSTEM = "/usr/lib/libSystem.B.dylib"
_SYSTEMD_VARIABLES = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


class ActivationError(Exception):
    """Raised when a service manager passed a socket memd cannot serve on."""


@dataclass(frozen=True)
class InheritedSocket:
    """A listening socket handed over by a service manager, and the path it listens on."""

    sock: socket.socket
    path: str
    manager: Literal["systemd", "launchd"]


def inherited_socket(
    environ: MutableMapping[str, str] | None = None,
    *,
    platform: str = sys.platform,
    libsystem: Any = None,
) -> InheritedSocket | None:
    """Return the socket systemd or launchd passed to this process, or None if none was.

    `libsystem` replaces libSystem (tests pass ctypes function pointers with the real
    signatures).

    Raises:
        ActivationError: a socket was passed but is not a listening Unix stream socket.
    """
    fds = systemd_fds(os.environ if environ is None else environ, os.getpid())
    if fds:
        return _adopt(fds, "systemd")
    if platform == "darwin":
        fds = launchd_fds(LAUNCHD_SOCKET_NAME, libsystem)
        if fds:
            return _adopt(fds, "launchd")
    return None


def systemd_fds(environ: MutableMapping[str, str], pid: int) -> list[int]:
    """Return the fds systemd passed to process `pid` (none if the variables are for another).

    The three `LISTEN_*` variables are removed from `environ` whenever they are present.

    Raises:
        ActivationError: `LISTEN_FDS` is not a positive number.
    """
    listen_pid = environ.get("LISTEN_PID")
    listen_fds = environ.get("LISTEN_FDS")
    for name in _SYSTEMD_VARIABLES:
        environ.pop(name, None)
    if listen_pid is None or listen_fds is None or listen_pid.strip() != str(pid):
        return []
    try:
        count = int(listen_fds)
    except ValueError:
        count = -1
    if count < 1:
        raise ActivationError(
            f"systemd passed LISTEN_FDS={listen_fds!r}, which is not a number of sockets; "
            "check memd.socket's ListenStream= setting."
        )
    return list(range(LISTEN_FDS_START, LISTEN_FDS_START + count))


def launchd_fds(name: str, libsystem: Any = None) -> list[int]:
    """Return the fds launchd holds for this job's socket `name` (empty if not a launchd job).

    Raises:
        ActivationError: launchd refused for another reason (e.g. asked twice).
    """
    lib = libsystem if libsystem is not None else ctypes.CDLL(LIBSYSTEM, use_errno=True)
    activate = lib.launch_activate_socket
    activate.argtypes = [
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.POINTER(ctypes.c_int)),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    activate.restype = ctypes.c_int
    fds = ctypes.POINTER(ctypes.c_int)()
    count = ctypes.c_size_t(0)
    error = activate(name.encode(), ctypes.byref(fds), ctypes.byref(count))
    if error in (errno.ESRCH, errno.ENOENT):
        return []
    if error != 0:
        raise ActivationError(
            f"launchd could not hand over socket {name!r} ({os.strerror(error)}); check the "
            "Sockets key of memd's LaunchAgent plist."
        )
    try:
        return [fds[i] for i in range(count.value)]
    finally:
        lib.free.argtypes = [ctypes.c_void_p]
        lib.free.restype = None
        lib.free(ctypes.cast(fds, ctypes.c_void_p))


def _adopt(fds: list[int], manager: Literal["systemd", "launchd"]) -> InheritedSocket:
    """Keep the first fd as the listener; close the rest."""
    for fd in fds:
        os.set_inheritable(fd, False)
    for extra in fds[1:]:
        logger.warning("%s passed %d sockets; memd serves only the first", manager, len(fds))
        os.close(extra)
    first = fds[0]
    try:
        sock = socket.socket(fileno=first)
    except OSError as exc:
        raise ActivationError(
            f"{manager} passed fd {first}, which is not a socket ({exc}); "
            f"check {_setting(manager)}."
        ) from None
    listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM or not listening:
        sock.close()
        raise ActivationError(
            f"{manager} passed fd {first}, which is not a listening Unix stream socket; "
            f"check {_setting(manager)}."
        )
    path = sock.getsockname()
    if not isinstance(path, str) or not path:
        path = f"fd {first} from {manager}"
    return InheritedSocket(sock=sock, path=path, manager=manager)


def _setting(manager: str) -> str:
    if manager == "systemd":
        return "memd.socket's ListenStream= (it must be a path, with Accept=no)"
    return "the plist's Sockets entry (SockPathName, SockType stream)"
