"""What the daemon (`memd.server`) and the service installer (`memd.service`) both know about a
memd: the names service managers know it by, and the files beside its socket.

Rule: this module imports only `memd_client._paths` (where the names the client needs too have
their one home), so either side (and the pure `memd.service.units`) may import it without
importing the other; a name both sides use is defined here, or re-exported from there, once.
"""

from __future__ import annotations

from memd_client._paths import LAUNCHD_LABEL, MEMORY_DIR, SUN_PATH_MAX, SYSTEMD_SOCKET_UNIT

__all__ = [
    "LAUNCHD_LABEL",
    "LAUNCHD_SOCKET_NAME",
    "MEMORY_DIR",
    "SUN_PATH_MAX",
    "SYSTEMD_SERVICE_UNIT",
    "SYSTEMD_SOCKET_UNIT",
    "read_pid",
]

SYSTEMD_SERVICE_UNIT = "memd.service"
LAUNCHD_SOCKET_NAME = "Listener"
"""The `Sockets` key the daemon passes to `launch_activate_socket`."""


def read_pid(socket_path: str) -> int | None:
    """Return the pid in `<socket>.pid` (the daemon that holds or held the lock), or None."""
    try:
        with open(socket_path + ".pid", encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None
