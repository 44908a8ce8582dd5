"""A real `memd serve` subprocess for benchmarks, on a fresh temp workspace."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from memd_client import Client, DaemonUnavailable

STARTUP_TIMEOUT = 20.0


@contextlib.contextmanager
def running_daemon(
    *,
    private_state: bool = False,
    config: str | None = None,
    semantic: bool = False,
    executable: str | None = None,
) -> Iterator[tuple[Path, Path]]:
    """Run a daemon on a temp socket; yield (socket path, empty workspace); stop and clean up.

    With `private_state`, the daemon's XDG_STATE_HOME is a fresh directory inside the temp root,
    so it starts with no saved state and leaves none behind in the user's home. `config` is the
    text of a settings file (TOML) the daemon reads instead of the user's. Semantic search is off
    unless `semantic` (then with its vector cache in the temp root): a lexical benchmark must
    not turn hybrid halfway through when the model finishes loading.

    `executable` names another `memd` program to run (an older release, to compare against in
    the same run) instead of this tree's; one too old to know a setting it is given (such as
    `semantic`, which it then does not have) is started again with none.
    """
    root = Path(tempfile.mkdtemp(prefix="memd-bench-", dir="/tmp"))
    workspace = root / "ws"
    workspace.mkdir()
    socket_path = root / "memd.sock"
    environ = dict(os.environ)
    if private_state:
        (root / "state").mkdir()
        environ["XDG_STATE_HOME"] = str(root / "state")
    program = [sys.executable, "-m", "memd"] if executable is None else [executable]
    command = [*program, "serve", "--socket", str(socket_path)]
    # A top-level key goes first: after the config's text it could land inside its last table.
    settings = ("" if semantic else "semantic = false\n") + (config or "")
    environ["XDG_CACHE_HOME"] = str(root / "cache")
    environ["XDG_DATA_HOME"] = str(root / "data")  # no user-wide memory of the user's
    (root / "config.toml").write_text(settings, encoding="utf-8")
    command += ["--config", str(root / "config.toml"), "--log-level", "WARNING"]
    log = root / "daemon.log"
    # Not from this tree's directory: another executable must import its own memd.
    daemon = _start(command, environ, log)
    try:
        try:
            wait_until_serving(str(socket_path), daemon)
        except RuntimeError:
            if executable is None or "Unknown setting" not in log.read_text(errors="replace"):
                raise
            (root / "config.toml").write_text(config or "", encoding="utf-8")
            daemon = _start(command, environ, log)
            wait_until_serving(str(socket_path), daemon)
        yield socket_path, workspace
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def _start(command: list[str], environ: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as stderr:
        return subprocess.Popen(command, stderr=stderr, env=environ, cwd=tempfile.gettempdir())


def wait_until_serving(socket_path: str, daemon: subprocess.Popen[bytes]) -> None:
    """Return once a daemon answers `status` on `socket_path` (RuntimeError if it exits or
    STARTUP_TIMEOUT passes)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise RuntimeError("memd exited during startup")
        try:
            with Client(socket_path, timeout=2) as client:
                client.status()
            return
        except DaemonUnavailable:
            time.sleep(0.05)
    raise RuntimeError(f"memd did not start within {STARTUP_TIMEOUT} s")


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Return the value at `fraction` (0..1) of an ascending list (nearest rank)."""
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


EMBED_TIMEOUT = 600.0
"""Seconds a benchmark workspace may take to be embedded before a hybrid run gives up."""


def semantic_installed() -> bool:
    """Whether the semantic extra's runtime is importable here (a hybrid run needs it)."""
    return importlib.util.find_spec("onnxruntime") is not None


def wait_embedded(client: Client) -> None:
    """Wait until the client's workspace has a vector for every entry (each auto query asks the
    daemon to embed what is missing; a query never waits for it)."""
    deadline = time.monotonic() + EMBED_TIMEOUT
    while time.monotonic() < deadline:
        client.query("warm up", mode="auto")
        stats = client.stats()
        if 0 < stats.semantic_entries == stats.semantic_vectors_ready:
            return
        time.sleep(0.2)
    raise RuntimeError(f"the workspace was not embedded within {EMBED_TIMEOUT:g} s")


def tree_at(revision: str, directory: Path) -> Path | None:
    """This repository's tree at `revision`, unpacked into `directory` for a benchmark to run
    an older memd beside this one (None: not in this repository's history, e.g. a shallow
    clone; the benchmark then measures this tree alone, and says so)."""
    here = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(here), "archive", "--format=tar", revision],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        print(f"({revision} is not in this repository's history: measuring this tree alone)")
        return None
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive.stdout, check=True)
    return directory
