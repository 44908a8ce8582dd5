"""Dedup: HackLM's keyword Jaccard and thresholds, plus memd's negation-flip rule."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core import dedup, stemmer
from memd.core.dedup import Verdict
from memd.core.mdformat import Entry


def _entries(*contents: str) -> list[Entry]:
    return [Entry(line=i + 1, slug=f"e{i}", content=c) for i, c in enumerate(contents)]


def test_keywords_follow_hacklm_extraction() -> None:
    assert dedup.keywords("Use the lm.ts file, and fs.open() with wx!") == dedup.keywords(
        "lmts file fsopen wx"
    ) - {"wx"}
    assert "two-tier" in dedup.keywords("A two-tier lock")
    assert dedup.keywords("it is to be") == frozenset()


def test_stemming_joins_word_forms() -> None:
    assert (
        dedup.similarity("Writes go through the writer", "Writing goes through the writers") > 0.6
    )


def test_empty_keyword_sets_have_zero_similarity() -> None:
    assert dedup.jaccard(frozenset(), frozenset()) == 0.0
    assert dedup.similarity("it is", "to be") == 0.0


def test_normalised_equal_text_is_a_full_match() -> None:
    match = dedup.find_match("no emojis in code", _entries("Other thing.", "No emojis in code!"))
    assert match.verdict is Verdict.SKIP and match.similarity == 1.0
    assert match.entry is not None and match.entry.line == 2


@pytest.mark.parametrize(
    ("existing", "new", "verdict"),
    [
        (
            "Run tests with make test before pushing",
            "Run tests with make test before pushing!",
            Verdict.SKIP,
        ),
        ("Ruff and mypy run in make test", "Ruff and mypy run in make lint", Verdict.UPDATE),
        ("Ruff checks formatting", "Sockets live under the runtime directory", Verdict.STORE),
    ],
)
def test_thresholds(existing: str, new: str, verdict: Verdict) -> None:
    assert dedup.find_match(new, _entries(existing)).verdict is verdict


def test_first_of_equal_best_matches_wins() -> None:
    match = dedup.find_match(
        "alpha beta gamma", _entries("alpha beta gamma delta", "alpha beta gamma delta")
    )
    assert match.entry is not None and match.entry.line == 1


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Always use tabs for indentation", "Never use tabs for indentation"),
        ("Do commit the lock file", "Don't commit the lock file"),
        ("Do commit the lock file", "Do not commit the lock file"),
        ("Use print for debugging output", "Avoid print for debugging output"),
        ("Enable strict mode in mypy", "Disable strict mode in mypy"),
        ("Allow network access in tests", "Disallow network access in tests"),
        ("Keep the cache directory", "Remove the cache directory"),
        ("Tests must hit the real socket", "Tests must not hit the real socket"),
        ("Use tabs for indentation", "Never use tabs for indentation"),
        ("Commit lockfiles", "Don't commit lockfiles"),
        ("Commit lockfiles", "Do not commit lockfiles"),
    ],
)
def test_negation_flips_are_detected_both_ways(old: str, new: str) -> None:
    assert dedup.is_negation_flip(old, new)
    assert dedup.is_negation_flip(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Always use tabs", "Always use tabs, really"),
        ("Use tabs", "Use tabs and avoid spaces"),
        ("Tests must hit the socket", "Tests must hit the socket quickly"),
        ("Do not commit secrets", "Never commit secrets"),
    ],
)
def test_non_flips(old: str, new: str) -> None:
    assert not dedup.is_negation_flip(old, new)


def test_a_reversed_rule_is_never_skipped() -> None:
    match = dedup.find_match("Never use tabs.", _entries("Always use tabs."))
    assert match.similarity == 1.0
    assert match.verdict is Verdict.UPDATE and match.conflict


@given(st.text(max_size=60), st.text(max_size=60))
def test_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    assert dedup.similarity(a, b) == dedup.similarity(b, a)
    assert 0.0 <= dedup.similarity(a, b) <= 1.0


@given(st.from_regex(r"[a-z0-9-]{2,14}[0-9]", fullmatch=True))
def test_a_token_ending_in_a_digit_is_its_own_stem(token: str) -> None:
    """`keywords` skips the stemmer for such tokens; the stemmer agrees it changes nothing."""
    assert stemmer.stem(token) == token
    assert dedup.keywords(f"note {token}") == {"note", token}
