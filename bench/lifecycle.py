"""Daemon lifecycle: cold start, first answer, memory use, and an outside edit becoming searchable.

Every figure sits beside a floor or baseline measured in the same run:
- Cold start (`COLD_ENTRIES` entries, `bench.query.make_corpus`, written before the daemon
  starts), twice on the same private state: the first start (the workspace never seen: parsed
  and indexed) and a restart (it finds the index the first run kept). Each is timed from spawn
  to `READY=1` on its `NOTIFY_SOCKET`, beside the floor (a bare Python process that only sends
  `READY=1`), and from spawn to the first answer to a client that is already running and asks
  as soon as READY arrives (so the client's own start is not counted). Then a fresh
  `python -m memd query ...` process against the warm daemon (what a one-off CLI call costs)
  beside the peer: a fresh stdlib-only Python process that reads, parses and substring-scores
  the category files as HackLM does. The medians of `trials` runs.
- RSS: a fresh daemon's VmRSS (and VmHWM, the peak) from /proc/<pid>/status after it loads
  1k, 10k and 100k entries and answers every `bench.query.QUERIES` once, beside the same
  daemon idle before loading, and the size of the files it loaded.
- Edit to searchable (at `EDIT_ENTRIES`): a line appended by hand to a category file (each edit
  to the next category), then `query` for its unique word every `POLL_S` seconds until the new
  entry is a hit; p50/max over the edits, beside one warm query's p50 (a poll cannot be
  quicker).

Targets (issue 7): cold start to ready <= 300 ms at 10k entries (judged on the restart, on
READY and on the first answer), RSS <= 60 MB at 10k, edit to searchable <= 300 ms. Figures go
to stdout as Markdown tables and to `bench/results/lifecycle.json` (`lifecycle-quick.json` with
`--quick`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench._daemon import percentile, running_daemon
from bench._report import RESULTS_DIR, commit, print_verdicts, save
from bench.query import QUERIES, make_corpus, write_workspace
from memd.core.format.categories import HACKLM_CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd_client import Client

COLD_ENTRIES = 10_000
RSS_SIZES = (1_000, 10_000, 100_000)
EDIT_ENTRIES = 10_000
TRIALS = 3
EDITS = 20
QUICK_COLD_ENTRIES = 300
QUICK_RSS_SIZES = (200, 1_000)
QUICK_EDIT_ENTRIES = 200
QUICK_TRIALS = 1
QUICK_EDITS = 3
FIRST_QUERY = "database migration"
POLL_S = 0.002
READY_TIMEOUT = 30.0
EDIT_TIMEOUT = 30.0
CLIENT_TIMEOUT = 300.0

TARGET_COLD_MS = 300.0
TARGET_RSS_MB = 60.0
TARGET_EDIT_MS = 300.0

# The floor of "daemon ready": a Python process that only tells the service manager it is ready.
_READY_FLOOR_SCRIPT = """
import os, socket
with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
    sock.connect(os.environ["NOTIFY_SOCKET"])
    sock.send(b"READY=1")
