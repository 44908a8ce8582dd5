"""Newline-delimited frames, sans I/O: the daemon and both clients share this one decoder.

Rules:
- A frame is the bytes before a "\\n"; a trailing "\\r" is left in (JSON ignores it).
- Empty and whitespace-only lines are skipped.
- A frame longer than `max_frame` bytes raises `FrameTooLarge`, whether it arrived whole or in
  pieces; after that the stream is out of sync and the connection must be closed.
"""

from __future__ import annotations

DEFAULT_MAX_FRAME = 1024 * 1024


class FrameTooLarge(Exception):
    """Raised when a frame exceeds the decoder's size limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"A message was larger than the {limit}-byte limit.")
        self.limit = limit


class LineDecoder:
    """Split a byte stream into frames; feed it chunks of any size."""

    def __init__(self, *, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        """Add `data`; return the complete frames it finished, in order.

        Raises:
            FrameTooLarge: a frame (complete or not) is longer than `max_frame`.
        """
        self._buffer += data
        frames: list[bytes] = []
        start = 0
        while (end := self._buffer.find(b"\n", start)) != -1:
            frame = bytes(self._buffer[start:end])
            start = end + 1
            if len(frame) > self.max_frame:
                raise FrameTooLarge(self.max_frame)
            if frame.strip():
                frames.append(frame)
        del self._buffer[:start]
        if len(self._buffer) > self.max_frame:
            raise FrameTooLarge(self.max_frame)
        return frames

    @property
    def pending(self) -> int:
        """How many bytes of an unfinished frame are buffered."""
        return len(self._buffer)
