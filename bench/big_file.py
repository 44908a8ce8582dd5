"""Big-file benchmark: what a near-`max_file_bytes` hostile category file costs a real daemon.

The file (`hostile_text`) fills the size cap (8 MiB) with valid but costly entries: each a
distinct slug and distinct random words (every word and every pair of neighbouring words is a
new search term), a camelCase identifier (its parts and the whole are terms), a long token
and a `#tag`, so nothing is shared between entries. It is written before a fresh daemon (private
state) starts; then, with the daemon's VmRSS and VmHWM (peak) read from /proc/<pid>/status:

1. `query` (loads the workspace: parse, search index, the kept index saved);
2. `store` a new entry into it (the first write decision: the duplicate index is needed);
3. `store` a second one;
4. `rewrites`: the file rewritten on disk (every entry changed, as an editor or `git checkout`
   would), then a `query` that sees it, N times: memory must not grow with each version.

Throughout, a second client calls `status` (answered on the event loop, touching no workspace)
in a loop and records each round trip of each step: its p50, p99 and longest (the longest the
event loop was blocked, or waited for the GIL). After each reply the bench waits until the
daemon settles (its CPU time stops growing for SETTLE_QUIET seconds: background work such as
keeping the index is done) and reads VmRSS then: the settled RSS; VmHWM is the peak so far.
The memory factor is (settled VmRSS - VmRSS of the idle daemon) / file bytes.

`--quick` runs a small file (for the smoke test). Results: Markdown on stdout and
`bench/results/big_file.json` (`big_file-quick.json` with `--quick`).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._daemon import wait_until_serving
from bench._report import commit, save, settings_main
from memd.core.format.categories import Category
from memd.core.format.limits import MAX_FILE_BYTES
from memd_client import Client
from memd_client.errors import RpcError

CATEGORY = Category.DECISION
CLIENT_TIMEOUT = 600.0
SETTLE_QUIET = 0.5
"""Seconds of (nearly) no daemon CPU time after which it counts as settled."""
SETTLE_CPU = 0.05
"""The share of a core the daemon may use while settled (the stall probe is paused meanwhile:
its `status` calls kept the daemon at ~12 % of a core, so every step waited SETTLE_MOST)."""
SETTLE_MOST = 60.0
"""The longest the bench waits for the daemon to settle after a step."""


@dataclass(frozen=True)
class Settings:
    """How big the hostile file is and how often it is rewritten."""

    file_bytes: int
    rewrites: int


FULL = Settings(
    file_bytes=MAX_FILE_BYTES - 4096, rewrites=int(os.environ.get("BIG_FILE_REWRITES", "5"))
)
QUICK = Settings(file_bytes=200_000, rewrites=2)


def _word(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(low, high)))


def hostile_line(rng: random.Random, number: int) -> str:
    """One costly entry line: distinct slug, distinct words, an identifier, a long token and a
    tag (see the module docstring)."""
    words = [_word(rng, 4, 9) for _ in range(7)]
    identifier = _word(rng, 3, 6) + _word(rng, 3, 6).capitalize() + _word(rng, 3, 6).capitalize()
    words.insert(3, identifier)
    if number % 4 == 0:
        words.append(_word(rng, 40, 64))
    words.append("#" + _word(rng, 4, 8))
    return f"- [e{number}-{words[0]}] " + " ".join(words) + "."


def hostile_text(size: int, seed: str = "hostile") -> str:
    """A category file of at most `size` bytes made of `hostile_line`s under the usual header."""
    rng = random.Random(seed)
    lines = [CATEGORY.header.rstrip("\n"), ""]
    total = sum(len(line) + 1 for line in lines)
    number = 0
    while True:
        line = hostile_line(rng, number)
        if total + len(line) + 1 > size:
            break
        lines.append(line)
        total += len(line) + 1
        number += 1
    return "\n".join(lines) + "\n"


def _cpu_ticks(pid: int) -> int:
    """The daemon's user + system CPU time so far, in clock ticks (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def _settle(pid: int) -> None:
    """Wait until the daemon uses at most SETTLE_CPU of a core for SETTLE_QUIET s (at most
    SETTLE_MOST)."""
    deadline = time.monotonic() + SETTLE_MOST
    allowed = SETTLE_CPU * SETTLE_QUIET * os.sysconf("SC_CLK_TCK")
    before = _cpu_ticks(pid)
    while time.monotonic() < deadline:
        time.sleep(SETTLE_QUIET)
        now = _cpu_ticks(pid)
        if now - before <= allowed:
            return
        before = now


