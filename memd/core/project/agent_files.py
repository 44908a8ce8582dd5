"""The memd block in agent instruction files (AGENTS.md, CLAUDE.md, copilot-instructions.md).

Theory of operation: the file is split into lines, each keeping its own line ending ("\\r\\n",
"\\n" or a lone "\\r", as in CommonMark), so joining them gives back every byte. Fenced code
blocks are marked, the block is found by its marker lines outside them, and only whole lines are
inserted or replaced.

Rules:
- A marker is a line that is exactly `START` or `END` once surrounding whitespace is stripped. A
  marker mentioned inside other text (say, in backticks) is prose, not a marker.
- A line inside a fenced code block is text, never a marker (memd's or HackLM's). A fence opens
  with a line of at least three "`" or "~" (any indentation, so fences in list items count too),
  then an optional info string (holding no "`" after a "`" fence); it closes with a line of the
  same character, at least as many, and nothing but spaces or tabs around them. An unclosed
  fence runs to the end of the file (CommonMark).
- A file holds no memd marker, or one `START` line followed later by one `END` line. Anything else
  (start without end, two starts, an end before or without a start, two ends) raises `BlockError`
  naming the line, and the file must not be changed.
- An existing block keeps its marker lines; only the lines between them are replaced.
- A new block goes right after HackLM's managed block (hacklm-spec.md §6: the first line holding
  its start marker through the next line holding its end marker), else at the end of the file. A
  block that would go at the end of a file ending inside an unclosed fence would be code there,
  so that raises `BlockError` naming the fence's line.
- New lines end in the file's newline: its first line ending ("\\n" if it has none).
- Adding a block changes no existing byte; it only adds: the block, one blank line between the
  block and each neighbouring line that is not blank, and, when the block follows a last line
  without a line ending, that line's ending (the block's own last line then has none, so a file
  that did not end with a newline still does not).
- A blank line added after a line ending in a lone "\\r" ends in "\\r" too, and a block line
  ending in "\\r" that comes right before a blank "\\n" line ends in "\\r\\n": so no added
  ending ever reads as one "\\r\\n" with its neighbour's, and none is "\\r\\r\\n".
"""

from __future__ import annotations

import re

from memd.core.format.mdformat import Line

START = "<!-- memd:start -->"
END = "<!-- memd:end -->"
HACKLM_START = "<!-- hacklm-memory:start -->"
HACKLM_END = "<!-- hacklm-memory:end -->"

# The text between the markers. Plain Markdown, for any agent that reads its instruction file.
BODY: tuple[str, ...] = (
    "## Project memory (memd)",
    "",
    "This project keeps durable lessons in `.memory/*.md`, shared by all agents through memd.",
    "",
    "- **Query** at the start of a task, before a decision, and whenever you are unsure about a "
    "project convention: MCP `queryMemory {query, category?, limit?}`, or `memd query WORDS`.",
    "- **Store** a durable lesson, decision, preference, quirk or security rule when you learn it: "
    'MCP `storeMemory {category, content, slug?}`, or `memd store -c Category "..."`. One '
    "sentence; never a secret. The same slug updates an entry.",
    "- Also: `getMemory` (entries by slug), `memoryStats` (counts), `cleanupMemory` (merge and "
    "prune), `memoryContext` (a block for your prompt; CLI `memd context`).",
    "",
    "Categories:",
    "- **Instruction**: how to behave in this project.",
    "- **Quirk**: non-obvious project weirdness and its workaround.",
    "- **Preference**: style, tone, naming and design choices.",
    "- **Decision**: architectural commitments and their reasons.",
    "- **Security**: rules that must never be broken.",
    "",
    "ALWAYS honour every Security and Instruction entry (`.memory/security.md`, "
    "`.memory/instructions.md`), even when a query does not return it.",
)

_LINE_ENDING = re.compile(r"\r\n|\r|\n")
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")


