"""Codex rollouts: only the person's words and the assistant's prose become turns, in both of
the format's eras, and a growing file read with a cursor gives the turns of one whole read."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, strategies as st

from memd.core.transcripts import detect, turns_of
from memd.core.transcripts.codex import START, read, session_cwd, turns
from memd.core.transcripts.lines import complete_objects

SESSION = "0199a7b2-0000-7000-8000-00000000c0de"
STAMP = "2026-11-20T10:00:0{}.000Z"
AGENTS_MD = (
    "# AGENTS.md instructions for /home/dev/shop\n\n<INSTRUCTIONS>\nUse tabs.\n</INSTRUCTIONS>"
)
ENVIRONMENT = (
    "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n  <shell>bash</shell>\n"
    "</environment_context>"
)


def envelope(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    return {"timestamp": STAMP.format(second), "type": kind, "payload": payload}


def message(role: str, *texts: str, kind: str = "") -> dict[str, Any]:
    item = kind or ("output_text" if role == "assistant" else "input_text")
    return {
        "type": "message",
        "role": role,
        "content": [{"type": item, "text": text} for text in texts],
    }


def session_meta(cwd: str = "/home/dev/shop") -> dict[str, Any]:
    return envelope(
        "session_meta",
        {
            "id": SESSION,
            "timestamp": STAMP.format(0),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.63.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent."},
            "git": {"commit_hash": "abc123", "branch": "main"},
        },
    )


def event_era() -> list[dict[str, Any]]:
    """A current rollout: every message twice (response item and event), context injected."""
    return [
        session_meta(),
        envelope("response_item", message("developer", "<permissions instructions>...")),
        envelope("response_item", message("user", AGENTS_MD)),
        envelope("response_item", message("user", ENVIRONMENT)),
        envelope("response_item", message("user", "Retries for the payment client stay at 3."), 1),
        envelope(
            "event_msg",
            {
                "type": "user_message",
                "message": "Retries for the payment client stay at 3.",
                "images": [],
            },
            1,
        ),
        envelope("turn_context", {"cwd": "/home/dev/shop", "model": "gpt-5-codex"}, 1),
        envelope("event_msg", {"type": "token_count", "info": None}, 2),
        envelope("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"}),
        envelope("event_msg", {"type": "agent_reasoning", "text": "thinking about retries"}, 2),
        envelope(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command": ["ls"]}',
                "call_id": "c1",
            },
        ),
        envelope(
            "response_item", {"type": "function_call_output", "call_id": "c1", "output": "src\n"}
        ),
        envelope("event_msg", {"type": "agent_message", "message": "Set to 3 in client.py."}, 3),
        envelope("response_item", message("assistant", "Set to 3 in client.py."), 3),
        envelope("turn_context", {"cwd": "/home/dev/shop/api", "model": "gpt-5-codex"}, 4),
        envelope("response_item", message("user", "<turn_aborted>interrupted</turn_aborted>")),
        envelope("event_msg", {"type": "user_message", "message": "Now the API timeouts."}, 4),
        envelope("compacted", {"message": "Summary of the conversation so far."}, 5),
        envelope("world_state", {"anything": True}, 5),
        envelope("event_msg", {"type": "agent_message", "message": "Timeouts are 30 s."}, 6),
    ]


def old_envelope() -> list[dict[str, Any]]:
    """An envelope rollout from a writer that kept no message events."""
    return [
        envelope("session_meta", {"id": SESSION, "timestamp": STAMP.format(0)}),
        envelope("response_item", message("user", ENVIRONMENT)),
        envelope("response_item", message("developer", "system prompt")),
        envelope("response_item", message("user", AGENTS_MD, "Never log card numbers."), 1),
        envelope(
            "response_item",
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]},
        ),
        envelope("response_item", message("assistant", "Understood: no card numbers."), 2),
        envelope("event_msg", {"type": "token_count", "info": None}, 2),
    ]


def bare_era() -> list[dict[str, Any]]:
    """A rollout from before the envelope (2025): no times, state markers between messages."""
    return [
        {
            "id": SESSION,
            "timestamp": STAMP.format(0),
            "instructions": None,
            "git": {"branch": "main"},
        },
        {"record_type": "state"},
        message("user", "<user_instructions>be terse</user_instructions>"),
        message("user", ENVIRONMENT),
        message("user", "Use the staging database for the demo."),
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "local_shell_call", "call_id": "c1", "status": "completed"},
        message("assistant", "Pointed the demo at staging."),
        {"record_type": "state"},
    ]


def encoded(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(item).encode() + b"\n" for item in lines)


def said(data: bytes) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in turns(complete_objects(data, final=True).objects)]


def test_a_current_rollout_reads_as_the_persons_words_and_the_assistants_prose() -> None:
    data = encoded(event_era())
    found = list(turns(complete_objects(data).objects))
    assert [(t.role, t.text) for t in found] == [
        ("user", "Retries for the payment client stay at 3."),
        ("assistant", "Set to 3 in client.py."),
        ("user", "Now the API timeouts."),
        ("assistant", "Timeouts are 30 s."),
    ]
    assert {t.session for t in found} == {SESSION}
    assert [t.timestamp for t in found] == [STAMP.format(n) for n in (1, 3, 4, 6)]
    assert [t.cwd for t in found] == ["/home/dev/shop"] * 2 + ["/home/dev/shop/api"] * 2


def test_injected_context_sent_as_a_user_message_event_is_not_the_persons() -> None:
    lines = [
        session_meta(),
        envelope(
            "event_msg",
            {"type": "user_message", "message": ENVIRONMENT, "kind": "environment_context"},
        ),
        envelope("event_msg", {"type": "user_message", "message": "<user_instructions>x"}),
        envelope("event_msg", {"type": "user_message", "message": "Ship it.", "kind": "plain"}),
    ]
    assert said(encoded(lines)) == [("user", "Ship it.")]


def test_a_rollout_without_message_events_falls_back_to_its_messages() -> None:
    found = list(turns(complete_objects(encoded(old_envelope())).objects))
    assert [(t.role, t.text) for t in found] == [
        ("user", "Never log card numbers."),
        ("assistant", "Understood: no card numbers."),
    ]
    assert {(t.session, t.cwd) for t in found} == {(SESSION, "/home/dev/shop")}


def test_the_bare_era_reads_without_times() -> None:
    found = list(turns(complete_objects(encoded(bare_era())).objects))
    assert [(t.role, t.text, t.timestamp) for t in found] == [
        ("user", "Use the staging database for the demo.", ""),
        ("assistant", "Pointed the demo at staging.", ""),
    ]
    assert {(t.session, t.cwd) for t in found} == {(SESSION, "/home/dev/shop")}


def test_broken_huge_and_unknown_lines_are_skipped_and_the_rest_read() -> None:
    lines = event_era()
    data = (
        encoded(lines[:6])
        + b'{"timestamp": "x", "type": "event_msg", "payload": {"type": "user_m\n'
        + json.dumps(
            envelope("event_msg", {"type": "user_message", "message": "y" * 3000})
        ).encode()
        + b"\n"
        + b"[1, 2, 3]\n"
        + json.dumps({"timestamp": "t", "type": "event_msg", "payload": "not an object"}).encode()
        + b"\n"
        + json.dumps({"type": "event_msg", "payload": {"type": "user_message"}}).encode()
        + b"\n"
        + encoded(lines[6:])
    )
    read_ = complete_objects(data, max_line_bytes=2000)
    assert read_.skipped == 3
    assert [text for _, text in said_objects(read_.objects)] == [
        "Retries for the payment client stay at 3.",
        "Set to 3 in client.py.",
        "Now the API timeouts.",
        "Timeouts are 30 s.",
    ]


def said_objects(objects: list[tuple[int, dict[str, Any]]]) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in turns(objects)]


def read_as_it_grows(data: bytes, ends: list[int]) -> list[tuple[str, str, int]]:
    """Read `data` as a file that had only `data[:end]` at each successive read."""
    progress, consumed = START, 0
    found: list[tuple[str, str, int]] = []
    for end in [*sorted(ends), len(data)]:
        final = end == len(data)
        piece = complete_objects(data[consumed:end], start=consumed, final=final)
        got, progress = read(piece.objects, progress, final=final)
        found += [(t.role, t.text, t.offset) for t in got]
        consumed += piece.consumed
    return found


def whole(data: bytes) -> list[tuple[str, str, int]]:
    return [(t.role, t.text, t.offset) for t in turns(complete_objects(data, final=True).objects)]


def test_a_growing_file_read_with_a_cursor_loses_and_doubles_nothing() -> None:
    data = encoded(event_era())
    half_line = data.index(b"Now the API") + 3  # the cursor stops inside a half-written line
    found = read_as_it_grows(data, [data.index(b"user_message"), half_line])
    assert found == whole(data)
    assert len(found) == 4


def test_a_message_held_for_an_event_that_came_later_is_not_doubled() -> None:
    data = encoded(event_era())
    before_event = data.index(b'"type": "event_msg", "payload": {"type": "user_message"')
    first = complete_objects(data[:before_event])
    got, progress = read(first.objects)
    assert got == [] and [t.text for t in progress.held] == [
        "Retries for the payment client stay at 3."
    ]
    rest = complete_objects(data[first.consumed :], start=first.consumed, final=True)
    assert next(t.text for t in read(rest.objects, progress, final=True)[0]) == (
        "Retries for the payment client stay at 3."
    )


rollouts = st.sampled_from([event_era(), old_envelope(), bare_era()])


@given(rollouts, st.lists(st.integers(0, 10_000), max_size=6))
def test_any_split_into_appends_reads_as_the_whole_file(
    lines: list[dict[str, Any]], cuts: list[int]
) -> None:
    data = encoded(lines)
    ends = [cut % (len(data) + 1) for cut in cuts]
    assert read_as_it_grows(data, ends) == whole(data)


def test_each_agents_files_are_told_apart_in_every_era() -> None:
    def first_lines(lines: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
        return complete_objects(encoded(lines)).objects

    assert detect(first_lines(event_era())) == "codex"
    assert detect(first_lines(bare_era())) == "codex"
    assert detect(first_lines([{"record_type": "state"}])) == "codex"
    assert detect(first_lines(bare_era()[2:])) == "codex"
    claude_line = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": SESSION,
        "cwd": "/home/dev/shop",
        "message": {"role": "user", "content": "hi"},
    }
    assert (
        detect(first_lines([{"type": "file-history-snapshot", "snapshot": {}}, claude_line]))
        == "claude"
    )
    assert detect(first_lines([{"type": "summary", "summary": "s", "leafUuid": "x"}])) == "claude"
    assert detect(first_lines([{"hello": "world"}, {"type": "other"}])) is None
    assert [t.text for t in turns_of("codex", first_lines(bare_era()))][-1] == (
        "Pointed the demo at staging."
    )


def test_the_sessions_starting_directory_is_read_from_its_head() -> None:
    assert session_cwd(complete_objects(encoded(event_era())).objects) == "/home/dev/shop"
    assert session_cwd(complete_objects(encoded(bare_era())).objects) == "/home/dev/shop"
    assert session_cwd(complete_objects(encoded(bare_era()[:2])).objects) is None


def test_a_subagents_rollout_has_no_turns() -> None:
    meta = session_meta()
    meta["payload"]["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": SESSION}}}
    lines = [meta, *event_era()[1:]]
    assert said(encoded(lines)) == []
    assert said(encoded(event_era())) != []
