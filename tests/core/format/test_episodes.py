"""Episodes: the dated line format, read back tolerantly, byte-exact through mdformat."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.episodes import (
    episode_date,
    episode_outcome,
    episode_text,
    leading_date,
    render_episode,
    tag_body,
)
from memd.core.format.mdformat import entries, format_entry, insert_entry, parse, render
from memd.core.search.decay import age_days, decay_factor, episode_factor
from memd.core.writes.episode_store import episode_slug
from memd_client.errors import InvalidEntry
from tests.budget import examples

DAY = datetime.date(2026, 11, 20)
ISSUE_LINE = (
    "- [2026-11-20-migration-timeout] 2026-11-20: Migration 0042 timed out on the prod replica; "
    "batching the backfill fixed it. #outcome/fixed"
)


def test_the_issue_line_reads_back() -> None:
    (entry,) = entries(parse(ISSUE_LINE + "\n"))
    assert entry.slug == "2026-11-20-migration-timeout"
    assert episode_date(entry.slug, entry.content) == DAY
    assert episode_outcome(entry.content) == "fixed"
    assert episode_text(entry.content).startswith("Migration 0042 timed out")


def test_render_dates_the_text_and_appends_outcome_and_tags() -> None:
    content = render_episode(DAY, "  Migration 0042 timed\n out. ", "fixed", ["db", "#Deploy"])
    assert content == "2026-11-20: Migration 0042 timed out. #outcome/fixed #db #Deploy"


def test_render_keeps_a_date_the_text_gives_and_tags_it_already_has() -> None:
    content = render_episode(DAY, "2026-10-01: Disk filled up. #db", "worked around", ["db"])
    assert content == "2026-10-01: Disk filled up. #db #outcome/worked-around"


@pytest.mark.parametrize("bad", ["", "  ", "#", "123", "a b!", "ok`"])
def test_an_outcome_that_cannot_be_a_tag_is_refused(bad: str) -> None:
    with pytest.raises(InvalidEntry, match="cannot be a tag"):
        tag_body(bad, what="outcome")


def test_blank_text_is_refused() -> None:
    with pytest.raises(InvalidEntry, match="needs text"):
        render_episode(DAY, " \n ")


@pytest.mark.parametrize(
    ("slug", "content", "expected"),
    [
        (None, "2026-11-20: x", DAY),
        (None, "2026-11-20 x", DAY),
        (None, "2026-11-20", DAY),
        (None, "2026-11-20, on the replica", DAY),
        ("2026-11-20-x", "Someone removed the date by hand", DAY),
        (None, "No date at all", None),
        (None, "2026-13-45: impossible", None),
        (None, "20261120: not ISO", None),
        (None, "2026-11-201 too many digits", None),
        (None, "On 2026-11-20 the date is not first", None),
        ("deploy-x", "Undated, slug without a date", None),
    ],
)
def test_dates_are_read_tolerantly(slug: str | None, content: str, expected: object) -> None:
    assert episode_date(slug, content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("x #outcome/fixed", "fixed"),
        ("x #Outcome/FAILED.", "failed"),
        ("x #outcome/worked-around #outcome/fixed", "worked-around"),
        ("x `#outcome/fixed` in code", None),
        ("x #outcome/ with nothing", None),
        ("x outcome/fixed without a hash", None),
        ("x https://h/#outcome/fixed", None),
    ],
)
def test_outcomes_are_tags(content: str, expected: str | None) -> None:
    assert episode_outcome(content) == expected


def test_slug_starts_with_the_date_and_is_unique() -> None:
    content = render_episode(DAY, "Migration 0042 timed out on the prod replica.")
    first = episode_slug(content, set())
    assert first.startswith("2026-11-20-migration")
    assert episode_slug(content, {first}) == first + "-2"
    assert episode_slug("2026-11-20:", set()) == "2026-11-20-event"
    assert not episode_slug("No date here", set()).startswith("20")


_texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=80).filter(
    str.strip
)
_tag = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)


@settings(max_examples=examples(200))
@given(
    date=st.dates(datetime.date(1990, 1, 1), datetime.date(2100, 1, 1)),
    text=_texts,
    outcome=st.none() | _tag,
    tags=st.lists(_tag, max_size=3),
    prefix=st.text(max_size=40),
)
def test_round_trip_byte_exact_through_mdformat(
    date: datetime.date, text: str, outcome: str | None, tags: list[str], prefix: str
) -> None:
    content = render_episode(date, text, outcome, tags)
    slug = episode_slug(content, set())
    doc, _ = insert_entry(parse(prefix), format_entry(slug, content))
    written = render(doc)
    assert render(parse(written)) == written
    (entry,) = [e for e in entries(parse(written)) if e.slug == slug]
    assert entry.content == content
    if leading_date(" ".join(text.split())) is None:
        assert episode_date(entry.slug, entry.content) == date
    else:
        assert episode_date(entry.slug, entry.content) is not None
    if outcome is not None and f"#{OUTCOME}".lower() not in text.lower():
        assert episode_outcome(entry.content) == outcome


OUTCOME = "outcome/"


@settings(max_examples=examples(300))
@given(st.text(max_size=120), st.none() | st.text(max_size=30))
def test_reading_never_fails_on_hand_edits(content: str, slug: str | None) -> None:
    episode_date(slug, content)
    episode_outcome(content)
    episode_text(content)
    line = "- " + content
    assert render(parse(line)) == line


def test_decay_halves_per_half_life_and_leaves_undated_alone() -> None:
    assert decay_factor(0, 90) == 1.0
    assert decay_factor(90, 90) == pytest.approx(0.5)
    assert decay_factor(180, 90) == pytest.approx(0.25)
    assert decay_factor(None, 90) == 1.0
    assert age_days(DAY + datetime.timedelta(days=3), DAY) == 0
    assert episode_factor(None, "2026-08-22: x", DAY, 90) == pytest.approx(0.5)
    assert episode_factor(None, "undated", DAY, 90) == 1.0
    with pytest.raises(ValueError, match="positive"):
        decay_factor(1, 0)


@given(st.floats(0, 10_000), st.floats(0, 10_000), st.floats(1, 1000))
def test_decay_never_rises_with_age(young: float, extra: float, half_life: float) -> None:
    assert 0.0 <= decay_factor(young + extra, half_life) <= decay_factor(young, half_life) <= 1
