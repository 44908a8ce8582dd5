"""`Snapshot`: one immutable version of a category file, as readers see it.

An actor replaces its snapshot (never mutates it) after each commit and each re-read, so a
reader holding one sees a consistent file. The search index and the tags are built on first use
(the first load's index is built, or taken from the kept ones, in a worker thread); a new
snapshot takes over only the last built search index, so unchanged entries are not indexed
again.
"""

from __future__ import annotations

import functools

from memd.core.format.mdformat import Document, Entry
from memd.core.format.tags import tags_of
from memd.core.search import ranking
from memd.core.writes.catalog import Catalog
from memd_client.errors import RpcError

__all__ = ["Snapshot"]


class Snapshot:
    """One immutable version of a category file as the actor last read or wrote it.

    `catalog` is None when the file does not exist, or when it could not be read (`error` is
    then set); the entries are then empty. `conflict` is set while the file holds git conflict
    markers: `catalog` is then its last good version (both sides' entries if there was none),
    and writes are refused with that error.
    """

    def __init__(
        self,
        catalog: Catalog | None,
        loaded_at: float,
        *,
        error: RpcError | None = None,
        conflict: RpcError | None = None,
        previous: Snapshot | None = None,
        index: ranking.SearchIndex | None = None,
    ) -> None:
        """`index`, when given, is the entries' index, already built (in a worker thread)."""
        self.catalog = catalog
        self.loaded_at = loaded_at
        self.error = error
        self.conflict = conflict
        self.entries: tuple[Entry, ...] = catalog.entries if catalog is not None else ()
        if index is not None:
            self.__dict__["index"] = index
        # Only an index is handed on (the last one built), never the older snapshots. The
        # index moves: the previous snapshot no longer has it (it would build its own).
        self._previous_index: ranking.SearchIndex | None = None
        if previous is not None:
            built = previous.__dict__.pop("index", None)
            self._previous_index = built if built is not None else previous._previous_index
            previous._previous_index = None

    @property
    def doc(self) -> Document | None:
        """The file as lines, or None if it does not exist (or could not be read)."""
        return None if self.catalog is None else self.catalog.doc

    @functools.cached_property
    def index(self) -> ranking.SearchIndex:
        """The search index, built on first use by updating the previous version's index when
        there is one (so only changed entries are indexed again)."""
        previous, self._previous_index = self._previous_index, None
        return ranking.build_index(self.entries, previous)

    @property
    def has_index(self) -> bool:
        """True when this snapshot has its index built, or one to update."""
        return "index" in self.__dict__ or self._previous_index is not None

    @functools.cached_property
    def tags(self) -> dict[int, frozenset[str]]:
        """The inline #tags of each entry that has any, by line number; built on first use."""
        found = {entry.line: tags_of(entry.content) for entry in self.entries}
        return {line: tags for line, tags in found.items() if tags}
