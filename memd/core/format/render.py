"""How a memory is written for people and agents outside the Markdown files: one shared style
for the CLI, the MCP tools and the prompt block."""

from __future__ import annotations

import itertools
from collections.abc import Iterable


def entry_label(category: str, slug: str | None) -> str:
    """Return `[Category] [slug]`, or `[Category]` for an entry without a slug."""
    return f"[{category}] [{slug}]" if slug else f"[{category}]"


def entry_text(category: str, slug: str | None, content: str) -> str:
    """Return `[Category] [slug] content`."""
    return f"{entry_label(category, slug)} {content}"


def folded_entries(entries: Iterable[tuple[str | None, str]], whys: Iterable[str]) -> str:
    """Return the entries a cleanup merge folds in, as (slug, content) pairs, with why each could
    be: `[slug] (the same words), "content" (a shorter form of it)` (no why when none was
    given)."""
    labels = (f"[{slug}]" if slug else f'"{content}"' for slug, content in entries)
    return ", ".join(
        label + (f" ({why})" if why else "")
        for label, why in itertools.zip_longest(labels, whys, fillvalue="")
        if label
    )
