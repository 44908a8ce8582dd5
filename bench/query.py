"""Query latency over the socket at 1k, 10k and 100k entries, beside its floor and two peers.

For each size, a deterministic corpus of one-sentence developer rules (`make_corpus`: the
`bench.search_speed` generator plus project-specific details, so rare words exist too) is spread
evenly over the five category files of one workspace, written before a real `memd serve`
(private state) loads it. Then, on the same corpus, in the same run, the same fixed `QUERIES`
(corpus words, natural phrasings and misses), each timed per query:
- `memd`: the `query` request (limit 10) over the socket, by a minimal client loop: send the
  pre-encoded frame, read until the reply's newline (memd's `LineDecoder`), decode the reply
  into the typed `QueryResult` with msgspec;
- `client`: the same through `memd_client.Client.query` (what library users pay);
- `noop`: the issue-35 floor: a `status` request (it reads nothing) through the same daemon,
  timed with the same client loop: the daemon's own round trip, without the search;
- `echo_anyio`, `echo_plain`: the transport's floor. A trivial server in its own process
  (`bench._echo`; anyio streams as memd uses, or blocking stdlib sockets), same framing,
  answering each request with memd's own reply to it (same bytes, same size), timed with
  the same client loop;
- `fts5`: SQLite FTS5 (porter) bm25 top-10 over the same entries, in-process, words OR-ed;
- `hacklm`: what a client does without memd: read and parse every category file, then
  substring-score (`bench.retrieval.hacklm_rank`), per query, in-process.

Each method runs whole passes over `QUERIES` until a time budget is spent (at least one pass).
Targets (issue 7): memd p50 <= 0.5 ms and <= 5x the (anyio) echo at 10k, <= 3 ms at 100k, and
sub-linear growth of memd's own cost (p50 minus the echo floor): its exponent between the two
largest sizes, ln(cost ratio) / ln(size ratio), below 1. Issue 35: memd p50 <= 3x the `noop`
p50 at 10k.

`--baseline-daemon PATH` runs another `memd` executable (the commit a change started from, say)
on the same workspace in the same run, right after this tree's: `base_memd` and `base_noop` are
its `memd` and `noop`, so every figure stands beside the baseline's.

Figures go to stdout as a Markdown table and to `bench/results/query.json`
(`query-quick.json` with `--quick`: 200 and 1,000 entries, short budgets).
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import math
import random
import socket
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from bench._daemon import percentile, running_daemon
from bench._echo import echo_server
from bench._report import RESULTS_DIR, commit, print_verdicts, save
from bench.retrieval import fts5_match, hacklm_rank
from bench.search_speed import SEED, _pick, _sentence, _words
from memd.core.format import mdformat
from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd_client import Client, LineDecoder, protocol as p

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (200, 1_000)
LIMIT = 10
QUERY_TIMEOUT = 120.0
BUDGET_S = 2.0
"""Seconds of timed queries per method and size (whole passes, at least one)."""
QUICK_BUDGET_S = 0.1
MAX_SAMPLES = 3_000

TARGET_P50_10K_MS = 0.5
TARGET_ECHO_RATIO_10K = 5.0
TARGET_P50_100K_MS = 3.0

QUERIES: tuple[str, ...] = (
    "database migration",
    "rotate the secret token",
    "retry backoff timeout",
    "lockfile version",
    "cache the session cookie",
    "deploy the container image",
    "validate input path",
    "never log passwords",
    "how do we handle the timezone of a date",
    "json schema",
    "async worker queue",
    "release changelog",
    "test fixture snapshot",
    "postgres",
    "redis cache",
    "pytest fixtures",
    "docker volume",
    "terraform",
    "billing service",
    "what must happen before you push a release branch",
    "encrypt",
    "symlink",
    "permission role policy",
    "webhook signature",
    "stripe checkout",
    "unicode encoding of file paths",
    "commit",
    "kubernetes helm chart",
    "graphql resolver",
    "quantum entanglement",
    "zebra",
    "fortran compiler flags",
)
"""Fixed queries: corpus words, phrasings with stop words, and misses (the last five)."""

METHODS: dict[str, str] = {
    "memd": "memd `query` over the socket",
    "client": "memd via `Client.query`",
    "noop": "floor: `status` through the same daemon (no-op)",
    "echo_anyio": "floor: echo server (anyio), same framing and reply",
    "echo_plain": "floor: echo server (plain sockets), same framing and reply",
    "fts5": "SQLite FTS5 bm25 top-10, in-process",
    "hacklm": "HackLM-style: read + parse files, substring score",
}
FLOOR = "echo_anyio"
NOOP = "noop"
BASELINE_METHODS: dict[str, str] = {
    "base_memd": "baseline daemon: `query` over the socket",
    "base_noop": "baseline daemon: `status` (no-op)",
}
TARGET_NOOP_RATIO_10K = 3.0
STATUS_FRAME = b'{"jsonrpc":"2.0","id":1,"method":"status","params":{}}\n'

# ---------------------------------------------------------------------------- corpus

_TOOLS = _words(
    "postgres redis nginx kafka rabbitmq celery pytest docker terraform ansible webpack vite "
    "eslint prettier mypy ruff alembic sqlalchemy fastapi django flask react svelte tailwind "
    "storybook playwright cypress jest vitest sentry grafana prometheus opentelemetry s3 "
    "cloudfront lambda dynamodb sqs stripe twilio auth0 oauth jwt openapi protobuf grpc "
    "websocket cron systemd launchd homebrew pnpm npm yarn poetry pip cargo clippy gofmt bazel "
    "github gitlab jenkins dependabot renovate vault letsencrypt cloudflare elasticsearch "
    "sqlite duckdb pandas numpy jupyter ffmpeg openssl libsodium argon2 bcrypt"
)
_MODULES = _words(
    "billing checkout onboarding search notifications payments admin reporting ingest "
    "scheduler api frontend backend cli sdk auth gateway exporter importer webhook mobile "
    "analytics invoices inventory"
)
_KINDS = _words("service module package worker app job")
_DETAILS = (
    " in the {m} {k}",
    " ({t})",
    " when using {t}",
    " for {t} in the {m} {k}",
    " in {t}",
)
DETAIL_SHARE = 0.7
"""The share of sentences that get a project-specific detail."""


def make_corpus(n_entries: int, seed: int = SEED) -> dict[Category, list[Entry]]:
    """Return `n_entries` deterministic one-sentence rules spread evenly over the categories.

    Each is a `bench.search_speed` sentence, most with a detail naming a tool or a part of the
    project ("... in the billing service", "... (postgres)"), so the vocabulary has a long tail.
    Slugs are unique; line numbers are those `write_workspace` gives them.
    """
    rng = random.Random(seed)
    header_lines = {c: c.header.count("\n") for c in CATEGORIES}
    corpus: dict[Category, list[Entry]] = {c: [] for c in CATEGORIES}
    for number in range(n_entries):
        category = CATEGORIES[number % len(CATEGORIES)]
        content = _sentence(rng)
        if rng.random() < DETAIL_SHARE:
            detail = rng.choice(_DETAILS).format(
                t=_pick(rng, _TOOLS), m=_pick(rng, _MODULES), k=rng.choice(_KINDS)
            )
            content = content[:-1] + detail + "."
        slug = "-".join(content.lower().rstrip(".").replace(";", "").split()[:3]) + f"-{number}"
        found = corpus[category]
        line = header_lines[category] + len(found) + 1
        found.append(Entry(line=line, slug=slug, content=content))
    return corpus


def category_text(category: Category, entries: Sequence[Entry]) -> str:
    """Return the category file for `entries`: the header, then one `- [slug] content` a line."""
    return category.header + "".join(
        mdformat.format_entry(entry.slug or "", entry.content) + "\n" for entry in entries
    )


def write_workspace(workspace: Path, corpus: dict[Category, list[Entry]]) -> int:
    """Write `corpus` as the category files of `workspace`/.memory; return their total bytes.

    memd's per-category limits are advisory for files written by hand, so they are ignored.
    """
    memory = workspace / ".memory"
    memory.mkdir(parents=True, exist_ok=True)
    total = 0
    for category, entries in corpus.items():
        data = category_text(category, entries).encode("utf-8")
        (memory / category.file).write_bytes(data)
        total += len(data)
    return total


# ---------------------------------------------------------------------------- the ways to ask


class _QueryReply(msgspec.Struct):
    id: int
    result: p.QueryResult


_reply_decoder = msgspec.json.Decoder(_QueryReply)
_request_encoder = msgspec.json.Encoder()


def request_frames(workspace: Path, queries: Sequence[str]) -> list[bytes]:
    """Return one `query` request frame per query, with ids 1, 2, ..."""
    return [
        _request_encoder.encode(
            {
                "jsonrpc": "2.0",
                "id": number,
                "method": "query",
                "params": {"workspace": str(workspace), "query": query, "limit": LIMIT},
            }
        )
        + b"\n"
        for number, query in enumerate(queries, start=1)
    ]


class RawClient:
    """The minimal client loop: send a frame, read one reply frame, decode it (typed)."""

    def __init__(self, socket_path: Path) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(QUERY_TIMEOUT)
        self._sock.connect(str(socket_path))
        self._decoder = LineDecoder(max_frame=64 * 1024 * 1024)
        self._frames: list[bytes] = []

    def round_trip(self, frame: bytes) -> bytes:
        """Send `frame`; return the next reply frame (without its newline)."""
        self._sock.sendall(frame)
        while not self._frames:
            data = self._sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            self._frames.extend(self._decoder.feed(data))
        return self._frames.pop(0)

    def query(self, frame: bytes) -> p.QueryResult:
        """One timed unit: the round trip plus decoding the reply into a `QueryResult`."""
        return _reply_decoder.decode(self.round_trip(frame)).result

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()


class Fts5Corpus:
    """An in-memory SQLite FTS5 table (porter) of every entry; bm25 top-k with content."""

    def __init__(self, contents: Iterable[str]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE memories USING fts5(content, tokenize='porter')")
        self._db.executemany("INSERT INTO memories(content) VALUES (?)", ((c,) for c in contents))
        self._db.commit()

    def top(self, query: str, limit: int = LIMIT) -> list[tuple[int, str]]:
        """Return (rowid, content) of the best `limit` entries by bm25."""
        match = fts5_match(query)
        if match is None:
            return []
        rows = self._db.execute(
            "SELECT rowid, content FROM memories WHERE memories MATCH ? "
            "ORDER BY bm25(memories) LIMIT ?",
            (match, limit),
        )
        return [(int(rowid), str(content)) for rowid, content in rows]

    def close(self) -> None:
        """Close the database."""
        self._db.close()


# uncached: a fresh process has no cache
_parse_entry_line = inspect.unwrap(mdformat.parse_entry_line)


def read_entries(memory_dir: Path) -> list[Entry]:
    """Read and parse every category file in `memory_dir`, as a client without memd does."""
    found: list[Entry] = []
    for category in CATEGORIES:
        try:
            text = (memory_dir / category.file).read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            parsed = _parse_entry_line(line.rstrip("\r"))
            if parsed is not None:
                found.append(Entry(line=number, slug=parsed[0], content=parsed[1]))
    return found


def hacklm_query(memory_dir: Path, query: str, limit: int = LIMIT) -> list[Entry]:
    """Read and parse every category file, then rank by HackLM's substring scoring."""
    return hacklm_rank(read_entries(memory_dir), query, limit)


