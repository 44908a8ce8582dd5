"""Where the daemon's socket lives; the daemon and every client use this one rule.

Order: an explicit path, else `$MEMD_SOCKET`, else `$XDG_RUNTIME_DIR/memd/memd.sock`, else on
macOS `~/Library/Application Support/memd/memd.sock` (a directory that survives reboots, where a
launchd agent's socket can live), else `/tmp/memd-<uid>/memd.sock`.

Also where memd's user service lives (`memd service install` writes it; clients check it before
starting a daemon of their own): the systemd user unit directory, the launchd plist, and the
socket the service manager listens on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Literal, NamedTuple

SUN_PATH_MAX = 104
"""Bytes in a Unix socket address's path, with its terminating NUL (the smallest: macOS)."""
LAUNCHD_LABEL = "dev.memd.agent"
SYSTEMD_SOCKET_UNIT = "memd.socket"
MEMORY_DIR = ".memory"
"""The folder in a workspace that holds its memory files; it also marks a project root."""


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
        return os.path.join(_home(environ), "Library", "Application Support", "memd", "memd.sock")
    return f"/tmp/memd-{os.getuid() if uid is None else uid}/memd.sock"


def service_socket_path(
    env: Mapping[str, str] | None = None, *, platform: str = sys.platform, uid: int | None = None
) -> str:
    """Return the socket memd's service listens on.

    systemd: `%t/memd/memd.sock`, `%t` being `$XDG_RUNTIME_DIR` (else `/run/user/<uid>`).
    launchd: the default macOS socket path, whatever `$MEMD_SOCKET` says.
    """
    environ = os.environ if env is None else env
    if platform == "darwin":
        without = {name: value for name, value in environ.items() if name != "MEMD_SOCKET"}
        return default_socket_path(env=without, platform="darwin")
    runtime = environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid() if uid is None else uid}"
    return os.path.join(runtime, "memd", "memd.sock")


def systemd_user_dir(env: Mapping[str, str] | None = None) -> str:
    """Return the systemd user unit directory: `$XDG_CONFIG_HOME/systemd/user` (a relative
    `XDG_CONFIG_HOME` is ignored, as the XDG spec says; default `~/.config`)."""
    environ = os.environ if env is None else env
    config = environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(config):
        config = os.path.join(_home(environ), ".config")
    return os.path.join(config, "systemd", "user")


def launchd_plist_path(env: Mapping[str, str] | None = None) -> str:
    """Return `~/Library/LaunchAgents/dev.memd.agent.plist`."""
    environ = os.environ if env is None else env
    return os.path.join(_home(environ), "Library", "LaunchAgents", f"{LAUNCHD_LABEL}.plist")


def enabled_service(
    env: Mapping[str, str] | None = None, *, platform: str = sys.platform
) -> str | None:
    """Describe memd's service if it is installed and enabled here, else return None.

    systemd: `memd.socket` is enabled (its `sockets.target.wants` link exists; unit files left
    by a failed install do not count). launchd: the agent's plist is installed.
    """
    if platform == "darwin":
        plist = launchd_plist_path(env)
        return f"the LaunchAgent {plist}" if os.path.exists(plist) else None
    wants = os.path.join(systemd_user_dir(env), "sockets.target.wants", SYSTEMD_SOCKET_UNIT)
    return f"{SYSTEMD_SOCKET_UNIT} is enabled" if os.path.lexists(wants) else None


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


WorkspaceFoundBy = Literal["memory", "git", "start"]
"""How `find_workspace_with_reason` found a project root: the directory holds `.memory`
("memory"), holds `.git` but no `.memory` ("git"), or neither it nor any ancestor holds either,
so the start directory itself is used ("start")."""


class FoundWorkspace(NamedTuple):
    """A project root and how it was found."""

    path: str
    """Absolute path of the project root."""
    found_by: WorkspaceFoundBy


def find_workspace_with_reason(start: str | os.PathLike[str] | None = None) -> FoundWorkspace:
    """Return the project root for `start` (default: the current directory) and how it was found.

    The root is the nearest ancestor (or `start` itself) holding `.memory` or `.git`, else
    `start`; `.memory` wins over `.git` in the same directory. The path is absolute. Only
    reads the file system (existence checks), never changes it.
    """
    origin = os.path.abspath(os.fspath(start) if start is not None else os.getcwd())
    current = origin
    while True:
        if os.path.exists(os.path.join(current, MEMORY_DIR)):
            return FoundWorkspace(current, "memory")
        if os.path.exists(os.path.join(current, ".git")):
            return FoundWorkspace(current, "git")
        parent = os.path.dirname(current)
        if parent == current:
            return FoundWorkspace(origin, "start")
        current = parent


def find_workspace(start: str | os.PathLike[str] | None = None) -> str:
    """Return the project root for `start` (default: the current directory).

    That is the nearest ancestor (or `start` itself) holding `.memory/` or `.git`, else `start`
    (`find_workspace_with_reason` also says which). The result is absolute.
    """
    return find_workspace_with_reason(start).path
