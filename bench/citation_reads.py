"""What the citation check adds to `query` and `context` (issue 32: at most +5 %), and what a
`check` costs, in one run, beside the same reads of an older tree's daemon (`--against DIR`).

The workspace is a git repository of `FILES` small source files and `ENTRIES` memories spread
over the five categories, a third citing a file that exists, a third one that was deleted in a
later commit, a third citing nothing. Both daemons (this tree's and the older one's, each on
its own copy) run at once and are warmed (one `check` on this tree's, so the cache is full, as
it is once a workspace has been read for a few seconds); then each call is timed, `query` and
`context` over the fixed `QUERIES`, one daemon then the other, until the time budget is spent.
Reported: p50 and p90 of each read per daemon and this tree's p50 over the older one's; for this
tree also `check`'s first (cold) and warm cost.

Figures go to stdout as a Markdown table and to `bench/results/citation_reads.json`
(`citation_reads-quick.json` with `--quick`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench._daemon import percentile, running_daemon, tree_at
from bench._report import RESULTS_DIR, commit, save
from memd.core.format.categories import HACKLM_CATEGORIES
from memd_client import Client

FILES = 2_000
ENTRIES = 500
QUICK_FILES, QUICK_ENTRIES = 100, 40
BUDGET_S = 4.0
QUICK_BUDGET_S = 0.3
QUERIES = (
    "retry the parser",
    "where does the cache module live",
    "deploy staging",
    "widget handler rules",
    "lock before writing",
)


def make_repo(root: Path, files: int, entries: int) -> None:
    """Write the benchmark's git repository at `root` (see the module docstring)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    for n in range(files):
        folder = root / "src" / f"mod{n % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{n}.py").write_text(f"def handler_{n}():\n    return {n}\n")
    lines: dict[str, list[str]] = {c.file: [] for c in HACKLM_CATEGORIES}
    for n in range(entries):
        path = f"src/mod{n % 40}/file{(n * 7) % files}.py"
        words = QUERIES[n % len(QUERIES)]
        kinds = (f"The {words} code is in `{path}` now.", f"Remember to {words} {n} times.")
        content = kinds[n % 2] if n % 3 else f"The {words} helper sits in `src/gone{n}.py`."
        if not n % 3:
            (root / "src" / f"gone{n}.py").write_text("x = 1\n")
        lines[HACKLM_CATEGORIES[n % len(HACKLM_CATEGORIES)].file].append(f"- [e{n}] {content}")
    (root / ".memory").mkdir()
    for category in HACKLM_CATEGORIES:
        body = "\n".join(lines[category.file])
        (root / ".memory" / category.file).write_text(f"# {category.name}\n\n{body}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "code and memory")
    git("rm", "-q", *[f"src/gone{n}.py" for n in range(0, entries, 3)])
    git("commit", "-q", "-m", "remove")


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def measure(
    template: Path, budget_s: float, programs: dict[str, str | None]
) -> dict[str, dict[str, Any]]:
    """Time `query` and `context` on a copy of `template` per daemon, all running at once and
    called in turn (so a change in the machine's load falls on each alike)."""
    with contextlib.ExitStack() as stack:
        clients: dict[str, Client] = {}
        figures: dict[str, dict[str, Any]] = {}
        for name, program in programs.items():
            socket_path, workspace = stack.enter_context(
                running_daemon(private_state=True, executable=program)
            )
            shutil.rmtree(workspace)
            shutil.copytree(template, workspace, symlinks=True)
            client = stack.enter_context(Client(socket_path, workspace=workspace, timeout=120))
            client.list()  # loads the workspace
            clients[name] = client
            figures[name] = {}
            if program is None:
                figures[name]["check_cold_ms"] = _timed(client.check)
                figures[name]["check_warm_ms"] = _timed(client.check)
            for text in QUERIES:  # warm: indexes built, caches filled
                client.query(text)
                client.context(text)
        times = {name: {"query": [], "context": []} for name in clients}  # type: ignore[var-annotated]
        end = time.monotonic() + budget_s
        order = list(clients.items())
        while time.monotonic() < end or not times[next(iter(times))]["query"]:
            order.reverse()  # each daemon goes first in every other round: no order bias
            for text in QUERIES:
                for method in ("query", "context"):
                    for name, client in order:
                        call = getattr(client, method)
                        times[name][method].append(_timed(lambda: call(text)))  # noqa: B023
    for name, methods in times.items():
        for method, values in methods.items():
            values.sort()
            figures[name][method] = {
                "n": len(values),
                "p50_ms": percentile(values, 0.5),
                "p90_ms": percentile(values, 0.9),
            }
    return figures


def old_memd(tree: Path, directory: Path) -> str:
    """A `memd` program running the tree at `tree` (its own source, this interpreter)."""
    program = directory / "memd-old"
    path = f"{tree}{os.pathsep}{tree / 'client'}"
    program.write_text(f'#!/bin/sh\nPYTHONPATH="{path}" exec "{sys.executable}" -m memd "$@"\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program)


def run(
    *,
    files: int = FILES,
    entries: int = ENTRIES,
    budget_s: float = BUDGET_S,
    against: Path | None = None,
    output: Path | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print its table, save its figures, and return them."""
    scratch = Path(tempfile.mkdtemp(prefix="memd-bench-cite-", dir="/tmp"))
    try:
        template = scratch / "repo"
        template.mkdir()
        make_repo(template, files, entries)
        programs: dict[str, str | None] = {"this tree": None}
        if against is not None:
            programs["older tree"] = old_memd(against, scratch)
        daemons = measure(template, budget_s, programs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(
        "| daemon | files | entries | query p50 ms | query p90 ms | context p50 ms | "
        "context p90 ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, figures in daemons.items():
        q, c = figures["query"], figures["context"]
        print(
            f"| {name} | {files:,} | {entries:,} | {q['p50_ms']:.3f} | {q['p90_ms']:.3f} | "
            f"{c['p50_ms']:.3f} | {c['p90_ms']:.3f} |"
        )
    report: dict[str, Any] = {
        "benchmark": "citation_reads",
        "commit": commit(),
        "files": files,
        "entries": entries,
        "daemons": daemons,
    }
    mine = daemons["this tree"]
    print(f"check: cold {mine['check_cold_ms']:.1f} ms, warm {mine['check_warm_ms']:.1f} ms")
    if "older tree" in daemons:
        old = daemons["older tree"]
        ratios = {m: mine[m]["p50_ms"] / old[m]["p50_ms"] for m in ("query", "context")}
        report["p50_ratio"] = ratios
        print(f"p50 this/older: query {ratios['query']:.3f}, context {ratios['context']:.3f}")
    save(report, output or RESULTS_DIR / "citation_reads.json")
    return report


BEFORE_CHECK = "c5ade02"
"""The last commit before the citation check: what `--against` defaults to (a `git archive` of
it from this repository's history, when there is one)."""


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m bench.citation_reads [--quick] [--against DIR] [--budget S]`."""
    parser = argparse.ArgumentParser(prog="python -m bench.citation_reads", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a small repository, short budget")
    parser.add_argument(
        "--against",
        type=Path,
        help=f"an older memd tree to compare with (default: {BEFORE_CHECK}, from git's history)",
    )
    parser.add_argument("--budget", type=float, help=f"seconds per daemon ({BUDGET_S})")
    args = parser.parse_args(argv)
    quick = args.quick
    with tempfile.TemporaryDirectory(prefix="memd-bench-before-", dir="/tmp") as scratch:
        against = args.against or tree_at(BEFORE_CHECK, Path(scratch))
        run(
            files=QUICK_FILES if quick else FILES,
            entries=QUICK_ENTRIES if quick else ENTRIES,
            budget_s=args.budget or (QUICK_BUDGET_S if quick else BUDGET_S),
            against=against,
            output=RESULTS_DIR / ("citation_reads-quick.json" if quick else "citation_reads.json"),
        )


if __name__ == "__main__":
    main()
