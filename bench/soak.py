"""Soak: one daemon, thousands of workspaces, long path spellings, outside rewrites and an idle
subscriber over a bounded run; what the daemon holds at the start, at its peak and at the end.

Figures, from /proc of the daemon process: inotify instances and watches, threads, open file
descriptors, resident memory (RSS), loaded workspaces; and the CPU it burns while idle at the
end. The run sets `idle_unload_seconds` (IDLE_UNLOAD), so by the end every workspace but the
subscribed one has been unloaded.

Bounds (issue 17), judged by `judge`:
- one inotify instance at most, however many workspaces;
- threads: at most THREAD_SLACK above the start (anyio's worker threads), not one per workspace;
- file descriptors: at most FD_SLACK above the start;
- released: at the end only the subscribed workspace is loaded, holding its two watches;
- memory: the workload runs twice, and the RSS after the second round is at most RSS_SLACK_MB
  above the first's (what the first round held was released and reused; RSS itself rarely
  shrinks, since the allocator keeps freed memory for reuse);
- idle: at most IDLE_CPU_PERCENT of one core while nothing happens.

Seen on the 2-core development VM (see `python -m bench soak` and bench/results/soak.json).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench._daemon import wait_until_serving
from bench._report import commit, print_verdicts, save, settings_main
from memd_client import Client, protocol as p

THREAD_SLACK = 48
FD_SLACK = 64
RSS_SLACK_MB = 25.0
ROUNDS = 2
IDLE_CPU_PERCENT = 2.0
SAMPLE_INTERVAL = 0.1
UNLOAD_TIMEOUT = 60.0
IDLE_WINDOW = 2.0


@dataclass(frozen=True)
class Settings:
    """How big a soak run is."""

    workspaces: int
    spellings: int
    spelling_bytes: int
    rewrites: int
    idle_unload: float


FULL = Settings(workspaces=2000, spellings=400, spelling_bytes=4000, rewrites=2000, idle_unload=5.0)
QUICK = Settings(workspaces=40, spellings=20, spelling_bytes=2048, rewrites=40, idle_unload=0.5)


@dataclass
class Sample:
    """What the daemon holds at one moment."""

    inotify_instances: int
    inotify_watches: int
    threads: int
    fds: int
    rss_mb: float
    workspaces_loaded: int


def sample(pid: int, loaded: int) -> Sample:
    """Read what process `pid` holds from /proc (`loaded` comes from its `status`)."""
    instances = watches = fds = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        fds += 1
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                watches += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue
        instances += 1
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return Sample(
        inotify_instances=instances,
        inotify_watches=watches,
        threads=int(status["Threads"]),
        fds=fds,
        rss_mb=int(status["VmRSS"].split()[0]) / 1024,
        workspaces_loaded=loaded,
    )


def peak(samples: list[Sample]) -> Sample:
    """The highest value of each figure over `samples`."""
    return Sample(
        **{name: max(getattr(s, name) for s in samples) for name in Sample.__dataclass_fields__}
    )


def judge(
    start: Sample, top: Sample, first: Sample, end: Sample, idle_cpu: float
) -> dict[str, dict[str, Any]]:
    """Return each bound's verdict ({"met": bool, "text": "..."}), from the samples at the
    start, the peak, after the first round and at the end (after the second)."""

    def verdict(met: bool, text: str) -> dict[str, Any]:
        return {"met": met, "text": f"{text}: {'met' if met else 'NOT met'}"}

    return {
        "inotify": verdict(
            top.inotify_instances <= 1,
            f"{top.inotify_instances} inotify instance(s) at most (<= 1)",
        ),
        "threads": verdict(
            top.threads <= start.threads + THREAD_SLACK,
            f"threads {start.threads} -> peak {top.threads} (<= start + {THREAD_SLACK})",
        ),
        "fds": verdict(
            top.fds <= start.fds + FD_SLACK,
            f"file descriptors {start.fds} -> peak {top.fds} (<= start + {FD_SLACK})",
        ),
        "released": verdict(
            end.workspaces_loaded <= 1 and end.inotify_watches <= 2,
            f"at the end {end.workspaces_loaded} workspace(s) loaded, {end.inotify_watches} "
            "watches (<= 1 and 2: the subscribed one)",
        ),
        "memory": verdict(
            end.rss_mb <= first.rss_mb + RSS_SLACK_MB,
            f"RSS {start.rss_mb:.0f} MB -> {first.rss_mb:.0f} after round 1 -> {end.rss_mb:.0f} "
            f"after round 2 (<= round 1 + {RSS_SLACK_MB:.0f}: nothing kept grows)",
        ),
        "idle": verdict(
            idle_cpu <= IDLE_CPU_PERCENT,
            f"idle CPU {idle_cpu:.1f} % of a core (<= {IDLE_CPU_PERCENT:g} %)",
        ),
    }


@contextlib.contextmanager
def soak_daemon(root: Path, idle_unload: float | None) -> Iterator[tuple[Path, int]]:
    """Run `memd serve` with its state and config under `root`; yield (socket, pid)."""
    socket_path = root / "memd.sock"
    command = [sys.executable, "-m", "memd", "serve", "--socket", str(socket_path)]
    if idle_unload is not None:
        config = root / "config.toml"
        config.write_text(f"idle_unload_seconds = {idle_unload}\n")
        command += ["--config", str(config)]
    (root / "state").mkdir()
    environ = dict(os.environ, XDG_STATE_HOME=str(root / "state"))
    daemon = subprocess.Popen(
        [*command, "--log-level", "WARNING"], stderr=subprocess.DEVNULL, env=environ
    )
    try:
        wait_until_serving(str(socket_path), daemon)
        yield socket_path, daemon.pid
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) process `pid` has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(
    settings: Settings, *, output: Path | None = None, idle_config: bool = True
) -> dict[str, Any]:
    """Soak one daemon with `settings` (the workload twice over: the second round must not
    need more memory than the first); print and return the report (and save it)."""
    root = Path(tempfile.mkdtemp(prefix="memd-soak-", dir="/tmp"))
    try:
        roots = [root / f"w{n:05d}" for n in range(settings.workspaces)]
        for n, workspace in enumerate(roots):
            (workspace / ".memory" if n % 2 == 0 else workspace).mkdir(parents=True)
        idle_unload = settings.idle_unload if idle_config else None
        with soak_daemon(root, idle_unload) as (sock, pid), Client(sock, timeout=120) as client:
            start = sample(pid, len(client.status().workspaces))
            samples = [start]
            rounds: list[Sample] = []
            events: list[p.Event] = []
            began = time.perf_counter()
            with client.subscribe(events.append, workspace=roots[0]):
                stop = threading.Event()
                sampler = threading.Thread(target=_sample_until, args=(sock, pid, samples, stop))
                sampler.start()
                try:
                    for number in range(ROUNDS):
                        _workload(client, roots, settings, random.Random(number))
                        rounds.append(sample(pid, len(client.status().workspaces)))
                finally:
                    stop.set()
                    sampler.join()
                busy_seconds = time.perf_counter() - began
                status = client.status()
                used = cpu_seconds(pid)
                time.sleep(IDLE_WINDOW)  # nothing at all happens meanwhile
                idle_cpu = (cpu_seconds(pid) - used) / IDLE_WINDOW * 100
                end = sample(pid, len(client.status().workspaces))
        samples.extend([*rounds, end])
        top = peak(samples)
        report: dict[str, Any] = {
            "benchmark": "soak",
            "commit": commit(),
            "settings": asdict(settings),
            "idle_unload_configured": idle_config,
            "busy_seconds": busy_seconds,
            "samples": {
                "start": asdict(start),
                "peak": asdict(top),
                "first_round": asdict(rounds[0]),
                "end": asdict(end),
            },
            "idle_cpu_percent": idle_cpu,
            "watch_mode": getattr(status, "watch_mode", ""),  # "" from a daemon before issue 17
            "workspaces_unloaded": getattr(status, "workspaces_unloaded", 0),
            "subscriber_events": len(events),
            "bounds": judge(start, top, rounds[0], end, idle_cpu),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    _print(report)
    save(report, output)
    return report


def _workload(client: Client, roots: list[Path], settings: Settings, rng: random.Random) -> None:
    """Load every workspace (a store in every tenth), ask through long path spellings, rewrite
    category files by hand, then wait until the idle workspaces have unloaded."""
    for n, workspace in enumerate(roots):
        if n % 10 == 0:
            client.store(
                category="Decision",
                content=f"Soak note{n} q{n}x z{n}k w{n}j r{rng.randrange(10**6)}.",
                workspace=workspace,
            )
        else:
            client.stats(workspace=workspace)
    for n in range(settings.spellings):  # each spelling distinct, each spelling_bytes long
        root = str(roots[n % len(roots)])
        padding = "/." * max(0, (settings.spelling_bytes - len(root)) // 2 - n)
        client.stats(workspace=f"{root}{padding}{'/.' * n}")
    for n in range(settings.rewrites):
        memory = rng.choice(roots) / ".memory"
        memory.mkdir(exist_ok=True)
        temp = memory / "quirks.md.editor-tmp"
        temp.write_text(f"- [rewrite-{n}] Rewritten by hand, time {n}.\n")
        os.replace(temp, memory / "quirks.md")
    deadline = time.monotonic() + settings.idle_unload + UNLOAD_TIMEOUT
    while len(client.status().workspaces) > 1 and time.monotonic() < deadline:
        time.sleep(0.1)


def _sample_until(sock: Path, pid: int, samples: list[Sample], stop: threading.Event) -> None:
    with Client(sock, timeout=120) as client:
        while not stop.wait(SAMPLE_INTERVAL):
            with contextlib.suppress(OSError, KeyError, ValueError):
                samples.append(sample(pid, len(client.status().workspaces)))


def _print(report: dict[str, Any]) -> None:
    figures = report["samples"]
    settings = report["settings"]
    print(
        f"soak: {settings['workspaces']:,} workspaces, {settings['spellings']} spellings of "
        f"{settings['spelling_bytes']:,} bytes, {settings['rewrites']:,} outside rewrites, "
        f"one idle subscriber; idle_unload_seconds {settings['idle_unload']:g} "
        f"(watch mode {report['watch_mode'] or '?'}, {report['workspaces_unloaded']} unloads)"
    )
    print("| | inotify instances | watches | threads | fds | RSS MB | loaded |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for when in ("start", "peak", "first_round", "end"):
        s = figures[when]
        print(
            f"| {when} | {s['inotify_instances']} | {s['inotify_watches']} | {s['threads']} | "
            f"{s['fds']} | {s['rss_mb']:.0f} | {s['workspaces_loaded']} |"
        )
    print_verdicts(report["bounds"])


def main(argv: list[str] | None = None) -> None:
    """Run the soak (`--quick`: 40 workspaces) and print its table and bounds."""
    settings_main(
        argv,
        name="soak",
        description=__doc__,
        quick_help="40 workspaces, 20 spellings, 40 rewrites",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
