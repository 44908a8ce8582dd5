"""A workspace's "chat" source as its searches see them: the coding agents' past sessions in the
workspace (`memd.fs.transcript_files`), each one's turns as chunks
(`memd.core.transcripts.chunks`) in its own search index.

Rules:
- One owner: the workspace (`Workspace.chats`). Nothing here ever writes; the transcripts are
  the agents' files, outside the workspace.
- A search is served the last look and never waits for a new one (but for the first, and that
  one at most `FIRST_LOOK_SECONDS`: the sessions read by then, newest first, are served, and the
  builder reads the rest at once): when the last look is `FRESH_SECONDS` old, or the config (`chat`, `chat_max_age_days`) changed, the
  search asks for a new one and `run`, the workspace's one builder, takes it in a worker thread
  (one hop a look, never on the event loop). There is no watcher: the files live outside the
  workspace, and a look at an unchanged file costs one `stat`.
- Each session file is followed by a byte cursor: a look reads only the bytes after it, in
  blocks of `BLOCK_BYTES` (`memd.core.transcripts.lines.complete_objects`); a line longer than
  `MAX_LINE_BYTES` is skipped without ever being held whole; an unterminated last line waits
  for the next look. A file that shrank, or whose identity (device, inode) changed, is read
  again from its start. A line that is not JSON is skipped (and counted), never an error.
- An agent's reader may carry state from one read to the next (`memd.core.transcripts.Progress`:
  Codex names its session once, at the start); it is kept with the cursor. A file not written
  for `QUIET_SECONDS` is read as complete (Codex's old rollouts give their held turns then).
- Turns are numbered in file order from 1. An append re-chunks only from the last turn when it
  was the person's (it may still pair with the answer that follows; `chunks.chunks` rules), so
  the chunks after any number of appends are those of the whole file read at once. Each
  session's index is updated from a fork of its last (`ranking.build_index`): an append costs
  about its own chunks' terms, and the served look's index is left as it is.
- Bounded: at most `transcript_files.MAX_FILES` files (the newest), at most `MAX_TOTAL_CHARS`
  of chunk text per workspace: the sessions past it (the older ones) are left out unread, and
  `left_out` says so. Each look lets the last go: nothing grows with the number of looks.
- Off (`chat = false` in memd's config): nothing is read, the held chunks are let go, and a
  search naming "chat" finds nothing there (no error).

Size: the look (a session read from its cursor, its chunks and its index) and the builder that
serves the last look while taking the next, which share the cursor's invariants.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import anyio

from memd.core.format.mdformat import Entry
from memd.core.search import ranking
from memd.core.search.index import SearchIndex
from memd.core.transcripts import START, Agent, Progress, read_turns
from memd.core.transcripts.chunks import ChatChunk, NumberedTurn, chunks
from memd.core.transcripts.lines import MAX_LINE_BYTES, complete_objects
from memd.fs.transcript_files import TranscriptFile, find_transcripts

FRESH_SECONDS = 1.0
"""How old a look may be before a search naming "chat" asks for the next."""
MAX_TOTAL_CHARS = 32 * 1024 * 1024
"""The most chunk text one workspace's "chat" source holds: older sessions past it are left out."""
BLOCK_BYTES = 1 << 20
"""How much of a transcript is read at once."""
FIRST_LOOK_SECONDS = 2.0
"""How long the first look (the one a query waits for) reads before it is served as it is:
the newest sessions read so far; the builder reads the rest next."""
QUIET_SECONDS = 600.0
"""A transcript not written for this long is read as complete (`read_turns`' `final`: an old
Codex rollout without message events gives its held turns then)."""

Asked = tuple[bool, int]
"""What a look is taken under: memd's config `chat` and `chat_max_age_days`."""


class Cursor(NamedTuple):
    """Where the next read of a transcript starts: a byte offset, and whether it is inside a
    line too long to hold (skipped up to its end)."""

    offset: int = 0
    skipping: bool = False


