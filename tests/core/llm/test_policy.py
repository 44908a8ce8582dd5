"""When a model is asked about a store, and what its "restates" verdict may change
(`memd.core.llm.policy`): never a throw-away of a word the entry lacks."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.llm import policy
from memd.core.writes.wording import analyse

ASKABLE = {
    "slug": None,
    "dry_run": False,
    "episode_category": False,
    "action": "stored",
    "matched": True,
    "conflict": False,
}


def test_a_new_slugless_store_near_an_entry_it_does_not_contradict_is_asked_about() -> None:
    assert policy.worth_asking(**ASKABLE)  # type: ignore[arg-type]


def test_slugs_dry_runs_episodes_skips_updates_lone_stores_and_conflicts_are_not() -> None:
    for change in (
        {"slug": "use-pnpm"},
        {"dry_run": True},
        {"episode_category": True},
        {"action": "skipped"},
        {"action": "updated"},
        {"action": "pending"},
        {"matched": False},
        {"conflict": True},
    ):
        assert not policy.worth_asking(**{**ASKABLE, **change})  # type: ignore[arg-type]


def test_a_restatement_with_no_new_word_is_a_skip() -> None:
    old = "Always run the full test suite before pushing to main."
    assert policy.restated_action("Run the test suite before pushing to main", old) == "skip"


def test_a_restatement_that_adds_a_word_updates_the_entry_instead() -> None:
    old = "Run the test suite before pushing."
    new = "Run the test suite before pushing, including the slow integration tests."
    assert policy.restated_action(new, old) == "update"


@given(
    st.lists(st.sampled_from(["cache", "build", "Redis", "nightly", "Docker", "42"]), min_size=1)
)
def test_a_skip_never_drops_a_content_word_the_entry_lacks(extra: list[str]) -> None:
    old = "Clear the build cache after upgrading Node."
    new = f"Clear the build cache after upgrading Node {' '.join(extra)}."
    action = policy.restated_action(new, old)
    lacks = analyse(new).content - analyse(old).content
    assert (action == "skip") == (not lacks)


def test_gap_analysis_is_due_every_nth_store_and_never_when_off() -> None:
    assert [n for n in range(1, 10) if policy.gap_due(n, 3)] == [3, 6, 9]
    assert not any(policy.gap_due(n, 0) for n in range(10))
    assert not policy.gap_due(0, 1)


def test_the_message_says_what_a_verdict_did() -> None:
    assert "already says all of it" in policy.verdict_message("skip", "Use pnpm.")
    assert "archive" in policy.verdict_message("update", "Use pnpm." * 30)
