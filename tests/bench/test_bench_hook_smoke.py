"""A tiny run of the hook benchmark through real daemons and real hook commands (this tree beside
itself as the "older" one), so it cannot rot: every row is there and every figure is positive;
no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import hook

TREE = Path(__file__).resolve().parents[2]


def test_hook_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "hook.json"
    report = hook.run(entries=10, rounds=1, against=TREE, output=output)
    table = capsys.readouterr().out
    rows = ("| prompt hook |", "| file hook |", "| prompt hook, older tree |", "| file hook, older")
    for row in rows:
        assert row in table
    assert set(report["figures"]) == {
        "python start",
        "prompt hook",
        "file hook",
        "prompt hook, fast path in process",
        "file hook, fast path in process",
        "prompt hook, older tree",
        "file hook, older tree",  # this tree has a file hook
    }
    for figure in report["figures"].values():
        assert figure["n"] == 1 and figure["p90_ms"] >= figure["p50_ms"] > 0
    assert json.loads(output.read_text())["benchmark"] == "hook"
