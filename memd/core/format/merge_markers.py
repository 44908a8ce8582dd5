"""Git's conflict markers in a category file: a file that has them is in the middle of a merge.

Rules:
- A marker is a line (its end trimmed) that is exactly seven `<`, `|` or `>` followed by nothing
  or a space and a label, or exactly seven `=`: what `git merge` writes (`|||||||` comes with
  merge.conflictStyle=diff3 or zdiff3).
- A file is mid-merge only if it has at least one `<<<<<<<` line and one `>>>>>>>` line after
  it: a lone `=======` is a Markdown heading underline, not a conflict.
- `without_markers` keeps every other line, so both sides' entries stay readable.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"(?:<{7}|\|{7}|>{7})(?: .*)?|={7}")


def is_marker(line: str) -> bool:
    """Return True if `line` (without its line ending) is a conflict-marker line."""
    return _MARKER.fullmatch(line.rstrip()) is not None


def conflict_lines(text: str) -> tuple[int, ...]:
    """Return the 1-based numbers of the conflict-marker lines of `text`, or () if it is not
    mid-merge."""
    if "<<<<<<<" not in text:  # the usual case: no regex over the whole file
        return ()
    lines = text.split("\n")
    found = tuple(
        number for number, line in enumerate(lines, start=1) if _MARKER.fullmatch(line.rstrip())
    )
    starts = [n for n in found if lines[n - 1].startswith("<<<<<<<")]
    ends = [n for n in found if lines[n - 1].startswith(">>>>>>>")]
    if not starts or not ends or max(ends) < min(starts):
        return ()
    return found


def without_markers(text: str, lines: tuple[int, ...]) -> str:
    """Return `text` without the lines numbered `lines` (1-based)."""
    dropped = set(lines)
    parts = text.split("\n")
    kept = [line for number, line in enumerate(parts, start=1) if number not in dropped]
    ended = len(parts) not in dropped  # the last piece has no "\n" after it
    return "\n".join(kept) if ended else "\n".join(kept) + "\n"
