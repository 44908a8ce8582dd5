"""Kept vectors: found by text after a restart, another model's never read, a corrupt file an
empty cache, the least recently used dropped past the bound."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memd.semantic.vectors import VectorCache, cache_path


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
