"""The benchmarks run end to end on tiny inputs (figures are not asserted, only their shape)."""

from __future__ import annotations

import pytest

from bench import locomo, search_speed


def test_locomo_benchmark_runs_on_one_conversation() -> None:
    directory = locomo.data_dir()
    if not directory.is_dir() or not any(directory.glob("*.json")):
        pytest.skip(f"LoCoMo data not found at {directory} (set MEMD_LOCOMO_DIR)")
    figures = locomo.run(directory, max_conversations=1, max_questions=20)
    assert figures["questions"] == 20
    for metric in locomo.METRICS:
        assert 0.0 <= figures[metric] <= 1.0


def test_locomo_scoring_of_one_question() -> None:
    ranked = ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6"]
    figures = locomo.score_question(ranked, ("D1:3", "D1:6"))
    assert figures == {"r@5": 0.5, "r@10": 1.0, "mrr": pytest.approx(1 / 3), "hit@5": 1.0}
    assert locomo.score_question(ranked, ("D9:9",))["mrr"] == 0.0


def test_search_speed_benchmark_runs_small() -> None:
    figures = search_speed.run(300, 20)
    assert set(figures) >= {"build_ms", "p50_ms", "p95_ms", "max_ms", "mean_hits"}
    assert 0.0 <= figures["p50_ms"] <= figures["p95_ms"] <= figures["max_ms"]
    assert 0.0 <= figures["mean_hits"] <= search_speed.LIMIT


def test_synthetic_entries_are_deterministic() -> None:
    assert search_speed.make_entries(50) == search_speed.make_entries(50)
    assert search_speed.make_queries(10) == search_speed.make_queries(10)
