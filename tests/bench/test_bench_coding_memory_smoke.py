"""The coding-memory recall benchmark runs on one project through a real daemon (figures are
not asserted, only their shape), and its scoring counts an answer of the asking project only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import coding_memory


def test_coding_memory_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = coding_memory.data_dir()
    if not (directory / "queries.jsonl").is_file():
        pytest.skip(f"coding-memory data not found at {directory} (set MEMD_CODING_MEMORY_DIR)")
    output = tmp_path / "coding_memory.json"
    report = coding_memory.run(directory, max_projects=1, pooled=False, output=output)
    table = capsys.readouterr().out
    assert "| method | kind | R@1 | R@5 | MRR | questions |" in table
    assert set(coding_memory.LEXICAL) <= set(report["per_project"])  # hybrid too, with the extra
    for method in report["per_project"]:
        for kind in ("lexical", "paraphrase"):
            figures = report["per_project"][method][kind]
            assert figures["questions"] > 0
            assert all(0.0 <= figures[m] <= 1.0 for m in coding_memory.METRICS)
    assert json.loads(output.read_text())["benchmark"] == "coding_memory"


def test_an_answer_counts_only_for_its_own_project() -> None:
    answers = {("a", "run-tests")}
    assert coding_memory.score([("b", "run-tests"), ("a", "run-tests")], answers) == {
        "r@1": 0.0,
        "r@5": 1.0,
        "mrr": 0.5,
    }
    assert coding_memory.score([("b", "x")] * 10 + [("a", "run-tests")], answers)["mrr"] == 0.0
