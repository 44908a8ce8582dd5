"""Which merge a file under `.memory/` gets, by its name (git's `%P`).

Rules:
- A built-in category file (HackLM's `instructions.md`, `quirks.md`, `preferences.md`,
  `decisions.md`, `security.md`, and memd's `procedures.md`, `episodes.md`): the entry-aware
  merge (`entries`). A custom category's file (`memd.core.format.categories`) is merged by
  lines: the driver runs without the workspace's config.
- `archive.md`, or an archive moved aside (`archive-YYYY-MM-DD.md`, `archive-YYYY-MM-DD-2.md`):
  the union of records in date order (`archive`).
- Anything else, or no name at all: the plain line-level three-way merge (`lines`), which never
  drops a line either.
- Only the last part of the path counts (`/` or `\\` separated).
- A result holding a whole conflict-marker pair is a conflict, even when the merge itself wrote
  no marker (the sides' own lines made it): memd would read the file as mid-merge.
"""

from __future__ import annotations

import enum
import re

from memd.core.format.archive import ARCHIVE_FILE
from memd.core.format.categories import CATEGORY_FILES
from memd.core.format.merge_markers import conflict_lines
from memd.core.merge.archive import merge_archive
from memd.core.merge.entries import merge_entries
from memd.core.merge.lines import merge_lines
from memd.core.merge.result import MergeResult

_MOVED_ARCHIVE = re.compile(r"archive-\d{4}-\d{2}-\d{2}(?:-\d+)?\.md")


class Kind(enum.Enum):
    """How a file is merged."""

    ENTRIES = "entries"
    ARCHIVE = "archive"
    LINES = "lines"


def kind_of(path: str | None) -> Kind:
    """Return how the file at `path` (None: unknown) is merged (see the module rules)."""
    if not path:
        return Kind.LINES
    name = re.split(r"[/\\]", path)[-1]
    if name in CATEGORY_FILES:
        return Kind.ENTRIES
    if name == ARCHIVE_FILE or _MOVED_ARCHIVE.fullmatch(name):
        return Kind.ARCHIVE
    return Kind.LINES


_MERGES = {Kind.ENTRIES: merge_entries, Kind.ARCHIVE: merge_archive, Kind.LINES: merge_lines}


def merge_file(path: str | None, base: str, ours: str, theirs: str) -> MergeResult:
    """Return the three-way merge of the file at `path` (see the module rules)."""
    result = _MERGES[kind_of(path)](base, ours, theirs)
    if result.conflicted:
        return result
    found = conflict_lines(result.text)
    if not found:
        return result
    # The sides' own lines made a marker pair (each side held half of one, or an input was
    # mid-merge): memd reads the file as mid-merge, so git must not take it as resolved.
    first = result.text.split("\n")
    starts = tuple(n for n in found if first[n - 1].startswith("<<<<<<<"))
    return MergeResult(text=result.text, conflicts=starts)
