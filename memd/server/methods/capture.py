"""`extract` of a session transcript (issue 36: capture when a session ends): read the file in
a worker thread, keep the person's turns (`memd.core.transcripts.capture`), and remember per
transcript how far a capture read it.

Rules:
- `transcript` must be the absolute path of a regular file memd can read; anything else is
  InvalidParams whose one sentence says what to pass instead. Opening never blocks (a FIFO
  put in the file's place is refused, not waited on).
- At most the file's last MAX_TRANSCRIPT_BYTES are read, in one worker-thread hop; when that
  starts past the file's start, its first MAX_HEAD_BYTES too (a Codex rollout's `session_meta`
  says whether it is a subagent's, see `memd.core.transcripts.capture`).
- Only the capture hook's calls (`since_last`, with `store` or `propose`) use and move a
  cursor (`Cursors`: per file path, the file's identity and the offset past its last parsed
  line; bounded, least recently used dropped first), and only once every candidate was stored
  or queued (a store that failed is tried again by the next capture). The hook's next call on
  the same file reads only what was appended since: Claude Code's PreCompact hook fires several
  times per compaction and SessionEnd follows. A file that was replaced (another inode) or
  shrank is read again from its end window. Every other call (a person's `memd extract
  --transcript F`, with or without `--store`/`--propose`) reads the whole window every time:
  what is already stored or waiting is skipped by the write decision and the inbox, and a text
  rejected in review is not queued again (`memd.server.methods.review`), across restarts too.
- A session that ran outside the workspace (its turns' `cwd`) is still read, and the message
  says so; with `workspace_only` (the hook) nothing of it is stored or queued.
"""

from __future__ import annotations

import os
import stat
from collections import OrderedDict
from typing import NamedTuple

from memd.core.transcripts import Agent, capture as person
from memd_client.errors import InvalidParams

MAX_CURSORS = 256
"""Transcripts whose capture position the daemon remembers (least recently used dropped)."""


class Cursor(NamedTuple):
    """How far captures read one transcript: the file's (device, inode), the offset past the
    last line read, and whose transcript it is."""

    identity: tuple[int, int]
    end: int
    agent: Agent | None


class Cursors:
    """Each transcript's `Cursor`, at most MAX_CURSORS of them."""

    def __init__(self, limit: int = MAX_CURSORS) -> None:
        self._limit = limit
        self._cursors: OrderedDict[str, Cursor] = OrderedDict()

    def get(self, path: str) -> Cursor | None:
        """The cursor of `path` (None: no capture read it)."""
        found = self._cursors.get(path)
        if found is not None:
            self._cursors.move_to_end(path)
        return found

    def set(self, path: str, cursor: Cursor, *, from_kept: bool = True) -> None:
        """Remember `cursor` for `path`, dropping the least recently used past the limit. A
        read that went on from the kept cursor (`from_kept`) never moves it back (two captures
        at once); one that did not (the file shrank or was replaced) replaces it."""
        kept = self._cursors.get(path)
        forward = kept is None or kept.identity != cursor.identity or kept.end < cursor.end
        if forward or not from_kept:
            self._cursors[path] = cursor
        self._cursors.move_to_end(path)
        while len(self._cursors) > self._limit:
            self._cursors.popitem(last=False)


class TranscriptRead(NamedTuple):
    """One read of a transcript: its person's turns, and the cursor a capture would keep."""

    turns: person.PersonTurns
    cursor: Cursor
    already_read: bool
    """The read started at an earlier capture's cursor (only appended turns were looked at)."""


def read_transcript(path: str, cursor: Cursor | None) -> TranscriptRead:
    """Read the person's turns of the transcript at `path` from `cursor` on (None: its end
    window); blocking, for a worker thread.

    Raises:
        InvalidParams: `path` is not an absolute path of a readable regular file, or the
            transcript is an agent's memd cannot read yet (the message says what to do).
    """
    if not os.path.isabs(path):
        raise InvalidParams(
            f"transcript {path!r} is not an absolute path; pass the session file's full path."
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InvalidParams(
            f"transcript {path} does not exist; pass the path of a session file that does."
        ) from None
    except OSError as exc:
        raise InvalidParams(
            f"transcript {path} cannot be opened ({exc.strerror}); pass a readable session file."
        ) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InvalidParams(
            f"transcript {path} is not a regular file; pass a session file (JSON lines)."
        )
    with os.fdopen(fd, "rb") as file:
        identity = (info.st_dev, info.st_ino)
        same = cursor is not None and cursor.identity == identity and cursor.end <= info.st_size
        start = person.window(info.st_size, cursor.end if same and cursor else 0)
        head = file.read(min(start, person.MAX_HEAD_BYTES)) if start > 0 else b""
        file.seek(start)
        data = file.read(info.st_size - start)
    on_line = start == 0 or (same and cursor is not None and start == cursor.end)
    agent = cursor.agent if same and cursor is not None else None
    try:
        turns = person.person_turns(data, start=start, on_line=on_line, agent=agent, head=head)
    except ValueError as exc:  # an agent's format memd has no reader for yet
        raise InvalidParams(f"transcript {path}: {exc}; extract its text instead.") from None
    return TranscriptRead(turns, Cursor(identity, turns.end, turns.agent), bool(same))


def summary(path: str, read: TranscriptRead, root: str, *, queued_none: bool = False) -> str:
    """What of the transcript was looked at, in a sentence; when the session ran outside the
    workspace `root`, a second one says so (`queued_none`: and that nothing of it was kept)."""
    said = _looked_at(path, read)
    cwd = read.turns.cwd
    if person.outside(cwd, root):
        said += f" This session ran in {cwd}, not in this workspace ({root})"
        said += "; nothing of it was stored or queued." if queued_none else "."
    return said


def _looked_at(path: str, read: TranscriptRead) -> str:
    turns = read.turns
    if turns.agent is None:
        return f"{path} holds no coding agent's session lines memd knows; nothing was read."
    if read.already_read and not turns.texts:
        return f"Nothing new in {path} since an earlier capture read it."
    looked = f"Looked at {len(turns.texts)} of the person's turns in {path}"
    if read.already_read:
        looked += " (only those after what an earlier capture read)"
    if turns.left_out:
        looked += f"; {turns.left_out} older ones were left out (the newest {person.MAX_TURNS})"
    return looked + "."
