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


def turns_of(agent: Agent, objects: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Turn]:
    """The conversation turns among one of `agent`'s transcripts' parsed lines."""
    if agent == "claude":
        return claude.turns(objects)
    raise ValueError(f"no reader for {agent} transcripts yet")


__all__ = ["Agent", "Turn", "turns_of"]
