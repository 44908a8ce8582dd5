"""Run every benchmark: `python -m bench` (full) or `python -m bench --quick` (tiny versions).

Each module in `BENCHMARKS` has `main(argv: list[str] | None = None) -> None`, prints its own
figures and accepts `--quick`. Name some to run only those: `python -m bench locomo`. The run
ends with every target the benchmarks judged, each with its verdict, and how long each took.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from collections.abc import Sequence
from types import ModuleType

from bench import (
    big_file,
    chat_source,
    citation_reads,
    citations,
    coding_memory,
    cold_workspace,
    fusion_sweep,
    hook,
    lifecycle,
    load,
    locomo,
    longmemeval,
    merge,
    query,
    redundancy,
    retrieval,
    search_speed,
    secrets,
    semantic_costs,
    semantic_dedup,
    soak,
    sources,
    spellings,
    store,
    watch_latency,
    write_decisions,
)
from bench._report import commit, recorded_verdicts

BENCHMARKS: tuple[ModuleType, ...] = (
    locomo,
    retrieval,
    longmemeval,
    coding_memory,
    fusion_sweep,
    write_decisions,
    redundancy,
    semantic_dedup,
    secrets,
    search_speed,
    semantic_costs,
    soak,
    store,
    query,
    sources,
    lifecycle,
    cold_workspace,
    watch_latency,
    load,
    spellings,
    big_file,
    merge,
    citations,
    citation_reads,
    hook,
    chat_source,
)


def _name(module: ModuleType) -> str:
    return module.__name__.rpartition(".")[2]


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run the selected benchmarks in order."""
    names = [_name(module) for module in BENCHMARKS]
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="run a tiny version of each")
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"benchmarks to run (default: {names})"
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(names))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    print(
        f"memd {commit()}, {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}\n"
    )
    verdicts: list[tuple[str, str, bool | None, str]] = []
    took: list[tuple[str, float]] = []
    for module in BENCHMARKS:
        if args.names and _name(module) not in args.names:
            continue
        print(f"== {_name(module)}")
        started = time.perf_counter()
        judged = len(recorded_verdicts())
        module.main(["--quick"] if args.quick else [])
        took.append((_name(module), time.perf_counter() - started))
        verdicts += [(_name(module), *found) for found in recorded_verdicts(judged)]
        print(f"   ({took[-1][1]:.1f} s)\n")
    print_summary(verdicts, took)


def print_summary(
    verdicts: Sequence[tuple[str, str, bool | None, str]], took: Sequence[tuple[str, float]]
) -> None:
    """Print every judged target (benchmark, name, verdict, its line) and each benchmark's time."""
    met = sum(1 for _, _, flag, _ in verdicts if flag)
    print(f"== every target of this run: {met} of {len(verdicts)} met\n")
    print("| benchmark | target | verdict | figure |\n|---|---|---|---|")
    for bench, name, flag, text in verdicts:
        verdict = "not judged" if flag is None else ("met" if flag else "NOT met")
        print(f"| {bench} | {name} | {verdict} | {text.replace('|', '/')} |")
    total = sum(seconds for _, seconds in took)
    print(f"\nTime: {', '.join(f'{name} {seconds:.0f} s' for name, seconds in took)}; ", end="")
    print(f"total {total / 60:.1f} min")


if __name__ == "__main__":
    main()
