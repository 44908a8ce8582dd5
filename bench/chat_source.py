"""The chat source (issue 36): retrieval over past sessions written as Claude Code transcripts,
beside SQLite FTS5 on the same chunks, and what indexing a month of sessions costs.

Retrieval protocol:
- Every dev conversation of LongMemEval-S (one haystack a question) and LoCoMo (one
  conversation, many questions) is written as Claude Code session files, one a session, under
  a temp `CLAUDE_CONFIG_DIR/projects/<encoded workspace>/<uuid>.jsonl`, in the real shape
  (`session_lines`): one JSON line a turn (user: a string; assistant: an API message with a
  text block), `uuid`, `parentUuid`, `sessionId`, `cwd` (the temp workspace), `timestamp` from
  the data's session date, and the noise every real session has: a `file-history-snapshot`
  line, an `isMeta` local-command caveat and a tool_use / tool_result pair. LoCoMo's first
  speaker is the user, the second the assistant; a turn's text is `Speaker: text` (plus the
  shared photo's caption), as `bench.locomo` writes it.
- memd's side is the real pipeline, in process, through the same pure functions the daemon's
  chat index runs: `memd.fs.transcript_files.find_transcripts` (the files of the workspace),
  `lines.complete_objects` -> `transcripts.detect` / `turns_of` -> turns numbered from 1 ->
  `chunks.chunks`, each file's chunks one `ranking.build_index` over `Entry(line=i,
  content=chunk.text)` keyed by `Shelf("chat", path)`, all files ranked together by
  `ranking.search` (limit 10). With `--daemon`, the LoCoMo questions are also asked of a real
  `memd serve` with `sources=["chat"]` (needs the daemon's chat index; without it that row
  says why it is missing).
- FTS5's side: the same chunks in one SQLite FTS5 table (`bench.retrieval.Fts5Index`: porter,
  bm25(), words OR-ed).
- A diagnosis row, not judged: memd's ranking over the same turns with one entry a whole turn
  (not chunked; `bench.longmemeval`'s every-turn unit), to show what the chunking changes (a
  hit then covers one turn, where a chunk may cover two). The report also gives BM25's b that
  the chunks' length spread chose (`ranking.length_normalisation`).
- Metrics (top 10 chunks, averaged over questions): turn R@k ("every turn": the share of the
  question's evidence turns that a top-k chunk covers, a chunk covering turns first..last),
  session R@k (the share of its evidence sessions a top-k chunk comes from), MRR (the first
  chunk covering an evidence turn). LongMemEval's evidence: turns marked `has_answer`, sessions
  `answer_session_ids` (abstention questions left out); LoCoMo's: the `evidence` dia_ids of
  category 1-4 questions and their sessions.
- "Long turns do not crowd out short ones": the short-evidence questions are those whose every
  evidence turn is shorter than the median turn of their dataset; on them memd's turn R@5 must
  be at least FTS5's (and the table shows memd's R@5 on them beside its R@5 on all).

Cost protocol (`month`): 30 days x 4 sessions x 60 turns, the turns drawn (seeded) from
LongMemEval's, with a tool_use / tool_result pair after every other turn (the result 1-6 KB of
drawn text, as file reads and command output are) and assistant turns of several paragraphs:
sizes like real Claude Code files. Timed: the full pipeline cold (find, read, parse, turns,
chunks, index; the files are in the page cache, as right after they were written), beside
FTS5's insert of the same chunks; then an append of one turn to one file (`IndexedFile.grown`:
the byte cursor reads only the new bytes, the tail is chunked again and the file's index is
updated from its last version), beside FTS5's insert of the new chunk; peak memory of the cold
build under tracemalloc (a run of its own); where the cold time goes, stage by stage (`stages`).
Targets: the month in at most `COLD_TARGET_S` (the daemon builds it once a workspace, off the
event loop, and the first chat query may wait for it: about what a person waits for a first
answer without thinking it broke) and at most `COLD_X_FTS5` times FTS5's insert of the same
chunks (issue 35's rule for a cold index, `bench.cold_workspace`); an append at most
`APPEND_TARGET_MS` at p50 (a session's turn arrives every few seconds at most; the index must
keep up with every session of a workspace at once), and equal to reading the file anew.

Figures go to stdout and `bench/results/chat_source.json` (`chat_source-quick.json` with
`--quick`). Everything is deterministic except the timings.

Size: the data written as transcripts, the in-process chat index, the scoring and the cost run
share the transcript shape; one module keeps them side by side.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import random
import statistics
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from bench import locomo, longmemeval
from bench._report import RESULTS_DIR, commit, print_verdicts, save
from bench.retrieval import Fts5Index
from memd.core.format.mdformat import Entry
from memd.core.search import ranking
from memd.core.search.index import SearchIndex
from memd.core.search.shelves import Shelf
from memd.core.transcripts import Agent, detect, turns_of
from memd.core.transcripts.chunks import ChatChunk, NumberedTurn, chunks
from memd.core.transcripts.lines import complete_objects
from memd.fs.transcript_files import encode_claude, find_transcripts

TOP = 10
KS = (5, 10)
COLD_TARGET_S = 2.0
COLD_X_FTS5 = 2.0
APPEND_TARGET_MS = 10.0
APPENDS = 21
QUICK_LONGMEMEVAL = 3
QUICK_LOCOMO = 1
QUICK_LOCOMO_QUESTIONS = 30
MONTH = (30, 4, 60)
"""Days, sessions a day, turns a session."""
QUICK_MONTH = (2, 2, 20)
VERSION = "2.0.14"
MODEL = "claude-sonnet-4-5-20250929"
CAVEAT = (
    "<local-command-caveat>Caveat: The messages below were generated by the user while running "
    "local commands. DO NOT respond to these messages or otherwise consider them in your "
    "response unless the user explicitly asks you to.</local-command-caveat>"
)
_NAMESPACE = uuid.UUID("6f1c3a52-36c4-4e0a-9d6e-3600000000aa")
_EPOCH = datetime.datetime(2023, 1, 1, tzinfo=datetime.UTC)


class Spoken(NamedTuple):
    """One turn of the data: its id, who spoke (user or assistant) and the words."""

    id: str
    role: str
    text: str


class Session(NamedTuple):
    """One session of the data: its id, when it began, its turns."""

    id: str
    began: datetime.datetime
    turns: tuple[Spoken, ...]


class Question(NamedTuple):
    """A query with its evidence turns and sessions (either may be empty: not scored there)."""

    text: str
    turns: frozenset[str]
    sessions: frozenset[str]


class Conversation(NamedTuple):
    """Sessions searched together, and the questions asked of them."""

    name: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


# ---------------------------------------------------------------------------- session files


def _uuid(*parts: object) -> str:
    return str(uuid.uuid5(_NAMESPACE, "/".join(map(str, parts))))


def _stamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def session_lines(
    session: Session, cwd: str, *, tool_text: Sequence[str] = (), tool_every: int = 0
) -> list[dict[str, Any]]:
    """The lines of `session`'s Claude Code transcript (see the module protocol): a snapshot
    line, the isMeta caveat, every turn, and a tool_use / tool_result pair after the second
    turn (with `tool_every`, also after every `tool_every`-th turn, its result the next of
    `tool_text`)."""
    sid = _uuid("session", session.id)
    common = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid}
    common |= {"version": VERSION, "gitBranch": "main"}
    lines: list[dict[str, Any]] = [
        {"type": "file-history-snapshot", "messageId": _uuid(sid, "snap"), "snapshot": {}},
    ]
    parent: str | None = None
    moment = session.began
    results = iter(tool_text)

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent, moment
        line_id = _uuid(sid, len(lines))
        lines.append(
            {"parentUuid": parent, **common, "type": kind, "message": message}
            | extra
            | {"uuid": line_id, "timestamp": _stamp(moment)}
        )
        parent = line_id
        moment += datetime.timedelta(seconds=20)

    add("user", {"role": "user", "content": CAVEAT}, isMeta=True)
    for position, turn in enumerate(session.turns, 1):
        if turn.role == "user":
            add("user", {"role": "user", "content": turn.text})
        else:
            add("assistant", _assistant([{"type": "text", "text": turn.text}], sid, position))
        if position == 2 or (tool_every and position % tool_every == 0):
            _tool_pair(add, sid, position, next(results, "README.md\nsrc\ntests"))
    return lines


def _assistant(content: list[dict[str, Any]], sid: str, position: int) -> dict[str, Any]:
    return {
        "id": "msg_" + _uuid(sid, "msg", position).replace("-", "")[:24],
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1200 + position, "output_tokens": 90 + position},
    }


def _tool_pair(add: Any, sid: str, position: int, output: str) -> None:
    tool_id = "toolu_" + _uuid(sid, "tool", position).replace("-", "")[:24]
    call: dict[str, Any] = {"type": "tool_use", "id": tool_id, "name": "Bash"}
    call["input"] = {"command": "ls -la && cat notes.txt", "description": "Look around"}
    add("assistant", _assistant([call], sid, position))
    result = {"type": "tool_result", "tool_use_id": tool_id, "content": output}
    add(
        "user",
        {"role": "user", "content": [result | {"is_error": False}]},
        toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
    )


def write_sessions(
    config_dir: Path, workspace: Path, sessions: Iterable[Session], **noise: Any
) -> dict[str, Session]:
    """Write each session as a transcript of `workspace` under `config_dir`; path -> session."""
    directory = config_dir / "projects" / encode_claude(str(workspace))
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, Session] = {}
    for session in sessions:
        lines = session_lines(session, str(workspace), **noise)
        path = directory / f"{lines[1]['sessionId']}.jsonl"
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        path.write_text(text, encoding="utf-8")
        written[str(path)] = session
    return written


# ---------------------------------------------------------------------------- memd's chat index


class IndexedFile(NamedTuple):
    """One transcript as the chat index holds it: its turns, chunks, index and byte cursor."""

    path: str
    turns: tuple[NumberedTurn, ...]
    chunks: tuple[ChatChunk, ...]
    search_index: SearchIndex
    cursor: int
    agent: Agent

    @classmethod
    def read(cls, path: str) -> IndexedFile:
        """Read and index the whole file."""
        with open(path, "rb") as handle:
            data = handle.read()
        found = complete_objects(data)
        agent = detect(found.objects) or "claude"
        turns = _numbered(turns_of(agent, found.objects), 1)
        made = tuple(chunks(turns))
        index = ranking.build_index(_entries(made))
        return cls(path, turns, made, index, found.consumed, agent)

    def grown(self) -> IndexedFile:
        """This file after it grew: only the bytes past the cursor are read; the chunks from
        the last chunk's first turn on are made again (the only ones a new turn can change)
        and the index is updated from its last version (do not search the old one after)."""
        with open(self.path, "rb") as handle:
            handle.seek(self.cursor)
            data = handle.read()
        found = complete_objects(data, start=self.cursor)
        new = _numbered(turns_of(self.agent, found.objects), len(self.turns) + 1)
        turns = self.turns + new
        first = self.chunks[-1].first if self.chunks else 1
        kept = tuple(c for c in self.chunks if c.first < first)
        made = kept + tuple(chunks(turns[first - 1 :]))
        index = ranking.build_index(_entries(made), self.search_index)
        return self._replace(turns=turns, chunks=made, search_index=index)._replace(
            cursor=self.cursor + found.consumed
        )


def _numbered(turns: Iterable[Any], first: int) -> tuple[NumberedTurn, ...]:
    return tuple(
        NumberedTurn(number, turn.role, turn.text, turn.timestamp)
        for number, turn in enumerate(turns, first)
    )


def _entries(made: Sequence[ChatChunk]) -> list[Entry]:
    return [Entry(line=i, slug=None, content=c.text) for i, c in enumerate(made, 1)]


def index_workspace(workspace: Path, config_dir: Path) -> list[IndexedFile]:
    """Find the workspace's transcripts as the daemon does and index each one."""
    environ = {"CLAUDE_CONFIG_DIR": str(config_dir)}
    found = find_transcripts(str(workspace), environ, max_age_days=90, now=time.time())
    return [IndexedFile.read(transcript.path) for transcript in found]


