"""Coding agents' own session transcripts, read as conversation turns (issue 36): a defensive
JSON-lines reader (`lines`), one module per agent's format (`claude`, `codex`; a new agent's
format is one new module and one line in `turns_of`), and the chunks the "chat" source searches
(`chunks`). All pure: bytes or parsed objects in, turns and chunks out. Finding the files
(`memd.fs.transcript_files`) and following them as they grow is the shell's work."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from memd.core.transcripts import claude, codex
from memd.core.transcripts.claude import Turn

Agent = Literal["claude", "codex"]
"""An agent whose transcripts memd reads (the wire's `protocol.Agent`)."""


_CODEX_KINDS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
_CLAUDE_KINDS = ("summary", "user", "assistant", "file-history-snapshot")


def detect(objects: Iterable[tuple[int, dict[str, Any]]]) -> Agent | None:
    """Whose transcript a file's first parsed lines are (None: neither agent's), from the first
    line that tells: Codex's envelope (`{timestamp, type, payload}`) or its bare era (line 1
    `{id, timestamp, instructions}`, `{"record_type": ...}`, `{"type": "message", "role": ...}`);
    Claude Code's `sessionId`/`parentUuid`, or a `user`/`assistant`/`summary` line with a
    `message`/`summary`."""
    for _, line in objects:
        kind = line.get("type")
        if kind in _CODEX_KINDS and isinstance(line.get("payload"), dict):
            return "codex"
        if "record_type" in line or (kind is None and "instructions" in line and "id" in line):
            return "codex"
        if kind == "message" and "role" in line and "sessionId" not in line:
            return "codex"
        if "sessionId" in line or "parentUuid" in line:
            return "claude"
        if kind in _CLAUDE_KINDS and ("message" in line or "summary" in line):
            return "claude"
    return None


def within(cwd: str, root: str) -> bool:
    """Whether a session's directory `cwd` is the workspace `root` or below it, both absolute
    POSIX paths compared as text ("." and ".." resolved, no links followed) in Unicode NFC."""
    top = _parts(root)
    return _parts(cwd)[: len(top)] == top


def _parts(path: str) -> list[str]:
    """The names of an absolute POSIX path in NFC, "." and ".." resolved as text."""
    parts: list[str] = []
    for name in unicodedata.normalize("NFC", path).split("/"):
        if name == "..":
            parts = parts[:-1]
        elif name not in ("", "."):
            parts.append(name)
    return parts


def turns_of(agent: Agent, objects: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Turn]:
    """The conversation turns among one of `agent`'s transcripts' parsed lines, read as a whole
    file (a growing file read with a cursor uses `read_turns`)."""
    if agent == "claude":
        return claude.turns(objects)
    return codex.turns(objects)


Progress = codex.Progress
"""What one read of a transcript's lines carries to the next (only Codex's reader needs it:
the session and directory named once at its start, and turns held until the file's end)."""
START = codex.START


def read_turns(
    agent: Agent,
    objects: Iterable[tuple[int, dict[str, Any]]],
    progress: Progress = START,
    *,
    final: bool = False,
) -> tuple[list[Turn], Progress]:
    """The turns among the next parsed lines of a growing transcript (read after `progress`,
    `final` when they are its last), and the progress to pass to the read after them: reading
    a file in any number of appends gives the turns of one `turns_of` of it whole."""
    if agent == "claude":
        return list(claude.turns(objects)), progress
    return codex.read(objects, progress, final=final)


__all__ = [
    "START",
    "Agent",
    "Progress",
    "Turn",
    "detect",
    "read_turns",
    "turns_of",
    "within",
]
