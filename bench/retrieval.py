"""Retrieval quality through a real daemon, beside two lexical baselines (issue 6, "Measure it").

Protocol (the data's README.md; loading and metrics are shared with `bench.locomo`): every turn
of a LoCoMo conversation is one memory line, `Speaker: text` (plus ` [shares a photo: caption]`);
every question of category 1-4 with evidence is a query, its evidence turns the relevant entries.
R@5, R@10, MRR (top 10) and hit@5 are averaged over questions.

Each conversation is written as the `decisions.md` category file (`- <line>` per turn, no slugs)
of its own workspace before a real `memd serve` loads it; memd is asked with
`Client.query(question, limit=10)` over its socket and its hits are mapped back to turns by line
number. In the same run, on the entries parsed back from the same file, two baselines rank too:
- `hacklm`: HackLM's substring scoring, exactly as hacklm-spec.md §3 describes it (`hacklm_rank`);
- `fts5`: SQLite FTS5 with `tokenize='porter'`, the question's words OR-ed, ranked by `bm25()`.

Target: memd's R@5 at least `TARGET_MARGIN` above FTS5's. Figures go to stdout as a Markdown
table and to `bench/results/retrieval.json` (`retrieval-quick.json` with `--quick`: the first
conversation, 50 questions). The data directory is `MEMD_LOCOMO_DIR`, else
`<repo>/../shared/data/locomo-dev`. Everything is deterministic except the timings.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench._daemon import running_daemon, semantic_installed, wait_embedded
from bench._report import RESULTS_DIR, commit, record_verdict, save
from bench.locomo import (
    METRICS,
    TOP,
    Conversation,
    data_dir,
    load_conversation,
    mean_metrics,
    score_question,
)
from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd_client import Client

TARGET_MARGIN = 0.05
QUICK_CONVERSATIONS = 1
QUICK_QUESTIONS = 50
CATEGORY = Category.DECISION
QUERY_TIMEOUT = 60.0

# method key -> label in the table; the order is the table's.
METHODS: dict[str, str] = {
    "memd": "memd (query over the socket)",
    "hacklm": "HackLM substring scoring (hacklm-spec.md §3)",
    "fts5": "SQLite FTS5 (porter, bm25(), words OR-ed)",
}
HYBRID = ("hybrid", "memd hybrid (the semantic extra, mode semantic)")
"""With the semantic extra installed, a row of its own, from a daemon with semantic search on,
asked once each conversation's vectors are complete (`bench._daemon.wait_embedded`)."""
_HEADINGS = ("R@5", "R@10", "MRR", "hit@5")  # of locomo.METRICS, in order

# JavaScript's `\s` (ECMAScript WhiteSpace and LineTerminator), for HackLM's `split(/\s+/)`.
_JS_WHITESPACE = re.compile(
    "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+"
)
_NOT_KEYWORD_CHAR = re.compile(r"[^a-z0-9]")
# FTS5 words: runs of letters and digits, what the unicode61 tokenizer (under porter) keeps.
_WORD = re.compile(r"[^\W_]+")

Ranker = Callable[[str], list[int]]


# ---------------------------------------------------------------------------- baselines