"""

# The peer of "first query answered": a fresh process doing what a client without memd does
# (HackLM's reading and substring scoring, hacklm-spec.md §3), stdlib only.
_HACKLM_SCRIPT = r"""
import re, sys
from pathlib import Path
memory, query = Path(sys.argv[1]), sys.argv[2]
slugged = re.compile(r"\[([^\]]+)\]\s+(.+)", re.DOTALL)
entries = []
for name in ("instructions.md", "quirks.md", "preferences.md", "decisions.md", "security.md"):
    try:
        text = (memory / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        continue
    for line in text.split("\n"):
        raw = line.rstrip("\r")[2:].strip() if line.startswith("- ") else ""
        if raw:
            match = slugged.fullmatch(raw)
            entries.append(match.group(2) if match else raw)
keywords = [re.sub("[^a-z0-9]", "", w) for w in query.lower().split() if len(w) > 2]
whole = query.lower()
scored = []
for content in entries:
    low = content.lower()
    score = sum(10 for k in keywords if k in low) + (25 if whole in low else 0)
    if score:
        scored.append((score, content))
scored.sort(key=lambda pair: -pair[0])
for _, content in scored[:10]:
    print(content)
"""


# ---------------------------------------------------------------------------- cold start


@contextlib.contextmanager
def _notify_socket(path: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(str(path))
        sock.settimeout(READY_TIMEOUT)
        yield sock
    finally:
        sock.close()
        path.unlink(missing_ok=True)


def _wait_ready(sock: socket.socket, process: subprocess.Popen[bytes]) -> None:
    """Return once a datagram with the line READY=1 arrives."""
    while True:
        try:
            data = sock.recv(4096)
        except TimeoutError:
            process.kill()
            process.wait()
            raise RuntimeError(f"no READY=1 within {READY_TIMEOUT} s") from None
        if "READY=1" in data.decode(errors="replace").splitlines():
            return


def _spawn_until_ready(
    command: list[str], environ: dict[str, str], notify: Path, cwd: Path | None = None
) -> tuple[subprocess.Popen[bytes], float]:
    """Start `command` (in `cwd`) with NOTIFY_SOCKET=`notify`; return it and ms from spawn to
    READY=1."""
    with _notify_socket(notify) as sock:
        began = time.perf_counter()
        process = subprocess.Popen(
            command,
            env={**environ, "NOTIFY_SOCKET": str(notify)},
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        _wait_ready(sock, process)
        return process, (time.perf_counter() - began) * 1000.0


def _wall_ms(command: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, timeout=CLIENT_TIMEOUT)
    return (time.perf_counter() - began) * 1000.0


def cold_start_trial(corpus: dict[Category, list[Entry]]) -> dict[str, float]:
    """One first start and one restart on a fresh temp root; return their figures (ms)."""
    root = Path(tempfile.mkdtemp(prefix="memd-bench-cold-", dir="/tmp"))
    try:
        workspace = root / "ws"
        write_workspace(workspace, corpus)
        (root / "state").mkdir()
        environ = {**os.environ, "XDG_STATE_HOME": str(root / "state")}
        socket_path = root / "memd.sock"
        floor, floor_ms = _spawn_until_ready(
            [sys.executable, "-c", _READY_FLOOR_SCRIPT], environ, root / "floor.notify"
        )
        floor.wait(timeout=READY_TIMEOUT)
        figures = {"ready_floor_ms": floor_ms}
        for start in ("first", "restart"):  # the restart finds the index the first run kept
            ready_ms, answer_ms, process_ms = _serve_and_answer(environ, socket_path, workspace)
            figures[f"{start}_ready_ms"] = ready_ms
            figures[f"{start}_answer_ms"] = answer_ms
            figures["client_process_ms"] = process_ms
        hacklm = [sys.executable, "-c", _HACKLM_SCRIPT, str(workspace / ".memory"), FIRST_QUERY]
        figures["hacklm_process_ms"] = _wall_ms(hacklm)
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _serve_and_answer(
    environ: dict[str, str], socket_path: Path, workspace: Path
) -> tuple[float, float, float]:
    """Start a daemon; return ms from spawn to READY=1, ms from spawn to the first answer (by
    a client already running, asking as soon as READY arrives), and the wall time of a fresh
    `memd query` process against the now warm daemon."""
    serve = [sys.executable, "-m", "memd", "serve", "--socket", str(socket_path)]
    began = time.perf_counter()
    daemon, ready_ms = _spawn_until_ready(
        [*serve, "--log-level", "WARNING"], environ, socket_path.with_suffix(".notify")
    )
    try:
        with Client(str(socket_path), workspace=workspace, timeout=CLIENT_TIMEOUT) as client:
            client.query(FIRST_QUERY)
        answer_ms = (time.perf_counter() - began) * 1000.0
        query = [
            sys.executable, "-m", "memd", "query", "--socket", str(socket_path),
            "--workspace", str(workspace), "--no-autostart", FIRST_QUERY,
        ]  # fmt: skip
        process_ms = _wall_ms(query)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    return ready_ms, answer_ms, process_ms


def cold_start(n_entries: int, trials: int) -> dict[str, Any]:
    """Median figures of `trials` cold starts at `n_entries` entries."""
    corpus = make_corpus(n_entries)
    runs = [cold_start_trial(corpus) for _ in range(trials)]
    figures: dict[str, Any] = {"entries": n_entries, "trials": trials, "runs": runs}
    for key in runs[0]:
        figures[key] = statistics.median(run[key] for run in runs)
    return figures


# ---------------------------------------------------------------------------- memory


def proc_status_kb(pid: int, field: str) -> int:
    """Return a `kB` field (e.g. VmRSS) of /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value.split()[0])
    raise KeyError(f"{field} not in /proc/{pid}/status")


