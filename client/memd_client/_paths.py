"""Where the daemon's socket lives; the daemon and every client use this one rule.

Order: an explicit path, else `$MEMD_SOCKET`, else `$XDG_RUNTIME_DIR/memd/memd.sock`, else on
macOS `~/Library/Application Support/memd/memd.sock` (a directory that survives reboots, where a
launchd agent's socket can live), else `/tmp/memd-<uid>/memd.sock`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

SUN_PATH_MAX = 104
"""Bytes in a Unix socket address's path, with its terminating NUL (the smallest: macOS)."""


def default_socket_path(
    explicit: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    uid: int | None = None,
    platform: str = sys.platform,
) -> str:
    """Return the socket path memd uses, following the documented order."""
    if explicit:
        return os.fspath(explicit)
    environ = os.environ if env is None else env
    if environ.get("MEMD_SOCKET"):
        return environ["MEMD_SOCKET"]
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "memd", "memd.sock")
    if platform == "darwin":
        home = environ.get("HOME") or os.path.expanduser("~")
        return os.path.join(home, "Library", "Application Support", "memd", "memd.sock")
    return f"/tmp/memd-{os.getuid() if uid is None else uid}/memd.sock"


def find_workspace(start: str | os.PathLike[str] | None = None) -> str:
    """Return the project root for `start` (default: the current directory).

    That is the nearest ancestor (or `start` itself) holding `.memory/` or `.git`, else `start`.
    The result is absolute.
    """
    origin = os.path.abspath(os.fspath(start) if start is not None else os.getcwd())
    current = origin
    while True:
        if any(os.path.exists(os.path.join(current, marker)) for marker in (".memory", ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return origin
        current = parent
