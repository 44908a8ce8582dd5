"""How far captures read each transcript: bounded, never backwards, and a file that is not a
readable regular file refused with one sentence."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from memd.server.methods.capture import Cursor, Cursors, read_transcript, summary
from memd_client.errors import InvalidParams


def test_the_least_recently_used_cursor_goes_first() -> None:
    cursors = Cursors(limit=2)
    for name in ("a", "b"):
        cursors.set(name, Cursor((1, 1), 10, "claude"))
    assert cursors.get("a") is not None  # "a" used: "b" is now the oldest
    cursors.set("c", Cursor((1, 2), 5, "claude"))
    assert (cursors.get("a"), cursors.get("b")) == (Cursor((1, 1), 10, "claude"), None)


def test_a_cursor_never_goes_back_for_the_same_file() -> None:
    cursors = Cursors()
    cursors.set("a", Cursor((1, 1), 50, "claude"))
    cursors.set("a", Cursor((1, 1), 20, "claude"))  # a capture that read less, finished later
    assert cursors.get("a") == Cursor((1, 1), 50, "claude")
    cursors.set("a", Cursor((1, 9), 20, "claude"))  # another file at that path
    assert cursors.get("a") == Cursor((1, 9), 20, "claude")


def test_a_replaced_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    said = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "Use uv."}}
    path.write_text(json.dumps(said) + "\n")
    first = read_transcript(str(path), None)
    assert first.turns.texts == ["Use uv."] and not first.already_read
    assert read_transcript(str(path), first.cursor).turns.texts == []
    os.replace(tmp_path / "session.jsonl", tmp_path / "old.jsonl")
    path.write_text(json.dumps(said) + "\n")  # a new file (inode) at the same path
    again = read_transcript(str(path), first.cursor)
    assert again.turns.texts == ["Use uv."] and not again.already_read


def test_a_file_cut_shorter_in_place_keeps_its_new_cursor_and_loses_no_later_turn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "session.jsonl"

    def said(text: str) -> str:
        line = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": text}}
        return json.dumps(line) + "\n"

    cursors = Cursors()
    path.write_text(said("Use uv for every install.") + said("Prefer pytest fixtures."))
    first = read_transcript(str(path), None)
    cursors.set(str(path), first.cursor, from_kept=first.already_read)
    path.write_text(said("Use ruff."))  # cut shorter in place (same inode)
    cut = read_transcript(str(path), cursors.get(str(path)))
    assert cut.turns.texts == ["Use ruff."] and not cut.already_read
    cursors.set(str(path), cut.cursor, from_kept=cut.already_read)
    with path.open("a") as handle:
        handle.write(said("Never commit .env files.") + said("Run the linter first."))
    later = read_transcript(str(path), cursors.get(str(path)))
    assert later.turns.texts == ["Never commit .env files.", "Run the linter first."]


@pytest.mark.parametrize(
    ("name", "why"),
    [("missing.jsonl", "does not exist"), ("fifo", "not a regular file"), ("dir", "regular")],
)
def test_what_is_not_a_readable_file_is_refused(tmp_path: Path, name: str, why: str) -> None:
    os.mkfifo(tmp_path / "fifo")  # opening it must not wait for a writer
    (tmp_path / "dir").mkdir()
    with pytest.raises(InvalidParams, match=why):
        read_transcript(str(tmp_path / name), None)


def _codex(kind: str, payload: Mapping[str, object]) -> str:
    stamp = "2026-11-20T10:00:00.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"


def test_a_subagent_rollout_read_from_a_cursor_is_still_a_subagents(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    meta = {"id": "s1", "cwd": str(tmp_path), "source": {"subagent": "review"}}
    said = {"type": "user_message", "message": "Never push to main."}
    path.write_text(_codex("session_meta", meta) + _codex("event_msg", said))
    first = read_transcript(str(path), None)
    assert (first.turns.agent, first.turns.texts) == ("codex", [])
    with path.open("a") as file:  # the parent agent speaks again
        file.write(_codex("event_msg", {"type": "user_message", "message": "Always use tabs."}))
    later = read_transcript(str(path), first.cursor)
    assert later.already_read and later.turns.texts == []


def test_the_summary_says_a_session_ran_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    said = {
        "type": "user",
        "sessionId": "s",
        "cwd": "/elsewhere/app",
        "message": {"role": "user", "content": "Use uv."},
    }
    path.write_text(json.dumps(said) + "\n")
    read = read_transcript(str(path), None)
    assert "ran in /elsewhere/app, not in this workspace" in summary(str(path), read, "/work/x")
    assert "nothing of it was stored or queued" in summary(
        str(path), read, "/work/x", queued_none=True
    )
    assert "ran in" not in summary(str(path), read, "/elsewhere")
