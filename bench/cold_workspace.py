"""A fresh daemon's first answer in a never-seen workspace, its memory, beside FTS5 and the base.

Issue 35's cold targets, each measured for this tree and for the base commit (`BASE`, checked
out with `bench._daemon.tree_at`) in the same run, alternating the two, `trials` times each:
- The workspace: `entries` random 8-word entries over a 5,000-word vocabulary (fixed seed),
  in the five HackLM category files, written before the daemon starts; a fresh private state
  directory each time, so nothing is kept from an earlier run (never seen).
- Spawn to first answer: from `Popen` of `memd serve` until a client that is already running
  (it asks as soon as READY=1 arrives on the daemon's NOTIFY_SOCKET) has its first `query`
  answered. Spawn to READY=1 beside it, and the daemon's CPU time (user + system, from
  /proc) at the answer: on a busy machine the wall times stretch, the CPU time much less.
- Peer at 100k: SQLite FTS5's index build (porter tokenizer, in memory, one transaction) of
  the same entries' text, in this process, in the same run: the time a store that indexes
  them with C code takes. Target: memd's first answer within 2x that.
- Memory: the daemon's VmRSS and VmHWM (the peak) from /proc right after the first answer,
  and its VmRSS once settled (its CPU time unchanged for `SETTLE_POLLS` polls `SETTLE_S`
  apart: the kept index saved, the build's garbage freed).

Targets (issue 35): first answer at 10k <= 300 ms from spawn; at 100k <= 2x FTS5's build;
settled RSS after a first query at 100k <= 150 MB (and 60 MB at 10k). Medians of the trials.
Figures go to stdout as Markdown and to `bench/results/cold_workspace.json`
(`cold_workspace-quick.json` with `--quick`).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._daemon import tree_at
from bench._report import RESULTS_DIR, commit, print_verdicts, save
from bench.lifecycle import CLIENT_TIMEOUT, FIRST_QUERY, _spawn_until_ready, proc_status_kb
from memd.core.format.categories import HACKLM_CATEGORIES
from memd_client import Client

BASE = "6711243"
"""The commit issue 35's cold work started from."""
SIZES = (10_000, 100_000)
QUICK_SIZES = (300, 1_000)
TRIALS = 1
VOCABULARY = 5_000
WORDS_PER_ENTRY = 8
SEED = 35
SETTLE_S = 0.25
SETTLE_POLLS = 4
SETTLE_TIMEOUT = 120.0

TARGET_ANSWER_10K_MS = 300.0
TARGET_X_FTS5 = 2.0
TARGET_RSS_100K_MB = 150.0
TARGET_RSS_10K_MB = 60.0


def random_contents(n_entries: int, seed: int = SEED) -> list[str]:
    """`n_entries` entries of `WORDS_PER_ENTRY` words drawn from `VOCABULARY` made-up words."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(VOCABULARY)]
    return [" ".join(rng.choices(vocabulary, k=WORDS_PER_ENTRY)) for _ in range(n_entries)]


def write_random_workspace(workspace: Path, contents: Sequence[str]) -> int:
    """Write `contents` round-robin into the five HackLM category files; return their bytes."""
    memory = workspace / ".memory"
    memory.mkdir(parents=True, exist_ok=True)
    lines: list[list[str]] = [[] for _ in HACKLM_CATEGORIES]
    for number, content in enumerate(contents):
        slug = "-".join(content.split()[:3]) + f"-{number}"
        lines[number % len(HACKLM_CATEGORIES)].append(f"- [{slug}] {content}\n")
    total = 0
    for category, its_lines in zip(HACKLM_CATEGORIES, lines, strict=True):
        data = (category.header + "".join(its_lines)).encode("utf-8")
        (memory / category.file).write_bytes(data)
        total += len(data)
    return total


def fts5_build_ms(contents: Sequence[str]) -> float:
    """Milliseconds SQLite FTS5 (porter) takes to index `contents` in memory."""
    began = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE memories USING fts5(content, tokenize='porter')")
    db.executemany("INSERT INTO memories(content) VALUES (?)", ((c,) for c in contents))
    db.commit()
    elapsed = (time.perf_counter() - began) * 1000.0
    db.close()
    return elapsed


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def settled_rss_kb(pid: int) -> int:
    """VmRSS once the process's CPU time has stopped growing (or SETTLE_TIMEOUT passed)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last, quiet = _cpu_ticks(pid), 0
    while quiet < SETTLE_POLLS and time.monotonic() < deadline:
        time.sleep(SETTLE_S)
        now = _cpu_ticks(pid)
        quiet = quiet + 1 if now == last else 0
        last = now
    return proc_status_kb(pid, "VmRSS")


