"""Socket activation end to end: a real `memd serve` adopts a socket passed as fd 3 with
LISTEN_FDS/LISTEN_PID, tells a test-owned NOTIFY_SOCKET, exits when idle, reloads on SIGHUP, and
never unlinks the socket it was given."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import READY_TIMEOUT, STOP_TIMEOUT, start_daemon

# Puts the socket at fd 3 and sets LISTEN_PID to its own pid, then becomes `memd serve`
# (exec keeps the pid), as systemd does for a service started by its socket unit.
LAUNCHER = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); "
    "os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS='1', LISTEN_FDNAMES='memd.socket'); "
    "os.execv(sys.executable, [sys.executable, '-m', 'memd', 'serve', *sys.argv[2:]])"
)


class Notifications:
    """A test-owned NOTIFY_SOCKET: collects the datagrams the daemon sends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.seen: list[str] = []

    def wait_for(self, field: str, process: subprocess.Popen[bytes], log: Path) -> list[str]:
        """Read datagrams until one holds `field` (e.g. "READY=1"); return that datagram's lines."""
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            self.sock.settimeout(0.2)
            try:
                message = self.sock.recv(4096).decode()
            except TimeoutError:
                if process.poll() is not None and field != "STOPPING=1":
                    raise AssertionError(f"memd exited early:\n{log.read_text()}") from None
                continue
            self.seen.append(message)
            lines = message.split("\n")
            if field in lines:
                return lines
        raise AssertionError(f"no {field} within {READY_TIMEOUT} s; log:\n{log.read_text()}")


class Activated:
    """A daemon started the way systemd starts it, with its socket, notify socket and log."""

    def __init__(self, directory: Path, *args: str) -> None:
        self.socket_path = directory / "act.sock"
        self.log = directory / "act.log"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.socket_path))
        self.socket_path.chmod(0o600)
        self.listener.listen()
        self.notifications = Notifications(directory / "act.notify")
        env = dict(os.environ, NOTIFY_SOCKET=str(self.notifications.path))
        env.pop("MEMD_SOCKET", None)
        fd = self.listener.fileno()
        with self.log.open("wb") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-c", LAUNCHER, str(fd), *args],
                pass_fds=(fd,),
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env,
            )

    def wait_for(self, field: str) -> list[str]:
        return self.notifications.wait_for(field, self.process, self.log)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=STOP_TIMEOUT)

    def close(self) -> None:
        self.stop()
        self.listener.close()
        self.notifications.sock.close()


Start = Callable[..., Activated]


@pytest.fixture
def activated(short_tmp: Path) -> Iterator[Start]:
    """Start socket-activated daemons (with extra `memd serve` arguments); stopped on teardown."""
    started: list[Activated] = []

    def start(*args: str) -> Activated:
        daemon = Activated(short_tmp, *args)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        daemon.close()


def test_adopts_fd_3_reports_ready_and_never_unlinks_the_socket(
    activated: Start, workspace: Path
) -> None:
    daemon = activated()
    ready = daemon.wait_for("READY=1")
    assert any(line.startswith(f"STATUS=serving on {daemon.socket_path}") for line in ready)
    with Client(daemon.socket_path, workspace=workspace, timeout=10) as client:
        client.store(category="Decision", content="Socket activation hands memd its socket.")
        assert client.query("activation").results[0].category == "Decision"
        status = client.status()
        assert status.socket == str(daemon.socket_path)
        assert status.pid == daemon.process.pid
    assert daemon.stop() == 0, daemon.log.read_text()
    assert daemon.socket_path.exists()  # systemd owns the path
    assert any("STOPPING=1" in message.split("\n") for message in daemon.notifications.seen) or (
        "STOPPING=1" in daemon.wait_for("STOPPING=1")
    )
    assert "socket-activated" in daemon.log.read_text()