# ---------------------------------------------------------------------------- timing


def time_queries(
    ask: Callable[[int], object], n_queries: int, budget_s: float, max_samples: int = MAX_SAMPLES
) -> list[float]:
    """Time `ask(i)` for i over every query, in whole passes until `budget_s` is spent.

    Returns:
        The latencies in milliseconds, in the order taken.
    """
    samples: list[float] = []
    began = time.perf_counter()
    while True:
        for index in range(n_queries):
            started = time.perf_counter()
            ask(index)
            samples.append((time.perf_counter() - started) * 1000.0)
        spent = time.perf_counter() - began
        if spent >= budget_s or len(samples) + n_queries > max_samples:
            return samples


def summary(samples: list[float]) -> dict[str, float]:
    """Return n, p50, p99, mean and max (ms) of `samples`."""
    ordered = sorted(samples)
    return {
        "n": float(len(ordered)),
        "p50_ms": percentile(ordered, 0.50),
        "p99_ms": percentile(ordered, 0.99),
        "mean_ms": sum(ordered) / len(ordered),
        "max_ms": ordered[-1],
    }


# ---------------------------------------------------------------------------- one size


def run_size(
    n_entries: int,
    budget_s: float,
    queries: Sequence[str] = QUERIES,
    baseline_daemon: str | None = None,
) -> dict[str, Any]:
    """Measure every method at `n_entries` entries (and the baseline daemon's, if named);
    return its figures.

    Returns:
        "entries", "file_bytes", "load_ms" (memd's first query: workspace load and index
        build), "fts5_build_ms", "mean_hits" (memd), and "methods": method -> `summary`.
    """
    corpus = make_corpus(n_entries)
    all_entries = [entry for entries in corpus.values() for entry in entries]
    methods: dict[str, dict[str, float]] = {}
    figures: dict[str, Any] = {"entries": n_entries}
    with running_daemon(private_state=True) as (socket_path, root):
        workspace = root / f"ws-{n_entries}"
        figures["file_bytes"] = write_workspace(workspace, corpus)
        frames = request_frames(workspace, queries)
        raw = RawClient(socket_path)
        try:
            started = time.perf_counter()
            raw.query(request_frames(workspace, ["first query"])[0])
            figures["load_ms"] = (time.perf_counter() - started) * 1000.0
            replies = [raw.round_trip(frame) for frame in frames]  # warm-up, and the echo's
            hits = [len(_reply_decoder.decode(reply).result.results) for reply in replies]
            figures["mean_hits"] = sum(hits) / len(hits)
            methods["memd"], methods["noop"] = _time_daemon(raw, frames, budget_s)
        finally:
            raw.close()
        with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
            methods["client"] = summary(
                time_queries(
                    lambda i: client.query(queries[i], limit=LIMIT), len(queries), budget_s
                )
            )
    if baseline_daemon is not None:
        with running_daemon(private_state=True, executable=baseline_daemon) as (socket_path, root):
            workspace = root / f"ws-{n_entries}"
            write_workspace(workspace, corpus)
            baseline_frames = request_frames(workspace, queries)
            raw = RawClient(socket_path)
            try:
                raw.query(request_frames(workspace, ["first query"])[0])
                for frame in baseline_frames:  # warm-up, as this tree's had
                    raw.round_trip(frame)
                methods["base_memd"], methods["base_noop"] = _time_daemon(
                    raw, baseline_frames, budget_s
                )
            finally:
                raw.close()
    for mode in ("anyio", "plain"):
        methods[f"echo_{mode}"] = _time_echo(mode, replies, frames, budget_s)
    started = time.perf_counter()
    fts = Fts5Corpus(entry.content for entry in all_entries)
    figures["fts5_build_ms"] = (time.perf_counter() - started) * 1000.0
    try:
        methods["fts5"] = summary(
            time_queries(lambda i: fts.top(queries[i]), len(queries), budget_s)
        )
    finally:
        fts.close()
    with tempfile.TemporaryDirectory(prefix="memd-bench-hacklm-", dir="/tmp") as directory:
        write_workspace(Path(directory), corpus)
        memory = Path(directory) / ".memory"
        methods["hacklm"] = summary(
            time_queries(lambda i: hacklm_query(memory, queries[i]), len(queries), budget_s)
        )
    floor = methods[FLOOR]["p50_ms"]
    memd = methods["memd"]["p50_ms"]
    for found in methods.values():
        found["p50_x_floor"] = found["p50_ms"] / floor
        found["memd_p50_ratio"] = memd / found["p50_ms"]
    figures["memd_x_noop"] = memd / methods[NOOP]["p50_ms"]
    if baseline_daemon is not None:
        figures["base_memd_x_noop"] = (
            methods["base_memd"]["p50_ms"] / methods["base_noop"]["p50_ms"]
        )
    figures["methods"] = methods
    return figures


