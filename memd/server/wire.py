"""Conversions from the core's values to the wire's Structs, shared by handlers and feeds."""

from __future__ import annotations

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.format.tags import tags_of
from memd_client import protocol as p


def entry_info(category: Category, entry: Entry, tags: frozenset[str] | None = None) -> p.EntryInfo:
    """Return the wire form of `entry`; `tags` are its tags when already known (a snapshot's
    `tags`), else they are read from its content."""
    if tags is None:
        tags = tags_of(entry.content)
    return p.EntryInfo(
        category=category.value,
        file=category.file,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
        tags=sorted(tags) if tags else [],
    )
