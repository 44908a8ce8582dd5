"""Newline framing: chunking never changes the frames, and the size cap always holds."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd_client._framing import FrameTooLarge, LineDecoder

frames = st.lists(st.binary(max_size=50).map(lambda b: b.replace(b"\n", b"")), max_size=12)


def _feed_all(decoder: LineDecoder, chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    return out


@given(frames, st.data())
def test_splitting_the_stream_anywhere_gives_the_same_frames(
    messages: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(m + b"\n" for m in messages)
    whole = LineDecoder().feed(stream)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert _feed_all(LineDecoder(), pieces) == whole
    assert _feed_all(LineDecoder(), [bytes([b]) for b in stream]) == whole
    assert whole == [m for m in messages if m.strip()]


def test_blank_lines_are_skipped_and_partial_frames_wait() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b'\n  \r\n{"a":1}\n{"b"') == [b'{"a":1}']
    assert decoder.pending == 4
    assert decoder.feed(b":2}\n") == [b'{"b":2}']


@given(st.integers(1, 40), st.integers(0, 80), st.booleans())
def test_the_size_cap_holds_whole_or_in_pieces(limit: int, size: int, pieces: bool) -> None:
    stream = b"x" * size + b"\n"
    decoder = LineDecoder(max_frame=limit)
    chunks = [bytes([b]) for b in stream] if pieces else [stream]
    if size > limit:
        with pytest.raises(FrameTooLarge):
            _feed_all(decoder, chunks)
    else:
        assert _feed_all(decoder, chunks) == ([b"x" * size] if size else [])