class BlockError(ValueError):
    """Raised when a file's memd markers are malformed; `line` is the 1-based line to fix."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.line = line


class _Fences:
    """Which lines of a file are inside fenced code blocks (fence lines included)."""

    def __init__(self, lines: list[Line]) -> None:
        self.inside: list[bool] = []
        self.unclosed: tuple[int, str] | None = None  # 0-based line and fence of an open fence
        fence: str | None = None
        for index, line in enumerate(lines):
            if fence is None:
                opening = _FENCE_OPEN.fullmatch(line.text)
                if opening and not (opening[1][0] == "`" and "`" in opening[2]):
                    fence, self.unclosed = opening[1], (index, opening[1])
            else:
                closing = line.text.strip(" \t")
                if len(closing) >= len(fence) and closing == fence[0] * len(closing):
                    fence = None
                    self.inside.append(True)
                    continue
            self.inside.append(fence is not None)
        if fence is None:
            self.unclosed = None


def render_block(newline: str = "\n") -> str:
    """Return the whole block, start marker to end marker, each line ending in `newline`."""
    return "".join(text + newline for text in (START, *BODY, END))


def upsert_block(text: str) -> str:
    """Return `text` with the memd block added, or its inside brought up to date.

    Raises:
        BlockError: the memd markers in `text` are malformed, or the block would have to go
            inside a code fence that is never closed; the message names the line.
    """
    lines = _split(text)
    fences = _Fences(lines)
    newline = next((line.eol for line in lines if line.eol), "\n")
    body = [Line(part, newline) for part in BODY]
    span = _find(lines, fences)
    if span is not None:
        start, end = span
        lines[start : end - 1] = body  # the lines between the markers (0-based: start..end-2)
    else:
        after = _hacklm_end(lines, fences)
        if fences.unclosed is not None and after >= fences.unclosed[0]:
            number, fence = fences.unclosed[0] + 1, fences.unclosed[1]
            raise BlockError(
                f"line {number} opens a {fence} code fence that is never closed, so a memd block "
                f"added at the end of the file would be code inside it; close the fence with a "
                f"{fence} line",
                line=number,
            )
        block = [Line(START, newline), *body, Line(END, newline)]
        _insert(lines, after, block, newline)
    return "".join(line.text + line.eol for line in lines)


def find_block(text: str) -> tuple[int, int] | None:
    """Return the 1-based line numbers of the memd start and end markers, or None if absent.

    Lines are counted as `upsert_block` counts them (a lone "\\r" ends a line too).

    Raises:
        BlockError: the markers are malformed; the message names the line.
    """
    lines = _split(text)
    return _find(lines, _Fences(lines))


def _split(text: str) -> list[Line]:
    """Split `text` into lines, each with its ending ("" for a last line without one)."""
    lines = []
    position = 0
    for ending in _LINE_ENDING.finditer(text):
        lines.append(Line(text[position : ending.start()], ending[0]))
        position = ending.end()
    if position < len(text):
        lines.append(Line(text[position:], ""))
    return lines


def _find(lines: list[Line], fences: _Fences) -> tuple[int, int] | None:
    start: int | None = None
    end: int | None = None
    for number, line in enumerate(lines, start=1):
        marker = "" if fences.inside[number - 1] else line.text.strip()
        if marker == START:
            if start is not None:
                raise BlockError(
                    f"line {number} holds a second {START} (the first is on line {start}); "
                    "delete one memd block",
                    line=number,
                )
            start = number
        elif marker == END:
            if end is not None:
                raise BlockError(
                    f"line {number} holds a second {END} (the block ends on line {end}); "
                    "delete the extra marker",
                    line=number,
                )
            if start is None:
                raise BlockError(
                    f"line {number} holds {END} without a {START} before it; "
                    "delete that line or add the start marker above the block",
                    line=number,
                )
            end = number
    if start is not None and end is None:
        raise BlockError(_missing_end(start, fences), line=start)
    return None if start is None or end is None else (start, end)


def _missing_end(start: int, fences: _Fences) -> str:
    """Return the message for a start marker on line `start` (1-based) with no end after it."""
    message = f"line {start} holds {START} without a {END} after it"
    if fences.unclosed is not None and fences.unclosed[0] >= start:
        number, fence = fences.unclosed[0] + 1, fences.unclosed[1]
        return (
            f"{message} (line {number} opens a {fence} code fence that is never closed, so the "
            f"lines after it are code); close the fence with a {fence} line, or delete the "
            "start marker"
        )
    return f"{message}; add the end marker below the block or delete the start marker"


def _hacklm_end(lines: list[Line], fences: _Fences) -> int:
    """Return the 0-based index of the line closing HackLM's block, else of the last line."""
    outside = [i for i in range(len(lines)) if not fences.inside[i]]
    start = next((i for i in outside if HACKLM_START in lines[i].text), None)
    if start is not None:
        for index in outside:
            if index > start and HACKLM_END in lines[index].text:
                return index
    return len(lines) - 1


def _insert(lines: list[Line], after: int, block: list[Line], newline: str) -> None:
    """Insert `block` after `lines[after]` (-1: at the top), blank-separated from neighbours."""
    if after >= 0 and not lines[after].eol:
        # The file's last line had no newline: it gets one, and the block's last line loses it.
        lines[after] = Line(lines[after].text, newline)
        block[-1] = Line(block[-1].text, "")
    following = lines[after + 1] if after + 1 < len(lines) else None
    if following is not None and following.text.strip():
        block.append(Line("", newline))
    elif following == Line("", "\n") and block[-1].eol == "\r":
        block[-1] = Line(block[-1].text, "\r\n")  # "\r" then "\n" would be one "\r\n"
    if after >= 0 and lines[after].text.strip():
        block.insert(0, Line("", "\r" if lines[after].eol == "\r" else newline))
    lines[after + 1 : after + 1] = block
