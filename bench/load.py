"""Load: 1,000 concurrent connections with stores, queries and misbehaving clients, for a
bounded time, against a real `memd serve`.

One client process (this one, on anyio) opens the connections at once:
- 70 % query a 2,000-entry workspace in a loop (send, read the reply, again);
- 20 % store unique entries in a loop, spread over four workspaces and their categories;
- 5 % send half a request and stall: the daemon must close them after its `frame_timeout`
  (set to 2 s here) with a -32600 error;
- 5 % are slow readers: they send a query, wait 0.5 s, then read the reply.
Meanwhile a probe connection sends `status` every 50 ms and times each round trip (is the
daemon still responsive?), and the daemon's RSS is sampled (does memory stay bounded?). When
the time is up every client stops sending and reads what it is owed: a request sent and not
answered is lost, and none may be. Every store must come back "stored" and be in the files.

Figures: answered requests per second, the probe's p50/p99/max beside its idle p50, RSS idle /
loaded / peak / after, stalled clients closed. Targets (issue 8): no request lost; the probe's
p99 under 1 s; peak RSS under twice the loaded RSS plus 100 MB. Results: a Markdown table and
`bench/results/load.json` (`load-quick.json` with `--quick`: 60 connections, 1.5 s).
"""

from __future__ import annotations

import functools
import itertools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import SocketStream

from bench._daemon import percentile, wait_until_serving
from bench._report import commit, print_verdicts, save, settings_main
from bench._text import word
from bench.query import make_corpus, write_workspace

FRAME_TIMEOUT_S = 2.0
PROBE_INTERVAL_S = 0.05
SLOW_READ_S = 0.5
TARGET_PROBE_P99_MS = 1000.0
CORPUS_ENTRIES = 2_000
STORE_WORKSPACES = 4
CATEGORIES = ("Instruction", "Quirk", "Preference", "Decision", "Security")


@dataclass(frozen=True)
class Settings:
    """The size of one run."""

    connections: int = 1_000
    duration: float = 10.0


FULL = Settings()
QUICK = Settings(connections=60, duration=1.5)


