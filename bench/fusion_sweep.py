"""Sweep rules that fuse memd's lexical score with the semantic extra's cosine (issue 20), in
process, on the coding-memory questions (per project and pooled) and the LoCoMo dev split; with
`--longmemeval`, also on LongMemEval-S's user turns, a set no rule was tuned on (held out).

This is the bench for choosing a fusion rule, not for reporting memd: lexical scores come from
`memd.core.search.ranking.search` over every entry, cosines from `memd.semantic.embedder` over
every entry, and each rule re-ranks them; R@5 (coding memory: an answer in the top 5; LoCoMo:
`bench.locomo.score_question`) goes to stdout, one row a rule. Needs the semantic extra.

Rules (a lexical hit is "strong" when its score is at least the floor):
- `lexical`, `dense`: one signal alone.
- `floor(f)`: strong lexical hits first in lexical order, then every other entry by cosine.
- `floor_mix(f, a)`: strong hits first, ordered by `a * lexical + (1 - a) * cosine`; then by cosine.
- `floor_tail(f, a, b)`: as `floor_mix`, the rest by `cosine + b * lexical`.
- `agreed(f, s, a)`: as `floor_mix(f, a)`, but a hit under 0.5 is strong only when its cosine is
  at least `s` (the model agrees); the rest by cosine.
- `convex(a)`: everything by `a * lexical + (1 - a) * max(cosine, 0)`.
- `memd.core.search.fusion`: the rule the daemon uses (agreed(0.12, 0.2, 0.7), the unrelated cut).

With `--long`, long entries (issue 35): LoCoMo sessions (one entry a session, its turns joined;
relevant: the sessions holding an evidence turn), the coding-memory questions over their
projects pooled (entries of a few lines: the check that the gate costs short entries nothing)
and, with `--longmemeval` too, LongMemEval-S sessions (`QUICK_LONG` questions with `--quick`,
else `LONG_QUESTIONS`), R@5 of four rules: lexical; memd's fusion with every entry's cosine
(the model reads the first 256 word pieces); the daemon's way now,
`memd.semantic.vectors.beyond_window` entries without a cosine (judged by their words alone),
and lexical when no entry has one (`nearest` returns None); and the best chunk's cosine (not in
the daemon). Each set with its verdict: the daemon's way never below lexical. The default run
(what `make bench` runs) prints the verdict on LoCoMo sessions after its table.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench import coding_memory, locomo, longmemeval
from bench._report import print_verdicts
from memd.core.format import mdformat
from memd.core.format.categories import CATEGORIES, Category
from memd.core.search.fusion import fuse
from memd.core.search.index import SearchIndex
from memd.core.search.ranking import build_index, search
from memd.semantic.embedder import Embedder, load
from memd.semantic.vectors import beyond_window

TOP = 10
Scores = dict[Any, float]
Rule = Callable[[Scores, Scores, Sequence[Any]], list[Any]]


def _by(key: Callable[[Any], float], items: Sequence[Any]) -> list[Any]:
    return sorted(items, key=lambda item: -key(item))


def floor_tail(floor: float, mix: float, tail: float) -> Rule:
    """Strong lexical hits first (by the mix), then the rest by cosine plus `tail` * lexical."""

    def rank(lexical: Scores, cosine: Scores, ids: Sequence[Any]) -> list[Any]:
        strong = [i for i in lexical if lexical[i] >= floor]
        chosen = set(strong)
        head = _by(lambda i: mix * lexical[i] + (1 - mix) * cosine[i], strong)
        rest = [i for i in ids if i not in chosen]
        return (head + _by(lambda i: cosine[i] + tail * lexical.get(i, 0.0), rest))[:TOP]

    return rank


def agreed(floor: float, similar: float, mix: float) -> Rule:
    """Hits of at least 0.5, and hits of at least `floor` with a cosine of at least `similar`,
    first (by the mix); then the rest by cosine."""

    def rank(lexical: Scores, cosine: Scores, ids: Sequence[Any]) -> list[Any]:
        strong = [
            i
            for i in lexical
            if lexical[i] >= 0.5 or (lexical[i] >= floor and cosine[i] >= similar)
        ]
        chosen = set(strong)
        head = _by(lambda i: mix * lexical[i] + (1 - mix) * cosine[i], strong)
        rest = [i for i in ids if i not in chosen]
        return (head + _by(lambda i: cosine[i], rest))[:TOP]

    return rank


def convex(mix: float) -> Rule:
    """Everything by `mix` * lexical + (1 - mix) * max(cosine, 0)."""

    def rank(lexical: Scores, cosine: Scores, ids: Sequence[Any]) -> list[Any]:
        return _by(lambda i: mix * lexical.get(i, 0.0) + (1 - mix) * max(cosine[i], 0.0), ids)[:TOP]

    return rank


def _memd(lexical: Scores, cosine: Scores, ids: Sequence[Any]) -> list[Any]:
    return [fused.key for fused in fuse(lexical, cosine, limit=TOP)]


RULES: dict[str, Rule] = {
    "memd.core.search.fusion": _memd,
    "lexical": lambda lexical, cosine, ids: _by(lambda i: lexical[i], list(lexical))[:TOP],
    "dense": lambda lexical, cosine, ids: _by(lambda i: cosine[i], ids)[:TOP],
    "floor(0.15)": floor_tail(0.15, 1.0, 0.0),
    "floor_mix(0.15, 0.7)": floor_tail(0.15, 0.7, 0.0),
    "floor_mix(0.2, 0.7)": floor_tail(0.2, 0.7, 0.0),
    "floor_tail(0.15, 0.7, 0.5)": floor_tail(0.15, 0.7, 0.5),
    "agreed(0.15, 0.2, 0.7)": agreed(0.15, 0.2, 0.7),
    "agreed(0.12, 0.15, 0.7)": agreed(0.12, 0.15, 0.7),
    "agreed(0.12, 0.2, 0.7)": agreed(0.12, 0.2, 0.7),
    "agreed(0.12, 0.25, 0.7)": agreed(0.12, 0.25, 0.7),
    "agreed(0.10, 0.2, 0.7)": agreed(0.10, 0.2, 0.7),
    "convex(0.5)": convex(0.5),
    "convex(0.7)": convex(0.7),
}


def _coding_memory_workspace(
    projects: Sequence[str],
) -> tuple[
    list[tuple[Category, SearchIndex]],
    dict[tuple[str, int], tuple[str, str]],
    list[str],
    list[tuple[str, int]],
]:
    """The coding-memory `projects` pooled in one workspace: each category's index, each entry's
    (project, slug) by (file, line), the entries' texts and their (file, line), in file order."""
    layout = coding_memory.Layout()
    for project in projects:
        layout.add(project, coding_memory.data_dir() / project / ".memory")
    indexes: list[tuple[Category, SearchIndex]] = []
    keys: dict[tuple[str, int], tuple[str, str]] = {}
    texts: list[str] = []
    ids: list[tuple[str, int]] = []
    for category in CATEGORIES:
        text = category.header + "".join(line + "\n" for line in layout.lines[category])
        entries = mdformat.entries(mdformat.parse(text))
        indexes.append((category, build_index(entries)))
        for entry, owner in zip(entries, layout.owners[category], strict=True):
            ids.append((category.file, entry.line))
            keys[ids[-1]] = (owner, entry.slug or "")
            texts.append(entry.content)
    return indexes, keys, texts, ids


