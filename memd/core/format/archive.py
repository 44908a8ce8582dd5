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
