"""Claude Code's session transcripts (`~/.claude/projects/<encoded cwd>/<session>.jsonl`) as
turns: what the person typed and the assistant's prose, nothing else.

Rules (the format is undocumented; these follow Anthropic's own Agent SDK reader and what was
observed, see docs when this lands):
- A turn comes from a `user` or `assistant` line whose `message.content` is a string or a list
  of blocks; only `text` blocks count (never `thinking`, `tool_use`, `tool_result`, images).
- Never a turn: `isMeta`, `isSidechain` (a subagent's), a non-empty `teamName`,
  `isCompactSummary` (the model's summary of earlier turns), a user line carrying a tool result
  (`toolUseResult` or a `tool_result` block), and user text that is the harness's, not the
  person's (`HARNESS_OPENERS`: slash-command records, local command output, reminders, hooks,
  interruptions, IDE selections).
- Every field is optional; a line of any other type or shape is skipped, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal, NamedTuple

HARNESS_OPENERS = re.compile(
    r"^\s*(?:<command-name>|<command-message>|<command-args>|<local-command-stdout>"
    r"|<local-command-stderr>|<local-command-caveat>|<bash-input>|<bash-stdout>|<bash-stderr>"
    r"|<system-reminder>|<task-notification>|<session-start-hook>|<tick>|<goal>"
    r"|<ide_opened_file>|<ide_selection>|\[Request interrupted by user"
    r"|Caveat: The messages below were generated|Base directory for this skill:)"
)
"""User text that the harness wrote, not the person."""


class Turn(NamedTuple):
    """One turn of a session: who spoke, the words, when (ISO-8601 as written, "" unknown), the
    session and working directory it names ("" unknown), and the offset past its line."""

    role: Literal["user", "assistant"]
    text: str
    timestamp: str
    session: str
    cwd: str
    offset: int


def turns(objects: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Turn]:
    """The conversation turns among a transcript's parsed lines (`lines.complete_objects`)."""
    for offset, line in objects:
        role = line.get("type")
        if role not in ("user", "assistant") or _not_conversation(line):
            continue
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        text = _text(content)
        if not text or (role == "user" and HARNESS_OPENERS.match(text)):
            continue
        yield Turn(
            role,
            text,
            _string(line.get("timestamp")),
            _string(line.get("sessionId")),
            _string(line.get("cwd")),
            offset,
        )


def _not_conversation(line: dict[str, Any]) -> bool:
    if line.get("isMeta") is True or line.get("isSidechain") is True:
        return True
    if line.get("isCompactSummary") is True or line.get("teamName"):
        return True
    return line.get("type") == "user" and "toolUseResult" in line


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return ""
    parts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return "\n".join(part.strip() for part in parts if part.strip())


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
