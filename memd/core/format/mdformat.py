"""Parse and render `.memory/*.md` category files without losing a byte.

Theory of operation: a file is a sequence of `Line`s, each its text plus its own line ending, so
rendering is concatenation and `render(parse(text)) == text` for every string. Entries are a
*view* over those lines (`entries(doc)`); edits replace, insert or remove whole lines and leave
every other line exactly as it was.

Rules (hacklm-spec.md §1.2, plus memd's own choices):
- The text is split on "\\n" only. A line ending is "\\n", "\\r\\n" or "" (last line, no newline).
- An entry is a line that starts at column 0 with "- " and has non-blank text after it. The text
  is trimmed; if it is "[slug]", whitespace, then more text, the entry has that slug.
- Everything else (headers, prose, blank lines, indented bullets, comments) is never changed.
- New lines use the file's own line ending (the first line's), so CRLF files stay CRLF.
- An update replaces its line in place. An insert goes right after the last entry; it gets a
  blank separator line unless the file's last two entries sit on adjacent lines. A removal also
  drops the blank line before it when that would otherwise leave two blank lines in a row.
"""

from __future__ import annotations

import re

import msgspec

from memd.core.format.categories import Category
from memd.core.text.memo import memo

_SLUGGED = re.compile(r"\[([^\]]+)\]\s+(.+)", re.DOTALL)


class Line(msgspec.Struct, frozen=True):
    """One line of a file: its text without the line ending, and the ending itself."""

    text: str
    eol: str


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """A memory: its 1-based line number, optional slug and one-line content."""

    line: int
    slug: str | None
    content: str


class Document(msgspec.Struct, frozen=True):
    """A whole category file as lines."""

    lines: tuple[Line, ...] = ()


def parse(text: str) -> Document:
    """Split `text` into lines, keeping each line's ending; never fails."""
    parts = text.split("\n")
    lines = [
        Line(part[:-1], "\r\n") if part.endswith("\r") else Line(part, "\n") for part in parts[:-1]
    ]
    if parts[-1]:
        lines.append(Line(parts[-1], ""))
    return Document(tuple(lines))


def render(doc: Document) -> str:
    """Return the file text for `doc`, byte for byte what `parse` was given if unchanged."""
    return "".join(line.text + line.eol for line in doc.lines)


def new_document(category: Category) -> Document:
    """Return the document a new file for `category` starts as (title and description)."""
    return parse(category.header)


_LINE_BUDGET = 4 << 20
"""Bytes of parsed lines kept (`memo.memo`), each charged 320 + 3 bytes a character (the line
and its content, a copy): re-reading a file parses only its changed lines, and old versions of
a rewritten file are not kept alive."""


@memo(_LINE_BUDGET, base=320, per_char=3)
def parse_entry_line(text: str) -> tuple[str | None, str] | None:
    """Return `(slug, content)` if `text` is an entry line, else None."""
    if not text.startswith("- "):
        return None
    raw = text[2:].strip()
    if not raw:
        return None
    match = _SLUGGED.fullmatch(raw)
    if match is None:
        return None, raw
    return match.group(1), match.group(2)


def entries(doc: Document) -> tuple[Entry, ...]:
    """Return every entry of `doc`, in file order."""
    found = []
    for number, line in enumerate(doc.lines, start=1):
        parsed = parse_entry_line(line.text)
        if parsed is not None:
            found.append(Entry(line=number, slug=parsed[0], content=parsed[1]))
    return tuple(found)


def format_entry(slug: str, content: str) -> str:
    """Return the canonical text of an entry line: `- [slug] content`."""
    return f"- [{slug}] {content}"


def line_ending(doc: Document) -> str:
    """Return the ending new lines get: the first line's, or "\\n" for an empty file."""
    for line in doc.lines:
        if line.eol:
            return line.eol
    return "\n"


def replace_line(doc: Document, number: int, text: str) -> Document:
    """Return `doc` with line `number` (1-based) holding `text`, keeping its line ending."""
    lines = list(doc.lines)
    old = lines[number - 1]
    lines[number - 1] = Line(text, old.eol)
    return Document(tuple(lines))


def insert_entry(
    doc: Document, text: str, *, found: tuple[Entry, ...] | None = None
) -> tuple[Document, int]:
    """Return `doc` with a new entry line `text`, and that line's 1-based number.

    `found` may pass `entries(doc)` when the caller already has it.
    """
    eol = line_ending(doc)
    lines = list(doc.lines)
    if lines and not lines[-1].eol:
        lines[-1] = Line(lines[-1].text, eol)
    if found is None:
        found = entries(doc)
    position = found[-1].line if found else len(lines)
    tight = len(found) >= 2 and found[-1].line == found[-2].line + 1
    new = [Line(text, eol)]
    if not tight and position > 0 and not is_blank(lines[position - 1]):
        new.insert(0, Line("", eol))
    lines[position:position] = new
    return Document(tuple(lines)), position + len(new)


def remove_line(doc: Document, number: int) -> Document:
    """Return `doc` without line `number` (1-based), and without a blank line that would double."""
    lines = list(doc.lines)
    index = number - 1
    before_blank = index > 0 and is_blank(lines[index - 1])
    after_blank = index + 1 >= len(lines) or is_blank(lines[index + 1])
    start = index - 1 if before_blank and after_blank else index
    del lines[start : index + 1]
    return Document(tuple(lines))


def is_blank(line: Line) -> bool:
    """Return True if `line` holds only whitespace."""
    return not line.text.strip()
