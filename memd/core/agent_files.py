"""The memd block in agent instruction files (AGENTS.md, CLAUDE.md, copilot-instructions.md).

Theory of operation: the file is split into lines with `mdformat.parse` (each line keeps its own
ending), the block is found by its marker lines, and only lines are inserted or replaced, so
`mdformat.render` returns every other byte exactly as it was.

Rules:
- A marker is a line that is exactly `START` or `END` once surrounding whitespace is stripped. A
  marker mentioned inside other text (say, in backticks) is prose, not a marker.
- A file holds no memd marker, or one `START` line followed later by one `END` line. Anything else
  (start without end, two starts, an end before or without a start, two ends) raises `BlockError`
  naming the line, and the file must not be changed.
- An existing block keeps its marker lines; only the lines between them are replaced.
- A new block goes right after HackLM's managed block (hacklm-spec.md §6: the first line holding
  its start marker through the next line holding its end marker), else at the end of the file. A
  blank line separates it from non-blank neighbours.
- New lines use the file's line ending (its first line's; "\\n" for an empty file). A file that
  did not end with a newline still does not.
"""

from __future__ import annotations

from memd.core.mdformat import Document, Line, line_ending, parse, render

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


class BlockError(ValueError):
    """Raised when a file's memd markers are malformed; `line` is the 1-based line to fix."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.line = line


def render_block(newline: str = "\n") -> str:
    """Return the whole block, start marker to end marker, each line ending in `newline`."""
    return "".join(text + newline for text in (START, *BODY, END))


def upsert_block(text: str) -> str:
    """Return `text` with the memd block added, or its inside brought up to date.

    Raises:
        BlockError: the memd markers in `text` are malformed; the message names the line.
    """
    lines = list(parse(text).lines)
    newline = _newline(text, lines)
    body = [Line(part, newline) for part in BODY]
    span = _find(lines)
    if span is not None:
        start, end = span
        lines[start : end - 1] = body  # the lines between the markers (0-based: start..end-2)
    else:
        block = [Line(START, newline), *body, Line(END, newline)]
        _insert(lines, _hacklm_end(lines), block, newline)
    return render(Document(tuple(lines)))


def find_block(text: str) -> tuple[int, int] | None:
    """Return the 1-based line numbers of the memd start and end markers, or None if absent.

    Raises:
        BlockError: the markers are malformed; the message names the line.
    """
    return _find(list(parse(text).lines))


def _find(lines: list[Line]) -> tuple[int, int] | None:
    start: int | None = None
    end: int | None = None
    for number, line in enumerate(lines, start=1):
        marker = line.text.strip()
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
        raise BlockError(
            f"line {start} holds {START} without a {END} after it; "
            "add the end marker below the block or delete the start marker",
            line=start,
        )
    return None if start is None or end is None else (start, end)


def _newline(text: str, lines: list[Line]) -> str:
    """Return the line ending new lines get (see `mdformat.line_ending`)."""
    if not any(line.eol for line in lines) and text.endswith("\r"):
        return "\r\n"  # the "\n" added after a lone line ending in "\r" makes it a CRLF line
    return line_ending(Document(tuple(lines)))


def _hacklm_end(lines: list[Line]) -> int:
    """Return the 0-based index of the line closing HackLM's block, else of the last line."""
    start = next((i for i, line in enumerate(lines) if HACKLM_START in line.text), None)
    if start is not None:
        for index in range(start + 1, len(lines)):
            if HACKLM_END in lines[index].text:
                return index
    return len(lines) - 1


def _insert(lines: list[Line], after: int, block: list[Line], newline: str) -> None:
    """Insert `block` after `lines[after]` (-1: at the top), blank-separated from neighbours."""
    if after >= 0 and not lines[after].eol:
        # The file's last line had no newline: it gets one, and the block's last line loses it.
        lines[after] = Line(lines[after].text, newline)
        block[-1] = Line(block[-1].text, "")
    if after + 1 < len(lines) and lines[after + 1].text.strip():
        block.append(Line("", newline))
    if after >= 0 and lines[after].text.strip():
        block.insert(0, Line("", newline))
    lines[after + 1 : after + 1] = block
