"""Consolidation of episodes: archive old unrecalled ones, promote recurring lessons, lose none."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry, entries, format_entry, insert_entry, new_document
from memd.core.writes.consolidation import (
    apply_consolidation,
    event_words,
    plan_consolidation,
    similar,
)
from tests.budget import examples

TODAY = datetime.date(2026, 11, 28)


def _entry(line: int, slug: str | None, content: str) -> Entry:
    return Entry(line=line, slug=slug, content=content)


def _days_ago(days: int) -> str:
    return (TODAY - datetime.timedelta(days=days)).isoformat()


def test_old_unrecalled_episodes_are_archived_with_a_reason() -> None:
    old = _entry(1, "old", f"{_days_ago(200)}: The CI cache filled the disk. #outcome/fixed")
    recalled = _entry(2, "kept", f"{_days_ago(300)}: Staging DNS expired.")
    young = _entry(3, "young", f"{_days_ago(10)}: A flaky login test.")
    undated = _entry(4, None, "Someone wrote this by hand without a date.")
    plan = plan_consolidation(
        Category.EPISODE,
        [old, recalled, young, undated],
        today=TODAY,
        max_age_days=180,
        last_recalled={2: TODAY - datetime.timedelta(days=30)},
    )
    assert [a.entry for a in plan.archive] == [old]
    assert plan.archive[0].age_days == 200
    assert "200 days old" in plan.archive[0].reason and "never recalled" in plan.archive[0].reason
    assert " | " not in plan.archive[0].reason
    assert plan.promote == ()


def test_a_recall_older_than_the_age_does_not_keep_an_episode() -> None:
    old = _entry(1, "old", f"{_days_ago(400)}: The CI cache filled the disk.")
    plan = plan_consolidation(
        Category.EPISODE,
        [old],
        today=TODAY,
        last_recalled={1: TODAY - datetime.timedelta(days=200)},
    )
    assert "last recalled" in plan.archive[0].reason


def test_rules_are_never_consolidated_by_age() -> None:
    for category in (Category.SECURITY, Category.INSTRUCTION, Category.QUIRK):
        with pytest.raises(ValueError, match="Only episode categories"):
            plan_consolidation(category, [], today=TODAY)


TIMEOUTS = [
    "Migration 0042 timed out on the prod replica; batching the backfill fixed it.",
    "Migration 0043 timed out on prod again; batching the backfill fixed it.",
    "The backfill migration timed out on the prod replica until we batched it.",
]


def test_three_similar_episodes_promote_one_quirk_naming_them() -> None:
    episodes = [
        _entry(n + 1, f"{_days_ago(30 - n)}-timeout-{n}", f"{_days_ago(30 - n)}: {text}")
        for n, text in enumerate(TIMEOUTS)
    ]
    episodes.append(_entry(4, "other", f"{_days_ago(3)}: The login page broke in Safari."))
    plan = plan_consolidation(Category.EPISODE, episodes, today=TODAY)
    (promotion,) = plan.promote
    assert promotion.episodes == tuple(episodes[:3])
    for entry in episodes[:3]:
        assert f"[{entry.slug}]" in promotion.content
    assert promotion.content.startswith("Recurring lesson (3 episodes: ")
    assert promotion.content.endswith("until we batched it.")  # the newest episode's event
    assert plan.archive == ()
    # Once a Quirk names them, the lesson is not promoted again.
    quirk = _entry(1, "recurring", promotion.content)
    assert plan_consolidation(Category.EPISODE, episodes, today=TODAY, quirks=[quirk]).empty


def test_two_similar_episodes_are_no_lesson_and_members_of_a_lesson_stay() -> None:
    two = [_entry(n + 1, f"t{n}", f"{_days_ago(400)}: {t}") for n, t in enumerate(TIMEOUTS[:2])]
    plan = plan_consolidation(Category.EPISODE, two, today=TODAY)
    assert plan.promote == () and len(plan.archive) == 2
    three = [_entry(n + 1, f"t{n}", f"{_days_ago(400)}: {t}") for n, t in enumerate(TIMEOUTS)]
    plan = plan_consolidation(Category.EPISODE, three, today=TODAY)
    assert len(plan.promote) == 1 and plan.archive == ()


def test_similarity_ignores_dates_outcomes_and_tags_and_needs_shared_words() -> None:
    one = event_words("2026-01-01: Migration timed out on the replica. #outcome/fixed #db")
    two = event_words("2026-02-01: Migration timed out on the replica. #outcome/failed")
    assert one == two and similar(one, two)
    assert not similar(event_words("Deploy failed."), event_words("Deploy failed."))  # < 3 words
    assert not similar(one, event_words("2026-01-01: The login page broke in Safari."))


_words = st.sampled_from(
    ["migration", "timeout", "replica", "backfill", "login", "safari", "cache", "disk", "deploy"]
)
_episode = st.tuples(
    st.none() | st.integers(0, 800),
    st.lists(_words, min_size=1, max_size=6),
    st.booleans(),
)


@settings(max_examples=examples(150))
@given(
    st.lists(_episode, max_size=12),
    st.integers(0, 400),
    st.dictionaries(st.integers(1, 40), st.integers(0, 800), max_size=6),
)
def test_plans_are_deterministic_and_lose_nothing(
    raw: list[tuple[int | None, list[str], bool]], max_age: int, recalls: dict[int, int]
) -> None:
    doc = new_document(Category.EPISODE)
    taken: set[str] = set()
    for number, (age, words, slugged) in enumerate(raw):
        text = " ".join(words) + "."
        content = text if age is None else f"{_days_ago(age)}: {text}"
        slug = f"e-{number}" if slugged else None
        taken.add(slug or "")
        line = format_entry(slug, content) if slug else "- " + content
        doc, _ = insert_entry(doc, line)
    found = entries(doc)
    recalled = {line: TODAY - datetime.timedelta(days=d) for line, d in recalls.items()}
    plan = plan_consolidation(
        Category.EPISODE, found, today=TODAY, max_age_days=max_age, last_recalled=recalled
    )
    again = plan_consolidation(
        Category.EPISODE, found, today=TODAY, max_age_days=max_age, last_recalled=recalled
    )
    assert plan == again
    new_doc, archived = apply_consolidation(doc, plan)
    kept = [(e.slug, e.content) for e in entries(new_doc)]
    gone = [(record.slug, record.content) for record in archived]
    assert sorted(kept + gone, key=repr) == sorted(((e.slug, e.content) for e in found), key=repr)
    promoted = {e.line for p in plan.promote for e in p.episodes}
    assert not promoted & {a.entry.line for a in plan.archive}
    assert all(len(p.episodes) >= 3 for p in plan.promote)


def test_a_lesson_names_at_most_five_episodes_on_its_one_line() -> None:
    episodes = [
        _entry(n + 1, f"{_days_ago(40 - n)}-timeout-{n}", f"{_days_ago(40 - n)}: {TIMEOUTS[0]}")
        for n in range(8)
    ]
    (promotion,) = plan_consolidation(Category.EPISODE, episodes, today=TODAY).promote
    assert len(promotion.episodes) == 8
    assert promotion.content.startswith("Recurring lesson (8 episodes: ")
    assert promotion.content.count("[") == 5 and ", and 3 more): " in promotion.content