def memd_rank(files: Sequence[IndexedFile], query: str) -> list[tuple[str, ChatChunk]]:
    """The top `TOP` chunks for `query` over every file (path, chunk), best first."""
    by_key = {Shelf("chat", f.path): f for f in files}
    result = ranking.search([(k, f.search_index) for k, f in by_key.items()], query, limit=TOP)
    return [(hit.key.path, by_key[hit.key].chunks[hit.entry.line - 1]) for hit in result.hits]


def turn_indexes(files: Sequence[IndexedFile]) -> list[tuple[str, SearchIndex]]:
    """The same turns, one entry a whole turn (not chunked, not masked): how memd ranks them
    without the chunking, as `bench.longmemeval`'s every-turn unit does (a diagnosis row)."""
    return [
        (
            f.path,
            ranking.build_index(
                Entry(line=t.number, slug=None, content=f"{t.role}: {t.text}") for t in f.turns
            ),
        )
        for f in files
    ]


def turn_rank(
    indexes: Sequence[tuple[str, SearchIndex]], query: str
) -> list[tuple[str, ChatChunk]]:
    """The top `TOP` whole turns for `query` (each as a chunk of its one turn), best first."""
    keyed = [(Shelf("chat", path), index) for path, index in indexes]
    hits = ranking.search(keyed, query, limit=TOP).hits
    return [(h.key.path, ChatChunk(h.entry.line, h.entry.line, "", "", ())) for h in hits]