def _time_daemon(
    raw: RawClient, frames: list[bytes], budget_s: float
) -> tuple[dict[str, float], dict[str, float]]:
    """Time the queries and the no-op (`status`) on one daemon, each query followed by one
    no-op, so that both see the same machine; return (query summary, no-op summary)."""
    queried: list[float] = []
    idle: list[float] = []

    def ask(index: int) -> None:
        started = time.perf_counter()
        raw.round_trip(STATUS_FRAME)
        idle.append((time.perf_counter() - started) * 1000.0)
        started = time.perf_counter()
        raw.query(frames[index])
        queried.append((time.perf_counter() - started) * 1000.0)

    time_queries(ask, len(frames), 2 * budget_s, max_samples=MAX_SAMPLES)
    return summary(queried), summary(idle)


def _time_echo(
    mode: str, replies: list[bytes], frames: list[bytes], budget_s: float
) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory(prefix="memd-bench-echo-", dir="/tmp") as directory,
        echo_server(mode, Path(directory) / "echo.sock", replies) as socket_path,
    ):
        raw = RawClient(socket_path)
        try:
            for frame in frames:  # warm-up, as memd had
                raw.query(frame)
            return summary(time_queries(lambda i: raw.query(frames[i]), len(frames), budget_s))
        finally:
            raw.close()


