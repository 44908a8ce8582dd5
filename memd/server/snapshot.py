"""`Snapshot`: one immutable version of a category file, as readers see it.

An actor replaces its snapshot (never mutates it) after each commit and each re-read, so a
reader holding one sees a consistent file. The search index and the tags are built on first use;
a new snapshot hands on only the last built search index, so unchanged entries are not
tokenised again.
"""

from __future__ import annotations

import functools

from memd.core import ranking, tags as tagging
from memd.core.catalog import Catalog
from memd.core.mdformat import Document, Entry
from memd_client.errors import RpcError

__all__ = ["Snapshot"]


class Snapshot:
    """One immutable version of a category file as the actor last read or wrote it.

    `catalog` is None when the file does not exist, or when it could not be read (`error` is
    then set); the entries are then empty.
    """

    def __init__(
        self,
        catalog: Catalog | None,
        loaded_at: float,
        *,
        error: RpcError | None = None,
        previous: Snapshot | None = None,
    ) -> None:
        self.catalog = catalog
        self.loaded_at = loaded_at
        self.error = error
        self.entries: tuple[Entry, ...] = catalog.entries if catalog is not None else ()
        # Only an index is handed on (the last one built), never the older snapshots.
        self._previous_index: ranking.CategoryIndex | None = None
        if previous is not None:
            built = previous.__dict__.get("index")
            self._previous_index = built if built is not None else previous._previous_index

    @property
    def doc(self) -> Document | None:
        """The file as lines, or None if it does not exist (or could not be read)."""
        return None if self.catalog is None else self.catalog.doc

    @functools.cached_property
    def index(self) -> ranking.CategoryIndex:
        """The search index, built on first use, from the previous version's index when that
        one was built (so only changed entries are tokenised again)."""
        previous, self._previous_index = self._previous_index, None
        return ranking.build_index(self.entries, previous)

    @functools.cached_property
    def tags(self) -> dict[int, frozenset[str]]:
        """The inline #tags of each entry that has any, by line number; built on first use."""
        found = {entry.line: tagging.tags_of(entry.content) for entry in self.entries}
        return {line: tags for line, tags in found.items() if tags}
