"""Memories plus read-only prose sources: retrieval by kind of answer, and what the prose costs a
query (issue 21, "Done when": a mixed-source run reporting R@5 for memory hits and chunk hits;
query p50 at 10k entries with 2 MB of prose sources within 1.5x of memories alone).

The data is generated (`random.Random(SEED)`, deterministic): a *fact* is a subject (a part of
the project: "billing service") with an attribute ("cache timeout") and a value ("45 seconds",
"postgres"); each (subject, attribute) pair is stated once, so its question ("What is the cache
timeout of the billing service?", never naming the value) has one answer. Around the facts is
filler: `bench.query.make_corpus` rules as memories, and sentences of the same generator as prose.

1. Retrieval. One workspace holds `.memory/` category files (filler rules with the memory facts
   among them, one `- [slug] content` line each) and prose documents that the default sources
   match (`CLAUDE.md`, `AGENTS.md`, `MEMORY.md`, `.claude/rules/*.md`, `memory/*.md`): a title,
   an intro paragraph, then a `##` section per subject holding a wrapped paragraph and bullets;
   a chunk fact is a bullet (half of them leave the subject to the section's heading) or a
   sentence inside a paragraph. Each question's answer is a memory entry (its file and line) or a
   chunk: a hit counts when its path matches and its `lines` range holds the fact's line. Through
   a real `memd serve` (private state, semantic search off) each question is asked with
   `Client.query(question, limit=10)`, and again with `sources` narrowed to the answer's own kind
   (`memory` or `file`: what mixing the two costs). In the same run, SQLite FTS5 (porter, words
   OR-ed, bm25) ranks the same units: every memory entry's content and every chunk's searchable
   text (heading path and text, cut by memd's own chunker). R@1, R@5 and MRR (top 10) are
   reported separately for memory-answer and chunk-answer questions.

2. Speed. Two daemons at once, each with its own workspace: the same `make_corpus` memories
   (10,000 entries) alone, and with about 2 MiB of generated prose in a few dozen `memory/*.md`
   files (a default source). The same distinct questions (`bench.query.QUERIES`, rule-word
   queries from `bench.search_speed.make_queries` and fact questions) are sent over each socket
   by `bench.query`'s minimal client loop (limit 10), in whole passes that alternate between the
   two until a time budget is spent, after a first query (load: parse, scan, chunk, index) and an
   untimed pass. Those are the steady state: the daemon looks at the sources again at most once
   a second when a query asks (`memd.server.workspaces.source_index.FRESH_SECONDS`), so
   about one timed query a second pays that look. Then its cost alone, `idle_rounds` times:
   after more than a second idle, in each daemon, a query of the memories alone (`sources`
   memory: it wakes the daemon and the client up but looks at no source), a question with every
   source (it looks again) and the same question right after it; the look's cost is the difference
   of those two. Each workspace's first query is timed while another client calls `status` in a
   loop: its longest round trip is how long the event loop was blocked meanwhile. Where the time
   goes, in-process: memd's ranking (`ranking.search`) over the category indexes alone, with every
   chunk in one index (as the daemon searches), with one index a source file instead, and over
   as many memories as entries and chunks together; one look at the unchanged sources; the
   first look (find, read, chunk, index) and indexing every chunk again (an edit).

Target: the mixed workspace's query p50 at most `TARGET_RATIO` times that of the memories alone.
Figures go to stdout as Markdown tables and to `bench/results/sources.json`
(`sources-quick.json` with `--quick`: tiny sizes, short budgets). Everything but the timings is
deterministic.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from bench._daemon import percentile, running_daemon
from bench._report import RESULTS_DIR, commit, print_verdicts, save, settings_main
from bench.big_file import StallProbe
from bench.query import (
    _DETAILS,
    _KINDS,
    _MODULES,
    _TOOLS,
    DETAIL_SHARE,
    QUERIES,
    RawClient,
    make_corpus,
    request_frames,
    write_workspace,
)
from bench.retrieval import fts5_match
from bench.search_speed import _NOUNS, _pick, _sentence, make_queries
from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.limits import MAX_FILE_BYTES
from memd.core.format.mdformat import Entry
from memd.core.search import ranking
from memd.core.search.shelves import Key, Shelf
from memd.core.sources.chunks import chunk
from memd.server.methods.search import Searchable
from memd.server.workspaces.source_index import FRESH_SECONDS, SourcesIndex, look_at
from memd_client import Client, protocol as p

SEED = 20240621
TOP = 10
QUERY_TIMEOUT = 120.0
TARGET_RATIO = 1.5
WRAP = 88
"""Prose is wrapped at this many characters, so a paragraph spans several lines."""

Kind = Literal["memory", "chunk"]
KINDS: tuple[Kind, ...] = ("memory", "chunk")
METRICS = ("r@1", "r@5", "mrr")
METHODS: dict[str, str] = {
    "memd": "memd, every source (query over the socket)",
    "memd_own": "memd, the answer's own kind only (`sources` memory or file)",
    "fts5": "SQLite FTS5 over the same units (porter, bm25, words OR-ed)",
}
WORKSPACES: dict[str, str] = {
    "memories": "memories alone",
    "mixed": "memories + prose sources",
}


@dataclass(frozen=True)
class Settings:
    """The sizes of both parts."""

    filler_memories: int
    """Retrieval: `make_corpus` rules around the memory facts."""
    memory_facts: int
    chunk_facts: int
    documents: int
    """Retrieval: how many of `RETRIEVAL_PATHS` hold the prose."""
    document_bytes: int
    """Retrieval: each document is padded with filler sections to about this size."""
    entries: int
    """Speed: memory entries in both workspaces."""
    prose_files: int
    prose_bytes: int
    """Speed: the prose's total size, over `prose_files` files."""
    speed_questions: int
    """Speed: about how many distinct questions (fewer if some repeat)."""
    budget_s: float
    """Speed: seconds of timed passes per workspace (whole passes, at least one each)."""
    idle_rounds: int
    """Speed: how many times the first query after an idle second is timed."""


