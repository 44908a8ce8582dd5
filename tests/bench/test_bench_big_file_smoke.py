"""A tiny run of the big-file benchmark, so it cannot rot; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import big_file
from memd.core.format import mdformat


def test_the_hostile_file_is_valid_distinct_and_fills_its_size() -> None:
    text = big_file.hostile_text(50_000)
    assert 49_000 < len(text.encode()) <= 50_000
    entries = mdformat.entries(mdformat.parse(text))
    assert len(entries) > 300
    assert len({entry.slug for entry in entries}) == len(entries)
    assert all("#" in entry.content for entry in entries)


def test_big_file_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "big_file.json"
    report = big_file.run(big_file.QUICK, output=output)
    table = capsys.readouterr().out
    for step in ("first query (load)", "first store", "second store", "rewrite 1 + query"):
        assert f"| {step} |" in table
    assert report["entries"] > 0 and report["peak_mb"] > report["idle_rss_mb"]
    assert all(row["status_calls"] >= 0 for row in report["steps"])
    assert json.loads(output.read_text())["benchmark"] == "big_file"