class ChatSession:
    """One version of one session transcript: its chunks, their index, and where to go on."""

    def __init__(
        self,
        found: TranscriptFile,
        session: str,
        cursor: Cursor,
        turns: int,
        pending: NumberedTurn | None,
        parts: Sequence[ChatChunk],
        previous: SearchIndex | None = None,
        *,
        same: bool = False,
        progress: Progress = START,
    ) -> None:
        self.path = found.path
        self.progress = progress
        """What the agent's reader carries from the lines read to the next (Codex's)."""
        self.agent: Agent = found.agent
        self.found = found
        self.session = session
        self.cursor = cursor
        self.turns = turns
        """How many turns the file held, read so far."""
        self.pending = pending
        """The last turn when it was the person's: its chunk may still grow."""
        self.chunks = tuple(parts)
        self.entries = tuple(
            Entry(line=number, slug=None, content=part.text)
            for number, part in enumerate(self.chunks, 1)
        )
        if same and previous is not None:
            self.index: SearchIndex = previous  # the same chunks: the same index
        else:
            base = previous.forked() if previous is not None else None
            self.index = ranking.build_index(self.entries, base)
        self.chars = sum(len(part.text) for part in self.chunks)

    @functools.cached_property
    def tags(self) -> dict[int, frozenset[str]]:
        """No tags: a session's words are what was said."""
        return {}

    def chunk_at(self, line: int) -> ChatChunk:
        """The chunk of an index entry (entries are numbered 1, 2, ... in chunk order)."""
        return self.chunks[line - 1]


class ChatLook(NamedTuple):
    """What one look at the sessions found: an immutable snapshot."""

    sessions: dict[str, ChatSession]
    """By the transcript's absolute path, newest first."""
    left_out: list[str]
    at: float
    asked: Asked | None = None
    skipped: int = 0
    """Lines skipped over all sessions since each was last read from its start."""
    partial: bool = False
    """The look ran out of time (`FIRST_LOOK_SECONDS`) before every session was read."""


NOTHING = ChatLook({}, [], 0.0)
"""The look before the first: nothing, taken as stale."""


class WorkspaceChats:
    """The "chat" source of the workspace at `root` (a real path; see the module rules).
    `run` is the builder (the workspace runs it); `looks` counts the looks taken."""

    def __init__(self, root: str, env: Callable[[], dict[str, str]] | None = None) -> None:
        self.root = root
        self.current = NOTHING
        self.looks = 0
        self._env = env or (lambda: dict(os.environ))
        self._first = anyio.Lock()
        self._scope = anyio.CancelScope()
        self._wanted = anyio.Event()
        self._asked: Asked | None = None
        self._next_at = 0.0

    def stale(self, asked: Asked) -> bool:
        """Whether the last look may be out of date (see the module rules)."""
        look = self.current
        if look is NOTHING or look.asked != asked or look.partial:
            return True
        return time.monotonic() - look.at >= FRESH_SECONDS

    async def refresh(self, enabled: bool, max_age_days: int, *, wait: bool = True) -> ChatLook:
        """The last look at the sessions (the first is taken here, and waited for, unless not
        `wait`: then the first is asked of `run` and nothing is served meanwhile); asks `run`
        for a new one when it may be out of date. Off: an empty look, nothing read."""
        asked: Asked = (enabled, max_age_days)
        if not enabled:
            self.current = ChatLook({}, [], time.monotonic(), asked)
            return self.current
        if not wait and self.current.asked != asked:
            self._asked = asked
            self._wanted.set()
            return NOTHING
        if self.current is NOTHING or self.current.asked != asked:
            async with self._first:
                if self.current is NOTHING or self.current.asked != asked:
                    await self.look_now(asked, seconds=FIRST_LOOK_SECONDS)
            if self.current.partial:
                self._asked = asked
                self._wanted.set()
            return self.current
        if self.stale(asked):
            self._asked = asked
            self._wanted.set()
        return self.current

    async def run(self) -> None:
        """Take each look asked for, one at a time, in the background, until `stop`."""
        with self._scope:
            while True:
                await self._wanted.wait()
                self._wanted = anyio.Event()
                wait = self._next_at - time.monotonic()
                if wait > 0:
                    await anyio.sleep(wait)
                asked = self._asked
                if asked is not None and asked[0] and self.stale(asked):
                    await self.look_now(asked, abandon_on_cancel=True)

    def stop(self) -> None:
        """End `run` (a look in progress is left to finish in its worker thread, unused)."""
        self._scope.cancel()

    async def look_now(
        self, asked: Asked, *, abandon_on_cancel: bool = False, seconds: float | None = None
    ) -> ChatLook:
        """Look at the sessions again (in a worker thread), make it the current look, return it;
        with `seconds`, stop reading sessions once they have passed (a partial look).
        Looks start at least as long after the last one ended as it took."""
        started = time.monotonic()
        previous = self.current if self.current.asked == asked else NOTHING
        env = self._env()
        deadline = None if seconds is None else started + seconds
        look_one = functools.partial(look_at, deadline=deadline)
        try:
            look = await anyio.to_thread.run_sync(
                look_one, self.root, env, asked, previous, abandon_on_cancel=abandon_on_cancel
            )
        except OSError as exc:  # never fail a search
            problem = f"the past sessions could not be looked at ({type(exc).__name__}: {exc})"
            look = previous._replace(left_out=[problem], at=time.monotonic(), asked=asked)
        self.current = look
        self.looks += 1
        ended = time.monotonic()
        self._next_at = ended + (ended - started)
        return look