FULL = Settings(
    filler_memories=2_000,
    memory_facts=200,
    chunk_facts=200,
    documents=12,
    document_bytes=16_000,
    entries=10_000,
    prose_files=32,
    prose_bytes=2 * 1024 * 1024,
    speed_questions=600,
    budget_s=10.0,
    idle_rounds=30,
)
QUICK = Settings(
    filler_memories=100,
    memory_facts=15,
    chunk_facts=15,
    documents=4,
    document_bytes=0,
    entries=1_000,
    prose_files=4,
    prose_bytes=100_000,
    speed_questions=60,
    budget_s=0.3,
    idle_rounds=2,
)

RETRIEVAL_PATHS = (
    "CLAUDE.md",
    "AGENTS.md",
    "MEMORY.md",
    ".claude/rules/services.md",
    "memory/architecture.md",
    "memory/operations.md",
    "memory/billing-notes.md",
    "memory/onboarding.md",
    ".claude/rules/ops/limits.md",
    "memory/decisions-log.md",
    "memory/runbook.md",
    "memory/integrations.md",
)
"""Where the retrieval run's prose goes (the first `Settings.documents`): all default sources."""

# ---------------------------------------------------------------------------- facts

_ASPECTS: dict[str, str] = {
    "timeout": "duration",
    "retention": "duration",
    "window": "duration",
    "interval": "duration",
    "limit": "amount",
    "quota": "amount",
    "threshold": "amount",
    "budget": "amount",
    "backend": "tool",
    "format": "tool",
    "provider": "tool",
    "owner": "team",
}
_UNITS = {
    "duration": ("seconds", "minutes", "hours", "days"),
    "amount": ("requests", "megabytes", "entries", "connections", "workers"),
}
_TEAMS = ("platform", "payments", "growth", "infra", "data", "mobile", "security", "support")
N_ATTRIBUTES = 60
"""How many distinct attributes the facts draw from (each a noun and an aspect)."""

_STATEMENTS = (
    "The {a} of the {s} is {v}.",
    "Keep the {s} {a} at {v}.",
    "For the {s}, the {a} is {v}.",
    "The {s} sets its {a} to {v}.",
)
"""A fact as a memory entry or a sentence of prose: the subject named."""
_BULLETS = (
    "The {a} is {v}.",
    "Set the {a} to {v}.",
    "{A}: {v}.",
)
"""A fact as a bullet under its subject's heading, the subject left to the heading."""
_QUESTIONS = (
    "What is the {a} of the {s}?",
    "Which {a} does the {s} use?",
    "{s} {a}?",
    "How is the {a} set for the {s}?",
    "What {a} did we pick for the {s}?",
)


class Fact(NamedTuple):
    """One thing the project knows, and the question it answers."""

    subject: str
    attribute: str
    value: str
    question: str

    def statement(self, rng: random.Random) -> str:
        """The fact in a sentence that names its subject."""
        return rng.choice(_STATEMENTS).format(s=self.subject, a=self.attribute, v=self.value)

    def bullet(self, rng: random.Random) -> str:
        """The fact as a bullet's text that leaves the subject to the heading above it."""
        template = rng.choice(_BULLETS)
        return template.format(a=self.attribute, A=self.attribute.capitalize(), v=self.value)


def subjects() -> list[str]:
    """Every subject: a module and a kind ("billing service", "search worker")."""
    return [f"{module} {kind}" for module in _MODULES for kind in _KINDS]


def attributes(rng: random.Random) -> list[tuple[str, str]]:
    """`N_ATTRIBUTES` distinct attributes ("cache timeout") with their aspect ("timeout")."""
    aspects = sorted(_ASPECTS)
    found: dict[str, str] = {}
    while len(found) < N_ATTRIBUTES:
        noun, aspect = rng.choice(_NOUNS), rng.choice(aspects)
        if noun != aspect:
            found.setdefault(f"{noun} {aspect}", aspect)
    return list(found.items())


def _value(rng: random.Random, aspect: str) -> str:
    kind = _ASPECTS[aspect]
    if kind == "tool":
        return _pick(rng, _TOOLS)
    if kind == "team":
        return f"the {rng.choice(_TEAMS)} team"
    return f"{rng.randint(2, 500)} {rng.choice(_UNITS[kind])}"


def make_facts(n_facts: int, rng: random.Random, *, unique: bool = True) -> list[Fact]:
    """Return `n_facts` facts; with `unique`, no two share their (subject, attribute).

    Raises:
        ValueError: more unique facts asked for than there are pairs.
    """
    everyone, pool = subjects(), attributes(rng)
    if unique and n_facts > len(everyone) * len(pool):
        raise ValueError(f"at most {len(everyone) * len(pool)} unique facts")
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    while len(facts) < n_facts:
        subject = rng.choice(everyone)
        attribute, aspect = rng.choice(pool)
        if unique and (subject, attribute) in seen:
            continue
        seen.add((subject, attribute))
        question = rng.choice(_QUESTIONS).format(s=subject, a=attribute)
        facts.append(Fact(subject, attribute, _value(rng, aspect), question))
    return facts


def filler_sentence(rng: random.Random) -> str:
    """A developer rule that answers no question (`bench.query.make_corpus`'s generator)."""
    content = _sentence(rng)
    if rng.random() < DETAIL_SHARE:
        detail = rng.choice(_DETAILS).format(
            t=_pick(rng, _TOOLS), m=_pick(rng, _MODULES), k=rng.choice(_KINDS)
        )
        content = content[:-1] + detail + "."
    return content


# ---------------------------------------------------------------------------- where answers live


class Answer(NamedTuple):
    """Where a fact is stated: a memory entry (`.memory/<file>`, its line) or a line of a
    read-only source (its path relative to the workspace)."""

    kind: Kind
    path: str
    line: int


class Unit(NamedTuple):
    """What a search returns: a memory entry (`first` == `last`) or a chunk's lines."""

    path: str
    first: int
    last: int