def rss_at(n_entries: int) -> dict[str, float]:
    """Load `n_entries` entries into a fresh daemon, run the queries; return its memory."""
    corpus = make_corpus(n_entries)
    with running_daemon(private_state=True) as (socket_path, root):
        with Client(socket_path, timeout=CLIENT_TIMEOUT) as client:
            pid = client.status().pid
        idle_kb = proc_status_kb(pid, "VmRSS")
        workspace = root / "ws"
        file_bytes = write_workspace(workspace, corpus)
        with Client(socket_path, workspace=workspace, timeout=CLIENT_TIMEOUT) as client:
            began = time.perf_counter()
            client.query(FIRST_QUERY)
            load_ms = (time.perf_counter() - began) * 1000.0
            for text in QUERIES:
                client.query(text)
        rss_kb = proc_status_kb(pid, "VmRSS")
        peak_kb = proc_status_kb(pid, "VmHWM")
    return {
        "entries": float(n_entries),
        "file_mb": file_bytes / 1e6,
        "idle_mb": idle_kb / 1024,
        "rss_mb": rss_kb / 1024,
        "peak_mb": peak_kb / 1024,
        "load_ms": load_ms,
        "rss_x_idle": rss_kb / idle_kb,
        "growth_x_files": (rss_kb - idle_kb) * 1024 / file_bytes,
        "kb_per_entry": (rss_kb - idle_kb) / n_entries,
    }


# ---------------------------------------------------------------------------- outside edits


def edit_to_searchable(n_entries: int, edits: int) -> dict[str, float]:
    """Append `edits` lines by hand; return p50/max ms until each is a query hit."""
    corpus = make_corpus(n_entries)
    latencies: list[float] = []
    polls = 0
    with running_daemon(private_state=True) as (socket_path, root):
        workspace = root / "ws"
        write_workspace(workspace, corpus)
        with Client(socket_path, workspace=workspace, timeout=CLIENT_TIMEOUT) as client:
            client.query(FIRST_QUERY)  # load and index before anything is timed
            warm: list[float] = []
            for text in QUERIES:
                began = time.perf_counter()
                client.query(text)
                warm.append((time.perf_counter() - began) * 1000.0)
            for number in range(edits):
                category = HACKLM_CATEGORIES[number % len(HACKLM_CATEGORIES)]
                path = workspace / ".memory" / category.file
                slug = f"hand-edit-{number}"
                word = f"zqxedit{number}"
                began = time.perf_counter()
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"- [{slug}] Remember the {word} marker when you deploy.\n")
                polls += _poll_until_hit(client, word, slug)
                latencies.append((time.perf_counter() - began) * 1000.0)
    latencies.sort()
    warm.sort()
    p50 = percentile(latencies, 0.5)
    return {
        "entries": float(n_entries),
        "edits": float(edits),
        "p50_ms": p50,
        "max_ms": latencies[-1],
        "polls_per_edit": polls / edits,
        "warm_query_p50_ms": percentile(warm, 0.5),
        "p50_x_warm_query": p50 / percentile(warm, 0.5),
    }


def _poll_until_hit(client: Client, word: str, slug: str) -> int:
    deadline = time.monotonic() + EDIT_TIMEOUT
    polls = 0
    while time.monotonic() < deadline:
        polls += 1
        if any(hit.slug == slug for hit in client.query(word).results):
            return polls
        time.sleep(POLL_S)
    raise RuntimeError(f"{slug} not searchable within {EDIT_TIMEOUT} s")


# ---------------------------------------------------------------------------- the run


def run(
    *,
    cold_entries: int = COLD_ENTRIES,
    trials: int = TRIALS,
    rss_sizes: Sequence[int] = RSS_SIZES,
    edit_entries: int = EDIT_ENTRIES,
    edits: int = EDITS,
    output: Path | None = None,
) -> dict[str, Any]:
    """Measure cold start, RSS and edit-to-searchable; print the tables; write the report.

    Returns:
        The report: "cold_start", "rss" (one per size), "edit", "targets", "seconds".
    """
    began = time.perf_counter()
    cold = cold_start(cold_entries, trials)
    print(f"  cold start measured ({time.perf_counter() - began:.1f} s)", flush=True)
    memory = []
    for n_entries in rss_sizes:
        memory.append(rss_at(n_entries))
        print(f"  RSS at {n_entries} measured ({time.perf_counter() - began:.1f} s)", flush=True)
    edit = edit_to_searchable(edit_entries, edits)
    print(f"  edits measured ({time.perf_counter() - began:.1f} s)", flush=True)
    report: dict[str, Any] = {
        "benchmark": "lifecycle",
        "commit": commit(),
        "cold_start": cold,
        "rss": memory,
        "edit": edit,
        "targets": targets(cold, memory, edit),
        "seconds": time.perf_counter() - began,
    }
    print()
    print(markdown_tables(cold, memory, edit))
    print()
    print_verdicts(report["targets"])
    save(report, output)
    return report


