"""How far captures read each transcript: bounded, never backwards, and a file that is not a
readable regular file refused with one sentence."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd.server.methods.capture import Cursor, Cursors, read_transcript
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


@pytest.mark.parametrize(
    ("name", "why"),
    [("missing.jsonl", "does not exist"), ("fifo", "not a regular file"), ("dir", "regular")],
)
def test_what_is_not_a_readable_file_is_refused(tmp_path: Path, name: str, why: str) -> None:
    os.mkfifo(tmp_path / "fifo")  # opening it must not wait for a writer
    (tmp_path / "dir").mkdir()
    with pytest.raises(InvalidParams, match=why):
        read_transcript(str(tmp_path / name), None)
