"""Layer C of the prompt block: the procedures that match the task (issue 33).

Rules:
- Candidates are the procedures ranked against the task (the caller's search: its text and the
  words of the file it names, none scoped to other files). Those scoring under `floor` of the
  best are left out, as layer B leaves out its weak matches; the rest are ordered by their
  outcomes (`memd.core.search.outcomes.rank_procedures`: proven first, then by score moved by
  the record) and the first PROCEDURES_LIMIT are layer C (`choose`).
- A procedure goes into the block as one bullet under HEADING: its slug, its name, how often it
  worked when reported ("worked 2 of 3 times"), a stale note when the citation check has one,
  then its steps numbered one a line (`procedure_text`). A line not in the procedure shape
  (`memd.core.format.procedures`) is shown whole on the bullet.
- Packing (`pack`) places them in order while the budget allows; the ones that do not fit are
  named by slug in a closing line (`omitted_line`), and when that line does not fit either, the
  last placed procedure makes room for it (a procedure is never dropped silently while one of
  them can be shown).
- Every text shown goes through `controls.visible` (as in layer B).
- `memd why` says why a procedure was not given (`why_not`): left out for space, offered only
  for a task's text (a file alone gets none), or not among the best for the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from memd.core.format.categories import Category
from memd.core.format.controls import visible
from memd.core.format.mdformat import Entry
from memd.core.format.procedures import read_procedure
from memd.core.search.outcomes import Record, rank_procedures

PROCEDURES_LIMIT = 3
"""At most this many procedures go into a block."""
HEADING = "Procedures for this task (proven first):"


class ProcedureHit(NamedTuple):
    """A procedure chosen for layer C: its category and entry, its score (moved by its record)
    and its record."""

    category: Category
    entry: Entry
    score: float
    record: Record


def choose(
    ranked: Sequence[tuple[Category, Entry, float]],
    record_of: Callable[[Category, Entry], Record],
    *,
    floor: float,
    limit: int = PROCEDURES_LIMIT,
) -> list[ProcedureHit]:
    """Layer C's procedures from `ranked` (best first by words), see the module rules; `floor`
    is the fraction of the best score a candidate needs."""
    best = max((score for _, _, score in ranked), default=0.0)
    kept = [hit for hit in ranked if hit[2] > 0 and hit[2] >= best * floor]
    ordered = rank_procedures(kept, lambda hit: hit[2], lambda hit: record_of(hit[0], hit[1]))
    return [ProcedureHit(c, e, score, record_of(c, e)) for (c, e, _), score in ordered[:limit]]


def record_note(record: Record) -> str:
    """How often a procedure worked, as the block says it ("" with no reports)."""
    reports = record.successes + record.failures
    if not reports:
        return ""
    noun = "time" if reports == 1 else "times"
    return f"worked {record.successes} of {reports} {noun}"


def procedure_text(hit: ProcedureHit, note: str = "") -> str:
    """The block's bullet for `hit` (see the module rules), `note` its stale note."""
    read = read_procedure(hit.entry.content)
    slug = f"[{hit.entry.slug}] " if hit.entry.slug else ""
    remarks = [part for part in (record_note(hit.record), f"stale: {note}" if note else "") if part]
    said = f" ({'; '.join(remarks)})" if remarks else ""
    if read.name is None:
        return f"- {visible(slug + hit.entry.content + said)}"
    steps = [f"  {number}. {visible(step)}" for number, step in enumerate(read.steps, start=1)]
    return "\n".join([f"- {visible(slug + read.name + said)}:", *steps])


def omitted_line(left_out: Sequence[ProcedureHit]) -> str:
    """The closing line naming the procedures left out for space."""
    names = ", ".join(f"[{hit.entry.slug}]" if hit.entry.slug else "one" for hit in left_out)
    noun = "procedure" if len(left_out) == 1 else "procedures"
    return visible(f"- Not shown for space: {noun} {names}; `memd get SLUG` shows one.")


class Packed(NamedTuple):
    """Layer C as packed: its lines (heading first; none when nothing is shown), the
    procedures placed and those left out for space."""

    lines: list[str]
    placed: list[ProcedureHit]
    left_out: list[ProcedureHit]


def pack(
    hits: Sequence[ProcedureHit],
    fits: Callable[[Sequence[str]], bool],
    note_of: Callable[[Category, Entry], str],
) -> Packed:
    """Place `hits` in order while `fits` (the budget, given layer C's whole lines) allows;
    name the rest (see the module rules)."""
    texts = [procedure_text(hit, note_of(hit.category, hit.entry)) for hit in hits]
    placed: list[int] = []
    for number, text in enumerate(texts):
        if fits([HEADING, *(texts[n] for n in placed), text]):
            placed.append(number)
    while True:
        left_out = [hits[n] for n in range(len(hits)) if n not in placed]
        lines = [HEADING, *(texts[n] for n in placed)] if placed or left_out else []
        if left_out:
            lines.append(omitted_line(left_out))
        if not left_out or fits(lines) or not placed:
            break
        placed.pop()
    if left_out and not fits(lines):
        lines = [HEADING, *(texts[n] for n in placed)] if placed else []
    return Packed(lines, [hits[n] for n in placed], left_out)


def why_not(*, left_out: bool, with_text: bool) -> tuple[Literal["score", "budget"], str]:
    """Why `context` did not give a procedure (not for a scope: that is the scope's reason), as
    `memd why` says it."""
    if left_out:
        return "budget", "a matching procedure, left out for space (the block names it)"
    if not with_text:
        return "score", "a procedure: offered for a task's text, never for a file alone"
    return "score", f"a procedure, not among the {PROCEDURES_LIMIT} that match the text best"
