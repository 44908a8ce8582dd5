"""Ctrl-C and SIGTERM reach the CLI whatever the parent did with them: `memd watch` stops on
both even when started with SIGINT ignored, and a verb waiting on a terminal's stdin says so and
exits 130 on Ctrl-C without a traceback."""

from __future__ import annotations

import os
import pty
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import DaemonProcess

MEMD = (sys.executable, "-m", "memd")


def _lines(stream: IO[bytes]) -> queue.Queue[bytes]:
    lines: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        for line in iter(stream.readline, b""):
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `nohup` or a script's `cmd &` leaves it


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_watch_stops_on_sigint_and_sigterm_though_started_with_sigint_ignored(
    daemon: DaemonProcess, workspace: Path, signum: int
) -> None:
    watcher = subprocess.Popen(
        [*MEMD, "watch", "--socket", str(daemon.socket_path), "--workspace", str(workspace)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_ignore_sigint,
    )
    assert watcher.stderr is not None
    try:
        lines = _lines(watcher.stderr)
        while b"Watching" not in (line := lines.get(timeout=20)):
            assert line, "memd watch ended before it watched"
        watcher.send_signal(signum)
        assert watcher.wait(timeout=20) == 0
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        watcher.stderr.close()


@pytest.mark.parametrize(
    ("argv", "what"),
    [(["extract"], "the message"), (["context", "--hook", "claude"], "the hook's JSON input")],
)
def test_a_verb_reading_a_terminal_says_so_and_ctrl_c_exits_130(
    short_tmp: Path, argv: list[str], what: str
) -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*MEMD, *argv, "--no-autostart", "--socket", str(short_tmp / "none.sock")],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(terminal)
    assert process.stderr is not None and process.stdout is not None
    try:
        lines = _lines(process.stderr)
        first = lines.get(timeout=20).decode()
        assert f"reading {what} from stdin" in first and "Ctrl-D" in first
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130
        rest = b"".join(iter(lambda: lines.get(timeout=20), b"")).decode()
        assert "Traceback" not in rest and "KeyboardInterrupt" not in rest
        assert process.stdout.read() == b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
        process.stdout.close()
        process.stderr.close()
