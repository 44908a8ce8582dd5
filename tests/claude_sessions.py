"""Claude Code session files for tests: real shapes (user and assistant lines with uuid,
parentUuid, sessionId, cwd, timestamp; content a string or blocks), invented text."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from memd.fs.transcript_files import encode_claude


def session_path(claude_home: str | Path, workspace: str | Path, session: str) -> Path:
    """Where Claude Code keeps a session of `workspace` (its real path) under `claude_home`."""
    folder = Path(claude_home) / "projects" / encode_claude(os.path.realpath(workspace))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session}.jsonl"


class Session:
    """Lines of one session, written as Claude Code writes them."""

    def __init__(self, cwd: str | Path, session: str | None = None) -> None:
        self.cwd = os.path.realpath(cwd)
        self.session = session or str(uuid.uuid4())
        self.parent: str | None = None
        self.minute = 0

    def _base(self, kind: str) -> dict[str, Any]:
        self.minute += 1
        own = str(uuid.uuid4())
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": own,
            "timestamp": f"2026-11-20T10:{self.minute:02d}:00.000Z",
        }
        self.parent = own
        return line

    def user(self, text: str, *, blocks: bool = False) -> str:
        line = self._base("user")
        content: Any = [{"type": "text", "text": text}] if blocks else text
        line["message"] = {"role": "user", "content": content}
        return json.dumps(line) + "\n"

    def assistant(self, text: str) -> str:
        line = self._base("assistant")
        line["message"] = {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "hidden musing quokka", "signature": "x"},
                {"type": "text", "text": text},
            ],
            "stop_reason": "end_turn",
        }
        return json.dumps(line) + "\n"

    def tool_use(self, command: str) -> str:
        line = self._base("assistant")
        line["message"] = {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": command}}
            ],
        }
        return json.dumps(line) + "\n"

    def tool_result(self, output: str) -> str:
        line = self._base("user")
        line["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": output}],
        }
        line["toolUseResult"] = {"stdout": output, "stderr": ""}
        return json.dumps(line) + "\n"

    def meta(self, text: str) -> str:
        line = self._base("user")
        line["isMeta"] = True
        line["message"] = {"role": "user", "content": text}
        return json.dumps(line) + "\n"

    def command(self, name: str) -> str:
        line = self._base("user")
        line["message"] = {
            "role": "user",
            "content": f"<command-name>{name}</command-name>\n<command-message>{name}"
            "</command-message>",
        }
        return json.dumps(line) + "\n"

    def summary(self, text: str) -> str:
        return (
            json.dumps({"type": "summary", "summary": text, "leafUuid": str(uuid.uuid4())}) + "\n"
        )