class Fts5Peer(Fts5Index):
    """The same chunks in one SQLite FTS5 table (`bench.retrieval.Fts5Index`; rowid = the
    chunk's place in `every`)."""

    def __init__(self, files: Sequence[IndexedFile]) -> None:
        self.every = [(f.path, c) for f in files for c in f.chunks]
        super().__init__(
            [Entry(line=i, slug=None, content=c.text) for i, (_, c) in enumerate(self.every)]
        )

    def ranked(self, query: str) -> list[tuple[str, ChatChunk]]:
        """The top `TOP` chunks for `query`, best first."""
        return [self.every[row] for row in self.rank(query, TOP)]

    def replace_from(self, first: int, texts: Sequence[str]) -> None:
        """Rows from `first` on become `texts` (what an append changes)."""
        self._db.execute("DELETE FROM memories WHERE rowid >= ?", (first,))
        rows = [(first + i, text) for i, text in enumerate(texts)]
        self._db.executemany("INSERT INTO memories(rowid, content) VALUES (?, ?)", rows)


# ---------------------------------------------------------------------------- scoring


def score(
    ranked: Sequence[tuple[str, ChatChunk]], question: Question, ids: Mapping[str, list[str]]
) -> dict[str, float]:
    """Turn R@k, session R@k and turn MRR of one ranked list; `ids` maps a path to its turns'
    data ids (turn number n is `ids[path][n - 1]`) and the session id last."""
    figures: dict[str, float] = {}
    covered = [{ids[p][n - 1] for n in range(c.first, c.last + 1)} for p, c in ranked]
    sessions = [ids[p][-1] for p, _ in ranked]
    for k in KS:
        if question.turns:
            found = set().union(*covered[:k]) & question.turns
            figures[f"turn_r@{k}"] = len(found) / len(question.turns)
        if question.sessions:
            found_sessions = set(sessions[:k]) & question.sessions
            figures[f"session_r@{k}"] = len(found_sessions) / len(question.sessions)
    if question.turns:
        first = next((r for r, c in enumerate(covered, 1) if c & question.turns), None)
        figures["mrr"] = 1.0 / first if first else 0.0
    return figures


