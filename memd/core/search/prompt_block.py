"""The memory block injected into an agent's prompt: a budget, two layers, compact Markdown.

Rules:
- Layer A ("always"): every Security entry, then every Instruction entry, in file order, then
  the user-wide memory's (`user_wide`: rules for every project). They are the rules an agent
  must honour whatever the prompt says.
- Layer B ("relevant"): entries of the other categories ranked against the prompt (its first
  MAX_QUERY_CHARS characters plus the words of the file path it names), best first, keeping
  those scoring at least MIN_RELATIVE_SCORE of the best hit. Entries scoped to the file the
  call names (`scoped`, `memd.core.search.file_scope`) go first in it, whatever their score.
- Layer C ("procedures"): up to three procedures that match the prompt, proven ones first, each
  with its steps and how often it worked (`memd.core.search.procedure_layer`). They are never in
  layer A or B (the caller keeps them out of B's ranking), so none is given twice.
- Sources ("source"): chunks of the workspace's read-only sources ranked against the prompt,
  keeping those scoring at least MIN_RELATIVE_SCORE of the best chunk, each with its file and
  lines. The caller leaves out the files the calling agent loads on its own.
- Past sessions ("chat", only when memd's config `chat` is on): at most `CHAT_LIMIT` chunks of
  the coding agents' past sessions in the workspace, each with its transcript, turns, session
  and time, and only those that score well (`chat_floor`): at least the best layer-B entry's
  score (what was said comes in only when it matches the prompt at least as well as the best
  memory), and never under `CHAT_MIN_SCORE` of the ideal match (so, with no memory related,
  only a chunk holding most of the prompt's weight comes in). They are packed last.
- The block never exceeds the budget: layer A goes in first, in order, for as long as it fits
  (what does not fit is counted in `omitted`); then layer B's first RELEVANT_MINIMUM entries,
  then layer C (the procedures that do not fit are named in its closing line), then the rest of
  layer B, then the sources, then past sessions, each skipping any line too long for the space
  that remains. The block shows them in layer order: A, B, C, sources, past sessions. No block
  at all when nothing fits.
- Rules never go missing silently: when layer-A entries are left out, or a Security or
  Instruction file cannot be read, layer A ends with a line saying so and where to read them
  (room for it is kept first).
- An entry with a note (`note_of`: the caller's, e.g. "cites src/old.ts, which no longer
  exists") is marked with it, `- [Quirk] [slug] text (stale: <note>)`, so an agent never takes
  it as current: layer A keeps every rule, marked; layer B puts noted entries after the others
  (their order kept). Only the workspace's own entries are noted, never the user-wide ones.
- A person may read the block (a hook's context, `memd context`), so any character of an entry
  that could hide text from them is shown as an escape (`controls.visible`): the agent and the
  person read the same text.
- Tokens are estimated as UTF-8 bytes / 3, rounded up: deliberately pessimistic (tokenizers
  average about 4 bytes per token on English prose, fewer on code and identifiers), so the real
  size stays under the budget.

Size: a little over the ~400-line guide: the layers' packing into one budget, kept together
since each layer takes what the ones before it left.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from memd.core.format.categories import Category
from memd.core.format.controls import visible
from memd.core.format.mdformat import Entry
from memd.core.format.render import entry_text
from memd.core.search import procedure_layer
from memd.core.search.outcomes import Record
from memd.core.search.procedure_layer import ProcedureHit
from memd.core.text.excerpt import excerpt


def layer_a(categories: Iterable[Category]) -> tuple[Category, ...]:
    """Layer A's categories among `categories` (those of layer `always`: Security, Instruction
    and custom ones that ask for it), in the order they go into the block: by score factor,
    then position (Security first)."""
    always = (c for c in categories if c.layer == "always")
    return tuple(sorted(always, key=lambda c: (-c.priority, c.position)))


BYTES_PER_TOKEN = 3
MIN_RELATIVE_SCORE = 0.2
RELEVANT_LIMIT = 50
"""At most this many ranked entries are considered for layer B."""
RELEVANT_MINIMUM = 3
"""Layer B's first entries, packed before layer C's procedures get their room."""
MAX_QUERY_CHARS = 4096
"""Only a long prompt's start is ranked against: its topic is there, and ranking stays fast."""
TITLE = "## Project memory (memd)"
ALWAYS_HEADING = "Always follow:"
RELEVANT_HEADING = "Relevant to this prompt:"
SOURCE_HEADING = "From the project's files:"
CHAT_HEADING = "From past sessions in this project (what was said, not rules):"
CHAT_LIMIT = 2
"""At most this many past sessions' chunks go into a block."""
CHAT_MIN_SCORE = 0.4
"""The least score of a past session's chunk in a block (of the ideal match's 1.0)."""

