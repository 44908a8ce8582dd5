"""A session's turns as the chunks the `chat` source searches, with secret values masked.

Rules:
- Turns are numbered 1, 2, ... in file order (`number`); a chunk covers turns `first` to
  `last`, which is what a hit's `lines` says ("first-last") and what `get` reads around.
- A chunk is one exchange: a person's turn and the assistant's turns after it (its answer,
  often several turns between tool calls), up to the next turn of the person's, as long as they
  fit in `MAX_CHUNK_CHARS` together. An exchange too long for one chunk is packed in order,
  turn by turn, into chunks of at most `MAX_CHUNK_CHARS` (the question stays with as much of the
  answer as fits); a turn longer than that is cut into pieces of at most `MAX_CHUNK_CHARS` (at
  a paragraph, line or sentence end when there is one in its second half), each a chunk of that
  turn alone. A question is found with the answer that came after the agent's first "let me
  look"; how long each exchange is stays visible to the ranking's length normalisation, so long
  answers do not crowd out the short turns that hold an answer (see `MAX_CHUNK_CHARS`).
- Only the last chunk can change when turns are appended (every earlier one was closed by a
  turn that did not fit or by the person's next turn): chunking again from the last chunk's
  first turn, with the new turns, gives the chunks of the whole file.
- A chunk's text is its turns' words as "user: ..." / "assistant: ..." lines; its time is its
  first turn's (ISO-8601 as the agent wrote it, "" unknown).
- Where space is short (a prompt's block, an agent's query results), a chunk is shown as its
  `memd.core.text.excerpt.excerpt`: one line, at most 600 characters; `get` reads the turns whole.
- Every secret value `memd.core.format.secrets.find_secret` finds in a turn is replaced by
  `MASK` before the turn is chunked (or rendered): nothing searchable or shown ever holds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, NamedTuple

from memd.core.format.secrets import find_secret

MAX_CHUNK_CHARS = 6000
"""The longest chunk's text, in characters (a turn past it is cut into pieces): about a page,
so an exchange of a question and a full answer stays whole and only pasted logs and dumps are
cut. Pieces of one answer are alike in length, which weakens BM25's length normalisation
(`ranking.length_normalisation`) and lets them bury short turns: cutting at 1,500 characters
cost a fifth of the turn recall on long answers (docs/performance.md, issue 36)."""
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
    """The chunks of a session's turns, in order (see the module rules)."""
    packed: list[NumberedTurn] = []
    size = 0
    for turn in turns:
        turn = turn._replace(text=masked(turn.text))
        line = _line(turn)
        closes = turn.role == "user" or len(line) > MAX_CHUNK_CHARS
        if packed and (closes or size + 1 + len(line) > MAX_CHUNK_CHARS):
            yield _packed(packed)
            packed, size = [], 0
        if len(line) > MAX_CHUNK_CHARS:
            yield from _alone(turn)
            continue
        size += (1 if packed else 0) + len(line)
        packed.append(turn)
    if packed:
        yield _packed(packed)


def _packed(turns: Sequence[NumberedTurn]) -> ChatChunk:
    text = "\n".join(_line(turn) for turn in turns)
    roles = tuple(turn.role for turn in turns)
    return ChatChunk(turns[0].number, turns[-1].number, text, turns[0].timestamp, roles)


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
