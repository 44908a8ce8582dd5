"""Shared fixtures: short socket directories and a real `memd serve` subprocess."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

from tests.budget import budget, examples

# One profile, chosen by MEMD_TEST_BUDGET (tests/budget.py): a property that names no example
# count runs Hypothesis's default 100 under `ci` (`make test`), and its budget's share otherwise.
settings.register_profile(budget(), deadline=None, print_blob=True, max_examples=examples(100))
settings.load_profile(budget())

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "data" / "hacklm-memory" / ".memory"
READY_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio only."""
    return "asyncio"


CALLERS_MEMD_ENV = (
    "MEMD_SOCKET",
    "MEMD_LOG_LEVEL",
    "NOTIFY_SOCKET",
    "LISTEN_PID",
    "LISTEN_FDS",
    "LISTEN_FDNAMES",
)
"""The environment variables memd reads that a user sets for their own daemon, or that a
service manager sets when `make test` runs inside a unit."""


E2E_FOLDERS = (
    Path(__file__).resolve().parent / "e2e",
    Path(__file__).resolve().parent / "bench",
)
"""The folders whose tests are all `e2e`: the end-to-end tests (real daemons, CLI subprocesses,
git, MCP sessions) and the benchmarks' smoke runs (most of them through real daemons)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `e2e` every test under an `E2E_FOLDERS` folder (the folder says it) and every test
    that starts a real daemon through the `daemon` fixture, so `-m "not e2e"` is the quick loop.
    A file elsewhere marks only its own end-to-end tests (`@pytest.mark.e2e`)."""
    for item in items:
        in_folder = any(folder in item.path.parents for folder in E2E_FOLDERS)
        if in_folder or "daemon" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(autouse=True)
def _private_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep every test's memd state (usage history, kept indexes, vectors, the user-wide
    memory, the agents' transcripts the "chat" source reads) out of the user's home, and
    semantic search off in daemons that read the default config file (loading the model costs
    every daemon that queries; the tests that need it turn it on). The caller's own memd
    settings (`MEMD_SOCKET`, `MEMD_LOG_LEVEL`: the README has users export them), XDG
    directories and service manager's variables never reach a test, its daemons or the
    commands it runs."""
    for name in CALLERS_MEMD_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))  # global memory
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("run")))  # default socket
    # The "chat" source reads agents' session transcripts: never the user's own.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path_factory.mktemp("claude")))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path_factory.mktemp("codex")))
    config = tmp_path_factory.mktemp("config")
    (config / "memd").mkdir()
    (config / "memd" / "config.toml").write_text("semantic = false\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A fresh directory under /tmp with a short path (Unix socket paths max out at ~104 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="memd-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class DaemonProcess:
    """A `memd serve` subprocess, started and ready."""

    def __init__(self, socket_path: Path, process: subprocess.Popen[bytes], log: Path) -> None:
        self.socket_path = socket_path
        self.process = process
        self.log = log

    def stop(self) -> int:
        """Send SIGTERM and wait for the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=STOP_TIMEOUT)

    def stderr(self) -> str:
        """What the daemon logged so far."""
        return self.log.read_text(errors="replace")


def start_daemon(
    directory: Path,
    *extra: str,
    socket_path: Path | None = None,
    name: str = "memd.sock",
    memd: Sequence[str] = (sys.executable, "-m", "memd"),
    env: Mapping[str, str] | None = None,
) -> DaemonProcess:
    """Start `memd serve` on `socket_path` (default `directory/name`) and wait for READY=1.

    The notify socket and the daemon's log live in `directory`. `memd` is the command that runs
    memd (default: this interpreter's), `env` the environment (default: this process's).
    """
    socket_path = socket_path or directory / name
    notify_path = directory / f"{name}.notify"
    log = directory / f"{name}.log"
    notify_path.unlink(missing_ok=True)  # left by an earlier daemon started in `directory`
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(notify_path))
    # Usage history (the daemon's state) goes under `directory`, never the user's own.
    environ = dict(
        os.environ if env is None else env,
        NOTIFY_SOCKET=str(notify_path),
        XDG_STATE_HOME=str(directory / "state"),
    )
    environ.pop("MEMD_SOCKET", None)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*memd, "serve", "--socket", str(socket_path), *extra],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=environ,
        )
    daemon = DaemonProcess(socket_path, process, log)
    try:
        wait_ready(receiver, daemon)
    except BaseException:
        daemon.stop()
        raise
    finally:
        receiver.close()
    return daemon


