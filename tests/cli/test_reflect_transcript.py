"""`memd reflect`'s transcript reading: an agent's transcript gives only the person's words and
the assistant's prose, for Claude Code and Codex alike; anything else is sent as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memd.cli.reflect import read_transcript, transcript_text
from memd_client import protocol as p


def jsonl(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def claude(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    role = "assistant" if kind == "assistant" else "user"
    return {
        "type": kind,
        "uuid": f"u{len(str(content))}",
        "parentUuid": None,
        "sessionId": "s1",
        "cwd": "/home/dev/shop",
        "message": {"role": role, "content": content},
        **extra,
    }


def codex(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-20T10:00:00Z", "type": kind, "payload": payload}


def test_a_claude_transcript_keeps_only_the_conversation() -> None:
    raw = jsonl(
        [
            {"type": "summary", "summary": "old", "leafUuid": "x"},
            claude("user", "Keep   retries\nat three."),
            claude("user", "<command-name>/clear</command-name>"),
            claude("user", "Caveat: The messages below were generated", isMeta=True),
            claude("user", "This session is being continued", isCompactSummary=True),
            claude(
                "assistant",
                [
                    {"type": "thinking", "thinking": "private"},
                    {"type": "text", "text": "Done."},
                    {"type": "tool_use", "id": "t1", "name": "Edit", "input": {}},
                ],
            ),
            claude("assistant", [{"type": "text", "text": "subagent"}], isSidechain=True),
            claude("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        ]
    )
    assert transcript_text(raw + '{"type": "user", "broken') == (
        "user: Keep retries at three.\nassistant: Done."
    )


def test_a_codex_rollout_keeps_only_the_conversation() -> None:
    raw = jsonl(
        [
            codex("session_meta", {"id": "x1", "cwd": "/home/dev/shop"}),
            codex(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "<environment_context>"}],
                },
            ),
            codex("event_msg", {"type": "user_message", "message": "Use staging."}),
            codex("event_msg", {"type": "agent_reasoning", "text": "hmm"}),
            codex("response_item", {"type": "function_call", "name": "shell", "arguments": "{}"}),
            codex("event_msg", {"type": "agent_message", "message": "Switched to staging."}),
            codex(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Switched to staging."}],
                },
            ),
        ]
    )
    assert transcript_text(raw) == "user: Use staging.\nassistant: Switched to staging."


def test_plain_text_and_unknown_json_lines_are_sent_as_they_are() -> None:
    assert transcript_text("  user: ssh dies when idle\n") == "user: ssh dies when idle"
    other = '{"event": "deploy", "ok": true}\n'
    assert transcript_text(other) == other.strip()


def test_only_the_end_of_a_long_transcript_is_sent() -> None:
    raw = jsonl([claude("user", f"turn {n} " + "x" * 200) for n in range(p.MAX_TRANSCRIPT // 100)])
    text = transcript_text(raw)
    assert len(text) == p.MAX_TRANSCRIPT
    assert text.endswith("x" * 200)


def test_a_transcript_with_no_conversation_says_what_to_pass(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(jsonl([claude("user", "<command-name>/clear</command-name>")]))
    with pytest.raises(ValueError, match="Claude Code or Codex transcript"):
        read_transcript(str(path))


def test_a_secret_value_in_a_transcript_never_reaches_the_model() -> None:
    from memd.cli.reflect import transcript_text

    token = "ghp_" + "Ab1" * 12
    sent = transcript_text(f"We deploy with {token} for now.\nPrefer small commits.")
    assert token not in sent and "[secret]" in sent and "Prefer small commits." in sent
