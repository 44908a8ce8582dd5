"""Retrieval quality on the LoCoMo development split (see its README.md for the protocol).

Every turn of a conversation becomes one memory line, `Speaker: text` (plus
` [shares a photo: caption]` when the turn shares a photo), so a conversation is one category
file. Every question of category 1-4 with evidence is a query; its evidence turns are the
relevant entries. Metrics, averaged over questions:
- R@k: the fraction of a question's evidence turns found in the top k hits;
- hit@k: 1 when at least one evidence turn is in the top k;
- MRR: the reciprocal rank of the first evidence turn within the top 10, else 0.

The data directory comes from `MEMD_LOCOMO_DIR`, defaulting to `<repo>/../shared/data/locomo-dev`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.ranking import build_index, search

DEFAULT_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev"
QUESTION_CATEGORIES = frozenset({1, 2, 3, 4})
TOP = 10
METRICS = ("r@5", "r@10", "mrr", "hit@5")

_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_LINE_BREAKS = re.compile(r"[ \t]*[\r\n]+[ \t]*")


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """One retrieval query and the dia_ids of the turns that answer it."""

    text: str
    evidence: tuple[str, ...]
    category: int = 0


class Conversation(msgspec.Struct, frozen=True, kw_only=True):
    """A conversation as memory entries (with each entry's dia_id) and its questions."""

    name: str
    entries: tuple[Entry, ...]
    dia_ids: tuple[str, ...]
    questions: tuple[Question, ...]


def data_dir() -> Path:
    """Return the LoCoMo directory: `MEMD_LOCOMO_DIR`, or the default next to the repo."""
    configured = os.environ.get("MEMD_LOCOMO_DIR")
    return Path(configured) if configured else DEFAULT_DIR


def load_conversation(path: Path) -> Conversation:
    """Read one conversation file and turn it into memory entries and questions.

    Args:
        path: A LoCoMo conversation JSON file.

    Returns:
        The conversation's turns as entries (line = turn number from 1) and its questions.
    """
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    sessions = sorted(
        (int(match.group(1)), value)
        for key, value in raw.items()
        if (match := _SESSION.fullmatch(key)) and isinstance(value, list)
    )
    entries: list[Entry] = []
    dia_ids: list[str] = []
    for _, turns in sessions:
        for turn in turns:
            entries.append(Entry(line=len(entries) + 1, slug=None, content=memory_line(turn)))
            dia_ids.append(str(turn["dia_id"]))
    questions = tuple(
        Question(
            text=str(qa["question"]),
            evidence=_evidence(qa["evidence"]),
            category=int(qa["category"]),
        )
        for qa in raw.get("qa", [])
        if qa.get("category") in QUESTION_CATEGORIES and qa.get("evidence")
    )
    return Conversation(
        name=path.stem, entries=tuple(entries), dia_ids=tuple(dia_ids), questions=questions
    )


def memory_line(turn: dict[str, Any]) -> str:
    """Return the memory line of one turn: `Speaker: text [shares a photo: caption]`.

    A line break inside the text (a few turns have one) becomes a space, so the turn stays one
    line when written to a category file.
    """
    line = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    line = f"{line} [shares a photo: {caption}]" if caption else line
    return _LINE_BREAKS.sub(" ", line)


def _evidence(raw: list[str]) -> tuple[str, ...]:
    """Normalise evidence ids ("D8:6; D9:17" is two ids, "D:11:26" is "D11:26")."""
    found = (f"D{s}:{t}" for item in raw for s, t in _DIA_ID.findall(str(item)))
    return tuple(dict.fromkeys(found))


def score_question(ranked: list[str], evidence: tuple[str, ...]) -> dict[str, float]:
    """Return R@5, R@10, MRR (top 10) and hit@5 of one ranked list of dia_ids.

    Args:
        ranked: The dia_ids of the hits, best first (at least the top 10 when available).
        evidence: The relevant dia_ids; ids that match no turn can never be found.

    Returns:
        The four metrics, each in [0, 1]; all 0 when `evidence` is empty.
    """
    if not evidence:
        return dict.fromkeys(METRICS, 0.0)
    wanted = set(evidence)
    first = next((rank for rank, dia in enumerate(ranked[:TOP], 1) if dia in wanted), None)
    return {
        "r@5": len(wanted.intersection(ranked[:5])) / len(wanted),
        "r@10": len(wanted.intersection(ranked[:10])) / len(wanted),
        "mrr": 1.0 / first if first else 0.0,
        "hit@5": 1.0 if wanted.intersection(ranked[:5]) else 0.0,
    }


def evaluate(
    conversation: Conversation, *, max_questions: int | None = None
) -> list[dict[str, float]]:
    """Return the metrics of every question of `conversation`, ranked with `search`."""
    index = build_index(conversation.entries)
    pairs = zip(conversation.entries, conversation.dia_ids, strict=True)
    by_line = {entry.line: dia for entry, dia in pairs}
    scores = []
    for question in conversation.questions[:max_questions]:
        result = search([(Category.DECISION, index)], question.text, limit=TOP)
        ranked = [by_line[hit.entry.line] for hit in result.hits]
        scores.append(score_question(ranked, question.evidence))
    return scores


def mean_metrics(rows: list[dict[str, float]]) -> dict[str, float]:
    """Return the mean of each metric over `rows` (0 when empty) and "questions", their count."""
    summary = {m: sum(row[m] for row in rows) / len(rows) if rows else 0.0 for m in METRICS}
    summary["questions"] = float(len(rows))
    return summary


def _print_row(name: str, summary: dict[str, float]) -> None:
    figures = "  ".join(f"{m} {summary[m]:.3f}" for m in METRICS)
    print(f"  {name:<10} {figures}  ({summary['questions']:.0f} questions)")


def run(
    data_dir: Path,
    *,
    max_conversations: int | None = None,
    max_questions: int | None = None,
) -> dict[str, float]:
    """Score `search` on the LoCoMo conversations in `data_dir` and print the figures.

    Args:
        data_dir: The directory holding the conversation JSON files.
        max_conversations: Use only the first this many conversations (by file name).
        max_questions: Use only the first this many questions of each conversation.

    Returns:
        Overall "r@5", "r@10", "mrr" and "hit@5" (means over all questions) and "questions".
    """
    paths = sorted(data_dir.glob("*.json"))[:max_conversations]
    print(f"LoCoMo retrieval ({data_dir})")
    everything: list[dict[str, float]] = []
    for path in paths:
        rows = evaluate(load_conversation(path), max_questions=max_questions)
        _print_row(path.stem, mean_metrics(rows))
        everything.extend(rows)
    overall = mean_metrics(everything)
    _print_row("overall", overall)
    return overall


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: one conversation, 20 questions)."""
    parser = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1 conversation, 20 questions")
    args = parser.parse_args(argv)
    directory = data_dir()
    if not directory.is_dir():
        print(f"LoCoMo data not found at {directory}; set MEMD_LOCOMO_DIR. Skipped.")
        return
    if args.quick:
        run(directory, max_conversations=1, max_questions=20)
    else:
        run(directory)


if __name__ == "__main__":
    main()
