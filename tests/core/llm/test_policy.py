"""When a model is asked about a store, and what its "restates" verdict may change
(`memd.core.llm.policy`): never a throw-away of a word the entry lacks."""

from __future__ import annotations

from memd.core.llm import policy

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


def test_gap_analysis_is_due_every_nth_store_and_never_when_off() -> None:
    assert [n for n in range(1, 10) if policy.gap_due(n, 3)] == [3, 6, 9]
    assert not any(policy.gap_due(n, 0) for n in range(10))
    assert not policy.gap_due(0, 1)


def test_the_message_says_what_a_verdict_did() -> None:
    assert "updated" in policy.verdict_message("Use pnpm.")
    message = policy.verdict_message("Use pnpm." * 30)
    assert "archive" in message and "…" in message
