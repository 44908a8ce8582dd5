"""Hybrid fusion: keyword matches first (an exact match never below a vague neighbour), the
model's finds after them, one 0..1 score in ranking order, nothing the model calls unrelated."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.search.fusion import KEYWORD_FLOOR, Fused, fuse


def test_an_exact_match_stays_first_and_the_model_finds_the_paraphrase() -> None:
    lexical = {"exact": 0.9, "padding": 0.06}
    cosine = {"exact": 0.05, "padding": 0.1, "paraphrase": 0.55, "unrelated": -0.05}
    ranked = fuse(lexical, cosine, limit=10)
    assert [(f.key, f.match) for f in ranked] == [
        ("exact", "keyword"),
        ("paraphrase", "semantic"),
        ("padding", "semantic"),  # a weak lexical hit counts for nothing more than its cosine
    ]
    assert ranked[0].score >= KEYWORD_FLOOR > ranked[1].score > ranked[2].score > 0


def test_the_model_agreeing_with_a_keyword_match_is_both() -> None:
    ranked = fuse({"a": 0.4, "b": 0.4}, {"a": 0.6, "b": 0.0}, limit=10)
    assert [(f.key, f.match) for f in ranked] == [("a", "both"), ("b", "keyword")]


def test_min_score_one_half_keeps_keyword_matches_only() -> None:
    ranked = fuse({"a": 0.3}, {"a": 0.1, "b": 0.9}, limit=10, min_score=KEYWORD_FLOOR)
    assert [f.key for f in ranked] == ["a"]


scores = st.floats(min_value=0.0, max_value=1.0)
cosines = st.floats(min_value=-1.0, max_value=1.0)


@given(st.dictionaries(st.integers(0, 30), scores), st.dictionaries(st.integers(0, 30), cosines))
def test_scores_are_ordered_bounded_and_keyword_matches_come_first(
    lexical: dict[int, float], cosine: dict[int, float]
) -> None:
    ranked: list[Fused] = fuse(lexical, cosine, limit=100)
    assert [f.score for f in ranked] == sorted((f.score for f in ranked), reverse=True)
    assert all(0.0 <= f.score <= 1.0 for f in ranked)
    kinds = [f.match == "semantic" for f in ranked]
    assert kinds == sorted(kinds)  # no keyword match after a semantic one
    assert len({f.key for f in ranked}) == len(ranked)
