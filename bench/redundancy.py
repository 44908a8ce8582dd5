"""The redundancy prompt's labelled pairs through a real daemon, with and without a model
(issue 34): what the daemon's second opinion (`memd.server.methods.second_opinion`) changes, and
what it costs.

Protocol: `bench/data/redundancy_pairs.jsonl` (its README), 68 pairs labelled "restates" or
"distinct". For each condition one `memd serve` runs (`bench/_daemon.py`); each pair gets a
workspace of its own, where `existing` then `new` are stored slug-less as an agent (origin
"agent") into the pair's category, and the action of the second store is read. The bench's
config sets `[review]` Security and Instruction to "direct" (an agent's store there would wait
in the inbox by default, and the bench measures the store path, not review) and `[llm]
send_security = true` (the stand-in is a local script; otherwise Security pairs are never
asked). Conditions:
- (a) `plain`: no model: the write decision alone.
- (b) `standin`: `[llm] command` is `bench/_standin_model.py`, a scripted stand-in model (a
  content-word rule, not memd's), asked where the policy asks (a dry run that stores a new entry
  near a matched one it does not contradict).
- `garbage`, `stall`, `fail`: the stand-in printing prose, sleeping past the timeout, exiting 3;
  each must leave every action exactly as in (a) (fail-open).
- (c) the stand-in's own accuracy on the prompt: `prompts.redundancy` of each pair (the
  existing memory as the only candidate) piped to the stand-in, its answer parsed by
  `memd.core.llm.answers`, its verdict beside the label. This is the stand-in's figure, not a
  model's: a real model's accuracy is not memd's to test.
Figures per condition: restates pairs merged (skipped or updated), distinct pairs stored apart,
and the safety figures: distinct pairs whose new memory was thrown away (skipped; must be 0 for
(a)) and distinct pairs whose existing entry was replaced (updated; its old text goes to the
archive), the stores the model was asked about, and the p50 ms of the `new` stores. Cost: a
stream of unrelated stores (one workspace, one category) with the stand-in set and without:
stores/s and p50/p99 ms (with a model set every slug-less store first makes a dry run; a model
process runs only for a store worth asking, which an unrelated store is not).
Results: a Markdown table on stdout and `bench/results/redundancy.json` (`-quick` with
`--quick`: a few pairs, a short stream).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from bench._daemon import percentile, running_daemon
from bench._report import commit, save, settings_main
from bench.store import sentence
from memd.core.format.categories import parse_category
from memd.core.llm import answers, prompts
from memd_client import Client

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "data" / "redundancy_pairs.jsonl"
STANDIN = HERE / "_standin_model.py"
REVIEW_DIRECT = '[review]\nSecurity = "direct"\nInstruction = "direct"\n'
MODES = {"standin": (), "garbage": ("--garbage",), "stall": ("--stall",), "fail": ("--fail",)}
"""The stand-in's argv switches per condition (`plain` runs no model)."""
FAIL_OPEN = ("garbage", "stall", "fail")
CLIENT_TIMEOUT = 120.0


class Pair(msgspec.Struct, frozen=True):
    """One labelled pair (the data's README gives the fields)."""

    id: str
    category: str
    kind: str
    existing: str
    new: str
    label: str
    why: str


@dataclass(frozen=True)
class Settings:
    """How much to run."""

    every: int = 1
    """Use every `every`-th pair (1: all)."""
    stream: int = 200
    """Unrelated stores per stream (with and without a model)."""
    timeout: float = 10.0
    """`[llm] timeout` of the stand-in conditions; the stall one uses `stall_timeout`."""
    stall_timeout: float = 1.0


FULL = Settings()
QUICK = Settings(every=9, stream=15)


class Outcome(NamedTuple):
    action: str
    verdict: str | None
    """The result's `llm.verdict` (None: no model consulted)."""
    ms: float


def load_pairs(path: Path = PAIRS, every: int = 1) -> list[Pair]:
    """The pairs of the data file, every `every`-th one."""
    lines = path.read_bytes().splitlines()
    return [msgspec.json.decode(line, type=Pair) for line in lines][::every]


