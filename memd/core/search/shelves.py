"""Where searched entries come from beside a workspace's own category files, and how each place
ranks: the key a search gives each index (`memd.core.search.ranking`).

Rules:
- A workspace's category file is keyed by its `Category`. A `Shelf` is any other place: a
  category file of the user-wide scope (`scope` "global"), a read-only source file of the
  workspace (`scope` "file", by its path relative to the workspace), or a coding agent's past
  session in the workspace (`scope` "chat", by its transcript's absolute path).
- Priority (a score factor, `priority`): a category's `priority` (Security and Instruction
  slightly above the rest), the same for the user-wide scope's category files; a source file's
  chunks `FILE_PRIORITY`, just under 1, so a memory ranks above an equal chunk; a past
  session's `CHAT_PRIORITY`, under that: what was said ranks below what was written down.
- Ties (`order`): the workspace's categories first (by their `position`: the built-ins in
  `CATEGORIES` order, then custom ones), then the user-wide
  scope's (so a project entry wins a tie), then source files by path, then past sessions by
  path.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from memd.core.format.categories import Category

FILE_PRIORITY = 0.99
"""The score factor of a source file's chunks: a memory ranks above an equal chunk."""
CHAT_PRIORITY = 0.98
"""The score factor of a past session's chunks: below a source's."""


class Shelf(NamedTuple):
    """A place searched beside the workspace's category files (see the module rules)."""

    scope: Literal["global", "file", "chat"]
    path: str
    """The source file's path relative to the workspace; the category's file name for the
    user-wide scope; the transcript's absolute path for a past session."""
    category: Category | None = None
    """The user-wide scope's category (None for a source file)."""


Key = Category | Shelf
"""What a search keys each index by."""


def origin(key: Key) -> Literal["memory", "global", "file", "chat"]:
    """Where `key`'s entries live: the workspace's memory, the user-wide one, a source, or a
    past session."""
    return "memory" if isinstance(key, Category) else key.scope


def priority(key: Key) -> float:
    """The score factor of `key`'s entries."""
    if isinstance(key, Category):
        return key.priority
    if key.category is not None:
        return key.category.priority
    return CHAT_PRIORITY if key.scope == "chat" else FILE_PRIORITY


def order(key: Key) -> tuple[int, int, str]:
    """Where `key`'s entries go among equal scores (smaller first)."""
    if isinstance(key, Category):
        return (0, key.position, "")
    if key.category is not None:
        return (1, key.category.position, "")
    return (3 if key.scope == "chat" else 2, 0, key.path)
