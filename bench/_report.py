"""What every benchmark does with its figures: round them, name the tree, judge targets, save."""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

S = TypeVar("S")
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def commit() -> str | None:
    """Return `git describe --always --dirty` of the benchmarked tree, or None outside git."""
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return described.stdout.strip() or None


def rounded(value: Any) -> Any:
    """Return `value` with every float (in nested dicts and lists) rounded to 4 decimals."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


_VERDICTS: list[tuple[str, bool | None, str]] = []
"""Every target judged in this process, in order: `python -m bench` lists them at the end."""


def record_verdict(name: str, met: bool | None, text: str) -> None:
    """Remember a judged target (None: not judged) for the run's closing list of verdicts."""
    _VERDICTS.append((name, met, text))


def recorded_verdicts(since: int = 0) -> list[tuple[str, bool | None, str]]:
    """The targets judged in this process from the `since`-th on: (name, met, text)."""
    return _VERDICTS[since:]


def print_verdicts(targets: dict[str, dict[str, Any]]) -> None:
    """Print one line per target: its name and its text ("... : met" / "NOT met"), and record
    each for the run's closing list."""
    for name, verdict in targets.items():
        print(f"- {name}: {verdict['text']}")
        met = verdict.get("met")
        record_verdict(name, met if isinstance(met, bool) else None, verdict["text"])


def save(report: dict[str, Any], output: Path | None) -> None:
    """Write `report` (rounded) as JSON to `output`, if given, and say where."""
    if output is None:
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(rounded(report), indent=2, ensure_ascii=False)
    output.write_text(text + "\n", encoding="utf-8")
    print(f"written: {output}")


def settings_main(
    argv: Sequence[str] | None,
    *,
    name: str,
    description: str | None,
    quick_help: str,
    run: Callable[..., Any],
    full: S,
    quick: S,
) -> None:
    """The command line of a benchmark whose `run(settings, output=...)` takes a FULL or a
    QUICK settings object: `--quick` picks QUICK and writes `results/<name>-quick.json`."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{name}", description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    suffix = "-quick" if args.quick else ""
    run(quick if args.quick else full, output=RESULTS_DIR / f"{name}{suffix}.json")