def config(mode: str | None, settings: Settings) -> str:
    """The daemon's config text for a condition (`mode` None: no model)."""
    if mode is None:
        return REVIEW_DIRECT
    command = [sys.executable, str(STANDIN), *MODES[mode]]
    timeout = settings.stall_timeout if mode == "stall" else settings.timeout
    return (
        f"{REVIEW_DIRECT}[llm]\ncommand = {json.dumps(command)}\ntimeout = {timeout}\n"
        "send_security = true\n"
    )


def run_pairs(pairs: Sequence[Pair], mode: str | None, settings: Settings) -> list[Outcome]:
    """Store each pair's `existing` then `new` in a workspace of its own; the `new` outcomes."""
    outcomes = []
    with (
        running_daemon(private_state=True, config=config(mode, settings)) as (socket_path, root),
        Client(socket_path, timeout=CLIENT_TIMEOUT) as client,
    ):
        for number, pair in enumerate(pairs):
            workspace = root / f"pair-{number}"
            workspace.mkdir()
            first = client.store(
                category=pair.category, content=pair.existing, workspace=workspace, origin="agent"
            )
            if first.action != "stored":
                raise RuntimeError(f"{pair.id}: the existing memory was {first.action}")
            started = time.perf_counter()
            result = client.store(
                category=pair.category, content=pair.new, workspace=workspace, origin="agent"
            )
            ms = (time.perf_counter() - started) * 1000
            verdict = None if result.llm is None else result.llm.verdict
            outcomes.append(Outcome(result.action, verdict, ms))
    return outcomes


