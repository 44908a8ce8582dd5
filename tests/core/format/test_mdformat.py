"""The category file format: byte-exact round trips, entry parsing, and line-preserving edits."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from memd.core.format import mdformat
from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Document, Entry
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(FIXTURES.glob("*.md")) if FIXTURES.is_dir() else []

# Lines a hand-edited or HackLM-written file may hold, including the tricky ones.
LINE_SAMPLES = [
    "# Decision",
    "Memories stored by HackLM Memory.",
    "",
    "   ",
    "## 2026-02-27",
    "- [no-emojis] No emojis in code.",
    "- plain entry without a slug",
    "- [slug]text-without-space",
    "- [slug]",
    "- [[x]] foo",
    "- [tree-item-id] [[tree-item-id-uniqueness]] Every TreeItem needs an id.",
    "  - indented bullet",
    "* star bullet",
    "-no-space",
    "- ",
    "-  ",
    "<!-- comment -->",
    "```",
    "Prose with → arrows — and {json: [1, 2]}",
    "- [x] backslash-backtick \\` in content",
]

line_text = st.one_of(
    st.sampled_from(LINE_SAMPLES),
    st.text(st.characters(blacklist_characters="\n"), max_size=40),
    st.builds(lambda s: "- " + s, st.text(st.characters(blacklist_characters="\n"), max_size=30)),
)
documents_text = st.builds(
    lambda lines, ends, last: "".join(t + e for t, e in zip(lines, ends, strict=False)) + last,
    st.lists(line_text, max_size=25),
    st.lists(st.sampled_from(["\n", "\r\n"]), min_size=25, max_size=25),
    st.sampled_from(["", "tail without newline", "\r"]),
)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_hacklm_fixture_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert mdformat.render(mdformat.parse(text)) == text


def test_hacklm_fixtures_parse_to_the_documented_counts() -> None:
    if not FIXTURE_FILES:
        pytest.skip("shared/data/hacklm-memory is not beside this checkout")
    counts = {
        p.name: len(mdformat.entries(mdformat.parse(p.read_text("utf-8")))) for p in FIXTURE_FILES
    }
    # Every column-0 "- " line of these files is an entry (the spec's 22/21 are another snapshot).
    assert counts == {
        "decisions.md": 15,
        "preferences.md": 10,
        "quirks.md": 5,
        "instructions.md": 1,
    }
    for path in FIXTURE_FILES:
        assert all(e.slug for e in mdformat.entries(mdformat.parse(path.read_text("utf-8"))))


@given(documents_text)
def test_any_text_round_trips(text: str) -> None:
    assert mdformat.render(mdformat.parse(text)) == text


@given(st.text())
def test_parse_is_total_and_exact_on_arbitrary_text(text: str) -> None:
    doc = mdformat.parse(text)
    assert mdformat.render(doc) == text
    for entry in mdformat.entries(doc):
        assert entry.content == entry.content.strip() and entry.content


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("- [no-emojis] No emojis in code.", ("no-emojis", "No emojis in code.")),
        ("- plain entry", (None, "plain entry")),
        ("-   spaced out   ", (None, "spaced out")),
        ("- [slug]text", (None, "[slug]text")),
        ("- [slug]", (None, "[slug]")),
        ("- [[x]] foo", (None, "[[x]] foo")),
        ("- [a] [[b]] c", ("a", "[[b]] c")),
        ("- [My Slug]\tcontent", ("My Slug", "content")),
        ("  - indented", None),
        ("* star", None),
        ("-x", None),
        ("- ", None),
        ("-   ", None),
        ("# Header", None),
    ],
)
def test_entry_line_rules(line: str, expected: tuple[str | None, str] | None) -> None:
    assert mdformat.parse_entry_line(line) == expected


def test_crlf_lines_parse_and_new_lines_stay_crlf() -> None:
    text = "# Decision\r\n\r\n- [a] First.\r\n"
    doc, line = mdformat.insert_entry(mdformat.parse(text), "- [b] Second.")
    assert mdformat.entries(mdformat.parse(text)) == (Entry(line=3, slug="a", content="First."),)
    assert mdformat.render(doc) == "# Decision\r\n\r\n- [a] First.\r\n\r\n- [b] Second.\r\n"
    assert line == 5


def test_insert_follows_hacklm_blank_line_style() -> None:
    doc = mdformat.new_document(Category.DECISION)
    doc, first = mdformat.insert_entry(doc, "- [a] One.")
    doc, second = mdformat.insert_entry(doc, "- [b] Two.")
    assert mdformat.render(doc) == (
        "# Decisions\n\nArchitectural commitments made in this project.\n\n"
        "- [a] One.\n\n- [b] Two.\n"
    )
    assert (first, second) == (5, 7)


def test_insert_into_a_tight_list_stays_tight_and_before_trailing_prose() -> None:
    text = "# Notes\n- [a] One.\n- [b] Two.\n\nSee also the wiki.\n"
    doc, line = mdformat.insert_entry(mdformat.parse(text), "- [c] Three.")
    assert (
        mdformat.render(doc)
        == "# Notes\n- [a] One.\n- [b] Two.\n- [c] Three.\n\nSee also the wiki.\n"
    )
    assert line == 4


def test_insert_adds_a_newline_to_an_unterminated_last_line() -> None:
    doc, _ = mdformat.insert_entry(mdformat.parse("# Quirk\n\n- [a] One."), "- [b] Two.")
    assert mdformat.render(doc) == "# Quirk\n\n- [a] One.\n\n- [b] Two.\n"


def test_replace_keeps_position_and_line_ending() -> None:
    doc = mdformat.parse("x\r\n- [a] Old.\r\ny\n")
    assert mdformat.render(mdformat.replace_line(doc, 2, "- [a] New.")) == "x\r\n- [a] New.\r\ny\n"


@pytest.mark.parametrize(
    ("text", "number", "expected"),
    [
        ("# T\n\n- [a] A.\n\n- [b] B.\n\n- [c] C.\n", 5, "# T\n\n- [a] A.\n\n- [c] C.\n"),
        ("# T\n\n- [a] A.\n\n- [b] B.\n", 5, "# T\n\n- [a] A.\n"),
        ("# T\n- [a] A.\n- [b] B.\nprose\n", 2, "# T\n- [b] B.\nprose\n"),
        ("- [a] A.\n\nprose\n", 1, "\nprose\n"),
    ],
)
def test_remove_drops_only_the_line_and_a_doubled_blank(
    text: str, number: int, expected: str
) -> None:
    assert mdformat.render(mdformat.remove_line(mdformat.parse(text), number)) == expected


@given(documents_text, st.data())
def test_edits_keep_every_other_non_blank_line(text: str, data: st.DataObject) -> None:
    doc = mdformat.parse(text)
    found = mdformat.entries(doc)
    others = _non_entry_lines(doc)
    inserted, _ = mdformat.insert_entry(doc, "- [new] New entry.")
    assert _non_entry_lines(inserted) == others
    if found:
        target = data.draw(st.sampled_from(found))
        assert _non_entry_lines(mdformat.remove_line(doc, target.line)) == others
        replaced = mdformat.replace_line(doc, target.line, "- [z] Replaced.")
        assert _non_entry_lines(replaced) == others
        assert len(mdformat.entries(replaced)) == len(found)


def _non_entry_lines(doc: Document) -> list[str]:
    return [
        line.text
        for line in doc.lines
        if line.text.strip() and mdformat.parse_entry_line(line.text) is None
    ]


def test_new_files_get_hacklm_headers() -> None:
    headers = {c: mdformat.render(mdformat.new_document(c)) for c in CATEGORIES}
    assert headers[Category.INSTRUCTION] == (
        "# Instructions\n\nHow Copilot should behave in this project.\n\n"
    )
    assert headers[Category.SECURITY].startswith("# Security\n\nRules that must NEVER be broken.")
    assert all(not mdformat.entries(mdformat.new_document(c)) for c in CATEGORIES)
