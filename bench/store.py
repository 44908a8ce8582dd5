"""Store benchmark: latency and throughput of durable stores through a real `memd serve`, each
figure beside its floor or baseline measured in the same run.

- Latency, one client: p50/p99 of `store` over the socket, beside the floor: the same atomic
  rewrite (temp file, write, fsync, rename, fsync of the directory) of the same file, done
  directly in this process. The floor is interleaved with the stores and writes, each time, the
  text memd's file holds after that store, so both grow the same way.
- Throughput: 1, 8, 32 and 64 client processes (forked) store distinct entries for a fixed time
  into one category, spread over the five categories, and spread over four workspaces; stores/s
  and p50/p99, beside the baseline: one process rewriting a category file atomically per store
  (fsync-per-store, sequential, no daemon). Each run is made twice: with the `Client` library
  (one per process), and with raw frames (each process writes the request line itself and
  decodes only the reply's `action`), which leaves the 2 cores to the daemon rather than to 32
  client libraries; the targets are judged on both, side by side.
- HackLM-style peer on the same workloads: each client process, per store, takes
  `.memory/.lock` as HackLM does (exclusive create of `{"pid":N,"ts":ms}`; if held: break it if
  stale, else sleep 50 x attempt ms, up to 20 attempts), reads the category file, appends the
  line, releases. Like HackLM it never fsyncs (so it is not durable), and it leaves out HackLM's
  parse and dedup of the files: it is the protocol's cost only.

Every memd store, either way, must come back "stored" (the entries are random words plus
tokens unique to each, so dedup never skips or updates one: see UNIQUE_TOKENS) and land in the
files; the benchmark fails otherwise.
`--quick` runs a tiny version (seconds) for the smoke test. Results: a Markdown table on stdout and
`bench/results/store.json` (`store-quick.json` with `--quick`).

`--baseline-daemon PATH` names another `memd` executable (say, the previous release, installed in
a venv of its own) and compares it with this tree's daemon in the same run: both daemons run at
once, and in each of `rounds` rounds each stores `compare_stores` entries with one client into a
fresh workspace, the order of the two swapped every round, each store followed by the floor
rewrite of the text its file then holds; p50/p99 and stores/s for each, beside the floor. Then,
in the same rounds' order, each daemon's throughput with 32 raw-frame clients into one category
and over five, and five ÷ one for each (target: five categories never slower than one).
`--compare-only` runs just that comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import multiprocessing
import os
import platform
import random
import socket
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import msgspec

from bench._daemon import percentile, running_daemon
from bench._report import RESULTS_DIR, commit, record_verdict, save
from memd.core.format import mdformat
from memd.core.format.categories import CATEGORIES, Category
from memd_client import Client
from memd_client._framing import LineDecoder

LATENCY_CATEGORY = Category.DECISION
TARGET_CLIENTS = 32
TARGET_RATIO_TO_ONE = 5.0  # throughput(32 clients) / throughput(1 client), one category
TARGET_STORES_PER_S = 5000.0
TARGET_P50_OVER_FLOOR = 2.5
MOONSHOT_OVER_SINGLE_FSYNC = 3.0
"""Issue 35's moonshot: store p50 within 3x an O_APPEND write and one fsync (docs/performance.md
says why memd's store does not take that path)."""
BARRIER_TIMEOUT = 120.0
CLIENT_TIMEOUT = 120.0

# HackLM's lock constants (hacklm-spec.md §5.3, §5.4).
HACKLM_MAX_RETRIES = 20
HACKLM_RETRY_BASE_S = 0.05
HACKLM_STALE_MS = 10_000


@dataclass(frozen=True)
class Settings:
    """How much to run."""

    latency_stores: int = 400
    warmup: int = 10
    duration: float = 2.5  # seconds each client process stores for, per throughput run
    clients: tuple[int, ...] = (1, 8, 32, 64)
    spread_clients: tuple[int, ...] = (8, 32, 64)
    workspaces: int = 4
    rounds: int = 5  # of the comparison with a baseline daemon
    compare_stores: int = 300  # each daemon's stores in each round


FULL = Settings()
QUICK = Settings(
    latency_stores=12,
    warmup=2,
    duration=0.2,
    clients=(1, 3),
    spread_clients=(3,),
    rounds=2,
    compare_stores=12,
)


@dataclass(frozen=True)
class Workload:
    """Where client k stores: workspace k mod `workspaces`, category k mod `categories`."""

    key: str
    label: str
    categories: int
    workspaces: int


def workloads(settings: Settings) -> tuple[Workload, ...]:
    """The three workloads: one category, five categories, several workspaces."""
    return (
        Workload("one_category", "one category", 1, 1),
        Workload("five_categories", "five categories", len(CATEGORIES), 1),
        Workload("workspaces", f"{settings.workspaces} workspaces", 1, settings.workspaces),
    )


# ---------------------------------------------------------------------------- entries

