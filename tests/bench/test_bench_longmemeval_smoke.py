"""The LongMemEval benchmark runs end to end through a real daemon (figures are not asserted, only
their shape), and turns its haystacks into entries as its protocol says."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bench import locomo, longmemeval, retrieval


def _check_shape(report: dict[str, Any], questions: int) -> None:
    assert set(report["units"]) == set(longmemeval.UNITS) == {"turn", "user", "session"}
    for unit in report["units"].values():
        assert set(unit["methods"]) == set(retrieval.METHODS)
        for figures in unit["methods"].values():
            assert 0 < figures["questions"] <= questions
            for metric in locomo.METRICS:
                assert 0.0 <= figures[metric] <= 1.0


def test_longmemeval_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = longmemeval.data_dir()
    if not directory.is_dir() or not any(directory.glob("*.json.gz")):
        pytest.skip(f"LongMemEval data not found at {directory} (set MEMD_LONGMEMEVAL_DIR)")
    output = tmp_path / "longmemeval.json"
    report = longmemeval.run(directory, max_questions=longmemeval.QUICK_QUESTIONS, output=output)
    table = capsys.readouterr().out
    assert "| unit | method | R@5 | R@10 | MRR | hit@5 | questions |" in table
    for label in retrieval.METHODS.values():
        assert f"| every turn | {label} |" in table
    _check_shape(report, longmemeval.QUICK_QUESTIONS)
    assert len(json.loads(output.read_text())["questions"]) == longmemeval.QUICK_QUESTIONS


def _turn(role: str, content: str, *, answer: bool = False) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if answer:
        turn["has_answer"] = True
    return turn


def _write(directory: Path, name: str, sessions: list[list[dict[str, Any]]], **raw: Any) -> Path:
    data = {
        "question_id": name,
        "question_type": "single-session-user",
        "question": "Where did I park the car?",
        "haystack_session_ids": [f"sess_{n}" for n in range(len(sessions))],
        "haystack_sessions": sessions,
        "answer_session_ids": ["sess_1"],
        **raw,
    }
    path = directory / f"{name}.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(data, handle)
    return path


SESSIONS = [
    [_turn("user", "Any tips\nfor   bread?"), _turn("assistant", "Use a hot oven.\n\nAnd steam.")],
    [
        _turn("user", "I parked the car on level 3 of the garage.", answer=True),
        _turn("assistant", "[Noted] Level 3 of the garage it is."),
        _turn("user", "   "),
    ],
]


def test_a_haystack_becomes_three_units_of_one_line_entries(tmp_path: Path) -> None:
    haystack = longmemeval.load_haystack(_write(tmp_path, "q1", SESSIONS))
    turns = haystack.units["turn"]
    assert [entry.content for entry in turns.entries] == [
        "Any tips for bread?",
        "Use a hot oven. And steam.",
        "I parked the car on level 3 of the garage.",
        "\\[Noted] Level 3 of the garage it is.",  # would read as a slug: escaped
    ]  # the blank turn is no entry
    assert [entry.line for entry in turns.entries] == [1, 2, 3, 4]
    assert turns.ids == ("s0:t0", "s0:t1", "s1:t0", "s1:t1")
    assert turns.relevant == ("s1:t0",)
    assert haystack.units["user"].ids == ("s0:t0", "s1:t0")
    assert haystack.units["user"].relevant == ("s1:t0",)
    sessions = haystack.units["session"]
    assert sessions.ids == ("sess_0", "sess_1")
    assert sessions.relevant == ("sess_1",)
    assert sessions.entries[1].content == (
        "I parked the car on level 3 of the garage. [Noted] Level 3 of the garage it is."
    )
    _, parsed, by_line = retrieval.memory_file(haystack.name, turns.entries, turns.ids)
    assert [entry.content for entry in parsed] == [entry.content for entry in turns.entries]
    assert by_line[parsed[3].line] == "s1:t1"


def test_the_benchmark_leaves_out_abstention_and_unanswerable_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, "q1", SESSIONS)
    _write(tmp_path, "q2_abs", SESSIONS)
    assistant_only = [
        SESSIONS[0],
        [_turn("user", "Where?"), _turn("assistant", "Level 3.", answer=True)],
    ]
    _write(tmp_path, "q3", assistant_only)
    report = longmemeval.run(tmp_path)
    assert report["questions"] == ["q1", "q3"]
    assert report["abstention_left_out"] == ["q2_abs"]
    assert report["units"]["user"]["left_out"] == ["q3"]
    assert report["units"]["user"]["methods"]["memd"]["questions"] == 1
    assert "2 questions (1 abstention ones left out)" in capsys.readouterr().out
    _check_shape(report, 2)
