"""Codex CLI's session rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) as turns:
what the person typed and the assistant's prose, nothing else.

Rules (the vendor's `RolloutLine`/`RolloutItem` types and what readers observed):
- Envelope era (every line `{timestamp, type, payload}`): the person's words are
  `event_msg`/`user_message`.`message` (not one whose `kind` says it is injected context), the
  assistant's are `event_msg`/`agent_message`.`message`; a turn's time is its line's `timestamp`.
- The same words are also in `response_item` messages, mixed with injected context, so those
  count only for a file that has no `user_message`/`agent_message` event at all (old writers):
  `role` user or assistant, `input_text`/`output_text` items, an item that opens like injected
  context (`INJECTED_OPENERS`: AGENTS.md, environment, user instructions, aborted turns) left
  out; never `developer` messages, reasoning, tool calls or their output. Which case a file is
  can only be known at its end, so until a read is `final` such turns are held in `Progress`
  (a growing file that later shows an event drops them: no turn is ever doubled).
- Bare era (no envelope; line 1 `{id, timestamp, instructions}`, then bare `{"type": "message"}`
  lines): the same message rules; `{"record_type": "state"}` and unknown kinds are skipped.
  These lines carry no time: their turns' `timestamp` is "".
- `session` is `session_meta.payload.id` (bare era: line 1's `id`); `cwd` is
  `session_meta.payload.cwd`, then each `turn_context.payload.cwd` from that turn on (old files
  without either: the `<cwd>` of the first `<environment_context>` message).
- A subagent's rollout (`session_meta.payload.source` names `subagent`) has no turns: its
  "user" is the parent agent, not the person. `compacted` summaries are the model's, not a
  turn. Every field is optional; nothing raises.
- Reading a growing file with a cursor: pass the `Progress` a read returns to the next read of
  the lines after it; the turns are the same as one read of the whole file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal, NamedTuple

from memd.core.transcripts.claude import Turn

INJECTED_OPENERS = re.compile(
    r"^\s*(?:# AGENTS\.md instructions for|<environment_context>|<user_instructions>"
    r"|<turn_aborted>|<recommended_plugins>|<skill>|<permissions instructions>"
    r"|<user_shell_command>|<INSTRUCTIONS>)"
)
"""Text in a user message that Codex put there, not the person."""

Role = Literal["user", "assistant"]

_ENVELOPE_KINDS = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CWD_TAG = re.compile(r"<cwd>\s*([^<\n]+?)\s*</cwd>")


class Progress(NamedTuple):
    """What a read of a rollout's lines carries to the read of the lines after them."""

    session: str = ""
    cwd: str = ""
    events: bool = False
    """A `user_message`/`agent_message` event was seen: events are the file's conversation."""
    held: tuple[Turn, ...] = ()
    """`response_item` turns waiting for the file's end (no event seen yet)."""
    subagent: bool = False
    """The file is a subagent's: none of its lines is a turn."""
    released: bool = False
    """A `final` read gave the held turns of a file without events: its messages are its
    conversation from then on (given at once; a later event is not a turn), so a file read as
    complete that grows again never doubles a turn."""


START = Progress()


def read(
    objects: Iterable[tuple[int, dict[str, Any]]],
    progress: Progress = START,
    *,
    final: bool = False,
) -> tuple[list[Turn], Progress]:
    """The turns among these parsed lines of a rollout (`lines.complete_objects`), read after
    `progress`; `final`: these are the file's last lines (held turns are given then)."""
    reading = _Reading(progress)
    found = [turn for offset, line in objects if (turn := reading.take(offset, line))]
    if final and not reading.events:
        found.extend(reading.held)
        reading.held = []
        reading.released = True
    return found, reading.progress()


