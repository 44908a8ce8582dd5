"""A tiny run of the citation reads benchmark through real daemons (this tree beside itself as
the "older" one), so it cannot rot: the table has its rows and every figure is positive; no
timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import citation_reads

TREE = Path(__file__).resolve().parents[2]


def test_citation_reads_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "citation_reads.json"
    report = citation_reads.run(files=20, entries=12, budget_s=0.05, against=TREE, output=output)
    table = capsys.readouterr().out
    assert "| this tree | 20 | 12 |" in table and "| older tree | 20 | 12 |" in table
    for figures in report["daemons"].values():
        for method in ("query", "context"):
            assert figures[method]["n"] >= len(citation_reads.QUERIES)
            assert figures[method]["p90_ms"] >= figures[method]["p50_ms"] > 0
    assert report["daemons"]["this tree"]["check_cold_ms"] > 0
    assert set(report["p50_ratio"]) == {"query", "context"}
    assert json.loads(output.read_text())["benchmark"] == "citation_reads"
