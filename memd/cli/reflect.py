"""`memd reflect [FILE|-]`: session review with the daemon's model (`[llm] command`).

Rules:
- The transcript is FILE, or stdin for `-` or no FILE. A file whose first non-blank line is a
  JSON object and whose lines `memd.core.transcripts.detect` knows as a Claude Code or Codex
  transcript is read as that agent's turns (`turns_of`): only what the person typed and the
  assistant's prose, in order, each as `user: ...` or `assistant: ...`; tool calls and results,
  thinking, slash-command records, injected context and subagents' turns are left out, and a
  broken line is skipped. Anything else is plain text, as it is.
- Every secret value in it is masked (`memd.core.transcripts.chunks.masked`) before it is sent:
  the model never sees one, whatever `[llm] command` is.
- Only the END of a long transcript is sent (the newest MAX_TRANSCRIPT characters).
- The daemon's `reflect` asks its model and puts the proposals, each dry-run through the write
  decision, into the review inbox (`memd review` walks them). Nothing is stored here.
"""

from __future__ import annotations

import sys

from memd.core.transcripts import detect, turns_of
from memd.core.transcripts.chunks import masked
from memd.core.transcripts.lines import complete_objects
from memd_client import Client, protocol as p


def transcript_text(raw: str) -> str:
    """The text of a transcript (see the module rules), its end within MAX_TRANSCRIPT."""
    said = _turns_said(raw)
    if said is not None:
        raw = said
    return masked(raw.strip()[-2 * p.MAX_TRANSCRIPT :])[-p.MAX_TRANSCRIPT :]


def _turns_said(raw: str) -> str | None:
    """An agent transcript's turns as `role: words` lines; None when `raw` is not one."""
    first = next((line for line in raw.splitlines() if line.strip()), "")
    if not first.lstrip().startswith("{"):
        return None
    objects = complete_objects(raw.encode("utf-8", "replace"), final=True).objects
    agent = detect(objects)
    if agent is None:
        return None
    return "\n".join(
        f"{turn.role}: {' '.join(turn.text.split())}" for turn in turns_of(agent, objects)
    )


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
            "or Codex transcript .jsonl) as FILE or on stdin."
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