METRICS = ("turn_r@5", "turn_r@10", "session_r@5", "session_r@10", "mrr")


def means(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Each metric's mean over the rows that have it, and how many do ("n_<metric>")."""
    summary: dict[str, float] = {}
    for metric in METRICS:
        values = [row[metric] for row in rows if metric in row]
        summary[metric] = sum(values) / len(values) if values else 0.0
        summary[f"n_{metric}"] = float(len(values))
    return summary


def turn_ids(written: Mapping[str, Session], files: Sequence[IndexedFile]) -> dict[str, list[str]]:
    """Path -> its numbered turns' data ids, then its session id. The reader's turns are
    matched to the data's in order by text: a data turn the reader left out (blank, or read as
    the harness's) has no number and can never be found (`dropped` counts them).

    Raises:
        ValueError: a reader's turn matches no data turn (the transcript was not read back).
    """
    found: dict[str, list[str]] = {}
    for indexed in files:
        session = written[indexed.path]
        pending = iter(session.turns)
        ids = []
        for turn in indexed.turns:
            spoken = next((s for s in pending if s.text.strip() == turn.text), None)
            if spoken is None:
                raise ValueError(f"{indexed.path}: turn {turn.number} is no turn of the data")
            ids.append(spoken.id)
        found[indexed.path] = [*ids, session.id]
    return found


# ---------------------------------------------------------------------------- the data


def _lme_date(text: str, fallback: int) -> datetime.datetime:
    try:
        moment = datetime.datetime.strptime(text[:10] + text[-5:], "%Y/%m/%d%H:%M")
    except ValueError:
        return _EPOCH + datetime.timedelta(days=fallback)
    return moment.replace(tzinfo=datetime.UTC)


def _locomo_date(text: str, fallback: int) -> datetime.datetime:
    try:
        moment = datetime.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return _EPOCH + datetime.timedelta(days=fallback)
    return moment.replace(tzinfo=datetime.UTC)


def longmemeval_conversation(path: Path) -> Conversation:
    """One LongMemEval question and its haystack (turn ids `<session>:<position>`)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        raw: dict[str, Any] = json.load(handle)
    sessions, evidence = [], set()
    dates = raw.get("haystack_dates") or []
    pairs = zip(raw["haystack_session_ids"], raw["haystack_sessions"], strict=True)
    for number, (session_id, turns) in enumerate(pairs):
        spoken = []
        for position, turn in enumerate(turns):
            turn_id = f"{number}:{position}"
            spoken.append(Spoken(turn_id, str(turn["role"]), str(turn["content"])))
            if turn.get("has_answer"):
                evidence.add(turn_id)
        when = _lme_date(str(dates[number]) if number < len(dates) else "", number)
        sessions.append(Session(f"{number}:{session_id}", when, tuple(spoken)))
    wanted = {str(s) for s in raw["answer_session_ids"]}
    answer_sessions = frozenset(s.id for s in sessions if s.id.split(":", 1)[1] in wanted)
    question = Question(str(raw["question"]), frozenset(evidence), answer_sessions)
    return Conversation(path.name.removesuffix(".json.gz"), tuple(sessions), (question,))


def locomo_conversation(path: Path, max_questions: int | None = None) -> Conversation:
    """One LoCoMo conversation (turn ids its dia_ids, session ids "D<n>")."""
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    first = raw.get("speaker_a")
    sessions = []
    for key in sorted((k for k in raw if k.startswith("session_")), key=_session_number):
        if not isinstance(raw[key], list):
            continue
        number = _session_number(key)
        when = _locomo_date(str(raw.get(f"{key}_date_time", "")), number)
        spoken = tuple(
            Spoken(
                str(turn["dia_id"]),
                "user" if turn["speaker"] == first else "assistant",
                locomo.memory_line(turn),
            )
            for turn in raw[key]
        )
        sessions.append(Session(f"D{number}", when, spoken))
    questions = tuple(
        Question(q.text, frozenset(q.evidence), frozenset(e.split(":")[0] for e in q.evidence))
        for q in locomo.load_conversation(path).questions[:max_questions]
    )
    return Conversation(path.stem, tuple(sessions), questions)


def _session_number(key: str) -> int:
    digits = key.removeprefix("session_").split("_")[0]
    return int(digits) if digits.isdigit() else 0


# ---------------------------------------------------------------------------- retrieval run


class Scored(NamedTuple):
    """One dataset's per-question figures for each method and which questions are short."""

    rows: dict[str, list[dict[str, float]]]
    short: list[bool]
    dropped: int
    chunks: int
    b: list[float]
    """BM25's b each conversation's chunks were ranked with (`ranking.length_normalisation`)."""


def score_dataset(conversations: Iterable[Conversation], root: Path) -> Scored:
    """Write, index and ask every conversation; memd and FTS5 on the same chunks."""
    rows: dict[str, list[dict[str, float]]] = {"memd": [], "fts5": [], "memd_turns": []}
    lengths: list[int] = []
    evidence_lengths: list[int] = []
    dropped = made = 0
    b: list[float] = []
    for conversation in conversations:
        workspace = root / "ws" / conversation.name
        workspace.mkdir(parents=True)
        written = write_sessions(root / "claude", workspace, conversation.sessions)
        files = index_workspace(workspace, root / "claude")
        ids = turn_ids(written, files)
        dropped += sum(len(s.turns) for s in written.values()) - sum(len(f.turns) for f in files)
        made += sum(len(f.chunks) for f in files)
        moments = [f.search_index.length_moments() for f in files]
        b.append(ranking.length_normalisation(ranking.length_spread(moments)))
        text_of = {t.id: t.text for s in conversation.sessions for t in s.turns}
        lengths += [len(text) for text in text_of.values()]
        fts5 = Fts5Peer(files)
        whole = turn_indexes(files)
        for question in conversation.questions:
            rows["memd"].append(score(memd_rank(files, question.text), question, ids))
            rows["fts5"].append(score(fts5.ranked(question.text), question, ids))
            rows["memd_turns"].append(score(turn_rank(whole, question.text), question, ids))
            longest = max((len(text_of.get(t, "")) for t in question.turns), default=-1)
            evidence_lengths.append(longest)
        fts5.close()
    median = statistics.median(lengths) if lengths else 0
    short = [0 <= longest < median for longest in evidence_lengths]
    return Scored(rows, short, dropped, made, b)


def summarise(scored: Scored) -> dict[str, Any]:
    """Each method's means on all questions and on the short-evidence ones."""
    summary: dict[str, Any] = {"dropped_turns": scored.dropped, "chunks": scored.chunks}
    summary["b"] = {"min": min(scored.b, default=0.0), "max": max(scored.b, default=0.0)}
    for method, rows in scored.rows.items():
        summary[method] = means(rows)
        chosen = [row for row, short in zip(rows, scored.short, strict=True) if short]
        summary[f"{method}_short"] = means(chosen)
    return summary


def retrieval(
    lme_dir: Path | None, locomo_dir: Path | None, root: Path, quick: bool
) -> dict[str, Any]:
    """Both datasets' figures (a missing data directory is left out and said)."""
    found: dict[str, Any] = {}
    if lme_dir is not None:
        scored_files, _ = longmemeval.question_files(lme_dir)
        chosen = scored_files[:QUICK_LONGMEMEVAL] if quick else scored_files
        found["longmemeval"] = summarise(
            score_dataset((longmemeval_conversation(p) for p in chosen), root / "lme")
        )
    if locomo_dir is not None:
        paths = sorted(locomo_dir.glob("*.json"))[: QUICK_LOCOMO if quick else None]
        limit = QUICK_LOCOMO_QUESTIONS if quick else None
        found["locomo"] = summarise(
            score_dataset((locomo_conversation(p, limit) for p in paths), root / "locomo")
        )
    return found


# ---------------------------------------------------------------------------- cost run


def month_sessions(
    pool: Sequence[Spoken], shape: tuple[int, int, int], seed: int = 36
) -> list[Session]:
    """A month of sessions (days x sessions a day x turns), turns drawn from `pool` by role."""
    days, per_day, per_session = shape
    rng = random.Random(seed)
    users = [t.text for t in pool if t.role == "user"] or ["..."]
    answers = [t.text for t in pool if t.role != "user"] or ["..."]
    sessions = []
    for day in range(days):
        for slot in range(per_day):
            began = _EPOCH + datetime.timedelta(days=day, hours=9 + 2 * slot)
            turns = tuple(
                Spoken(
                    f"m{day}.{slot}.{n}",
                    "user" if n % 2 == 0 else "assistant",
                    rng.choice(users if n % 2 == 0 else answers),
                )
                for n in range(per_session)
            )
            sessions.append(Session(f"m{day}.{slot}", began, turns))
    return sessions


def tool_outputs(pool: Sequence[Spoken], count: int, seed: int = 37) -> list[str]:
    """`count` tool results of 1-6 KB of drawn text, as a file read or a command prints them."""
    rng = random.Random(seed)
    texts = [t.text for t in pool] or ["output"]
    outputs = []
    for _ in range(count):
        size, parts = rng.randint(1024, 6144), list[str]()
        while sum(len(part) for part in parts) < size:
            parts.append(rng.choice(texts))
        outputs.append("\n".join(parts)[:size])
    return outputs


def _pool(lme_dir: Path | None, locomo_dir: Path | None) -> list[Spoken]:
    if lme_dir is not None:
        paths = longmemeval.question_files(lme_dir)[0][:4]
        return [t for p in paths for s in longmemeval_conversation(p).sessions for t in s.turns]
    if locomo_dir is not None:
        path = sorted(locomo_dir.glob("*.json"))[0]
        return [t for s in locomo_conversation(path).sessions for t in s.turns]
    return []


def cost(pool: Sequence[Spoken], root: Path, shape: tuple[int, int, int]) -> dict[str, Any]:
    """Index a month of sessions cold (3 runs, the median), FTS5's build of the same chunks,
    peak memory, and appends of one turn to one file."""
    sessions = month_sessions(pool, shape)
    outputs = tool_outputs(pool, len(sessions) * shape[2] // 2)
    workspace, config = root / "month-ws", root / "month-claude"
    workspace.mkdir(parents=True)
    written = write_sessions(config, workspace, sessions, tool_text=outputs, tool_every=2)
    size = sum(os.path.getsize(path) for path in written)
    cold, fts5_build = [], []
    for _ in range(3):
        started = time.perf_counter()
        files = index_workspace(workspace, config)
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        peer = Fts5Peer(files)
        fts5_build.append(time.perf_counter() - started)
        peer.close()
    stage = stages([f.path for f in files])
    tracemalloc.start()
    files = index_workspace(workspace, config)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    appended, fts5_append, same = _appends(files, pool)
    return {
        "files": len(files),
        "bytes": size,
        "turns": sum(len(f.turns) for f in files),
        "chunks": sum(len(f.chunks) for f in files),
        "cold_s": statistics.median(cold),
        "cold_runs_s": cold,
        "prose_bytes": sum(len(t.text.encode()) for f in files for t in f.turns),
        "fts5_build_s": statistics.median(fts5_build),
        "stages_s": stage,
        "peak_mib": peak / 2**20,
        "append_p50_ms": statistics.median(appended),
        "append_max_ms": max(appended),
        "fts5_append_p50_ms": statistics.median(fts5_append),
        "append_matches_full_read": same,
    }


def stages(paths: Sequence[str]) -> dict[str, float]:
    """Where a cold build's time goes, stage by stage over `paths` (one more run): reading and
    parsing the lines into turns, chunking them (masking secrets), indexing the chunks."""
    spent = dict.fromkeys(("read_parse_turns", "chunks", "index"), 0.0)
    for path in paths:
        started = time.perf_counter()
        with open(path, "rb") as handle:
            found = complete_objects(handle.read())
        turns = _numbered(turns_of(detect(found.objects) or "claude", found.objects), 1)
        chunked = time.perf_counter()
        made = tuple(chunks(turns))
        indexed = time.perf_counter()
        ranking.build_index(_entries(made))
        done = time.perf_counter()
        spent["read_parse_turns"] += chunked - started
        spent["chunks"] += indexed - chunked
        spent["index"] += done - indexed
    return spent


def _appends(
    files: list[IndexedFile], pool: Sequence[Spoken]
) -> tuple[list[float], list[float], bool]:
    """Append `APPENDS` turns to the newest file one by one, each followed by `grown`; FTS5
    inserts the chunks that changed. Also whether the result equals reading the file anew."""
    target = files[0]
    rng = random.Random(38)
    sid = str(target.path).rsplit("/", 1)[1].removesuffix(".jsonl")
    peer = Fts5Peer([target])
    took, fts5_took = [], []
    for n in range(APPENDS):
        role = "user" if (len(target.turns) + n) % 2 == 0 else "assistant"
        text = rng.choice([t.text for t in pool if (t.role == "user") == (role == "user")] or ["x"])
        message: dict[str, Any] = {"role": "user", "content": text}
        if role == "assistant":
            message = _assistant([{"type": "text", "text": text}], sid, 10_000 + n)
        line = {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": "",
            "sessionId": sid,
            "type": role,
            "message": message,
            "uuid": _uuid(sid, "add", n),
            "timestamp": _stamp(_EPOCH),
        }
        with open(target.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        old = target.chunks
        started = time.perf_counter()
        target = target.grown()
        took.append(1000 * (time.perf_counter() - started))
        pairs = zip(old, target.chunks, strict=False)
        changed = next((i for i, (a, b) in enumerate(pairs) if a != b), len(old))
        started = time.perf_counter()
        peer.replace_from(changed, [c.text for c in target.chunks[changed:]])
        fts5_took.append(1000 * (time.perf_counter() - started))
    peer.close()
    again = IndexedFile.read(target.path)
    return took, fts5_took, again.chunks == target.chunks and again.turns == target.turns


# ---------------------------------------------------------------------------- the daemon


def daemon_locomo(locomo_dir: Path, quick: bool) -> dict[str, Any]:
    """LoCoMo asked of a real daemon with `sources=["chat"]` (turn ids mapped back from each
    hit's `path` and `lines`); {"error": why} when the daemon cannot answer so."""
    from bench._daemon import running_daemon
    from memd_client import Client
    from memd_client.errors import MemdError

    paths = sorted(locomo_dir.glob("*.json"))[: QUICK_LOCOMO if quick else None]
    rows: list[dict[str, float]] = []
    found_hits = 0
    with tempfile.TemporaryDirectory(prefix="memd-chat-") as temp:
        config = Path(temp) / "claude"
        before = os.environ.get("CLAUDE_CONFIG_DIR")
        os.environ["CLAUDE_CONFIG_DIR"] = str(config)
        try:
            with running_daemon(private_state=True) as (socket_path, root):
                for path in paths:
                    conversation = locomo_conversation(
                        path, QUICK_LOCOMO_QUESTIONS if quick else None
                    )
                    workspace = root / conversation.name
                    workspace.mkdir()
                    written = write_sessions(config, workspace, conversation.sessions)
                    ids = turn_ids(written, [IndexedFile.read(p) for p in written])
                    ids = {os.path.realpath(path): found for path, found in ids.items()}
                    with Client(socket_path, workspace=workspace, timeout=120) as client:
                        for question in conversation.questions:
                            hits = client.query(question.text, limit=TOP, sources=["chat"]).results
                            chat = [h for h in hits if h.source == "chat"]
                            found_hits += len(chat)
                            ranked = [
                                (os.path.realpath(h.path), _span(h.lines))
                                for h in chat
                                if os.path.realpath(h.path) in ids
                            ]
                            rows.append(score(ranked, question, ids))
        except (MemdError, OSError, ValueError) as error:
            return {"error": str(error)}
        finally:
            if before is None:
                os.environ.pop("CLAUDE_CONFIG_DIR", None)
            else:
                os.environ["CLAUDE_CONFIG_DIR"] = before
    if not found_hits:
        return {"error": "the daemon returned no chat hit (a tree without the chat index?)"}
    return means(rows)


def _span(lines: str) -> ChatChunk:
    first, _, last = lines.partition("-")
    return ChatChunk(int(first), int(last or first), "", "", ())


# ---------------------------------------------------------------------------- report


def run(
    lme_dir: Path | None,
    locomo_dir: Path | None,
    *,
    quick: bool = False,
    daemon: bool = False,
    output: Path | None = None,
) -> dict[str, Any]:
    """Measure retrieval on both datasets and the month's cost; print and save the report.

    Returns:
        "retrieval" (per dataset: "memd", "fts5", "memd_short", "fts5_short" as `means`, and
        "chunks", "dropped_turns"), "cost" (see `cost`), "daemon" (with `daemon`) and
        "targets" (each {"met", "text"}).
    """
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memd-chat-") as temp:
        root = Path(temp)
        found = retrieval(lme_dir, locomo_dir, root, quick)
        spent = cost(_pool(lme_dir, locomo_dir), root, QUICK_MONTH if quick else MONTH)
    report: dict[str, Any] = {
        "benchmark": "chat_source",
        "commit": commit(),
        "quick": quick,
        "retrieval": found,
        "cost": spent,
    }
    if daemon and locomo_dir is not None:
        report["daemon"] = daemon_locomo(locomo_dir, quick)
    report["targets"] = targets(found, spent)
    report["seconds"] = time.perf_counter() - began
    _print(report)
    save(report, output)
    return report


def targets(found: Mapping[str, Any], spent: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The verdicts: per dataset, turn and session R@5 and short-evidence turn R@5 at least
    FTS5's; the month within `COLD_TARGET_S`, an append within `APPEND_TARGET_MS`."""
    judged: dict[str, dict[str, Any]] = {}
    for name, figures in found.items():
        memd, fts5 = figures["memd"], figures["fts5"]
        short_memd, short_fts5 = figures["memd_short"], figures["fts5_short"]
        for label, metric in (("turn", "turn_r@5"), ("session", "session_r@5")):
            met = memd[metric] >= fts5[metric]
            judged[f"{name}: chat {label} recall@5 >= FTS5's"] = {
                "met": met,
                "text": f"memd {memd[metric]:.3f}, FTS5 {fts5[metric]:.3f}: "
                + ("met" if met else "NOT met"),
            }
        met = short_memd["turn_r@5"] >= short_fts5["turn_r@5"]
        judged[f"{name}: long turns do not crowd out short ones"] = {
            "met": met,
            "text": (
                f"turn R@5 on the {short_memd['n_turn_r@5']:.0f} questions whose evidence turns "
                f"are all shorter than the median turn: memd {short_memd['turn_r@5']:.3f} "
                f"(on all: {memd['turn_r@5']:.3f}), FTS5 {short_fts5['turn_r@5']:.3f}: "
                + ("met" if met else "NOT met")
            ),
        }
    met = spent["cold_s"] <= COLD_TARGET_S
    judged["a month of sessions indexed cold"] = {
        "met": met,
        "text": (
            f"{spent['files']} files, {spent['bytes'] / 2**20:.1f} MiB, {spent['chunks']} "
            f"chunks in {spent['cold_s']:.2f} s (target <= {COLD_TARGET_S} s; FTS5's insert "
            f"of the same chunks {spent['fts5_build_s']:.2f} s), peak {spent['peak_mib']:.1f} MiB: "
            + ("met" if met else "NOT met")
        ),
    }
    ratio = spent["cold_s"] / max(spent["fts5_build_s"], 1e-9)
    met = ratio <= COLD_X_FTS5
    judged["a month indexed cold, beside FTS5"] = {
        "met": met,
        "text": (
            f"{ratio:.1f}x FTS5's insert of the same chunks (target <= {COLD_X_FTS5:g}x, "
            "issue 35's rule for a cold index); of memd's time: "
            + ", ".join(f"{k} {v:.2f} s" for k, v in spent["stages_s"].items())
            + ": "
            + ("met" if met else "NOT met")
        ),
    }
    met = spent["append_p50_ms"] <= APPEND_TARGET_MS and spent["append_matches_full_read"]
    judged["an appended turn indexed"] = {
        "met": met,
        "text": (
            f"p50 {spent['append_p50_ms']:.2f} ms, max {spent['append_max_ms']:.2f} ms (target "
            f"p50 <= {APPEND_TARGET_MS} ms; FTS5's insert {spent['fts5_append_p50_ms']:.2f} ms); "
            f"same as a full re-read: {spent['append_matches_full_read']}: "
            + ("met" if met else "NOT met")
        ),
    }
    return judged


def markdown_table(found: Mapping[str, Any]) -> str:
    """dataset | method | questions | turn R@5 | turn R@10 | session R@5 | session R@10 | MRR."""
    lines = [
        "| dataset | method | questions (turn/session) | turn R@5 | turn R@10 | session R@5 "
        "| session R@10 | MRR |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "memd": "memd chat source",
        "fts5": "SQLite FTS5",
        "memd_short": "memd, short evidence",
        "fts5_short": "FTS5, short evidence",
        "memd_turns": "memd, one entry a whole turn (diagnosis)",
        "memd_turns_short": "memd, whole turns, short evidence",
    }
    for name, figures in found.items():
        for key, label in labels.items():
            row = figures[key]
            cells = " | ".join(f"{row[m]:.3f}" for m in METRICS)
            asked = f"{row['n_turn_r@5']:.0f}/{row['n_session_r@5']:.0f}"
            lines.append(f"| {name} | {label} | {asked} | {cells} |")
    return "\n".join(lines)


def _print(report: Mapping[str, Any]) -> None:
    print("Chat source: past sessions as Claude Code transcripts, memd beside FTS5 (same chunks)\n")
    print(markdown_table(report["retrieval"]))
    for name, figures in report["retrieval"].items():
        print(
            f"{name}: {figures['chunks']} chunks; "
            f"turns the reader left out: {figures['dropped_turns']}; BM25 b "
            f"{figures['b']['min']:.2f}-{figures['b']['max']:.2f} (from the chunks' length spread)"
        )
    spent = report["cost"]
    print(
        f"\nA month: {spent['files']} session files, {spent['bytes'] / 2**20:.1f} MiB "
        f"({spent['prose_bytes'] / 2**20:.1f} MiB of turns' words), "
        f"{spent['turns']} turns, {spent['chunks']} chunks; cold runs "
        + ", ".join(f"{s:.2f}" for s in spent["cold_runs_s"])
        + " s"
    )
    if "daemon" in report:
        row = report["daemon"]
        if "error" in row:
            print(f"LoCoMo through memd serve, sources chat: not measured: {row['error']}")
        else:
            cells = " | ".join(f"{row[m]:.3f}" for m in METRICS)
            asked = f"{row['n_turn_r@5']:.0f}/{row['n_session_r@5']:.0f}"
            print(f"| locomo | memd serve, sources chat | {asked} | {cells} |")
    print_verdicts(report["targets"])


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark from the command line (`--quick`: a few conversations, a small month)."""
    parser = argparse.ArgumentParser(prog="python -m bench.chat_source", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few conversations, a small month")
    parser.add_argument("--daemon", action="store_true", help="also ask a real memd serve")
    args = parser.parse_args(argv)
    lme, loc = longmemeval.data_dir(), locomo.data_dir()
    lme_dir = lme if lme.is_dir() and any(lme.glob("*.json.gz")) else None
    locomo_dir = loc if loc.is_dir() and any(loc.glob("*.json")) else None
    if lme_dir is None and locomo_dir is None:
        print("Neither LongMemEval nor LoCoMo data found; set MEMD_LONGMEMEVAL_DIR. Skipped.")
        return
    suffix = "-quick" if args.quick else ""
    run(
        lme_dir,
        locomo_dir,
        quick=args.quick,
        daemon=args.daemon,
        output=RESULTS_DIR / f"chat_source{suffix}.json",
    )


if __name__ == "__main__":
    main()