def pair_figures(pairs: Sequence[Pair], outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The figures of one condition (see the module docstring)."""
    rows = list(zip(pairs, outcomes, strict=True))
    restates = [o for p, o in rows if p.label == "restates"]
    distinct = [o for p, o in rows if p.label == "distinct"]
    return {
        "pairs": len(rows),
        "restates": len(restates),
        "distinct": len(distinct),
        "restates_merged": sum(o.action in ("skipped", "updated") for o in restates),
        "distinct_apart": sum(o.action == "stored" for o in distinct),
        "distinct_skipped": sum(o.action == "skipped" for o in distinct),
        "distinct_updated": sum(o.action == "updated" for o in distinct),
        "other_actions": sum(o.action not in ("stored", "skipped", "updated") for o in outcomes),
        "asked": sum(o.verdict is not None for o in outcomes),
        "p50_ms": percentile(sorted(o.ms for o in outcomes), 0.5) if outcomes else None,
        "distinct_skipped_ids": [
            p.id for p, o in rows if p.label == "distinct" and o.action == "skipped"
        ],
        "wrong": [p.id for p, o in rows if _merged(o) != (p.label == "restates")],
    }


def _merged(outcome: Outcome) -> bool:
    return outcome.action in ("skipped", "updated")


def standin_verdict(pair: Pair) -> str:
    """The stand-in's verdict on the pair's prompt, parsed as memd parses it ("restates",
    "distinct", or "no_opinion" for an answer that does not parse)."""
    prompt = prompts.redundancy(parse_category(pair.category), pair.new, [pair.existing])
    done = subprocess.run(
        [sys.executable, str(STANDIN)],
        input=prompt,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    parsed = answers.redundancy(done.stdout, 1) if done.returncode == 0 else None
    if parsed is None:
        return "no_opinion"
    return "distinct" if parsed.candidate is None else "restates"


def standin_accuracy(pairs: Sequence[Pair]) -> dict[str, Any]:
    """(c): the stand-in's verdicts on the prompts beside the labels."""
    verdicts = [standin_verdict(pair) for pair in pairs]
    rows = list(zip(pairs, verdicts, strict=True))
    right = [p for p, v in rows if v == p.label]
    return {
        "pairs": len(rows),
        "correct": len(right),
        "accuracy": len(right) / len(rows) if rows else None,
        "restates_found": sum(v == "restates" for p, v in rows if p.label == "restates"),
        "distinct_called_restates": sum(v == "restates" for p, v in rows if p.label == "distinct"),
        "no_opinion": sum(v == "no_opinion" for v in verdicts),
        "wrong": [p.id for p, v in rows if v != p.label],
    }


def stream(mode: str | None, settings: Settings) -> dict[str, Any]:
    """Stores/s and p50/p99 ms of `settings.stream` unrelated stores into one category."""
    rng = random.Random("redundancy")
    texts = [sentence(rng, "r", n) for n in range(settings.stream)]
    times = []
    with (
        running_daemon(private_state=True, config=config(mode, settings)) as (socket_path, root),
        Client(socket_path, timeout=CLIENT_TIMEOUT, workspace=root) as client,
    ):
        client.store(category="Quirk", content="Warm-up entry of the stream bench.", slug="warm")
        began = time.perf_counter()
        for text in texts:
            started = time.perf_counter()
            result = client.store(category="Quirk", content=text, origin="agent")
            times.append((time.perf_counter() - started) * 1000)
            if result.action != "stored":
                raise RuntimeError(f"a stream store was {result.action}")
        elapsed = time.perf_counter() - began
    times.sort()
    return {
        "stores": len(times),
        "stores_per_s": len(times) / elapsed,
        "p50_ms": percentile(times, 0.5),
        "p99_ms": percentile(times, 0.99),
    }


CONDITION_LABELS = {
    "plain": "(a) write decision alone",
    "standin": "(b) with the stand-in as llm_command",
    "garbage": "stand-in printing garbage",
    "stall": "stand-in stalling past the timeout",
    "fail": "stand-in exiting non-zero",
}


def run(settings: Settings, output: Path | None = None) -> dict[str, Any]:
    """Run every condition, print the tables, save the report."""
    pairs = load_pairs(every=settings.every)
    outcomes = {"plain": run_pairs(pairs, None, settings)}
    for mode in MODES:
        outcomes[mode] = run_pairs(pairs, mode, settings)
    conditions = {name: pair_figures(pairs, found) for name, found in outcomes.items()}
    plain_actions = [o.action for o in outcomes["plain"]]
    fail_open = {
        mode: {
            "actions_as_plain": [o.action for o in outcomes[mode]] == plain_actions,
            "verdicts": sorted({o.verdict or "none" for o in outcomes[mode]}),
        }
        for mode in FAIL_OPEN
    }
    report = {
        "benchmark": "redundancy",
        "commit": commit(),
        "settings": settings.__dict__,
        "conditions": conditions,
        "standin_accuracy": standin_accuracy(pairs),
        "fail_open": fail_open,
        "stream": {"plain": stream(None, settings), "standin": stream("standin", settings)},
    }
    print_report(report)
    save(report, output)
    return report


def print_report(report: dict[str, Any]) -> None:
    """The report's Markdown tables."""
    print(
        "| condition | restates merged | distinct apart | distinct skipped (new thrown away) "
        "| distinct updated (old archived) | asked | p50 ms (new store) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, figures in report["conditions"].items():
        print(
            f"| {CONDITION_LABELS[name]} | {figures['restates_merged']}/{figures['restates']} "
            f"| {figures['distinct_apart']}/{figures['distinct']} | {figures['distinct_skipped']} "
            f"| {figures['distinct_updated']} | {figures['asked']} | {figures['p50_ms']:.1f} |"
        )
    for name, figures in report["conditions"].items():
        if figures["distinct_skipped_ids"]:
            skipped = ", ".join(figures["distinct_skipped_ids"])
            print(f"- {CONDITION_LABELS[name]}: distinct pairs skipped: {skipped}")
    accuracy = report["standin_accuracy"]
    print(
        f"\n(c) the stand-in's own verdicts on the prompt: {accuracy['correct']}/"
        f"{accuracy['pairs']} match the label ({accuracy['restates_found']} restatements found, "
        f"{accuracy['distinct_called_restates']} distinct pairs called restatements, "
        f"{accuracy['no_opinion']} unparsed)."
    )
    for mode, check in report["fail_open"].items():
        same = "every action as in (a)" if check["actions_as_plain"] else "ACTIONS DIFFER from (a)"
        print(f"- {CONDITION_LABELS[mode]}: {same}; verdicts {', '.join(check['verdicts'])}")
    print("\n| stream of unrelated stores | stores | stores/s | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for name, figures in report["stream"].items():
        label = "no model" if name == "plain" else "stand-in set as llm_command"
        print(
            f"| {label} | {figures['stores']} | {figures['stores_per_s']:.0f} "
            f"| {figures['p50_ms']:.2f} | {figures['p99_ms']:.2f} |"
        )


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.redundancy [--quick]`."""
    settings_main(
        argv,
        name="redundancy",
        description=__doc__,
        quick_help="a few pairs and a short stream (seconds), for the smoke test",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