_WORD_LIST = (
    "adapter allocator anchor archive backoff badge banner batch beacon binder bitmap bracket "
    "bucket buffer bundle cache canary capsule cargo cascade channel charter checksum chunk "
    "cipher cluster codec column compass console cursor daemon dashboard debounce decoder "
    "delta digest dispatcher docker domain driver ember emitter encoder engine envelope "
    "falcon fence fixture flag folder fragment frame funnel gateway gauge glacier gradient "
    "granite graph harbor harness header heap helmet hopper index inode invoice journal kernel "
    "keystone ladder lantern latch ledger lexer linker locker lumen manifest marker matrix "
    "meadow mirror module monitor mortar nebula needle network nozzle offset orbit packet "
    "paddle palette parser pebble pencil pigment pipeline pivot planner plugin pointer portal "
    "prism probe quarry queue quiver radar ranger reactor record relay render replica ribbon "
    "router runner saddle sampler scanner schema sentinel sequence shard shelter signal "
    "socket spindle splitter sprocket stencil stream summit switch tablet tandem tensor "
    "thimble ticket timber token tracer tractor tunnel turbine uplink valve vector velvet "
    "vertex voucher wallet warden widget window wrapper yardstick zephyr zipper"
)
_WORDS = _WORD_LIST.split()


UNIQUE_TOKENS = 4
"""Tokens unique to each entry, after its eight random words. Two entries that differ in any one
of their eight words name other things in the same frame ("The <a b> feeds the <c d> ..."), so
memd stores each apart; two drawing the same eight words in the same order (odds about 1 in
10^18) would differ only in these tokens, a changed value, and the later store would update."""


def sentence(rng: random.Random, tag: str, number: int) -> str:
    """A one-sentence entry of eight random words and UNIQUE_TOKENS tokens unique to (`tag`,
    `number`), so memd stores every one apart (see UNIQUE_TOKENS)."""
    words = rng.sample(_WORDS, 8)
    unique = ", ".join(f"{tag}{mark}{number}" for mark in "nxyz"[:UNIQUE_TOKENS])
    return (
        f"The {words[0]} {words[1]} feeds the {words[2]} {words[3]} before each "
        f"{words[4]} {words[5]} reaches the {words[6]} {words[7]} (ref {unique})."
    )


# ---------------------------------------------------------------------------- the floor


def atomic_rewrite(directory: str, name: str, data: bytes) -> None:
    """Replace `directory/name` with `data` durably: temp file, write, fsync, rename, fsync
    the directory (memd's recipe without its checks)."""
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        temp = f".{name}.floor.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def append_durably(directory: str, name: str, line: bytes) -> None:
    """Append `line` to `directory/name` and fsync it: HackLM's way with an fsync, the
    single-fsync floor of the issue's moonshot (no temp file, no rename, no directory fsync;
    a crash mid-write can leave a torn last line)."""
    fd = os.open(os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- HackLM's lock


class HackLMLockTimeout(Exception):
    """HackLM's `[crossProcessLock] Could not acquire lock after 20 retries`."""


def _hacklm_read_lock(lock_path: str) -> dict[str, Any] | None:
    try:
        with open(lock_path, encoding="utf-8") as handle:
            value = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _hacklm_is_stale(content: dict[str, Any]) -> bool:
    ts, pid = content.get("ts"), content.get("pid")
    if not isinstance(ts, int) or time.time() * 1000 - ts > HACKLM_STALE_MS:
        return True
    try:
        os.kill(pid if isinstance(pid, int) else -1, 0)
    except (OSError, OverflowError):
        return True
    return False


def _hacklm_acquire(lock_path: str) -> None:
    for attempt in range(HACKLM_MAX_RETRIES):
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            content = _hacklm_read_lock(lock_path)
            if content is not None and _hacklm_is_stale(content):
                with contextlib.suppress(OSError):
                    os.unlink(lock_path)
                continue
            time.sleep(HACKLM_RETRY_BASE_S * (attempt + 1))
            continue
        try:
            os.write(fd, b'{"pid":%d,"ts":%d}' % (os.getpid(), int(time.time() * 1000)))
        finally:
            os.close(fd)
        return
    raise HackLMLockTimeout(lock_path)


def hacklm_append(memory_file: str, content: str, *, durable: bool = False) -> None:
    """One HackLM-style store: clear a stale lock, take the lock, read the file, append the
    entry, release. HackLM never fsyncs; `durable` adds an fsync of the file before release."""
    lock_path = os.path.join(os.path.dirname(memory_file), ".lock")
    stale = _hacklm_read_lock(lock_path)  # HackLM's "startup" sweep runs before every append
    if stale is not None and _hacklm_is_stale(stale):
        with contextlib.suppress(OSError):
            os.unlink(lock_path)
    _hacklm_acquire(lock_path)
    try:
        with open(memory_file, "rb") as handle:
            handle.read()
        fd = os.open(memory_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"\n- {content}\n".encode())
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)


def hacklm_bootstrap(workspace: Path) -> None:
    """Create `.memory/` and the five files as HackLM's activation does (hacklm-spec §1.3)."""
    memory = workspace / ".memory"
    memory.mkdir(parents=True)
    for category in CATEGORIES:
        header = f"# {category.name}\n\nMemories stored by HackLM Memory.\n\n"
        (memory / category.file).write_text(header, encoding="utf-8")


# ---------------------------------------------------------------------------- client processes


@dataclass
class WorkerResult:
    """What one client process did in its window (times from `time.monotonic`)."""

    started: float
    ended: float
    latencies: list[float]
    not_stored: int = 0
    failures: int = 0
    cpu_s: float = 0.0
    error: str = ""


Store = Callable[[str], None]
Maker = Callable[[], tuple[Store, Callable[[], None]]]
"""Run in a client process before the start: returns its `store(content)` and its `close()`."""


