"""Long workspace spellings: does an adversary sending the longest accepted hostile workspace
paths slow down another client's stores? (issue 30; the outside round's t13b: 48 clients
sending 250 KB spellings held another client's store 31.6 s.)

Within today's caps (a workspace path of at most 4,096 bytes, PATH_MAX): `clients` hostile
connections each send `query` requests in a loop, each with a fresh spelling (the cache of
spellings never saves the daemon any work) of one of these kinds, in turn, every one near
4 KB:
- `dots`: the hostile workspace followed by `/.` about 2,000 times;
- `up-down`: followed by `/a/..` about 800 times (`a` a real directory);
- `deep`: a real directory about 2,000 levels down (`/a/a/.../a`);
- `links`: followed by `/big` again and again, `big` a link to `a/../` 800 times.
Meanwhile one client stores unique entries into another workspace, one after another; its
store latency p50/max is the figure, beside the same store with no hostile load. The daemon's
CPU over the window (its utime + stime) says what the hostile load cost it, and the resolver's
own CPU per spelling (`resolve_root` plus the user-wide check, in a process of their own) is
measured for each kind.

With `--baseline-tree DIR` (a checkout of an older memd, say `git worktree add /tmp/old c6143c4`;
run with this Python, its code first on PYTHONPATH), every figure is measured for both trees in
the same run, the order swapped every round. Results: Markdown tables and
`bench/results/spellings.json` (`spellings-quick.json` with `--quick`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import SocketStream

from bench._daemon import percentile, running_daemon
from bench._report import RESULTS_DIR, commit, save
from bench._text import word
from memd_client import Client

PATH_MAX = 4096
KINDS = ("dots", "up-down", "deep", "links")
DEEP_LEVELS = 2_000


@dataclass(frozen=True)
class Settings:
    """The size of one run."""

    clients: int = 48
    duration: float = 6.0
    rounds: int = 2
    resolver_samples: int = 20


FULL = Settings()
QUICK = Settings(clients=4, duration=0.5, rounds=1, resolver_samples=2)


@dataclass
class Window:
    """What one timed window saw."""

    store_ms: list[float] = field(default_factory=list)
    hostile: Counter[str] = field(default_factory=Counter)
    cpu_s: float = 0.0
    seconds: float = 0.0


def _cpu_seconds(pid: int) -> float:
    """The user + system CPU time process `pid` has used, in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def deep_levels(hostile: str) -> int:
    """How deep `deep` goes: as deep as a spelling of it fits in PATH_MAX."""
    return (PATH_MAX - len(hostile.encode()) - len("/deep") - 2) // 2


def prepare(base: Path) -> Path:
    """Make the hostile workspace beside `base`'s: a directory `a`, a tree `deep_levels` deep
    under `deep`, and the link `big`."""
    hostile = base.parent / "hostile"
    (hostile / "a").mkdir(parents=True)
    (hostile / "deep").mkdir()
    handle = os.open(hostile / "deep", os.O_RDONLY)
    for _ in range(deep_levels(str(hostile))):
        os.mkdir("a", dir_fd=handle)
        inner = os.open("a", os.O_RDONLY, dir_fd=handle)
        os.close(handle)
        handle = inner
    os.close(handle)
    (hostile / "big").symlink_to("a/../" * 800)
    return hostile


UNITS = {"dots": "/.", "up-down": "/a/..", "deep": "/a", "links": "/big"}


def spellings(hostile: str, kind: str) -> Iterator[str]:
    """Fresh spellings of `kind` (see the module docstring), each at most PATH_MAX bytes: a
    doubled slash, moved along, makes each one new."""
    unit = UNITS[kind]
    start = hostile + ("/deep" if kind == "deep" else "")
    count = (PATH_MAX - len(start.encode()) - 1) // len(unit)
    if kind == "deep":
        count = deep_levels(hostile)
    for n in itertools.count():
        at = n % count
        yield start + unit * at + "/" + unit * (count - at)


def _frame(method: str, params: dict[str, Any], request_id: int) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return msgspec.json.encode(body) + b"\n"


async def _reply(stream: SocketStream, buffer: bytearray) -> dict[str, Any]:
    while b"\n" not in buffer:
        buffer += await stream.receive()
    end = buffer.index(b"\n")
    line = bytes(buffer[:end])
    del buffer[: end + 1]
    reply: dict[str, Any] = msgspec.json.decode(line)
    return reply


async def _hostile(socket: str, hostile: str, index: int, deadline: float, seen: Window) -> None:
    names = [spellings(hostile, kind) for kind in KINDS]
    async with await anyio.connect_unix(socket) as stream:
        buffer = bytearray()
        for n in itertools.count():
            if time.monotonic() >= deadline:
                return
            kind = (index + n) % len(KINDS)
            params = {"workspace": next(names[kind]), "query": "anything"}
            await stream.send(_frame("query", params, n))
            reply = await _reply(stream, buffer)
            outcome = "answered" if "result" in reply else f"error {reply['error']['code']}"
            seen.hostile[f"{KINDS[kind]}: {outcome}"] += 1


