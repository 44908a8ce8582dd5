"""What the Claude Code hooks cost the agent: the file hook (PreToolUse of Read) beside the prompt
hook (UserPromptSubmit), in one run, and the prompt hook of an older tree (`--against DIR`,
default main before the file hook) beside them, and its file hook too if it has one.

Each tree's daemon runs on its own copy of one workspace (`ENTRIES` memories over the five
categories, about files under `src/`); each hook is the real command, `python -m memd context
--hook claude` with a recorded hook input on stdin, timed end to end (process start to exit:
what Claude Code waits for), in rounds, the hooks in a rotating order, after a warm-up. Every
file-hook call uses a new session (the daemon does the whole work; a session's repeat gets less).
Also timed: `python -c pass` (the interpreter's own start, which no hook avoids) and, in process,
the fast path alone (`memd.cli.hook.answer`: connect, handshake, `context`, print) for each hook:
the part memd controls, whose target is under 50 ms warm.

Figures go to stdout as a Markdown table and to `bench/results/hook.json` (`hook-quick.json`
with `--quick`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench._daemon import percentile, running_daemon, tree_at
from bench._report import RESULTS_DIR, commit, record_verdict, save
from memd.cli import hook
from memd.core.format.categories import HACKLM_CATEGORIES

TREE = Path(__file__).resolve().parent.parent
ENTRIES = 200
QUICK_ENTRIES = 20
ROUNDS = 40
QUICK_ROUNDS = 3
WARM_UP = 2
TARGET_MS = 50.0
BEFORE = "7796c0a"
"""Main before the file hook: what `--against` defaults to (unpacked from git's history)."""
AREAS = ("api", "login", "billing", "deploy", "cache", "search", "auth", "mail")


def make_workspace(root: Path, entries: int) -> None:
    """Write the workspace: `.git`, `src/<area>/` and `entries` memories about those areas."""
    (root / ".git").mkdir()
    lines: dict[str, list[str]] = {c.file: [] for c in HACKLM_CATEGORIES}
    for n in range(entries):
        area = AREAS[n % len(AREAS)]
        (root / "src" / area).mkdir(parents=True, exist_ok=True)
        content = f"In src/{area}/handler{n % 5}.py the {area} rule number {n} holds."
        lines[HACKLM_CATEGORIES[n % len(HACKLM_CATEGORIES)].file].append(f"- [e{n}] {content}")
    (root / ".memory").mkdir()
    for category in HACKLM_CATEGORIES:
        body = "\n".join(lines[category.file])
        (root / ".memory" / category.file).write_text(f"# {category.name}\n\n{body}\n")


def prompt_input(workspace: Path) -> str:
    """A recorded UserPromptSubmit input for `workspace`."""
    return json.dumps(
        {
            "session_id": str(uuid.uuid4()),
            "cwd": str(workspace),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Fix the login handler so the billing api retries.",
        }
    )


def file_input(workspace: Path) -> str:
    """A recorded PreToolUse input of Read for `workspace`, in a new session."""
    return json.dumps(
        {
            "session_id": str(uuid.uuid4()),
            "cwd": str(workspace),
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(workspace / "src" / "login" / "handler2.py")},
            "tool_use_id": "toolu_01HXk2VqJ3nR8mZpW4yT6aBc",
        }
    )


def _run_hook(tree: Path, socket: Path, stdin: str) -> float:
    """Run the hook command of `tree` once; return its wall time in ms (it must answer)."""
    environ = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'client'}"}
    command = [sys.executable, "-m", "memd", "--socket", str(socket), "context", "--hook", "claude"]
    start = time.perf_counter()
    # From the tree's directory: `-m memd` imports memd from the current directory first.
    done = subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=environ, cwd=tree
    )
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or not done.stdout.startswith('{"hookSpecificOutput"'):
        raise RuntimeError(f"the hook gave no context: {done.stderr.strip()}")
    return elapsed


def _python_start() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - start) * 1000


def _fast_path(socket: Path, stdin: str) -> float:
    """The fast path alone, in this process: ms for `hook.answer` (it must answer)."""
    plan = hook.Plan(str(socket))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        start = time.perf_counter()
        answered = hook.answer(plan, stdin.encode())
        elapsed = (time.perf_counter() - start) * 1000
    if answered != 0 or not out.getvalue():
        raise RuntimeError("the fast path declined or gave no context")
    return elapsed


def _figures(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50_ms": percentile(ordered, 0.5),
        "p90_ms": percentile(ordered, 0.9),
    }


