"""Line alignment for a three-way merge: which stretches of the three versions match.

Theory of operation: each version is a sequence of hashable line identities. Base is aligned
with ours and with theirs separately (common prefix and suffix first, `difflib.SequenceMatcher`
on what is left); a stretch of base that both alignments keep whole, at once in ours and in
theirs, is *stable*; what lies between two stable stretches is *unstable*: one side or both
changed it. This is diff3's (and `git merge-file`'s) chunking.

Rules:
- The regions cover the three sequences in order, with no gap and no overlap.
- A stable region has the same length in all three; an unstable one has any lengths, never all
  zero. Two stable regions may touch (a diff's matching blocks may); that changes no merge.
- Lines common to many places (blank lines) never anchor an alignment in a long middle
  (`SequenceMatcher`'s autojunk), but are matched beside the lines that do: an alignment costs
  about linear time, not the square of the blank lines.
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Sequence
from typing import NamedTuple


class Region(NamedTuple):
    """A stretch of the three versions: `stable` (all three match line for line) or not."""

    stable: bool
    base: range
    ours: range
    theirs: range


Block = tuple[int, int, int]
"""A matching block: (start in base, start in the other, length)."""


def matching(base: Sequence[Hashable], other: Sequence[Hashable]) -> list[Block]:
    """Return the blocks where `base` and `other` match, in order (no empty block)."""
    end = min(len(base), len(other))
    prefix = 0
    while prefix < end and base[prefix] == other[prefix]:
        prefix += 1
    suffix = 0
    while suffix < end - prefix and base[len(base) - 1 - suffix] == other[len(other) - 1 - suffix]:
        suffix += 1
    blocks: list[Block] = [(0, 0, prefix)] if prefix else []
    middle_base = base[prefix : len(base) - suffix]
    middle_other = other[prefix : len(other) - suffix]
    if middle_base and middle_other:
        matcher = difflib.SequenceMatcher(None, middle_base, middle_other)
        blocks += [
            (prefix + i, prefix + j, size) for i, j, size in matcher.get_matching_blocks() if size
        ]
    if suffix:
        blocks.append((len(base) - suffix, len(other) - suffix, suffix))
    return blocks


def regions(
    base: Sequence[Hashable], ours: Sequence[Hashable], theirs: Sequence[Hashable]
) -> list[Region]:
    """Return the stable and unstable regions of the three versions, in order."""
    in_ours, in_theirs = matching(base, ours), matching(base, theirs)
    syncs: list[tuple[int, int, int, int]] = []  # base start, base end, ours start, theirs start
    i = j = 0
    while i < len(in_ours) and j < len(in_theirs):
        base_a, ours_at, size_a = in_ours[i]
        base_b, theirs_at, size_b = in_theirs[j]
        low, high = max(base_a, base_b), min(base_a + size_a, base_b + size_b)
        if low < high:
            syncs.append((low, high, ours_at + low - base_a, theirs_at + low - base_b))
        if base_a + size_a < base_b + size_b:
            i += 1
        else:
            j += 1
    syncs.append((len(base), len(base), len(ours), len(theirs)))
    found: list[Region] = []
    at_base = at_ours = at_theirs = 0
    for low, high, ours_at, theirs_at in syncs:
        if at_base < low or at_ours < ours_at or at_theirs < theirs_at:
            found.append(
                Region(
                    False,
                    range(at_base, low),
                    range(at_ours, ours_at),
                    range(at_theirs, theirs_at),
                )
            )
        size = high - low
        if size:
            found.append(
                Region(
                    True,
                    range(low, high),
                    range(ours_at, ours_at + size),
                    range(theirs_at, theirs_at + size),
                )
            )
        at_base, at_ours, at_theirs = high, ours_at + size, theirs_at + size
    return found
