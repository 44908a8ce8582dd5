"""Files memd keeps only to save work (kept search indexes, embedding vectors).

Rules:
- Written atomically (a temp file in the same directory, then a rename), never fsynced: a
  cache lost in a crash costs a rebuild, nothing else.
- The directory is created private (0700), the file 0600.
- Blocking: call it from a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import secrets


def write_cache_file(target: str, data: bytes) -> None:
    """Replace `target` with `data` atomically (not durably).

    Raises:
        OSError: the directory or the file could not be written; `target` is unchanged.
    """
    directory = os.path.dirname(target)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    suffix = os.path.splitext(target)[1]
    temp = os.path.join(directory, f".tmp-{secrets.token_hex(8)}{suffix}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with open(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
