"""Cut a read-only Markdown source (CLAUDE.md, AGENTS.md, `.claude/rules/*.md`,
`.cursor/rules/*.mdc`, copilot-instructions.md, MEMORY.md, `memory/*.md`) into search chunks.

Theory of operation: one pass over the lines, CommonMark's block structure simplified to what
instruction files hold. Each line either starts a block (a bullet, a paragraph, a table, a code
fence with nothing to join), joins the block before it, or is skipped (a heading, which goes into
the heading path instead, front matter, a comment, a break). A block becomes one chunk, or several
when it is longer than `MAX_CHUNK_CHARS`.

Rules:
- Lines are numbered as `mdformat.parse` numbers them (split on "\\n", a "\\r" before it dropped,
  so a CRLF file numbers as its LF copy), from 1, front matter included; `split_lines` gives them.
- Front matter is skipped: a first line `---` (after an optional BOM) through the next line `---`
  or `...`. With no closing line there is no front matter.
- A heading is never a chunk; it goes into the `headings` of the chunks after it, replacing any
  at its level or deeper (an empty one only ends them). ATX: up to 3 spaces, 1 to 6 `#`, then a
  space or the line's end (a closing `#` run is dropped). Setext: a top-level paragraph (not in a
  list, no fence in it) followed by a line of `=` (level 1) or `-` (level 2). A heading ends any
  list.
- A bullet is a chunk: a line, at any indent, starting with `-`, `*`, `+`, `1.` or `1)` and then
  a space or the line's end. Its marker and a task box (`[ ]`, `[x]`) are not in its text; a
  bullet whose text opens a fence holds that fence. The lines right after it join it (at any
  indent, as CommonMark's lazy lines do) up to a blank line or the start of another block, and
  after blank lines so do lines indented to its text's column, until another bullet. A nested
  bullet (indented to its parent's text) is a chunk of its own: its `parents` are the first
  lines of the bullets it sits in, outermost first, the innermost `MAX_PARENTS` of them. A
  paragraph indented under a bullet after that bullet's nested ones is a chunk with that bullet
  among its parents.
- Prose is chunked by paragraph: a run of lines up to a blank line or the start of another block.
- A table is one chunk: a line holding `|` where a block starts, a delimiter row (`|---|:-:|`)
  under it, and every line after them up to a blank line or the start of another block.
- Fenced code (three or more "`" or "~", at any indent, an info string allowed; closed by a line
  of at least as many of the same character; unclosed, it runs to the end) is kept with its
  paragraph: it joins the block of the line above it, or the block before it when only blank
  lines are between, else it starts its own. Inside a fence nothing is a heading, bullet,
  comment or break, and a blank line ends nothing. The fence lines are not in the text.
- Skipped, and ending the block above them: HTML comment blocks (a line starting with `<!--`,
  through the line holding `-->`, or the end), thematic breaks (`---`, `***`, `___`, spaces
  allowed between).
- A chunk's `text` is one line: its lines' text joined with one space, whitespace runs collapsed,
  blockquote `>` markers and comments within a line dropped (not in code). A chunk with empty
  text (a bare `-`, an empty fence on its own) is dropped.
- A block longer than `MAX_CHUNK_CHARS` is split at line boundaries: each chunk's text is at
  most that long, unless one line alone is longer, and it is then a chunk by itself. Every chunk
  of a block has the block's headings and parents. A heading or parent is cut to
  `MAX_LABEL_CHARS` at a space.
- Chunk ranges are in text order, never overlap, and start and end on non-blank lines.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from memd.core.format import mdformat

__all__ = ["MAX_CHUNK_CHARS", "MAX_LABEL_CHARS", "MAX_PARENTS", "Chunk", "chunk", "split_lines"]

MAX_CHUNK_CHARS = 1500
"""The longest a chunk's text gets (unless one line is longer): about 250 words, so a long
paragraph is not one hit that matches every query by its size alone, and a hit stays readable.
Category entries are capped at 2000 (`limits.MAX_ENTRY_CHARS`)."""

MAX_LABEL_CHARS = 200
"""The longest a heading or parent label gets; it is repeated in every chunk below it."""

MAX_PARENTS = 3
"""How many enclosing bullets a nested bullet's chunk names (the innermost ones)."""

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t](.*))?")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t])#+[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_BULLET = re.compile(r"([ \t]*)([-*+]|[0-9]{1,9}[.)])(?:([ \t]+)(.*))?")
_TASK_BOX = re.compile(r"\[[ xX]\](?:[ \t]+|$)")
_DELIMITER_ROW = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_QUOTE = re.compile(r"[ \t]*>(?:[ \t]?>)*")

_Kind = Literal["bullet", "paragraph", "table"]


