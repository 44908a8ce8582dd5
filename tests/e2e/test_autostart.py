"""Starting a daemon on demand: `memd serve --background`, and clients with autostart that race
to start one (one daemon, every request answered, nothing left behind)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

import memd_client
from memd_client import Client, DaemonUnavailable
from memd_client.aio import AsyncClient
from tests.conftest import serve_processes, stop_serving, wait_gone

FACTS = (
    "Builds run with GNU make.",
    "Tests live under the tests folder.",
    "The daemon speaks JSON-RPC.",
    "Releases are tagged by hand.",
    "Logs go to stderr in the foreground.",
    "Sockets stay private to their user.",
)
CLIENTS = len(FACTS)


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """An environment whose home, state and config directories are private to the test."""
    environ = dict(
        os.environ,
        HOME=str(short_tmp / "home"),
        XDG_STATE_HOME=str(short_tmp / "state"),
        XDG_CONFIG_HOME=str(short_tmp / "config"),
        XDG_RUNTIME_DIR=str(short_tmp / "run"),
    )
    environ.pop("MEMD_SOCKET", None)
    return environ


@pytest.fixture
def socket_path(short_tmp: Path) -> Iterator[Path]:
    """A socket path with no daemon; any daemon started on it is stopped on teardown."""
    path = short_tmp / "auto" / "memd.sock"
    yield path
    stop_serving(path)


def memd(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memd", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_clients_starting_at_once_make_one_detached_daemon(
    env: dict[str, str], socket_path: Path, workspace: Path
) -> None:
    clients = [
        memd(env, "--socket", str(socket_path), "store", "-w", str(workspace), fact)
        for fact in FACTS
    ]
    outcomes = [(client.wait(timeout=60), *client.communicate()) for client in clients]
    assert [code for code, _, _ in outcomes] == [0] * CLIENTS, outcomes
    notes = [stderr for _, _, stderr in outcomes if "started a daemon" in stderr]
    assert len(notes) == 1
    assert f"serving on {socket_path}" in notes[0]
    daemons = serve_processes(socket_path)
    assert len(daemons) == 1
    daemon = daemons[0]
    assert int(Path(f"{socket_path}.pid").read_text()) == daemon
    assert os.getsid(daemon) != os.getsid(0)  # detached: its own session, not our child
    with Client(socket_path, workspace=workspace) as client:
        assert len(client.list().entries) == CLIENTS
    log = (Path(env["XDG_STATE_HOME"]) / "memd" / "memd.log").read_text()
    assert log.count(f"serving on {socket_path}") == 1
    assert "already running" not in log  # exactly one daemon was ever started


async def test_async_client_starts_a_daemon_too(
    env: dict[str, str], socket_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(name, env[name])
    async with AsyncClient(socket_path, workspace=workspace, autostart=True) as client:
        assert (await client.stats()).total == 0
    assert len(serve_processes(socket_path)) == 1


def test_library_clients_do_not_autostart_unless_asked(socket_path: Path) -> None:
    with Client(socket_path) as client, pytest.raises(DaemonUnavailable, match="memd serve"):
        client.status()
    assert serve_processes(socket_path) == []


WITHOUT_THE_DAEMON = """
import sys
from memd_client import Client, DaemonUnavailable

try:
    Client(sys.argv[1], autostart=True).status()
except DaemonUnavailable as exc:
    print(exc.message)
"""
"""`python -c WITHOUT_THE_DAEMON SOCKET`: a client asked to autostart a daemon."""


def test_autostart_without_the_daemon_installed_names_its_distribution(
    env: dict[str, str], socket_path: Path, short_tmp: Path
) -> None:
    # A Python where only memd-client and msgspec are installed, and no `memd` command on PATH.
    site = short_tmp / "site"
    site.mkdir()
    (site / "msgspec").symlink_to(Path(msgspec.__file__).parent)
    client_package = Path(memd_client.__file__).parent
    env.update(PYTHONPATH=f"{site}{os.pathsep}{client_package.parent}", PATH=str(short_tmp / "no"))
    client = subprocess.run(
        [sys.executable, "-S", "-c", WITHOUT_THE_DAEMON, str(socket_path)],
        env=env,
        cwd=short_tmp,  # not a checkout of memd
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert client.stdout == (
        "No memd daemon is running and the memd daemon is not installed for this Python or on "
        "PATH; install the memd-daemon distribution (see memd's README, Install) or start a "
        "daemon yourself with `memd serve`.\n"
    ), client.stderr
    assert client.returncode == 0
    assert serve_processes(socket_path) == []


def enable_fake_service(env: dict[str, str]) -> None:
    """Leave what `systemctl --user enable memd.socket` leaves: the unit and its wants link."""
    units = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"
    (units / "sockets.target.wants").mkdir(parents=True)
    (units / "memd.socket").write_text("[Socket]\nListenStream=%t/memd/memd.sock\n")
    (units / "sockets.target.wants" / "memd.socket").symlink_to(units / "memd.socket")


def test_an_installed_service_is_never_bypassed(env: dict[str, str], workspace: Path) -> None:
    enable_fake_service(env)
    result = memd(env, "stats", "-w", str(workspace))
    assert result.wait(timeout=60) == 3
    _, stderr = result.communicate()
    assert "systemctl --user start memd.socket" in stderr
    default_socket = Path(env["XDG_RUNTIME_DIR"]) / "memd" / "memd.sock"
    status = memd(env, "status")
    assert status.wait(timeout=60) == 3
    assert "systemctl --user start memd.socket" in status.communicate()[1]
    assert not default_socket.exists()
    assert serve_processes(default_socket) == []


def test_background_serve_reports_ready_then_refuses_a_second(
    env: dict[str, str], socket_path: Path
) -> None:
    first = memd(env, "serve", "--background", "--socket", str(socket_path))
    assert first.wait(timeout=60) == 0
    stdout, _ = first.communicate()
    assert f"serving on {socket_path}" in stdout
    second = memd(env, "serve", "--background", "--socket", str(socket_path))
    assert second.wait(timeout=60) == 1
    _, stderr = second.communicate()
    assert "already running" in stderr
    assert len(serve_processes(socket_path)) == 1


def test_background_serve_that_cannot_start_says_why_and_leaves_nothing(
    env: dict[str, str], socket_path: Path
) -> None:
    socket_path.parent.mkdir()
    socket_path.write_text("not a socket")
    result = memd(env, "serve", "--background", "--socket", str(socket_path))
    assert result.wait(timeout=60) == 1
    _, stderr = result.communicate()
    assert "exists and is not a socket" in stderr
    assert "Traceback" not in stderr
    for pid in serve_processes(socket_path):
        wait_gone(pid)


def test_a_service_on_another_socket_does_not_stop_autostart(
    env: dict[str, str], socket_path: Path, workspace: Path
) -> None:
    enable_fake_service(env)
    result = memd(dict(env, MEMD_SOCKET=str(socket_path)), "stats", "-w", str(workspace))
    _, stderr = result.communicate(timeout=60)
    assert result.returncode == 0, stderr
    assert len(serve_processes(socket_path)) == 1


def test_the_prompt_hook_starts_a_daemon_when_none_runs(
    env: dict[str, str], socket_path: Path, workspace: Path
) -> None:
    hook_input = json.dumps({"prompt": "deploy", "cwd": str(workspace)})
    hook = memd(env, "--socket", str(socket_path), "context", "--hook", "claude")
    stdout, stderr = hook.communicate(hook_input, timeout=60)
    assert (hook.returncode, stdout) == (0, ""), stderr  # nothing stored yet: no block
    assert len(serve_processes(socket_path)) == 1