Layer = Literal["always", "relevant", "procedures", "source", "chat"]
Source = Literal["memory", "global"]


@dataclass(frozen=True)
class Placed:
    """An entry that made it into the block."""

    layer: Layer
    category: Category | None
    """None for a source's chunk."""
    entry: Entry
    score: float | None = None
    path: str = ""
    """A source chunk's file, relative to the workspace."""
    lines: str = ""
    """A source chunk's lines, "a-b"."""
    source: Source = "memory"
    """Where an entry lives: the workspace's memory or the user-wide one."""
    note: str = ""
    """What the block said is wrong with it ("" for none: see `note_of` in `build`)."""
    record: Record | None = None
    """A procedure's outcome record (layer C only)."""
    session: str = ""
    """A past session's id (layer "chat" only)."""
    at: str = ""
    """When a past session's chunk was said (layer "chat" only)."""


class SourceChunk(NamedTuple):
    """A ranked chunk of a read-only source: its file, its lines, its text and its score."""

    path: str
    start: int
    end: int
    text: str
    score: float


class ChatHit(NamedTuple):
    """A ranked chunk of a past session: its transcript, its turns, its text, its score, the
    session's id and when it was said."""

    path: str
    first: int
    last: int
    text: str
    score: float
    session: str
    at: str


def chat_floor(best_memory: float | None) -> float:
    """The least score of a past session's chunk in a block, given layer B's best entry's
    score (None: no entry related to the prompt); see the module rules."""
    return max(CHAT_MIN_SCORE, best_memory or 0.0)


@dataclass(frozen=True)
class Block:
    """The block's Markdown (empty when nothing fits), its estimated size and its entries."""

    markdown: str
    tokens: int
    entries: tuple[Placed, ...]
    omitted: int
    omitted_procedures: tuple[Placed, ...] = ()
    """Layer C's procedures left out for space (named in its closing line)."""


def estimate_tokens(text: str) -> int:
    """Return the pessimistic token estimate for `text` (see the module docstring)."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def path_words(path: str | None) -> str:
    """Return the words of a file path, for ranking: "src/memd/server/actor.py" gives
    "src memd server actor py"."""
    if not path:
        return ""
    return " ".join(part for part in re.split(r"[\\/._\-\s]+", path) if part)


def entry_line(category: Category, entry: Entry, note: str = "") -> str:
    """One bullet: `- [Category] [slug] content` (the slug only when the entry has one), then
    `(stale: note)` when there is a note, with any terminal escape or bidi control in it shown
    as an escape (`controls.visible`)."""
    text = entry_text(category.name, entry.slug, entry.content)
    if note:
        text = f"{text} (stale: {note})"
    return f"- {visible(text)}"


NoteOf = Callable[[Category, Entry], str]
"""What is wrong with one of the workspace's entries ("" for nothing)."""


def _no_note(category: Category, entry: Entry) -> str:
    return ""


def build(
    always: Iterable[tuple[Category, Entry]],
    relevant: Sequence[tuple[Category, Entry, float]],
    budget_tokens: int,
    unreadable: Sequence[Category] = (),
    sources: Sequence[SourceChunk] = (),
    user_wide: Iterable[tuple[Category, Entry]] = (),
    user_unreadable: Sequence[Category] = (),
    note_of: NoteOf = _no_note,
    scoped: Sequence[tuple[Category, Entry, float | None]] = (),
    relevant_heading: str = RELEVANT_HEADING,
    procedures: Sequence[ProcedureHit] = (),
    chats: Sequence[ChatHit] = (),
) -> Block:
    """Pack layer A (`always`, in order), layer B (`relevant`, best first, the entries
    `note_of` notes last) then layer C (`sources`, best first) into the budget; each of the
    workspace's entries with a note is marked with it.

    Layer A entries that do not fit, and layer-A files that cannot be read (`unreadable`), are
    named in a closing line of layer A ("Not shown: ..."), so an agent knows rules are missing
    and where to read them; room for that line is kept before anything else is packed.
    `relevant_heading` opens layer B (a file hook's block names the file instead of a prompt).
    `procedures` are layer C's, in order (`procedure_layer.choose`); `chats`, past sessions'
    chunks that scored well (`chat_floor`), best first.
    """
    rules: list[tuple[Category, Entry, Source]] = [(c, e, "memory") for c, e in always]
    rules += [(c, e, "global") for c, e in user_wide]
    missing: list[tuple[Category, Source]] = [(c, "memory") for c in unreadable]
    missing += [(c, "global") for c in user_unreadable]
    ranked = [(c, e, score, note_of(c, e)) for c, e, score in relevant]
    ranked.sort(key=lambda item: bool(item[3]))  # stable: current entries first, order kept
    first = [(c, e, score, note_of(c, e)) for c, e, score in scoped]
    packing = _Packing(rules, ranked, sources, note_of, first, relevant_heading, procedures, chats)
    block = _pack(packing, budget_tokens, missing, reserve=())
    if block.omitted == 0 and not missing:
        return block
    worst = notice_lines([c for c, _, where in rules if where == "memory"], unreadable)
    worst += _user_wide_notices([c for c, _, where in rules if where == "global"], user_unreadable)
    return _pack(packing, budget_tokens, missing, reserve=worst)