class Chunk(msgspec.Struct, frozen=True, kw_only=True):
    """One searchable piece of a source.

    Attributes:
        start: The 1-based number of its first line.
        end: The 1-based number of its last line (inclusive).
        headings: The texts of the headings above it, outermost first.
        parents: For a nested bullet (or a paragraph under one), the first lines of the bullets
            it sits in, outermost first; else empty.
        text: Its own text, on one line.
    """

    start: int
    end: int
    headings: tuple[str, ...]
    parents: tuple[str, ...]
    text: str

    @property
    def searchable(self) -> str:
        """The text to index: the heading path and parents, then the text (`A > B: text`)."""
        path = " > ".join((*self.headings, *self.parents))
        return f"{path}: {self.text}" if path else self.text


def split_lines(text: str) -> list[str]:
    """Return the lines of `text` without their endings, numbered as `chunk` numbers them."""
    return [line.text for line in mdformat.parse(text).lines]


def chunk(text: str) -> tuple[Chunk, ...]:
    """Return the chunks of the Markdown `text`, in order; never fails."""
    lines = split_lines(text)
    if lines:
        lines[0] = lines[0].removeprefix("\ufeff")
    chunker = _Chunker(lines)
    chunker.run()
    return tuple(part for block in chunker.blocks for part in _split(block))


@dataclass(eq=False)
class _Block:
    """The lines that make one chunk, or several if too long: (0-based index, text) for each
    non-blank line; the text is "" for lines that say nothing (fence lines, delimiter rows)."""

    kind: _Kind
    headings: tuple[str, ...]
    parents: tuple[str, ...]
    pieces: list[tuple[int, str]] = field(default_factory=list)
    fenced: bool = False


@dataclass(eq=False)
class _Item:
    """An open bullet: the column its text starts at, its label and its block."""

    column: int
    label: str
    block: _Block


