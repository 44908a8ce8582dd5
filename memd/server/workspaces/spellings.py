"""`SpellingCache`: which loaded workspace each spelling of a path (as clients send it) names.

Rules:
- It only saves resolving a path (`realpath`, a worker-thread hop) again; a miss costs that hop
  and nothing else, so the cache may forget anything at any time.
- Bounded in entries (MAX_SPELLINGS) and in bytes (MAX_BYTES, counting each spelling's UTF-8
  length plus ENTRY_OVERHEAD); the least recently used spellings go first. A spelling longer
  than MAX_SPELLING_BYTES (a path can be no longer, PATH_MAX) is never kept.
- `forget(target)` drops every spelling of a target (a workspace that unloads), so the cache
  never keeps an unloaded workspace alive.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_SPELLINGS = 4096
MAX_BYTES = 1 << 20
MAX_SPELLING_BYTES = 4096
ENTRY_OVERHEAD = 200
"""What one entry costs beyond its spelling's bytes (the dict slots and the str header), about."""


class SpellingCache(Generic[T]):
    """A least-recently-used map from path spellings to targets, bounded in count and bytes."""

    def __init__(
        self,
        *,
        max_entries: int = MAX_SPELLINGS,
        max_bytes: int = MAX_BYTES,
        max_spelling_bytes: int = MAX_SPELLING_BYTES,
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_spelling_bytes = max_spelling_bytes
        self._entries: OrderedDict[str, tuple[T, int]] = OrderedDict()
        self._by_target: dict[int, set[str]] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, spelling: str) -> T | None:
        """Return the target of `spelling` (and mark it as just used), or None."""
        found = self._entries.get(spelling)
        if found is None:
            return None
        self._entries.move_to_end(spelling)
        return found[0]

    def put(self, spelling: str, target: T) -> None:
        """Remember that `spelling` names `target`, forgetting the least recently used
        spellings as needed to stay within the bounds."""
        size = len(spelling.encode("utf-8", "surrogatepass")) + ENTRY_OVERHEAD
        if size - ENTRY_OVERHEAD > self.max_spelling_bytes or size > self.max_bytes:
            return
        self._drop(spelling)
        self._entries[spelling] = (target, size)
        self._by_target.setdefault(id(target), set()).add(spelling)
        self.bytes += size
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def forget(self, target: T) -> None:
        """Drop every spelling of `target`."""
        for spelling in list(self._by_target.get(id(target), ())):
            self._drop(spelling)

    def _drop(self, spelling: str) -> None:
        found = self._entries.pop(spelling, None)
        if found is None:
            return
        target, size = found
        self.bytes -= size
        spellings = self._by_target[id(target)]
        spellings.discard(spelling)
        if not spellings:
            del self._by_target[id(target)]
