"""What a merge returns, and how its output is built: lines, git's conflict markers, endings.

Rules:
- A conflict is written the way `git merge` writes one (so `git mergetool` and editors see it):
  a `<<<<<<< ours` line, ours' lines, `=======`, theirs' lines, `>>>>>>> theirs`. One side may be
  empty (a deletion against a change). `memd.core.format.merge_markers` reads these shapes.
- Marker lines and lines added by the merge take the file's line ending (ours' first line's, as
  `mdformat.line_ending` says); every line keeps its own ending otherwise.
- Only the last line of the output may lack a line ending: a line that was last on its side and
  is followed by another in the output gets the file's ending (no two lines are ever glued).
- `MergeResult.conflicts` lists the 1-based line number of each `<<<<<<<` line the merge wrote.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from memd.core.format.mdformat import Document, Line, render

OURS_MARKER = "<<<<<<< ours"
SPLIT_MARKER = "======="
THEIRS_MARKER = ">>>>>>> theirs"


class MergeResult(msgspec.Struct, frozen=True, kw_only=True):
    """The merged text, and where the merge wrote conflict markers (empty: a clean merge)."""

    text: str
    conflicts: tuple[int, ...] = ()

    @property
    def conflicted(self) -> bool:
        """True if the text holds at least one conflict for a person to resolve."""
        return bool(self.conflicts)


class Output:
    """Lines being merged, in order; `insert_at` may splice a block in later (see `finish`)."""

    def __init__(self, eol: str) -> None:
        self.eol = eol
        self.lines: list[Line] = []
        self.starts: list[int] = []  # 0-based indexes of the `<<<<<<<` lines

    def add(self, lines: Iterable[Line]) -> None:
        """Append `lines` as they are."""
        self.lines.extend(lines)

    def conflict(self, ours: Iterable[Line], theirs: Iterable[Line]) -> None:
        """Append a conflict block between `ours` and `theirs` (see the module rules)."""
        self.starts.append(len(self.lines))
        self.lines.append(Line(OURS_MARKER, self.eol))
        self.lines.extend(ours)
        self.lines.append(Line(SPLIT_MARKER, self.eol))
        self.lines.extend(theirs)
        self.lines.append(Line(THEIRS_MARKER, self.eol))

    def splice(self, position: int, block: Output) -> None:
        """Insert `block`'s lines (and its conflicts) before line index `position`."""
        size = len(block.lines)
        self.lines[position:position] = block.lines
        moved = [start + size if start >= position else start for start in self.starts]
        self.starts = sorted([*moved, *(start + position for start in block.starts)])

    def finish(self) -> MergeResult:
        """Return the merged text, every line but the last ended (see the module rules)."""
        lines = [
            Line(line.text, self.eol) if not line.eol and number < len(self.lines) else line
            for number, line in enumerate(self.lines, start=1)
        ]
        text = render(Document(tuple(lines)))
        return MergeResult(text=text, conflicts=tuple(start + 1 for start in self.starts))
