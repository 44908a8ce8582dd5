"""A tiny run of the load benchmark, so it cannot rot; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import load


def test_load_benchmark_runs_quick_and_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "load.json"
    report = load.run(load.Settings(connections=40, duration=1.0), output=output)
    assert "| requests lost | 0 |" in capsys.readouterr().out
    figures = report["figures"]
    assert figures["lost"] == 0 and figures["daemon_alive"]
    assert figures["store_replies"] > 0 and figures["errors"] == 0
    assert figures["stored"] == figures["store_replies"] == figures["stored_in_files"]
    assert figures["stalled_closed"] == 2 and figures["stalled_left_open"] == 0
    assert figures["answered"] > 0 and figures["probes"] > 0
    assert json.loads(output.read_text())["benchmark"] == "load"
