"""`tags` on the wire: additive, left out when there are none, so older peers see no change."""

from __future__ import annotations

import msgspec

from memd_client import protocol as p


def test_the_wire_omits_tags_when_none_are_given_or_carried() -> None:
    params = p.QueryParams(workspace="/w", query="x")
    assert b"tags" not in msgspec.json.encode(params)
    info = p.EntryInfo(category="Quirk", file="quirks.md", line=5, slug=None, content="x")
    assert b"tags" not in msgspec.json.encode(info)
    assert (
        msgspec.json.decode(
            b'{"category":"Q","file":"q","line":1,"slug":null,"content":"x"}', type=p.EntryInfo
        ).tags
        == []
    )
    assert b"tags" not in msgspec.json.encode(p.ListParams(workspace="/w", tags=None))
    assert msgspec.json.encode(p.ListParams(workspace="/w", tags=["db"])).endswith(
        b'"tags":["db"]}'
    )
    hit = p.QueryHit(category="Q", file="q", line=1, slug=None, content="x #db", score=1.0)
    assert b"tags" not in msgspec.json.encode(hit)
    hit.tags = ["db"]
    assert msgspec.json.decode(msgspec.json.encode(hit), type=p.QueryHit).tags == ["db"]
