"""A tiny run of the long-spellings benchmark, so it cannot rot; no timing is asserted."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from bench import spellings
from memd.server.workspaces.registry import PATH_MAX, check_spelling


def test_every_hostile_spelling_is_accepted_and_new() -> None:
    hostile = "/tmp/memd-bench-spell-abcdefgh/hostile"
    for kind in spellings.KINDS:
        made = list(itertools.islice(spellings.spellings(hostile, kind), 50))
        assert len(set(made)) == 50  # never one the daemon's cache of spellings knows
        for spelling in made:
            check_spelling(spelling)  # within PATH_MAX: the longest accepted
            assert len(spelling.encode()) > PATH_MAX - 8


def test_spellings_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "spellings.json"
    report = spellings.run(spellings.QUICK, output=output)
    table = capsys.readouterr().out
    assert "| this tree | hostile |" in table and "| this tree | quiet |" in table
    stores = report["stores"]["this tree"]
    assert stores["quiet"]["stores"] > 0 and stores["hostile"]["stores"] > 0
    assert stores["quiet"]["hostile_requests"] == 0 < stores["hostile"]["hostile_requests"]
    outcomes = stores["hostile"]["hostile_outcomes"]
    assert not any(name.startswith("dots: error") for name in outcomes)  # served, as a path
    assert set(report["resolver_cpu_ms"]["this tree"]) == set(spellings.KINDS)
    assert json.loads(output.read_text())["benchmark"] == "spellings"
