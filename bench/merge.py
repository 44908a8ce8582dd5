"""Merge benchmark: `memd merge-file` on a big category file two branches both added to.

The base is a category file of N entries (distinct slugs; sentences of words drawn from a
shared vocabulary, so memd's duplicate rule has candidates to judge); each branch adds M new
entries after the last one, as `memd store` does. Measured, in one run on the same files:

1. the core merge (`memd.core.merge.files.merge_file`, in process: parse, align, decide every
   entry, run the duplicate rule on each new pair, write the text), median of R runs;
2. `memd merge-file` as git runs it (a subprocess: Python's start, the read, the merge and the
   atomic write of OURS), median of R runs;
3. the floor: `git merge-file -p` on the same three files (C, line-level; it reports the two
   additions as one conflict, since it cannot order them), median of R runs;
4. a relayout: the same base, theirs with the blank lines between entries removed (its own
   layout), ours with one entry edited: the core merge, median of R runs. Every line is then a
   short match, the case a plain `difflib` alignment takes quadratic time on (16 s at 10k
   entries before the patience anchoring of `memd.core.merge.diff3`).

The target (issue 22): the core merge of two 500-entry additions to a 10k-entry file in under
1 s. The merge must be clean and hold N + 2M entries, or the run fails. `--quick` runs a small
file (for the smoke test). Results: Markdown on stdout and `bench/results/merge.json`
(`merge-quick.json` with `--quick`).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._report import commit, print_verdicts, save, settings_main
from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.merge.files import merge_file

CATEGORY = Category.DECISION
TARGET_S = 1.0
SOURCE = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    """How big the file is, how much each branch adds, and how often each step is timed."""

    entries: int
    added: int
    repeats: int


FULL = Settings(entries=10_000, added=500, repeats=5)
QUICK = Settings(entries=300, added=20, repeats=1)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]


def entry_line(rng: random.Random, words: list[str], slug: str) -> str:
    """One entry: a capitalised sentence of 6 to 14 vocabulary words under `slug`."""
    sentence = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
    return f"- [{slug}] {sentence.capitalize()}."


def versions(settings: Settings, seed: str = "merge") -> tuple[str, str, str]:
    """Return (base, ours, theirs): the base file and the two branches' additions to it."""
    rng = random.Random(seed)
    words = _vocabulary(rng, 3000)
    lines = [entry_line(rng, words, f"e{n}") for n in range(settings.entries)]
    base = CATEGORY.header + "\n\n".join(lines) + "\n"
    ours = [entry_line(rng, words, f"ours-{n}") for n in range(settings.added)]
    theirs = [entry_line(rng, words, f"theirs-{n}") for n in range(settings.added)]
    return (
        base,
        base + "".join(f"\n{line}\n" for line in ours),
        base + "".join(f"\n{line}\n" for line in theirs),
    )


def _median_s(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run(settings: Settings = FULL, *, output: Path | None = None) -> dict[str, Any]:
    """Run the steps of the module docstring; print and return the figures."""
    base, ours, theirs = versions(settings)
    path = f".memory/{CATEGORY.file}"
    merged = merge_file(path, base, ours, theirs)
    count = len(mdformat.entries(mdformat.parse(merged.text)))
    expected = settings.entries + 2 * settings.added
    if merged.conflicted or count != expected:
        raise SystemExit(f"merge wrong: {count} entries (want {expected}), {merged.conflicts}")
    core_s = _median_s(lambda: merge_file(path, base, ours, theirs), settings.repeats)
    packed = base.replace("\n\n- ", "\n- ")
    edited = base.replace("[e7] ", "[e7] Edited: ", 1)
    relayout = merge_file(path, base, edited, packed)
    if relayout.conflicted or "Edited: " not in relayout.text:
        raise SystemExit("relayout merge wrong: the edit is lost or conflicts")
    relayout_s = _median_s(lambda: merge_file(path, base, edited, packed), settings.repeats)
    root = Path(tempfile.mkdtemp(prefix="memd-merge-", dir="/tmp"))
    try:
        for name, text in (("base", base), ("theirs", theirs)):
            (root / name).write_text(text, encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), str(SOURCE / "client")])}

        def cli() -> None:
            (root / "ours").write_text(ours, encoding="utf-8")
            command = [sys.executable, "-m", "memd", "merge-file", "base", "ours", "theirs", path]
            done = subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"memd merge-file exited {done.returncode}: {done.stderr!r}")

        def floor() -> None:
            (root / "ours").write_text(ours, encoding="utf-8")
            command = ["git", "merge-file", "-p", "ours", "base", "theirs"]
            subprocess.run(command, cwd=root, capture_output=True, check=False)

        cli_s = _median_s(cli, settings.repeats)
        git_s = _median_s(floor, settings.repeats) if shutil.which("git") else None
    finally:
        shutil.rmtree(root, ignore_errors=True)
    met = core_s < TARGET_S
    report: dict[str, Any] = {
        "benchmark": "merge",
        "commit": commit(),
        "entries": settings.entries,
        "added_each": settings.added,
        "file_bytes": len(base.encode("utf-8")),
        "core_s": core_s,
        "cli_s": cli_s,
        "git_merge_file_s": git_s,
        "relayout_s": relayout_s,
        "targets": {
            "core_merge": {
                "target_s": TARGET_S,
                "met": met,
                "text": f"core merge {core_s:.3f} s, target < {TARGET_S:.0f} s: "
                + ("met" if met else "NOT met"),
            }
        },
    }
    print(markdown(report))
    print_verdicts(report["targets"])
    save(report, output)
    return report


def markdown(report: dict[str, Any]) -> str:
    """The figures as a Markdown table."""
    floor = report["git_merge_file_s"]
    return "\n".join(
        [
            f"{report['entries']:,} entries ({report['file_bytes'] / 1e6:.2f} MB), "
            f"{report['added_each']} added on each branch",
            "",
            "| step | s |",
            "|---|---:|",
            f"| core merge (in process) | {report['core_s']:.3f} |",
            f"| `memd merge-file` (subprocess, read + merge + atomic write) | "
            f"{report['cli_s']:.3f} |",
            "| floor: `git merge-file -p` (subprocess, line-level, conflicts) | "
            + ("n/a" if floor is None else f"{floor:.3f}")
            + " |",
            f"| core merge, theirs relaid out (no blank lines), ours edits one entry | "
            f"{report['relayout_s']:.3f} |",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.merge [--quick]`."""
    settings_main(
        argv,
        name="merge",
        description=__doc__,
        quick_help="a 300-entry file, 20 added on each branch",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
