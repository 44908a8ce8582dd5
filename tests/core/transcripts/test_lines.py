"""The JSON-lines reader: whole lines only, a cursor that resumes exactly, bad lines skipped."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from memd.core.transcripts.lines import complete_objects

objects = st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=8), max_size=3)


@given(st.lists(objects, max_size=8), st.data())
def test_reading_in_any_pieces_yields_each_object_once(
    found: list[dict[str, object]], data: st.DataObject
) -> None:
    text = b"".join(json.dumps(item).encode() + b"\n" for item in found)
    cut = data.draw(st.integers(0, len(text)))
    first = complete_objects(text[:cut])
    rest = complete_objects(text[first.consumed :], start=first.consumed)
    assert [o for _, o in first.objects + rest.objects] == found
    assert first.consumed + rest.consumed == len(text)
    assert all(text[offset - 1 : offset] == b"\n" for offset, _ in first.objects + rest.objects)


def test_an_unfinished_last_line_waits_unless_the_file_is_complete() -> None:
    data = b'{"a": 1}\n{"b": 2'
    assert [o for _, o in complete_objects(data).objects] == [{"a": 1}]
    assert complete_objects(data).consumed == len(b'{"a": 1}\n')
    assert complete_objects(data + b"}", final=True).objects[-1][1] == {"b": 2}


def test_bad_lines_are_skipped_and_counted() -> None:
    data = b'not json\n[1, 2]\n\xff\xfe\n\n{"ok": true}\n' + b'{"x": "' + b"y" * 50 + b'"}\n'
    read = complete_objects(data, max_line_bytes=40)
    assert [o for _, o in read.objects] == [{"ok": True}]
    assert read.skipped == 4
    assert read.consumed == len(data)