def _coding_memory(embedder: Embedder, pooled: bool, max_projects: int | None) -> dict[str, Any]:
    questions = coding_memory.load_questions(coding_memory.data_dir())
    projects = sorted({q.project for q in questions})[:max_projects]
    groups = [projects] if pooled else [[project] for project in projects]
    found: dict[str, dict[str, list[float]]] = {
        rule: {"lexical": [], "paraphrase": []} for rule in RULES
    }
    for group in groups:
        indexes, keys, texts, ids = _coding_memory_workspace(group)
        vectors = embedder.embed(texts)
        for question in questions:
            if question.project not in group or question.kind == "none":
                continue
            hits = search(indexes, question.query, limit=len(ids)).hits
            lexical = {(hit.key.file, hit.entry.line): hit.score for hit in hits}
            cosine = dict(
                zip(ids, (vectors @ embedder.embed([question.query])[0]).tolist(), strict=True)
            )
            answers = {(question.project, slug) for slug in question.answers}
            for name, rule in RULES.items():
                ranked = [keys[i] for i in rule(lexical, cosine, ids)]
                found[name][question.kind].append(coding_memory.score(ranked, answers)["r@5"])
    return {rule: {k: sum(v) / max(1, len(v)) for k, v in by.items()} for rule, by in found.items()}


