"""A tiny run of the never-seen-workspace benchmark through real daemons (this tree, beside
itself as the "base"), so it cannot rot: the table has its rows, every figure is positive and
the corpus is what the issue names; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import cold_workspace


def test_random_corpus_is_eight_words_over_the_vocabulary() -> None:
    contents = cold_workspace.random_contents(500)
    assert len(contents) == 500
    assert all(len(c.split()) == cold_workspace.WORDS_PER_ENTRY for c in contents)
    assert contents == cold_workspace.random_contents(500)  # deterministic
    assert len({w for c in contents for w in c.split()}) <= cold_workspace.VOCABULARY


def test_cold_workspace_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "cold.json"
    here = Path(__file__).resolve().parents[2]
    report = cold_workspace.run(sizes=(200,), trials=1, base=here, output=output)
    table = capsys.readouterr().out
    assert "| 200 | this tree |" in table
    assert f"| 200 | base {cold_workspace.BASE} |" in table
    (row,) = report["rows"]
    assert row["fts5_build_ms"] > 0
    for name in ("this", "base"):
        figures = row[name]
        assert figures["answer_ms"] >= figures["ready_ms"] > 0
        assert figures["cpu_ms"] >= 0
        assert figures["peak_mb"] >= figures["settled_mb"] > 0
    assert json.loads(output.read_text())["benchmark"] == "cold_workspace"
