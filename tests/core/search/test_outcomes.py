"""Outcomes rank procedures: proven first, a failing one sinks, words still count."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.search.outcomes import (
    NO_RECORD,
    OUTCOME_WEIGHT,
    Record,
    outcome_factor,
    proven,
    rank_procedures,
    ranked_score,
    success_rate,
)

counts = st.integers(min_value=0, max_value=10_000)


def test_no_record_changes_nothing() -> None:
    assert success_rate(NO_RECORD) == 0.5
    assert outcome_factor(NO_RECORD) == 1.0
    assert ranked_score(0.5, NO_RECORD) == 0.5
    assert not proven(NO_RECORD)


def test_documented_factors() -> None:
    assert round(outcome_factor(Record(1, 0)), 3) == 1.067
    assert round(outcome_factor(Record(5, 0)), 3) == 1.143
    assert round(outcome_factor(Record(0, 1)), 3) == 0.933
    assert round(outcome_factor(Record(0, 5)), 3) == 0.857


@given(counts, counts)
def test_factor_is_bounded_and_moves_with_each_report(successes: int, failures: int) -> None:
    record = Record(successes, failures)
    factor = outcome_factor(record)
    assert 1 - OUTCOME_WEIGHT < factor < 1 + OUTCOME_WEIGHT
    assert outcome_factor(Record(successes + 1, failures)) > factor
    assert outcome_factor(Record(successes, failures + 1)) < factor


def test_proven_outranks_an_unproven_equal_and_a_failing_one_sinks() -> None:
    items = ["failing", "unproven", "proven"]
    records = {"failing": Record(0, 2), "unproven": NO_RECORD, "proven": Record(1, 0)}
    ranked = rank_procedures(items, lambda _: 0.6, records.__getitem__)
    assert [item for item, _ in ranked] == ["proven", "unproven", "failing"]


def test_proven_first_even_over_a_better_match() -> None:
    records = {"better": NO_RECORD, "proven": Record(3, 1)}
    scores = {"better": 0.9, "proven": 0.3}
    ranked = rank_procedures(["better", "proven"], scores.__getitem__, records.__getitem__)
    assert [item for item, _ in ranked] == ["proven", "better"]


def test_among_unproven_a_clearly_better_match_wins_over_a_small_record() -> None:
    records = {"weak": Record(0, 0), "strong": Record(1, 1)}
    scores = {"weak": 0.3, "strong": 0.9}
    ranked = rank_procedures(["weak", "strong"], scores.__getitem__, records.__getitem__)
    assert ranked == [("strong", 0.9), ("weak", 0.3)]


@given(st.lists(st.tuples(st.floats(0, 1), counts, counts), max_size=20))
def test_ranking_keeps_every_item_and_puts_proven_first(
    rows: list[tuple[float, int, int]],
) -> None:
    items = list(range(len(rows)))
    ranked = rank_procedures(items, lambda n: rows[n][0], lambda n: Record(rows[n][1], rows[n][2]))
    assert sorted(item for item, _ in ranked) == items
    flags = [proven(Record(rows[n][1], rows[n][2])) for n, _ in ranked]
    assert flags == sorted(flags, reverse=True)
    assert all(0.0 <= score <= 1.0 for _, score in ranked)
