"""Retrieval on LongMemEval-S through a real daemon, beside FTS5 and HackLM (issue 20).

Protocol (the data's README.md): each question has its own haystack of 38-62 chat sessions
between a user and an assistant. It is indexed three ways, each as its own workspace, and the
question (`question`) is the query:
- `turn`: every turn (user and assistant) is one entry; the relevant entries are the turns
  marked `has_answer`;
- `user`: user turns only, one entry each; relevant: the user turns marked `has_answer` (a
  question whose answer only an assistant turn holds has none, and is left out of this unit);
- `session`: one entry per session (its turns joined by a space); relevant: the sessions in
  `answer_session_ids`.
Abstention questions (`_abs` ids) have no answer and are left out. Metrics are
`bench.locomo`'s (R@5, R@10, MRR within the top 10, hit@5), averaged over questions.

An entry is its text on one line: every whitespace run (line breaks included) becomes one
space. Two things about memd's file format are handled, and counted in the report:
- a line that would read as `[slug] content` (a turn opening with "[stage direction] ...")
  gets a backslash before its "[" (a Markdown escape; no search term changes);
- memd's `max_entry_chars` caps what a *store* accepts, not what a file holds, so a longer
  entry is written and indexed whole (the report says how many are longer); a category file
  over `max_file_bytes` would not load at all, and stops the run with an error (none is).

Each (question, unit) is written as the `decisions.md` file of its own workspace before one
real `memd serve` loads it; memd is asked with `Client.query(question, limit=10)` over its
socket, and in the same run SQLite FTS5 (`bm25()`, words OR-ed) and HackLM's substring scoring
rank the entries parsed back from the same file (`bench.retrieval`'s rankers). Target: memd's
every-turn R@5 at least FTS5's. Figures go to stdout as a Markdown table and to
`bench/results/longmemeval.json` (`longmemeval-quick.json` with `--quick`: the first
`QUICK_QUESTIONS` questions by file name). The data directory is `MEMD_LONGMEMEVAL_DIR`, else
`<repo>/../shared/data/longmemeval-dev`. Everything is deterministic except the timings.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import msgspec

from bench._daemon import running_daemon
from bench._report import RESULTS_DIR, commit, record_verdict, save
from bench.locomo import METRICS, mean_metrics, score_question
from bench.retrieval import CATEGORY, METHODS, memory_file, rankers
from memd.core.format import limits, mdformat
from memd.core.format.mdformat import Entry

DEFAULT_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "longmemeval-dev"
QUICK_QUESTIONS = 4
UNITS: dict[str, str] = {
    "turn": "every turn",
    "user": "user turns only",
    "session": "sessions",
}
DAEMON_CONFIG = "idle_unload_seconds = 2\n"
"""Each workspace is queried once: unloading it soon keeps the daemon small (294 of them)."""
_HEADINGS = ("R@5", "R@10", "MRR", "hit@5")  # of locomo.METRICS, in order
_WHITESPACE = re.compile(r"\s+")
_ABSTENTION = "_abs"


class Unit(msgspec.Struct, frozen=True, kw_only=True):
    """One way of indexing a haystack: its entries (line = position from 1), each entry's id,
    and the ids of the relevant ones."""

    entries: tuple[Entry, ...]
    ids: tuple[str, ...]
    relevant: tuple[str, ...]


class Haystack(msgspec.Struct, frozen=True, kw_only=True):
    """One question with its haystack, indexed as each of `UNITS`."""

    name: str
    question: str
    question_type: str
    units: dict[str, Unit]


def data_dir() -> Path:
    """Return the data directory: `MEMD_LONGMEMEVAL_DIR`, or the default next to the repo."""
    configured = os.environ.get("MEMD_LONGMEMEVAL_DIR")
    return Path(configured) if configured else DEFAULT_DIR


def question_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """Return the question files of `directory` by name: (scored, abstention ones left out)."""
    paths = sorted(directory.glob("*.json.gz"))
    scored = [path for path in paths if _ABSTENTION not in _name(path)]
    return scored, [path for path in paths if _ABSTENTION in _name(path)]


def _name(path: Path) -> str:
    return path.name.removesuffix(".json.gz")


def memory_line(text: str) -> str:
    """Return `text` as one entry's content: whitespace runs (line breaks too) become one
    space, and a leading "[" that would make the line read as `[slug] content` is escaped
    with a backslash ("" for blank text)."""
    line = _WHITESPACE.sub(" ", text).strip()
    parsed = mdformat.parse_entry_line(f"- {line}")
    if parsed is not None and parsed[0] is not None:
        line = "\\" + line
    return line


def load_haystack(path: Path) -> Haystack:
    """Read one question file (gzipped LongMemEval JSON) into its three units.

    Turn ids are `s<session>:t<turn>` (positions from 0 in the haystack); session ids are the
    haystack's own. A blank turn is no entry.
    """
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        raw: dict[str, Any] = json.load(handle)
    turns: list[tuple[str, str, bool, bool]] = []  # id, line, user?, has_answer?
    sessions: list[tuple[str, str]] = []
    pairs = zip(raw["haystack_session_ids"], raw["haystack_sessions"], strict=True)
    for number, (session_id, session) in enumerate(pairs):
        parts = []
        for position, turn in enumerate(session):
            line = memory_line(str(turn["content"]))
            if line:
                turn_id = f"s{number}:t{position}"
                user = turn["role"] == "user"
                turns.append((turn_id, line, user, bool(turn.get("has_answer"))))
                parts.append(_WHITESPACE.sub(" ", str(turn["content"])).strip())
        if parts:
            sessions.append((str(session_id), memory_line(" ".join(parts))))
    answers = {str(session_id) for session_id in raw["answer_session_ids"]}
    units = {
        "turn": _unit([(i, line, answer) for i, line, _, answer in turns]),
        "user": _unit([(i, line, answer) for i, line, user, answer in turns if user]),
        "session": _unit([(i, line, i in answers) for i, line in sessions]),
    }
    return Haystack(
        name=_name(path),
        question=str(raw["question"]),
        question_type=str(raw["question_type"]),
        units=units,
    )


def _unit(items: list[tuple[str, str, bool]]) -> Unit:
    return Unit(
        entries=tuple(
            Entry(line=number, slug=None, content=line)
            for number, (_, line, _) in enumerate(items, 1)
        ),
        ids=tuple(item_id for item_id, _, _ in items),
        relevant=tuple(item_id for item_id, _, relevant in items if relevant),
    )


def _entry_counts(haystacks: list[Haystack]) -> dict[str, dict[str, int]]:
    """Per unit: entries, how many are longer than `max_entry_chars` (indexed whole), how many
    had a leading "[" escaped, the longest entry and the largest category file."""
    counts: dict[str, dict[str, int]] = {}
    for unit in UNITS:
        every = [entry for haystack in haystacks for entry in haystack.units[unit].entries]
        sizes = [
            len(memory_file(h.name, h.units[unit].entries, h.units[unit].ids)[0].encode())
            for h in haystacks
        ]
        counts[unit] = {
            "entries": len(every),
            "over_max_entry_chars": sum(len(e.content) > limits.MAX_ENTRY_CHARS for e in every),
            "escaped_bracket": sum(e.content.startswith("\\[") for e in every),
            "longest_chars": max((len(e.content) for e in every), default=0),
            "largest_file_bytes": max(sizes, default=0),
        }
    return counts


def run(
    directory: Path, *, max_questions: int | None = None, output: Path | None = None
) -> dict[str, Any]:
    """Score memd and both baselines on every unit of the questions in `directory`.

    Args:
        directory: The directory holding the gzipped question files.
        max_questions: Use only the first this many scored questions (by file name).
        output: Where to write the JSON report; None writes nothing.

    Returns:
        The report: "units" maps each of `UNITS` to its "methods" (each of `bench.retrieval`'s
        `METHODS` with "r@5", "r@10", "mrr", "hit@5", "questions", "ms_per_query") and its
        "left_out" questions (no relevant entry in that unit); also "per_type" (R@5 per
        question type), "entries" (see `_entry_counts`), "margin_r5" per unit (memd minus
        fts5) and "target_met" (every-turn margin at least 0).

    Raises:
        ValueError: a category file would be over `max_file_bytes`, or an entry does not come
            back from its file as itself.
    """
    began = time.perf_counter()
    scored, abstentions = question_files(directory)
    haystacks = [load_haystack(path) for path in scored[:max_questions]]
    entries = _entry_counts(haystacks)
    for name, counted in entries.items():
        if counted["largest_file_bytes"] > limits.MAX_FILE_BYTES:
            raise ValueError(f"a {name} file is over max_file_bytes; memd would not load it")
    rows: dict[str, dict[str, list[dict[str, float]]]] = {
        unit: {method: [] for method in METHODS} for unit in UNITS
    }
    types: dict[str, list[str]] = {unit: [] for unit in UNITS}
    seconds = {unit: dict.fromkeys(METHODS, 0.0) for unit in UNITS}
    left_out: dict[str, list[str]] = {unit: [] for unit in UNITS}
    with running_daemon(private_state=True, config=DAEMON_CONFIG) as (socket_path, root):
        for haystack in haystacks:
            for name, unit in haystack.units.items():
                if not unit.relevant:
                    left_out[name].append(haystack.name)
                    continue
                workspace = root / f"{haystack.name}-{name}"
                _score_unit(socket_path, workspace, haystack, unit, rows[name], seconds[name])
                types[name].append(haystack.question_type)
    units: dict[str, Any] = {}
    for name in UNITS:
        methods = {method: mean_metrics(rows[name][method]) for method in METHODS}
        for method, figures in methods.items():
            figures["ms_per_query"] = 1000 * seconds[name][method] / max(1, len(types[name]))
        units[name] = {"methods": methods, "left_out": left_out[name]}
    margins = {
        u: units[u]["methods"]["memd"]["r@5"] - units[u]["methods"]["fts5"]["r@5"] for u in UNITS
    }
    report: dict[str, Any] = {
        "benchmark": "longmemeval",
        "data_dir": str(directory),
        "commit": commit(),
        "questions": [haystack.name for haystack in haystacks],
        "abstention_left_out": [_name(path) for path in abstentions],
        "labels": {"units": UNITS, "methods": METHODS},
        "entries": entries,
        "units": units,
        "per_type": _per_type(rows, types),
        "margin_r5": margins,
        "target": "every-turn R@5: memd at least FTS5",
        "target_met": margins["turn"] >= 0.0,
        "seconds": time.perf_counter() - began,
    }
    _print(directory, report)
    save(report, output)
    return report


def _score_unit(
    socket_path: Path,
    workspace: Path,
    haystack: Haystack,
    unit: Unit,
    rows: dict[str, list[dict[str, float]]],
    seconds: dict[str, float],
) -> None:
    """Write `unit` as `workspace`'s category file and score every method on the question."""
    text, entries, by_line = memory_file(haystack.name, unit.entries, unit.ids)
    (workspace / ".memory").mkdir(parents=True)
    (workspace / ".memory" / CATEGORY.file).write_text(text, encoding="utf-8")
    with rankers(socket_path, workspace, entries) as ranking:
        for method, rank in ranking.items():
            started = time.perf_counter()
            lines = rank(haystack.question)
            seconds[method] += time.perf_counter() - started
            ranked = [by_line[line] for line in lines]
            rows[method].append(score_question(ranked, unit.relevant))


