"""Recall of coding-project memories by the questions agents ask, lexical and paraphrased
(issue 20, "Measure it"), through a real daemon, beside SQLite FTS5 in the same run.

Data (`../shared/data/coding-memory-dev/`, or `MEMD_CODING_MEMORY_DIR`; its README): six projects,
each a `.memory/` of HackLM category files, and `queries.jsonl`, one question a line with its
project, kind (`lexical`, `paraphrase`, `none`) and the slugs that answer it.

Protocol:
- `per-project`: each project's `.memory/` is copied as it is into a workspace of its own; each
  question is asked in its project's workspace.
- `pooled`: the six projects' entries, category by category, are written into one workspace
  (a larger memory is harder; the issue asks for both); a question's answers are its project's
  entries there.
- A hit is mapped back to (project, slug) by its file and line, so equal slugs of two projects
  never count for each other.
- Per kind: R@1 and R@5 (at least one answer in the top 1 or 5, "finds the answer in its top 5"),
  MRR over the top 10. For `none` (nothing answers it): how many questions got any hit, and the
  top score's median and maximum (what a "nothing found" threshold would have to separate).
- Methods: `memd` (`Client.query`, limit 10) and `fts5` (`bench.retrieval.Fts5Index`: porter,
  bm25(), the question's words OR-ed) over the same entries.

Figures go to stdout as Markdown tables and to `bench/results/coding_memory.json`
(`coding_memory-quick.json` with `--quick`: one project, per-project only).
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from bench._daemon import running_daemon, semantic_installed, wait_embedded
from bench._report import RESULTS_DIR, commit, save
from bench.retrieval import Fts5Index
from memd.core.format import mdformat
from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd_client import Client, protocol as p

TOP = 10
KINDS = ("lexical", "paraphrase", "none")
METRICS = ("r@1", "r@5", "mrr")
METHODS: dict[str, str] = {
    "memd": "memd (query over the socket)",
    "hybrid": "memd hybrid (the semantic extra, mode semantic)",
    "fts5": "SQLite FTS5 (porter, bm25(), words OR-ed)",
}
LEXICAL = ("memd", "fts5")
"""The methods of the lexical daemon (semantic search off); `hybrid` has a daemon of its own."""

QUICK_PROJECTS = 1
QUERY_TIMEOUT = 60.0

NO_SCORE = -1.0
"""FTS5's top "score" for a question it answered: bm25() is not on memd's 0..1 scale."""

Key = tuple[str, str]
"""An entry as the questions name it: (project, slug)."""


class Question(msgspec.Struct, frozen=True):
    """One line of queries.jsonl."""

    project: str
    id: str
    query: str
    kind: str
    answers: list[str]


def data_dir() -> Path:
    """`MEMD_CODING_MEMORY_DIR`, else `<repo>/../shared/data/coding-memory-dev`."""
    configured = os.environ.get("MEMD_CODING_MEMORY_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "coding-memory-dev"


def load_questions(directory: Path) -> list[Question]:
    """Every question of `queries.jsonl`, in file order."""
    lines = (directory / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [msgspec.json.decode(line, type=Question) for line in lines if line.strip()]


def score(ranked: Sequence[Key], answers: set[Key]) -> dict[str, float]:
    """R@1, R@5 (an answer in the top 1 or 5) and MRR (top 10) of one ranked list of keys."""
    first = next((rank for rank, key in enumerate(ranked[:TOP], 1) if key in answers), None)
    return {
        "r@1": 1.0 if first == 1 else 0.0,
        "r@5": 1.0 if first is not None and first <= 5 else 0.0,
        "mrr": 1.0 / first if first else 0.0,
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    """The mean of each metric over `rows`, and "questions", their count."""
    summary = {m: sum(row[m] for row in rows) / len(rows) if rows else 0.0 for m in METRICS}
    summary["questions"] = float(len(rows))
    return summary


class Layout:
    """The category files of one workspace, and which (project, slug) each entry is."""

    def __init__(self) -> None:
        self.lines: dict[Category, list[str]] = {category: [] for category in CATEGORIES}
        self.owners: dict[Category, list[str]] = {category: [] for category in CATEGORIES}

    def add(self, project: str, memory: Path) -> None:
        """Add every entry line of `project`'s `.memory/` (in its category's file)."""
        for category in CATEGORIES:
            path = memory / category.file
            if not path.exists():
                continue
            for entry in mdformat.entries(mdformat.parse(path.read_text(encoding="utf-8"))):
                slug = f"[{entry.slug}] " if entry.slug else ""
                self.lines[category].append(f"- {slug}{entry.content}")
                self.owners[category].append(project)

    def write(self, workspace: Path) -> dict[tuple[str, int], Key]:
        """Write the files under `workspace/.memory/`; return (file, line) -> (project, slug)."""
        memory = workspace / ".memory"
        memory.mkdir(parents=True, exist_ok=True)
        keys: dict[tuple[str, int], Key] = {}
        for category in CATEGORIES:
            text = category.header + "".join(line + "\n" for line in self.lines[category])
            (memory / category.file).write_text(text, encoding="utf-8")
            parsed = mdformat.entries(mdformat.parse(text))
            for entry, owner in zip(parsed, self.owners[category], strict=True):
                keys[(category.file, entry.line)] = (owner, entry.slug or "")
        return keys

    def entries(self, keys: dict[tuple[str, int], Key]) -> tuple[list[Entry], list[Key]]:
        """Every entry, renumbered 1.. for FTS5, with its key in the same order."""
        entries: list[Entry] = []
        order: list[Key] = []
        for category in CATEGORIES:
            text = category.header + "".join(line + "\n" for line in self.lines[category])
            for entry in mdformat.entries(mdformat.parse(text)):
                order.append(keys[(category.file, entry.line)])
                entries.append(msgspec.structs.replace(entry, line=len(order)))
        return entries, order


Ranker = Callable[[str], tuple[list[Key], float]]
"""A question -> (ranked keys, top score or 0)."""


def _rankers(
    client: Client, keys: dict[tuple[str, int], Key], fts: Fts5Index, order: list[Key]
) -> dict[str, Ranker]:
    def asked(mode: p.QueryMode) -> Ranker:
        def rank(question: str) -> tuple[list[Key], float]:
            hits = client.query(question, limit=TOP, mode=mode).results
            top = hits[0].score if hits else 0.0
            return [keys[(hit.file, hit.line)] for hit in hits], top

        return rank

    def fts5(question: str) -> tuple[list[Key], float]:
        lines = fts.rank(question, TOP)
        return [order[line - 1] for line in lines], NO_SCORE if lines else 0.0

    return {"memd": asked("lexical"), "hybrid": asked("semantic"), "fts5": fts5}


def _evaluate(
    socket_path: Path,
    workspace: Path,
    layout: Layout,
    questions: list[Question],
    methods: Sequence[str],
) -> dict[str, dict[str, list[tuple[dict[str, float], float]]]]:
    """For each of `methods` and each kind, every question's metrics and top score."""
    keys = layout.write(workspace)
    entries, order = layout.entries(keys)
    fts = Fts5Index(entries)
    found: dict[str, dict[str, list[tuple[dict[str, float], float]]]] = {
        method: {kind: [] for kind in KINDS} for method in methods
    }
    try:
        with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
            client.list()  # load the workspace before asking
            if "hybrid" in methods:
                wait_embedded(client)
            rankers = _rankers(client, keys, fts, order)
            for method in methods:
                for question in questions:
                    ranked, top = rankers[method](question.query)
                    answers = {(question.project, slug) for slug in question.answers}
                    found[method][question.kind].append((score(ranked, answers), top))
    finally:
        fts.close()
    return found


