"""Hybrid fusion: keyword matches first (an exact match never below a vague neighbour), the
model's finds after them, one 0..1 score in ranking order, nothing the model calls unrelated;
fusing only the keyword hits and the best by cosine gives the same results."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.search.fusion import (
    KEYWORD_FLOOR,
    STRONG,
    Fused,
    fuse,
    is_keyword_match,
    semantic_result,
)


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
    ranked = fuse({"a": 0.4, "b": 0.6}, {"a": 0.6, "b": 0.0}, limit=10)
    assert [(f.key, f.match) for f in ranked] == [("a", "both"), ("b", "keyword")]


def test_a_modest_lexical_hit_the_model_finds_unrelated_ranks_by_its_cosine() -> None:
    # 0.3 of the query's weight is no exact match: without the model's agreement it is the
    # padding a large workspace is full of, and the paraphrase the model found comes first.
    ranked = fuse({"padding": 0.3}, {"padding": 0.1, "paraphrase": 0.5}, limit=10)
    assert [(f.key, f.match) for f in ranked] == [
        ("paraphrase", "semantic"),
        ("padding", "semantic"),
    ]


def test_min_score_one_half_keeps_keyword_matches_only() -> None:
    ranked = fuse({"a": 0.3}, {"a": 0.25, "b": 0.9}, limit=10, min_score=KEYWORD_FLOOR)
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


@given(
    st.dictionaries(st.integers(0, 40), scores),
    st.dictionaries(st.integers(0, 40), cosines),
    st.integers(1, 8),
    st.none() | st.floats(min_value=0.0, max_value=1.0),
)
def test_the_keyword_hits_and_the_best_by_cosine_are_enough(
    lexical: dict[int, float], cosine: dict[int, float], limit: int, min_score: float | None
) -> None:
    # What a caller with many entries does: fuse every hit of at least STRONG and the
    # `limit + len(hits)` best by cosine, and count the rest with `semantic_result`.
    everything = fuse(lexical, cosine, limit=10_000, min_score=min_score)
    hits = {key: score for key, score in lexical.items() if score >= STRONG}
    nearest = sorted(cosine, key=lambda key: -cosine[key])[: limit + len(hits)]
    candidates = {key: cosine[key] for key in [*nearest, *hits] if key in cosine}
    fused = fuse(hits, candidates, limit=10_000, min_score=min_score)
    others = sum(
        1
        for key, similarity in cosine.items()
        if key not in candidates and semantic_result(similarity, min_score)
    )
    assert [f.score for f in fused[:limit]] == [f.score for f in everything[:limit]]
    assert len(fused) + others == len(everything)
    assert all(
        not is_keyword_match(lexical.get(k, 0.0), cosine[k]) for k in cosine if k not in candidates
    )