def is_answer(unit: Unit, answer: Answer) -> bool:
    """Whether `unit` is the answer: the same memory entry, or a chunk of the answer's source
    whose lines hold the answer's line."""
    if unit.path != answer.path:
        return False
    if answer.kind == "memory":
        return unit.first == answer.line
    return unit.first <= answer.line <= unit.last


def _memory_path(category: Category) -> str:
    return f".memory/{category.file}"


def memory_corpus(
    n_filler: int, facts: Sequence[Fact], rng: random.Random
) -> tuple[dict[Category, list[Entry]], list[Answer]]:
    """Return category files holding `n_filler` `make_corpus` rules with one entry per fact
    among them (each at a random place in a random category), and each fact's answer."""
    header_lines = {c: c.header.count("\n") for c in CATEGORIES}
    placed: dict[Category, list[tuple[str | None, str, int | None]]] = {
        category: [(entry.slug, entry.content, None) for entry in entries]
        for category, entries in make_corpus(n_filler, seed=rng.randrange(2**32)).items()
    }
    for number, fact in enumerate(facts):
        content = fact.statement(rng)
        slug = "-".join(content.lower().rstrip(".").replace(",", "").split()[:3]) + f"-f{number}"
        found = placed[rng.choice(CATEGORIES)]
        found.insert(rng.randint(0, len(found)), (slug, content, number))
    corpus: dict[Category, list[Entry]] = {}
    answers: list[Answer | None] = [None] * len(facts)
    for category, rows in placed.items():
        corpus[category] = []
        for index, (written_slug, text, fact_number) in enumerate(rows):
            line = header_lines[category] + index + 1
            corpus[category].append(Entry(line=line, slug=written_slug, content=text))
            if fact_number is not None:
                answers[fact_number] = Answer("memory", _memory_path(category), line)
    return corpus, [answer for answer in answers if answer is not None]


class Document(NamedTuple):
    """A generated prose source: its path relative to the workspace and its text."""

    path: str
    text: str


class _Writer:
    """The lines of one document so far, and where each fact went."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []
        self.fact_lines: dict[int, int] = {}

    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines)

    def blank(self) -> None:
        if self.lines and self.lines[-1]:
            self.lines.append("")

    def heading(self, level: int, text: str) -> None:
        self.blank()
        self.lines.append("#" * level + " " + text)
        self.lines.append("")

    def paragraph(self, sentences: Sequence[tuple[str, int | None]]) -> None:
        """Wrapped sentences; a sentence with a fact number records the line it starts on."""
        self.blank()
        line = ""
        for sentence, number in sentences:
            for position, word in enumerate(sentence.split()):
                if line and len(line) + 1 + len(word) > WRAP:
                    self.lines.append(line)
                    line = ""
                if position == 0 and number is not None:
                    self.fact_lines[number] = len(self.lines) + 1
                line = f"{line} {word}" if line else word
        if line:
            self.lines.append(line)
        if self.rng.random() < 0.1:
            self.lines += ["```sh", f"make {self.rng.choice(_KINDS)}-{_pick(self.rng, _TOOLS)}"]
            self.lines.append("```")
        self.lines.append("")

    def bullets(self, items: Sequence[tuple[str, int | None]]) -> None:
        self.blank()
        for text, number in items:
            if number is not None:
                self.fact_lines[number] = len(self.lines) + 1
            self.lines.append(f"- {text}")
        self.lines.append("")

    def filler(self, low: int, high: int) -> list[tuple[str, int | None]]:
        return [(filler_sentence(self.rng), None) for _ in range(self.rng.randint(low, high))]


def _section(writer: _Writer, subject: str, facts: Sequence[tuple[int, Fact]]) -> None:
    """A `##` section about `subject`: a paragraph (holding one of `facts` as a sentence, half
    the time), then bullets: the other facts among filler rules."""
    rng = writer.rng
    writer.heading(2, subject[0].upper() + subject[1:])
    rest = list(facts)
    sentences = writer.filler(2, 4)
    if rest and rng.random() < 0.5:
        number, fact = rest.pop(0)
        sentences.insert(rng.randint(0, len(sentences)), (fact.statement(rng), number))
    writer.paragraph(sentences)
    items = writer.filler(1, 3)
    for number, fact in rest:
        text = fact.bullet(rng) if rng.random() < 0.5 else fact.statement(rng)
        items.insert(rng.randint(0, len(items)), (text, number))
    writer.bullets(items)
    if rng.random() < 0.3:
        writer.heading(3, rng.choice(("Notes", "History", "Open questions", "Gotchas")))
        writer.paragraph(writer.filler(2, 5))


def make_documents(
    paths: Sequence[str], facts: Sequence[Fact], rng: random.Random, *, min_bytes: int = 0
) -> tuple[list[Document], list[Answer]]:
    """Return a prose document per path holding `facts` (grouped by subject, in sections of at
    most 4 facts, dealt to the documents in turn), each padded with fact-less sections to
    `min_bytes`, and each fact's answer (its document and line)."""
    sections: dict[str, list[tuple[int, Fact]]] = {}
    for number, fact in enumerate(facts):
        sections.setdefault(fact.subject, []).append((number, fact))
    groups = [
        (subject, found[start : start + 4])
        for subject, found in sections.items()
        for start in range(0, len(found), 4)
    ]
    everyone = subjects()
    documents: list[Document] = []
    answers: list[Answer | None] = [None] * len(facts)
    for place, path in enumerate(paths):
        writer = _Writer(rng)
        title = Path(path).stem.replace("-", " ").replace("_", " ")
        writer.heading(1, f"{title[0].upper()}{title[1:]}")
        writer.paragraph(writer.filler(2, 3))
        for subject, group in groups[place :: len(paths)]:
            _section(writer, subject, group)
        while writer.size() < min_bytes:
            _section(writer, rng.choice(everyone), ())
        documents.append(Document(path, "\n".join(writer.lines).rstrip("\n") + "\n"))
        for number, line in writer.fact_lines.items():
            answers[number] = Answer("chunk", path, line)
    return documents, [answer for answer in answers if answer is not None]


