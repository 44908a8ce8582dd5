"""A workspace's "chat" source as its searches see them: the coding agents' past sessions in the
workspace (`memd.fs.transcript_files`), each one's turns as chunks
(`memd.core.transcripts.chunks`) in its own search index.

Rules:
- One owner: the workspace (`Workspace.chats`). Nothing here ever writes; the transcripts are
  the agents' files, outside the workspace. There is no watcher (the files live outside the
  workspace); a look at an unchanged file costs one `stat`.
- Looks: `run`, the workspace's one builder, takes each in a worker thread (one hop a look,
  never on the event loop); a look and its indexes never change once served. A query naming
  "chat" is served the last look when it is under `FRESH_SECONDS` old; else it asks for the
  next and waits for it at most `FRESH_WAIT_SECONDS` (so "what did we just decide" sees the
  turn written a moment ago), then is served whatever look is current. The first look is
  taken by the query itself, for at most `FIRST_LOOK_SECONDS`: the sessions read by then,
  newest first, are served (`partial`), and the builder reads on at once. A prompt's block
  never waits (`wait=False`). A config change (`chat`, `chat_max_age_days`) starts afresh.
- Each session file is followed by a byte cursor: a look reads only the bytes after it, in
  blocks of `BLOCK_BYTES` (`memd.core.transcripts.lines.complete_objects`), and may stop after
  a block when its time is up (the next look goes on from there); a line longer than
  `MAX_LINE_BYTES` is skipped without ever being held whole; an unterminated last line waits
  for the next look. A file that shrank, or whose identity (device, inode) changed, is read
  again from its start. A line that is not JSON is skipped (and counted), never an error. A
  file longer than `MAX_SESSION_BYTES` is read from that far before its end (`start_of`).
  Files are opened only when regular (`transcript_files.open_transcript`: never a FIFO).
- An agent's reader may carry state from one read to the next (`memd.core.transcripts.Progress`:
  Codex names its session once, at the start); it is kept with the cursor. A file not written
  for `QUIET_SECONDS` is read as complete (Codex's old rollouts give their held turns then).
  `Replay` does this for a look and for `get` alike, so their turn numbers agree.
- Turns are numbered in file order from 1 (from where reading started). An append chunks again
  only from the last chunk's first turn (`chunks.chunks` rules: every earlier chunk is
  closed), so the chunks after any number of appends are those of the whole file read at once.
  Each session's index is updated from a fork of its last (`ranking.build_index`): an append
  costs about its own chunks' terms, and the served look's index is left as it is.
- Bounded: at most `transcript_files.MAX_FILES` files (the newest), at most
  `MAX_SESSION_BYTES` read of one, at most `MAX_TOTAL_CHARS` of chunk text per workspace (a
  session past it, and the older ones, are left out unread, and `left_out` says so). Each
  look lets the last go: nothing grows with the number of looks.
- Off (`chat = false` in memd's config): nothing is read, the held chunks are let go, and a
  search naming "chat" finds nothing there (no error).

Size: the look (a session read from its cursor, its chunks and its index) and the builder that
serves the last look while taking the next, which share the cursor's invariants.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import anyio

from memd.core.format.mdformat import Entry
from memd.core.search import ranking
from memd.core.search.index import SearchIndex
from memd.core.transcripts import START, Agent, Progress, read_turns
from memd.core.transcripts.chunks import ChatChunk, NumberedTurn, chunks
from memd.core.transcripts.lines import MAX_LINE_BYTES, complete_objects
from memd.fs.transcript_files import HEAD_BYTES, TranscriptFile, find_transcripts, open_transcript

FRESH_SECONDS = 1.0
"""How old a look may be before a search naming "chat" asks for the next."""
MAX_TOTAL_CHARS = 32 * 1024 * 1024
"""The most chunk text one workspace's "chat" source holds: older sessions past it are left out."""
BLOCK_BYTES = 1 << 20
"""How much of a transcript is read at once."""
MAX_SESSION_BYTES = 8 * 1024 * 1024
"""The most of one transcript read: a longer one is read from this far before its end (its
newest turns, from the first whole line there), so one huge session can neither fill the
workspace's share nor hold up a look."""
FRESH_WAIT_SECONDS = 1.0
"""How long a query naming "chat" waits for a look newer than `FRESH_SECONDS`."""
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
        tail: Sequence[NumberedTurn],
        parts: Sequence[ChatChunk],
        previous: SearchIndex | None = None,
        *,
        same: bool = False,
        progress: Progress = START,
        origin: int = 0,
        released: int | None = None,
    ) -> None:
        self.path = found.path
        self.agent: Agent = found.agent
        self.found = found
        self.session = session
        self.cursor = cursor
        self.origin = origin
        """Where its reading started (0, or `MAX_SESSION_BYTES` before the end of a longer
        file): its turns are numbered from there."""
        self.progress = progress
        """What the agent's reader carries from the lines read to the next (Codex's)."""
        self.released = released
        """The offset at which the file was read as complete (`Replay.finish`), if it was."""
        self.turns = turns
        """How many turns the file held, read so far."""
        self.tail = tuple(tail)
        """The turns of the last chunk, the only one an append can change."""
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

    def moved(
        self, found: TranscriptFile, cursor: Cursor, progress: Progress, released: int | None
    ) -> ChatSession:
        """This session, its file read further without a new turn: the same chunks and index."""
        return ChatSession(
            found,
            self.session,
            cursor,
            self.turns,
            self.tail,
            self.chunks,
            self.index,
            same=True,
            progress=progress,
            origin=self.origin,
            released=released,
        )

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
        self._looked = anyio.Event()
        """Set (and replaced) each time a look ends."""

    def stale(self, asked: Asked) -> bool:
        """Whether the last look may be out of date (see the module rules)."""
        look = self.current
        if look is NOTHING or look.asked != asked or look.partial:
            return True
        return time.monotonic() - look.at >= FRESH_SECONDS

    async def refresh(self, enabled: bool, max_age_days: int, *, wait: bool = True) -> ChatLook:
        """The look at the sessions to serve (see the module rules): with `wait`, the first is
        taken here, and a stale one waits a moment for the next; without, the first is asked
        of `run` and nothing is served meanwhile. Off: an empty look, nothing read."""
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
            if wait:
                looked = self._looked
                with anyio.move_on_after(FRESH_WAIT_SECONDS):
                    await looked.wait()
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
        self._looked.set()
        self._looked = anyio.Event()
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
            _keep_unread(found[position:], previous, sessions, left_out)
            break
        if total >= MAX_TOTAL_CHARS:
            left = len(found) - position
            left_out.append(
                f"{left} older session(s) left out: the past sessions held pass "
                f"{MAX_TOTAL_CHARS // (1024 * 1024)} MiB of text; lower chat_max_age_days"
            )
            break
        try:
            session, count, ended = read_session(
                transcript, previous.sessions.get(transcript.path), deadline
            )
        except OSError:
            continue  # gone, unreadable or not a file since it was found: left out
        skipped += count
        sessions[session.path] = session
        total += session.chars
        if not ended:
            partial = True
            _keep_unread(found[position:], previous, sessions, left_out)
            break
    return ChatLook(sessions, left_out, time.monotonic(), asked, skipped, partial)