def _worker(
    make_store: Maker,
    tag: str,
    duration: float,
    barrier: Barrier,
    conn: Connection,
) -> None:
    """A client process: get ready, wait for the others, store for `duration` seconds, report."""
    try:
        rng = random.Random(tag)
        store, close = make_store()
        try:
            barrier.wait()
            cpu = time.process_time()
            started = time.monotonic()
            deadline = started + duration
            latencies: list[float] = []
            result = WorkerResult(started, started, latencies)
            number = 0
            while (began := time.monotonic()) < deadline:
                content = sentence(rng, tag, number)
                number += 1
                try:
                    store(content)
                except HackLMLockTimeout:
                    result.failures += 1
                    continue
                except _NotStored:
                    result.not_stored += 1
                result.ended = time.monotonic()
                latencies.append(result.ended - began)
            result.cpu_s = time.process_time() - cpu
        finally:
            close()
        conn.send(result)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            barrier.abort()
        conn.send(WorkerResult(0.0, 0.0, [], error=f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


class _NotStored(Exception):
    """memd answered a store with an action other than "stored"."""


def _memd_client(socket_path: str, workspace: str, category: str) -> Maker:
    def make() -> tuple[Store, Callable[[], None]]:
        client = Client(socket_path, workspace=workspace, timeout=CLIENT_TIMEOUT)
        client.status()  # connected before the window opens

        def store(content: str) -> None:
            # As a person (origin "user"): an agent's Security or Instruction store would wait
            # in the review inbox, and this measures the store path itself.
            if client.store(category=category, content=content, origin="user").action != "stored":
                raise _NotStored

        return store, client.close

    return make


class _RawWriter(msgspec.Struct):
    client: str
    origin: str


_AS_A_PERSON = _RawWriter("bench-store-raw", "user")
"""A person's store: an agent's Security or Instruction store would wait in the review inbox,
and this measures the store path itself."""


class _RawStoreParams(msgspec.Struct):
    workspace: str
    category: str
    content: str
    writer: _RawWriter


class _RawStoreRequest(msgspec.Struct):
    jsonrpc: str
    id: int
    method: str
    params: _RawStoreParams


class _RawResult(msgspec.Struct):
    action: str


class _RawReply(msgspec.Struct):
    """Only what the benchmark checks: the action, or that there was an error."""

    result: _RawResult | None = None
    error: dict[str, Any] | None = None


_raw_encoder = msgspec.json.Encoder()
_raw_decoder = msgspec.json.Decoder(_RawReply)


class RawStoreClient:
    """The minimal store loop: encode the request line, send it, read one reply line, decode
    its `action` (no handshake, no typed result)."""

    def __init__(self, socket_path: str, workspace: str, category: str) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(CLIENT_TIMEOUT)
        self._sock.connect(socket_path)
        self._workspace, self._category = workspace, category
        self._decoder = LineDecoder(max_frame=1024 * 1024)
        self._frames: list[bytes] = []
        self._ids = 0

    def store(self, content: str) -> None:
        """Store `content`; raise `_NotStored` unless the reply says "stored"."""
        self._ids += 1
        params = _RawStoreParams(self._workspace, self._category, content, _AS_A_PERSON)
        self._sock.sendall(
            _raw_encoder.encode(_RawStoreRequest("2.0", self._ids, "store", params)) + b"\n"
        )
        while not self._frames:
            data = self._sock.recv(65536)
            if not data:
                raise ConnectionError("memd closed the connection")
            self._frames.extend(self._decoder.feed(data))
        reply = _raw_decoder.decode(self._frames.pop(0))
        if reply.result is None:
            raise RuntimeError(f"memd answered a store with an error: {reply.error}")
        if reply.result.action != "stored":
            raise _NotStored

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()


def _memd_raw_client(socket_path: str, workspace: str, category: str) -> Maker:
    def make() -> tuple[Store, Callable[[], None]]:
        client = RawStoreClient(socket_path, workspace, category)
        return client.store, client.close

    return make


def _hacklm_client(memory_file: str, durable: bool) -> Maker:
    def make() -> tuple[Store, Callable[[], None]]:
        return functools.partial(hacklm_append, memory_file, durable=durable), _nothing

    return make


def _nothing() -> None:
    pass


def run_clients(makers: list[Maker], tags: list[str], duration: float) -> RunFigures:
    """Fork one process per maker, start them together, and pool what they report."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(makers) + 1, timeout=BARRIER_TIMEOUT)
    processes, pipes = [], []
    for make, tag in zip(makers, tags, strict=True):
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_worker, args=(make, tag, duration, barrier, sender))
        process.start()
        sender.close()
        processes.append(process)
        pipes.append(receiver)
    try:
        with contextlib.suppress(threading.BrokenBarrierError):  # a client failed: it says why
            barrier.wait()
        results = [pipe.recv() for pipe in pipes]
    finally:
        for process in processes:
            process.join(timeout=BARRIER_TIMEOUT)
            if process.is_alive():
                process.kill()
                process.join()
    errors = sorted({result.error for result in results if result.error})
    if errors:
        raise RuntimeError(f"client processes failed: {'; '.join(errors)}")
    return RunFigures.pool(results)


@dataclass
class RunFigures:
    """Pooled figures of one throughput run."""

    clients: int
    stores: int
    seconds: float
    stores_per_s: float
    p50_ms: float
    p99_ms: float
    not_stored: int
    failures: int
    client_cpu_ms_per_store: float
    daemon_cpu_ms_per_store: float = 0.0
    entries_in_files: int = 0

    @classmethod
    def pool(cls, results: list[WorkerResult]) -> RunFigures:
        latencies = sorted(value for result in results for value in result.latencies)
        seconds = max(r.ended for r in results) - min(r.started for r in results)
        stores = len(latencies)
        return cls(
            clients=len(results),
            stores=stores,
            seconds=seconds,
            stores_per_s=stores / seconds if seconds > 0 else 0.0,
            p50_ms=percentile(latencies, 0.50) * 1000 if latencies else 0.0,
            p99_ms=percentile(latencies, 0.99) * 1000 if latencies else 0.0,
            not_stored=sum(r.not_stored for r in results),
            failures=sum(r.failures for r in results),
            client_cpu_ms_per_store=sum(r.cpu_s for r in results) * 1000 / max(stores, 1),
        )


# ---------------------------------------------------------------------------- the runs


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (all its threads), or 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _count_entries(files: list[Path]) -> int:
    return sum(
        len(mdformat.entries(mdformat.parse(path.read_text(encoding="utf-8"))))
        for path in files
        if path.exists()
    )


def store_beside_floor(
    socket_path: Path,
    workspace: Path,
    floor_dir: Path,
    *,
    stores: int,
    warmup: int,
    tag: str,
    append_times: list[float] | None = None,
) -> tuple[list[float], list[float], int]:
    """One client storing `warmup + stores` entries sequentially, each store followed by the
    floor rewrite of the text memd's file then holds (and, given `append_times`, by an append
    of its line and an fsync, the single-fsync floor, timed into that list); return the store
    times and the floor times (seconds, warm-up left out) and the file's final size in bytes."""
    category = LATENCY_CATEGORY
    memd_file = workspace / ".memory" / category.file
    floor_dir.mkdir(parents=True)
    rng = random.Random(tag)
    memd_times: list[float] = []
    floor_times: list[float] = []
    with Client(socket_path, workspace=workspace, timeout=CLIENT_TIMEOUT) as client:
        for number in range(warmup + stores):
            content = sentence(rng, tag, number)
            began = time.perf_counter()
            action = client.store(category=category.name, content=content).action
            elapsed = time.perf_counter() - began
            if action != "stored":
                raise AssertionError(f"store {number} was {action!r}, not 'stored'")
            data = memd_file.read_bytes()
            began = time.perf_counter()
            atomic_rewrite(str(floor_dir), category.file, data)
            floor_elapsed = time.perf_counter() - began
            if append_times is not None:
                began = time.perf_counter()
                append_durably(str(floor_dir), "appended.md", f"- {content}\n".encode())
                if number >= warmup:
                    append_times.append(time.perf_counter() - began)
            if number >= warmup:
                memd_times.append(elapsed)
                floor_times.append(floor_elapsed)
    return memd_times, floor_times, memd_file.stat().st_size


def measure_latency(
    socket_path: Path, workspace: Path, floor_dir: Path, settings: Settings
) -> dict[str, Any]:
    """One client storing sequentially, each store followed by the floor rewrite of the text
    memd's file then holds, and by an append and fsync of its line (the single-fsync floor)."""
    append_times: list[float] = []
    memd_times, floor_times, _ = store_beside_floor(
        socket_path,
        workspace,
        floor_dir,
        stores=settings.latency_stores,
        warmup=settings.warmup,
        tag="latency",
        append_times=append_times,
    )
    memd_file = workspace / ".memory" / LATENCY_CATEGORY.file
    append_p50 = percentile(sorted(append_times), 0.5) * 1000
    memd_times.sort()
    floor_times.sort()
    memd_p50, memd_p99 = percentile(memd_times, 0.5) * 1000, percentile(memd_times, 0.99) * 1000
    floor_p50 = percentile(floor_times, 0.5) * 1000
    floor_p99 = percentile(floor_times, 0.99) * 1000
    return {
        "stores": len(memd_times),
        "final_file_bytes": memd_file.stat().st_size,
        "memd_p50_ms": memd_p50,
        "memd_p99_ms": memd_p99,
        "floor_p50_ms": floor_p50,
        "floor_p99_ms": floor_p99,
        "p50_over_floor": memd_p50 / floor_p50,
        "p99_over_floor": memd_p99 / floor_p99,
        "single_fsync_p50_ms": append_p50,
        "p50_over_single_fsync": memd_p50 / append_p50,
    }


def _latency_figures(store_times: list[float]) -> dict[str, Any]:
    times = sorted(store_times)
    return {
        "stores": len(times),
        "p50_ms": percentile(times, 0.5) * 1000,
        "p99_ms": percentile(times, 0.99) * 1000,
        "stores_per_s": len(times) / sum(times),
    }


def _daemon_pid(socket_path: Path) -> int:
    """The pid a daemon reports in `status` (0 if it cannot be told: its CPU is then 0)."""
    try:
        with Client(socket_path, timeout=CLIENT_TIMEOUT) as client:
            return int(client.status().pid)
    except Exception:  # an older daemon's status this client cannot read
        return 0


def compare_daemons(baseline: str, settings: Settings) -> dict[str, Any]:
    """This tree's daemon and the `baseline` executable, both running, storing in interleaved
    rounds (see the module docstring); per daemon p50/p99 and stores/s, pooled and per round,
    beside the floor (pooled over every store of both)."""
    names = ("now", "baseline")
    times: dict[str, list[float]] = {name: [] for name in names}
    per_round: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    floor: list[float] = []
    with (
        running_daemon(private_state=True) as now,
        running_daemon(private_state=True, executable=baseline) as before,
    ):
        daemons = {"now": now, "baseline": before}
        pids = {name: _daemon_pid(socket_path) for name, (socket_path, _) in daemons.items()}
        cpu = dict.fromkeys(names, 0.0)
        for number in range(settings.rounds):
            order = names if number % 2 == 0 else names[::-1]
            for name in order:
                socket_path, workspace = daemons[name]
                place = workspace.parent / f"round{number}"
                (place / "ws").mkdir(parents=True)
                began = _cpu_seconds(pids[name])
                stored, floor_times, _ = store_beside_floor(
                    socket_path,
                    place / "ws",
                    place / "floor",
                    stores=settings.compare_stores,
                    warmup=settings.warmup,
                    tag=f"compare{number}",
                )
                cpu[name] += _cpu_seconds(pids[name]) - began
                times[name] += stored
                floor += floor_times
                per_round[name].append(_latency_figures(stored))
        spread = _compare_spread(daemons, pids, settings)
    floor_figures = _latency_figures(floor)
    result: dict[str, Any] = {
        "baseline_daemon": baseline,
        "rounds": settings.rounds,
        "floor": floor_figures,
        "spread": spread,
    }
    for name in names:
        pooled = _latency_figures(times[name])
        result[name] = pooled | {
            "p50_over_floor": pooled["p50_ms"] / floor_figures["p50_ms"],
            "daemon_cpu_ms_per_store": cpu[name] * 1000 / max(pooled["stores"], 1),
            "rounds": per_round[name],
        }
    return result


def _compare_spread(
    daemons: dict[str, tuple[Path, Path]], pids: dict[str, int], settings: Settings
) -> dict[str, Any]:
    """Throughput of both daemons, interleaved round by round (order swapped each round): the
    target's many clients (raw frames) into one category and over five; stores/s by round and
    daemon CPU per store, and five categories ÷ one (target: never below 1)."""
    clients = TARGET_CLIENTS if settings == FULL else max(settings.spread_clients)
    runs: dict[str, dict[str, list[RunFigures]]] = {
        name: {"one_category": [], "five_categories": []} for name in daemons
    }
    chosen = {w.key: w for w in workloads(settings)}
    for number in range(settings.rounds):
        order = list(daemons) if number % 2 == 0 else list(daemons)[::-1]
        for key in ("one_category", "five_categories"):
            for name in order:
                socket_path, workspace = daemons[name]
                place = workspace.parent / f"spread{number}-{key}"
                runs[name][key].append(
                    measure_memd(
                        socket_path,
                        place,
                        chosen[key],
                        clients,
                        settings.duration,
                        pids[name],
                        raw=True,
                    )
                )
    result: dict[str, Any] = {"clients": clients}
    for name, by_key in runs.items():
        figures: dict[str, Any] = {}
        for key, found in by_key.items():
            stores = sum(f.stores for f in found)
            seconds = sum(f.seconds for f in found)
            figures[key] = {
                "stores_per_s": stores / seconds,
                "by_round": [f.stores_per_s for f in found],
                "daemon_cpu_ms_per_store": statistics.mean(
                    f.daemon_cpu_ms_per_store for f in found
                ),
            }
        figures["five_over_one"] = (
            figures["five_categories"]["stores_per_s"] / figures["one_category"]["stores_per_s"]
        )
        result[name] = figures
    return result


def measure_sequential_baseline(directory: Path, duration: float) -> RunFigures:
    """One process, no daemon: append an entry to the text and rewrite the file atomically,
    per store, for `duration` seconds."""
    category = LATENCY_CATEGORY
    directory.mkdir(parents=True)
    text = f"# {category.name}\n\nMemories stored by HackLM Memory.\n\n"
    rng = random.Random("sequential")
    latencies: list[float] = []
    cpu = time.process_time()
    started = ended = time.monotonic()
    deadline = started + duration
    while (began := time.monotonic()) < deadline:
        text += f"\n- {sentence(rng, 'sequential', len(latencies))}\n"
        atomic_rewrite(str(directory), category.file, text.encode())
        ended = time.monotonic()
        latencies.append(ended - began)
    result = WorkerResult(started, ended, latencies, cpu_s=time.process_time() - cpu)
    figures = RunFigures.pool([result])
    figures.entries_in_files = figures.stores
    return figures


def _targets(workload: Workload, clients: int) -> list[tuple[Path, Category]]:
    """(workspace index as a path part, category) of each client."""
    return [
        (Path(f"ws{k % workload.workspaces}"), CATEGORIES[k % workload.categories])
        for k in range(clients)
    ]


def measure_memd(
    socket_path: Path,
    root: Path,
    workload: Workload,
    clients: int,
    duration: float,
    pid: int,
    *,
    raw: bool = False,
) -> RunFigures:
    """`clients` processes storing through memd into fresh workspaces under `root`, with the
    `Client` library or (`raw`) with raw frames."""
    targets = _targets(workload, clients)
    for index in range(workload.workspaces):
        (root / f"ws{index}").mkdir(parents=True)
    maker = _memd_raw_client if raw else _memd_client
    makers = [
        maker(str(socket_path), str(root / part), category.name) for part, category in targets
    ]
    tags = [f"{'r' if raw else 'm'}{workload.key[0]}{clients}c{k}" for k in range(clients)]
    cpu = _cpu_seconds(pid)
    figures = run_clients(makers, tags, duration)
    figures.daemon_cpu_ms_per_store = (_cpu_seconds(pid) - cpu) * 1000 / max(figures.stores, 1)
    files = sorted({root / part / ".memory" / category.file for part, category in targets})
    figures.entries_in_files = _count_entries(files)
    acknowledged = figures.stores - figures.not_stored
    if figures.not_stored or figures.entries_in_files != acknowledged:
        raise AssertionError(
            f"memd{' (raw)' if raw else ''} {workload.label} x{clients}: {figures.stores} stores, "
            f"{figures.not_stored} "
            f"not 'stored', {figures.entries_in_files} entries in the files"
        )
    return figures


def measure_hacklm(
    root: Path, workload: Workload, clients: int, duration: float, *, durable: bool
) -> RunFigures:
    """`clients` processes storing HackLM's way into fresh workspaces under `root`."""
    targets = _targets(workload, clients)
    for index in range(workload.workspaces):
        hacklm_bootstrap(root / f"ws{index}")
    makers = [
        _hacklm_client(str(root / part / ".memory" / category.file), durable)
        for part, category in targets
    ]
    tags = [f"h{workload.key[0]}{clients}c{k}" for k in range(clients)]
    figures = run_clients(makers, tags, duration)
    files = sorted({root / part / ".memory" / category.file for part, category in targets})
    figures.entries_in_files = _count_entries(files)
    if figures.entries_in_files != figures.stores:
        raise AssertionError(
            f"HackLM {workload.label} x{clients}: {figures.stores} stores, "
            f"{figures.entries_in_files} entries in the files"
        )
    return figures


SYSTEMS = {
    "memd": "memd",
    "memd_raw": "memd (raw frames)",
    "hacklm": "HackLM",
    "hacklm_fsync": "HackLM+fsync",
}


def run_comparison(
    settings: Settings, baseline: str, *, output: Path | None = None
) -> dict[str, Any]:
    """Only the comparison with `baseline` (`--compare-only`): print it, save it."""
    began = time.perf_counter()
    report: dict[str, Any] = {
        "benchmark": "store-compare",
        "commit": commit(),
        "quick": settings != FULL,
        "machine": _machine(),
        "comparison": compare_daemons(baseline, settings),
    }
    report["seconds"] = time.perf_counter() - began
    print(comparison_markdown(report["comparison"]))
    print()
    save(report, output)
    return report


def run(
    settings: Settings = FULL, *, output: Path | None = None, baseline_daemon: str | None = None
) -> dict[str, Any]:
    """Run every measurement (and the comparison with `baseline_daemon`, if named), print the
    tables, write the JSON report to `output`."""
    began = time.perf_counter()
    machine = _machine()  # the load average before this run: was anything else running?
    comparison = None if baseline_daemon is None else compare_daemons(baseline_daemon, settings)
    rows: list[dict[str, Any]] = []
    with running_daemon(private_state=True) as (socket_path, workspace):
        root = workspace.parent
        with Client(socket_path, timeout=CLIENT_TIMEOUT) as client:
            pid = client.status().pid
        latency = measure_latency(socket_path, workspace, root / "floor", settings)
        baseline = measure_sequential_baseline(root / "sequential", settings.duration)
        for workload in workloads(settings):
            counts = settings.clients if workload.key == "one_category" else settings.spread_clients
            for clients in counts:
                name = f"{workload.key}-{clients}"
                duration = settings.duration
                figures = {
                    "memd": measure_memd(
                        socket_path, root / f"memd-{name}", workload, clients, duration, pid
                    ),
                    "memd_raw": measure_memd(
                        socket_path,
                        root / f"raw-{name}",
                        workload,
                        clients,
                        duration,
                        pid,
                        raw=True,
                    ),
                    "hacklm": measure_hacklm(
                        root / f"hacklm-{name}", workload, clients, duration, durable=False
                    ),
                    "hacklm_fsync": measure_hacklm(
                        root / f"fsync-{name}", workload, clients, duration, durable=True
                    ),
                }
                row: dict[str, Any] = {
                    "workload": workload.key,
                    "label": workload.label,
                    "clients": clients,
                }
                memd_rate = figures["memd"].stores_per_s
                for system, found in figures.items():
                    row[system] = vars(found) | {
                        "over_baseline": found.stores_per_s / baseline.stores_per_s,
                        "memd_over_this": memd_rate / found.stores_per_s,
                    }
                rows.append(row)
    report: dict[str, Any] = {
        "benchmark": "store",
        "commit": commit(),
        "quick": settings != FULL,
        "settings": vars(settings),
        "machine": machine,
        "latency": latency,
        "baseline": vars(baseline),
        "throughput": rows,
        "targets": _verdicts(latency, rows),
        "seconds": time.perf_counter() - began,
    }
    if comparison is not None:
        report["comparison"] = comparison
    print(markdown(report))
    for name, met, text in target_lines(report["targets"]):
        record_verdict(name, met, text)
    print()
    if comparison is not None:
        print(comparison_markdown(comparison))
        print()
    save(report, output)
    return report


def _verdicts(latency: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The targets, judged for the `Client` library and (keys `raw_...`) for raw frames."""
    verdicts: dict[str, Any] = {
        "p50_over_floor": latency["p50_over_floor"],
        "p50_over_floor_target": TARGET_P50_OVER_FLOOR,
        "p50_over_floor_met": latency["p50_over_floor"] <= TARGET_P50_OVER_FLOOR,
        "p50_over_single_fsync": latency["p50_over_single_fsync"],
        "p50_over_single_fsync_target": MOONSHOT_OVER_SINGLE_FSYNC,
        "p50_over_single_fsync_met": latency["p50_over_single_fsync"] <= MOONSHOT_OVER_SINGLE_FSYNC,
    }
    for system, prefix in (("memd", ""), ("memd_raw", "raw_")):
        one = {row["clients"]: row[system] for row in rows if row["workload"] == "one_category"}
        many = TARGET_CLIENTS if TARGET_CLIENTS in one else max(one)
        ratio = one[many]["stores_per_s"] / one[1]["stores_per_s"]
        verdicts |= {
            f"{prefix}many_clients": many,
            f"{prefix}many_over_one": ratio,
            f"{prefix}many_over_one_target": TARGET_RATIO_TO_ONE,
            f"{prefix}many_over_one_met": ratio >= TARGET_RATIO_TO_ONE,
            f"{prefix}many_stores_per_s": one[many]["stores_per_s"],
            f"{prefix}many_stores_per_s_target": TARGET_STORES_PER_S,
            f"{prefix}many_stores_per_s_met": one[many]["stores_per_s"] >= TARGET_STORES_PER_S,
        }
        five = {row["clients"]: row[system] for row in rows if row["workload"] == "five_categories"}
        if many in five:  # five categories must never be slower than one
            spread = five[many]["stores_per_s"] / one[many]["stores_per_s"]
            verdicts |= {
                f"{prefix}five_over_one": spread,
                f"{prefix}five_over_one_met": spread >= 1,
            }
    return verdicts


def _machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "load_average_1m_at_start": os.getloadavg()[0],
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }


# ---------------------------------------------------------------------------- the report


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: latency table, throughput table, verdicts."""
    lat = report["latency"]
    base = report["baseline"]
    lines = [
        f"Store latency, one client, {lat['stores']} stores into one category "
        f"(the file grows to {lat['final_file_bytes'] / 1024:.0f} KiB)",
        "",
        "| store latency | p50 ms | p99 ms |",
        "|---|---|---|",
        f"| memd store over the socket | {lat['memd_p50_ms']:.2f} | {lat['memd_p99_ms']:.2f} |",
        f"| floor: atomic rewrite in-process | {lat['floor_p50_ms']:.2f} | "
        f"{lat['floor_p99_ms']:.2f} |",
        f"| memd ÷ floor | {lat['p50_over_floor']:.2f}× | {lat['p99_over_floor']:.2f}× |",
        f"| single-fsync floor: append the line, fsync (p50; not atomic) | "
        f"{lat['single_fsync_p50_ms']:.2f} | |",
        "",
        f"Store throughput: client processes storing for {report['settings']['duration']:g} s; "
        "×seq = ÷ the sequential fsync-per-store baseline; memd÷ = memd's stores/s ÷ the peer's",
        "",
        "| workload | clients | memd stores/s | ×seq | p50 ms | p99 ms | daemon CPU ms/store "
        "| client CPU ms/store | raw frames stores/s | p50 ms | p99 ms | daemon CPU ms/store "
        "| HackLM stores/s | p50 ms | p99 ms | memd÷ "
        "| HackLM+fsync stores/s | p50 ms | p99 ms | memd÷ |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| sequential fsync-per-store, no daemon | 1 | {base['stores_per_s']:.0f} | 1.00× | "
        f"{base['p50_ms']:.2f} | {base['p99_ms']:.2f} | | | | | | | | | | | | | | |",
    ]
    failures = []
    for row in report["throughput"]:
        memd, raw = row["memd"], row["memd_raw"]
        cells = [
            row["label"],
            str(row["clients"]),
            f"{memd['stores_per_s']:.0f}",
            f"{memd['over_baseline']:.2f}×",
            f"{memd['p50_ms']:.2f}",
            f"{memd['p99_ms']:.2f}",
            f"{memd['daemon_cpu_ms_per_store']:.2f}",
            f"{memd['client_cpu_ms_per_store']:.2f}",
            f"{raw['stores_per_s']:.0f}",
            f"{raw['p50_ms']:.2f}",
            f"{raw['p99_ms']:.2f}",
            f"{raw['daemon_cpu_ms_per_store']:.2f}",
        ]
        for system in ("hacklm", "hacklm_fsync"):
            peer = row[system]
            cells += [
                f"{peer['stores_per_s']:.0f}",
                f"{peer['p50_ms']:.2f}",
                f"{peer['p99_ms']:.2f}",
                f"{peer['memd_over_this']:.2f}×",
            ]
            if peer["failures"]:
                failures.append(
                    f"{SYSTEMS[system]} {row['label']} x{row['clients']}: {peer['failures']}"
                )
        lines.append("| " + " | ".join(cells) + " |")
    t = report["targets"]
    lines += [
        "",
        "HackLM-style peer: per store, take `.memory/.lock` (HackLM's protocol and back-off), "
        "read the category file, append the entry, release; HackLM never fsyncs (not durable), "
        "HackLM+fsync adds an fsync before release; neither parses nor dedups.",
        "HackLM lock failures (20 attempts exhausted; not counted as stores): "
        + ("; ".join(failures) if failures else "none"),
        "",
    ]
    lines += [f"- {text}" for _, _, text in target_lines(t)]
    return "\n".join(lines)


def target_lines(t: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """Each judged target of `run`'s report (its "targets"): (name, met, one line)."""
    found = [
        (
            "store p50 ÷ floor",
            bool(t["p50_over_floor_met"]),
            f"memd store p50 ÷ floor: {t['p50_over_floor']:.2f}× "
            f"(target ≤ {t['p50_over_floor_target']:g}×: {_met(t['p50_over_floor_met'])})",
        )
    ]
    if "p50_over_single_fsync" in t:
        found.append(
            (
                "store p50 ÷ single-fsync floor (moonshot)",
                bool(t["p50_over_single_fsync_met"]),
                f"memd store p50 ÷ an append and one fsync: {t['p50_over_single_fsync']:.2f}× "
                f"(moonshot ≤ {t['p50_over_single_fsync_target']:g}×: "
                f"{_met(t['p50_over_single_fsync_met'])})",
            )
        )
    for prefix, how in (("", "with the Client library"), ("raw_", "with raw frames")):
        many = t[prefix + "many_clients"]
        found += [
            (
                f"stores, {many} clients ÷ 1 ({how})",
                bool(t[prefix + "many_over_one_met"]),
                f"memd throughput {how}, {many} clients ÷ 1 client, one "
                f"category: {t[prefix + 'many_over_one']:.2f}× (target ≥ "
                f"{t[prefix + 'many_over_one_target']:g}×: "
                f"{_met(t[prefix + 'many_over_one_met'])})",
            ),
            (
                f"stores/s, {many} clients ({how})",
                bool(t[prefix + "many_stores_per_s_met"]),
                f"memd throughput {how}, {many} clients, one category: "
                f"{t[prefix + 'many_stores_per_s']:.0f} stores/s (target ≥ "
                f"{t[prefix + 'many_stores_per_s_target']:g}: "
                f"{_met(t[prefix + 'many_stores_per_s_met'])})",
            ),
        ]
        if prefix + "five_over_one" in t:
            found.append(
                (
                    f"five categories ÷ one ({how})",
                    bool(t[prefix + "five_over_one_met"]),
                    f"memd throughput {how}, {many} clients, five categories "
                    f"÷ one category: {t[prefix + 'five_over_one']:.2f}× (target ≥ 1: "
                    f"{_met(t[prefix + 'five_over_one_met'])})",
                )
            )
    return found


def comparison_markdown(comparison: dict[str, Any]) -> str:
    """The comparison with a baseline daemon as Markdown: pooled figures, then each round."""
    floor = comparison["floor"]
    lines = [
        f"Store latency, this tree's daemon against {comparison['baseline_daemon']}: one client, "
        f"{comparison['rounds']} rounds interleaved (order swapped each round), "
        f"{comparison['now']['rounds'][0]['stores']} stores a round each",
        "",
        "| daemon | p50 ms | p99 ms | stores/s | p50 ÷ floor | daemon CPU ms/store "
        "| p50 ms by round |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, label in (("now", "this tree"), ("baseline", "baseline")):
        figures = comparison[name]
        by_round = ", ".join(f"{r['p50_ms']:.2f}" for r in figures["rounds"])
        lines.append(
            f"| {label} | {figures['p50_ms']:.2f} | {figures['p99_ms']:.2f} | "
            f"{figures['stores_per_s']:.0f} | {figures['p50_over_floor']:.2f}× | "
            f"{figures['daemon_cpu_ms_per_store']:.2f} | {by_round} |"
        )
    lines.append(
        f"| floor: atomic rewrite in-process | {floor['p50_ms']:.2f} | {floor['p99_ms']:.2f} | "
        f"{floor['stores_per_s']:.0f} | 1.00× | | |"
    )
    spread = comparison["spread"]
    lines += [
        "",
        f"Throughput, {spread['clients']} client processes (raw frames), both daemons "
        "interleaved round by round",
        "",
        "| daemon | workload | stores/s | by round | daemon CPU ms/store |",
        "|---|---|---|---|---|",
    ]
    for name, label in (("now", "this tree"), ("baseline", "baseline")):
        for key, workload in (("one_category", "one category"), ("five_categories", "five")):
            found = spread[name][key]
            by_round = ", ".join(f"{rate:.0f}" for rate in found["by_round"])
            lines.append(
                f"| {label} | {workload} | {found['stores_per_s']:.0f} | {by_round} | "
                f"{found['daemon_cpu_ms_per_store']:.2f} |"
            )
    lines.append("")
    for name, label in (("now", "this tree"), ("baseline", "baseline")):
        ratio = spread[name]["five_over_one"]
        lines.append(
            f"- {label}: five categories ÷ one category: {ratio:.2f}× "
            f"(target ≥ 1: {_met(ratio >= 1.0)})"
        )
    return "\n".join(lines)


def _met(flag: bool) -> str:
    return "met" if flag else "NOT met"


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: a few seconds; `--baseline-daemon
    PATH`: compare with another memd executable in the same run)."""
    parser = argparse.ArgumentParser(prog="python -m bench.store", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny counts, for the smoke test")
    parser.add_argument(
        "--baseline-daemon",
        metavar="PATH",
        help="another memd executable to compare with, interleaved in the same run",
    )
    parser.add_argument(
        "--compare-only",
        action="store_true",
        help="with --baseline-daemon: run only the comparison",
    )
    args = parser.parse_args(argv)
    if args.compare_only and not args.baseline_daemon:
        parser.error("--compare-only needs --baseline-daemon PATH")
    if args.baseline_daemon and not os.access(args.baseline_daemon, os.X_OK):
        parser.error(f"{args.baseline_daemon} is not an executable; name a memd program")
    settings = QUICK if args.quick else FULL
    suffix = "-quick" if args.quick else ""
    if args.compare_only:
        run_comparison(
            settings, args.baseline_daemon, output=RESULTS_DIR / f"store-compare{suffix}.json"
        )
        return
    run(
        settings,
        output=RESULTS_DIR / f"store{suffix}.json",
        baseline_daemon=args.baseline_daemon,
    )


if __name__ == "__main__":
    main()
