"""The memory block injected into an agent's prompt: a budget, two layers, compact Markdown.

Rules:
- Layer A ("always"): every Security entry, then every Instruction entry, in file order. They
  are the rules an agent must honour whatever the prompt says.
- Layer B ("relevant"): entries of the other categories ranked against the prompt (its text
  plus the words of the file path it names), best first, keeping those scoring at least
  MIN_RELATIVE_SCORE of the best hit.
- The block never exceeds the budget: layer A goes in first, in order, for as long as it fits
  (what does not fit is counted in `omitted`); layer B fills what is left, skipping any entry
  too long for the space that remains. No block at all when nothing fits.
- Tokens are estimated as UTF-8 bytes / 3, rounded up: deliberately pessimistic (tokenizers
  average about 4 bytes per token on English prose, fewer on code and identifiers), so the real
  size stays under the budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from memd.core.categories import Category
from memd.core.mdformat import Entry

ALWAYS = (Category.SECURITY, Category.INSTRUCTION)
"""Layer A's categories, in the order they go into the block."""
BYTES_PER_TOKEN = 3
MIN_RELATIVE_SCORE = 0.2
RELEVANT_LIMIT = 50
"""At most this many ranked entries are considered for layer B."""
TITLE = "## Project memory (memd)"
ALWAYS_HEADING = "Always follow:"
RELEVANT_HEADING = "Relevant to this prompt:"

Layer = Literal["always", "relevant"]


@dataclass(frozen=True)
class Placed:
    """An entry that made it into the block."""

    layer: Layer
    category: Category
    entry: Entry
    score: float | None = None


@dataclass(frozen=True)
class Block:
    """The block's Markdown (empty when nothing fits), its estimated size and its entries."""

    markdown: str
    tokens: int
    entries: tuple[Placed, ...]
    omitted: int


def estimate_tokens(text: str) -> int:
    """Return the pessimistic token estimate for `text` (see the module docstring)."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def path_words(path: str | None) -> str:
    """Return the words of a file path, for ranking: "src/memd/server/actor.py" gives
    "src memd server actor py"."""
    if not path:
        return ""
    return " ".join(part for part in re.split(r"[\\/._\-\s]+", path) if part)


def entry_line(category: Category, entry: Entry) -> str:
    """One bullet: `- [Category] [slug] content` (the slug only when the entry has one)."""
    slug = f" [{entry.slug}]" if entry.slug else ""
    return f"- [{category.value}]{slug} {entry.content}"


def build(
    always: Iterable[tuple[Category, Entry]],
    relevant: Sequence[tuple[Category, Entry, float]],
    budget_tokens: int,
) -> Block:
    """Pack layer A (`always`, in order) then layer B (`relevant`, best first) into the budget."""
    lines = [TITLE]
    placed: list[Placed] = []
    omitted = 0

    def fits(*extra: str) -> bool:
        return estimate_tokens("\n".join([*lines, *extra]) + "\n") <= budget_tokens

    for category, entry in always:
        line = entry_line(category, entry)
        heading = () if any(p.layer == "always" for p in placed) else (ALWAYS_HEADING,)
        if omitted == 0 and fits(*heading, line):
            lines.extend([*heading, line])
            placed.append(Placed("always", category, entry))
        else:
            omitted += 1
    top = max((score for _, _, score in relevant), default=0.0)
    seen = {(p.category, p.entry.line) for p in placed}
    for category, entry, score in relevant:
        if score < top * MIN_RELATIVE_SCORE or (category, entry.line) in seen:
            continue
        line = entry_line(category, entry)
        heading = () if any(p.layer == "relevant" for p in placed) else (RELEVANT_HEADING,)
        if fits(*heading, line):
            lines.extend([*heading, line])
            placed.append(Placed("relevant", category, entry, score))
    if not placed:
        return Block(markdown="", tokens=0, entries=(), omitted=omitted)
    markdown = "\n".join(lines) + "\n"
    return Block(
        markdown=markdown,
        tokens=estimate_tokens(markdown),
        entries=tuple(placed),
        omitted=omitted,
    )