def _keep_unread(
    unread: Sequence[TranscriptFile],
    previous: ChatLook,
    sessions: dict[str, ChatSession],
    left_out: list[str],
) -> None:
    """A look out of time: the sessions it did not (finish) read keep their last version, if
    any (one read in part keeps what was read), and `left_out` says the rest is coming."""
    for transcript in unread:
        kept = sessions.get(transcript.path) or previous.sessions.get(transcript.path)
        if kept is not None:
            sessions[transcript.path] = kept
    left_out.append(f"{len(unread)} older session(s) are still being read; ask again in a moment")


class Replay:
    """An agent's turns read from a transcript's lines in order, numbered on from `number`:
    what a look and `get` share, so that their turn numbers agree."""

    def __init__(self, agent: Agent, number: int = 0, progress: Progress = START) -> None:
        self.agent: Agent = agent
        self.number = number
        self.progress = progress
        self.session = ""
        self.turns: list[NumberedTurn] = []
        """The turns read by this replay, numbered."""

    def take(self, objects: list[tuple[int, dict[str, Any]]], *, final: bool = False) -> None:
        """Read the turns among the next parsed lines."""
        said, self.progress = read_turns(self.agent, objects, self.progress, final=final)
        for turn in said:
            self.number += 1
            self.turns.append(NumberedTurn(self.number, turn.role, turn.text, turn.timestamp))
            self.session = self.session or turn.session

    def finish(self, mtime: float) -> bool:
        """Read the file as complete if it has been quiet (see `quiet`); say whether it was."""
        if not quiet(self.progress, mtime):
            return False
        self.take([], final=True)
        return True


def quiet(progress: Progress, mtime: float) -> bool:
    """Whether a reader holds turns that a file last written at `mtime` now gives (it has been
    quiet `QUIET_SECONDS`: read as complete)."""
    return bool(progress.held) and time.time() - mtime >= QUIET_SECONDS


def start_of(found: TranscriptFile) -> Cursor:
    """Where a transcript is first read: its start, or `MAX_SESSION_BYTES` before its end (the
    first line there, whole, being the first read)."""
    return reading_from(max(0, found.size - MAX_SESSION_BYTES))


def reading_from(origin: int) -> Cursor:
    """The cursor that starts reading at `origin`: inside a line unless it is the file's start."""
    return Cursor(origin, origin > 0)


