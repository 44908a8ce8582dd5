"""The plain three-way merge of a text, line by line: `git merge-file`'s rule.

Rules:
- Lines are compared by their text; a line's ending is merged like a value (the side that
  changed it wins; changed on both sides, ours).
- In each unstable region (`diff3.regions`): a side equal to base takes the other side; two
  equal sides take either; otherwise the region is a conflict, written with both sides whole.
- A text equal to base on one side merges to the other side byte for byte; equal sides merge to
  ours. No line of ours or theirs is ever dropped unless the other side kept it as base had it.
"""

from __future__ import annotations

from memd.core.format.mdformat import Line, line_ending, parse
from memd.core.merge.diff3 import regions
from memd.core.merge.result import MergeResult, Output


def shortcut(base: str, ours: str, theirs: str) -> MergeResult | None:
    """Return the merge when one side did not change base (or both made the same change)."""
    if ours in (base, theirs):
        return MergeResult(text=theirs)
    if theirs == base:
        return MergeResult(text=ours)
    return None


def three_way(base: Line, ours: Line, theirs: Line) -> Line:
    """Return the merged value of one line matched in all three versions."""
    if ours == base:
        return theirs
    return ours


def merge_lines(base: str, ours: str, theirs: str) -> MergeResult:
    """Return the line-level three-way merge of `ours` and `theirs` from `base`."""
    done = shortcut(base, ours, theirs)
    if done is not None:
        return done
    o, a, b = parse(base).lines, parse(ours).lines, parse(theirs).lines
    out = Output(line_ending(parse(ours)))
    texts = ([line.text for line in o], [line.text for line in a], [line.text for line in b])
    for region in regions(*texts):
        base_part = [o[i] for i in region.base]
        ours_part = [a[i] for i in region.ours]
        theirs_part = [b[i] for i in region.theirs]
        if region.stable:
            out.add(map(three_way, base_part, ours_part, theirs_part))
        elif ours_part == base_part:
            out.add(theirs_part)
        elif theirs_part in (base_part, ours_part):
            out.add(ours_part)
        else:
            out.conflict(ours_part, theirs_part)
    return out.finish()
