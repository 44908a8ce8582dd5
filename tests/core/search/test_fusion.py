"""Hybrid fusion: keyword matches first (an exact match never below a vague neighbour), the
model's finds after them, one 0..1 score in ranking order, nothing the model calls unrelated;
fusing only the keyword hits and the best by cosine gives the same results; a cosine that is not
finite is no opinion (the entry ranks by its words) and no score is ever anything but a number
from 0 to 1."""

from __future__ import annotations

import math

import pytest
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


def test_a_nan_cosine_keeps_every_lexical_hit_in_lexical_order_with_finite_scores() -> None:
    # The model has nothing to say (a poisoned vector, a text it could not embed): the entries
    # are judged by their words, never dropped nor given a score that is not a number.
    nan = math.nan
    lexical = {"exact": 0.9, "modest": 0.3, "weak-but-strong": 0.15, "padding": 0.05}
    cosine = {"exact": nan, "modest": nan, "weak-but-strong": nan, "padding": nan, "other": nan}
    ranked = fuse(lexical, cosine, limit=10)
    assert [(f.key, f.match) for f in ranked] == [
        ("exact", "keyword"),
        ("modest", "keyword"),
        ("weak-but-strong", "keyword"),
    ]
    assert all(math.isfinite(f.score) and KEYWORD_FLOOR <= f.score <= 1.0 for f in ranked)
    assert [f.score for f in ranked] == sorted((f.score for f in ranked), reverse=True)
    # One NaN among usable cosines: that entry by its words, the others as always.
    mixed = fuse({"a": 0.3, "b": 0.3}, {"a": nan, "b": 0.5, "c": 0.4}, limit=10)
    assert [(f.key, f.match) for f in mixed] == [("b", "both"), ("a", "keyword"), ("c", "semantic")]
    assert all(math.isfinite(f.score) for f in mixed)


def test_a_cosine_that_is_not_finite_is_never_a_result_by_meaning() -> None:
    for similarity in (math.nan, math.inf, -math.inf):
        assert not semantic_result(similarity)
        assert fuse({}, {"x": similarity}, limit=5) == []
    np = pytest.importorskip("numpy")
    cosines = np.array([math.nan, math.inf, 0.3, -0.2, 0.0])
    assert semantic_result(cosines).tolist() == [False, False, True, False, False]
    assert semantic_result(cosines, 0.1).tolist() == [False, False, True, False, False]


anything = st.floats(allow_nan=True, allow_infinity=True)


@given(
    st.dictionaries(st.integers(0, 30), scores | anything),
    st.dictionaries(st.integers(0, 30), cosines | anything),
    st.none() | st.floats(min_value=0.0, max_value=1.0),
)
def test_every_score_is_a_finite_number_from_0_to_1_whatever_comes_in(
    lexical: dict[int, float], cosine: dict[int, float], min_score: float | None
) -> None:
    ranked = fuse(lexical, cosine, limit=100, min_score=min_score)
    assert all(math.isfinite(f.score) and 0.0 <= f.score <= 1.0 for f in ranked)
    assert [f.score for f in ranked] == sorted((f.score for f in ranked), reverse=True)
    # Every hit whose words carry the query and the model says nothing about is kept.
    for key, score in lexical.items():
        if math.isfinite(score) and score >= STRONG and not math.isfinite(cosine.get(key, 0.0)):
            by_words = KEYWORD_FLOOR + (1 - KEYWORD_FLOOR) * min(score, 1.0)
            assert key in {f.key for f in ranked} or by_words < (min_score or 0.0)
