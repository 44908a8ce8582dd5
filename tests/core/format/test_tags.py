"""Inline #tags: what counts as a tag in content, and how a query's tags are normalised."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.tags import TAG_PATTERN, InvalidTag, normalize_tag, tags_of
from tests.budget import examples


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Run migrations in one transaction. #db #db-migrations", {"db", "db-migrations"}),
        ("#security Never log tokens.", {"security"}),
        ("Ship it with #v2 and #node.js on #team/backend.", {"v2", "node.js", "team/backend"}),
        ("snake #snake_case stays whole", {"snake_case"}),
        ("Case folds: #Perf #PERF #perf", {"perf"}),
        (
            "Trailing punctuation goes: #perf. #ci, #build! #lint? #fmt: #a-/ #b_",
            set("ab") | {"perf", "ci", "build", "lint", "fmt"},
        ),
        ("A version keeps its inner dots: #v2.1.", {"v2.1"}),
        (
            "Brackets and quotes open a tag: (#one) [#two] {#three} \"#four\" '#five'",
            {"one", "two", "three", "four", "five"},
        ),
        (
            "After a comma,#six or a semicolon;#seven or emphasis *#eight*",
            {"six", "seven", "eight"},
        ),
        ("Typographic quotes: “#nine” ‘#ten’ «#eleven»", {"nine", "ten", "eleven"}),
        ("Unicode letters count: #Übersetzung #café", {"übersetzung", "café"}),
        ("Fullwidth ＃ｄｂ is folded", {"db"}),
        ("A single letter is a tag: #x", {"x"}),
    ],
)
def test_tags_found(content: str, expected: set[str]) -> None:
    assert tags_of(content) == expected


@pytest.mark.parametrize(
    "content",
    [
        "No tags here.",
        "",
        "a#b inside a word",
        "page.html#intro and https://example.com/docs/#anchor and https://x.io#frag",
        "Issue refs: #1, #123 and (#42) are not tags.",
        "C# and F# are languages; so is C#.",
        "# a heading-like hash, ## and ### too",
        "##double and #-dash and #.dot and #_under and #/slash",
        "An HTML entity &#38; is not a tag",
        "An escaped \\#hash is not a tag",
        "Email-ish a@#b and path /#x and key=#y and 50%#z",
        "Code spans hide tags: `#include <stdio.h>` and ``grep '#x' ` y``",
    ],
)
def test_not_tags(content: str) -> None:
    assert tags_of(content) == frozenset()


def test_code_spans_hide_only_what_they_enclose() -> None:
    assert tags_of("`#inside` #outside") == {"outside"}
    assert tags_of("`unclosed #open") == {"open"}  # a lone backtick is just a character
    assert tags_of("``a`#b`` #c `#d`") == {"c"}  # a span closes on a run of its own length
    assert tags_of("```#x`` #y") == {"y"}  # ``` never closes; `#x` follows a backtick
    assert tags_of("```#x``` #y") == {"y"}


def test_tag_stops_at_other_punctuation() -> None:
    assert tags_of("#perf's worth it") == {"perf"}
    assert tags_of("#a#b") == {"a"}  # the second '#' follows a letter
    assert tags_of("#api(v1)") == {"api"}
    assert tags_of("#colour: #fafafa") == {"colour", "fafafa"}  # the documented false positive
    assert tags_of("#1e1e1e") == frozenset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("security", "security"),
        ("#security", "security"),
        ("  #Security ", "security"),
        ("DB-Migrations", "db-migrations"),
        ("perf.", "perf"),
        ("#v2.1", "v2.1"),
        ("team/backend", "team/backend"),
        ("Übersetzung", "übersetzung"),
        ("＃ＤＢ", "db"),
    ],
)
def test_normalize_tag(text: str, expected: str) -> None:
    assert normalize_tag(text) == expected


@pytest.mark.parametrize(
    "text", ["", "   ", "#", "##db", "1", "#123", "-db", "db migrations", "a#b", "é!"]
)
def test_normalize_tag_rejects_what_cannot_be_a_tag(text: str) -> None:
    with pytest.raises(InvalidTag) as caught:
        normalize_tag(text)
    message = str(caught.value)
    assert repr(text) in message
    assert "is not a tag" in message
    assert "'security'" in message  # an example of what works


def test_normalize_matches_content_tags() -> None:
    for written in ["#Security", "#DB-migrations.", "#Übersetzung", "#v2.1"]:
        (found,) = tags_of(f"Some rule {written}")
        assert normalize_tag(written) == found


_INTERESTING = st.sampled_from(list("#`aZé1-_./ \\:@&(,*“ＡＢ＃İǰß\u0301\u0307"))
_CONTENT = st.lists(st.one_of(_INTERESTING, st.characters()), max_size=60).map("".join)


@settings(max_examples=examples(500))
@given(_CONTENT)
def test_tags_of_never_raises_and_tags_are_folded_and_well_formed(content: str) -> None:
    tags = tags_of(content)
    assert isinstance(tags, frozenset)
    for tag in tags:
        assert TAG_PATTERN.fullmatch(tag), tag
        assert tag == tag.casefold()
        assert normalize_tag(tag) == tag  # every tag found in content can be asked for
        assert normalize_tag(f"#{tag}") == tag


@settings(max_examples=examples(300))
@given(_CONTENT)
def test_normalize_tag_returns_a_tag_or_raises_invalid_tag(text: str) -> None:
    try:
        tag = normalize_tag(text)
    except InvalidTag:
        return
    assert TAG_PATTERN.fullmatch(tag)
    assert tag == tag.casefold()
    assert normalize_tag(tag) == tag