async def _storer(socket: str, workspace: str, tag: str, deadline: float, seen: Window) -> None:
    async with await anyio.connect_unix(socket) as stream:
        buffer = bytearray()
        for n in itertools.count():
            if time.monotonic() >= deadline:
                return
            content = f"Spellings bench {tag} stores {word(n, 7)} and {word(7, n)} number {n}."
            params = {"workspace": workspace, "category": "Decision", "content": content}
            began = time.perf_counter()
            await stream.send(_frame("store", params, n))
            reply = await _reply(stream, buffer)
            seen.store_ms.append((time.perf_counter() - began) * 1000)
            if reply.get("result", {}).get("action") != "stored":
                raise RuntimeError(f"a store was not stored: {reply}")


async def _window(
    socket: str, pid: int, victim: str, hostile: str, clients: int, duration: float, tag: str
) -> Window:
    seen = Window()
    began_cpu, began = _cpu_seconds(pid), time.monotonic()
    deadline = began + duration
    async with anyio.create_task_group() as group:
        group.start_soon(_storer, socket, victim, tag, deadline, seen)
        for index in range(clients):
            group.start_soon(_hostile, socket, hostile, index, deadline, seen)
    seen.seconds = time.monotonic() - began
    seen.cpu_s = _cpu_seconds(pid) - began_cpu
    return seen


def measure_daemon(executable: str | None, settings: Settings, tag: str) -> dict[str, Window]:
    """One daemon: a quiet window, then a hostile one."""
    with running_daemon(private_state=True, executable=executable) as (socket, victim):
        hostile = prepare(victim)
        try:
            return _measure(socket, victim, hostile, settings, tag)
        finally:
            remove(hostile)


def remove(directory: Path) -> None:
    """Remove `directory` and its deep tree (`shutil.rmtree` recurses once a level)."""
    subprocess.run(["rm", "-rf", "--", str(directory)], check=False)


def _measure(
    socket: Path, victim: Path, hostile: Path, settings: Settings, tag: str
) -> dict[str, Window]:
    """A quiet window, then a hostile one, on a running daemon."""
    with Client(str(socket), workspace=str(hostile)) as client:
        client.store(category="Decision", content="The hostile workspace holds one entry.")
        pid = client.status().pid
    windows = {}
    for name, clients in (("quiet", 0), ("hostile", settings.clients)):
        windows[name] = anyio.run(
            _window, str(socket), pid, str(victim), str(hostile), clients,
            settings.duration, f"{tag} {name}",
        )  # fmt: skip
    return windows


RESOLVER_CODE = """
import json, sys, time
from memd.server.workspaces.registry import resolve_root
from memd.server.workspaces.scopes import Scopes
asked = json.load(sys.stdin)
scopes = Scopes.__new__(Scopes)
scopes.root = asked["user_wide"]
out = {}
for kind, paths in asked["kinds"].items():
    took = {"resolve_root": 0.0, "user-wide check": 0.0}
    for path in paths:
        began = time.process_time()
        try:
            resolve_root(path)
        except Exception:
            pass
        middle = time.process_time()
        scopes.is_user_wide(path)
        took["resolve_root"] += middle - began
        took["user-wide check"] += time.process_time() - middle
    out[kind] = {name: 1000 * spent / len(paths) for name, spent in took.items()}
print(json.dumps(out))
"""


def measure_resolver(tree: str | None, settings: Settings) -> dict[str, dict[str, float]]:
    """CPU ms per spelling of each kind, in a process of its own running `tree`'s code (this
    tree's when None)."""
    root = Path(tempfile.mkdtemp(prefix="memd-bench-spell-", dir="/tmp"))
    try:
        (root / "ws").mkdir()
        (root / "global").mkdir()
        hostile = str(prepare(root / "ws"))
        kinds = {
            kind: list(itertools.islice(spellings(hostile, kind), settings.resolver_samples))
            for kind in KINDS
        }
        environ = dict(os.environ)
        if tree is not None:
            environ["PYTHONPATH"] = f"{tree}:{tree}/client"
        asked = json.dumps({"kinds": kinds, "user_wide": str(root / "global")})
        done = subprocess.run(
            [sys.executable, "-c", RESOLVER_CODE],
            input=asked,
            capture_output=True,
            text=True,
            env=environ,
            cwd=root,
            check=True,
        )
        figures: dict[str, dict[str, float]] = json.loads(done.stdout)
        return figures
    finally:
        remove(root)