# ---------------------------------------------------------------------------- the run


def run(
    sizes: Sequence[int] = SIZES,
    *,
    budget_s: float = BUDGET_S,
    output: Path | None = None,
    baseline_daemon: str | None = None,
) -> dict[str, Any]:
    """Measure every size, print the table and the targets, write the JSON report.

    Returns:
        The report: "sizes" (one `run_size` result each), "growth" (memd's net cost exponent
        between consecutive sizes), "targets" (name -> {"value", "target", "met"}), "seconds".
    """
    began = time.perf_counter()
    results = []
    for n_entries in sizes:
        results.append(run_size(n_entries, budget_s, baseline_daemon=baseline_daemon))
        print(f"  {n_entries} entries measured ({time.perf_counter() - began:.1f} s)", flush=True)
    report: dict[str, Any] = {
        "benchmark": "query",
        "commit": commit(),
        "queries": list(QUERIES),
        "limit": LIMIT,
        "budget_s": budget_s,
        "labels": METHODS,
        "floor": FLOOR,
        "baseline_daemon": baseline_daemon,
        "sizes": results,
        "growth": growth(results),
    }
    report["targets"] = targets(results, report["growth"])
    report["seconds"] = time.perf_counter() - began
    print()
    print(markdown_table(results, baseline=baseline_daemon is not None))
    print()
    for line in size_notes(results):
        print(line)
    print()
    print_verdicts(report["targets"])
    save(report, output)
    return report