def _per_type(
    rows: dict[str, dict[str, list[dict[str, float]]]], types: dict[str, list[str]]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per unit and question type: each method's R@5 and the number of questions."""
    found: dict[str, dict[str, dict[str, float]]] = {}
    for unit, kinds in types.items():
        found[unit] = {}
        for kind in sorted(set(kinds)):
            chosen = [i for i, k in enumerate(kinds) if k == kind]
            figures = {m: mean_metrics([rows[unit][m][i] for i in chosen])["r@5"] for m in METHODS}
            figures["questions"] = float(len(chosen))
            found[unit][kind] = figures
    return found


def markdown_table(units: dict[str, Any]) -> str:
    """Return the Markdown table: unit | method | R@5 | R@10 | MRR | hit@5 | questions."""
    lines = [
        "| unit | method | " + " | ".join(_HEADINGS) + " | questions |",
        "|---" * (len(_HEADINGS) + 3) + "|",
    ]
    for unit, unit_label in UNITS.items():
        for method, label in METHODS.items():
            figures = units[unit]["methods"][method]
            cells = " | ".join(f"{figures[column]:.3f}" for column in METRICS)
            lines.append(f"| {unit_label} | {label} | {cells} | {figures['questions']:.0f} |")
    return "\n".join(lines)


def _print(directory: Path, report: dict[str, Any]) -> None:
    print(f"LongMemEval-S retrieval through memd serve ({directory})\n")
    print(markdown_table(report["units"]))
    left = ", ".join(f"{UNITS[u]} {len(report['units'][u]['left_out'])}" for u in UNITS)
    print(
        f"\n{len(report['questions'])} questions ({len(report['abstention_left_out'])} "
        f"abstention ones left out); without a relevant entry, left out: {left}"
    )
    for unit, counted in report["entries"].items():
        print(
            f"{UNITS[unit]}: {counted['entries']} entries, {counted['over_max_entry_chars']} "
            f"longer than max_entry_chars ({limits.MAX_ENTRY_CHARS}; indexed whole), "
            f"{counted['escaped_bracket']} with a leading [ escaped, longest "
            f"{counted['longest_chars']} chars, largest file {counted['largest_file_bytes']} bytes"
        )
    margins = ", ".join(f"{UNITS[u]} {m:+.3f}" for u, m in report["margin_r5"].items())
    verdict = "met" if report["target_met"] else "NOT met"
    text = f"memd R@5 margin over FTS5: {margins} (target: every turn >= 0: {verdict})"
    print(text)
    record_verdict("LongMemEval R@5 over FTS5", bool(report["target_met"]), text)
    timings = ", ".join(
        f"{m} {report['units']['turn']['methods'][m]['ms_per_query']:.2f}" for m in METHODS
    )
    print(f"ms per every-turn query: {timings} (memd includes the socket round trip)")


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: the first QUICK_QUESTIONS)."""
    parser = argparse.ArgumentParser(prog="python -m bench.longmemeval", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_QUESTIONS} questions")
    args = parser.parse_args(argv)
    directory = data_dir()
    if not directory.is_dir() or not any(directory.glob("*.json.gz")):
        print(f"LongMemEval data not found at {directory}; set MEMD_LONGMEMEVAL_DIR. Skipped.")
        return
    if args.quick:
        run(
            directory,
            max_questions=QUICK_QUESTIONS,
            output=RESULTS_DIR / "longmemeval-quick.json",
        )
    else:
        run(directory, output=RESULTS_DIR / "longmemeval.json")


if __name__ == "__main__":
    main()
