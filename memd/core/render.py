"""How a memory is written for people and agents outside the Markdown files: one shared style
for the CLI, the MCP tools and the prompt block."""

from __future__ import annotations


def entry_label(category: str, slug: str | None) -> str:
    """Return `[Category] [slug]`, or `[Category]` for an entry without a slug."""
    return f"[{category}] [{slug}]" if slug else f"[{category}]"


def entry_text(category: str, slug: str | None, content: str) -> str:
    """Return `[Category] [slug] content`."""
    return f"{entry_label(category, slug)} {content}"
