"""A tiny run of the store-load benchmark, so it cannot rot (no timing is asserted)."""

from __future__ import annotations

import pytest

from bench import store_load


@pytest.mark.e2e
def test_store_load_benchmark_runs_and_every_store_lands() -> None:
    figures = store_load.run(clients=3, per_client=4)
    assert figures["stores"] == 12
    assert figures["entries_in_file"] == 12
    assert figures["p99_ms"] >= figures["p50_ms"] > 0
