"""Complete JSON objects from the bytes of a JSON-lines file that may still be written.

Rules:
- A line ends at `\n`. The bytes after the last `\n` are an unfinished line: they are never
  parsed (unless `final`: the file is known to be complete) and `complete_objects` says how far
  it consumed, so the next read starts there (a byte-offset cursor; both agents' files only grow).
- A line that is blank, longer than `max_line_bytes`, not valid UTF-8 JSON, or not an object is
  skipped and counted; nothing here raises on the data.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

MAX_LINE_BYTES = 1 << 20
"""Longer lines (a tool's whole output) are skipped unparsed."""


class Read(NamedTuple):
    """What one call read: each object with the offset just past its line, how many bytes of
    `data` were consumed (whole lines only), and how many lines were skipped."""

    objects: list[tuple[int, dict[str, Any]]]
    consumed: int
    skipped: int


def complete_objects(
    data: bytes, *, start: int = 0, final: bool = False, max_line_bytes: int = MAX_LINE_BYTES
) -> Read:
    """The JSON objects on the complete lines of `data` (offsets counted from `start`, the
    position of `data` in its file); with `final`, an unterminated last line counts too."""
    objects: list[tuple[int, dict[str, Any]]] = []
    skipped = 0
    position = 0
    while position < len(data):
        end = data.find(b"\n", position)
        if end < 0:
            if not final:
                break
            end = len(data)
        line = data[position:end]
        position = min(end + 1, len(data))
        if not line.strip():
            continue
        found = _object(line) if len(line) <= max_line_bytes else None
        if found is None:
            skipped += 1
        else:
            objects.append((start + position, found))
    return Read(objects, position, skipped)


def _object(line: bytes) -> dict[str, Any] | None:
    try:
        found = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    return found if isinstance(found, dict) else None
