"""Linux inotify, through ctypes: the one instance the whole daemon watches with.

Rules:
- One instance (`Inotify.open`) serves every workspace: the kernel allows a user only
  `fs.inotify.max_user_instances` (often 128) of them, shared with editors and build tools, so
  memd never holds more than one, however many workspaces it serves.
- The descriptor is non-blocking and close-on-exec; `read_events` drains what is queued, at most
  READ_LIMIT bytes a call, and never blocks (the caller waits for readability on the event loop).
  It reads into one buffer kept by the instance: a fresh READ_LIMIT-byte buffer a call would be
  an mmap and munmap for every wake-up.
- Every watch is added with IN_MASK_ADD, so two workspaces whose directories are one inode (a
  bind mount, a workspace inside another's `.memory`) never narrow each other's mask; the
  watcher filters events by role and name.
- Errors are `OSError`s with the kernel's errno: ENOSPC when `fs.inotify.max_user_watches` is
  reached, ENOENT/ENOTDIR when the directory is missing.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
from collections.abc import Callable
from typing import NamedTuple

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_MASK_ADD = 0x20000000
IN_ISDIR = 0x40000000

IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

SELF_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT
"""The watched directory itself was deleted, renamed away or unmounted (or the watch ended)."""

DIRECTORY_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
    | IN_MASK_ADD
)
"""What a watch asks for: file contents, names coming and going, and the directory itself; a
symbolic link is never followed (a symlinked `.memory` is not watched, like a missing one)."""

READ_LIMIT = 256 * 1024
"""The most a `read_events` call reads: a burst of events is handled in slices."""

_HEADER = struct.Struct("=iIII")  # wd, mask, cookie, len


class Event(NamedTuple):
    """One inotify event: `name` is the entry's name in the watched directory (b"" for the
    directory itself); `wd` is -1 for IN_Q_OVERFLOW."""

    wd: int
    mask: int
    name: bytes


def parse_events(data: bytes | memoryview) -> list[Event]:
    """Return the events in a buffer read from an inotify descriptor (a truncated tail, which
    the kernel never produces, is ignored)."""
    events: list[Event] = []
    offset = 0
    while offset + _HEADER.size <= len(data):
        wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        if start + length > len(data):
            break
        name = bytes(data[start : start + length]).split(b"\0", 1)[0]
        events.append(Event(wd, mask, name))
        offset = start + length
    return events


class _Libc(NamedTuple):
    init1: Callable[..., int]
    add_watch: Callable[..., int]
    rm_watch: Callable[..., int]


def _libc() -> _Libc | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init1, add_watch, rm_watch = (
            libc.inotify_init1,
            libc.inotify_add_watch,
            libc.inotify_rm_watch,
        )
    except (OSError, AttributeError):
        return None
    init1.argtypes, init1.restype = [ctypes.c_int], ctypes.c_int
    add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    add_watch.restype = ctypes.c_int
    rm_watch.argtypes, rm_watch.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return _Libc(init1, add_watch, rm_watch)


_LIBC = _libc()


def available() -> bool:
    """Return True if this system has inotify (Linux with a C library that exposes it)."""
    return _LIBC is not None


def _error(path: str | None = None) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, os.strerror(code), path) if path else OSError(code, os.strerror(code))


class Inotify:
    """One inotify instance: add and remove directory watches, read events."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray(READ_LIMIT)

    @classmethod
    def open(cls) -> Inotify:
        """Create an instance.

        Raises:
            OSError: no inotify here (ENOSYS), or the user's instances are used up (EMFILE).
        """
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "inotify is not available on this system")
        fd = _LIBC.init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise _error()
        return cls(fd)

    def add_watch(self, path: str, mask: int = DIRECTORY_MASK) -> int:
        """Watch the directory `path` (or add to its mask); return its watch descriptor, which
        is the same for every path to one inode.

        Raises:
            OSError: ENOSPC (no watches left), ENOENT/ENOTDIR (no such directory), EACCES...
        """
        assert _LIBC is not None
        wd = int(_LIBC.add_watch(self.fd, os.fsencode(path), mask))
        if wd < 0:
            raise _error(path)
        return wd

    def rm_watch(self, wd: int) -> None:
        """Stop watching `wd`; a watch the kernel already ended (EINVAL) is no error."""
        assert _LIBC is not None
        _LIBC.rm_watch(self.fd, wd)

    def read_events(self) -> list[Event]:
        """Return the events queued now (none if there are none); never blocks."""
        try:
            size = os.readv(self.fd, [self._buffer])
        except BlockingIOError:
            return []
        return parse_events(memoryview(self._buffer)[:size])

    def close(self) -> None:
        """Close the instance; the kernel drops every watch with it."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
