"""The vectors of a query's entries, one matrix a category file version, and the entries
nearest a query vector among them (numpy; the `semantic` extra).

Rules:
- Rows follow the entries: row i of a category's matrix is the i-th entry of that version of its
  file, and a query's rows are its categories' rows one after the other (`Layout`).
- A new version of a file takes the rows of unchanged texts from the previous version's matrix
  (one gather) and only the changed ones from the vector cache.
- `nearest` returns the cosines of the best `want` rows (of the allowed ones) and of the rows
  asked for by name, and counts the rows beyond those that pass a test, so a caller fuses a few
  dozen entries however many there are (`memd.core.search.fusion`).
- A row of a text the model gave no usable vector is NaN (`memd.semantic.vectors.no_vector`):
  its cosine is NaN, never among the best, and fusion ranks its entry by words. When the
  question's vector is not a finite unit vector, or no searched row has a finite cosine with
  it, the model has nothing to say about this query: `nearest` returns None, and the caller
  answers it lexically.
- An entry longer than the model's window (`memd.semantic.vectors.beyond_window`) is read by
  the model only in part: its row is NaN like a text without a vector (and `build_rows` makes it
  so whatever it is given), so fusion judges it by its words alone, never by a cosine of its
  first few hundred words (on long conversational entries that cosine put the model's vague
  neighbours above the lexical answer; figures in docs/semantic.md). A workspace of long entries
  only is then answered lexically in mode auto.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memd.core.format.mdformat import Entry
from memd.core.search.shelves import Key
from memd.semantic.vectors import beyond_window, usable


class Rows:
    """One version of a category file's vectors: `entries` (the version, compared by identity)
    and a float32 matrix, one unit row an entry, with `keys` the rows' text digests."""

    def __init__(self, entries: Sequence[Entry], keys: Sequence[bytes], matrix: Any) -> None:
        self.entries = entries
        self.keys = keys
        self.matrix = matrix

    def __len__(self) -> int:
        return len(self.entries)

    @functools.cached_property
    def position(self) -> dict[int, int]:
        """Each entry's row, by its line number."""
        return {entry.line: row for row, entry in enumerate(self.entries)}

    @functools.cached_property
    def by_key(self) -> dict[bytes, int]:
        """A row of each text digest (for the next version to take)."""
        return {key: row for row, key in enumerate(self.keys)}


def build_rows(
    entries: Sequence[Entry],
    keys: Sequence[bytes],
    previous: Rows | None,
    found: dict[int, Any],
    dimensions: int,
) -> Rows:
    """The `Rows` of `entries` (their text digests `keys`): the rows of texts `previous` holds
    are taken from it, the others are `found` (vectors by row; every row `previous` lacks); the
    row of an entry `beyond_window` is NaN (see the module rules). Blocking (a copy of the
    matrix): call it from a worker thread."""
    import numpy as np

    matrix = np.empty((len(entries), dimensions), dtype=np.float32)
    reused = previous.by_key if previous is not None else {}
    take = [(row, reused[key]) for row, key in enumerate(keys) if key in reused]
    if take and previous is not None:
        rows, sources = zip(*take, strict=True)
        matrix[list(rows)] = previous.matrix[list(sources)]
    for row, vector in found.items():
        matrix[row] = vector
        if beyond_window(entries[row].content):  # taken rows were judged by the last version
            matrix[row] = np.nan
    return Rows(entries, keys, matrix)


def unknown_rows(keys: Sequence[bytes], previous: Rows | None) -> list[int]:
    """The rows whose texts `previous` does not hold (all of them without one)."""
    reused = previous.by_key if previous is not None else {}
    return [row for row, key in enumerate(keys) if key not in reused]


class Layout:
    """The rows of the categories a query searches, one after the other."""

    def __init__(
        self,
        parts: Sequence[tuple[Key, Rows]],
        question: Callable[[str], Any] | None = None,
    ) -> None:
        """`question` embeds a question with the model the rows come from."""
        self.parts = list(parts)
        self.question = question or _no_model
        self._starts: list[int] = []
        self._offset: dict[Key, int] = {}
        size = 0
        for category, rows in self.parts:
            self._starts.append(size)
            self._offset[category] = size
            size += len(rows)
        self.size = size

    def row(self, category: Key, entry: Entry) -> int:
        """The row of an entry of `category`."""
        return self._offset[category] + self.parts_by_category[category].position[entry.line]

    @functools.cached_property
    def parts_by_category(self) -> dict[Key, Rows]:
        return dict(self.parts)

    def entry(self, row: int) -> tuple[Key, Entry]:
        """The category and entry of a row."""
        part = bisect.bisect_right(self._starts, row) - 1
        category, rows = self.parts[part]
        return category, rows.entries[row - self._starts[part]]

    def entries(self) -> Iterable[tuple[Key, Entry]]:
        """Every (category, entry), in row order."""
        for category, rows in self.parts:
            for entry in rows.entries:
                yield category, entry


def _no_model(text: str) -> Any:
    raise LookupError("this layout was made without a model to embed questions")


def nearest(
    query: Any,
    layout: Layout,
    *,
    want: int,
    named: Iterable[int] = (),
    allowed: Sequence[int] | None = None,
    counted: Callable[[Any], Any],
) -> tuple[dict[int, float], int] | None:
    """The cosine of the unit vector `query` with the best `want` rows (of `allowed`, or of
    all) and with the `named` rows (which must be allowed); and how many of the other allowed
    rows `counted` (a vectorised test of cosines) accepts. None when the model has nothing to
    say (see the module rules)."""
    import numpy as np

    if layout.size == 0:
        return {}, 0
    if not usable(np.reshape(query, (1, -1)))[0]:
        return None
    with np.errstate(invalid="ignore"):
        similarities = np.concatenate([rows.matrix @ query for _, rows in layout.parts])
    if not np.isfinite(similarities).any():
        return None
    rows = np.arange(layout.size) if allowed is None else np.asarray(allowed, dtype=np.intp)
    pool = similarities[rows]
    # NaN (no vector) ranks last, never among the best.
    ranks = np.where(np.isfinite(pool), -pool, np.inf)
    best = rows[np.argpartition(ranks, want - 1)[:want]] if 0 < want < len(pool) else rows
    chosen = sorted(set(best.tolist()) | set(named))
    cosine = {row: float(similarities[row]) for row in chosen}
    with np.errstate(invalid="ignore"):
        accepted = int(np.count_nonzero(counted(pool)))
        others = accepted - int(np.count_nonzero(counted(similarities[chosen])))
    return cosine, others
