"""`memd serve --background`: how the waiting command reads the daemon's word, and what a client
that starts a daemon passes on (its own remaining wait)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memd.cli.background import _wait_for_word
from memd.config import default_log_path
from memd_client import DaemonUnavailable, _autostart


def pipe_with(text: str, *, close: bool) -> int:
    read_end, write_end = os.pipe()
    os.write(write_end, text.encode())
    if close:
        os.close(write_end)
    return read_end


def test_ready_prints_the_message_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    fd = pipe_with("pid 7\nready memd serving on /s (pid 7)\n", close=False)
    assert _wait_for_word(fd, "/log", timeout=5) == 0
    assert capsys.readouterr().out == "memd serving on /s (pid 7)\n"


def test_error_carries_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    fd = pipe_with("pid 7\nerror 2 Bad lock_timeout in f.toml\n", close=True)
    assert _wait_for_word(fd, "/log", timeout=5) == 2
    assert capsys.readouterr().err == "memd: Bad lock_timeout in f.toml\n"


def test_silence_until_exit_points_at_the_log(capsys: pytest.CaptureFixture[str]) -> None:
    assert _wait_for_word(pipe_with("pid 7\n", close=True), "/the.log", timeout=5) == 1
    assert "exited before it was ready; see /the.log" in capsys.readouterr().err


def test_a_daemon_that_is_not_ready_in_time_is_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        fd = pipe_with(f"pid {stuck.pid}\n", close=False)
        assert _wait_for_word(fd, "/the.log", timeout=0.2) == 1
        assert stuck.wait(timeout=30) == -15  # SIGTERM
    finally:
        stuck.kill()
        stuck.wait()
    assert "did not report ready within 0.2 s and was stopped" in capsys.readouterr().err


def test_log_paths() -> None:
    env = {"HOME": "/home/ada"}
    assert default_log_path(env, "linux") == "/home/ada/.local/state/memd/memd.log"
    assert default_log_path(dict(env, XDG_STATE_HOME="/st"), "linux") == "/st/memd/memd.log"
    assert default_log_path(env, "darwin") == "/home/ada/Library/Logs/memd.log"


def test_autostart_hands_memd_what_is_left_of_its_own_wait(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen.update(argv=argv, timeout=kwargs["timeout"], env=kwargs["env"])
        return subprocess.CompletedProcess(argv, 1, "", "memd: it broke\n")

    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setenv("NOTIFY_SOCKET", "/run/systemd/notify")
    with pytest.raises(DaemonUnavailable, match="it broke"):
        _autostart.start_daemon(str(short_tmp / "s.sock"), timeout=3.0)
    argv = seen["argv"]
    assert argv[-5:-1] == ["--background", "--socket", str(short_tmp / "s.sock"), "--ready-timeout"]
    assert 2.0 < float(argv[-1]) <= 3.0
    assert seen["timeout"] > float(argv[-1])  # memd's own wait ends first
    assert "NOTIFY_SOCKET" not in seen["env"]  # never talks to the client's service manager
