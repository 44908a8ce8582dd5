"""A tiny run of the query benchmark through real daemons, so it cannot rot: the table has its
rows and every figure is positive; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import query


def test_query_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "query.json"
    report = query.run(query.QUICK_SIZES, budget_s=query.QUICK_BUDGET_S, output=output)
    table = capsys.readouterr().out
    for size in query.QUICK_SIZES:
        for label in query.METHODS.values():
            assert f"| {size:,} | {label} |" in table
    assert [result["entries"] for result in report["sizes"]] == list(query.QUICK_SIZES)
    for result in report["sizes"]:
        assert set(result["methods"]) == set(query.METHODS)
        assert result["load_ms"] > 0
        assert result["mean_hits"] > 0
        for figures in result["methods"].values():
            assert figures["n"] >= len(query.QUERIES)
            assert figures["p99_ms"] >= figures["p50_ms"] > 0
            assert figures["p50_x_floor"] > 0
            assert figures["memd_p50_ratio"] > 0
    assert report["growth"][0]["size_ratio"] > 1
    assert "sub-linear growth" in report["targets"]
    assert json.loads(output.read_text())["benchmark"] == "query"
