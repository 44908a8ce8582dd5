"""`memd reflect [FILE|-]`: session review with the daemon's model (`[llm] command`).

Rules:
- The transcript is FILE, or stdin for `-` or no FILE. A file whose non-blank lines are all JSON
  objects is read as a Claude Code transcript (JSONL): the text blocks of its "user" and
  "assistant" messages, in order, each as `user: ...` or `assistant: ...`; tool calls, tool
  results and thinking are left out. Anything else is plain text, as it is.
- Only the END of a long transcript is sent (the newest MAX_TRANSCRIPT characters).
- The daemon's `reflect` asks its model and puts the proposals, each dry-run through the write
  decision, into the review inbox (`memd review` walks them). Nothing is stored here.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from memd_client import Client, protocol as p


def transcript_text(raw: str) -> str:
    """The text of a transcript (see the module rules), its end within MAX_TRANSCRIPT."""
    lines = [line for line in raw.splitlines() if line.strip()]
    records = [_record(line) for line in lines]
    if lines and all(record is not None for record in records):
        said = [_said(record) for record in records if record is not None]
        raw = "\n".join(text for text in said if text)
    raw = raw.strip()
    return raw[-p.MAX_TRANSCRIPT :]


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _said(record: dict[str, Any]) -> str:
    message = record.get("message")
    role = record.get("type")
    if not isinstance(message, dict) or role not in ("user", "assistant"):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
    else:
        texts = []
    text = " ".join(" ".join(texts).split())
    return f"{role}: {text}" if text else ""


def read_transcript(path: str | None) -> str:
    """Read FILE (or stdin for `-`/None) as a transcript (see the module rules).

    Raises:
        ValueError: the file cannot be read or holds no text; the message says what to pass.
    """
    try:
        if path in (None, "-"):
            raw = sys.stdin.read()
        else:
            with open(path, encoding="utf-8", errors="replace") as handle:
                raw = handle.read()
    except OSError as exc:
        raise ValueError(
            f"Cannot read {path} ({exc.strerror}); pass a transcript file or -."
        ) from None
    text = transcript_text(raw)
    if not text:
        raise ValueError(
            "The transcript holds no text; pass a session excerpt (plain text, or a Claude Code "
            "transcript .jsonl) as FILE or on stdin."
        )
    return text


def reflect(client: Client, path: str | None) -> p.ReflectResult:
    """Send the transcript at `path` to the daemon's `reflect`."""
    return client.reflect(read_transcript(path))


def render_reflect(result: p.ReflectResult) -> str:
    """The daemon's sentence, then each proposal's outcome on a line."""
    lines = [result.message]
    if result.proposed is not None:
        for outcome in result.proposed.outcomes:
            shown = f" {outcome.inbox_id}" if outcome.inbox_id else ""
            lines.append(f"  {outcome.action}{shown}: [{outcome.category}] {outcome.content}")
    return "\n".join(lines)
