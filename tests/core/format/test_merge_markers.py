"""Git conflict markers: what makes a category file mid-merge, and its entries without them."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.merge_markers import conflict_lines, without_markers

MERGED = (
    "# Decisions\n\n- [a] One.\n<<<<<<< HEAD\n- [db] SQLite.\n||||||| base\n=======\n"
    "- [db] Postgres.\n>>>>>>> theirs\n"
)


def test_a_conflict_hunk_is_found_with_every_marker_line() -> None:
    assert conflict_lines(MERGED) == (4, 6, 7, 9)


def test_without_markers_keeps_both_sides_entries() -> None:
    assert without_markers(MERGED, conflict_lines(MERGED)) == (
        "# Decisions\n\n- [a] One.\n- [db] SQLite.\n- [db] Postgres.\n"
    )


def test_a_heading_underline_or_a_lone_marker_is_not_a_merge() -> None:
    assert conflict_lines("Title\n=======\n- [a] One.\n") == ()
    assert conflict_lines("- [a] One.\n<<<<<<< HEAD\n- [b] Two.\n") == ()
    assert conflict_lines(">>>>>>> theirs\n- [a] One.\n<<<<<<< HEAD\n") == ()
    assert conflict_lines("- [a] <<<<<<< is not at the start.\n>>>>>>> x\n") == ()


_line = st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=12)


@given(st.lists(_line, max_size=8), st.lists(_line, max_size=8))
def test_removing_the_markers_keeps_every_other_line(ours: list[str], theirs: list[str]) -> None:
    ours = [line for line in ours if conflict_lines(f"<<<<<<< a\n{line}\n>>>>>>> b") == (1, 3)]
    theirs = [line for line in theirs if conflict_lines(f"<<<<<<< a\n{line}\n>>>>>>> b") == (1, 3)]
    text = "\n".join(["<<<<<<< HEAD", *ours, "=======", *theirs, ">>>>>>> theirs", ""])
    lines = conflict_lines(text)
    assert len(lines) == 3
    assert without_markers(text, lines) == "".join(line + "\n" for line in [*ours, *theirs])