def _locomo(embedder: Embedder, max_conversations: int | None) -> dict[str, float]:
    found: dict[str, list[float]] = {rule: [] for rule in RULES}
    for path in sorted(locomo.data_dir().glob("*.json"))[:max_conversations]:
        conversation = locomo.load_conversation(path)
        entries = conversation.entries
        indexes = [(Category.DECISION, build_index(entries))]
        ids = [entry.line for entry in entries]
        by_line = dict(zip(ids, conversation.dia_ids, strict=True))
        vectors = embedder.embed([entry.content for entry in entries])
        asked = embedder.embed([question.text for question in conversation.questions])
        for question, query in zip(conversation.questions, asked, strict=True):
            hits = search(indexes, question.text, limit=len(ids)).hits
            lexical = {hit.entry.line: hit.score for hit in hits}
            cosine = dict(zip(ids, (vectors @ query).tolist(), strict=True))
            for name, rule in RULES.items():
                ranked = [by_line[line] for line in rule(lexical, cosine, ids)]
                found[name].append(locomo.score_question(ranked, question.evidence)["r@5"])
    return {rule: sum(values) / max(1, len(values)) for rule, values in found.items()}


def _longmemeval(embedder: Embedder, max_questions: int | None) -> dict[str, float]:
    """R@5 on LongMemEval-S's user turns (one haystack a question), a set no rule was tuned on:
    long conversational entries and questions that share their words."""
    found: dict[str, list[float]] = {rule: [] for rule in RULES}
    scored, _ = longmemeval.question_files(longmemeval.data_dir())
    for path in scored[:max_questions]:
        haystack = longmemeval.load_haystack(path)
        unit = haystack.units["user"]
        if not unit.relevant:
            continue
        indexes = [(Category.DECISION, build_index(unit.entries))]
        lines = [entry.line for entry in unit.entries]
        by_line = dict(zip(lines, unit.ids, strict=True))
        hits = search(indexes, haystack.question, limit=len(lines)).hits
        lexical = {hit.entry.line: hit.score for hit in hits}
        vectors = embedder.embed([entry.content for entry in unit.entries])
        asked = embedder.embed([haystack.question])[0]
        cosine = dict(zip(lines, (vectors @ asked).tolist(), strict=True))
        for name, rule in RULES.items():
            ranked = [by_line[line] for line in rule(lexical, cosine, lines)]
            found[name].append(locomo.score_question(ranked, unit.relevant)["r@5"])
    return {rule: sum(values) / max(1, len(values)) for rule, values in found.items()}


LONG_QUESTIONS = 30
QUICK_LONG = 2
LONG_RULES = (
    "lexical",
    "memd, every entry's cosine",
    "memd, long entries by words (daemon)",
    "memd, best chunk's cosine (not in the daemon)",
)
CHUNK_WORDS = 150
"""Words a chunk of a long entry (150 words and their marks stay within 256 word pieces)."""


def _chunks(embedder: Embedder, texts: Sequence[str]) -> tuple[Any, list[int]]:
    """Every text cut into chunks of `CHUNK_WORDS` words, embedded: the chunks' matrix and
    where each text's chunks start (for `numpy.maximum.reduceat`)."""
    pieces: list[str] = []
    starts: list[int] = []
    for text in texts:
        words = text.split() or [text]
        starts.append(len(pieces))
        pieces += [
            " ".join(words[at : at + CHUNK_WORDS]) for at in range(0, len(words), CHUNK_WORDS)
        ]
    return embedder.embed(pieces), starts


def _best_chunk(chunks: tuple[Any, list[int]], ids: Sequence[Any], asked: Any) -> Scores:
    """Each entry's cosine: its best chunk's."""
    import numpy as np

    matrix, starts = chunks
    best = np.maximum.reduceat(matrix @ asked, starts)
    return dict(zip(ids, best.tolist(), strict=True))


def _long_rules(
    lexical: Scores, cosine: Scores, ids: Sequence[Any], texts: Sequence[str], chunked: Scores
) -> dict[str, list[Any]]:
    """The ranking of each of `LONG_RULES` (see the module docstring)."""
    words_only = _by(lambda i: lexical[i], list(lexical))[:TOP]
    gated = {
        i: math.nan if beyond_window(t) else cosine[i] for i, t in zip(ids, texts, strict=True)
    }
    has_cosine = any(math.isfinite(value) for value in gated.values())
    return dict(
        zip(
            LONG_RULES,
            (
                words_only,
                _memd(lexical, cosine, ids),
                _memd(lexical, gated, ids) if has_cosine else words_only,
                _memd(lexical, chunked, ids),
            ),
            strict=True,
        )
    )