class _Chunker:
    """The state of one pass: blocks so far, the heading path and the open bullets."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.blocks: list[_Block] = []
        self.headings: list[tuple[int, str]] = []
        self.items: list[_Item] = []
        self.current: _Block | None = None  # the block of the line just before
        self.previous: _Block | None = None  # the last block, when only blank lines came since

    def run(self) -> None:
        index = _front_matter_end(self.lines)
        handlers: tuple[Callable[[int, str], int | None], ...] = (
            self.comment,
            self.heading,
            self.setext,
            self.thematic_break,
            self.fence,
            self.bullet,
        )
        while index < len(self.lines):
            line = self.lines[index]
            if not line.strip():
                self.current = None
                index += 1
                continue
            for handler in handlers:
                after = handler(index, line)
                if after is not None:
                    index = after
                    break
            else:
                index = self.text(index, line)

    def comment(self, index: int, line: str) -> int | None:
        start = line.find("<!--")
        if start < 0 or line[:start].strip():
            return None
        self._close(_indent(line))
        end, at = index, start + 4
        while "-->" not in self.lines[end][at:] and end + 1 < len(self.lines):
            end, at = end + 1, 0
        return end + 1

    def heading(self, index: int, line: str) -> int | None:
        match = _ATX.fullmatch(line)
        if match is None:
            return None
        self._set_heading(len(match[1]), _CLOSING_HASHES.sub("", (match[2] or "").strip()))
        return index + 1

    def setext(self, index: int, line: str) -> int | None:
        block = self.current
        match = _SETEXT.fullmatch(line)
        if match is None or block is None or block.kind != "paragraph" or block.fenced:
            return None
        if self.items:  # a paragraph in a list: the line is text or a break
            return None
        self.blocks.pop()  # `current` is always the last block
        self._set_heading(1 if match[1][0] == "=" else 2, " ".join(t for _, t in block.pieces))
        return index + 1

    def thematic_break(self, index: int, line: str) -> int | None:
        if _BREAK.fullmatch(line) is None:
            return None
        self._close(_indent(line))
        return index + 1

    def fence(self, index: int, line: str) -> int | None:
        match = _FENCE.fullmatch(line)
        if match is None or (match[1][0] == "`" and "`" in match[2]):
            return None
        block = self.current
        if block is None:
            self._pop(_indent(line))
            block = self.previous
        if block is None:
            block = self._start("paragraph", index, "")
        else:
            block.pieces.append((index, ""))
        return self._read_fence(block, index + 1, match[1])

    def bullet(self, index: int, line: str) -> int | None:
        match = _BULLET.fullmatch(line)
        if match is None:
            return None
        marker_column = _width(match[1])
        self._pop(marker_column)
        rest = match[4] or ""
        gap = _width(match[3] or "")
        column = marker_column + len(match[2]) + (gap if rest.strip() and gap <= 4 else 1)
        fence = _FENCE.fullmatch(rest)
        if fence is not None and not (fence[1][0] == "`" and "`" in fence[2]):
            block = self._start("bullet", index, "")
            self.items.append(_Item(column, "", block))
            return self._read_fence(block, index + 1, fence[1])
        task = _TASK_BOX.match(rest.lstrip())
        text = _clean(rest.lstrip()[task.end() :] if task else rest)
        block = self._start("bullet", index, text)
        self.items.append(_Item(column, _label(text), block))
        return index + 1

    def text(self, index: int, line: str) -> int:
        if self.current is not None:  # a continuation line (CommonMark's "lazy" one too)
            self.current.pieces.append((index, _clean(line)))
            return index + 1
        self._pop(_indent(line))
        if self.items and self.items[-1].block is self.previous:  # more of the bullet above
            self.items[-1].block.pieces.append((index, _clean(line)))
            self.current = self.items[-1].block
            return index + 1
        following = self.lines[index + 1] if index + 1 < len(self.lines) else ""
        if "|" in line and "|" in following and _DELIMITER_ROW.fullmatch(following):
            self._start("table", index, _clean(line)).pieces.append((index + 1, ""))
            return index + 2
        self._start("paragraph", index, _clean(line))
        return index + 1

    def _start(self, kind: _Kind, index: int, text: str) -> _Block:
        """Open a new block at line `index` with `text`, under the current headings and
        bullets."""
        headings = tuple(text for _, text in self.headings if text)
        labels = (item.label for item in reversed(self.items) if item.label)
        parents = tuple(itertools.islice(labels, MAX_PARENTS))[::-1]
        block = _Block(kind, headings, parents, [(index, text)])
        self.blocks.append(block)
        self.current = self.previous = block
        return block

    def _read_fence(self, block: _Block, index: int, fence: str) -> int:
        """Add the lines of the fence `fence` from line `index` to `block`, through its closing
        line; return the index after it."""
        block.fenced = True
        self.current = self.previous = block
        while index < len(self.lines):
            code = self.lines[index].strip()
            if code and len(code) >= len(fence) and code == fence[0] * len(code):
                block.pieces.append((index, ""))
                return index + 1
            if code:
                block.pieces.append((index, " ".join(code.split())))
            index += 1
        return index

    def _set_heading(self, level: int, text: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, _label(_clean(text))))
        self.items.clear()
        self.current = self.previous = None

    def _close(self, indent: int) -> None:
        """End the block above a skipped line indented `indent`."""
        self._pop(indent)
        self.current = self.previous = None

    def _pop(self, indent: int) -> None:
        """Close the bullets a block starting at column `indent` is not inside."""
        while self.items and self.items[-1].column > indent:
            self.items.pop()


def _split(block: _Block) -> Iterator[Chunk]:
    """Yield the chunks of `block`: one, or several of at most `MAX_CHUNK_CHARS` each."""
    part: list[tuple[int, str]] = []
    size = 0
    for index, text in block.pieces:
        if text and size and size + 1 + len(text) > MAX_CHUNK_CHARS:
            yield _chunk(block, part)
            part, size = [], 0
        part.append((index, text))
        if text:
            size += len(text) + (1 if size else 0)
    if size:
        yield _chunk(block, part)


def _chunk(block: _Block, part: list[tuple[int, str]]) -> Chunk:
    return Chunk(
        start=part[0][0] + 1,
        end=part[-1][0] + 1,
        headings=block.headings,
        parents=block.parents,
        text=" ".join(text for _, text in part if text),
    )


def _front_matter_end(lines: list[str]) -> int:
    """Return the index of the first line after the front matter (0 if there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


def _clean(line: str) -> str:
    """Return the searchable text of a prose line: no quote markers or comments, one space."""
    quote = _QUOTE.match(line)
    if quote is not None:
        line = line[quote.end() :]
    return " ".join(_drop_comments(line).split())


def _drop_comments(line: str) -> str:
    """Return `line` with each `<!-- ... -->` in it made a space (in linear time: a regex would
    rescan the rest of the line after every unclosed `<!--`)."""
    start = line.find("<!--")
    if start < 0:
        return line
    kept: list[str] = []
    at = 0
    while start >= 0:
        end = line.find("-->", start + 4)
        if end < 0:
            break
        kept += (line[at:start], " ")
        at = end + 3
        start = line.find("<!--", at)
    kept.append(line[at:])
    return "".join(kept)


def _label(text: str) -> str:
    """Return `text` cut to `MAX_LABEL_CHARS` at a space (or hard, if it has none)."""
    if len(text) <= MAX_LABEL_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_LABEL_CHARS + 1)
    return text[: cut if cut > 0 else MAX_LABEL_CHARS]


def _indent(line: str) -> int:
    return _width(line[: len(line) - len(line.lstrip(" \t"))])


def _width(space: str) -> int:
    return len(space.expandtabs(4))