def write_documents(workspace: Path, documents: Sequence[Document]) -> int:
    """Write `documents` under `workspace`; return their total bytes."""
    total = 0
    for document in documents:
        target = workspace / document.path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = document.text.encode("utf-8")
        target.write_bytes(data)
        total += len(data)
    return total


# ---------------------------------------------------------------------------- retrieval


class Question(NamedTuple):
    text: str
    answer: Answer


class RetrievalSet(NamedTuple):
    """One generated mixed workspace and its questions."""

    corpus: dict[Category, list[Entry]]
    documents: list[Document]
    questions: list[Question]


def retrieval_set(settings: Settings) -> RetrievalSet:
    """The retrieval run's workspace and questions (memory-answer questions first)."""
    rng = random.Random(SEED)
    facts = make_facts(settings.memory_facts + settings.chunk_facts, rng)
    memory_facts, chunk_facts = facts[: settings.memory_facts], facts[settings.memory_facts :]
    corpus, memory_answers = memory_corpus(settings.filler_memories, memory_facts, rng)
    paths = RETRIEVAL_PATHS[: settings.documents]
    documents, chunk_answers = make_documents(
        paths, chunk_facts, rng, min_bytes=settings.document_bytes
    )
    questions = [
        Question(fact.question, answer)
        for fact, answer in zip(
            [*memory_facts, *chunk_facts], [*memory_answers, *chunk_answers], strict=True
        )
    ]
    return RetrievalSet(corpus, documents, questions)


def hit_unit(hit: p.QueryHit) -> Unit:
    """The unit a query hit names."""
    if hit.source == "file":
        first, _, last = hit.lines.partition("-")
        return Unit(hit.path, int(first), int(last))
    return Unit(hit.path or f".memory/{hit.file}", hit.line, hit.line)


def score(units: Sequence[Unit], answer: Answer) -> dict[str, float]:
    """R@1, R@5 and MRR (top `TOP`) of one ranked list with one answer."""
    rank = next((n for n, unit in enumerate(units[:TOP], 1) if is_answer(unit, answer)), None)
    return {
        "r@1": float(rank == 1),
        "r@5": float(rank is not None and rank <= 5),
        "mrr": 0.0 if rank is None else 1.0 / rank,
    }


class Fts5Units:
    """An in-memory FTS5 table (porter) of memory entries and chunks: bm25 top-k units."""

    def __init__(self, rows: Sequence[tuple[Unit, str]]) -> None:
        self._units = [unit for unit, _ in rows]
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE units USING fts5(content, tokenize='porter')")
        self._db.executemany(
            "INSERT INTO units(rowid, content) VALUES (?, ?)",
            ((number, text) for number, (_, text) in enumerate(rows)),
        )

    def rank(self, query: str, limit: int = TOP) -> list[Unit]:
        """The best `limit` units for `query` (bm25, then insertion order)."""
        match = fts5_match(query)
        if match is None:
            return []
        rows = self._db.execute(
            "SELECT rowid FROM units WHERE units MATCH ? ORDER BY bm25(units), rowid LIMIT ?",
            (match, limit),
        )
        return [self._units[int(rowid)] for (rowid,) in rows]

    def close(self) -> None:
        self._db.close()


def searchable_units(
    corpus: dict[Category, list[Entry]], documents: Sequence[Document]
) -> list[tuple[Unit, str]]:
    """Every unit memd searches, with its text: each entry's content, each chunk's heading path
    and text (memd's chunker)."""
    rows = [
        (Unit(_memory_path(category), entry.line, entry.line), entry.content)
        for category, entries in corpus.items()
        for entry in entries
    ]
    for document in documents:
        rows += [
            (Unit(document.path, part.start, part.end), part.searchable)
            for part in chunk(document.text)
        ]
    return rows


def run_retrieval(settings: Settings) -> dict[str, Any]:
    """Ask every question of the retrieval set through a daemon and FTS5; return the figures:
    "methods" -> kind -> metrics (and "questions"), the workspace's sizes, "ms_per_query"."""
    data = retrieval_set(settings)
    rows: dict[str, dict[Kind, list[dict[str, float]]]] = {
        method: {kind: [] for kind in KINDS} for method in METHODS
    }
    seconds = 0.0
    units = searchable_units(data.corpus, data.documents)
    fts = Fts5Units(units)
    with running_daemon(private_state=True) as (socket_path, root), contextlib.closing(fts):
        workspace = root / "mixed"
        memory_bytes = write_workspace(workspace, data.corpus)
        prose_bytes = write_documents(workspace, data.documents)
        with Client(socket_path, workspace=workspace, timeout=QUERY_TIMEOUT) as client:
            client.query("warm up", limit=1)  # load the workspace and its sources
            for question in data.questions:
                kind = question.answer.kind
                own: p.Origin = "memory" if kind == "memory" else "file"
                started = time.perf_counter()
                hits = client.query(question.text, limit=TOP).results
                seconds += time.perf_counter() - started
                alone = client.query(question.text, limit=TOP, sources=[own]).results
                ranked = {
                    "memd": [hit_unit(hit) for hit in hits],
                    "memd_own": [hit_unit(hit) for hit in alone],
                    "fts5": fts.rank(question.text),
                }
                for method, found in ranked.items():
                    rows[method][kind].append(score(found, question.answer))
    return {
        "memories": sum(len(entries) for entries in data.corpus.values()),
        "memory_bytes": memory_bytes,
        "documents": [document.path for document in data.documents],
        "prose_bytes": prose_bytes,
        "chunks": len(units) - sum(len(entries) for entries in data.corpus.values()),
        "questions": {kind: sum(q.answer.kind == kind for q in data.questions) for kind in KINDS},
        "ms_per_query": 1000.0 * seconds / max(1, len(data.questions)),
        "methods": {
            method: {kind: _mean(found) for kind, found in by_kind.items()}
            for method, by_kind in rows.items()
        },
    }


def _mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    figures = {m: sum(row[m] for row in rows) / len(rows) if rows else 0.0 for m in METRICS}
    figures["questions"] = float(len(rows))
    return figures


# ---------------------------------------------------------------------------- speed


