"""What the daemon (`memd.server`) and the service installer (`memd.service`) both know about a
memd: the names service managers know it by, and the files beside its socket.

Rule: this module imports nothing, so either side (and the pure `memd.service.units`) may import
it without importing the other; a name both sides use is defined here once.
"""

from __future__ import annotations

SYSTEMD_SOCKET_UNIT = "memd.socket"
SYSTEMD_SERVICE_UNIT = "memd.service"
LAUNCHD_LABEL = "dev.memd.agent"
LAUNCHD_SOCKET_NAME = "Listener"
"""The `Sockets` key the daemon passes to `launch_activate_socket`."""


def read_pid(socket_path: str) -> int | None:
    """Return the pid in `<socket>.pid` (the daemon that holds or held the lock), or None."""
    try:
        with open(socket_path + ".pid", encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None
