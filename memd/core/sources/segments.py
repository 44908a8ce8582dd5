"""Which read-only sources share one search index (a *segment*): few indexes keep a search
fast, and small segments keep a change cheap.

Rules:
- Segments are runs of consecutive files in path order (so equal scores still go by path,
  then line, across segments and within one).
- A file of at least `OWN_SEGMENT_BYTES` is a segment of its own: a change to it re-indexes
  only its own chunks (an append, only the new ones).
- Smaller files between two such files are grouped: a group ends after a file whose path
  hashes to a multiple of `GROUP_SPREAD`, or once it holds `MAX_GROUP_FILES` files. The ends
  depend on the paths alone, not on sizes, so a file growing or shrinking (but staying small)
  changes only its own group, and a file coming or going shifts the groups up to the next end.
"""

from __future__ import annotations

from collections.abc import Sequence

OWN_SEGMENT_BYTES = 256 * 1024
"""A source file this big or bigger has a search index of its own."""
GROUP_SPREAD = 16
"""About how many small files share one index (the paths' hashes decide where groups end)."""
MAX_GROUP_FILES = 64
"""The most files one group holds, whatever the hashes say."""


def segments(files: Sequence[tuple[str, int]]) -> list[list[str]]:
    """Return the segments of `files` (each a path and its size in bytes, in any order): lists
    of paths, in path order (see the module rules)."""
    found: list[list[str]] = []
    group: list[str] = []
    for path, size in sorted(files):
        if size >= OWN_SEGMENT_BYTES:
            if group:
                found.append(group)
                group = []
            found.append([path])
            continue
        group.append(path)
        if len(group) >= MAX_GROUP_FILES or _path_hash(path) % GROUP_SPREAD == 0:
            found.append(group)
            group = []
    if group:
        found.append(group)
    return found


def _path_hash(path: str) -> int:
    """FNV-1a (32-bit) of `path`'s UTF-8 bytes: the same on every run and machine."""
    value = 0x811C9DC5
    for byte in path.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value
