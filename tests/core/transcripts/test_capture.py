"""The person's turns of a transcript for `extract`: only theirs, bounded, and a cursor that
reads each line once however the file grew between reads."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, strategies as st

from memd.core.transcripts import capture
from memd.core.transcripts.capture import MAX_TRANSCRIPT_BYTES, person_turns, window

SESSION = "0a1b2c3d-0000-4000-8000-000000000002"


def line(role: str, text: str, **extra: Any) -> bytes:
    content = text if role == "user" else [{"type": "text", "text": text}]
    data = {
        "type": role,
        "uuid": f"u-{text[:8]}",
        "sessionId": SESSION,
        "cwd": "/home/dev/project",
        "message": {"role": role, "content": content},
        **extra,
    }
    return json.dumps(data).encode() + b"\n"


def test_only_the_persons_words_are_kept() -> None:
    data = b"".join(
        [
            json.dumps({"type": "file-history-snapshot", "snapshot": {}}).encode() + b"\n",
            line("user", "Never force-push to main."),
            line("assistant", "You must always rebase first."),
            line("user", "Sure, and a summary.", isCompactSummary=True),
            line("user", "<command-name>/clear</command-name>"),
            line("user", "Use ruff, not flake8."),
        ]
    )
    found = person_turns(data, start=0, on_line=True)
    assert found.agent == "claude"
    assert found.texts == ["Never force-push to main.", "Use ruff, not flake8."]
    assert (found.end, found.left_out) == (len(data), 0)


def test_a_window_inside_the_file_skips_the_line_it_cut() -> None:
    first, second = line("user", "Cut in two."), line("user", "Whole line.")
    data = first + second
    found = person_turns(data[5:], start=5, on_line=False)
    assert found.texts == ["Whole line."]
    assert found.end == len(data)


def test_only_the_newest_turns_are_looked_at() -> None:
    data = b"".join(line("user", f"Turn number {n}.") for n in range(7))
    found = person_turns(data, start=0, on_line=True, max_turns=3)
    assert found.texts == ["Turn number 4.", "Turn number 5.", "Turn number 6."]
    assert found.left_out == 4


def test_a_long_turn_is_cut_at_a_line_break() -> None:
    long = "Always run the tests.\n" + "x" * capture.MAX_TURN_CHARS
    found = person_turns(line("user", long), start=0, on_line=True)
    assert found.texts == ["Always run the tests."]


def test_a_file_of_no_agent_gives_nothing() -> None:
    found = person_turns(b'{"hello": "world"}\nnot json\n', start=0, on_line=True)
    assert (found.agent, found.texts) == (None, [])


def test_the_window_is_the_end_of_a_big_file_or_the_cursor() -> None:
    assert window(100) == 0
    assert window(100, 40) == 40
    assert window(100, 400) == 0  # a cursor past the end: the file shrank, read it again
    big = MAX_TRANSCRIPT_BYTES * 3
    assert window(big, 10) == big - MAX_TRANSCRIPT_BYTES


SAID = st.lists(
    st.text(alphabet="abcdefgh .", min_size=1, max_size=30).map(lambda t: f"Said {t}."),
    min_size=1,
    max_size=8,
)


@given(SAID, st.lists(st.integers(min_value=0, max_value=10_000), max_size=4))
def test_reads_from_the_cursor_see_every_turn_once(said: list[str], cuts: list[int]) -> None:
    """However the file was written when each read came (cut anywhere, even inside a line),
    the reads from each cursor together see each of the person's turns once, in order."""
    data = b"".join(line("user", text) + line("assistant", "Noted.") for text in said)
    seen: list[str] = []
    end, agent = 0, None
    for size in [*sorted(min(cut, len(data)) for cut in cuts), len(data)]:
        start = window(size, end)
        found = person_turns(data[start:size], start=start, on_line=True, agent=agent)
        seen += found.texts
        end, agent = found.end, found.agent or agent
    assert seen == [text.strip() for text in said]


def test_a_codex_rollout_gives_the_persons_words_only() -> None:
    from tests.core.transcripts.test_codex import encoded, event_era

    data = encoded(event_era())
    found = person_turns(data, start=0, on_line=True)
    assert found.agent == "codex"
    assert found.texts == ["Retries for the payment client stay at 3.", "Now the API timeouts."]
    later = person_turns(data[len(data) // 2 :], start=len(data) // 2, on_line=False)
    assert later.agent == "codex" and later.texts[-1] == "Now the API timeouts."


def _codex(kind: str, payload: dict[str, Any]) -> bytes:
    stamp = "2026-11-20T10:00:00.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}).encode() + b"\n"


def _rollout(source: Any) -> bytes:
    meta = {"id": "s1", "cwd": "/work/app", "source": source, "instructions": "x" * 5000}
    turns = [
        _codex("event_msg", {"type": "user_message", "message": f"Never touch module {n}."})
        for n in range(20)
    ]
    return _codex("session_meta", meta) + b"".join(turns)


def test_a_later_read_of_a_subagent_rollout_sees_its_session_meta() -> None:
    data = _rollout({"subagent": "review"})
    middle = len(data) - 200
    blind = person_turns(data[middle:], start=middle, on_line=False)
    assert blind.texts  # without the head, the parent agent's words look like the person's
    found = person_turns(data[middle:], start=middle, on_line=False, head=data[:65536])
    assert (found.agent, found.texts) == ("codex", [])


def test_a_later_read_of_a_persons_rollout_keeps_its_turns_and_cwd() -> None:
    data = _rollout("cli")
    middle = len(data) - 200
    found = person_turns(data[middle:], start=middle, on_line=False, head=data[:65536])
    assert found.texts and found.texts[-1] == "Never touch module 19."
    assert found.cwd == "/work/app"
    assert found.end == len(data)


def test_a_claude_files_head_is_not_read_as_a_turn() -> None:
    first, second = line("user", "Use uv."), line("user", "Use ruff.")
    found = person_turns(second, start=len(first), on_line=True, head=first)
    assert found.texts == ["Use ruff."]


@given(st.sampled_from(["/work/app", "/work/app/", "/work/app/src", "/work/app/./src/.."]))
def test_a_directory_at_or_below_the_root_is_inside(cwd: str) -> None:
    assert not capture.outside(cwd, "/work/app")


@given(st.sampled_from(["/work/apple", "/work", "/other/app", "/work/app/../x"]))
def test_a_directory_elsewhere_is_outside(cwd: str) -> None:
    assert capture.outside(cwd, "/work/app")


def test_an_unknown_directory_is_not_outside() -> None:
    assert not capture.outside("", "/work/app") and not capture.outside("rel", "/work/app")
