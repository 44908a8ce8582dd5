"""`memd service install|uninstall|status` with fake `systemctl` / `launchctl` on PATH.

The Linux path runs the real CLI in a subprocess with HOME, XDG_CONFIG_HOME and XDG_RUNTIME_DIR
in temporary directories. The macOS path runs in-process with `platform="darwin"`. The fakes
append their arguments to a log, so the tests see which commands ran, in which order.
"""

from __future__ import annotations

import json
import os
import plistlib
import shlex
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import memd
from memd.service import install as service, units
from memd_client import PROTOCOL_VERSION
from tests.conftest import start_daemon

MEMD = str(Path(sys.executable).parent / "memd")  # beside the interpreter, symlinks kept

FAKE_BEHAVIOUR = {
    "ok": 'case "$*" in *is-enabled*) echo enabled;; *is-active*) echo active;; esac\nexit 0\n',
    "inactive": (
        'case "$*" in *is-enabled*) echo enabled;; *is-active*) echo inactive; exit 3;; esac\n'
        "exit 0\n"
    ),
    "no-bus": "echo 'Failed to connect to bus: No medium found' >&2\nexit 1\n",
}


@dataclass
class Sandbox:
    """Temporary HOME, config and runtime directories, and a bin directory for fake tools."""

    root: Path
    runtime: Path
    bin: Path
    log: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def unit_dir(self) -> Path:
        return self.root / "config" / "systemd" / "user"

    @property
    def socket_path(self) -> Path:
        return self.runtime / "memd" / "memd.sock"

    def fake(self, name: str, behaviour: str = "ok") -> None:
        """Put a fake `name` first on PATH that logs its arguments, then acts per `behaviour`."""
        script = self.bin / name
        script.write_text(
            f'#!/bin/sh\necho "$*" >> {shlex.quote(str(self.log))}\n{FAKE_BEHAVIOUR[behaviour]}'
        )
        script.chmod(0o755)

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(
            os.environ,
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.root / "config"),
            XDG_RUNTIME_DIR=str(self.runtime),
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        )
        env.pop("MEMD_SOCKET", None)
        env.update(extra)
        return env

    def memd(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memd", "service", *args],
            capture_output=True,
            text=True,
            env=self.env(**env),
            timeout=60,
        )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def sandbox(short_tmp: Path, tmp_path: Path) -> Sandbox:
    """A sandbox whose runtime directory is short (socket paths must stay under 104 bytes)."""
    runtime = short_tmp / "run"
    runtime.mkdir(mode=0o700)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "home").mkdir()
    return Sandbox(root=tmp_path, runtime=runtime, bin=bin_dir, log=tmp_path / "calls.log")


def expected_units(*extra: str) -> dict[str, str]:
    return units.render_systemd([MEMD, "serve", *extra])


# ---------------------------------------------------------------------------- systemd (Linux)