def _status_kb(pid: int) -> dict[str, int]:
    found = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0])
    return found


class StallProbe:
    """A client calling `status` in a loop in a thread; `worst()` is the longest round trip
    since the last `reset()`, in ms, and `latencies()` their p50 and p99."""

    def __init__(self, socket_path: str) -> None:
        self._socket_path = socket_path
        self._worst = 0.0
        self._calls = 0
        self._took: list[float] = []
        self._started: float | None = None  # of the call in flight
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._probing = threading.Event()
        self._probing.set()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> StallProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=CLIENT_TIMEOUT)

    def _run(self) -> None:
        with Client(self._socket_path, timeout=CLIENT_TIMEOUT) as client:
            while not self._stop.is_set():
                if not self._probing.is_set():
                    self._stop.wait(0.05)
                    continue
                started = time.perf_counter()
                with self._lock:
                    self._started = started
                client.status()
                took = (time.perf_counter() - started) * 1000
                with self._lock:
                    self._started = None
                    self._worst = max(self._worst, took)
                    self._calls += 1
                    self._took.append(took)
                self._stop.wait(0.005)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No `status` calls within (the call in flight finishes first): while the bench waits
        for the daemon to settle, the probe's own calls would keep it busy."""
        self._probing.clear()
        while self._started is not None and not self._stop.is_set():
            time.sleep(0.01)
        try:
            yield
        finally:
            self._probing.set()

    def reset(self) -> None:
        """Start a new step."""
        with self._lock:
            self._worst, self._calls = 0.0, 0
            self._took = []

    def worst(self) -> tuple[float, int]:
        """The longest round trip (ms) and the number of calls since `reset`; a call still
        waiting counts for as long as it has waited."""
        with self._lock:
            waiting = 0.0 if self._started is None else time.perf_counter() - self._started
            return max(self._worst, waiting * 1000), self._calls

    def latencies(self) -> tuple[float, float]:
        """The p50 and p99 round trip (ms) of the calls since `reset` (0 without calls)."""
        with self._lock:
            took = sorted(self._took)
        if not took:
            return 0.0, 0.0
        return took[len(took) // 2], took[min(len(took) - 1, len(took) * 99 // 100)]


@contextlib.contextmanager
def _daemon(root: Path) -> Iterator[tuple[str, int]]:
    socket_path = str(root / "memd.sock")
    environ = dict(os.environ, XDG_STATE_HOME=str(root / "state"))
    command = [sys.executable, "-m", "memd", "serve", "--socket", socket_path]
    log = os.environ.get("BIG_FILE_DAEMON_LOG")  # where the daemon's stderr goes, if set
    stderr = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - closed below
    daemon = subprocess.Popen([*command, "--log-level", "WARNING"], stderr=stderr, env=environ)
    try:
        wait_until_serving(socket_path, daemon)
        yield socket_path, daemon.pid
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)
        if not isinstance(stderr, int):
            stderr.close()