def targets(
    cold: dict[str, Any], memory: Sequence[dict[str, float]], edit: dict[str, float]
) -> dict[str, dict[str, Any]]:
    """Judge the issue's lifecycle targets (cold start and RSS only at 10k entries)."""
    verdicts: dict[str, dict[str, Any]] = {}

    def judge(name: str, value: float, target: float, unit: str) -> None:
        met = value <= target
        verdict = "met" if met else "NOT met"
        verdicts[name] = {
            "value": value,
            "target": target,
            "met": met,
            "text": f"{value:.1f} {unit} (target <= {target:g} {unit}): {verdict}",
        }

    if cold["entries"] == 10_000:
        judge("cold start to READY=1 at 10k", cold["restart_ready_ms"], TARGET_COLD_MS, "ms")
        judge(
            "cold start to first answer at 10k (restart)",
            cold["restart_answer_ms"],
            TARGET_COLD_MS,
            "ms",
        )
    for figures in memory:
        if figures["entries"] == 10_000:
            judge("RSS at 10k", figures["rss_mb"], TARGET_RSS_MB, "MB")
    judge(
        f"edit to searchable at {edit['entries']:.0f} (p50)", edit["p50_ms"], TARGET_EDIT_MS, "ms"
    )
    judge(
        f"edit to searchable at {edit['entries']:.0f} (max)", edit["max_ms"], TARGET_EDIT_MS, "ms"
    )
    return verdicts


def markdown_tables(
    cold: dict[str, Any], memory: Sequence[dict[str, float]], edit: dict[str, float]
) -> str:
    """Return the three Markdown tables: cold start, RSS, edit to searchable."""
    floor, client = cold["ready_floor_ms"], cold["client_process_ms"]
    hacklm = cold["hacklm_process_ms"]
    rows = [
        f"Cold start, {cold['entries']:,} entries (median of {cold['trials']})",
        "",
        "| step | ms | beside |",
        "|---|---:|---|",
        f"| floor: bare Python process to READY=1 | {floor:.0f} | |",
        f"| memd serve, first start: spawn to READY=1 | {cold['first_ready_ms']:.0f} "
        f"| {cold['first_ready_ms'] / floor:.1f}x the floor |",
        f"| memd serve, first start: spawn to first answer (parses and indexes) "
        f"| {cold['first_answer_ms']:.0f} | {cold['first_answer_ms'] / TARGET_COLD_MS:.1f}x "
        "the 300 ms target |",
        f"| memd serve, restart: spawn to READY=1 | {cold['restart_ready_ms']:.0f} "
        f"| {cold['restart_ready_ms'] / floor:.1f}x the floor |",
        f"| memd serve, restart: spawn to first answer (kept index) "
        f"| {cold['restart_answer_ms']:.0f} | {cold['restart_answer_ms'] / TARGET_COLD_MS:.1f}x "
        "the 300 ms target |",
        f"| fresh `memd query` process, daemon warm | {client:.0f} "
        f"| {client / hacklm:.1f}x the peer |",
        f"| peer: fresh Python process reading + substring-scoring the files | {hacklm:.0f} | |",
        "",
        "Daemon memory after loading and answering every query once",
        "",
        "| entries | files MB | idle RSS MB | RSS MB | peak MB | RSS ÷ idle | growth ÷ files "
        "| KB per entry | first query ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows.extend(
        f"| {m['entries']:,.0f} | {m['file_mb']:.2f} | {m['idle_mb']:.1f} | {m['rss_mb']:.1f} "
        f"| {m['peak_mb']:.1f} | {m['rss_x_idle']:.2f}x | {m['growth_x_files']:.1f}x "
        f"| {m['kb_per_entry']:.2f} | {m['load_ms']:.0f} |"
        for m in memory
    )
    rows += [
        "",
        f"Outside edit to searchable, {edit['entries']:,.0f} entries ({edit['edits']:.0f} appends, "
        f"polled every {POLL_S * 1000:g} ms)",
        "",
        "| p50 ms | max ms | polls per edit | warm query p50 ms | p50 ÷ warm query |",
        "|---:|---:|---:|---:|---:|",
        f"| {edit['p50_ms']:.1f} | {edit['max_ms']:.1f} | {edit['polls_per_edit']:.1f} "
        f"| {edit['warm_query_p50_ms']:.2f} | {edit['p50_x_warm_query']:.1f}x |",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: tiny sizes, one trial, 3 edits)."""
    parser = argparse.ArgumentParser(prog="python -m bench.lifecycle", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one trial, 3 edits")
    args = parser.parse_args(argv)
    if args.quick:
        run(
            cold_entries=QUICK_COLD_ENTRIES,
            trials=QUICK_TRIALS,
            rss_sizes=QUICK_RSS_SIZES,
            edit_entries=QUICK_EDIT_ENTRIES,
            edits=QUICK_EDITS,
            output=RESULTS_DIR / "lifecycle-quick.json",
        )
    else:
        run(output=RESULTS_DIR / "lifecycle.json")


if __name__ == "__main__":
    main()
