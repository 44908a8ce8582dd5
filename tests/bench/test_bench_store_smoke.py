"""Tiny runs of the daemon benchmarks (store, watch latency), so they cannot rot; no timing is
asserted."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from bench import store, watch_latency
from memd.core.format.mdformat import Entry
from memd.core.writes import dedup


def test_store_benchmark_runs_quick_and_every_store_lands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "store.json"
    report = store.run(store.QUICK, output=output)
    table = capsys.readouterr().out
    for row in (
        "| memd store over the socket |",
        "| floor: atomic rewrite in-process |",
        "| memd ÷ floor |",
        "| single-fsync floor: append the line, fsync (p50; not atomic) |",
        "| sequential fsync-per-store, no daemon | 1 |",
    ):
        assert row in table
    for workload in store.workloads(store.QUICK):
        counts = (
            store.QUICK.clients if workload.key == "one_category" else store.QUICK.spread_clients
        )
        for clients in counts:
            assert f"| {workload.label} | {clients} |" in table
    latency = report["latency"]
    assert latency["stores"] == store.QUICK.latency_stores
    for key in (
        "memd_p50_ms",
        "memd_p99_ms",
        "floor_p50_ms",
        "floor_p99_ms",
        "single_fsync_p50_ms",
    ):
        assert latency[key] > 0
    assert report["baseline"]["stores_per_s"] > 0
    assert len(report["throughput"]) == len(store.QUICK.clients) + 2 * len(
        store.QUICK.spread_clients
    )
    for row in report["throughput"]:
        for system in store.SYSTEMS:
            figures = row[system]
            assert figures["clients"] == row["clients"]
            assert figures["stores"] > 0
            assert figures["stores_per_s"] > 0
            assert figures["p99_ms"] >= figures["p50_ms"] > 0
            assert figures["entries_in_files"] == figures["stores"]  # every store landed
        assert row["memd"]["not_stored"] == 0
    assert set(report["targets"]) >= {
        "p50_over_floor_met",
        "many_over_one_met",
        "five_over_one_met",
        "p50_over_single_fsync_met",
    }
    assert "- memd store p50 ÷ an append and one fsync: " in table
    assert json.loads(output.read_text())["benchmark"] == "store"


def test_entries_are_distinct_enough_not_to_be_deduplicated() -> None:
    rng = random.Random("t")
    texts = [store.sentence(rng, "c0", n) for n in range(200)]
    entries = [Entry(line=n, slug=None, content=text) for n, text in enumerate(texts)]
    for number, text in enumerate(texts[1:], 1):
        assert dedup.find_match(text, entries[:number]).verdict is dedup.Verdict.STORE
    # Not luck: entries that differ in only one of their eight words are still two rules.
    base = store.sentence(random.Random("same"), "a", 1).split()
    for at in (1, 2, 5, 9, 14):  # a word of each of the four noun phrases
        other = [*base[:at], "zymurgy", *base[at + 1 :]]
        other[-4:] = store.sentence(random.Random("same"), "b", 1).split()[-4:]
        match = dedup.find_match(
            " ".join(other), [Entry(line=1, slug=None, content=" ".join(base))]
        )
        assert match.verdict is dedup.Verdict.STORE, (at, match.relation)


def test_watch_latency_benchmark_runs_and_sees_every_edit() -> None:
    figures = watch_latency.run(edits=4)
    assert figures["edits"] == 4
    assert figures["max_ms"] >= figures["p95_ms"] >= figures["p50_ms"] > 0


def test_the_comparison_with_another_daemon_runs_both_interleaved() -> None:
    """`--baseline-daemon`: here this tree's own `memd` program stands in for the other one."""
    program = Path(sys.executable).parent / "memd"
    if not program.exists():
        pytest.skip("no memd program installed beside this Python")
    comparison = store.compare_daemons(str(program), store.QUICK)
    for name in ("now", "baseline"):
        figures = comparison[name]
        assert figures["stores"] == store.QUICK.rounds * store.QUICK.compare_stores
        assert [r["stores"] for r in figures["rounds"]] == [store.QUICK.compare_stores] * 2
        assert figures["p99_ms"] >= figures["p50_ms"] > 0
        assert figures["stores_per_s"] > 0
    assert comparison["floor"]["stores"] == 2 * store.QUICK.rounds * store.QUICK.compare_stores
    table = store.comparison_markdown(comparison)
    for row in ("| this tree |", "| baseline |", "| floor: atomic rewrite in-process |"):
        assert row in table
    spread = comparison["spread"]
    for name in ("now", "baseline"):
        for key in ("one_category", "five_categories"):
            assert len(spread[name][key]["by_round"]) == store.QUICK.rounds
            assert spread[name][key]["stores_per_s"] > 0
        assert spread[name]["five_over_one"] > 0
    assert "five categories ÷ one category" in table
