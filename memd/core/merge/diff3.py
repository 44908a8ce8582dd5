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
- Lines found exactly once in both versions (every entry: identities are numbered by
  occurrence) anchor the alignment, the longest run of them in the same order (patience diff);
  `SequenceMatcher` aligns only what lies between two anchors. So an alignment costs about
  n log n, however many blank lines one side adds or removes between entries.
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
        blocks += [
            (prefix + i, prefix + j, size) for i, j, size in _middle(middle_base, middle_other)
        ]
    if suffix:
        blocks.append((len(base) - suffix, len(other) - suffix, suffix))
    return blocks


def _middle(base: Sequence[Hashable], other: Sequence[Hashable]) -> list[Block]:
    """The matching blocks of two middles: anchored on the lines found exactly once in each
    (the longest run of them in the same order, patience diff's way), `SequenceMatcher` only
    between two anchors. Entry lines are unique (numbered by occurrence), so the gaps are short
    and an alignment costs about n log n however the blank lines between entries change."""
    anchors = _anchors(base, other)
    blocks: list[Block] = []
    at_base = at_other = 0
    for i, j in [*anchors, (len(base), len(other))]:
        if at_base < i and at_other < j:
            matcher = difflib.SequenceMatcher(None, base[at_base:i], other[at_other:j])
            blocks += [
                (at_base + a, at_other + b, size)
                for a, b, size in matcher.get_matching_blocks()
                if size
            ]
        if i < len(base):
            blocks.append((i, j, 1))
        at_base, at_other = i + 1, j + 1
    merged: list[Block] = []
    for i, j, size in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + size)
        else:
            merged.append((i, j, size))
    return merged


def _anchors(base: Sequence[Hashable], other: Sequence[Hashable]) -> list[tuple[int, int]]:
    """The (base, other) positions of lines found exactly once in each, the longest run of
    them in the same order in both."""
    seen: dict[Hashable, list[int]] = {}
    for position, line in enumerate(base):
        seen.setdefault(line, [0, -1, -1])
        seen[line][0] += 1
        seen[line][1] = position
    for position, line in enumerate(other):
        found = seen.get(line)
        if found is not None and found[0] == 1:
            found[2] = position if found[2] == -1 else -2  # -2: more than once in `other`
    pairs = sorted((i, j) for count, i, j in seen.values() if count == 1 and j >= 0)
    # The longest increasing run of `other` positions (patience sorting, with back links).
    tails: list[int] = []  # tails[k]: index into pairs of the smallest end of a run of k + 1
    back: list[int] = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = _place(tails, pairs, j)
        if k:
            back[index] = tails[k - 1]
        if k == len(tails):
            tails.append(index)
        else:
            tails[k] = index
    run: list[tuple[int, int]] = []
    index = tails[-1] if tails else -1
    while index != -1:
        run.append(pairs[index])
        index = back[index]
    run.reverse()
    return run


def _place(tails: list[int], pairs: list[tuple[int, int]], j: int) -> int:
    """Where `j` goes among the runs' ends (binary search)."""
    low, high = 0, len(tails)
    while low < high:
        middle = (low + high) // 2
        if pairs[tails[middle]][1] < j:
            low = middle + 1
        else:
            high = middle
    return low


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
