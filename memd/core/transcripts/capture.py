"""Which words of a coding agent's session transcript `extract` looks at (issue 36: capture
when a session ends): the person's own turns, the newest first to be kept, within bounds.

Rules:
- Only the person's turns (role "user" of `memd.core.transcripts.turns_of`): never the
  assistant's prose (a rule the assistant states is not the person's), tool output, or what
  the agent's harness injected; the readers decide what is whose.
- Bounded: the shell reads at most MAX_TRANSCRIPT_BYTES, the end of the file (`window`); when
  that window starts inside the file, the bytes before its first line break are part of a line
  cut in two and are left out. Of the person's turns found, the newest MAX_TURNS are looked at
  (`left_out` counts the older ones), each cut to MAX_TURN_CHARS at a line break.
- The file is read as it is now (`final`): a last line without its line break counts if it
  parses. `end` is the offset just past the last line that parsed, so a later read from there
  (a cursor) starts on a line and never misses a line that was still being written.
- A file whose agent cannot be told (`agent` None) yields no turns, never an error.
- A read that starts past a Codex rollout's first line (a cursor, or the end window) is also
  given that line (`head`, at most MAX_HEAD_BYTES; only whole lines count): its `session_meta`
  says whether the rollout is a subagent's, whose "user" turns are the parent agent's words,
  never the person's. A Claude Code file's head is not used (its lines stand alone).
- `cwd` is the directory the session ran in, from the first of the read's turns that names one
  ("" unknown); `outside` tells whether it lies outside a workspace (unknown is not outside).
"""

from __future__ import annotations

from typing import NamedTuple

from memd.core.transcripts import Agent, detect, turns_of, within
from memd.core.transcripts.lines import complete_objects

MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
"""The most of a transcript read at once: its last 8 MiB (a long session's newest turns)."""
MAX_HEAD_BYTES = 256 * 1024
"""The most of a transcript's first line(s) read beside a later window (a Codex
`session_meta`, whose instructions can run to tens of KiB)."""
MAX_TURNS = 200
"""The most of the person's turns looked at in one call: the newest."""
MAX_TURN_CHARS = 8_000
"""The most of one turn handed to the extractor (a pasted log is cut at a line break): 200
turns of 8,000 characters of prose take the extractor about 3 s on the 2-core development VM
(the hook does not wait for it: the daemon finishes a request whose client left)."""


def window(size: int, cursor: int = 0) -> int:
    """Where to start reading a file of `size` bytes: at `cursor` (a line start an earlier read
    ended on; 0: the start), but never more than MAX_TRANSCRIPT_BYTES before the end."""
    start = cursor if 0 <= cursor <= size else 0
    return max(start, size - MAX_TRANSCRIPT_BYTES)


class PersonTurns(NamedTuple):
    """The person's turns of one read, oldest first, and what the read found."""

    agent: Agent | None
    texts: list[str]
    end: int
    """The file offset just past the last line that parsed (the read's start if none did)."""
    left_out: int
    """The person's turns older than the newest MAX_TURNS, not looked at."""
    cwd: str = ""
    """The directory the session ran in (the first turn read that names one; "" unknown)."""


def person_turns(
    data: bytes,
    *,
    start: int,
    on_line: bool,
    agent: Agent | None = None,
    head: bytes = b"",
    max_turns: int = MAX_TURNS,
) -> PersonTurns:
    """The person's turns in `data`, read from offset `start` of its file (`on_line`: `start`
    is a line's start; else the bytes up to the first line break are skipped). `agent` is whose
    transcript it is when known (a cursor's later read may hold no line that tells). `head` is
    the file's start when `data` does not begin there (see the rules: a Codex rollout's
    `session_meta` is read before `data`)."""
    skip = 0
    if not on_line:
        cut = data.find(b"\n")
        skip = len(data) if cut < 0 else cut + 1
    read = complete_objects(data[skip:], start=start + skip, final=True)
    end = read.objects[-1][0] if read.objects else start
    first = complete_objects(head, start=0).objects[:1] if head and start > 0 else []
    agent = agent or detect(read.objects) or detect(first)
    if agent is None:
        return PersonTurns(None, [], end, 0)
    objects = [*first, *read.objects] if agent == "codex" else read.objects
    said = [turn for turn in turns_of(agent, objects) if turn.role == "user"]
    cwd = next((turn.cwd for turn in said if turn.cwd), "")
    texts = [_cut(turn.text) for turn in said]
    left_out = max(0, len(texts) - max_turns)
    return PersonTurns(agent, texts[left_out:], end, left_out, cwd)


def outside(cwd: str, root: str) -> bool:
    """Whether the directory `cwd` (absolute) lies outside the workspace `root`: neither it nor
    below it (`within`). An unknown `cwd` ("") or a relative one is not outside (nothing says
    it is)."""
    return cwd.startswith("/") and not within(cwd, root)


def _cut(text: str) -> str:
    if len(text) <= MAX_TURN_CHARS:
        return text
    head = text[:MAX_TURN_CHARS]
    cut = head.rfind("\n")
    return head[:cut] if cut > 0 else head
