"""The fusion sweep's rules rank as their docstrings say, and its quick run goes end to end
with the semantic extra's model (figures are not asserted)."""

from __future__ import annotations

import pytest

from bench import coding_memory, fusion_sweep


def test_a_strong_keyword_hit_stays_first_and_the_model_ranks_the_rest() -> None:
    lexical = {"exact": 0.9, "weak": 0.05}
    cosine = {"exact": 0.1, "weak": 0.2, "paraphrase": 0.6, "unrelated": -0.1}
    ids = list(cosine)
    assert fusion_sweep.floor_tail(0.15, 1.0, 0.0)(lexical, cosine, ids) == [
        "exact",
        "paraphrase",
        "weak",
        "unrelated",
    ]
    assert fusion_sweep.convex(0.5)(lexical, cosine, ids)[0] == "exact"


def test_fusion_sweep_runs_quick(capsys: pytest.CaptureFixture[str]) -> None:
    if not (coding_memory.data_dir() / "queries.jsonl").is_file():
        pytest.skip("coding-memory data not found (set MEMD_CODING_MEMORY_DIR)")
    fusion_sweep.main(["--quick", "--longmemeval"])
    table = capsys.readouterr().out
    for rule in fusion_sweep.RULES:
        assert f"| {rule} |" in table


def test_fusion_sweep_long_entries_runs_quick(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import locomo

    if not locomo.data_dir().is_dir():
        pytest.skip("LoCoMo data not found (set MEMD_LOCOMO_DIR)")
    fusion_sweep.main(["--quick", "--long"])
    table = capsys.readouterr().out
    assert "LoCoMo sessions:" in table
    for rule in fusion_sweep.LONG_RULES:
        assert f"| {rule} |" in table
    assert "- long entries, LoCoMo sessions: auto R@5" in table


def test_the_long_entry_target_is_met_only_when_auto_is_not_below_lexical() -> None:
    lexical, every, daemon, chunk = fusion_sweep.LONG_RULES
    figures = {"r@5": {lexical: 0.8, every: 0.7, daemon: 0.8, chunk: 0.9}}
    worse = {"r@5": {lexical: 0.8, every: 0.7, daemon: 0.79, chunk: 0.9}}
    targets = fusion_sweep.long_targets({"a": figures, "b": worse})
    assert targets["long entries, a"]["met"] and not targets["long entries, b"]["met"]
