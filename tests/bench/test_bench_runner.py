"""`python -m bench` ends with every target its benchmarks judged, each with its verdict: the
runner collects what `print_verdicts` and `record_verdict` saw, per benchmark, in order."""

from __future__ import annotations

import pytest

from bench import __main__ as runner, store
from bench._report import record_verdict, recorded_verdicts


def test_the_run_ends_with_each_judged_target(capsys: pytest.CaptureFixture[str]) -> None:
    runner.main(["--quick", "merge"])
    out = capsys.readouterr().out
    assert out.startswith("memd ")  # the tree, the date and the machine come first
    closing = out[out.index("== every target of this run") :]
    assert "1 of 1 met" in closing.splitlines()[0]
    assert "| merge | core_merge | met | core merge " in closing
    assert "Time: merge " in closing


def test_a_target_not_judged_is_said_so(capsys: pytest.CaptureFixture[str]) -> None:
    since = len(recorded_verdicts())
    record_verdict("a", True, "a: met")
    record_verdict("b", None, "b: not judged (no data | here)")
    found = [("x", *verdict) for verdict in recorded_verdicts(since)]
    runner.print_summary(found, [("x", 2.0)])
    out = capsys.readouterr().out
    assert "1 of 2 met" in out
    assert "| x | b | not judged | b: not judged (no data / here) |" in out


def test_store_lines_judge_each_target_once() -> None:
    targets = {
        "p50_over_floor": 3.0,
        "p50_over_floor_target": 2.5,
        "p50_over_floor_met": False,
    }
    for prefix in ("", "raw_"):
        targets |= {
            f"{prefix}many_clients": 32,
            f"{prefix}many_over_one": 5.5,
            f"{prefix}many_over_one_target": 5.0,
            f"{prefix}many_over_one_met": True,
            f"{prefix}many_stores_per_s": 2000.0,
            f"{prefix}many_stores_per_s_target": 5000.0,
            f"{prefix}many_stores_per_s_met": False,
        }
    targets |= {"raw_five_over_one": 1.1, "raw_five_over_one_met": True}
    lines = store.target_lines(targets)
    assert [met for _, met, _ in lines] == [False, True, False, True, False, True]
    assert len({name for name, _, _ in lines}) == len(lines)
    assert lines[-1][2].endswith("(target ≥ 1: met)")