def wait_for_log(daemon: DaemonProcess, text: str) -> None:
    """Wait until the daemon's log holds `text` (a deadline, never a fixed sleep)."""
    deadline = time.monotonic() + READY_TIMEOUT
    while text not in daemon.stderr():
        assert time.monotonic() < deadline, f"no {text!r} in the log:\n{daemon.stderr()}"
        time.sleep(0.02)


def wait_ready(receiver: socket.socket, daemon: DaemonProcess) -> None:
    """Wait until the daemon sends READY=1, fails, or the deadline passes."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        receiver.settimeout(0.2)
        try:
            message = receiver.recv(4096)
        except TimeoutError:
            if daemon.process.poll() is not None:
                raise AssertionError(f"memd exited early:\n{daemon.stderr()}") from None
            continue
        if b"READY=1" in message.split(b"\n"):
            return
    raise AssertionError(f"memd was not ready within {READY_TIMEOUT} s:\n{daemon.stderr()}")


@pytest.fixture
def daemon(short_tmp: Path) -> Iterator[DaemonProcess]:
    """A running daemon; on teardown it must exit 0 on SIGTERM and remove its socket."""
    process = start_daemon(short_tmp)
    try:
        yield process
    finally:
        code = process.stop()
        assert code == 0, process.stderr()
        assert not process.socket_path.exists()


@pytest.fixture
def workspace(short_tmp: Path) -> Path:
    """An empty project directory."""
    path = short_tmp / "project"
    path.mkdir()
    return path


def store_frames(workspace: Path, category: str, count: int, *, prefix: str) -> bytes:
    """Return `count` newline-ended store requests (ids 0..count-1) with distinct contents."""
    import msgspec

    return b"".join(
        msgspec.json.encode(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "store",
                "params": {
                    "workspace": str(workspace),
                    "category": category,
                    "content": f"{prefix} note{n} q{n}x z{n}k w{n}j.",
                },
            }
        )
        + b"\n"
        for n in range(count)
    )


def serve_processes(socket_path: Path) -> list[int]:
    """Return the pids of `memd serve` processes for `socket_path` (read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and os.fsencode(socket_path) in argv:
            pids.append(int(entry.name))
    return pids


def wait_gone(pid: int) -> None:
    """Wait (up to STOP_TIMEOUT) until process `pid` no longer exists."""
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} is still running")


def stop_serving(socket_path: Path) -> None:
    """SIGTERM every `memd serve` for `socket_path` (such as an autostarted one); wait for each."""
    for pid in serve_processes(socket_path):
        os.kill(pid, signal.SIGTERM)
        wait_gone(pid)


def write_big_quirks(workspace: Path, count: int) -> None:
    """Give `workspace` a quirks.md of `count` distinct entries of about 150 bytes each."""
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    lines = "".join(f"- [rule-{n}] Rule number {n} says {'x' * 100}.\n" for n in range(count))
    (memory / "quirks.md").write_text("# Quirks\n\n" + lines)


def skip_inside_a_project(path: Path) -> None:
    """Skip a test that needs `path` in no project: a `.memory/` or `.git` above it (say, a
    stray `/tmp/.memory`) makes any directory under it part of that project."""
    for parent in path.parents:
        for marker in (".memory", ".git"):
            if (parent / marker).exists():
                pytest.skip(f"{parent / marker} makes {path} part of a project")
