"""A query's rows: one matrix a file version (a new version takes the unchanged rows from the
last), rows and entries found from each other, and the nearest rows with the rest counted."""

from __future__ import annotations

from typing import Any

import pytest

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.semantic import nearest
from memd.semantic.vectors import no_vector, text_key

np = pytest.importorskip("numpy")


def _entries(*texts: str) -> tuple[Entry, ...]:
    return tuple(Entry(line=5 + i, slug=None, content=text) for i, text in enumerate(texts))


def _unit(*values: float) -> object:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def _rows(
    entries: tuple[Entry, ...], vectors: list[object], previous: nearest.Rows | None = None
) -> nearest.Rows:
    keys = [text_key(entry.content) for entry in entries]
    unknown = nearest.unknown_rows(keys, previous)
    assert len(unknown) == len(vectors)
    return nearest.build_rows(entries, keys, previous, dict(zip(unknown, vectors, strict=True)), 2)


def _near(query: object, layout: nearest.Layout, **options: Any) -> tuple[dict[int, float], int]:
    found = nearest.nearest(query, layout, **options)
    assert found is not None, "the model had nothing to say"
    return found


def test_a_new_version_takes_the_unchanged_rows_and_needs_only_the_new_ones() -> None:
    first = _rows(_entries("a", "b"), [_unit(1, 0), _unit(0, 1)])
    second_entries = _entries("b", "c", "a")  # moved, added
    keys = [text_key(entry.content) for entry in second_entries]
    assert nearest.unknown_rows(keys, first) == [1]  # only "c" is needed
    second = _rows(second_entries, [_unit(1, 1)], first)
    assert second.matrix.ravel().tolist() == pytest.approx(
        [0.0, 1.0, 0.7071, 0.7071, 1.0, 0.0], abs=1e-4
    )


def test_rows_and_entries_are_found_from_each_other_across_categories() -> None:
    decisions = _rows(_entries("a", "b"), [_unit(1, 0), _unit(0, 1)])
    quirks = _rows(_entries("c"), [_unit(1, 1)])
    layout = nearest.Layout([(Category.DECISION, decisions), (Category.QUIRK, quirks)])
    assert layout.size == 3
    for row, (category, entry) in enumerate(layout.entries()):
        assert layout.entry(row) == (category, entry)
        assert layout.row(category, entry) == row
    assert layout.entry(2) == (Category.QUIRK, quirks.entries[0])


def test_nearest_gives_the_best_rows_and_the_named_ones_and_counts_the_rest() -> None:
    texts = [f"t{i}" for i in range(6)]
    vectors = [
        _unit(1, 0),
        _unit(0.9, 0.1),
        _unit(0.5, 0.5),
        _unit(0.1, 0.9),
        _unit(0, 1),
        _unit(-1, 0),
    ]
    layout = nearest.Layout([(Category.DECISION, _rows(_entries(*texts), vectors))])
    cosine, others = _near(
        _unit(1, 0), layout, want=2, named=[4], counted=lambda cosines: cosines > 0
    )
    assert sorted(cosine) == [0, 1, 4]
    assert cosine[0] == pytest.approx(1.0)
    assert others == 2  # rows 2 and 3 are above 0; row 5 is not
    # Only the allowed rows compete and are counted.
    cosine, others = _near(
        _unit(1, 0), layout, want=1, allowed=[2, 3, 5], counted=lambda cosines: cosines > 0
    )
    assert (sorted(cosine), others) == ([2], 1)


def test_an_empty_layout_has_nothing_near() -> None:
    assert nearest.nearest(_unit(1, 0), nearest.Layout([]), want=5, counted=bool) == ({}, 0)


def test_a_row_without_a_vector_is_never_among_the_best_and_its_cosine_is_nan() -> None:
    texts = ["a", "b", "c", "d"]
    vectors = [_unit(1, 0), no_vector(2), _unit(0.5, 0.5), no_vector(2)]
    layout = nearest.Layout([(Category.DECISION, _rows(_entries(*texts), vectors))])
    cosine, others = _near(
        _unit(1, 0), layout, want=2, named=[3], counted=lambda cosines: cosines > 0
    )
    assert sorted(cosine) == [0, 2, 3]
    assert np.isnan(cosine[3]) and cosine[0] == pytest.approx(1.0)
    assert others == 0  # row 1 (NaN) is not counted


def test_the_model_has_nothing_to_say_without_a_usable_question_or_any_usable_row() -> None:
    usable_rows = _rows(_entries("a", "b"), [_unit(1, 0), _unit(0, 1)])
    layout = nearest.Layout([(Category.DECISION, usable_rows)])
    counted = lambda cosines: cosines > 0  # noqa: E731
    for question in (
        np.array([np.nan, np.nan], dtype=np.float32),
        np.array([np.inf, 0.0], dtype=np.float32),
        np.zeros(2, dtype=np.float32),
        np.array([3.0, 4.0], dtype=np.float32),  # not a unit vector
    ):
        assert nearest.nearest(question, layout, want=1, counted=counted) is None
    no_rows = _rows(_entries("a", "b"), [no_vector(2), no_vector(2)])
    no_layout = nearest.Layout([(Category.DECISION, no_rows)])
    assert nearest.nearest(_unit(1, 0), no_layout, want=1, counted=counted) is None


def test_an_entry_longer_than_the_models_window_has_no_cosine_and_ranks_by_its_words() -> None:
    long_text = " ".join(["word"] * 300)  # 300 words: the model sees only its first 256 pieces
    entries = _entries("short rule", long_text)
    first = _rows(entries, [_unit(1, 0), _unit(1, 0)])
    assert not np.isfinite(first.matrix[1]).any()
    layout = nearest.Layout([(Category.DECISION, first)])
    cosine, _ = _near(_unit(1, 0), layout, want=2, named=[1], counted=lambda c: c > 0)
    assert cosine[0] == pytest.approx(1.0)
    assert np.isnan(cosine[1])  # no opinion: fusion judges it by its words alone
    # A later version takes the long entry's row as it is (still no cosine).
    later = _rows(_entries(long_text, "another rule"), [_unit(0, 1)], first)
    assert not np.isfinite(later.matrix[0]).any()


def test_a_workspace_of_long_entries_only_is_answered_without_the_model() -> None:
    long_text = "a, " * 200  # 400 words and marks
    layout = nearest.Layout([(Category.DECISION, _rows(_entries(long_text), [_unit(1, 0)]))])
    assert nearest.nearest(_unit(1, 0), layout, want=1, counted=lambda c: c > 0) is None
