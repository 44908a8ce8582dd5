"""The lexer of memory extraction: which lines are the user's own words, their sentences, masks.

Rules:
- Lines are split with `str.splitlines` (every line break Python knows). Fenced code blocks
  (``` or ~~~), `>` quoted lines and pasted tool output ("Error: ...", "[WARN] ...",
  "file.py:12: ...", "npm ERR! ...", time stamps) are skipped: they are not the user's words.
- A line is cut into sentences at `.`, `!` or `?` followed by white space or the end of the
  line, never inside a `code span`, after "e.g."/"i.e."/"vs."/"etc." (when a lower-case word
  follows), nor inside `setup.py` or `3.11`. A leading list marker ("- ", "* ", "2) ") is
  dropped. Sentences are trimmed; empty ones are not yielded.
- `Text` pairs a piece of a sentence with its mask: the same string with every code span
  blanked to `xxx` and curly apostrophes made straight. Matchers read the mask, so nothing
  inside a code span can trigger a rule, and contents are cut from the original, so code is
  copied byte for byte.
- Cost: one regex pass per line, no backtracking across lines; linear in the input.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

_FENCE = re.compile(r"\s*(?:```|~~~)")
_QUOTE = re.compile(r"\s*>")
# Pasted tool output: "Error: ...", "[WARN] ...", "npm ERR! ...", "12:03:44 ...", "2024-05-01 ...".
_TOOL_OUTPUT = re.compile(
    r"(?:\[?[\w.-]{0,30}?(?:error|warning|warn|fatal|exception|err|critical|info|debug|panic|"
    r"hint|trace(?:back)?)\]?\s*(?::|!)|\[\w+\]|\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|"
    r"(?:[\w./-]+:\d+:)|(?:npm|yarn|pnpm|pip|cargo|go)\s+(?:err|warn)\w*)",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"(?:[-*+•]|\d{1,3}[.)])\s+")
_TOKEN = re.compile(r"`[^`]*`|[.!?]+|[^`.!?]+|`")
_ABBREVIATION = re.compile(
    r"(?:^|[\s(])(e\.g|i\.e|eg|ie|vs|cf|approx|incl|esp|etc|viz|resp|wrt)$", re.IGNORECASE
)
CODE = re.compile(r"`[^`]*`")


def sentences(text: str) -> Iterator[str]:
    """Yield the trimmed sentences of `text`, outside fenced code and `>` quotes, in order."""
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or _QUOTE.match(line) or _TOOL_OUTPUT.match(line.lstrip()):
            continue
        for start, end in _sentence_spans(line):
            piece = line[start:end].strip()
            marker = _LIST_MARKER.match(piece)
            if marker and start == 0:
                piece = piece[marker.end() :].strip()
            if piece:
                yield piece


def _sentence_spans(line: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _TOKEN.finditer(line):
        if m.group()[0] not in ".!?":
            continue
        if m.end() < len(line) and not line[m.end()].isspace():
            continue  # setup.py, 3.11, e.g.
        if m.group() == "." and _is_abbreviation(line, start, m.start(), m.end()):
            continue
        yield start, m.end()
        start = m.end()
    yield start, len(line)


def _is_abbreviation(line: str, start: int, dot: int, after: int) -> bool:
    word = _ABBREVIATION.search(line[max(start, dot - 8) : dot])
    if word is None:
        return False
    if word.group(1).lower() != "etc":
        return True
    rest = line[after : after + 3].lstrip()
    return bool(rest) and rest[0].islower()


@dataclasses.dataclass(frozen=True, slots=True)
class Text:
    """A piece of a sentence and its mask: same length, code spans blanked to `xxx`."""

    orig: str
    mask: str

    @classmethod
    def of(cls, text: str) -> Text:
        masked = CODE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", text)
        return cls(text, masked.replace("’", "'").replace("‘", "'"))

    @classmethod
    def lit(cls, text: str) -> Text:
        return cls(text, text)

    def __getitem__(self, key: slice) -> Text:
        return Text(self.orig[key], self.mask[key])

    def __add__(self, other: Text) -> Text:
        return Text(self.orig + other.orig, self.mask + other.mask)

    def strip(self) -> Text:
        left = len(self.mask) - len(self.mask.lstrip())
        return self[left : len(self.mask.rstrip())]

    def after(self, m: re.Match[str] | None) -> Text:
        return self if m is None else self[m.end() :]


def without_code(mask: str) -> str:
    """Shrink every blanked code span of a mask to "`x`" (for word checks)."""
    return CODE.sub("`x`", mask)


def first_word(text: Text) -> str:
    """The first word of `text` (letters, digits, apostrophes), or ""."""
    word = re.match(r"[\w']+", text.mask)
    return "" if word is None else word.group()
