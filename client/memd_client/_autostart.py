"""Start a daemon on demand, for clients created with `autostart=True`.

Rules:
- Only when nothing listens on the socket (`ENOENT`: no socket file, `ECONNREFUSED`: a stale
  one). Any other failure (permissions, a path too long) is reported, not papered over.
- Never beside an installed service: if memd's systemd socket unit is enabled (or its launchd
  agent installed) and the socket is the one it listens on, the service manager owns the socket;
  the client says how to start the service instead of starting a rival daemon.
- Race-free: starters take an exclusive lock (`<socket>.autostart`, flock) and check the socket
  again once they hold it, so clients starting at once produce one daemon; the daemon's own
  single-instance lock backs this up.
- The daemon is `memd serve --background --socket PATH`: it detaches (no zombie, no controlling
  terminal), and the command returns only once the daemon serves or has failed; its stderr
  carries the reason. Its readiness wait is what is left of the autostart timeout, and memd stops
  a daemon that is not ready by then, so a client that gives up leaves nothing running. A
  started daemon is logged (logger `memd_client`, INFO) with its pid and log file.
- The daemon gets the client's environment minus the service-manager variables (NOTIFY_SOCKET,
  LISTEN_*), so it never talks to a service manager that started the client.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import sys
import time
from collections.abc import Iterator, Mapping

from memd_client._log import logger
from memd_client._paths import (
    LAUNCHD_LABEL,
    SYSTEMD_SOCKET_UNIT,
    enabled_service,
    service_socket_path,
)
from memd_client.errors import DaemonUnavailable

AUTOSTART_TIMEOUT = 15.0
"""Seconds a client waits for a daemon to come up, whether it starts it or another client does."""

BACKSTOP = 10.0
"""Extra seconds granted to `memd serve --background` past its own readiness wait."""
_NOBODY_LISTENING = {errno.ENOENT, errno.ECONNREFUSED}
_MANAGER_VARIABLES = ("NOTIFY_SOCKET", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")
_POLL = 0.02


def may_start(exc: OSError) -> bool:
    """Return True if a failed connect means "no daemon", so starting one can help."""
    return exc.errno in _NOBODY_LISTENING


def start_daemon(socket_path: str, *, timeout: float = AUTOSTART_TIMEOUT) -> None:
    """Make sure a daemon serves `socket_path`, starting one if needed (blocking).

    Raises:
        DaemonUnavailable: a service is installed, memd is not installed, or the daemon did not
            come up in time; the message says what to do.
    """
    import subprocess  # here, not at import: most clients never start a daemon

    deadline = time.monotonic() + timeout
    service = installed_service(socket_path)
    if service is not None:
        raise DaemonUnavailable(
            f"No memd daemon is answering on {socket_path}, and memd runs as a service here "
            f"({service}); start it with {service_start_hint()} or see `memd service status`."
        )
    command = daemon_command()
    directory = os.path.dirname(os.path.abspath(socket_path))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with _exclusive(socket_path + ".autostart", deadline):
            if answers(socket_path):
                return
            # memd's own wait ends first, and stops a daemon that is not ready by then.
            ready_wait = max(deadline - time.monotonic(), 0.1)
            background = ["serve", "--background", "--socket", socket_path]
            outcome = subprocess.run(
                [*command, *background, "--ready-timeout", f"{ready_wait:.3f}"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                env=_daemon_environment(os.environ),
                timeout=ready_wait + BACKSTOP,
                check=False,
            )
    except subprocess.TimeoutExpired:
        raise DaemonUnavailable(
            f"memd did not start on {socket_path} within {timeout:g} s; run `memd serve` "
            "to see why."
        ) from None
    except OSError as exc:
        raise DaemonUnavailable(
            f"Could not start memd on {socket_path} ({exc.strerror or exc}); run `memd serve` "
            "to see why."
        ) from None
    if answers(socket_path):
        said = outcome.stdout.strip() or f"memd is serving on {socket_path}"
        logger().info("started a daemon: %s", said)
        return
    reason = (outcome.stderr.strip().splitlines() or ["it exited without a word"])[-1]
    reason = reason.removeprefix("memd: ")
    raise DaemonUnavailable(f"Could not start memd on {socket_path}: {reason}")


def answers(socket_path: str) -> bool:
    """Return True if something accepts connections on `socket_path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(socket_path)
        except OSError:
            return False
    return True


def daemon_command() -> list[str]:
    """Return how to run `memd`: this interpreter's own memd if it has one, else `memd` on PATH.

    Raises:
        DaemonUnavailable: memd (the daemon package) is not installed where this client looks.
    """
    import importlib.util
    import shutil

    if importlib.util.find_spec("memd") is not None:
        return [sys.executable, "-m", "memd"]
    found = shutil.which("memd")
    if found is not None:
        return [found]
    raise DaemonUnavailable(
        "No memd daemon is running and the memd daemon is not installed for this Python or on "
        "PATH; install the memd-daemon distribution (see memd's README, Install) or start a "
        "daemon yourself with `memd serve`."
    )


def installed_service(
    socket_path: str, env: Mapping[str, str] | None = None, platform: str = sys.platform
) -> str | None:
    """Describe memd's service if it is enabled and owns `socket_path` (the socket its service
    manager listens on), else return None."""
    service = enabled_service(env, platform=platform)
    if service is None:
        return None
    owned = service_socket_path(env, platform=platform)
    return service if os.path.abspath(socket_path) == os.path.abspath(owned) else None


def service_start_hint() -> str:
    """Return the command that starts memd's installed service on this platform."""
    if sys.platform == "darwin":
        return f"`launchctl kickstart gui/$(id -u)/{LAUNCHD_LABEL}`"
    return f"`systemctl --user start {SYSTEMD_SOCKET_UNIT}`"


def _daemon_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in environ.items() if name not in _MANAGER_VARIABLES}


@contextlib.contextmanager
def _exclusive(path: str, deadline: float) -> Iterator[None]:
    """Hold an exclusive flock on `path` (created 0600), waiting no later than `deadline`."""
    import subprocess

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired("memd serve --background", 0) from None
                time.sleep(_POLL)
        yield
    finally:
        os.close(fd)
