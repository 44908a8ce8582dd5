"""A tiny run of the mixed-source benchmark through real daemons, so it cannot rot: its tables
have their rows and the figures their shape; no timing is asserted. Its generated answers are
where it says they are."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bench import sources
from memd.core.sources.chunks import chunk


def test_sources_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "sources.json"
    report = sources.run(sources.QUICK, output=output)
    out = capsys.readouterr().out
    assert "| method | answer is a | R@1 | R@5 | MRR | questions |" in out
    for label in sources.METHODS.values():
        for kind in sources.KINDS:
            assert f"| {label} | {kind} |" in out
    for label in sources.WORKSPACES.values():
        assert out.count(f"| {label} |") == 2  # the speed table and the idle table
    for label in sources.RANKING_ROWS.values():
        assert f"| ranking p50, {label} |" in out
    assert "- p50 ratio: " in out

    retrieval = report["retrieval"]
    assert retrieval["questions"] == {
        "memory": sources.QUICK.memory_facts,
        "chunk": sources.QUICK.chunk_facts,
    }
    for by_kind in retrieval["methods"].values():
        for kind, figures in by_kind.items():
            assert figures["questions"] == retrieval["questions"][kind]
            for metric in sources.METRICS:
                assert 0.0 <= figures[metric] <= 1.0
    speed = report["speed"]
    for name in sources.WORKSPACES:
        found = speed["workspaces"][name]
        assert found["steady"]["n"] >= speed["questions"]
        assert found["after_idle"]["look"]["n"] == sources.QUICK.idle_rounds
        assert found["load_ms"] > 0
        assert found["mean_hits"] > 0
    assert speed["workspaces"]["memories"]["chunk_share"] == 0
    assert speed["workspaces"]["mixed"]["source_files"] == sources.QUICK.prose_files
    assert speed["chunks"] > 0
    assert speed["p50_ratio"] > 0
    assert json.loads(output.read_text())["benchmark"] == "sources"


def test_each_answer_is_where_the_generated_workspace_says() -> None:
    data = sources.retrieval_set(sources.QUICK)
    assert data == sources.retrieval_set(sources.QUICK)  # deterministic
    texts = {document.path: document.text for document in data.documents}
    entries = {
        f".memory/{category.file}": {entry.line: entry.content for entry in found}
        for category, found in data.corpus.items()
    }
    facts = sources.make_facts(
        sources.QUICK.memory_facts + sources.QUICK.chunk_facts, random.Random(sources.SEED)
    )
    assert len({(fact.subject, fact.attribute) for fact in facts}) == len(facts)
    for fact, question in zip(facts, data.questions, strict=True):
        assert question.text == fact.question
        answer = question.answer
        if answer.kind == "memory":
            assert fact.value in entries[answer.path][answer.line]
            continue
        holding = [
            part for part in chunk(texts[answer.path]) if part.start <= answer.line <= part.end
        ]
        assert len(holding) == 1
        assert fact.value in holding[0].text
        assert fact.subject in holding[0].searchable.lower()


def test_a_chunk_hit_counts_when_its_lines_hold_the_answer() -> None:
    chunk_answer = sources.Answer("chunk", "memory/a.md", 12)
    assert sources.is_answer(sources.Unit("memory/a.md", 10, 13), chunk_answer)
    assert not sources.is_answer(sources.Unit("memory/a.md", 13, 14), chunk_answer)
    assert not sources.is_answer(sources.Unit("memory/b.md", 10, 13), chunk_answer)
    memory_answer = sources.Answer("memory", ".memory/decisions.md", 7)
    assert sources.is_answer(sources.Unit(".memory/decisions.md", 7, 7), memory_answer)
    assert not sources.is_answer(sources.Unit(".memory/quirks.md", 7, 7), memory_answer)
    ranked = [sources.Unit("x.md", 1, 1), sources.Unit("memory/a.md", 12, 12)]
    assert sources.score(ranked, chunk_answer) == {"r@1": 0.0, "r@5": 1.0, "mrr": 0.5}


def test_sources_churn_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "sources-churn.json"
    report = sources.run_churn(sources.CHURN_QUICK, output=output)
    out = capsys.readouterr().out
    assert "| daemon | first query s | query p50 ms |" in out
    assert "| this tree |" in out
    found = report["daemons"]["this tree"]
    assert found["changing"]["queries"] > 0
    assert found["changing"]["appends"] > 0
    assert found["changing"]["rss_after_mb"] > 0
    assert found["tree"]["queries"] == sources.CHURN_QUICK.idle_queries
    assert found["tree"]["directories"] > 0
    assert json.loads(output.read_text())["benchmark"] == "sources-churn"
