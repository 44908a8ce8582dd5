"""Exactly one daemon per socket: the single-instance lock and socket-path preparation.

Rules:
- A missing socket directory is created with mode 0700 (an existing one is left alone).
- The lock is a `filelock.FileLock` (flock) on `<socket>.lock` with `thread_local=False`, so it
  may be released from another worker thread; the kernel drops it if the daemon dies.
- Holding the lock, a live daemon that still answers on the socket means "already running";
  a socket file nobody answers on is stale and is removed. A live socket is never unlinked,
  and neither is a socket a service manager passed us (it owns that path).
- `<socket>.pid` names the holder, for the "already running" message.
"""

from __future__ import annotations

import contextlib
import os
import stat

import filelock

from memd.paths import read_pid
from memd_client._autostart import answers
from memd_client._paths import SUN_PATH_MAX


class AlreadyRunning(Exception):
    """Raised when another memd already serves the socket."""


class SocketPathError(Exception):
    """Raised when the socket path cannot be used (too long, not a socket, ...)."""


class InstanceLock:
    """The lock that makes one daemon the only one serving `socket_path`."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.pid_path = socket_path + ".pid"
        self._lock = filelock.FileLock(socket_path + ".lock", timeout=0, thread_local=False)

    def acquire(self, owns_socket: bool = True) -> None:
        """Take the lock and, if memd binds the socket itself (`owns_socket`), clear a stale
        socket file (blocking; run it in a thread).

        Raises:
            AlreadyRunning: another daemon holds the lock or answers on the socket.
            SocketPathError: the path is too long or holds something that is not a socket.
        """
        prepare_socket_dir(self.socket_path)
        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise AlreadyRunning(self._running_message()) from None
        try:
            if owns_socket:
                remove_stale_socket(self.socket_path)
        except BaseException:
            self._lock.release()
            raise
        with open(self.pid_path, "w", encoding="ascii") as handle:
            handle.write(f"{os.getpid()}\n")

    def release(self) -> None:
        """Remove the pid file and drop the lock."""
        with contextlib.suppress(OSError):
            os.unlink(self.pid_path)
        self._lock.release()

    def _running_message(self) -> str:
        pid = read_pid(self.socket_path)
        holder = f" (pid {pid})" if pid is not None else ""
        return (
            f"memd is already running on {self.socket_path}{holder}; use that daemon, stop it "
            "first, or pass --socket to serve on another path."
        )


def prepare_socket_dir(socket_path: str) -> None:
    """Create the socket's directory with mode 0700 if it does not exist.

    Raises:
        SocketPathError: the path does not fit in a Unix socket address.
    """
    if len(os.fsencode(socket_path)) >= SUN_PATH_MAX:
        raise SocketPathError(
            f"Socket path {socket_path} is too long for a Unix socket (max {SUN_PATH_MAX - 1} "
            "bytes); pass a shorter --socket."
        )
    directory = os.path.dirname(os.path.abspath(socket_path))
    if not os.path.isdir(directory):
        os.makedirs(directory, mode=0o700, exist_ok=True)
        os.chmod(directory, 0o700)
    check_socket_dir(directory)


def check_socket_dir(directory: str, *, euid: int | None = None) -> None:
    """Refuse a socket directory another user could use to swap the socket: one that is a
    symbolic link, belongs to someone else, or that others may write to.

    Raises:
        SocketPathError: saying which, and what to do.
    """
    me = os.geteuid() if euid is None else euid
    st = os.lstat(directory)
    if stat.S_ISLNK(st.st_mode):
        raise SocketPathError(
            f"The socket directory {directory} is a symbolic link; pass --socket (or MEMD_SOCKET) "
            "in a real, private directory of your own, such as one under $XDG_RUNTIME_DIR."
        )
    if st.st_uid != me:
        raise SocketPathError(
            f"The socket directory {directory} belongs to uid {st.st_uid}, not to you (uid "
            f"{me}); another user could take the socket over: pass --socket (or MEMD_SOCKET) "
            "in a private directory of your own, such as one under $XDG_RUNTIME_DIR."
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise SocketPathError(
            f"The socket directory {directory} is writable by other users (mode "
            f"{stat.S_IMODE(st.st_mode):04o}); pass --socket (or MEMD_SOCKET) in a private "
            "directory of your own, such as one under $XDG_RUNTIME_DIR."
        )


def remove_stale_socket(socket_path: str) -> None:
    """Remove `socket_path` if it is a socket nobody answers on.

    Raises:
        AlreadyRunning: a process answers on the socket.
        SocketPathError: the path exists and is not a socket.
    """
    try:
        st = os.lstat(socket_path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise SocketPathError(
            f"{socket_path} exists and is not a socket; move it away or pass another --socket."
        )
    if not answers(socket_path):
        os.unlink(socket_path)
        return
    raise AlreadyRunning(
        f"Another process is answering on {socket_path}; stop it or pass --socket to serve on "
        "another path."
    )
