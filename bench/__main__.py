"""Run every benchmark: `python -m bench` (full) or `python -m bench --quick` (tiny versions).

Each module in `BENCHMARKS` has `main(argv: list[str] | None = None) -> None`, prints its own
figures and accepts `--quick`. Name some to run only those: `python -m bench locomo`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from types import ModuleType

from bench import (
    big_file,
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
    for module in BENCHMARKS:
        if args.names and _name(module) not in args.names:
            continue
        print(f"== {_name(module)}")
        started = time.perf_counter()
        module.main(["--quick"] if args.quick else [])
        print(f"   ({time.perf_counter() - started:.1f} s)\n")


if __name__ == "__main__":
    main()
