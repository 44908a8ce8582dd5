"""A tiny run of the merge benchmark, so it cannot rot: its files are what it says, the merge
it times is clean and whole, and its table has its rows; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import merge
from memd.core.format import mdformat


def test_each_branch_adds_its_entries_after_the_base() -> None:
    base, ours, theirs = merge.versions(merge.QUICK)
    assert (base, ours, theirs) == merge.versions(merge.QUICK)  # deterministic
    counted = [len(mdformat.entries(mdformat.parse(text))) for text in (base, ours, theirs)]
    assert counted == [merge.QUICK.entries, *[merge.QUICK.entries + merge.QUICK.added] * 2]
    assert ours.startswith(base) and theirs.startswith(base)


def test_merge_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "merge.json"
    report = merge.run(merge.QUICK, output=output)
    out = capsys.readouterr().out
    assert "| core merge (in process) |" in out
    assert "| floor: `git merge-file -p`" in out
    assert "- core_merge: core merge " in out
    assert report["core_s"] > 0 and report["cli_s"] > 0
    assert json.loads(output.read_text())["benchmark"] == "merge"