def first_answer(tree: Path | None, contents: Sequence[str]) -> dict[str, float]:
    """Spawn a daemon from `tree` (None: this one) on a never-seen workspace of `contents`."""
    root = Path(tempfile.mkdtemp(prefix="memd-bench-coldws-", dir="/tmp"))
    try:
        workspace = root / "ws"
        file_bytes = write_random_workspace(workspace, contents)
        (root / "state").mkdir()
        environ = {
            **os.environ,
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_DATA_HOME": str(root / "data"),
        }
        if tree is not None:
            environ["PYTHONPATH"] = f"{tree}:{tree / 'client'}"
        (root / "config.toml").write_text("semantic = false\n", encoding="utf-8")
        socket_path = root / "memd.sock"
        command = [
            sys.executable, "-m", "memd", "serve", "--socket", str(socket_path),
            "--config", str(root / "config.toml"), "--log-level", "WARNING",
        ]  # fmt: skip
        began = time.perf_counter()
        # Not from this tree's directory: `-m memd` would import this tree, not `tree`'s.
        daemon, ready_ms = _spawn_until_ready(command, environ, root / "memd.notify", cwd=root)
        try:
            with Client(str(socket_path), workspace=workspace, timeout=CLIENT_TIMEOUT) as client:
                client.query(FIRST_QUERY)
            answer_ms = (time.perf_counter() - began) * 1000.0
            cpu_ms = _cpu_ticks(daemon.pid) * 1000.0 / os.sysconf("SC_CLK_TCK")
            rss_kb = proc_status_kb(daemon.pid, "VmRSS")
            peak_kb = proc_status_kb(daemon.pid, "VmHWM")
            settled_kb = settled_rss_kb(daemon.pid)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
        return {
            "ready_ms": ready_ms,
            "answer_ms": answer_ms,
            "cpu_ms": cpu_ms,
            "rss_mb": rss_kb / 1024,
            "peak_mb": max(peak_kb, settled_kb) / 1024,
            "settled_mb": settled_kb / 1024,
            "file_mb": file_bytes / 1e6,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(sizes: Sequence[int], trials: int, base: Path | None) -> list[dict[str, Any]]:
    """Per size: this tree's and the base's medians, alternating, and FTS5's build."""
    rows = []
    for n_entries in sizes:
        contents = random_contents(n_entries)
        runs: dict[str, list[dict[str, float]]] = {"this": [], "base": []}
        fts5: list[float] = []
        for _ in range(trials):
            runs["this"].append(first_answer(None, contents))
            if base is not None:
                runs["base"].append(first_answer(base, contents))
            fts5.append(fts5_build_ms(contents))
        row: dict[str, Any] = {"entries": n_entries, "fts5_build_ms": statistics.median(fts5)}
        for name, its_runs in runs.items():
            if its_runs:
                row[name] = {
                    key: statistics.median(r[key] for r in its_runs) for key in its_runs[0]
                }
        rows.append(row)
        print(f"  {n_entries:,} entries measured", flush=True)
    return rows


def targets(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Judge issue 35's cold targets on this tree's figures (sizes 10k and 100k only)."""
    verdicts: dict[str, dict[str, Any]] = {}

    def judge(name: str, value: float, target: float, unit: str, beside: str = "") -> None:
        met = value <= target
        verdicts[name] = {
            "value": value,
            "target": target,
            "met": met,
            "text": f"{value:.2f} {unit}{beside} (target <= {target:g} {unit}): "
            + ("met" if met else "NOT met"),
        }

    for row in rows:
        this, n_entries = row["this"], row["entries"]
        if n_entries == 10_000:
            judge("first answer, never-seen 10k", this["answer_ms"], TARGET_ANSWER_10K_MS, "ms")
            judge(
                "settled RSS after a first query at 10k",
                this["settled_mb"],
                TARGET_RSS_10K_MB,
                "MB",
            )
        if n_entries == 100_000:
            ratio = this["answer_ms"] / row["fts5_build_ms"]
            judge(
                "first answer, never-seen 100k, x FTS5's build",
                ratio,
                TARGET_X_FTS5,
                "x",
                f" ({this['answer_ms']:.0f} ms; FTS5 {row['fts5_build_ms']:.0f} ms)",
            )
            judge(
                "settled RSS after a first query at 100k",
                this["settled_mb"],
                TARGET_RSS_100K_MB,
                "MB",
                f" (peak {this['peak_mb']:.0f} MB)",
            )
    return verdicts


def markdown_table(rows: Sequence[dict[str, Any]], base_name: str) -> str:
    """One row per size and tree: spawn to READY and to the first answer, FTS5, memory."""
    lines = [
        f"Never-seen workspace (random {WORDS_PER_ENTRY}-word entries, {VOCABULARY:,}-word "
        "vocabulary, five files): a fresh daemon's first answer",
        "",
        "| entries | daemon | READY ms | first answer ms | daemon CPU ms | ÷ FTS5 build "
        "| FTS5 build ms | RSS MB at answer | peak MB | settled MB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        for name in ("base", "this"):
            if name not in row:
                continue
            f = row[name]
            label = base_name if name == "base" else "this tree"
            lines.append(
                f"| {row['entries']:,} | {label} | {f['ready_ms']:.0f} | {f['answer_ms']:.0f} "
                f"| {f['cpu_ms']:.0f} "
                f"| {f['answer_ms'] / row['fts5_build_ms']:.1f}x | {row['fts5_build_ms']:.0f} "
                f"| {f['rss_mb']:.1f} | {f['peak_mb']:.1f} | {f['settled_mb']:.1f} |"
            )
    return "\n".join(lines)


def run(
    *,
    sizes: Sequence[int] = SIZES,
    trials: int = TRIALS,
    base: Path | None = None,
    output: Path | None = None,
) -> dict[str, Any]:
    """Measure, print the table and the verdicts, save the report; return it."""
    began = time.perf_counter()
    rows = measure(sizes, trials, base)
    report: dict[str, Any] = {
        "benchmark": "cold_workspace",
        "commit": commit(),
        "base": BASE if base is not None else None,
        "rows": rows,
        "targets": targets(rows),
        "seconds": time.perf_counter() - began,
    }
    print()
    print(markdown_table(rows, f"base {BASE}"))
    print()
    print_verdicts(report["targets"])
    save(report, output)
    return report


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.cold_workspace [--quick] [--against DIR] [--trials N]`."""
    parser = argparse.ArgumentParser(prog="python -m bench.cold_workspace", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one trial")
    parser.add_argument("--trials", type=int, default=TRIALS, help="runs per size and daemon")
    parser.add_argument(
        "--against", type=Path, help=f"an older memd tree to run beside (default: {BASE})"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memd-bench-before-", dir="/tmp") as scratch:
        base = args.against or tree_at(BASE, Path(scratch))
        if base is not None:  # its bytecode, as `make bench` gives this tree
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", "memd", "client/memd_client"],
                cwd=base,
                check=False,
                stdout=subprocess.DEVNULL,
            )
        run(
            sizes=QUICK_SIZES if args.quick else SIZES,
            trials=1 if args.quick else args.trials,
            base=base,
            output=RESULTS_DIR
            / ("cold_workspace-quick.json" if args.quick else "cold_workspace.json"),
        )


if __name__ == "__main__":
    main()
