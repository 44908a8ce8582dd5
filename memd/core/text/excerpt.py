"""A long text shown where space is short (a prompt's block, an agent's query results)."""

from __future__ import annotations

EXCERPT_CHARS = 600
"""The most of a text an excerpt shows."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` on one line, its lines joined by " / " and its spaces collapsed, cut at a word end
    within `limit` characters and ended with "…" when cut (a past session's chunk: the question
    first, then as much of the answer as fits)."""
    flat = " / ".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    return flat[: cut if cut > limit // 2 else limit - 1].rstrip(" /") + "…"
