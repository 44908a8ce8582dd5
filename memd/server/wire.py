"""Conversions from the core's values to the wire's Structs, shared by handlers and feeds."""

from __future__ import annotations

from memd.core.categories import Category
from memd.core.mdformat import Entry
from memd_client import protocol as p


def entry_info(category: Category, entry: Entry) -> p.EntryInfo:
    """Return the wire form of `entry`."""
    return p.EntryInfo(
        category=category.value,
        file=category.file,
        line=entry.line,
        slug=entry.slug,
        content=entry.content,
    )