def _memd_p50(result: dict[str, Any]) -> float:
    return float(result["methods"]["memd"]["p50_ms"])


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def net_cost(result: dict[str, Any]) -> float:
    """memd's own p50 at one size: its p50 minus the echo floor's (at least 1 µs)."""
    methods = result["methods"]
    return float(max(0.001, methods["memd"]["p50_ms"] - methods[FLOOR]["p50_ms"]))


def growth(results: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """Return memd's growth between consecutive sizes: size ratio, p50 and net cost ratios,
    and the net cost exponent (1 is linear)."""
    steps = []
    for small, large in itertools.pairwise(results):
        size_ratio = large["entries"] / small["entries"]
        cost_ratio = net_cost(large) / net_cost(small)
        steps.append(
            {
                "from": float(small["entries"]),
                "to": float(large["entries"]),
                "size_ratio": size_ratio,
                "p50_ratio": _memd_p50(large) / _memd_p50(small),
                "net_ratio": cost_ratio,
                "exponent": math.log(cost_ratio) / math.log(size_ratio),
            }
        )
    return steps


def targets(
    results: Sequence[dict[str, Any]], steps: Sequence[dict[str, float]]
) -> dict[str, dict[str, Any]]:
    """Judge the issue's query targets on the sizes measured (those missing are skipped)."""
    by_size = {result["entries"]: result["methods"] for result in results}
    verdicts: dict[str, dict[str, Any]] = {}

    def judge(name: str, value: float, target: float, unit: str) -> None:
        met = value <= target
        verdicts[name] = {
            "value": value,
            "target": target,
            "met": met,
            "text": f"{value:.3f}{unit} (target <= {target:g}{unit}): {_verdict(met)}",
        }

    if 10_000 in by_size:
        judge("p50 at 10k", by_size[10_000]["memd"]["p50_ms"], TARGET_P50_10K_MS, " ms")
        ratio = by_size[10_000]["memd"]["p50_x_floor"]
        judge("p50 at 10k vs echo", ratio, TARGET_ECHO_RATIO_10K, "x")
        noop = by_size[10_000]["memd"]["p50_ms"] / by_size[10_000][NOOP]["p50_ms"]
        judge("p50 at 10k vs a no-op through the daemon", noop, TARGET_NOOP_RATIO_10K, "x")
        if "base_memd" in by_size[10_000]:
            base = by_size[10_000]["base_memd"]["p50_ms"] / by_size[10_000]["base_noop"]["p50_ms"]
            verdicts["baseline: p50 at 10k vs a no-op"] = {
                "value": base,
                "target": TARGET_NOOP_RATIO_10K,
                "met": base <= TARGET_NOOP_RATIO_10K,
                "text": f"{base:.3f}x, the baseline daemon in this run (this tree: {noop:.3f}x)",
            }
    if 100_000 in by_size:
        judge("p50 at 100k", by_size[100_000]["memd"]["p50_ms"], TARGET_P50_100K_MS, " ms")
    if steps:
        last = steps[-1]
        verdicts["sub-linear growth"] = {
            "value": last["exponent"],
            "target": 1.0,
            "met": last["exponent"] < 1.0,
            "text": (
                f"net cost x{last['net_ratio']:.1f} for x{last['size_ratio']:.0f} entries "
                f"({last['from']:.0f} -> {last['to']:.0f}), exponent {last['exponent']:.2f} "
                f"(target < 1): {_verdict(last['exponent'] < 1.0)}"
            ),
        }
    return verdicts


def markdown_table(results: Sequence[dict[str, Any]], *, baseline: bool = False) -> str:
    """Return the Markdown table: one row per size and method (and the baseline daemon's)."""
    lines = [
        "| entries | method | queries timed | p50 ms | p99 ms | p50 ÷ echo (anyio) p50 "
        "| memd p50 ÷ its p50 |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    labels = {**METHODS, **BASELINE_METHODS} if baseline else METHODS
    for result in results:
        for method, label in labels.items():
            f = result["methods"][method]
            lines.append(
                f"| {result['entries']:,} | {label} | {f['n']:.0f} | {f['p50_ms']:.3f} "
                f"| {f['p99_ms']:.3f} | {f['p50_x_floor']:.2f}x | {f['memd_p50_ratio']:.2f}x |"
            )
    return "\n".join(lines)


def size_notes(results: Sequence[dict[str, Any]]) -> list[str]:
    """One line per size: file size, memd's first-query (load) time, FTS5 build, hits."""
    return [
        f"{r['entries']:,} entries: files {r['file_bytes'] / 1e6:.2f} MB; memd first query "
        f"(load + index) {r['load_ms']:.0f} ms; FTS5 build {r['fts5_build_ms']:.0f} ms; "
        f"memd mean hits {r['mean_hits']:.1f}"
        for r in results
    ]


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: 200 and 1,000 entries)."""
    parser = argparse.ArgumentParser(prog="python -m bench.query", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="200 and 1,000 entries, short")
    parser.add_argument("--sizes", type=int, nargs="+", help=f"entry counts (default {SIZES})")
    parser.add_argument("--budget", type=float, help=f"seconds per method and size ({BUDGET_S})")
    parser.add_argument(
        "--baseline-daemon", metavar="PATH", help="another memd executable, measured beside"
    )
    args = parser.parse_args(argv)
    sizes: Sequence[int]
    if args.quick:
        sizes, budget, name = QUICK_SIZES, QUICK_BUDGET_S, "query-quick.json"
    else:
        sizes, budget, name = SIZES, BUDGET_S, "query.json"
    run(
        args.sizes or sizes,
        budget_s=args.budget if args.budget is not None else budget,
        output=RESULTS_DIR / name,
        baseline_daemon=args.baseline_daemon,
    )


if __name__ == "__main__":
    main()