def _locomo_sessions(embedder: Embedder, max_conversations: int | None) -> dict[str, Any]:
    found: dict[str, list[float]] = {rule: [] for rule in LONG_RULES}
    long = total = 0
    for path in sorted(locomo.data_dir().glob("*.json"))[:max_conversations]:
        conversation = locomo.load_conversation(path)
        sessions: dict[str, list[str]] = {}
        for entry, dia in zip(conversation.entries, conversation.dia_ids, strict=True):
            sessions.setdefault(dia.split(":")[0], []).append(entry.content)
        names = list(sessions)
        texts = [" ".join(turns) for turns in sessions.values()]
        entries = [mdformat.Entry(line=i + 1, slug=None, content=t) for i, t in enumerate(texts)]
        long += sum(beyond_window(text) for text in texts)
        total += len(texts)
        ids = [entry.line for entry in entries]
        by_line = dict(zip(ids, names, strict=True))
        indexes = [(Category.DECISION, build_index(entries))]
        vectors = embedder.embed(texts)
        chunks = _chunks(embedder, texts)
        asked = embedder.embed([question.text for question in conversation.questions])
        for question, query in zip(conversation.questions, asked, strict=True):
            hits = search(indexes, question.text, limit=len(ids)).hits
            lexical = {hit.entry.line: hit.score for hit in hits}
            cosine = dict(zip(ids, (vectors @ query).tolist(), strict=True))
            relevant = tuple(sorted({dia.split(":")[0] for dia in question.evidence}))
            chunked = _best_chunk(chunks, ids, query)
            for name, ranked in _long_rules(lexical, cosine, ids, texts, chunked).items():
                named = [by_line[line] for line in ranked]
                found[name].append(locomo.score_question(named, relevant)["r@5"])
    means = {rule: sum(values) / max(1, len(values)) for rule, values in found.items()}
    return {"r@5": means, "long": long, "entries": total}


def _longmemeval_sessions(embedder: Embedder, max_questions: int) -> dict[str, Any]:
    found: dict[str, list[float]] = {rule: [] for rule in LONG_RULES}
    long = total = 0
    scored, _ = longmemeval.question_files(longmemeval.data_dir())
    for path in scored[:max_questions]:
        haystack = longmemeval.load_haystack(path)
        unit = haystack.units["session"]
        if not unit.relevant:
            continue
        texts = [entry.content for entry in unit.entries]
        long += sum(beyond_window(text) for text in texts)
        total += len(texts)
        indexes = [(Category.DECISION, build_index(unit.entries))]
        lines = [entry.line for entry in unit.entries]
        by_line = dict(zip(lines, unit.ids, strict=True))
        hits = search(indexes, haystack.question, limit=len(lines)).hits
        lexical = {hit.entry.line: hit.score for hit in hits}
        vectors = embedder.embed(texts)
        asked = embedder.embed([haystack.question])[0]
        cosine = dict(zip(lines, (vectors @ asked).tolist(), strict=True))
        chunked = _best_chunk(_chunks(embedder, texts), lines, asked)
        for name, ranked in _long_rules(lexical, cosine, lines, texts, chunked).items():
            found[name].append(
                locomo.score_question([by_line[i] for i in ranked], unit.relevant)["r@5"]
            )
    means = {rule: sum(values) / max(1, len(values)) for rule, values in found.items()}
    return {"r@5": means, "long": long, "entries": total}


def _coding_memory_long(embedder: Embedder, max_projects: int | None) -> dict[str, Any]:
    """`LONG_RULES` on the coding-memory questions (lexical and paraphrase), the projects pooled
    in one workspace as the daemon would search them: R@5 of an answer in the top 5."""
    import numpy as np

    found: dict[str, list[float]] = {rule: [] for rule in LONG_RULES}
    questions = coding_memory.load_questions(coding_memory.data_dir())
    projects = sorted({q.project for q in questions})[:max_projects]
    indexes, keys, texts, ids = _coding_memory_workspace(projects)
    long = sum(beyond_window(text) for text in texts)
    vectors = embedder.embed(texts)
    chunks = _chunks(embedder, texts) if long else (vectors, list(range(len(texts))))
    asked = [q for q in questions if q.project in projects and q.kind != "none"]
    queries = embedder.embed([question.query for question in asked])
    for question, query in zip(asked, queries, strict=True):
        hits = search(indexes, question.query, limit=len(ids)).hits
        lexical = {(hit.key.file, hit.entry.line): hit.score for hit in hits}
        cosine = dict(zip(ids, np.asarray(vectors @ query).tolist(), strict=True))
        chunked = _best_chunk(chunks, ids, query)
        answers = {(question.project, slug) for slug in question.answers}
        for name, ranked in _long_rules(lexical, cosine, ids, texts, chunked).items():
            named = [keys[i] for i in ranked]
            found[name].append(coding_memory.score(named, answers)["r@5"])
    means = {rule: sum(values) / max(1, len(values)) for rule, values in found.items()}
    return {"r@5": means, "long": long, "entries": len(texts)}