def run(settings: Settings = FULL, *, output: Path | None = None) -> dict[str, Any]:
    """Run the steps of the module docstring; print and return the figures."""
    root = Path(tempfile.mkdtemp(prefix="memd-big-", dir="/tmp"))
    try:
        (root / "state").mkdir()
        workspace = root / "ws"
        (workspace / ".memory").mkdir(parents=True)
        path = workspace / ".memory" / CATEGORY.file
        text = hostile_text(settings.file_bytes)
        path.write_text(text, encoding="utf-8")
        size = len(text.encode("utf-8"))
        entries = text.count("\n- [")
        steps: list[dict[str, Any]] = []
        with _daemon(root) as (socket_path, pid):
            idle_kb = _status_kb(pid)["VmRSS"]
            with (
                StallProbe(socket_path) as probe,
                Client(socket_path, timeout=CLIENT_TIMEOUT) as client,
            ):

                def step(name: str, action: Any) -> None:
                    probe.reset()
                    started = time.perf_counter()
                    error = None
                    try:
                        action()
                    except RpcError as failed:  # e.g. a store past REPLY_TIMEOUT: say so
                        error = failed.message
                    took = (time.perf_counter() - started) * 1000
                    worst, calls = probe.worst()
                    p50, p99 = probe.latencies()
                    with probe.paused():
                        _settle(pid)
                    kb = _status_kb(pid)
                    steps.append(
                        {
                            "step": name,
                            "ms": took,
                            "rss_mb": kb["VmRSS"] / 1024,
                            "peak_mb": kb["VmHWM"] / 1024,
                            "factor": (kb["VmRSS"] - idle_kb) * 1024 / size,
                            "peak_factor": (kb["VmHWM"] - idle_kb) * 1024 / size,
                            "worst_stall_ms": worst,
                            "status_p50_ms": p50,
                            "status_p99_ms": p99,
                            "status_calls": calls,
                            "error": error,
                        }
                    )

                step("first query (load)", lambda: client.query("zzz", workspace=workspace))
                step(
                    "first store",
                    lambda: client.store(
                        content="Deploy the hostile service on Fridays only.",
                        category=CATEGORY.name,
                        workspace=workspace,
                    ),
                )
                step(
                    "second store",
                    lambda: client.store(
                        content="Keep the staging database in another region.",
                        category=CATEGORY.name,
                        workspace=workspace,
                    ),
                )
                for number in range(settings.rewrites):
                    changed = hostile_text(settings.file_bytes, seed=f"rewrite-{number}")

                    def rewrite(changed: str = changed) -> None:
                        path.write_text(changed, encoding="utf-8")
                        client.query("zzz", workspace=workspace)

                    step(f"rewrite {number + 1} + query", rewrite)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report = {
        "benchmark": "big_file",
        "commit": commit(),
        "file_bytes": size,
        "entries": entries,
        "idle_rss_mb": idle_kb / 1024,
        "steps": steps,
        "worst_stall_ms": max(row["worst_stall_ms"] for row in steps),
        "peak_mb": max(row["peak_mb"] for row in steps),
        "peak_factor": max(row["peak_factor"] for row in steps),
    }
    print(markdown(report))
    save(report, output)
    return report


def markdown(report: dict[str, Any]) -> str:
    """The figures as a Markdown table."""
    lines = [
        f"Hostile category file: {report['file_bytes'] / 1048576:.2f} MiB, "
        f"{report['entries']:,} entries; idle daemon {report['idle_rss_mb']:.0f} MB",
        "",
        "| step | ms | settled RSS MB | peak MB | RSS factor | peak factor | status p50 / p99 / "
        "longest ms (calls) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["steps"]:
        lines.append(
            f"| {row['step']} | {row['ms']:.0f} | {row['rss_mb']:.0f} | {row['peak_mb']:.0f} | "
            f"{row['factor']:.1f}x | {row['peak_factor']:.1f}x | {row['status_p50_ms']:.0f} / "
            f"{row['status_p99_ms']:.0f} / {row['worst_stall_ms']:.0f} ({row['status_calls']}) |"
            + (f" error: {row['error']}" if row.get("error") else "")
        )
    lines.append("")
    lines.append(
        "factor = (settled RSS - idle RSS) / file bytes; status = another client's `status` "
        "round trips during the step (longest: the slowest, counting one still waiting)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.big_file [--quick]`."""
    settings_main(
        argv,
        name="big_file",
        description=__doc__,
        quick_help="a 200 kB file, two rewrites",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
