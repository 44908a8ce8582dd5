"""The redundancy benchmark runs end to end on a few pairs through real daemons (figures are not
asserted, only their shape and the safety ones), the stand-in reads memd's own prompt, and the
labelled pairs are what the data's README says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import _standin_model as standin, redundancy
from memd.core.format.categories import parse_category
from memd.core.format.secrets import has_secret
from memd.core.llm import answers, prompts
from memd.core.review.instruction_like import instruction_like

TINY = redundancy.Settings(every=17, stream=4)


def test_redundancy_benchmark_runs_tiny_and_the_write_decision_throws_away_no_distinct_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "redundancy.json"
    report = redundancy.run(TINY, output=output)
    table = capsys.readouterr().out
    assert "| condition | restates merged | distinct apart |" in table
    assert "| stream of unrelated stores | stores | stores/s | p50 ms | p99 ms |" in table
    pairs = len(redundancy.load_pairs(every=TINY.every))
    assert set(report["conditions"]) == {"plain", *redundancy.MODES}
    for figures in report["conditions"].values():
        assert figures["pairs"] == pairs == figures["restates"] + figures["distinct"]
        assert figures["other_actions"] == 0  # every store went into its file: none pending
        assert figures["distinct_skipped"] + figures["distinct_updated"] <= figures["distinct"]
    plain = report["conditions"]["plain"]
    assert plain["distinct_skipped"] == 0 and plain["asked"] == 0
    for mode in redundancy.FAIL_OPEN:
        assert report["fail_open"][mode]["actions_as_plain"]
        assert "restates" not in report["fail_open"][mode]["verdicts"]
    accuracy = report["standin_accuracy"]
    assert accuracy["pairs"] == pairs and accuracy["no_opinion"] == 0
    for name in ("plain", "standin"):
        assert report["stream"][name]["stores"] == TINY.stream
    assert json.loads(output.read_text())["benchmark"] == "redundancy"


def test_the_standin_reads_the_prompts_layout_and_answers_in_the_shape_memd_parses() -> None:
    category = parse_category("Instruction")
    candidates = ["Run the linter before pushing.", "Tag releases with a v prefix."]
    prompt = prompts.redundancy(category, "Always run the linter before pushing.", candidates)
    assert standin.parse_prompt(prompt) == (candidates, "Always run the linter before pushing.")
    parsed = answers.redundancy(json.dumps(standin.answer(prompt)), len(candidates))
    assert parsed is not None and parsed.candidate == 0
    changed = prompts.redundancy(category, "Tag releases with a date suffix.", candidates)
    parsed = answers.redundancy(json.dumps(standin.answer(changed)), len(candidates))
    assert parsed is not None and parsed.candidate is None
    assert standin.answer("Some other prompt.")["restates"] is None


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("Use port 8080 for the dev server.", "Use port 8081 for the dev server."),
        ("Enable retries in the client.", "Do not enable retries in the client."),
        ("Squash commits on merge.", "Squash commits on merge unless it is a release."),
    ],
)
def test_the_standin_never_calls_a_changed_number_negation_or_condition_a_restatement(
    existing: str, new: str
) -> None:
    assert not standin.restates(existing, new)


@pytest.mark.parametrize(("flag", "code"), [("--garbage", 0), ("--fail", 3)])
def test_the_standins_failure_modes_give_no_parsable_answer(flag: str, code: int) -> None:
    prompt = prompts.redundancy(parse_category("Quirk"), "b", ["a"])
    done = subprocess.run(
        [sys.executable, str(redundancy.STANDIN), flag],
        input=prompt,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == code
    assert answers.redundancy(done.stdout, 1) is None


def test_the_labelled_pairs_are_balanced_and_each_goes_straight_into_its_file() -> None:
    pairs = redundancy.load_pairs()
    assert len(pairs) >= 64
    labels = [pair.label for pair in pairs]
    assert set(labels) == {"restates", "distinct"}
    assert abs(labels.count("restates") - labels.count("distinct")) <= len(pairs) // 10
    assert len({pair.id for pair in pairs}) == len(pairs)
    for pair in pairs:
        parse_category(pair.category)
        for text in (pair.existing, pair.new):
            # A secret is refused and an instruction-like text waits in the inbox.
            assert not has_secret(text) and instruction_like(text) is None, text
