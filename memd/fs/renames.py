"""Renames that let a writer see what it replaced: swap and create-only.

A plain `rename(temp, name)` replaces whatever is at `name`, so a writer that checked the file
and then renamed over it cannot tell whether someone else's file landed in between. These close
that gap where the kernel allows it:

- `swap(dir_fd, a, b)` exchanges two names atomically (Linux `renameat2(RENAME_EXCHANGE)`, macOS
  `renameatx_np(RENAME_SWAP)`): after it, the file that was at `b` is at `a`, where the writer can
  check it is the version it read, and put it back if it is not.
- `create_only(dir_fd, a, b)` gives the file `a` the name `b` only if nothing is at `b` (a hard
  link, which fails if the name exists, then `a` is unlinked), so a file created meanwhile (by
  git, by an editor) is never replaced.

Both return False where the platform or the file system does not support them (the caller then
falls back to a check right before a plain rename); they raise OSError for anything else
(`FileNotFoundError` when `b` vanished before a swap, `FileExistsError` when `b` appeared before a
create). Both block.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from collections.abc import Callable

__all__ = ["create_only", "swap"]

_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}

_Rename = Callable[[int, bytes, int, bytes, int], int]


def _load() -> tuple[_Rename | None, int]:
    """Return libc's rename-with-flags function and its swap flag, if it has one."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None, 0
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        function, flag = libc.renameat2, 2  # RENAME_EXCHANGE
    elif sys.platform == "darwin" and hasattr(libc, "renameatx_np"):
        function, flag = libc.renameatx_np, 2  # RENAME_SWAP
    else:
        return None, 0
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function, flag


_RENAME, _SWAP = _load()
_NO_HARD_LINKS = {errno.EPERM, errno.EMLINK, *_UNSUPPORTED}


def swap(dir_fd: int, a: str, b: str) -> bool:
    """Exchange the files named `a` and `b` in the directory `dir_fd`; False if unsupported.

    Raises:
        FileNotFoundError: either name does not exist.
        OSError: anything else the kernel refused.
    """
    if _RENAME is None:
        return False
    if _RENAME(dir_fd, os.fsencode(a), dir_fd, os.fsencode(b), _SWAP) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False  # this file system (tried again next time: another may support it)
    raise OSError(code, os.strerror(code), b)


def create_only(dir_fd: int, a: str, b: str) -> bool:
    """Give the file `a` in the directory `dir_fd` the name `b` unless `b` exists, and drop the
    name `a`; False (nothing done) if the file system has no hard links.

    Raises:
        FileExistsError: `b` exists.
        OSError: anything else the kernel refused.
    """
    try:
        os.link(a, b, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in _NO_HARD_LINKS:
            return False
        raise
    os.unlink(a, dir_fd=dir_fd)
    return True
