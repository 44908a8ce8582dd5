"""Tiny runs of the daemon benchmarks (store load, watch latency), so they cannot rot; no timing
is asserted."""

from __future__ import annotations

import pytest

from bench import store_load, watch_latency


@pytest.mark.e2e
def test_store_load_benchmark_runs_and_every_store_lands() -> None:
    figures = store_load.run(clients=3, per_client=4)
    assert figures["stores"] == 12
    assert figures["entries_in_file"] == 12
    assert figures["p99_ms"] >= figures["p50_ms"] > 0


@pytest.mark.e2e
def test_watch_latency_benchmark_runs_and_sees_every_edit() -> None:
    figures = watch_latency.run(edits=4)
    assert figures["edits"] == 4
    assert figures["max_ms"] >= figures["p95_ms"] >= figures["p50_ms"] > 0