def look_at(
    root: str,
    env: dict[str, str],
    asked: Asked,
    previous: ChatLook = NOTHING,
    *,
    deadline: float | None = None,
) -> ChatLook:
    """Look at the workspace's sessions again, newest first, reading each only from its cursor
    (blocking); past `deadline` (a `time.monotonic()`), the sessions not read yet are left for
    the next look (their last version kept, if any) and the look is `partial`."""
    found = find_transcripts(root, env, max_age_days=asked[1], now=time.time())
    sessions: dict[str, ChatSession] = {}
    left_out: list[str] = []
    total = 0
    skipped = 0
    partial = False
    for position, transcript in enumerate(found):
        if deadline is not None and time.monotonic() > deadline:
            partial = True
            kept = [
                previous.sessions[t.path] for t in found[position:] if t.path in previous.sessions
            ]
            sessions.update((session.path, session) for session in kept)
            left_out.append(
                f"{len(found) - position} older session(s) are still being read; "
                "ask again in a moment"
            )
            break
        if total >= MAX_TOTAL_CHARS:
            left = len(found) - position
            left_out.append(
                f"{left} older session(s) left out: the past sessions held pass "
                f"{MAX_TOTAL_CHARS // (1024 * 1024)} MiB of text; lower chat_max_age_days"
            )
            break
        try:
            read = read_session(transcript, previous.sessions.get(transcript.path))
        except OSError:
            continue  # gone or unreadable since it was found: left out, as find_transcripts does
        except ValueError as exc:  # no reader for this agent's transcripts
            left_out.append(f"{transcript.path} is left out: {exc}")
            continue
        if read is None:
            continue
        session, count = read
        skipped += count
        sessions[session.path] = session
        total += session.chars
    return ChatLook(sessions, left_out, time.monotonic(), asked, skipped, partial)


