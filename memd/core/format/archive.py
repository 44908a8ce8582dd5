"""The archive: where memd puts every entry it removes, so nothing is ever silently lost.

Rules:
- The archive is `.memory/archive.md`, a file HackLM never reads as a category.
- Each removed entry becomes one line: `- <date> | <Category> | <reason> | [slug] content`, so it
  can be restored by copying the part after the third " | " back into its category file.
- A new archive file starts with ARCHIVE_HEADER.
- Once `archive.md` would pass the daemon's `max_archive_bytes`, it is renamed to
  `archive-YYYY-MM-DD.md` (`-2`, `-3`... if taken) and a new one starts; no archive is ever
  deleted. HackLM reads only its five category files, so none of these is read as memories.
"""

from __future__ import annotations

import msgspec

from memd.core.format.categories import Category

ARCHIVE_FILE = "archive.md"
ARCHIVE_HEADER = (
    "# Archive\n\n"
    "Memories removed by memd (deleted, merged or pruned). memd and HackLM never read this file"
    " as memories; copy a line's `- [slug] content` part back into its category file to restore"
    " it.\n\n"
)


class ArchivedEntry(msgspec.Struct, frozen=True, kw_only=True):
    """An entry removed from a category file, and why."""

    category: Category
    slug: str | None
    content: str
    reason: str


def archive_line(record: ArchivedEntry, *, date: str) -> str:
    """Return the archive line (without line ending) for `record`, dated `date` (YYYY-MM-DD)."""
    entry = f"[{record.slug}] {record.content}" if record.slug else record.content
    return f"- {date} | {record.category.name} | {record.reason} | {entry}"


class ArchiveLine(msgspec.Struct, frozen=True, kw_only=True):
    """One line of an archive read back: when, from which category, why, and the entry."""

    line: int
    date: str
    category: str
    """The category's name as written (it may be one this workspace no longer has)."""
    reason: str
    slug: str | None
    content: str


def parse_archive_line(text: str, line: int) -> ArchiveLine | None:
    """Read line `line` of an archive (`archive_line`'s format); None for any other line.

    Tolerant of hand edits: the first three " | " separate date, category and reason, the rest
    is the entry (`[slug] content`, or content alone); a line missing a part is no record.
    """
    if not text.startswith("- "):
        return None
    parts = text[2:].split(" | ", 3)
    if len(parts) != 4 or not all(part.strip() for part in parts):
        return None
    date, category, reason, entry = (part.strip() for part in parts)
    slug: str | None = None
    if entry.startswith("[") and "] " in entry:
        slug, _, rest = entry[1:].partition("] ")
        if rest.strip() and slug and " " not in slug:
            entry = rest.strip()
        else:
            slug = None
    return ArchiveLine(
        line=line, date=date, category=category, reason=reason, slug=slug, content=entry
    )


def archive_lines(text: str) -> tuple[ArchiveLine, ...]:
    """Every record of an archive file's text, in file order (its header and prose skipped)."""
    found = []
    for number, raw in enumerate(text.split("\n"), start=1):
        record = parse_archive_line(raw.removesuffix("\r"), number)
        if record is not None:
            found.append(record)
    return tuple(found)
