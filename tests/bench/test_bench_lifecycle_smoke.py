"""A tiny run of the lifecycle benchmark through real daemons, so it cannot rot: the tables have
their rows and every figure is positive; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import lifecycle


def test_lifecycle_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "lifecycle.json"
    report = lifecycle.run(
        cold_entries=lifecycle.QUICK_COLD_ENTRIES,
        trials=lifecycle.QUICK_TRIALS,
        rss_sizes=lifecycle.QUICK_RSS_SIZES,
        edit_entries=lifecycle.QUICK_EDIT_ENTRIES,
        edits=lifecycle.QUICK_EDITS,
        output=output,
    )
    tables = capsys.readouterr().out
    assert "| memd serve, first start: spawn to READY=1 |" in tables
    assert "| memd serve, restart: spawn to first answer (kept index) |" in tables
    for size in lifecycle.QUICK_RSS_SIZES:
        assert f"| {size:,} |" in tables
    cold = report["cold_start"]
    keys = ("first_ready_ms", "first_answer_ms", "restart_ready_ms", "restart_answer_ms")
    for key in ("ready_floor_ms", "client_process_ms", *keys):
        assert cold[key] > 0
    assert cold["hacklm_process_ms"] > 0
    for figures in report["rss"]:
        assert figures["rss_mb"] >= figures["idle_mb"] > 0
        assert figures["kb_per_entry"] > 0
    edit = report["edit"]
    assert edit["edits"] == lifecycle.QUICK_EDITS
    assert edit["max_ms"] >= edit["p50_ms"] > 0
    assert edit["warm_query_p50_ms"] > 0
    assert json.loads(output.read_text())["benchmark"] == "lifecycle"