def read_session(
    found: TranscriptFile, previous: ChatSession | None
) -> tuple[ChatSession, int] | None:
    """One session as it is now, read from `previous`'s cursor when it is the same file and did
    not shrink (else from the start), and how many lines were skipped (blocking).

    Raises:
        OSError: it cannot be read.
        ValueError: there is no reader for its agent's transcripts.
    """
    if previous is not None and (
        previous.found.identity != found.identity
        or found.size < previous.cursor.offset
        or previous.agent != found.agent
    ):
        previous = None
    if previous is not None and previous.found[2:4] == found[2:4]:
        return previous, 0  # same size and time: unchanged
    cursor = previous.cursor if previous is not None else Cursor()
    number = previous.turns if previous is not None else 0
    session = previous.session if previous is not None else ""
    progress = previous.progress if previous is not None else START
    new_turns: list[NumberedTurn] = []

    def take(objects: list[tuple[int, dict[str, Any]]], final: bool = False) -> None:
        nonlocal number, session, progress
        said, progress = read_turns(found.agent, objects, progress, final=final)
        for turn in said:
            number += 1
            new_turns.append(NumberedTurn(number, turn.role, turn.text, turn.timestamp))
            session = session or turn.session

    cursor, skipped = read_objects(found.path, cursor, take)
    if progress.held and time.time() - found.mtime >= QUIET_SECONDS:
        take([], final=True)
    if previous is not None and not new_turns:
        kept = ChatSession(
            found,
            session,
            cursor,
            number,
            previous.pending,
            previous.chunks,
            previous.index,
            same=True,
            progress=progress,
        )
        return kept, skipped
    kept_chunks, redo = grown(previous, new_turns)
    pending = new_turns[-1] if new_turns and new_turns[-1].role == "user" else None
    session = session or os.path.splitext(os.path.basename(found.path))[0]
    parts = (*kept_chunks, *chunks(redo))
    index = previous.index if previous is not None else None
    kept = ChatSession(found, session, cursor, number, pending, parts, index, progress=progress)
    return kept, skipped


def grown(
    previous: ChatSession | None, new_turns: Sequence[NumberedTurn]
) -> tuple[tuple[ChatChunk, ...], list[NumberedTurn]]:
    """The chunks kept from `previous` and the turns to chunk again for an append of
    `new_turns`: a pending last turn of the person's is chunked again with what follows."""
    if previous is None:
        return (), list(new_turns)
    kept = previous.chunks
    pending = previous.pending
    if pending is None or not new_turns:
        return kept, list(new_turns)
    while kept and kept[-1].first == pending.number:
        kept = kept[:-1]
    return kept, [pending, *new_turns]


def read_objects(
    path: str,
    cursor: Cursor,
    take: Callable[[list[tuple[int, dict[str, Any]]]], None],
    *,
    block_bytes: int = BLOCK_BYTES,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> tuple[Cursor, int]:
    """Read the complete lines of `path` from `cursor`, a block at a time, giving `take` each
    block's objects; return the cursor after the last complete line and how many lines were
    skipped (blocking; see the module rules).

    Raises:
        OSError: it cannot be read.
    """
    offset, skipping = cursor
    skipped = 0
    buffer = b""
    with open(path, "rb") as handle:
        handle.seek(offset)
        while block := handle.read(block_bytes):
            if skipping:
                end = block.find(b"\n")
                if end < 0:
                    offset += len(block)
                    continue
                offset += end + 1
                block = block[end + 1 :]
                skipping = False
                skipped += 1
            buffer += block
            read = complete_objects(buffer, start=offset, max_line_bytes=max_line_bytes)
            if read.objects:
                take(read.objects)
            skipped += read.skipped
            offset += read.consumed
            buffer = buffer[read.consumed :]
            if len(buffer) > max_line_bytes:
                offset += len(buffer)
                buffer = b""
                skipping = True
    return Cursor(offset, skipping), skipped


def turns_between(path: str, agent: Agent, first: int, last: int) -> list[NumberedTurn]:
    """Turns `first` to `last` of a transcript as it is now, numbered as its chunks are
    (blocking; an unterminated last line is not read, as a look does not read it).

    Raises:
        OSError: it cannot be read.
    """
    wanted: list[NumberedTurn] = []
    number = 0
    progress = START

    def take(objects: list[tuple[int, dict[str, Any]]], final: bool = False) -> None:
        nonlocal number, progress
        said, progress = read_turns(agent, objects, progress, final=final)
        for turn in said:
            number += 1
            if first <= number <= last:
                wanted.append(NumberedTurn(number, turn.role, turn.text, turn.timestamp))

    read_objects(path, Cursor(), take)
    if progress.held and time.time() - os.stat(path).st_mtime >= QUIET_SECONDS:
        take([], final=True)
    return wanted


def all_chunks(look: ChatLook) -> Iterator[tuple[ChatSession, ChatChunk]]:
    """Every chunk of a look, with its session."""
    for session in look.sessions.values():
        for part in session.chunks:
            yield session, part
