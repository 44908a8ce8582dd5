"""The semantic dedup bench: its rules change only the verdicts they say and count data-losing
changes as the data's README defines them; its quick run goes end to end with the semantic
extra's model (figures are not asserted, only their shape)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import semantic_dedup
from bench.semantic_dedup import RULES, Row, effect, frontier
from memd.semantic.embedder import missing_extra

RULE = {rule.name: rule for rule in RULES}


def _row(allowed: str, verdict: str, relation: str, cosine: float) -> Row:
    return Row(
        "dev", "x", "c", allowed, frozenset(allowed.split("/")), verdict, relation, cosine, "", ""
    )


def test_a_rule_never_touches_a_skip_and_changes_only_what_it_names() -> None:
    skipped = _row("store", "skip", "same", 0.99)
    for rule in RULES:
        assert rule.verdict(skipped, 0.0) == "skip"
    stored = _row("store", "store", "other_roles", 0.99)
    assert RULE["store|update -> skip"].verdict(stored, 0.9) == "skip"
    assert RULE["store|update -> skip"].verdict(stored, 0.995) == "store"
    assert RULE["update -> skip"].verdict(stored, 0.9) == "store"
    assert RULE["unexplained -> skip"].verdict(stored, 0.9) == "store"
    assert RULE["store -> update"].verdict(stored, 0.9) == "update"
    reworded = _row("skip", "update", "reworded", 0.95)
    assert RULE["reworded -> skip"].verdict(reworded, 0.9) == "skip"
    assert RULE["store -> update"].verdict(reworded, 0.9) == "update"  # unchanged


def test_effects_count_catches_wrong_skips_and_wrong_replaces() -> None:
    rows = [
        _row("skip", "store", "different", 0.95),  # a paraphrase memd stores
        _row("update", "update", "reworded", 0.97),  # a changed rule: must not be skipped
        _row("store", "store", "different", 0.96),  # another rule: must not be replaced
        _row("skip/update", "update", "reworded", 0.5),  # below any threshold swept
        _row("store/update", "store", "unrelated", 0.99),  # an update is acceptable here
    ]
    assert effect(RULE["store|update -> skip"], 0.9, rows) == {
        "changed": 4,
        "caught": 1,
        "wrong_skips": 3,
        "wrong_replaces": 0,
    }
    assert effect(RULE["store -> update"], 0.9, rows) == {
        "changed": 3,
        "caught": 1,
        "wrong_skips": 0,
        "wrong_replaces": 1,
    }
    line = frontier(RULE["unexplained -> skip"], rows)
    assert line == {"line": 0.99, "duplicates": 2, "above": 0, "max_duplicate": 0.95}
    assert frontier(RULE["update -> skip"], rows[:1])["line"] is None


def test_semantic_dedup_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if missing_extra() is not None:
        pytest.skip(f"{missing_extra()}")
    output = tmp_path / "semantic_dedup.json"
    report = semantic_dedup.run(semantic_dedup.QUICK, output=output)
    table = capsys.readouterr().out
    assert report is not None
    assert "| label | pairs | min | median | max |" in table
    for rule in RULES:
        assert f"Rule `{rule.name}`" in table
        assert set(report["sweep"][rule.name]) == {str(t) for t in semantic_dedup.THRESHOLDS}
        assert "all" in report["frontiers"][rule.name]
    assert report["pairs"] and all(-1.01 <= p["cosine"] <= 1.01 for p in report["pairs"])
    if "independent" in report["memd"]:
        assert sum(report["memd"]["independent"].values()) == 22  # one pair of each class
    assert json.loads(output.read_text())["benchmark"] == "semantic_dedup"


def test_without_the_extra_the_bench_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(semantic_dedup, "missing_extra", lambda: "onnxruntime is missing")
    assert semantic_dedup.run(semantic_dedup.QUICK) is None
    assert capsys.readouterr().out == "semantic_dedup: onnxruntime is missing; skipped\n"
