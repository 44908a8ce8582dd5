"""Entries and hits on the wire: every field sent, `tags` and `source` too (a JSON reader sees
one shape), while params leave out what is not given; replies of older daemons (no `tags`,
`source` or `match` at their defaults) still decode, and older clients decode the new replies.
`list` sends no `text` (only `get` of a read-only source's lines has one)."""

from __future__ import annotations

from typing import Literal

import msgspec
from hypothesis import given, strategies as st

from memd_client import protocol as p


def test_params_leave_out_tags_when_none_are_given() -> None:
    params = p.QueryParams(workspace="/w", query="x")
    assert b"tags" not in msgspec.json.encode(params)
    assert b"tags" not in msgspec.json.encode(p.ListParams(workspace="/w", tags=None))
    assert msgspec.json.encode(p.ListParams(workspace="/w", tags=["db"])).endswith(
        b'"tags":["db"]}'
    )


def test_entries_and_hits_carry_every_field_and_read_older_daemons_replies() -> None:
    info = p.EntryInfo(category="Quirk", file="quirks.md", line=5, slug=None, content="x")
    sent = msgspec.json.decode(msgspec.json.encode(info))
    assert (sent["tags"], sent["source"]) == ([], "memory")
    old = msgspec.json.decode(
        b'{"category":"Q","file":"q","line":1,"slug":null,"content":"x"}', type=p.EntryInfo
    )
    assert (old.tags, old.source) == ([], "memory")

    hit = p.QueryHit(category="Q", file="q", line=1, slug=None, content="x #db", score=1.0)
    sent = msgspec.json.decode(msgspec.json.encode(hit))
    assert (sent["tags"], sent["match"], sent["source"]) == ([], "keyword", "memory")
    hit.tags = ["db"]
    assert msgspec.json.decode(msgspec.json.encode(hit), type=p.QueryHit).tags == ["db"]
    old_hit = msgspec.json.decode(
        b'{"category":"Q","file":"q","line":1,"slug":null,"content":"x","score":0.5}',
        type=p.QueryHit,
    )
    assert (old_hit.source, old_hit.match, old_hit.path) == ("memory", "keyword", "")


class _OldEntryInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """`EntryInfo` as clients before this change decode it."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str
    tags: list[str] = []
    source: Literal["memory", "global"] = "memory"


class _OldEntriesResult(msgspec.Struct, kw_only=True):
    """`EntriesResult` as clients before this change decode `list` and `get` replies."""

    entries: list[_OldEntryInfo]
    unreadable: list[p.FileProblem] = []
    workspace: str = ""
    text: str = ""


class _OldQueryResult(msgspec.Struct, kw_only=True):
    """`QueryResult` as clients before `semantic_loading` decode it."""

    results: list[p.QueryHit]
    total: int
    mode: Literal["lexical", "hybrid"] = "lexical"


entries = st.lists(
    st.builds(
        p.EntryInfo,
        category=st.sampled_from(["Quirk", "Decision"]),
        file=st.sampled_from(["quirks.md", "decisions.md"]),
        line=st.integers(1, 10_000),
        slug=st.none() | st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        content=st.text(max_size=40),
        tags=st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), max_size=3),
        source=st.sampled_from(["memory", "global"]),
    ),
    max_size=5,
)


@given(entries)
def test_older_clients_decode_list_and_get_replies(listed: list[p.EntryInfo]) -> None:
    listing = msgspec.json.encode(p.ListResult(entries=listed, workspace="/w"))
    assert b'"text"' not in listing
    old = msgspec.json.decode(listing, type=_OldEntriesResult)
    assert [(e.line, e.source, e.tags) for e in old.entries] == [
        (e.line, e.source, e.tags) for e in listed
    ]
    got = msgspec.json.encode(p.EntriesResult(entries=listed, workspace="/w", text="lines"))
    assert msgspec.json.decode(got, type=_OldEntriesResult).text == "lines"
    # An older daemon's `list` reply, with its empty `text`, decodes as a `ListResult`.
    assert msgspec.json.decode(got, type=p.ListResult).entries == listed


@given(st.none() | st.builds(p.SemanticLoading, ready=st.integers(0, 9), total=st.integers(1, 9)))
def test_semantic_loading_is_additive(loading: p.SemanticLoading | None) -> None:
    result = p.QueryResult(results=[], total=0, semantic_loading=loading)
    assert msgspec.json.decode(msgspec.json.encode(result), type=_OldQueryResult).total == 0
    assert (
        msgspec.json.decode(b'{"results":[],"total":0}', type=p.QueryResult).semantic_loading
        is None
    )