def test_install_dry_run_prints_everything_and_changes_nothing(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    result = sandbox.memd("install", "--dry-run")
    assert result.returncode == 0, result.stderr
    for name, text in expected_units().items():
        assert f"would write {sandbox.unit_dir / name}:\n{text}" in result.stdout
    assert "would run: systemctl --user daemon-reload\n" in result.stdout
    assert "would run: systemctl --user enable --now memd.socket\n" in result.stdout
    assert result.stdout.endswith("Dry run: nothing was changed.\n")
    assert not (sandbox.root / "config").exists()
    assert sandbox.calls() == []


@pytest.mark.parametrize("extra", [(), ("--idle-exit", "600")])
def test_install_writes_units_then_reloads_and_enables_the_socket(
    sandbox: Sandbox, extra: tuple[str, ...]
) -> None:
    sandbox.fake("systemctl")
    result = sandbox.memd("install", *extra)
    assert result.returncode == 0, result.stderr
    for name, text in expected_units(*extra).items():
        path = sandbox.unit_dir / name
        assert path.read_text() == text
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert f"wrote {path}\n" in result.stdout
    assert sandbox.calls() == [
        "--user daemon-reload",
        "--user enable --now memd.socket",
        "--user try-restart memd.service",
    ]
    assert result.stdout.endswith(
        f"memd.socket is listening on {sandbox.socket_path}; "
        "the daemon starts on the first request.\n"
    )
    assert result.stderr == ""
    assert [p.name for p in sandbox.unit_dir.iterdir()] == sorted(expected_units())


def test_install_without_a_user_session_keeps_the_files_and_says_what_to_run(
    sandbox: Sandbox,
) -> None:
    sandbox.fake("systemctl", "no-bus")
    result = sandbox.memd("install")
    assert result.returncode == 1
    assert (sandbox.unit_dir / "memd.socket").exists()
    assert (sandbox.unit_dir / "memd.service").exists()
    assert sandbox.calls() == ["--user daemon-reload"]
    assert "Failed to connect to bus" in result.stderr
    assert "systemctl --user enable --now memd.socket" in result.stderr
    assert "loginctl enable-linger" in result.stderr
    assert "Traceback" not in result.stderr


def test_install_without_systemctl_says_so(sandbox: Sandbox) -> None:
    result = sandbox.memd("install", PATH=str(sandbox.bin))  # an empty bin: no systemctl at all
    assert result.returncode == 1
    assert "systemctl was not found on PATH" in result.stderr
    assert (sandbox.unit_dir / "memd.service").exists()


def test_install_warns_when_clients_look_elsewhere(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    result = sandbox.memd("install", MEMD_SOCKET=str(sandbox.runtime / "other.sock"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("Warning: the service listens on ")
    assert "MEMD_SOCKET is set" in result.stderr


def test_install_into_an_unwritable_directory_fails_cleanly(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    (sandbox.root / "config").write_text("a file where the config directory should be")
    result = sandbox.memd("install")
    assert result.returncode == 1
    assert result.stderr.startswith("Could not create ")
    assert "Traceback" not in result.stderr
    assert sandbox.calls() == []


def test_status_exit_codes(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    before = sandbox.memd("status")
    assert before.returncode == 3, before.stderr
    assert "not installed" in before.stdout

    assert sandbox.memd("install").returncode == 0
    active = sandbox.memd("status")
    assert active.returncode == 0, active.stdout + active.stderr
    assert f"installed: {sandbox.unit_dir / 'memd.socket'}\n" in active.stdout
    assert "systemctl --user is-active memd.socket: active\n" in active.stdout
    assert f"no daemon answering on {sandbox.socket_path}" in active.stdout

    sandbox.fake("systemctl", "inactive")
    inactive = sandbox.memd("status")
    assert inactive.returncode == 3
    assert "systemctl --user is-active memd.socket: inactive\n" in inactive.stdout

    sandbox.fake("systemctl", "no-bus")
    no_bus = sandbox.memd("status")
    assert no_bus.returncode == 3
    assert "systemctl unavailable: Failed to connect to bus" in no_bus.stdout


def test_status_json_is_one_object_with_the_same_facts(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    before = sandbox.memd("status", "--json")
    assert before.returncode == 3, before.stderr
    found = json.loads(before.stdout)
    units_there = {str(sandbox.unit_dir / name): False for name in ("memd.socket", "memd.service")}
    assert found == {
        "files": units_there,
        "installed": False,
        "manager": [],
        "listening": False,
        "socket": str(sandbox.socket_path),
        "daemon": None,
        "daemon_error": None,
    }

    assert sandbox.memd("install").returncode == 0
    after = sandbox.memd("status", "--json")
    assert after.returncode == 0, after.stdout + after.stderr
    found = json.loads(after.stdout)
    assert found["files"] == dict.fromkeys(units_there, True)
    assert (found["installed"], found["listening"], found["daemon"]) == (True, True, None)
    assert "systemctl --user is-active memd.socket: active" in found["manager"]


def test_only_status_takes_json(sandbox: Sandbox) -> None:
    for action in ("install", "uninstall"):
        result = sandbox.memd(action, "--json")
        assert result.returncode == 2
        assert result.stderr.startswith(f"usage: memd service {action} ")
        assert f"unrecognized arguments: --json (`memd service {action}` does not take" in (
            result.stderr
        )
    assert sandbox.calls() == []
    assert not sandbox.unit_dir.exists()


@pytest.mark.e2e
def test_status_counts_a_daemon_that_answers(sandbox: Sandbox, short_tmp: Path) -> None:
    sandbox.fake("systemctl")
    assert sandbox.memd("install").returncode == 0
    sandbox.fake("systemctl", "inactive")
    daemon = start_daemon(short_tmp, socket_path=sandbox.socket_path)
    try:
        result = sandbox.memd("status")
        assert result.returncode == 0, result.stdout + result.stderr
        answering = f"is answering on {sandbox.socket_path}, pid {daemon.process.pid}"
        assert f"{answering} (started by hand or a client, not the service)\n" in result.stdout
        as_json = sandbox.memd("status", "--json")
        assert as_json.returncode == 0, as_json.stderr
        assert json.loads(as_json.stdout)["daemon"] == {
            "pid": daemon.process.pid,
            "version": memd.__version__,
            "protocol_version": PROTOCOL_VERSION,
            "started_by_service": False,
        }
    finally:
        assert daemon.stop() == 0, daemon.stderr()


@pytest.mark.e2e
def test_install_stops_a_daemon_serving_the_socket_outside_systemd(
    sandbox: Sandbox, short_tmp: Path
) -> None:
    sandbox.fake("systemctl")
    daemon = start_daemon(short_tmp, socket_path=sandbox.socket_path)
    pid = daemon.process.pid
    try:
        dry = sandbox.memd("install", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert f"would stop memd (pid {pid}), which serves {sandbox.socket_path}" in dry.stdout
        assert daemon.process.poll() is None

        result = sandbox.memd("install")
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"stopped memd (pid {pid}), which was serving {sandbox.socket_path}" in result.stdout
        assert daemon.process.wait(timeout=5) == 0, daemon.stderr()
        assert sandbox.calls()[-2:] == [
            "--user enable --now memd.socket",
            "--user try-restart memd.service",
        ]
    finally:
        daemon.stop()


@pytest.mark.e2e
def test_install_without_a_user_session_leaves_a_running_daemon_alone(
    sandbox: Sandbox, short_tmp: Path
) -> None:
    sandbox.fake("systemctl", "no-bus")
    daemon = start_daemon(short_tmp, socket_path=sandbox.socket_path)
    try:
        result = sandbox.memd("install")
        assert result.returncode == 1
        assert "stopped memd" not in result.stdout
        assert daemon.process.poll() is None
    finally:
        assert daemon.stop() == 0, daemon.stderr()


def test_uninstall_disables_and_removes_the_units(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    assert sandbox.memd("install").returncode == 0
    dry = sandbox.memd("uninstall", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"would remove {sandbox.unit_dir / 'memd.socket'}\n" in dry.stdout
    assert "would run: systemctl --user disable --now memd.socket memd.service\n" in dry.stdout
    assert (sandbox.unit_dir / "memd.socket").exists()

    sandbox.log.unlink()
    result = sandbox.memd("uninstall")
    assert result.returncode == 0, result.stderr
    assert sandbox.calls() == [
        "--user disable --now memd.socket memd.service",
        "--user daemon-reload",
    ]
    assert list(sandbox.unit_dir.iterdir()) == []
    assert f"removed {sandbox.unit_dir / 'memd.service'}\n" in result.stdout


def test_uninstall_without_a_user_session_still_removes_the_files(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    assert sandbox.memd("install").returncode == 0
    wants = sandbox.unit_dir / "sockets.target.wants"
    wants.mkdir()
    (wants / "memd.socket").symlink_to(sandbox.unit_dir / "memd.socket")  # what enable made
    sandbox.fake("systemctl", "no-bus")
    result = sandbox.memd("uninstall")
    assert result.returncode == 1
    assert sorted(p.name for p in sandbox.unit_dir.iterdir()) == ["sockets.target.wants"]
    assert list(wants.iterdir()) == []
    assert "run `systemctl --user daemon-reload` once you have a systemd user session" in (
        result.stderr
    )


def test_uninstall_when_nothing_is_installed(sandbox: Sandbox) -> None:
    sandbox.fake("systemctl")
    result = sandbox.memd("uninstall")
    assert (result.returncode, result.stdout) == (0, "memd's service is not installed.\n")
    assert sandbox.calls() == []


def test_idle_exit_only_applies_to_install(sandbox: Sandbox) -> None:
    result = sandbox.memd("status", "--idle-exit", "60")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: memd service status ")
    assert "memd service status: error: unrecognized arguments: --idle-exit 60 (" in result.stderr
    assert "`memd service install` do" in result.stderr


# ---------------------------------------------------------------------------- launchd (macOS)


@pytest.fixture
def mac(short_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The in-process macOS sandbox: HOME is short, so the socket path stays under 104 bytes."""
    sandbox = Sandbox(
        root=tmp_path, runtime=short_tmp, bin=tmp_path / "bin", log=tmp_path / "calls.log"
    )
    sandbox.bin.mkdir()
    sandbox.fake("launchctl")
    monkeypatch.setenv("HOME", str(short_tmp / "home"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("MEMD_SOCKET", raising=False)
    monkeypatch.setenv("PATH", f"{sandbox.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    return sandbox


def mac_paths(mac: Sandbox) -> tuple[Path, Path]:
    home = mac.runtime / "home"
    return (
        home / "Library" / "LaunchAgents" / "dev.memd.agent.plist",
        home / "Library" / "Application Support" / "memd" / "memd.sock",
    )


def test_darwin_install_writes_the_plist_and_bootstraps_it(
    mac: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    plist, socket_path = mac_paths(mac)
    assert service.install(platform="darwin", idle_exit=600) == 0
    data = plist.read_bytes()
    assert units.check_launchd_plist(data) == []
    job = plistlib.loads(data)
    assert job["ProgramArguments"] == [MEMD, "serve", "--idle-exit", "600"]
    assert job["Sockets"]["Listener"]["SockPathName"] == str(socket_path)
    assert job["StandardErrorPath"] == str(mac.runtime / "home" / "Library" / "Logs" / "memd.log")
    assert stat.S_IMODE(socket_path.parent.stat().st_mode) == 0o700
    assert (mac.runtime / "home" / "Library" / "Logs").is_dir()
    uid = os.getuid()
    assert mac.calls() == [f"bootout gui/{uid}/dev.memd.agent", f"bootstrap gui/{uid} {plist}"]
    out, err = capsys.readouterr()
    assert err == ""
    assert out.endswith(
        f"launchd is listening on {socket_path}; the daemon starts on the first request.\n"
    )

    assert service.status(platform="darwin") == 0
    assert f"launchd: gui/{uid}/dev.memd.agent is loaded" in capsys.readouterr().out

    assert service.uninstall(platform="darwin") == 0
    assert not plist.exists()
    assert mac.calls()[-1] == f"bootout gui/{uid}/dev.memd.agent"
    assert service.uninstall(platform="darwin") == 0
    assert capsys.readouterr().out.endswith("memd's service is not installed.\n")


def test_darwin_dry_run_writes_nothing(mac: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    plist, _ = mac_paths(mac)
    assert service.install(platform="darwin", dry_run=True) == 0
    out = capsys.readouterr().out
    assert f"would write {plist}:\n<?xml" in out
    assert f"would run: launchctl bootstrap gui/{os.getuid()} {plist}\n" in out
    assert not (mac.runtime / "home").exists()
    assert mac.calls() == []


def test_darwin_refuses_a_socket_path_too_long_for_sun_path(
    mac: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(mac.runtime / ("h" * 60)))
    assert service.install(platform="darwin") == 1
    assert "under 104" in capsys.readouterr().err
    assert not (mac.runtime / ("h" * 60)).exists()
    assert mac.calls() == []


def test_other_platforms_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert service.install(platform="win32") == 1
    assert "supports Linux (systemd) and macOS (launchd), not win32" in capsys.readouterr().err


@pytest.mark.parametrize(("seconds", "text"), [(600.0, "600"), (0.5, "0.5"), (1e6, "1000000")])
def test_format_seconds(seconds: float, text: str) -> None:
    assert service.format_seconds(seconds) == text


def test_a_service_idle_exit_below_the_start_rate_limits_is_refused(sandbox: Sandbox) -> None:
    result = sandbox.memd("install", "--idle-exit", "5")
    assert result.returncode == 2
    assert "at least 30 s" in result.stderr
    assert not sandbox.unit_dir.exists()