@contextlib.contextmanager
def _daemon_on(template: Path, executable: str | None) -> Iterator[tuple[Path, Path]]:
    with running_daemon(private_state=True, executable=executable) as (socket, workspace):
        shutil.rmtree(workspace)
        shutil.copytree(template, workspace)
        yield socket, workspace


def run(
    *,
    entries: int = ENTRIES,
    rounds: int = ROUNDS,
    against: Path | None = None,
    output: Path | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print its table, save its figures, and return them."""
    scratch = Path(tempfile.mkdtemp(prefix="memd-bench-hook-", dir="/tmp"))
    try:
        template = scratch / "ws"
        template.mkdir()
        make_workspace(template, entries)
        with contextlib.ExitStack() as stack:
            mine = stack.enter_context(_daemon_on(template, None))
            old = None
            if against is not None:
                program = scratch / "memd-old"
                path = f"{against}{os.pathsep}{against / 'client'}"
                program.write_text(
                    f'#!/bin/sh\nPYTHONPATH="{path}" exec "{sys.executable}" -m memd "$@"\n'
                )
                program.chmod(0o755)
                old = stack.enter_context(_daemon_on(template, str(program)))
            timers = _timers(mine, old, against)
            times = _measure(timers, rounds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    figures = {name: _figures(values) for name, values in times.items()}
    return _report(figures, entries, output)


def _timers(
    mine: tuple[Path, Path], old: tuple[Path, Path] | None, against: Path | None
) -> dict[str, Callable[[], float]]:
    (socket, workspace) = mine
    timers: dict[str, Callable[[], float]] = {
        "python start": _python_start,
        "prompt hook": lambda: _run_hook(TREE, socket, prompt_input(workspace)),
        "file hook": lambda: _run_hook(TREE, socket, file_input(workspace)),
        "prompt hook, fast path in process": lambda: _fast_path(socket, prompt_input(workspace)),
        "file hook, fast path in process": lambda: _fast_path(socket, file_input(workspace)),
    }
    if old is not None and against is not None:
        old_socket, old_workspace = old
        timers["prompt hook, older tree"] = lambda: _run_hook(
            against, old_socket, prompt_input(old_workspace)
        )
        if (against / "memd" / "core" / "search" / "given.py").exists():  # it has a file hook
            timers["file hook, older tree"] = lambda: _run_hook(
                against, old_socket, file_input(old_workspace)
            )
    return timers


def _measure(timers: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    for timer in timers.values():
        for _ in range(WARM_UP):
            timer()
    times: dict[str, list[float]] = {name: [] for name in timers}
    names = list(timers)
    for n in range(rounds):
        for name in names[n % len(names) :] + names[: n % len(names)]:  # each goes first in turn
            times[name].append(timers[name]())
    return times


def _report(
    figures: dict[str, dict[str, float]], entries: int, output: Path | None
) -> dict[str, Any]:
    print("| what | n | p50 ms | p90 ms |")
    print("|---|---|---|---|")
    for name, figure in figures.items():
        print(f"| {name} | {figure['n']} | {figure['p50_ms']:.1f} | {figure['p90_ms']:.1f} |")
    fast = figures["file hook, fast path in process"]["p50_ms"]
    verdict = "met" if fast < TARGET_MS else "NOT met"
    text = f"file hook's fast path under {TARGET_MS:.0f} ms warm (p50 {fast:.1f} ms): {verdict}"
    print(f"- {text}")
    record_verdict("hook fast path", fast < TARGET_MS, text)
    report: dict[str, Any] = {
        "benchmark": "hook",
        "commit": commit(),
        "entries": entries,
        "figures": figures,
        "target": {"file_fast_path_p50_under_ms": TARGET_MS, "met": fast < TARGET_MS},
    }
    save(report, output)
    return report


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m bench.hook [--quick] [--against DIR]`."""
    parser = argparse.ArgumentParser(prog="python -m bench.hook", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few entries, a few rounds")
    parser.add_argument(
        "--against",
        type=Path,
        help=f"an older memd tree whose prompt hook to time too (default: {BEFORE})",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memd-bench-before-", dir="/tmp") as scratch:
        against = args.against or tree_at(BEFORE, Path(scratch))
        run(
            entries=QUICK_ENTRIES if args.quick else ENTRIES,
            rounds=QUICK_ROUNDS if args.quick else ROUNDS,
            against=against,
            output=RESULTS_DIR / ("hook-quick.json" if args.quick else "hook.json"),
        )


if __name__ == "__main__":
    main()
