"""The write-decision benchmark runs end to end on one pair a class through a real daemon
(figures are not asserted, only their shape), and HackLM's rule scores as specified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import write_decisions
from bench.write_decisions import Decision, hacklm_decision
from memd.core.format.secrets import has_secret


def test_write_decisions_benchmark_runs_quick(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "write_decisions.json"
    report = write_decisions.run(write_decisions.QUICK, output=output)
    table = capsys.readouterr().out
    assert "| system | accuracy | wrong-skip | wrong-replace | conflict P | conflict R |" in table
    independent = report["sets"]["independent"]
    assert independent["pairs"] == 22  # one pair of each of the 22 classes
    for system in write_decisions.SYSTEMS:
        figures = independent["overall"][system]
        assert figures["pairs"] == 22
        for metric in write_decisions.METRICS:
            assert figures[metric] is None or 0.0 <= figures[metric] <= 1.0
        assert set(independent["classes"][system]) == set(independent["classes"]["memd"])
    for system in write_decisions.SYSTEMS:
        found = report["adversarial"][system]
        assert found["pairs"] > 0 and found["wrong_skips"] >= 0 and found["wrong_replaces"] >= 0
    assert json.loads(output.read_text())["benchmark"] == "write_decisions"


def test_hacklm_rule_is_keyword_jaccard_without_stemming() -> None:
    # Normalised-equal text is a repeat; "always", "never" and "use" are stop words.
    assert hacklm_decision("Use tabs!", "use tabs") == Decision("skip", False)
    assert hacklm_decision("Always use tabs", "Never use tabs") == Decision("skip", False)
    # Keyword Jaccard: 3 of 5 is 0.6, an update; 2 of 5 a store; no stemming ("writes").
    assert hacklm_decision("Lock writer queue tabs", "Lock writer queue spaces").verdict == "update"
    assert hacklm_decision("lock writer tabs", "lock writer spaces queue").verdict == "store"
    assert hacklm_decision("write file", "writes file").verdict == "store"


def test_scoring_counts_data_losing_mistakes() -> None:
    pairs = write_decisions.load_pairs(write_decisions.INDEPENDENT)[:0]
    assert write_decisions.score(pairs, [])["accuracy"] is None
    rows = [
        write_decisions.Pair("a", "Quirk", "x", "y", "store", False, "", class_="c"),
        write_decisions.Pair("b", "Quirk", "x", "y", "update", True, "", class_="c"),
    ]
    figures = write_decisions.score(rows, [Decision("update", True), Decision("skip", False)])
    assert figures["wrong_replace"] == 1.0  # the one store-labelled pair was updated
    assert figures["wrong_skip"] == 0.5  # one of the two pairs not labelled skip was skipped
    assert figures["conflict_precision"] == 0.0 and figures["conflict_recall"] == 0.0


def test_no_labelled_pair_holds_what_a_store_would_refuse_as_a_secret() -> None:
    """The full benchmark stores every pair's entry; one the secret detector refuses stops it
    (the quick run above reads one pair a class, so it would not see it)."""
    flagged = [
        (path.name, text)
        for path in sorted((Path(write_decisions.__file__).parent / "data").glob("write-*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        for text in (json.loads(line)["existing"], json.loads(line)["new"])
        if has_secret(text)
    ]
    assert not flagged
