"""Properties of the three-way merge (issue 22), over generated edits of a generated base:
an unchanged side gives the other byte for byte, a file merged with itself is itself, swapping
sides keeps the entry set, the result always parses (markers exactly when it says it
conflicts), and no entry that only one changed side has is ever lost."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from memd.core.format import mdformat
from memd.core.format.merge_markers import conflict_lines
from memd.core.merge.archive import merge_archive
from memd.core.merge.entries import merge_entries
from memd.core.merge.lines import merge_lines
from tests.budget import examples

SLUGS = ["pnpm", "helm", "logs", "tz"]
SENTENCES = [
    "Use pnpm for installs.",
    "use  pnpm for installs.",
    "Use Bun for installs.",
    "Deploy with Helm.",
    "Logs go to journald.",
    "Store times in UTC.",
    "Never push to main.",
]
OTHER_LINES = ["# Decisions", "", "", "Prose about the project.", "  - indented", "## Notes", "   "]

entry_line = st.one_of(
    st.builds(lambda s, t: f"- [{s}] {t}", st.sampled_from(SLUGS), st.sampled_from(SENTENCES)),
    st.builds(lambda t: f"- {t}", st.sampled_from(SENTENCES)),
)
any_line = st.one_of(entry_line, st.sampled_from(OTHER_LINES))
Lines = list[tuple[str, str]]
line_with_end = st.tuples(any_line, st.sampled_from(["\n", "\n", "\r\n"]))


def render(lines: Lines, final: bool) -> str:
    text = "".join(t + e for t, e in lines)
    return text if final or not lines else text[: -len(lines[-1][1])]


@st.composite
def edited(draw: st.DrawFn, base: Lines) -> Lines:
    """`base` with some lines kept, dropped or replaced, and new lines inserted."""
    out: Lines = []
    for line in base:
        action = draw(st.sampled_from(["keep", "keep", "keep", "drop", "change", "add"]))
        if action == "add":
            out.append(draw(line_with_end))
        if action in ("keep", "add"):
            out.append(line)
        elif action == "change":
            out.append((draw(any_line), line[1]))
    out.extend(draw(st.lists(line_with_end, max_size=4)))
    return out


@st.composite
def three_versions(draw: st.DrawFn) -> tuple[str, str, str]:
    base = draw(st.lists(line_with_end, max_size=12))
    finals = draw(st.tuples(st.booleans(), st.booleans(), st.booleans()))
    ours, theirs = draw(edited(base)), draw(edited(base))
    return render(base, finals[0]), render(ours, finals[1]), render(theirs, finals[2])


def entry_set(text: str) -> set[tuple[str | None, str]]:
    return {(e.slug, e.content) for e in mdformat.entries(mdformat.parse(text))}


def line_texts(text: str) -> set[str]:
    return {line.text for line in mdformat.parse(text).lines}


def entry_texts(text: str) -> set[str]:
    doc = mdformat.parse(text)
    return {doc.lines[e.line - 1].text for e in mdformat.entries(doc)}


@given(three_versions())
def test_an_unchanged_side_gives_the_other_byte_for_byte(versions: tuple[str, str, str]) -> None:
    base, ours, theirs = versions
    assert merge_entries(base, base, theirs).text == theirs
    assert merge_entries(base, ours, base).text == ours
    assert merge_lines(base, base, theirs).text == theirs


@given(three_versions())
def test_a_file_merged_with_itself_is_itself(versions: tuple[str, str, str]) -> None:
    for text in versions:
        assert merge_entries(text, text, text).text == text
        assert merge_archive(text, text, text).text == text


@settings(max_examples=examples(300))
@given(three_versions())
def test_swapping_sides_keeps_the_entry_set(versions: tuple[str, str, str]) -> None:
    base, ours, theirs = versions
    one, other = merge_entries(base, ours, theirs), merge_entries(base, theirs, ours)
    assert entry_set(one.text) == entry_set(other.text)
    assert one.conflicted == other.conflicted


@settings(max_examples=examples(300))
@given(three_versions())
def test_the_result_parses_and_has_markers_exactly_when_it_conflicts(
    versions: tuple[str, str, str],
) -> None:
    for merge in (merge_entries, merge_lines, merge_archive):
        result = merge(*versions)
        assert mdformat.render(mdformat.parse(result.text)) == result.text
        assert bool(conflict_lines(result.text)) == result.conflicted
        lines = result.text.split("\n")
        assert all(lines[n - 1].rstrip("\r") == "<<<<<<< ours" for n in result.conflicts)


@settings(max_examples=examples(300))
@given(three_versions())
def test_no_entry_only_one_changed_side_has_is_lost(versions: tuple[str, str, str]) -> None:
    base, ours, theirs = versions
    merged = line_texts(merge_entries(base, ours, theirs).text)
    before = entry_texts(base)
    for side in (ours, theirs):
        assert entry_texts(side) - before <= merged


@settings(max_examples=examples(200))
@given(three_versions())
def test_the_plain_merge_never_loses_a_line_it_must_keep(versions: tuple[str, str, str]) -> None:
    base, ours, theirs = versions
    merged, before = line_texts(merge_lines(base, ours, theirs).text), line_texts(base)
    for side in (ours, theirs):
        assert line_texts(side) - before <= merged