class SpeedSet(NamedTuple):
    """The speed run's memories, prose and questions."""

    corpus: dict[Category, list[Entry]]
    documents: list[Document]
    questions: list[str]


def speed_set(settings: Settings) -> SpeedSet:
    """The speed run's data: `make_corpus` memories, prose of about `prose_bytes` over
    `prose_files` `memory/*.md` files, and distinct questions (fixed ones, rule words, facts
    from the memories' subjects and the prose's)."""
    rng = random.Random(SEED + 1)
    corpus = make_corpus(settings.entries)
    per_file = settings.prose_bytes // settings.prose_files
    facts = make_facts(settings.prose_bytes // 400, rng, unique=False)
    paths = [f"memory/notes-{number:02d}.md" for number in range(settings.prose_files)]
    documents, _ = make_documents(paths, facts, rng, min_bytes=per_file)
    share = max(1, settings.speed_questions // 2)
    wanted = [
        *QUERIES,
        *make_queries(share),
        *(fact.question for fact in rng.sample(facts, min(len(facts), share))),
    ]
    return SpeedSet(corpus, documents, list(dict.fromkeys(wanted)))


class _Daemon(NamedTuple):
    name: str
    socket_path: Path
    client: RawClient
    frames: list[bytes]
    memory_frame: bytes


def _time_pass(daemon: _Daemon) -> list[float]:
    samples = []
    for frame in daemon.frames:
        started = time.perf_counter()
        daemon.client.query(frame)
        samples.append((time.perf_counter() - started) * 1000.0)
    return samples


def summary(samples: Sequence[float]) -> dict[str, float]:
    """n, p50, p95, p99, max (ms) of `samples`."""
    ordered = sorted(samples)
    return {
        "n": float(len(ordered)),
        "p50_ms": percentile(ordered, 0.50),
        "p95_ms": percentile(ordered, 0.95),
        "p99_ms": percentile(ordered, 0.99),
        "max_ms": ordered[-1],
    }


def _steady(daemons: Sequence[_Daemon], budget_s: float) -> dict[str, list[float]]:
    """Whole passes over the questions, alternating daemons (the order swapped each round),
    until each has spent `budget_s` (at least one pass each)."""
    samples: dict[str, list[float]] = {daemon.name: [] for daemon in daemons}
    began = time.perf_counter()
    order = list(daemons)
    while True:
        for daemon in order:
            samples[daemon.name] += _time_pass(daemon)
        order.reverse()
        if time.perf_counter() - began >= budget_s * len(daemons):
            return samples


IDLE_STEPS = ("wake", "look", "next", "look_cost")
"""After an idle second: a query of the memories alone (it wakes the daemon and the client but
looks at no source), the question (it looks at the sources again), the question once more (it
does not), and the difference between those two, per round."""


def _after_idle(daemons: Sequence[_Daemon], rounds: int) -> dict[str, dict[str, list[float]]]:
    """`rounds` times: wait past `FRESH_SECONDS`, then in each daemon time `IDLE_STEPS`."""
    found: dict[str, dict[str, list[float]]] = {
        daemon.name: {step: [] for step in IDLE_STEPS} for daemon in daemons
    }
    order = list(daemons)
    for number in range(rounds):
        time.sleep(FRESH_SECONDS + 0.2)
        for daemon in order:
            question = daemon.frames[number % len(daemon.frames)]
            times = found[daemon.name]
            frames = {"wake": daemon.memory_frame, "look": question, "next": question}
            for step, frame in frames.items():
                started = time.perf_counter()
                daemon.client.query(frame)
                times[step].append((time.perf_counter() - started) * 1000.0)
            times["look_cost"].append(times["look"][-1] - times["next"][-1])
        order.reverse()
    return found


def memory_frame(workspace: Path, question: str) -> bytes:
    """A `query` request frame searching only the workspace's memories (no source look)."""
    request = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "query",
        "params": {
            "workspace": str(workspace),
            "query": question,
            "limit": TOP,
            "sources": ["memory"],
        },
    }
    return json.dumps(request).encode("utf-8") + b"\n"


def run_speed(settings: Settings) -> dict[str, Any]:
    """Time the questions in both workspaces (see the module's protocol, part 2); return the
    figures by workspace, the re-look figures, the in-process breakdown and the ratio."""
    data = speed_set(settings)
    figures: dict[str, Any] = {"questions": len(data.questions)}
    with (
        running_daemon(private_state=True) as (alone_socket, alone_root),
        running_daemon(private_state=True) as (mixed_socket, mixed_root),
    ):
        roots = {"memories": alone_root / "memories", "mixed": mixed_root / "mixed"}
        sockets = {"memories": alone_socket, "mixed": mixed_socket}
        workspaces: dict[str, dict[str, Any]] = {}
        for name, workspace in roots.items():
            workspaces[name] = {
                "entries": settings.entries,
                "memory_bytes": write_workspace(workspace, data.corpus),
                "source_files": 0,
                "prose_bytes": 0,
            }
        workspaces["mixed"]["source_files"] = len(data.documents)
        workspaces["mixed"]["prose_bytes"] = write_documents(roots["mixed"], data.documents)
        with contextlib.ExitStack() as stack:
            daemons = []
            for name, workspace in roots.items():
                client = RawClient(sockets[name])
                stack.callback(client.close)
                frames = request_frames(workspace, data.questions)
                wake = memory_frame(workspace, data.questions[0])
                daemons.append(_Daemon(name, sockets[name], client, frames, wake))
            for daemon in daemons:
                _load(daemon, workspaces[daemon.name])
            steady = _steady(daemons, settings.budget_s)
            idle = _after_idle(daemons, settings.idle_rounds)
        for name, found in workspaces.items():
            found["steady"] = summary(steady[name])
            found["after_idle"] = {which: summary(s) for which, s in idle[name].items()}
        figures["breakdown"] = breakdown(data, roots["mixed"])
    figures["workspaces"] = workspaces
    figures["chunks"] = figures["breakdown"]["chunks"]
    alone, mixed = (workspaces[name]["steady"] for name in WORKSPACES)
    figures["p50_ratio"] = mixed["p50_ms"] / alone["p50_ms"]
    figures["p95_ratio"] = mixed["p95_ms"] / alone["p95_ms"]
    return figures


def _load(daemon: _Daemon, figures: dict[str, Any]) -> None:
    """Time the first query (the workspace's load) while another client calls `status` in a
    loop (its longest round trip: how long the event loop was blocked), then one untimed pass
    (every index built); note the mean hits and how many are chunks."""
    with StallProbe(str(daemon.socket_path)) as probe:
        deadline = time.monotonic() + QUERY_TIMEOUT
        while probe.worst()[1] < 3 and time.monotonic() < deadline:  # connected, answering
            time.sleep(0.01)
        probe.reset()
        started = time.perf_counter()
        daemon.client.query(daemon.frames[0])
        figures["load_ms"] = (time.perf_counter() - started) * 1000.0
        figures["load_stall_ms"] = probe.worst()[0]
    hits = chunks = 0
    for frame in daemon.frames:
        results = daemon.client.query(frame).results
        hits += len(results)
        chunks += sum(hit.source == "file" for hit in results)
    figures["mean_hits"] = hits / len(daemon.frames)
    figures["chunk_share"] = chunks / max(1, hits)


def breakdown(data: SpeedSet, mixed: Path) -> dict[str, Any]:
    """Where a mixed query's time goes, in-process, p50 over the questions (best of 3 passes)
    of memd's ranking (`ranking.search`): over the category indexes alone; with every chunk
    in one index (`SourcesIndex`, as the daemon searches); with one index a source file
    instead (what that layout would cost); and over as many memories as entries and chunks
    together (what the number of units alone costs). Also one look at the unchanged sources
    (what a query pays once a second), the first look (find, read, chunk and index the
    prose) and indexing every chunk again (what an edit to any source costs)."""
    started = time.perf_counter()
    look = look_at(str(mixed), (), MAX_FILE_BYTES)
    first_look_ms = (time.perf_counter() - started) * 1000.0
    started = time.perf_counter()
    SourcesIndex(list(look.files.values()))
    index_ms = (time.perf_counter() - started) * 1000.0
    looks = []
    for _ in range(20):
        started = time.perf_counter()
        look_at(str(mixed), (), MAX_FILE_BYTES, look)
        looks.append((time.perf_counter() - started) * 1000.0)
    per_file: list[tuple[Key, ranking.SearchIndex]] = [
        (Shelf("file", path), ranking.build_index(source.entries))
        for path, source in look.files.items()
    ]
    chunks = sum(len(source.entries) for source in look.files.values())
    memories = _indexes(data.corpus)
    as_many = _indexes(make_corpus(sum(map(len, data.corpus.values())) + chunks))
    questions = data.questions
    return {
        "chunks": chunks,
        "first_look_ms": first_look_ms,
        "index_sources_ms": index_ms,
        "look_unchanged_ms": statistics.median(looks),
        "ranking_p50_ms": {
            "memories": _ranking_p50(memories, questions),
            "mixed": _ranking_p50(
                [*memories, *Searchable.of_sources(look.segments).indexes], questions
            ),
            "index_a_file": _ranking_p50([*memories, *per_file], questions),
            "as_many_memories": _ranking_p50(as_many, questions),
        },
    }


def _indexes(corpus: dict[Category, list[Entry]]) -> list[tuple[Key, ranking.SearchIndex]]:
    return [(category, ranking.build_index(entries)) for category, entries in corpus.items()]


def _ranking_p50(indexes: Sequence[tuple[Key, ranking.SearchIndex]], questions: list[str]) -> float:
    best = []
    for _ in range(3):
        samples = []
        for question in questions:
            started = time.perf_counter()
            ranking.search(indexes, question, limit=TOP)
            samples.append((time.perf_counter() - started) * 1000.0)
        best.append(statistics.median(samples))
    return min(best)


# ---------------------------------------------------------------------------- report


def run(settings: Settings, *, output: Path | None = None) -> dict[str, Any]:
    """Run both parts, print the tables and the verdict, write the JSON report."""
    began = time.perf_counter()
    retrieval = run_retrieval(settings)
    print(f"  retrieval measured ({time.perf_counter() - began:.1f} s)", flush=True)
    speed = run_speed(settings)
    met = speed["p50_ratio"] <= TARGET_RATIO
    report: dict[str, Any] = {
        "benchmark": "sources",
        "commit": commit(),
        "settings": settings.__dict__,
        "labels": {"methods": METHODS, "workspaces": WORKSPACES},
        "retrieval": retrieval,
        "speed": speed,
        "targets": {
            "p50 ratio": {
                "value": speed["p50_ratio"],
                "target": TARGET_RATIO,
                "met": met,
                "text": (
                    f"mixed p50 / memories-alone p50 at {settings.entries:,} entries = "
                    f"{speed['p50_ratio']:.2f}x (target <= {TARGET_RATIO:g}x): "
                    + ("met" if met else "NOT met")
                ),
            }
        },
    }
    report["seconds"] = time.perf_counter() - began
    print()
    print(retrieval_notes(retrieval))
    print()
    print(retrieval_table(retrieval))
    print()
    print(speed_notes(settings, speed))
    print()
    print(speed_table(speed))
    print()
    print(idle_table(speed))
    print()
    print(breakdown_table(speed["breakdown"]))
    print()
    print_verdicts(report["targets"])
    save(report, output)
    return report


def retrieval_notes(retrieval: dict[str, Any]) -> str:
    """One line: what the retrieval workspace held and how many questions of each kind."""
    asked = retrieval["questions"]
    return (
        f"Mixed-source retrieval: {retrieval['memories']:,} memories "
        f"({retrieval['memory_bytes'] / 1e3:.0f} kB) + {len(retrieval['documents'])} prose "
        f"sources ({retrieval['prose_bytes'] / 1e3:.0f} kB, {retrieval['chunks']:,} chunks); "
        f"{asked['memory']} memory-answer and {asked['chunk']} chunk-answer questions; memd "
        f"{retrieval['ms_per_query']:.2f} ms per query (client round trip)"
    )


def retrieval_table(retrieval: dict[str, Any]) -> str:
    """Markdown: method | answer | R@1 | R@5 | MRR | questions."""
    lines = [
        "| method | answer is a | R@1 | R@5 | MRR | questions |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for method, label in METHODS.items():
        for kind in KINDS:
            f = retrieval["methods"][method][kind]
            lines.append(
                f"| {label} | {kind} | {f['r@1']:.3f} | {f['r@5']:.3f} | {f['mrr']:.3f} "
                f"| {f['questions']:.0f} |"
            )
    return "\n".join(lines)


def speed_notes(settings: Settings, speed: dict[str, Any]) -> str:
    mixed = speed["workspaces"]["mixed"]
    return (
        f"Query speed through the daemon: {settings.entries:,} memory entries alone vs the same "
        f"plus {mixed['prose_bytes'] / 2**20:.2f} MiB of prose in {mixed['source_files']} "
        f"memory/*.md files ({speed['chunks']:,} chunks); {speed['questions']} distinct "
        f"questions, limit {TOP}; passes alternate between the two daemons"
    )


def speed_table(speed: dict[str, Any]) -> str:
    """Markdown: one row per workspace, steady-state figures and its first query (load)."""
    lines = [
        "| workspace | first query (load) ms | longest `status` meanwhile, ms | queries timed "
        "| p50 ms | p95 ms | p99 ms | max ms | p50 ÷ memories alone | mean hits "
        "| chunk share of hits |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = speed["workspaces"]["memories"]["steady"]["p50_ms"]
    for name, label in WORKSPACES.items():
        w = speed["workspaces"][name]
        s = w["steady"]
        lines.append(
            f"| {label} | {w['load_ms']:.0f} | {w['load_stall_ms']:.0f} | {s['n']:.0f} "
            f"| {s['p50_ms']:.3f} "
            f"| {s['p95_ms']:.3f} | {s['p99_ms']:.3f} | {s['max_ms']:.1f} "
            f"| {s['p50_ms'] / base:.2f}x | {w['mean_hits']:.1f} | {w['chunk_share']:.2f} |"
        )
    return "\n".join(lines)


def idle_table(speed: dict[str, Any]) -> str:
    """Markdown: after an idle second, the query that looks at the sources again beside the
    same query right after, and the difference (see `IDLE_STEPS`)."""
    lines = [
        "| workspace | rounds | wake-up query (memories only) p50 ms "
        "| first query with sources (looks again) p50 ms | max ms "
        "| the same query next p50 ms | the look's cost (per-round difference) p50 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label in WORKSPACES.items():
        idle = speed["workspaces"][name]["after_idle"]
        lines.append(
            f"| {label} | {idle['look']['n']:.0f} | {idle['wake']['p50_ms']:.3f} "
            f"| {idle['look']['p50_ms']:.3f} | {idle['look']['max_ms']:.3f} "
            f"| {idle['next']['p50_ms']:.3f} | {idle['look_cost']['p50_ms']:.3f} |"
        )
    return "\n".join(lines)


RANKING_ROWS: dict[str, str] = {
    "memories": "memories alone",
    "mixed": "memories + every chunk in one index (as the daemon searches)",
    "index_a_file": "memories + one index a source file",
    "as_many_memories": "as many memories as entries and chunks together",
}


def breakdown_table(found: dict[str, Any]) -> str:
    """Markdown: the in-process figures of `breakdown`."""
    p50 = found["ranking_p50_ms"]
    rows = [
        (f"ranking p50, {label}", f"{p50[key]:.3f} ms ({p50[key] / p50['memories']:.2f}x)")
        for key, label in RANKING_ROWS.items()
    ]
    rows += [
        (
            "one look at the unchanged sources (scan, stat), median",
            f"{found['look_unchanged_ms']:.3f} ms",
        ),
        ("first look: find, read, chunk and index the prose", f"{found['first_look_ms']:.0f} ms"),
        ("index every chunk again (an edit to any source)", f"{found['index_sources_ms']:.0f} ms"),
    ]
    lines = [
        "| in-process (`ranking.search`, `memd.server.workspaces.source_index`) | figure |",
        "|---|---:|",
    ]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- churn (issue 30)


@dataclass(frozen=True)
class ChurnSettings:
    """The sizes of the two churn cases (`run_churn`)."""

    source_bytes: int
    """Changing source: the size of each of the two `memory/*.md` sources."""
    seconds: float
    """Changing source: how long one source is appended to while queried."""
    append_every: float
    query_every: float
    directories: int
    """Tree: how many directories `**/*.md` walks."""
    idle_queries: int
    """Tree: how many queries, each more than `FRESH_SECONDS` after the last."""


CHURN_FULL = ChurnSettings(7 * 1024 * 1024, 30.0, 0.5, 0.3, 3_000, 8)
CHURN_QUICK = ChurnSettings(200_000, 2.0, 0.5, 0.3, 60, 2)


def _daemon_pid(socket_path: Path) -> int:
    """The pid of the daemon serving `socket_path` (its command line names it)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if str(socket_path).encode() in (entry / "cmdline").read_bytes():
                    return int(entry.name)
    raise RuntimeError(f"no process serves {socket_path}")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def _prose(size: int, rng: random.Random) -> str:
    parts, total = [], 0
    while total < size:
        paragraph = " ".join(filler_sentence(rng) for _ in range(2))
        parts.append(paragraph + "\n\n")
        total += len(parts[-1])
    return "".join(parts)


def _changing(settings: ChurnSettings, executable: str | None) -> dict[str, Any]:
    """Two sources, one appended every `append_every` s while a client queries every
    `query_every` s: query latency, the daemon's CPU and RSS over the run."""
    rng = random.Random(SEED)
    with running_daemon(private_state=True, executable=executable) as (socket_path, workspace):
        (workspace / "memory").mkdir()
        for name in ("a", "b"):
            (workspace / "memory" / f"{name}.md").write_text(_prose(settings.source_bytes, rng))
        pid = _daemon_pid(socket_path)
        with Client(str(socket_path), timeout=QUERY_TIMEOUT) as client:
            started = time.perf_counter()
            client.query("billing service cache", workspace=str(workspace), sources=["file"])
            first_s = time.perf_counter() - started
            rss_before, cpu_before = _rss_mb(pid), _cpu_seconds(pid)
            latencies: list[float] = []
            appended = 0
            began = time.monotonic()
            next_append = began
            target = workspace / "memory" / "a.md"
            while time.monotonic() - began < settings.seconds:
                if time.monotonic() >= next_append:
                    with target.open("a", encoding="utf-8") as out:
                        out.write(f"Appended note {appended}: {filler_sentence(rng)}\n\n")
                    appended += 1
                    next_append += settings.append_every
                started = time.perf_counter()
                client.query(
                    "billing service cache timeout", workspace=str(workspace), sources=["file"]
                )
                latencies.append(time.perf_counter() - started)
                time.sleep(settings.query_every)
            elapsed = time.monotonic() - began
            cpu = (_cpu_seconds(pid) - cpu_before) / elapsed
            latencies.sort()
            return {
                "first_query_s": first_s,
                "queries": len(latencies),
                "appends": appended,
                "query_p50_ms": percentile(latencies, 0.5) * 1000.0,
                "query_max_ms": latencies[-1] * 1000.0,
                "cpu_share": cpu,
                "rss_before_mb": rss_before,
                "rss_after_mb": _rss_mb(pid),
                "rss_peak_mb": _rss_mb(pid, "VmHWM"),
            }


def _tree(settings: ChurnSettings, executable: str | None) -> dict[str, Any]:
    """`sources = ["**/*.md"]` over `directories` directories, nothing changing: each query
    more than `FRESH_SECONDS` after the last."""
    config = 'sources = ["**/*.md"]\n'
    with running_daemon(private_state=True, config=config, executable=executable) as (
        socket_path,
        workspace,
    ):
        width = max(1, round(settings.directories ** (1 / 3)))
        made = 0
        for a in range(width):
            for b in range(width):
                for c in range(width):
                    leaf = workspace / "tree" / f"d{a}" / f"e{b}" / f"f{c}"
                    leaf.mkdir(parents=True)
                    made += 1
                    if (a + b + c) % 7 == 0:
                        (leaf / "notes.md").write_text(f"- Note {a}.{b}.{c} on the deploy.\n")
        with Client(str(socket_path), timeout=QUERY_TIMEOUT) as client:
            client.query("deploy", workspace=str(workspace))
            time.sleep(FRESH_SECONDS + 0.2)
            client.query("deploy", workspace=str(workspace))  # the watches are in place
            samples = []
            for _ in range(settings.idle_queries):
                time.sleep(FRESH_SECONDS + 0.2)
                started = time.perf_counter()
                client.query("deploy", workspace=str(workspace))
                samples.append(time.perf_counter() - started)
        samples.sort()
        return {
            "directories": made,
            "queries": len(samples),
            "query_p50_ms": percentile(samples, 0.5) * 1000.0,
            "query_max_ms": samples[-1] * 1000.0,
        }


def run_churn(
    settings: ChurnSettings, *, baseline: str | None = None, output: Path | None = None
) -> dict[str, Any]:
    """The two churn cases for this tree's daemon and, in the same run, for `baseline` (another
    `memd` executable, say c6143c4's); print one table, write the JSON report."""
    daemons: dict[str, str | None] = {"this tree": None}
    if baseline is not None:
        daemons[f"baseline ({baseline})"] = baseline
    report: dict[str, Any] = {"benchmark": "sources-churn", "commit": commit(), "daemons": {}}
    report["settings"] = settings.__dict__
    for name, executable in daemons.items():
        report["daemons"][name] = {
            "changing": _changing(settings, executable),
            "tree": _tree(settings, executable),
        }
    print(churn_table(settings, report["daemons"]))
    save(report, output)
    return report


def churn_table(settings: ChurnSettings, daemons: dict[str, Any]) -> str:
    """One row per daemon: the changing source's and the tree's figures."""
    lines = [
        f"Changing source: 2 x {settings.source_bytes / 2**20:.1f} MiB `memory/*.md`, one "
        f"appended every {settings.append_every:g} s while queried every "
        f"{settings.query_every:g} s for {settings.seconds:g} s. Tree: `**/*.md` over "
        f"{next(iter(daemons.values()))['tree']['directories']:,} directories, nothing "
        "changing, each query > 1 s after the last.",
        "",
        "| daemon | first query s | query p50 ms | query max ms | daemon CPU | RSS MB before "
        "-> after (peak) | tree query p50 ms | tree max ms |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for name, found in daemons.items():
        changing, tree = found["changing"], found["tree"]
        lines.append(
            f"| {name} | {changing['first_query_s']:.2f} | {changing['query_p50_ms']:.1f} | "
            f"{changing['query_max_ms']:.0f} | {changing['cpu_share']:.0%} | "
            f"{changing['rss_before_mb']:.0f} -> {changing['rss_after_mb']:.0f} "
            f"({changing['rss_peak_mb']:.0f}) | {tree['query_p50_ms']:.1f} | "
            f"{tree['query_max_ms']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """`python -m bench.sources [--quick]`; `--churn [--baseline-daemon PATH]` runs the issue
    30 cases instead (a changing source, a big tree; `bench/results/sources-churn.json`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--churn" in args:
        quick = "--quick" in args
        baseline = None
        if "--baseline-daemon" in args:
            baseline = args[args.index("--baseline-daemon") + 1]
        suffix = "-quick" if quick else ""
        run_churn(
            CHURN_QUICK if quick else CHURN_FULL,
            baseline=baseline,
            output=RESULTS_DIR / f"sources-churn{suffix}.json",
        )
        return
    settings_main(
        args,
        name="sources",
        description=__doc__,
        quick_help="tiny workspaces, short budgets",
        run=run,
        full=FULL,
        quick=QUICK,
    )


if __name__ == "__main__":
    main()
