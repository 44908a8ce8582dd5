"""The chat-source benchmark: its session files read back through the real transcript pipeline
as exactly the data's turns, its scoring counts what a chunk covers, an append read through the
byte cursor equals a full re-read, and the quick run reports every figure and verdict (figures
are not asserted, only their shape)."""

from __future__ import annotations

import datetime
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from bench import chat_source, locomo, longmemeval
from memd.core.search import ranking
from memd.core.transcripts.chunks import MAX_CHUNK_CHARS, ChatChunk

WHEN = datetime.datetime(2024, 5, 1, 9, 30, tzinfo=datetime.UTC)
SESSION = chat_source.Session(
    "s1",
    WHEN,
    (
        chat_source.Spoken("s1:0", "user", "Where did I park the car?"),
        chat_source.Spoken("s1:1", "assistant", "On level 3 of the garage."),
        chat_source.Spoken("s1:2", "user", "And the bike?"),
        chat_source.Spoken("s1:3", "assistant", "By the north door.\n\nNext to the bins."),
    ),
)


def test_a_session_file_has_the_real_shape_and_reads_back_as_the_data_turns(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    written = chat_source.write_sessions(tmp_path / "claude", workspace, [SESSION])
    (path,) = written
    lines = [json.loads(line) for line in Path(path).read_text().splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "file-history-snapshot"
    assert lines[1]["isMeta"] is True  # the local-command caveat
    assert "toolUseResult" in lines[5]  # the tool pair after the second turn
    assert all(line["cwd"] == str(workspace) for line in lines[1:])
    assert lines[1]["parentUuid"] is None
    assert [line["parentUuid"] for line in lines[2:]] == [line["uuid"] for line in lines[1:-1]]
    assert lines[2]["timestamp"].startswith("2024-05-01T09:30")
    (indexed,) = chat_source.index_workspace(workspace, tmp_path / "claude")
    assert [t.text for t in indexed.turns] == [s.text for s in SESSION.turns]
    assert [t.number for t in indexed.turns] == [1, 2, 3, 4]
    assert [(c.first, c.last) for c in indexed.chunks] == [(1, 2), (3, 4)]
    ids = chat_source.turn_ids(written, [indexed])
    assert ids[path] == ["s1:0", "s1:1", "s1:2", "s1:3", "s1"]
    ranked = chat_source.memd_rank([indexed], "where is the bike")
    assert ranked[0][1].first == 3


def test_scoring_counts_every_turn_a_chunk_covers_and_its_session() -> None:
    ids = {"a": ["t1", "t2", "t3", "A"], "b": ["u1", "u2", "B"]}
    question = chat_source.Question("q", frozenset({"t2", "u2"}), frozenset({"A", "B"}))
    ranked = [
        ("b", ChatChunk(1, 1, "", "", ())),
        ("a", ChatChunk(1, 2, "", "", ())),
    ]
    figures = chat_source.score(ranked, question, ids)
    assert figures["turn_r@5"] == 0.5  # t2 (covered by a's 1-2), not u2
    assert figures["session_r@5"] == 1.0
    assert figures["mrr"] == 0.5
    only_sessions = chat_source.Question("q", frozenset(), frozenset({"A"}))
    assert set(chat_source.score(ranked, only_sessions, ids)) == {"session_r@5", "session_r@10"}


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=2 * MAX_CHUNK_CHARS), min_size=1, max_size=6),
    st.lists(st.integers(min_value=1, max_value=2 * MAX_CHUNK_CHARS), min_size=1, max_size=4),
)
def test_an_append_read_through_the_cursor_equals_a_full_read(
    first: list[int], added: list[int]
) -> None:
    def spoken(sizes: list[int], start: int) -> tuple[chat_source.Spoken, ...]:
        return tuple(
            chat_source.Spoken(
                f"t{n}", "user" if n % 2 == 0 else "assistant", (f"word{n}. " * size)[:size]
            )
            for n, size in enumerate(sizes, start)
        )

    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / "ws").mkdir()
        session = chat_source.Session("s", WHEN, spoken(first, 0))
        (path,) = chat_source.write_sessions(root / "c", root / "ws", [session])
        indexed = chat_source.IndexedFile.read(path)
        whole = session._replace(turns=session.turns + spoken(added, len(first)))
        lines = chat_source.session_lines(whole, str(root / "ws"))
        grown_to = len(chat_source.session_lines(session, str(root / "ws")))
        with open(path, "a", encoding="utf-8") as handle:
            for line in lines[grown_to:]:
                handle.write(json.dumps(line) + "\n")
            handle.write('{"type": "user", "unfinished')  # a line still being written
        grown = indexed.grown()
        again = chat_source.IndexedFile.read(path)
        assert grown.turns == again.turns
        assert grown.chunks == again.chunks
        assert grown.cursor == again.cursor


def test_the_benchmark_runs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lme, loc = longmemeval.data_dir(), locomo.data_dir()
    if not any(lme.glob("*.json.gz")) or not any(loc.glob("*.json")):
        pytest.skip(
            "LongMemEval or LoCoMo data not found (set MEMD_LONGMEMEVAL_DIR, MEMD_LOCOMO_DIR)"
        )
    output = tmp_path / "chat_source.json"
    report = chat_source.run(lme, loc, quick=True, output=output)
    out = capsys.readouterr().out
    assert "| dataset | method | questions (turn/session) | turn R@5 |" in out
    assert set(report["retrieval"]) == {"longmemeval", "locomo"}
    for figures in report["retrieval"].values():
        assert figures["dropped_turns"] == 0
        assert ranking.B <= figures["b"]["min"] <= figures["b"]["max"] <= ranking.B_SPREAD
        for method in ("memd", "fts5", "memd_turns", "memd_short", "fts5_short"):
            for metric in chat_source.METRICS:
                assert 0.0 <= figures[method][metric] <= 1.0
        assert figures["memd"]["n_turn_r@5"] == figures["fts5"]["n_turn_r@5"] > 0
    spent = report["cost"]
    assert spent["files"] == chat_source.QUICK_MONTH[0] * chat_source.QUICK_MONTH[1]
    assert spent["turns"] == spent["files"] * chat_source.QUICK_MONTH[2]
    assert spent["append_matches_full_read"] is True
    assert len(report["targets"]) == 2 * 3 + 3
    for name, verdict in report["targets"].items():
        assert f"- {name}: {verdict['text']}" in out
    assert json.loads(output.read_text())["benchmark"] == "chat_source"