def primed(agent: Agent, path: str, origin: int) -> Replay:
    """A replay of a transcript read from `origin`: for a Codex rollout read from inside the
    file, its `session_meta` line (the session's id, whether it is a subagent's) is read first."""
    replay = Replay(agent)
    if agent == "codex" and origin > 0:
        with open_transcript(path) as handle:
            head = handle.read(HEAD_BYTES)
        meta = [
            found
            for found in complete_objects(head).objects
            if found[1].get("type") == "session_meta"
        ]
        replay.take(meta[:1])
    return replay


def read_session(
    found: TranscriptFile, previous: ChatSession | None, deadline: float | None = None
) -> tuple[ChatSession, int, bool]:
    """One session as it is now, read from `previous`'s cursor when it is the same file and did
    not shrink (else from `start_of` it), how many lines were skipped, and whether it was read
    to its end (not: `deadline` passed first; the next look goes on from the cursor). Blocking.

    Raises:
        OSError: it cannot be read.
    """
    if previous is not None and (
        previous.found.identity != found.identity
        or found.size < previous.cursor.offset
        or previous.agent != found.agent
    ):
        previous = None
    if previous is None:
        cursor = start_of(found)
        replay = primed(found.agent, found.path, cursor.offset)
        origin = cursor.offset
    else:
        unchanged = (previous.found.size, previous.found.mtime) == (found.size, found.mtime)
        read_all = previous.cursor.offset >= found.size
        if unchanged and read_all and not quiet(previous.progress, found.mtime):
            return previous, 0, True
        cursor, origin = previous.cursor, previous.origin
        replay = Replay(found.agent, previous.turns, previous.progress)
        replay.session = previous.session
    cursor, skipped, ended = read_objects(found.path, cursor, replay.take, deadline=deadline)
    released = previous.released if previous is not None else None
    if ended and replay.finish(found.mtime):
        released = cursor.offset
    session = replay.session or os.path.splitext(os.path.basename(found.path))[0]
    if previous is not None and not replay.turns:
        kept = previous.moved(found, cursor, replay.progress, released)
        return kept, skipped, ended
    made, tail = rechunked(previous, replay.turns)
    index = previous.index if previous is not None else None
    kept = ChatSession(
        found,
        session,
        cursor,
        replay.number,
        tail,
        made,
        index,
        progress=replay.progress,
        origin=origin,
        released=released,
    )
    return kept, skipped, ended


def rechunked(
    previous: ChatSession | None, new_turns: Sequence[NumberedTurn]
) -> tuple[tuple[ChatChunk, ...], tuple[NumberedTurn, ...]]:
    """A session's chunks after `new_turns` were read, and the turns of its last chunk: the
    chunks of `previous` but its last kept, the last made again with the new turns."""
    if previous is None or not previous.chunks:
        kept: tuple[ChatChunk, ...] = ()
        redo = list(new_turns)
    else:
        first = previous.chunks[-1].first
        kept = tuple(part for part in previous.chunks if part.first < first)
        redo = [turn for turn in previous.tail if turn.number >= first]
        redo.extend(new_turns)
    made = (*kept, *chunks(redo))
    last_first = made[-1].first if made else 0
    return made, tuple(turn for turn in redo if turn.number >= last_first)


def read_objects(
    path: str,
    cursor: Cursor,
    take: Callable[[list[tuple[int, dict[str, Any]]]], None],
    *,
    block_bytes: int | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    deadline: float | None = None,
    until: int | None = None,
) -> tuple[Cursor, int, bool]:
    """Read the complete lines of `path` from `cursor`, a block at a time, giving `take` each
    block's objects; return the cursor after the last complete line, how many lines were
    skipped, and whether it read to the end (not: `deadline`, a `time.monotonic()`, passed
    after a block); with `until`, no byte from that offset on is read. Blocking; see the
    module rules.

    Raises:
        OSError: it cannot be read, or it is not a regular file.
    """
    offset, skipping = cursor
    skipped = 0
    buffer = b""
    size = block_bytes or BLOCK_BYTES
    with open_transcript(path) as handle:
        handle.seek(offset)
        while block := handle.read(size if until is None else min(size, until - handle.tell())):
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
            if deadline is not None and time.monotonic() > deadline:
                return Cursor(offset, skipping), skipped, False
    return Cursor(offset, skipping), skipped, True


def turns_between(session: ChatSession, first: int, last: int) -> list[NumberedTurn]:
    """Turns `first` to `last` of a session's transcript as it is now, numbered as its chunks
    are (read from where the session's reading started; an unterminated last line is not read,
    as a look does not read it). Blocking.

    Raises:
        OSError: it cannot be read.
    """
    replay = primed(session.agent, session.path, session.origin)
    start = reading_from(session.origin)
    if session.released is not None:  # read as complete there: the same again
        start, _, _ = read_objects(session.path, start, replay.take, until=session.released)
        replay.take([], final=True)
    read_objects(session.path, start, replay.take)
    replay.finish(os.stat(session.path).st_mtime)
    return [turn for turn in replay.turns if first <= turn.number <= last]
