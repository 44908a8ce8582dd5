"""The retrieval benchmark runs end to end on a small subset through a real daemon (figures are
not asserted, only their shape), and its baselines score as specified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import locomo, retrieval
from bench._daemon import semantic_installed
from memd.core.format.mdformat import Entry


def test_retrieval_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = locomo.data_dir()
    if not directory.is_dir() or not any(directory.glob("*.json")):
        pytest.skip(f"LoCoMo data not found at {directory} (set MEMD_LOCOMO_DIR)")
    output = tmp_path / "retrieval.json"
    report = retrieval.run(
        directory,
        max_conversations=retrieval.QUICK_CONVERSATIONS,
        max_questions=retrieval.QUICK_QUESTIONS,
        output=output,
    )
    table = capsys.readouterr().out
    assert "| method | R@5 | R@10 | MRR | hit@5 | questions |" in table
    for label in retrieval.METHODS.values():
        assert f"| {label} |" in table
    assert set(retrieval.METHODS) == {"memd", "hacklm", "fts5"}
    hybrid = {retrieval.HYBRID[0]} if semantic_installed() else set()
    assert set(report["methods"]) == set(retrieval.METHODS) | hybrid
    for figures in report["methods"].values():
        assert figures["questions"] == retrieval.QUICK_QUESTIONS
        for metric in locomo.METRICS:
            assert 0.0 <= figures[metric] <= 1.0
    assert json.loads(output.read_text())["questions"] == retrieval.QUICK_QUESTIONS


def _entries(*contents: str) -> list[Entry]:
    return [Entry(line=n, slug=None, content=text) for n, text in enumerate(contents, 1)]


def test_hacklm_baseline_scores_substrings_and_keeps_storage_order_on_ties() -> None:
    entries = _entries(
        "Nothing relevant here.",
        "Every call goes through the queue.",  # "all" inside "call": +10
        "The queue is for all jobs.",  # +10 three times
        "Every call goes through the queue.",  # ties with line 2, stays after it
        "Use the queue for all",  # +10 three times, and the whole query is in it: +25
    )
    ranked = [entry.line for entry in retrieval.hacklm_rank(entries, "Queue for ALL")]
    assert ranked == [5, 3, 2, 4]


def test_hacklm_keywords_measure_length_before_stripping() -> None:
    assert retrieval.hacklm_keywords("Is it UI? db... ok") == ["ui", "db"]
    assert retrieval.hacklm_keywords("a an to") == []
    entries = _entries("one", "two", "three")
    assert [e.line for e in retrieval.hacklm_rank(entries, "to be", limit=2)] == [1, 2]


def test_fts5_baseline_quotes_words_and_ranks_by_bm25() -> None:
    assert retrieval.fts5_match('NOT "this" OR café?') == '"NOT" OR "this" OR "OR" OR "café"'
    assert retrieval.fts5_match("?!") is None
    index = retrieval.Fts5Index(
        _entries("Running the deploy script.", "Nothing here.", "Deploys run nightly; deploy.")
    )
    try:
        assert index.rank("deploying runs") == [3, 1]
        assert index.rank("...") == []
    finally:
        index.close()
