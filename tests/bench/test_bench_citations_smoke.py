"""A tiny run of the citation benchmark's parts, so it cannot rot: the labelled sets are what
their README says, the synthetic repositories build with real git, both checkers score them and
the report has its figures; no timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import citations


def test_the_labelled_sets_have_every_label() -> None:
    history = [json.loads(line) for line in citations.HISTORY.read_text().splitlines()]
    labels = [row["label"] for row in history]
    assert len(history) >= 150 and labels.count("stale") * 3 >= len(history)
    assert {"stale", "current", "none"} <= set(labels)
    assert all(s["text"] in row["content"] for row in history for s in row["stale"])
    public = json.loads(citations.PUBLIC.read_text())
    bullets = [bullet for repo in public for bullet in repo["bullets"]]
    assert all(a["text"] in b["content"] for b in bullets for a in b["anchors"])


def test_a_synthetic_repository_is_scored_by_both_checkers(tmp_path: Path) -> None:
    spec = json.loads(citations.SYNTHETIC.read_text())[0]
    root, entries = citations.build_synthetic(tmp_path, spec)
    assert len(entries) == len(spec["entries"])
    assert citations.git(root, "blame", "--porcelain", entries[0].file).count("memories") >= 1
    figures = citations.measure_set("synthetic", [(root, entries)])
    for checker in ("memd", "backtick"):
        assert figures[checker]["entries"]["stale"] == sum(
            e["label"] == "stale" for e in spec["entries"]
        )
        for rate in ("stale_recall", "false_alarms_current", "false_alarms_none"):
            assert 0.0 <= figures[checker][rate] <= 1.0
    # The baseline flags a third-party name that is no path; memd's rules must not.
    assert figures["backtick"]["flagged"]["none"] > figures["memd"]["flagged"]["none"]


def test_the_cost_run_builds_and_checks_a_repository(tmp_path: Path) -> None:
    cost = citations.cost_run(tmp_path, files=300, entries=10)
    assert cost["files"] == 300 and cost["entries"] == 10
    assert cost["first_s"] > 0 and cost["cached_s"] > 0


def test_anchor_figures_score_both_checkers(capsys: pytest.CaptureFixture[str]) -> None:
    public = json.loads(citations.PUBLIC.read_text())
    figures = citations.anchor_figures([b for r in public for b in r["bullets"]])
    assert figures["backtick"]["labelled"] == figures["memd"]["labelled"] > 30
    assert figures["backtick"]["found"] > 0