def long_targets(sets: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Issue 35's target on each set of long entries: the daemon's rule (mode auto) no worse
    than lexical at R@5."""
    targets = {}
    for name, figures in sets.items():
        words, daemon = figures["r@5"][LONG_RULES[0]], figures["r@5"][LONG_RULES[2]]
        met = daemon >= words
        text = (
            f"auto R@5 {daemon:.3f} beside lexical {words:.3f} (target: never below lexical: "
            f"{'met' if met else 'NOT met'})"
        )
        targets[f"long entries, {name}"] = {"met": met, "text": text}
    return targets


def _print_long(name: str, figures: dict[str, Any]) -> None:
    print(f"\n{name}: {figures['long']} of {figures['entries']} entries beyond the model's window")
    print("| rule | R@5 |\n|---|---|")
    for rule, value in figures["r@5"].items():
        print(f"| {rule} | {value:.3f} |")


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.fusion_sweep [--quick] [--longmemeval] [--long]`: one row a rule."""
    parser = argparse.ArgumentParser(prog="python -m bench.fusion_sweep", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one project, one conversation")
    parser.add_argument(
        "--longmemeval",
        action="store_true",
        help="also LongMemEval-S user turns, a held-out check (about 20 minutes of embedding)",
    )
    parser.add_argument(
        "--long", action="store_true", help="only long entries: LoCoMo (and LongMemEval) sessions"
    )
    args = parser.parse_args(argv)
    if args.long:
        embedder = load()
        sets: dict[str, dict[str, Any]] = {}
        if locomo.data_dir().is_dir():
            sets["LoCoMo sessions"] = _locomo_sessions(embedder, 1 if args.quick else None)
        if (coding_memory.data_dir() / "queries.jsonl").is_file():
            sets["coding-memory"] = _coding_memory_long(embedder, 1 if args.quick else None)
        if args.longmemeval and longmemeval.data_dir().is_dir():
            many = QUICK_LONG if args.quick else LONG_QUESTIONS
            sets["LongMemEval-S sessions"] = _longmemeval_sessions(embedder, many)
        _report_long(sets)
        return
    if not (coding_memory.data_dir() / "queries.jsonl").is_file():
        print("fusion_sweep: no coding-memory data (set MEMD_CODING_MEMORY_DIR); skipped")
        return
    embedder = load()
    per_project = _coding_memory(embedder, False, 1 if args.quick else None)
    pooled = _coding_memory(embedder, True, 1 if args.quick else None)
    has_locomo = locomo.data_dir().is_dir()
    conversations = _locomo(embedder, 1 if args.quick else None) if has_locomo else {}
    held_out = {}
    if args.longmemeval and longmemeval.data_dir().is_dir():
        held_out = _longmemeval(embedder, 1 if args.quick else None)
    print(
        "| rule | lexical R@5 | paraphrase R@5 | pooled lexical | pooled paraphrase | LoCoMo R@5 "
        "| LongMemEval user turns R@5 |"
    )
    print("|---|---|---|---|---|---|---|")
    for rule in RULES:
        figures = [
            per_project[rule]["lexical"],
            per_project[rule]["paraphrase"],
            pooled[rule]["lexical"],
            pooled[rule]["paraphrase"],
        ]
        cells = " | ".join(f"{value:.3f}" for value in figures)
        loco = f"{conversations[rule]:.3f}" if rule in conversations else "-"
        other = f"{held_out[rule]:.3f}" if rule in held_out else "-"
        print(f"| {rule} | {cells} | {loco} | {other} |")
    if has_locomo:  # the long-entry verdict too (issue 35): about a minute more, quiet
        began = time.perf_counter()
        sessions = {"LoCoMo sessions": _locomo_sessions(embedder, 1 if args.quick else None)}
        _report_long(sessions, time.perf_counter() - began)


def _report_long(sets: dict[str, dict[str, Any]], seconds: float | None = None) -> None:
    for name, found in sets.items():
        _print_long(name, found)
    if seconds is not None:
        print(f"(long entries measured in {seconds:.0f} s)")
    print()
    print_verdicts(long_targets(sets))


if __name__ == "__main__":
    main()
