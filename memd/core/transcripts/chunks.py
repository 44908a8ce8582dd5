"""A session's turns as the chunks the `chat` source searches, with secret values masked.

Rules:
- Turns are numbered 1, 2, ... in file order (`number`); a chunk covers turns `first` to
  `last`, which is what a hit's `lines` says ("first-last") and what `get` reads around.
- A person's turn and the assistant's answer right after it are one chunk when together they
  are at most `MAX_CHUNK_CHARS`; otherwise each turn is its own chunk, and a turn longer than
  that is cut into pieces of at most `MAX_CHUNK_CHARS` (at a paragraph, line or sentence end
  when there is one in its second half), each a chunk of the same turn. So a long answer never
  crowds out the short question beside it: each piece is ranked on its own words.
- A chunk's text is its turns' words as "user: ..." / "assistant: ..." lines; its time is its
  first turn's (ISO-8601 as the agent wrote it, "" unknown).
- Every secret value `memd.core.format.secrets.find_secret` finds in a turn is replaced by
  `MASK` before the turn is chunked (or rendered): nothing searchable or shown ever holds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, NamedTuple

from memd.core.format.secrets import find_secret

MAX_CHUNK_CHARS = 1500
"""The longest chunk's text, in characters (a turn past it is cut into pieces)."""
MASK = "[secret]"
"""What a secret value is replaced by."""

Role = Literal["user", "assistant"]


class NumberedTurn(NamedTuple):
    """One turn of a session, numbered in file order from 1."""

    number: int
    role: Role
    text: str
    timestamp: str


class ChatChunk(NamedTuple):
    """A run of turns (`first` to `last`) as one searchable text, masked."""

    first: int
    last: int
    text: str
    timestamp: str
    roles: tuple[Role, ...]


def masked(text: str) -> str:
    """`text` with every secret value replaced by `MASK`."""
    parts: list[str] = []
    rest = text
    while (found := find_secret(rest)) is not None:
        parts.append(rest[: found.start] + MASK)
        rest = rest[max(found.end, found.start + 1) :]
    return "".join(parts) + rest


def chunks(turns: Iterable[NumberedTurn]) -> Iterator[ChatChunk]:
    """The chunks of a session's turns (see the module rules)."""
    pending: NumberedTurn | None = None
    for turn in turns:
        turn = turn._replace(text=masked(turn.text))
        if pending is not None:
            together = _line(pending) + "\n" + _line(turn)
            if turn.role == "assistant" and len(together) <= MAX_CHUNK_CHARS:
                roles = (pending.role, turn.role)
                yield ChatChunk(pending.number, turn.number, together, pending.timestamp, roles)
                pending = None
                continue
            yield from _alone(pending)
            pending = None
        if turn.role == "user" and len(_line(turn)) <= MAX_CHUNK_CHARS:
            pending = turn
        else:
            yield from _alone(turn)
    if pending is not None:
        yield from _alone(pending)


def render(turns: Sequence[NumberedTurn]) -> str:
    """Turns as `get` shows them: a "<role> (turn N, <time>):" line, then the masked words."""
    blocks = []
    for turn in turns:
        when = f", {turn.timestamp}" if turn.timestamp else ""
        blocks.append(f"{turn.role} (turn {turn.number}{when}):\n{masked(turn.text)}")
    return "\n\n".join(blocks)


def _line(turn: NumberedTurn) -> str:
    return f"{turn.role}: {turn.text}"


def _alone(turn: NumberedTurn) -> Iterator[ChatChunk]:
    for piece in _pieces(_line(turn)):
        yield ChatChunk(turn.number, turn.number, piece, turn.timestamp, (turn.role,))


_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"[.!?]\s"))


def _pieces(text: str) -> Iterator[str]:
    """`text` cut into pieces of at most `MAX_CHUNK_CHARS` (see the module rules)."""
    while len(text) > MAX_CHUNK_CHARS:
        cut = MAX_CHUNK_CHARS
        for pattern in _BREAKS:
            ends = [m.end() for m in pattern.finditer(text, MAX_CHUNK_CHARS // 2, MAX_CHUNK_CHARS)]
            if ends:
                cut = ends[-1]
                break
        piece, text = text[:cut].strip(), text[cut:].strip()
        if piece:
            yield piece
    if text.strip():
        yield text.strip()
