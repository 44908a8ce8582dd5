"""Coding agents' own session transcripts, read as conversation turns (issue 36): a defensive
JSON-lines reader (`lines`), one module per agent's format (`claude`; a new agent's format is
one new module and one line in `turns_of`), and the chunks the "chat" source searches
(`chunks`). All pure: bytes or parsed objects in, turns and chunks out. Finding the files
(`memd.fs.transcript_files`) and following them as they grow is the shell's work."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

from memd.core.transcripts import claude
from memd.core.transcripts.claude import Turn

Agent = Literal["claude", "codex"]
"""An agent whose transcripts memd reads (the wire's `protocol.Agent`)."""


def detect(objects: Iterable[tuple[int, dict[str, Any]]]) -> Agent | None:
    """Whose transcript a file's first parsed lines are (None: neither agent's)."""
    for _, line in objects:
        if line.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"):
            return "codex"
        if "sessionId" in line or "parentUuid" in line or line.get("type") == "summary":
            return "claude"
    return None


def turns_of(agent: Agent, objects: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Turn]:
    """The conversation turns among one of `agent`'s transcripts' parsed lines."""
    if agent == "claude":
        return claude.turns(objects)
    raise ValueError(f"no reader for {agent} transcripts yet")


__all__ = ["Agent", "Turn", "detect", "turns_of"]