def hacklm_keywords(query: str) -> list[str]:
    """Return HackLM's keywords of `query` (hacklm-spec.md §3, step 2), duplicates kept.

    The query is lowercased and split on whitespace runs; a token is kept when it is longer than
    2 characters *before* stripping (JavaScript length, i.e. UTF-16 code units), and then loses
    every character outside a-z and 0-9 (so it may become "", which matches every entry).
    """
    tokens = _JS_WHITESPACE.split(query.lower())
    kept = [token for token in tokens if len(token.encode("utf-16-le")) // 2 > 2]
    return [_NOT_KEYWORD_CHAR.sub("", token) for token in kept]


def hacklm_rank(entries: Sequence[Entry], query: str, limit: int = TOP) -> list[Entry]:
    """Rank `entries` (storage order) for `query` as HackLM's `searchMemories` does.

    +10 for each keyword found as a substring of the lowercased content, +25 when the whole
    lowercased query (untrimmed, punctuation included) is a substring of it; entries scoring 0
    are dropped; a stable sort by score keeps storage order among ties. Without keywords the
    first `limit` entries are returned unranked. The effective limit is min(limit, 20).

    Args:
        entries: The candidate entries in storage order (category order, then file order).
        query: The query text.
        limit: The most entries to return.

    Returns:
        The best entries, best first.
    """
    limit = min(limit, 20)
    keywords = hacklm_keywords(query)
    if not keywords:
        return list(entries[:limit])
    whole = query.lower()
    scored: list[tuple[int, Entry]] = []
    for entry in entries:
        content = entry.content.lower()
        score = sum(10 for keyword in keywords if keyword in content)
        if whole in content:
            score += 25
        if score > 0:
            scored.append((score, entry))
    scored.sort(key=lambda pair: -pair[0])  # stable: ties keep storage order
    return [entry for _, entry in scored[:limit]]


def fts5_match(query: str) -> str | None:
    """Return the FTS5 MATCH expression for `query`: its words, each quoted, OR-ed.

    Quoting keeps words such as OR, NOT or NEAR from being read as operators. None when the
    query has no word.
    """
    words = [word for word in _WORD.findall(query) if word]
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


class Fts5Index:
    """An in-memory SQLite FTS5 table of entries (rowid = line), porter tokenizer, bm25()."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE memories USING fts5(content, tokenize='porter')")
        rows = [(entry.line, entry.content) for entry in entries]
        self._db.executemany("INSERT INTO memories(rowid, content) VALUES (?, ?)", rows)

    def rank(self, query: str, limit: int = TOP) -> list[int]:
        """Return the lines of the best `limit` entries for `query` (bm25, then line order)."""
        match = fts5_match(query)
        if match is None:
            return []
        rows = self._db.execute(
            "SELECT rowid FROM memories WHERE memories MATCH ? "
            "ORDER BY bm25(memories), rowid LIMIT ?",
            (match, limit),
        )
        return [int(rowid) for (rowid,) in rows]

    def close(self) -> None:
        """Close the database."""
        self._db.close()


# ---------------------------------------------------------------------------- workspace


def category_file(conversation: Conversation) -> tuple[str, tuple[Entry, ...], dict[int, str]]:
    """Return the category file text for `conversation`, its parsed entries and line -> dia_id.

    Raises:
        ValueError: a turn does not come back from the file as exactly its own entry.
    """
    return memory_file(conversation.name, conversation.entries, conversation.dia_ids)


def memory_file(
    name: str, entries: Sequence[Entry], ids: Sequence[str]
) -> tuple[str, tuple[Entry, ...], dict[int, str]]:
    """Return the `CATEGORY` file text holding `entries` (`- <content>` each, no slugs, after
    the category's header), the entries parsed back from it and line -> the entry's id.

    Raises:
        ValueError: an entry does not come back from the file as exactly its own entry.
    """
    lines = "".join(f"- {entry.content}\n" for entry in entries)
    text = CATEGORY.header + lines
    parsed = mdformat.entries(mdformat.parse(text))
    originals = [entry.content.strip() for entry in entries]
    if [(entry.slug, entry.content) for entry in parsed] != [(None, c) for c in originals]:
        raise ValueError(f"{name}: entries do not round-trip")
    by_line = {entry.line: id_ for entry, id_ in zip(parsed, ids, strict=True)}
    return text, parsed, by_line


def _memd_ranker(client: Client) -> Ranker:
    def rank(question: str) -> list[int]:
        hits = client.query(question, limit=TOP).results
        return [hit.line for hit in hits if hit.file == CATEGORY.file]

    return rank


# ---------------------------------------------------------------------------- run


def run(
    data_dir: Path,
    *,
    max_conversations: int | None = None,
    max_questions: int | None = None,
    output: Path | None = None,
) -> dict[str, Any]:
    """Score memd and both baselines on the conversations in `data_dir`, print the table.

    Args:
        data_dir: The directory holding the LoCoMo conversation JSON files.
        max_conversations: Use only the first this many conversations (by file name).
        max_questions: Use only the first this many questions of each conversation.
        output: Where to write the JSON report; None writes nothing.

    Returns:
        The report: "methods" maps each of `METHODS` to its metrics ("r@5", "r@10", "mrr",
        "hit@5", "questions", "ms_per_query"); also per conversation and per question category,
        "margin_r5" (memd minus fts5) and "target_met".
    """
    began = time.perf_counter()
    conversations = [
        load_conversation(path) for path in sorted(data_dir.glob("*.json"))[:max_conversations]
    ]
    rows: dict[str, list[dict[str, float]]] = {method: [] for method in METHODS}
    seconds = dict.fromkeys(METHODS, 0.0)
    per_conversation: dict[str, dict[str, dict[str, float]]] = {}
    categories: list[int] = []
    with running_daemon(private_state=True) as (socket_path, root):
        for conversation in conversations:
            questions = conversation.questions[:max_questions]
            text, entries, by_line = category_file(conversation)
            workspace = root / conversation.name
            (workspace / ".memory").mkdir(parents=True)
            (workspace / ".memory" / CATEGORY.file).write_text(text, encoding="utf-8")
            mine: dict[str, list[dict[str, float]]] = {method: [] for method in METHODS}
            with rankers(socket_path, workspace, entries) as ranking:
                for question in questions:
                    for method, rank in ranking.items():
                        started = time.perf_counter()
                        lines = rank(question.text)
                        seconds[method] += time.perf_counter() - started
                        ranked = [by_line[line] for line in lines]
                        mine[method].append(score_question(ranked, question.evidence))
            categories.extend(question.category for question in questions)
            per_conversation[conversation.name] = {m: mean_metrics(r) for m, r in mine.items()}
            for method in METHODS:
                rows[method].extend(mine[method])
    methods = {method: mean_metrics(rows[method]) for method in METHODS}
    for method, figures in methods.items():
        figures["ms_per_query"] = 1000 * seconds[method] / max(1, len(rows[method]))
    if semantic_installed():
        methods[HYBRID[0]] = _hybrid(conversations, max_questions)
    margin = methods["memd"]["r@5"] - methods["fts5"]["r@5"]
    report: dict[str, Any] = {
        "benchmark": "retrieval",
        "data_dir": str(data_dir),
        "commit": commit(),
        "conversations": [conversation.name for conversation in conversations],
        "questions": len(rows["memd"]),
        "labels": METHODS,
        "methods": methods,
        "per_conversation": per_conversation,
        "per_category": _per_category(rows, categories),
        "margin_r5": margin,
        "target_margin": TARGET_MARGIN,
        "target_met": margin >= TARGET_MARGIN,
        "seconds": time.perf_counter() - began,
    }
    print(f"LoCoMo retrieval through memd serve ({data_dir})\n")
    print(markdown_table(methods))
    verdict = "met" if report["target_met"] else "NOT met"
    text = f"memd R@5 margin over FTS5: {margin:+.3f} (target >= +{TARGET_MARGIN:.2f}: {verdict})"
    print(f"\n{text}")
    record_verdict("LoCoMo R@5 over FTS5", bool(report["target_met"]), text)
    timings = ", ".join(f"{m} {methods[m]['ms_per_query']:.2f}" for m in methods)
    print(f"ms per query: {timings} (memd includes the socket round trip)")
    save(report, output)
    return report


def _hybrid(conversations: list[Conversation], max_questions: int | None) -> dict[str, float]:
    """memd hybrid's metrics (and ms per query) on `conversations`, from a daemon of its own."""
    scored: list[dict[str, float]] = []
    seconds = 0.0
    with running_daemon(private_state=True, semantic=True) as (socket_path, root):
        for conversation in conversations:
            text, _, by_line = category_file(conversation)
            workspace = root / conversation.name
            (workspace / ".memory").mkdir(parents=True)
            (workspace / ".memory" / CATEGORY.file).write_text(text, encoding="utf-8")
            with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
                wait_embedded(client)
                for question in conversation.questions[:max_questions]:
                    started = time.perf_counter()
                    hits = client.query(question.text, limit=TOP, mode="semantic").results
                    seconds += time.perf_counter() - started
                    ranked = [by_line[hit.line] for hit in hits if hit.file == CATEGORY.file]
                    scored.append(score_question(ranked, question.evidence))
    figures = mean_metrics(scored)
    figures["ms_per_query"] = 1000 * seconds / max(1, len(scored))
    return figures


@contextlib.contextmanager
def rankers(
    socket_path: Path, workspace: Path, entries: tuple[Entry, ...]
) -> Iterator[dict[str, Ranker]]:
    """Yield each of `METHODS`' ranker for one workspace (memd's over its socket, its
    `CATEGORY` file holding `entries`; the baselines on `entries`): question -> hit lines."""
    fts = Fts5Index(entries)
    try:
        with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
            client.list()  # load the workspace before anything is timed
            yield {
                "memd": _memd_ranker(client),
                "hacklm": lambda q: [entry.line for entry in hacklm_rank(entries, q)],
                "fts5": fts.rank,
            }
    finally:
        fts.close()


def _per_category(
    rows: dict[str, list[dict[str, float]]], categories: list[int]
) -> dict[str, dict[str, dict[str, float]]]:
    found: dict[str, dict[str, dict[str, float]]] = {}
    for category in sorted(set(categories)):
        chosen = [i for i, c in enumerate(categories) if c == category]
        found[str(category)] = {
            method: mean_metrics([rows[method][i] for i in chosen]) for method in METHODS
        }
    return found


def markdown_table(methods: dict[str, dict[str, float]]) -> str:
    """Return the Markdown table: method | R@5 | R@10 | MRR | hit@5 | questions."""
    lines = [
        "| method | " + " | ".join(_HEADINGS) + " | questions |",
        "|---" * (len(_HEADINGS) + 2) + "|",
    ]
    labels = {**METHODS, HYBRID[0]: HYBRID[1]}
    for method, figures in methods.items():
        label = labels[method]
        cells = " | ".join(f"{figures[column]:.3f}" for column in METRICS)
        lines.append(f"| {label} | {cells} | {figures['questions']:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: 1 conversation, 50 questions)."""
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1 conversation, 50 questions")
    args = parser.parse_args(argv)
    directory = data_dir()
    if not directory.is_dir() or not any(directory.glob("*.json")):
        print(f"LoCoMo data not found at {directory}; set MEMD_LOCOMO_DIR. Skipped.")
        return
    if args.quick:
        run(
            directory,
            max_conversations=QUICK_CONVERSATIONS,
            max_questions=QUICK_QUESTIONS,
            output=RESULTS_DIR / "retrieval-quick.json",
        )
    else:
        run(directory, output=RESULTS_DIR / "retrieval.json")


if __name__ == "__main__":
    main()