class _Packing(NamedTuple):
    """What `_pack` places: the rules (layer A), the ranked entries with their notes (layer B),
    the sources' chunks (layer C), and the notes of layer A's workspace entries (asked only of
    the rules that may still fit)."""

    rules: Sequence[tuple[Category, Entry, Source]]
    relevant: Sequence[tuple[Category, Entry, float, str]]
    sources: Sequence[SourceChunk]
    note_of: NoteOf
    scoped: Sequence[tuple[Category, Entry, float | None, str]] = ()
    """Layer B's first entries, whatever their score (scoped to the call's file)."""
    relevant_heading: str = RELEVANT_HEADING
    procedures: Sequence[ProcedureHit] = ()
    """Layer C's procedures, in order."""
    chats: Sequence[ChatHit] = ()
    """Past sessions' chunks, best first."""


def notice_lines(left_out: Sequence[Category], unreadable: Sequence[Category]) -> list[str]:
    """The closing lines of layer A: rules left out for space, and files that cannot be read."""
    lines = []
    if left_out:
        files = " and ".join(dict.fromkeys(f".memory/{c.file}" for c in left_out))
        count = len(left_out)
        noun = "entry" if count == 1 else "entries"
        lines.append(
            f"- Not shown for space: {count} more Security/Instruction {noun}; read {files}."
        )
    for category in unreadable:
        lines.append(
            f"- .memory/{category.file} cannot be read, so its rules are missing here; "
            "see `memd stats`."
        )
    return lines


def _user_wide_notices(left_out: Sequence[Category], unreadable: Sequence[Category]) -> list[str]:
    """The same closing lines for the user-wide memory's rules."""
    lines = []
    if left_out:
        count = len(left_out)
        noun = "entry" if count == 1 else "entries"
        lines.append(
            f"- Not shown for space: {count} more user-wide Security/Instruction {noun}; run "
            "`memd list --category Instruction` (and Security)."
        )
    for category in unreadable:
        lines.append(
            f"- Your user-wide {category.file} cannot be read, so its rules are missing here; "
            "see `memd stats --global`."
        )
    return lines


def _pack(
    packing: _Packing,
    budget_tokens: int,
    unreadable: Sequence[tuple[Category, Source]],
    *,
    reserve: Sequence[str],
) -> Block:
    rules, sources = packing.rules, packing.sources
    lines = [TITLE]
    placed: list[Placed] = []
    left_out: list[tuple[Category, Source]] = []
    later: list[str] = []  # layer C's lines, packed before the rest of layer B, shown after it

    def fits(*extra: str) -> bool:
        return estimate_tokens("\n".join([*lines, *later, *extra]) + "\n") <= budget_tokens

    for category, entry, source in rules:
        if left_out:  # once one rule is left out, every later one is (in order)
            left_out.append((category, source))
            continue
        note = packing.note_of(category, entry) if source == "memory" else ""
        line = entry_line(category, entry, note)
        heading = () if placed else (ALWAYS_HEADING,)
        if not left_out and fits(*heading, line, *reserve):
            lines.extend([*heading, line])
            placed.append(Placed("always", category, entry, source=source, note=note))
        else:
            left_out.append((category, source))
    notices = notice_lines(
        [c for c, s in left_out if s == "memory"], [c for c, s in unreadable if s == "memory"]
    ) + _user_wide_notices(
        [c for c, s in left_out if s == "global"], [c for c, s in unreadable if s == "global"]
    )
    if notices:
        notices = [*(() if placed else (ALWAYS_HEADING,)), *notices]
        if not fits(*notices):  # no room to say rules are missing: show nothing rather
            every = tuple(_placed_procedure(hit, packing.note_of) for hit in packing.procedures)
            return Block("", 0, (), omitted=len(rules), omitted_procedures=every)
        lines.extend(notices)
    _add_relevant(packing, lines, placed, fits, most=RELEVANT_MINIMUM)
    layer_c = procedure_layer.pack(packing.procedures, lambda extra: fits(*extra), packing.note_of)
    later.extend(layer_c.lines)
    _add_relevant(packing, lines, placed, fits)
    lines.extend(later)
    later.clear()
    placed += [_placed_procedure(hit, packing.note_of) for hit in layer_c.placed]
    _add_sources(sources, lines, placed, fits)
    _add_chats(packing.chats, lines, placed, fits)
    skipped = tuple(_placed_procedure(hit, packing.note_of) for hit in layer_c.left_out)
    if len(lines) == 1:
        return Block("", 0, (), omitted=len(left_out), omitted_procedures=skipped)
    markdown = "\n".join(lines) + "\n"
    return Block(
        markdown=markdown,
        tokens=estimate_tokens(markdown),
        entries=tuple(placed),
        omitted=len(left_out),
        omitted_procedures=skipped,
    )


