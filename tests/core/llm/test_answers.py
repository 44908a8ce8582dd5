"""The parsers of a model's answers (`memd.core.llm.answers`): the shapes asked for are read,
anything else is no answer, never a guess."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.llm import answers


def test_a_redundancy_answer_names_a_candidate_by_number_or_none() -> None:
    assert answers.redundancy('{"restates": 2, "reason": "Same rule."}', 3) == (1, "Same rule.")
    assert answers.redundancy('{"restates": null, "reason": "New value."}', 3) == (
        None,
        "New value.",
    )


def test_json_wrapped_in_prose_or_a_fence_is_read() -> None:
    text = 'Sure!\n```json\n{"restates": 1, "reason": "It repeats\\n it."}\n```'
    assert answers.redundancy(text, 1) == (0, "It repeats it.")


def test_a_number_out_of_range_a_wrong_shape_or_prose_is_no_answer() -> None:
    for text in (
        '{"restates": 4}',
        '{"restates": 0}',
        '{"restates": true}',
        '{"restates": "1"}',
        '{"answer": 1}',
        "Yes, it restates the first one.",
        "",
        "{" * 30000,
    ):
        assert answers.redundancy(text, 3) is None


def test_proposals_keep_known_categories_and_one_line_contents_up_to_the_limit() -> None:
    text = (
        '{"memories": [{"category": "quirk", "content": "The CI  cache\\nis per branch."},'
        ' {"category": "Gossip", "content": "x"}, {"category": "Decision", "content": "  "},'
        ' {"category": "Decision", "content": "Use Postgres 16."},'
        ' {"category": "Decision", "content": "Use Redis 7."}]}'
    )
    kept, dropped = answers.proposals(text, ["Quirk", "Decision"], 2) or ([], -1)
    assert kept == [("Quirk", "The CI cache is per branch."), ("Decision", "Use Postgres 16.")]
    assert dropped == 3


@given(st.text(max_size=300))
def test_any_text_parses_to_an_answer_or_none_without_raising(text: str) -> None:
    found = answers.redundancy(text, 3)
    assert found is None or found.candidate is None or 0 <= found.candidate < 3
    answers.proposals(text, ["Quirk"], 3)
