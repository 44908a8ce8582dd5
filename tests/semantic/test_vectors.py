"""Kept vectors: found by text after a restart, another model's never read, a corrupt file an
empty cache, the least recently used dropped past the bound; a row that is not a finite unit
vector (in the file or from the model) never kept nor used."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from memd.semantic.vectors import UNIT_TOLERANCE, VectorCache, beyond_window, cache_path, usable
from tests.budget import examples


def unit_rows(count: int, dimensions: int = 8, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, dimensions)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def test_vectors_come_back_by_text_after_a_save(tmp_path: Path) -> None:
    path = str(tmp_path / "m.vec")
    cache = VectorCache("model-a", 8)
    rows = unit_rows(3)
    cache.add(["one", "two", "three"], rows)
    cache.save(path)
    again = VectorCache.load("model-a", 8, path)
    found, missing = again.lookup(["three", "four", "one"])
    assert missing == [1]
    assert float(found[0] @ rows[2]) > 0.999 and float(found[2] @ rows[0]) > 0.999


@pytest.mark.parametrize(("model", "dimensions"), [("model-b", 8), ("model-a", 16)])
def test_another_models_vectors_are_never_read(tmp_path: Path, model: str, dimensions: int) -> None:
    path = str(tmp_path / "m.vec")
    cache = VectorCache("model-a", 8)
    cache.add(["one"], unit_rows(1))
    cache.save(path)
    assert len(VectorCache.load(model, dimensions, path)) == 0


def test_a_corrupt_or_missing_file_is_an_empty_cache(tmp_path: Path) -> None:
    path = tmp_path / "m.vec"
    assert len(VectorCache.load("model-a", 8, str(path))) == 0
    path.write_bytes(b"\x93not msgpack at all")
    assert len(VectorCache.load("model-a", 8, str(path))) == 0


def test_the_least_recently_used_are_dropped_past_the_bound(tmp_path: Path) -> None:
    cache = VectorCache("model-a", 8, max_vectors=3)
    cache.add(["a", "b", "c"], unit_rows(3))
    cache.lookup(["a"])  # used: now the most recent
    cache.add(["d"], unit_rows(1, seed=1))
    _, missing = cache.lookup(["a", "b", "c", "d"])
    assert missing == [1] and len(cache) == 3
    path = str(tmp_path / "m.vec")
    cache.save(path)
    assert len(VectorCache.load("model-a", 8, path, max_vectors=2)) == 2


def test_the_cache_lives_under_xdg_cache_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = Path(cache_path("model-a"))
    assert path.parent == tmp_path / "memd" / "vectors" and path.suffix == ".vec"
    VectorCache("model-a", 8).save()
    assert path.is_file() and oct(path.stat().st_mode & 0o777) == "0o600"


def _poison(path: Path, rows: np.ndarray) -> None:
    """Rewrite the kept file at `path` with `rows` as its vectors: the structure stays valid
    (the same keys, model and size), only the numbers change, as a damaged disk or another
    tool would leave it."""
    image = msgspec.msgpack.decode(path.read_bytes())
    image[4] = rows.astype("<f2").tobytes()
    path.write_bytes(msgspec.msgpack.encode(image))


def test_rows_that_are_not_finite_unit_vectors_are_dropped_on_load_and_embedded_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "m.vec"
    texts = ["nan", "inf", "minus-inf", "zero", "double", "half", "one-nan", "good", "tiny"]
    rows = unit_rows(len(texts))
    cache = VectorCache("model-a", 8)
    cache.add(texts, rows)
    cache.save(str(path))
    poisoned = rows.copy()
    poisoned[0] = np.nan  # float16 0x7E00 in every number, as the adversarial round wrote
    poisoned[1] = np.inf
    poisoned[2] = -np.inf
    poisoned[3] = 0.0
    poisoned[4] *= 2.0
    poisoned[5] *= 0.5
    poisoned[6, 3] = np.nan  # one number alone
    poisoned[8] = 0.0
    poisoned[8, 0] = 1.0 - 2e-3  # within UNIT_TOLERANCE of 1: a unit vector still
    _poison(path, poisoned)
    assert np.frombuffer(msgspec.msgpack.decode(path.read_bytes())[4], "<u2")[0] == 0x7E00

    with caplog.at_level(logging.INFO, logger="memd.semantic.vectors"):
        loaded = VectorCache.load("model-a", 8, str(path))
    found, missing = loaded.lookup(texts)
    assert missing == [0, 1, 2, 3, 4, 5, 6]  # embedded again like texts never seen
    assert sorted(found) == [7, 8] and len(loaded) == 2
    assert all(np.isfinite(vector).all() for vector in found.values())
    assert float(found[7] @ rows[7]) > 0.999
    # One line for the load, saying how many rows were dropped.
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "dropped 7 of the 9 vectors" in lines[0], lines


def test_a_file_every_row_of_which_is_nan_is_an_empty_cache(tmp_path: Path) -> None:
    path = tmp_path / "m.vec"
    cache = VectorCache("model-a", 8)
    cache.add([f"t{i}" for i in range(5)], unit_rows(5))
    cache.save(str(path))
    _poison(path, np.full((5, 8), np.nan))
    loaded = VectorCache.load("model-a", 8, str(path))
    assert len(loaded) == 0
    assert loaded.lookup(["t0", "t4"])[1] == [0, 1]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(1, 512),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["normal", "one-hot", "spiky", "tiny-tail"]),
)
def test_float16_storage_of_a_unit_vector_always_stays_usable(
    dimensions: int, seed: int, shape: str
) -> None:
    generator = np.random.default_rng(seed)
    row = generator.normal(size=dimensions)
    if shape == "one-hot":
        row = np.zeros(dimensions)
        row[seed % dimensions] = 1.0
    elif shape == "spiky":
        row[0] *= 1e4
    elif shape == "tiny-tail":  # most numbers below float16's normal range (6.1e-5)
        row *= 1e-6
        row[0] = 1.0
    unit = (row / np.linalg.norm(row)).astype(np.float32)
    stored = unit.astype("<f2").astype(np.float32)
    assert usable(stored[None]).tolist() == [True]
    # Off by more than the tolerance, it is not.
    assert usable((stored * (1 + 2 * UNIT_TOLERANCE))[None]).tolist() == [False]


def test_a_row_the_model_gives_that_is_not_a_finite_unit_vector_is_never_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = unit_rows(4)
    rows[1] = np.nan
    rows[2] = 0.0
    cache = VectorCache("model-a", 8)
    with caplog.at_level(logging.WARNING, logger="memd.semantic.vectors"):
        assert cache.add(["good", "nan", "zero", "fine"], rows) == 2
    assert len(caplog.records) == 1 and "gave 2 of 4 texts" in caplog.records[0].getMessage()
    assert len(cache) == 2
    # Found (so not asked for again and again), as no vector: NaN, which fusion reads as "the
    # model has nothing to say" (the entry ranks by its words).
    found, missing = cache.lookup(["nan", "good", "zero", "new"])
    assert missing == [3] and sorted(found) == [0, 1, 2]
    assert np.isnan(found[0]).all() and np.isnan(found[2]).all()
    assert float(found[1] @ rows[0]) > 0.999
    # Never saved: after a restart the model is asked again.
    path = str(tmp_path / "m.vec")
    cache.save(path)
    again = VectorCache.load("model-a", 8, path)
    assert len(again) == 2
    assert again.lookup(["nan", "zero", "fine"])[1] == [0, 1]
    # A usable row later (another model run) replaces the marker.
    cache.add(["nan"], unit_rows(1, seed=3))
    assert np.isfinite(cache.lookup(["nan"])[0][0]).all()


def test_a_text_longer_than_the_models_window_is_never_embedded_and_has_no_vector() -> None:
    cache = VectorCache("model-a", 8)
    long_text = " ".join(f"w{i}" for i in range(300))  # 300 words: the model reads only 256
    found, missing = cache.lookup(["short", long_text])
    assert missing == [0]  # only the short one is to embed
    assert not np.isfinite(found[1]).any()  # no opinion: its entry ranks by its words


@given(st.text(max_size=600))
@settings(max_examples=examples(200))
def test_beyond_window_is_true_only_when_words_and_marks_outnumber_the_window(text: str) -> None:
    parts = len(re.findall(r"\w+|[^\w\s]", text))
    assert beyond_window(text, window=50) == (parts > 50)
    assert not beyond_window(text[:50], window=50)
