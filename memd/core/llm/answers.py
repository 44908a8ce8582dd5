"""Deterministic parsers of a model's answers (the JSON shapes `memd.core.llm.prompts` asks
for).

Rules:
- An answer is read as one JSON object: the whole text, or else the text between its first "{"
  and its last "}" (models wrap JSON in prose or a ``` fence). Anything else, a wrong shape, an
  out-of-range number or an unknown category is no answer (None): "no opinion", never a guess.
- A redundancy answer names a candidate by its 1-based number, or null for none.
- A proposals answer keeps at most `most` memories whose category is one of `categories`
  (matched in any case) and whose content is one line of 1..MAX_CONTENT characters after
  whitespace runs become one space; the others are dropped, and said so by the count returned.
- A reason is cut to one line of at most MAX_REASON characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import msgspec

MAX_ANSWER_BYTES = 20000
"""Answers longer than this are not parsed (the shell also bounds what it reads)."""
MAX_CONTENT = 500
MAX_REASON = 200


class _Redundancy(msgspec.Struct):
    restates: int | None
    reason: str = ""


class _Memory(msgspec.Struct):
    category: str
    content: str


class _Proposals(msgspec.Struct):
    memories: list[_Memory]


class Restatement(NamedTuple):
    """A redundancy answer: the 0-based index of the restated candidate (None: none)."""

    candidate: int | None
    reason: str


class Proposed(NamedTuple):
    """One memory a model proposed, its category spelt as the workspace spells it."""

    category: str
    content: str


def _object(text: str) -> bytes | None:
    if len(text) > MAX_ANSWER_BYTES:
        return None
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        return text.encode()
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1].encode() if 0 <= start < end else None


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text[:limit]


def redundancy(text: str, candidates: int) -> Restatement | None:
    """Parse a redundancy answer about `candidates` candidates (see the module rules)."""
    raw = _object(text)
    if raw is None:
        return None
    try:
        answer = msgspec.json.decode(raw, type=_Redundancy)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if answer.restates is None:
        return Restatement(None, _one_line(answer.reason, MAX_REASON))
    if isinstance(answer.restates, bool) or not 1 <= answer.restates <= candidates:
        return None
    return Restatement(answer.restates - 1, _one_line(answer.reason, MAX_REASON))


def proposals(text: str, categories: Iterable[str], most: int) -> tuple[list[Proposed], int] | None:
    """Parse a proposals answer: the memories kept and how many were dropped (see the rules)."""
    raw = _object(text)
    if raw is None:
        return None
    try:
        answer = msgspec.json.decode(raw, type=_Proposals)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    names = {name.lower(): name for name in categories}
    kept: list[Proposed] = []
    for memory in answer.memories:
        category = names.get(memory.category.strip().lower())
        content = " ".join(memory.content.split())
        if category is None or not content or len(content) > MAX_CONTENT or len(kept) >= most:
            continue
        kept.append(Proposed(category, content))
    return kept, len(answer.memories) - len(kept)