@dataclass
class Tally:
    """What the clients saw."""

    sent: int = 0
    answered: int = 0
    store_replies: int = 0
    query_replies: int = 0
    clients: dict[str, int] = field(default_factory=dict)
    stored: int = 0
    errors: int = 0
    stalled_closed: int = 0
    stalled_open: int = 0
    probe_ms: list[float] = field(default_factory=list)
    idle_probe_ms: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    loaded_entries: int = 0
    loaded_rss_mb: float = 0.0


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class _Lines:
    """Reads newline-ended frames from a stream."""

    def __init__(self, stream: SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def next(self) -> bytes:
        while b"\n" not in self.buffer:
            self.buffer += await self.stream.receive()
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


def _frame(method: str, params: dict[str, Any], request_id: int) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return msgspec.json.encode(body) + b"\n"


async def _busy_client(
    socket_path: str, frames: Iterable[bytes], deadline: float, tally: Tally, *, kind: str
) -> None:
    async with await anyio.connect_unix(socket_path) as stream:
        lines = _Lines(stream)
        for frame in frames:
            if time.monotonic() >= deadline:
                break
            await stream.send(frame)
            tally.sent += 1
            if kind == "slow":
                await anyio.sleep(SLOW_READ_S)
            reply = msgspec.json.decode(await lines.next())
            tally.answered += 1
            if "error" in reply:
                tally.errors += 1
            elif kind == "store":
                tally.store_replies += 1
                tally.stored += reply["result"]["action"] == "stored"
            elif kind == "query":
                tally.query_replies += 1


async def _stalled_client(socket_path: str, deadline: float, tally: Tally) -> None:
    async with await anyio.connect_unix(socket_path) as stream:
        await stream.send(b'{"jsonrpc":"2.0","id":1,"method":"sta')
        lines = _Lines(stream)
        # Under load the daemon may accept this connection late: wait past the run's end.
        with anyio.move_on_at(deadline + FRAME_TIMEOUT_S * 3):
            reply = msgspec.json.decode(await lines.next())
            if reply.get("error", {}).get("code") == -32600:
                with anyio.move_on_after(2.0):
                    try:
                        while await stream.receive():
                            pass
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        tally.stalled_closed += 1  # closed by the daemon, as it must be
                        return
        tally.stalled_open += 1


async def _probe(socket_path: str, pid: int, deadline: float, tally: Tally) -> None:
    async with await anyio.connect_unix(socket_path) as stream:
        lines = _Lines(stream)
        frame = _frame("status", {}, 0)
        while time.monotonic() < deadline:
            began = time.perf_counter()
            await stream.send(frame)
            await lines.next()
            tally.probe_ms.append((time.perf_counter() - began) * 1000)
            tally.rss_mb.append(_rss_mb(pid))
            await anyio.sleep(PROBE_INTERVAL_S)


def _plan(settings: Settings, root: Path) -> list[tuple[str, Iterable[bytes]]]:
    """(kind, frames) per connection: the mix described in the module docstring."""
    queries = ["database migration", "retry backoff", "lockfile", "session cookie", "terraform"]
    plans: list[tuple[str, Iterable[bytes]]] = []
    for k in range(settings.connections):
        share = k % 20
        if share == 0:
            plans.append(("stalled", []))
        elif share == 1:
            frames = [
                _frame("query", {"workspace": str(root / "read"), "query": q}, n)
                for n, q in enumerate(queries * 4)
            ]
            plans.append(("slow", frames))
        elif share < 6:
            workspace = str(root / f"write{k % STORE_WORKSPACES}")
            plans.append(("store", _stores(k, workspace, CATEGORIES[k % len(CATEGORIES)])))
        else:
            asks = (
                _frame("query", {"workspace": str(root / "read"), "query": q}, n)
                for n, q in enumerate(itertools.cycle(queries))
            )
            plans.append(("query", asks))
    return plans


def _stores(client: int, workspace: str, category: str) -> Iterator[bytes]:
    """Client `client`'s endless store requests: each one new (never a duplicate)."""
    for n in itertools.count():
        content = f"Load client {word(client)} stores {word(client, n)} and {word(n, client)}."
        # As a person: an agent's Security or Instruction store would wait in the review
        # inbox, and this measures the store path itself.
        writer = {"client": "bench-load", "origin": "user"}
        params = {
            "workspace": workspace,
            "category": category,
            "content": content,
            "writer": writer,
        }
        yield _frame("store", params, n)


async def _drive(settings: Settings, socket_path: str, pid: int, root: Path) -> Tally:
    tally = Tally()
    plans = _plan(settings, root)
    tally.clients = dict(Counter(kind for kind, _frames in plans))
    tally.loaded_entries = await _warm_up(socket_path, root)
    tally.loaded_rss_mb = _rss_mb(pid)
    # The probe's idle round trip first, for comparison.
    await _probe(socket_path, pid, time.monotonic() + 0.5, tally)
    idle = list(tally.probe_ms)
    tally.probe_ms.clear()
    deadline = time.monotonic() + settings.duration
    async with anyio.create_task_group() as group:
        group.start_soon(_probe, socket_path, pid, deadline, tally)
        for kind, frames in plans:
            if kind == "stalled":
                group.start_soon(_stalled_client, socket_path, deadline, tally)
            else:
                busy = functools.partial(_busy_client, kind=kind)
                group.start_soon(busy, socket_path, frames, deadline, tally)
    tally.idle_probe_ms = idle
    return tally


def _count_entries(root: Path) -> int:
    total = 0
    for index in range(STORE_WORKSPACES):
        memory = root / f"write{index}" / ".memory"
        for path in memory.glob("*.md") if memory.is_dir() else []:
            if path.name != "archive.md":
                total += sum(1 for line in path.read_text().splitlines() if line.startswith("- "))
    return total


def run(settings: Settings = FULL, *, output: Path | None = None) -> dict[str, Any]:
    """Run the load; print and return the figures."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 65_536) if hard != resource.RLIM_INFINITY else 65_536
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    root = Path(tempfile.mkdtemp(prefix="memd-bench-load-", dir="/tmp"))
    try:
        (root / "state").mkdir()
        write_workspace(root / "read", make_corpus(CORPUS_ENTRIES))
        for index in range(STORE_WORKSPACES):
            (root / f"write{index}").mkdir()
        config = root / "config.toml"
        config.write_text(
            f"frame_timeout = {FRAME_TIMEOUT_S}\nmax_connections = {settings.connections + 64}\n"
            'log_level = "WARNING"\n'
        )
        socket_path = str(root / "memd.sock")
        environ = {**os.environ, "XDG_STATE_HOME": str(root / "state")}
        command = [sys.executable, "-m", "memd", "serve", "--socket", socket_path]
        daemon = subprocess.Popen(
            [*command, "--config", str(config)], stderr=subprocess.DEVNULL, env=environ
        )
        try:
            wait_until_serving(socket_path, daemon)
            idle_rss = _rss_mb(daemon.pid)
            began = time.perf_counter()
            tally = anyio.run(_drive, settings, socket_path, daemon.pid, root)
            seconds = time.perf_counter() - began
            after_rss = _rss_mb(daemon.pid)
            alive = daemon.poll() is None
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
        in_files = _count_entries(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    probe = sorted(tally.probe_ms)

    def per_client(kind: str) -> float:
        return max(1, tally.clients.get(kind, 0)) * settings.duration

    idle = sorted(tally.idle_probe_ms)
    figures = {
        "connections": settings.connections,
        "seconds": seconds,
        "sent": tally.sent,
        "answered": tally.answered,
        "lost": tally.sent - tally.answered,
        "answered_per_s": tally.answered / settings.duration,
        "errors": tally.errors,
        "store_replies": tally.store_replies,
        "stores_per_s": tally.store_replies / settings.duration,
        "stored": tally.stored,
        "per_query_client_per_s": tally.query_replies / per_client("query"),
        "per_store_client_per_s": tally.store_replies / per_client("store"),
        "stored_in_files": in_files,
        "stalled_closed": tally.stalled_closed,
        "stalled_left_open": tally.stalled_open,
        "probe_idle_p50_ms": percentile(idle, 0.5) if idle else 0.0,
        "probe_p50_ms": percentile(probe, 0.5) if probe else 0.0,
        "probe_p99_ms": percentile(probe, 0.99) if probe else 0.0,
        "probe_max_ms": probe[-1] if probe else 0.0,
        "probes": len(probe),
        "rss_idle_mb": idle_rss,
        "rss_loaded_mb": tally.loaded_rss_mb,
        "rss_peak_mb": max(tally.rss_mb, default=tally.loaded_rss_mb),
        "rss_after_mb": after_rss,
        "daemon_alive": alive,
        "loaded_entries": tally.loaded_entries,
    }
    targets = _targets(figures)
    report = {
        "benchmark": "load",
        "commit": commit(),
        "quick": settings != FULL,
        "settings": vars(settings),
        "figures": figures,
        "targets": targets,
    }
    print(markdown(figures))
    print()
    print_verdicts(targets)
    save(report, output)
    return report


async def _warm_up(socket_path: str, root: Path) -> int:
    """Load the query workspace (its first query builds the index) before the clock starts."""
    async with await anyio.connect_unix(socket_path) as stream:
        frame = _frame("stats", {"workspace": str(root / "read")}, 1)
        await stream.send(frame)
        reply = msgspec.json.decode(await _Lines(stream).next())
        await stream.send(_frame("query", {"workspace": str(root / "read"), "query": "x"}, 2))
        await _Lines(stream).next()
        return int(reply["result"]["total"])


def _targets(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    def verdict(met: bool, text: str) -> dict[str, Any]:
        return {"met": met, "text": f"{text}: {'met' if met else 'NOT met'}"}

    missing = figures["store_replies"] - figures["stored_in_files"]
    lost = figures["lost"] + abs(missing) + figures["errors"]
    lost += figures["store_replies"] - figures["stored"]
    peak_limit = 2 * figures["rss_loaded_mb"] + 100
    return {
        "no request lost": verdict(
            lost == 0 and figures["daemon_alive"],
            f"{figures['lost']} unanswered, {figures['errors']} errors, "
            f'{figures["store_replies"] - figures["stored"]} stores not "stored", '
            f"{missing} stores missing from the files",
        ),
        "responsive": verdict(
            figures["probe_p99_ms"] <= TARGET_PROBE_P99_MS,
            f"probe p99 {figures['probe_p99_ms']:.1f} ms (target <= {TARGET_PROBE_P99_MS:g} ms)",
        ),
        "memory bounded": verdict(
            figures["rss_peak_mb"] <= peak_limit,
            f"peak RSS {figures['rss_peak_mb']:.1f} MB (target <= {peak_limit:.0f} MB)",
        ),
        "stalled clients closed": verdict(
            figures["stalled_left_open"] == 0,
            f"{figures['stalled_closed']} closed after frame_timeout, "
            f"{figures['stalled_left_open']} left open",
        ),
    }


def markdown(f: dict[str, Any]) -> str:
    """The figures as a Markdown table."""
    rows = [
        f"Load: {f['connections']:,} connections for {f['seconds']:.1f} s "
        f"(70 % query, 20 % store, 5 % stalled, 5 % slow readers)",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| requests answered | {f['answered']:,} ({f['answered_per_s']:,.0f}/s) |",
        f"| requests lost | {f['lost']} |",
        f"| errors answered | {f['errors']} |",
        f'| stores answered ({f["stores_per_s"]:,.0f}/s) / "stored" / entries in the files | '
        f"{f['store_replies']:,} / {f['stored']:,} / {f['stored_in_files']:,} |",
        f"| requests a second per client: query / store | {f['per_query_client_per_s']:.2f} / "
        f"{f['per_store_client_per_s']:.2f} |",
        f"| stalled clients closed by the daemon | {f['stalled_closed']} (left open: "
        f"{f['stalled_left_open']}) |",
        f"| probe `status` p50 / p99 / max ms (idle p50) | {f['probe_p50_ms']:.1f} / "
        f"{f['probe_p99_ms']:.1f} / {f['probe_max_ms']:.1f} ({f['probe_idle_p50_ms']:.2f}) |",
        f"| daemon RSS MB: idle / loaded / peak / after | {f['rss_idle_mb']:.1f} / "
        f"{f['rss_loaded_mb']:.1f} / {f['rss_peak_mb']:.1f} / {f['rss_after_mb']:.1f} |",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: 60 connections, 1.5 s)."""
    settings_main(
        argv,
        name="load",
        description=__doc__,
        quick_help="60 connections, 1.5 s",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