def _summary(
    rows: dict[str, dict[str, list[tuple[dict[str, float], float]]]],
) -> dict[str, dict[str, dict[str, float]]]:
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for method, by_kind in rows.items():
        summary[method] = {}
        for kind, scored in by_kind.items():
            if kind == "none":
                tops = [top for _, top in scored]
                summary[method][kind] = {
                    "questions": float(len(tops)),
                    "with_hits": float(sum(1 for top in tops if top != 0)),
                    "top_median": statistics.median(tops) if tops else 0.0,
                    "top_max": max(tops, default=0.0),
                }
            else:
                summary[method][kind] = mean([metrics for metrics, _ in scored])
    return summary


def run(
    directory: Path, *, max_projects: int | None = None, pooled: bool = True, output: Path | None
) -> dict[str, Any]:
    """Score memd and FTS5 per project (and pooled), print the tables, return the report."""
    questions = load_questions(directory)
    projects = sorted({q.project for q in questions})[:max_projects]
    questions = [q for q in questions if q.project in projects]
    report: dict[str, Any] = {
        "benchmark": "coding_memory",
        "data_dir": str(directory),
        "commit": commit(),
        "projects": projects,
        "labels": METHODS,
    }
    methods = [*LEXICAL, "hybrid"] if semantic_installed() else list(LEXICAL)
    merged: dict[str, dict[str, list[tuple[dict[str, float], float]]]] = {
        method: {kind: [] for kind in KINDS} for method in methods
    }
    pooled_rows: dict[str, dict[str, list[tuple[dict[str, float], float]]]] = {}
    for chosen in (LEXICAL, ("hybrid",)):
        wanted = [method for method in chosen if method in methods]
        if not wanted:
            continue
        semantic = wanted == ["hybrid"]
        with running_daemon(private_state=True, semantic=semantic) as (socket_path, root):
            for project in projects:
                layout = Layout()
                layout.add(project, directory / project / ".memory")
                mine = [q for q in questions if q.project == project]
                found = _evaluate(socket_path, root / project, layout, mine, wanted)
                for method in wanted:
                    for kind in KINDS:
                        merged[method][kind] += found[method][kind]
            if pooled:
                layout = Layout()
                for project in projects:
                    layout.add(project, directory / project / ".memory")
                pooled_rows.update(
                    _evaluate(socket_path, root / "pooled", layout, questions, wanted)
                )
    report["per_project"] = _summary(merged)
    if pooled:
        report["pooled"] = _summary(pooled_rows)
    for setting in ("per_project", "pooled"):
        if setting in report:
            print(f"\nCoding memories, {setting.replace('_', '-')} ({directory})\n")
            print(markdown_table(report[setting]))
    save(report, output)
    return report