def _placed_procedure(hit: ProcedureHit, note_of: NoteOf) -> Placed:
    """A procedure of layer C as the block's entry."""
    note = note_of(hit.category, hit.entry)
    return Placed("procedures", hit.category, hit.entry, hit.score, note=note, record=hit.record)


def _add_relevant(
    packing: _Packing,
    lines: list[str],
    placed: list[Placed],
    fits: Callable[..., bool],
    most: int | None = None,
) -> None:
    """Layer B: the entries scoped to the call's file first (whatever their score), then the
    ranked ones good enough and small enough for what is left of the budget, until layer B
    holds `most` entries (None: no such limit)."""
    top = max((score for _, _, score, _ in packing.relevant), default=0.0)
    seen = {(p.category, p.entry.line) for p in placed}
    floor = top * MIN_RELATIVE_SCORE
    candidates = [(c, e, score, note, True) for c, e, score, note in packing.scoped]
    candidates += [(c, e, score, note, False) for c, e, score, note in packing.relevant]
    count = sum(p.layer == "relevant" for p in placed)
    for category, entry, score, note, first in candidates:
        if most is not None and count >= most:
            return
        low = not first and score is not None and score < floor
        if low or (category, entry.line) in seen:
            continue
        seen.add((category, entry.line))
        line = entry_line(category, entry, note)
        heading = () if count else (packing.relevant_heading,)
        if fits(*heading, line):
            lines.extend([*heading, line])
            placed.append(Placed("relevant", category, entry, score, note=note))
            count += 1


def _add_sources(
    sources: Sequence[SourceChunk],
    lines: list[str],
    placed: list[Placed],
    fits: Callable[..., bool],
) -> None:
    """Layer C: the chunks good enough and small enough for what is left of the budget."""
    best = max((chunk.score for chunk in sources), default=0.0)
    for chunk in sources:
        if chunk.score < best * MIN_RELATIVE_SCORE:
            continue
        line = f"- {visible(chunk.text)} ({visible(chunk.path)}:{chunk.start}-{chunk.end})"
        heading = () if any(p.layer == "source" for p in placed) else (SOURCE_HEADING,)
        if fits(*heading, line):
            lines.extend([*heading, line])
            entry = Entry(line=chunk.start, slug=None, content=chunk.text)
            where = f"{chunk.start}-{chunk.end}"
            placed.append(Placed("source", None, entry, chunk.score, chunk.path, where))


def _add_chats(
    chats: Sequence[ChatHit],
    lines: list[str],
    placed: list[Placed],
    fits: Callable[..., bool],
) -> None:
    """Past sessions: up to `CHAT_LIMIT` chunks small enough for what is left of the budget."""
    for hit in chats[:CHAT_LIMIT]:
        when = f", {hit.at}" if hit.at else ""
        where = f"{hit.first}-{hit.last}"
        said = visible(excerpt(hit.text))
        line = f"- {said} (session {visible(hit.session)}, turns {where}{when})"
        heading = () if any(p.layer == "chat" for p in placed) else (CHAT_HEADING,)
        if fits(*heading, line):
            lines.extend([*heading, line])
            entry = Entry(line=hit.first, slug=None, content=hit.text)
            placed.append(
                Placed(
                    "chat", None, entry, hit.score, hit.path, where, session=hit.session, at=hit.at
                )
            )