class _Reading:
    """The state of one `read`: the session, cwd, events seen and held turns so far."""

    def __init__(self, progress: Progress) -> None:
        self.session, self.cwd, self.events = progress.session, progress.cwd, progress.events
        self.held = list(progress.held)
        self.subagent = progress.subagent
        self.released = progress.released

    def progress(self) -> Progress:
        held = tuple(self.held)
        return Progress(self.session, self.cwd, self.events, held, self.subagent, self.released)

    def take(self, offset: int, line: dict[str, Any]) -> Turn | None:
        """The turn this line is, if any (envelope or bare era), noting what it tells."""
        kind = line.get("type")
        payload = line.get("payload")
        if kind in _ENVELOPE_KINDS and isinstance(payload, dict):
            if kind == "session_meta":
                source = payload.get("source")
                self.subagent = isinstance(source, dict) and "subagent" in source
            if self.subagent:
                return None
            return self._envelope(kind, payload, _string(line.get("timestamp")), offset)
        if kind is None and "instructions" in line and "id" in line:
            self.session = self.session or _string(line.get("id"))
            return None
        said = _message_turn(line)
        if said is None:
            return None
        self.cwd = self.cwd or _environment_cwd(line)
        return Turn(said[0], said[1], "", self.session, self.cwd, offset) if said[1] else None

    def _envelope(self, kind: str, payload: dict[str, Any], stamp: str, offset: int) -> Turn | None:
        if kind == "session_meta":
            self.session = _string(payload.get("id")) or self.session
            self.cwd = _string(payload.get("cwd")) or self.cwd
        elif kind == "turn_context":
            self.cwd = _string(payload.get("cwd")) or self.cwd
        elif kind == "event_msg" and not self.released:
            said = _event_turn(payload)
            if said is not None:
                self.events, self.held = True, []
                if said[1]:
                    return Turn(said[0], said[1], stamp, self.session, self.cwd, offset)
        elif kind == "response_item" and not self.events:
            said = _message_turn(payload)
            if said is not None:
                self.cwd = self.cwd or _environment_cwd(payload)
                if said[1]:
                    turn = Turn(said[0], said[1], stamp, self.session, self.cwd, offset)
                    if self.released:
                        return turn
                    self.held.append(turn)
        return None


def turns(objects: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Turn]:
    """The turns of a whole rollout's parsed lines (one final `read`)."""
    return iter(read(objects, final=True)[0])


def session_cwd(objects: Iterable[tuple[int, dict[str, Any]]]) -> str | None:
    """The directory a rollout's session started in, from its first lines: `session_meta`'s
    `cwd`, else the first `<environment_context>`'s `<cwd>` (None: not among these lines)."""
    for _, line in objects:
        payload = line.get("payload")
        if line.get("type") == "session_meta" and isinstance(payload, dict):
            cwd = _string(payload.get("cwd"))
            if cwd:
                return cwd
            continue
        message = payload if isinstance(payload, dict) else line
        if message.get("type") == "message" and message.get("role") == "user":
            cwd = _environment_cwd(message)
            if cwd:
                return cwd
    return None


def _event_turn(payload: dict[str, Any]) -> tuple[Role, str] | None:
    """(role, text) of a `user_message`/`agent_message` event; None for any other event."""
    kind = payload.get("type")
    if kind not in ("user_message", "agent_message"):
        return None
    text = _string(payload.get("message")).strip()
    if kind == "agent_message":
        return ("assistant", text)
    if payload.get("kind") not in (None, "plain") or INJECTED_OPENERS.match(text):
        return ("user", "")
    return ("user", text)


def _message_turn(message: dict[str, Any]) -> tuple[Role, str] | None:
    """(role, text) of a user or assistant `message` item (text "" when all of it is injected
    context or not text); None when it is no such message."""
    role = message.get("role")
    if message.get("type") != "message" or role not in ("user", "assistant"):
        return None
    content = message.get("content")
    items = content if isinstance(content, list) else []
    wanted = ("input_text", "text") if role == "user" else ("output_text", "text")
    parts = [
        item["text"].strip()
        for item in items
        if isinstance(item, dict)
        and item.get("type") in wanted
        and isinstance(item.get("text"), str)
    ]
    if role == "user":
        parts = [part for part in parts if not INJECTED_OPENERS.match(part)]
    said: Role = "user" if role == "user" else "assistant"
    return (said, "\n".join(part for part in parts if part))


def _environment_cwd(message: dict[str, Any]) -> str:
    if message.get("role") != "user" or not isinstance(message.get("content"), list):
        return ""
    for item in message["content"]:
        text = item.get("text") if isinstance(item, dict) else None
        if isinstance(text, str) and "<environment_context>" in text:
            match = _CWD_TAG.search(text)
            if match:
                return match.group(1)
    return ""


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
