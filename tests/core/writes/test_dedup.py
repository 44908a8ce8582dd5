"""Dedup: which entries a store is judged against, and the decision their judgements make."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.mdformat import Entry
from memd.core.writes import dedup
from memd.core.writes.dedup import CANDIDATES, Verdict
from memd.core.writes.judge import Relation


def _entries(*contents: str) -> list[Entry]:
    return [Entry(line=i + 1, slug=f"e{i}", content=c) for i, c in enumerate(contents)]


def test_keywords_are_content_words_of_every_script() -> None:
    assert dedup.keywords("Use the lm.ts file, and fs.open() with wx!") == {
        "<choose>",
        "lm.ts",
        "file",
        "fs.open",
        "wx",
    }
    assert dedup.keywords("Use Node 20 in CI") == {"<choose>", "node", "20", "ci"}
    assert dedup.keywords("Перед коммитом запускай линтер.") >= {"коммит", "линтер"}
    assert dedup.keywords("提交前运行测试") == {"提交", "交前", "前运", "运行", "行测", "测试"}
    assert dedup.keywords("it is to be") == frozenset()
    assert dedup.keywords("Keep it small. #perf") == {"keep", "small", "#perf"}


def test_normal_form_ignores_formatting_only() -> None:
    assert dedup.normal_form("Never commit `.env` files!") == dedup.normal_form(
        "never commit .env files"
    )
    assert dedup.normal_form("Use tabs") != dedup.normal_form("Never use tabs")
    assert dedup.normal_form("提交前运行测试") != dedup.normal_form("缓存只放在 Redis")


def test_a_repeat_is_skipped_against_the_first_copy() -> None:
    match = dedup.find_match(
        "no emojis in code", _entries("Other thing.", "No emojis in code!", "No emojis in code.")
    )
    assert match.verdict is Verdict.SKIP and match.similarity == 1.0
    assert match.entry is not None and match.entry.line == 2
    assert match.relation is Relation.SAME


def test_candidates_are_the_most_similar_entries_in_file_order_on_ties() -> None:
    entries = _entries(
        "Deploy the API with Helm.",
        "Deploy the API with Helm from CI.",
        "Deploy the worker with Helm.",
        "Nothing in common here.",
    )
    ranked = dedup.ranked("Deploy the API with Helm charts.", entries)
    assert [entry.line for entry in ranked] == [1, 2, 3]


def test_at_most_candidates_entries_are_judged() -> None:
    entries = _entries(*(f"Cache rule number {n} for the deploy tool." for n in range(20)))
    assert len(dedup.ranked("Cache rule for the deploy tool.", entries)) == CANDIDATES


def test_a_skip_anywhere_among_the_candidates_wins() -> None:
    # The closest entry would be updated (a changed value), but another says everything.
    entries = _entries("Use Node 22 in CI and locally.", "Use Node 20 in CI.")
    match = dedup.find_match("Use Node 22 in CI.", entries)
    assert match.verdict is Verdict.SKIP and match.entry is not None and match.entry.line == 1


def test_an_update_beats_a_store() -> None:
    entries = _entries("Strip PII from error logs.", "Use Node 20 in CI.")
    match = dedup.find_match("Use Node 22 in CI.", entries)
    assert match.verdict is Verdict.UPDATE and match.conflict
    assert match.entry is not None and match.entry.line == 2
    assert (match.relation, match.old_value, match.new_value) == (
        Relation.CHANGED_VALUE,
        "20",
        "22",
    )


def test_a_store_reports_the_closest_entry_and_why() -> None:
    match = dedup.find_match(
        "Rotate the Twilio API key every 90 days.",
        _entries("Rotate the Stripe API key every 90 days."),
    )
    assert match.verdict is Verdict.STORE and not match.conflict
    assert match.entry is not None and match.relation is Relation.OTHER_SUBJECT
    assert (match.old_value, match.new_value) == ("Stripe", "Twilio")


def test_nothing_in_common_is_no_match() -> None:
    assert dedup.find_match("Sign commits.", _entries("Pin numpy.")) == dedup.NO_MATCH
    assert dedup.find_match("Sign commits.", []) == dedup.NO_MATCH


def test_a_reversed_rule_is_never_skipped() -> None:
    match = dedup.find_match("Never use tabs.", _entries("Always use tabs."))
    assert match.verdict is Verdict.UPDATE and match.conflict
    assert match.relation is Relation.REVERSED


@given(st.text(max_size=60), st.lists(st.text(max_size=40), max_size=6))
def test_any_text_gets_a_decision(content: str, others: list[str]) -> None:
    match = dedup.find_match(content, _entries(*others))
    assert 0.0 <= match.similarity <= 1.0
    assert match.conflict <= (match.verdict is Verdict.UPDATE)
    assert (match.entry is None) == (match.relation is None)


@given(st.from_regex(r"[a-z][a-z0-9]{1,12}[0-9]", fullmatch=True))
def test_a_word_holding_a_digit_is_a_value_kept_whole(token: str) -> None:
    assert dedup.keywords(f"note {token}") == {"note", token}
