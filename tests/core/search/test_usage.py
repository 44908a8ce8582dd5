"""Usage signals: keys, recalls and stores, the bounded nudge, archive candidates."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import usage
from memd.core.search.ranking import build_index, search

NOW = 1_800_000_000.0
DAY = usage.DAY


def test_keys_follow_the_slug_else_the_content() -> None:
    with_slug = Entry(line=3, slug="use-tabs", content="Use tabs.")
    assert usage.key(Category.PREFERENCE, with_slug) == "Preference/use-tabs"
    moved = Entry(line=9, slug="use-tabs", content="Use tabs, always.")
    assert usage.key(Category.PREFERENCE, moved) == usage.key(Category.PREFERENCE, with_slug)
    bare = Entry(line=3, slug=None, content="Use tabs.")
    assert usage.key(Category.PREFERENCE, bare) == "Preference:Use tabs."


def test_recall_and_store_are_recorded() -> None:
    once = usage.recall(None, NOW)
    twice = usage.recall(once, NOW + 5)
    assert (twice.recalls, twice.recalled_at) == (2, NOW + 5)
    assert usage.store(twice, NOW + 9).stored_at == NOW + 9


def test_the_nudge_decays_with_a_90_day_half_life_and_grows_with_recalls() -> None:
    fresh = usage.store(None, NOW)
    assert usage.nudge(None, NOW) == 1.0
    assert usage.nudge(fresh, NOW) == 1.0 + usage.MAX_NUDGE / 2
    half = usage.nudge(fresh, NOW + 90 * DAY)
    assert abs((half - 1.0) - usage.MAX_NUDGE / 4) < 1e-12
    often = fresh
    for n in range(30):
        often = usage.recall(often, NOW + n)
    assert abs(usage.nudge(often, NOW + 30) - (1.0 + usage.MAX_NUDGE)) < 1e-6


@given(
    recalls=st.integers(0, 10_000),
    recalled=st.floats(0, NOW),
    stored=st.floats(0, NOW),
    now=st.floats(NOW, NOW * 2),
)
def test_the_nudge_is_bounded(recalls: int, recalled: float, stored: float, now: float) -> None:
    record = usage.Usage(recalls=recalls, recalled_at=recalled, stored_at=stored)
    assert 1.0 <= usage.nudge(record, now) <= 1.0 + usage.MAX_NUDGE


def test_unused_means_stored_long_ago_and_not_recalled_since() -> None:
    old = usage.store(None, NOW - 200 * DAY)
    assert usage.unused(old, NOW)
    assert not usage.unused(usage.recall(old, NOW - 10 * DAY), NOW)
    assert not usage.unused(usage.store(None, NOW - 10 * DAY), NOW)
    assert not usage.unused(None, NOW)


def test_usage_orders_near_equals_but_never_beats_a_clearly_better_match() -> None:
    entries = [
        Entry(line=1, slug="a", content="Deploy the web app with Helm"),
        Entry(line=2, slug="b", content="Deploy the web app with Helm"),
        Entry(line=3, slug="c", content="Deploy workers"),
    ]
    index = [(Category.DECISION, build_index(entries))]
    plain = search(index, "deploy web app helm", limit=3).hits
    favourite = usage.Usage(recalls=50, recalled_at=NOW, stored_at=NOW)

    def boost(category: Category, entry: Entry) -> float:
        return usage.nudge(favourite if entry.slug in ("b", "c") else None, NOW)

    nudged = search(index, "deploy web app helm", limit=3, boost=boost).hits
    assert [hit.entry.slug for hit in plain][:2] == ["a", "b"]
    assert [hit.entry.slug for hit in nudged][:2] == ["b", "a"]  # equal matches: usage decides
    assert nudged[-1].entry.slug == "c"  # a weak match stays below, however often recalled


def test_a_recall_long_ago_without_a_store_counts_as_unused() -> None:
    recalled_once = usage.recall(None, NOW - 400 * DAY)
    assert usage.unused(recalled_once, NOW)


def test_outcomes_are_counted_and_count_as_a_use() -> None:
    worked = usage.outcome(None, NOW, worked=True)
    failed = usage.outcome(worked, NOW + 5, worked=False)
    assert (failed.successes, failed.failures, failed.recalled_at) == (1, 1, NOW + 5)
    assert failed.recalls == 0
    assert usage.record_of(failed) == (1, 1)
    assert usage.record_of(None) == (0, 0)