def markdown_table(summary: dict[str, dict[str, dict[str, float]]]) -> str:
    """method | kind | R@1 | R@5 | MRR | questions, then the `none` kind's top scores."""
    lines = ["| method | kind | R@1 | R@5 | MRR | questions |", "|---|---|---|---|---|---|"]
    for method, by_kind in summary.items():
        for kind in ("lexical", "paraphrase"):
            row = by_kind[kind]
            figures = " | ".join(f"{row[m]:.3f}" for m in METRICS)
            lines.append(f"| {METHODS[method]} | {kind} | {figures} | {row['questions']:.0f} |")
    lines += ["", "| method | `none` questions | with any hit | top score median | top max |"]
    lines.append("|---|---|---|---|---|")
    for method, by_kind in summary.items():
        none = by_kind["none"]
        tops = f"{none['top_median']:.3f} | {none['top_max']:.3f}"
        if none["top_max"] == NO_SCORE:
            tops = "- | -"
        lines.append(
            f"| {METHODS[method]} | {none['questions']:.0f} | {none['with_hits']:.0f} | {tops} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.coding_memory [--quick]`."""
    parser = argparse.ArgumentParser(prog="python -m bench.coding_memory", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one project, per-project only")
    args = parser.parse_args(argv)
    directory = data_dir()
    if not (directory / "queries.jsonl").is_file():
        print(f"coding_memory: no data at {directory} (set MEMD_CODING_MEMORY_DIR); skipped")
        return
    suffix = "-quick" if args.quick else ""
    run(
        directory,
        max_projects=QUICK_PROJECTS if args.quick else None,
        pooled=not args.quick,
        output=RESULTS_DIR / f"coding_memory{suffix}.json",
    )


if __name__ == "__main__":
    main()
