"""The prompts (`memd.core.llm.prompts`): bounded, naming the categories, and never carrying
a Security text to an external command unless allowed."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.format.categories import BUILTIN
from memd.core.llm import prompts


def test_the_redundancy_prompt_numbers_at_most_three_candidates_and_asks_for_json() -> None:
    text = prompts.redundancy(BUILTIN.parse("Decision"), "Use pnpm.", ["a", "b", "c", "d"])
    assert "1. a" in text and "3. c" in text and "4. d" not in text
    assert '{"restates": N' in text and "Decision" in text


@given(st.text(max_size=20000), st.lists(st.text(max_size=2000), max_size=30))
def test_proposal_prompts_stay_within_the_cap_and_keep_the_newest_text(
    conversation: str, texts: list[str]
) -> None:
    recent = [("Quirk", t) for t in texts]
    for build in (prompts.gap, prompts.session):
        text = build(list(BUILTIN), recent, conversation + " NEWEST")
        assert len(text) <= prompts.MAX_PROMPT_CHARS
        assert "NEWEST" in text


def test_security_text_goes_only_to_the_clients_own_model_unless_allowed() -> None:
    assert not prompts.may_send("Security", external=True, security_allowed=False)
    assert prompts.may_send("Security", external=True, security_allowed=True)
    assert prompts.may_send("Security", external=False, security_allowed=False)
    assert prompts.may_send("Quirk", external=True, security_allowed=False)