def test_idle_exit_waits_for_clients_then_exits_0(activated: Start, workspace: Path) -> None:
    daemon = activated("--idle-exit", "2")
    daemon.wait_for("READY=1")
    with Client(daemon.socket_path, workspace=workspace, timeout=10) as client:
        client.stats()
        with pytest.raises(subprocess.TimeoutExpired):
            daemon.process.wait(timeout=3)  # a connected client keeps it up
        client.stats()
    assert daemon.process.wait(timeout=STOP_TIMEOUT) == 0, daemon.log.read_text()
    assert "no clients for 2 s" in daemon.log.read_text()
    assert daemon.socket_path.exists()
    # A connection queued while memd is down waits in the socket for the next start.
    late = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    late.connect(str(daemon.socket_path))
    late.close()


def test_idle_exit_needs_socket_activation(short_tmp: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "memd",
            "serve",
            "--socket",
            str(short_tmp / "s"),
            "--idle-exit",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "idle exit needs a socket passed by systemd or launchd" in result.stderr
    assert "Traceback" not in result.stderr


def test_idle_exit_from_the_config_file_is_ignored_without_activation(
    short_tmp: Path, workspace: Path
) -> None:
    config = short_tmp / "memd.toml"
    config.write_text("idle_exit = 600\n")
    daemon = start_daemon(short_tmp, "--config", str(config))
    try:
        with Client(daemon.socket_path, workspace=workspace, timeout=10) as client:
            assert client.stats().total == 0
    finally:
        assert daemon.stop() == 0
    assert "idle_exit ignored: idle exit needs a socket passed by systemd" in daemon.stderr()


def test_sighup_reloads_the_config_file_and_keeps_serving(
    activated: Start, short_tmp: Path, workspace: Path
) -> None:
    config = short_tmp / "memd.toml"
    config.write_text("lock_timeout = 10\n")
    daemon = activated("--config", str(config))
    daemon.wait_for("READY=1")
    config.write_text('lock_timeout = 2.5\nlog_level = "debug"\n')
    daemon.process.send_signal(signal.SIGHUP)
    assert "RELOADING=1" in daemon.wait_for("RELOADING=1")
    daemon.wait_for("READY=1")
    log = daemon.log.read_text()
    assert "lock_timeout 10.0 -> 2.5" in log
    assert "log_level INFO -> DEBUG" in log
    config.write_text("lock_timeout = -1\n")
    daemon.process.send_signal(signal.SIGHUP)
    daemon.wait_for("RELOADING=1")
    daemon.wait_for("READY=1")
    assert "reload failed, keeping the running settings" in daemon.log.read_text()
    with Client(daemon.socket_path, workspace=workspace, timeout=10) as client:
        assert client.stats().total == 0
    assert daemon.stop() == 0


@pytest.mark.skipif(
    shutil.which("systemd-socket-activate") is None, reason="needs systemd-socket-activate"
)
def test_the_first_connection_starts_memd_under_systemd_socket_activate(
    short_tmp: Path, workspace: Path
) -> None:
    socket_path = short_tmp / "ssa.sock"
    notifications = Notifications(short_tmp / "ssa.notify")
    log = short_tmp / "ssa.log"
    env = dict(os.environ)
    env.pop("MEMD_SOCKET", None)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                "systemd-socket-activate",
                "--listen",
                str(socket_path),
                f"--setenv=NOTIFY_SOCKET={notifications.path}",
                # systemd-socket-activate passes no other variable: keep the tree under test.
                *(f"--setenv={name}={env[name]}" for name in ("PYTHONPATH",) if name in env),
                sys.executable,
                "-m",
                "memd",
                "serve",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while not socket_path.exists():
            assert time.monotonic() < deadline, log.read_text()
            assert process.poll() is None, log.read_text()
            time.sleep(0.01)
        # memd is not running yet; this request is what starts it.
        with Client(socket_path, workspace=workspace, timeout=30) as client:
            result = client.store(category="Quirk", content="The first request starts memd.")
            assert result.action == "stored"
        notifications.wait_for("READY=1", process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_TIMEOUT) == 0, log.read_text()
        notifications.sock.close()