def _wrapper(tree: str, directory: Path) -> str:
    """An executable that runs `memd` from `tree` with this Python."""
    script = directory / "memd-baseline"
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH="{tree}:{tree}/client" exec "{sys.executable}" -m memd "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _summary(windows: list[Window]) -> dict[str, Any]:
    stores = sorted(ms for window in windows for ms in window.store_ms)
    seconds = sum(window.seconds for window in windows)
    hostile = sum((window.hostile for window in windows), Counter[str]())
    requests = sum(hostile.values())
    cpu = sum(window.cpu_s for window in windows)
    return {
        "stores": len(stores),
        "store_p50_ms": percentile(stores, 0.5) if stores else 0.0,
        "store_max_ms": stores[-1] if stores else 0.0,
        "hostile_requests": requests,
        "hostile_per_s": requests / seconds if seconds else 0.0,
        "hostile_outcomes": dict(sorted(hostile.items())),
        "daemon_cpu_s": cpu,
        "daemon_cores": cpu / seconds if seconds else 0.0,
        "cpu_ms_per_hostile": 1000 * cpu / requests if requests else 0.0,
    }


def run(
    settings: Settings = FULL, *, output: Path | None = None, baseline_tree: str | None = None
) -> dict[str, Any]:
    """Measure (see the module docstring); print the tables; write and return the report."""
    began = time.perf_counter()
    trees: dict[str, str | None] = {"this tree": None}
    if baseline_tree is not None:
        trees["baseline"] = baseline_tree
    windows: dict[tuple[str, str], list[Window]] = {}
    with tempfile.TemporaryDirectory(prefix="memd-bench-spell-") as scratch:
        executables = {
            name: None if tree is None else _wrapper(tree, Path(scratch))
            for name, tree in trees.items()
        }
        for round_index in range(settings.rounds):
            order = list(trees) if round_index % 2 == 0 else list(reversed(trees))
            for name in order:
                found = measure_daemon(executables[name], settings, f"{name} {round_index}")
                for condition, window in found.items():
                    windows.setdefault((name, condition), []).append(window)
    report = {
        "benchmark": "spellings",
        "commit": commit(),
        "baseline_tree": baseline_tree,
        "settings": vars(settings),
        "stores": {
            name: {
                condition: _summary(windows[name, condition]) for condition in ("quiet", "hostile")
            }
            for name in trees
        },
        "resolver_cpu_ms": {name: measure_resolver(tree, settings) for name, tree in trees.items()},
        "seconds": time.perf_counter() - began,
    }
    print(markdown(report))
    save(report, output)
    return report


def markdown(report: dict[str, Any]) -> str:
    """The two tables: the victim's stores, and the resolver's CPU per spelling."""
    settings = report["settings"]
    lines = [
        f"Another client's stores while {settings['clients']} clients send ~4 KB hostile "
        f"workspace spellings ({settings['rounds']} rounds of {settings['duration']:g} s)",
        "",
        "| tree | load | stores | store p50 ms | store max ms | hostile req/s "
        "| daemon CPU (cores) | daemon CPU ms / hostile req |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, conditions in report["stores"].items():
        for condition, found in conditions.items():
            lines.append(
                f"| {name} | {condition} | {found['stores']} | {found['store_p50_ms']:.1f} "
                f"| {found['store_max_ms']:.1f} | {found['hostile_per_s']:.0f} "
                f"| {found['daemon_cores']:.2f} | {found['cpu_ms_per_hostile']:.2f} |"
            )
    lines += ["", "Hostile outcomes:"]
    for name, conditions in report["stores"].items():
        outcomes = conditions["hostile"]["hostile_outcomes"]
        lines.append(f"- {name}: " + ", ".join(f"{k} {v}" for k, v in outcomes.items()))
    lines += [
        "",
        "The resolver's CPU per spelling, ms (a process of its own)",
        "",
        "| tree | kind | resolve_root | user-wide check |",
        "|---|---|---|---|",
    ]
    for name, kinds in report["resolver_cpu_ms"].items():
        for kind, took in kinds.items():
            lines.append(
                f"| {name} | {kind} | {took['resolve_root']:.2f} | {took['user-wide check']:.2f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.spellings", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny counts, for the smoke test")
    parser.add_argument(
        "--baseline-tree",
        metavar="DIR",
        help="a checkout of another memd to measure beside this tree, in the same run",
    )
    args = parser.parse_args(argv)
    if args.baseline_tree and not (Path(args.baseline_tree) / "memd" / "__init__.py").is_file():
        parser.error(f"{args.baseline_tree} holds no memd/ package; name a memd checkout")
    suffix = "-quick" if args.quick else ""
    run(
        QUICK if args.quick else FULL,
        output=RESULTS_DIR / f"spellings{suffix}.json",
        baseline_tree=args.baseline_tree,
    )


if __name__ == "__main__":
    main()
