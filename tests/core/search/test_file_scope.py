"""What a call's file decides for scoped entries, why `memd why` says an entry was left out,
and layer B led by the file's scoped entries."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import prompt_block
from memd.core.search.file_scope import (
    NO_FILE,
    FileAt,
    file_at,
    fit,
    in_always_layer,
    why_given,
    why_not,
)

DB = "Dry-run migrations first. (paths: src/db/**)"
PLAIN = "Use UTC everywhere."
TYPO = "Sorted imports. (paths: see the guide)"


@pytest.mark.parametrize(
    ("content", "at", "expected"),
    [
        (PLAIN, NO_FILE, "everywhere"),
        (PLAIN, FileAt(True, "src/db/x.py"), "everywhere"),
        (TYPO, FileAt(True, "src/db/x.py"), "everywhere"),
        (DB, NO_FILE, "no-file"),
        (DB, FileAt(True, "src/db/x.py"), "matches"),
        (DB, FileAt(True, "src/api/x.py"), "elsewhere"),
        (DB, FileAt(True, None), "elsewhere"),  # a file outside the workspace
    ],
)
def test_fit(content: str, at: FileAt, expected: str) -> None:
    assert fit(content, at) == expected


def test_file_at() -> None:
    assert file_at(None, "/repo") == NO_FILE
    assert file_at("", "/repo") == NO_FILE
    assert file_at("/repo/src/db/x.py", "/repo") == FileAt(True, "src/db/x.py")
    assert file_at("/tmp/x.py", "/repo") == FileAt(True, None)


def test_layer_a_holds_a_scoped_rule_only_for_its_files() -> None:
    assert in_always_layer(DB, file_at("src/db/x.py", "/repo"))
    assert not in_always_layer(DB, file_at("src/api/x.py", "/repo"))
    assert not in_always_layer(DB, NO_FILE)
    assert in_always_layer(TYPO, NO_FILE)


@given(st.text(max_size=40), st.one_of(st.none(), st.text(max_size=20)))
def test_an_unscoped_entry_always_fits(words: str, file: str | None) -> None:
    content = words.replace("(path", "(p")
    assert in_always_layer(content, file_at(file, "/repo"))


def test_why_not() -> None:
    at = FileAt(True, "src/api/x.py")
    assert why_not(DB, at, always=True, score=None, floor=0.1) == (
        "scope",
        "scoped to src/db/**: not src/api/x.py",
    )
    assert why_not(DB, NO_FILE, always=False, score=None, floor=0.1)[0] == "scope"
    assert why_not(PLAIN, at, always=True, score=None, floor=0.1)[0] == "budget"
    assert why_not(PLAIN, at, always=False, score=0.5, floor=0.1)[0] == "budget"
    reason, detail = why_not(PLAIN, at, always=False, score=0.05, floor=0.1)
    assert reason == "score" and "0.050, below the floor 0.100" in detail
    assert why_not(PLAIN, at, always=False, score=None, floor=0.1)[0] == "score"
    assert "matches src/db/x.py" in why_given(DB, FileAt(True, "src/db/x.py"), "relevant")


def _entry(line: int, content: str) -> Entry:
    return Entry(line=line, slug=None, content=content)


def test_scoped_entries_lead_layer_b_whatever_their_score() -> None:
    scoped_quirk = _entry(3, "The replica lags. (paths: src/db/**)")
    strong = _entry(4, "Deploy with Helm.")
    block = prompt_block.build(
        [(Category.SECURITY, _entry(1, "No secrets."))],
        [(Category.DECISION, strong, 0.9), (Category.QUIRK, scoped_quirk, 0.01)],
        800,
        scoped=[(Category.QUIRK, scoped_quirk, 0.01)],
    )
    relevant = [placed.entry for placed in block.entries if placed.layer == "relevant"]
    assert relevant == [scoped_quirk, strong]  # first, once, though below the floor
    unranked = prompt_block.build([], [], 800, scoped=[(Category.QUIRK, scoped_quirk, None)])
    assert [placed.entry for placed in unranked.entries] == [scoped_quirk]
