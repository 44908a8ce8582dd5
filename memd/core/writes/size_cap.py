"""The size cap on a category file, as a pure decision: how big a batch would make the file, and
which stores to leave out so that the rest fits.

Rules: a file may always shrink, or stay as big as it was when read; it may not grow past the
cap. When a batch would, the latest stores that add or lengthen an entry are left out (found by
bisection, so a long batch costs a few applies), each with the size the file would have had
with it; if leaving out every such store is not enough (a cleanup adding slugs), none is.
"""

from __future__ import annotations

from collections.abc import Sequence

from memd.core.format.categories import Category
from memd.core.writes import transitions
from memd.core.writes.catalog import Catalog
from memd_client.errors import RpcError


def size_past_cap(text: str, *, limit: int, read_size: int | None) -> int | None:
    """Return the size of `text` in bytes if writing it would grow a file of `read_size` bytes
    (None: no file) past `limit`, else None."""
    if len(text) <= limit // 4:  # UTF-8: at most 4 bytes a character
        return None
    size = len(text.encode("utf-8"))
    if size <= limit or size <= (read_size or 0):
        return None
    return size


def grows(command: transitions.Command) -> bool:
    """Return True for a store that is not a dry run: one that may add or lengthen an entry."""
    return isinstance(command, transitions.Store) and not command.dry_run


def lengthens(result: transitions.Outcome | RpcError) -> bool:
    """Return True if `result` is a store that added an entry or made one longer."""
    if not isinstance(result, transitions.StoreOutcome):
        return False
    if result.action == "updated" and result.matched is not None:
        return len(result.content) > len(result.matched.content)
    return result.action == "stored"


def stores_past_cap(
    category: Category,
    catalog: Catalog | None,
    commands: Sequence[transitions.Command],
    results: Sequence[transitions.Outcome | RpcError],
    *,
    size: int,
    limit: int,
    read_size: int | None,
) -> list[tuple[int, int]]:
    """Return the positions in `commands` to leave out so that the rest fits under `limit`,
    each with the size the file would have had with it (`size` is the size with all of them).
    Empty if leaving out every store that adds or lengthens an entry is not enough."""
    growing = [
        index
        for index, (command, result) in enumerate(zip(commands, results, strict=True))
        if grows(command) and lengthens(result)
    ]

    def size_keeping(kept: int) -> int:
        left_out = set(growing[kept:])
        kept_commands = [c for i, c in enumerate(commands) if i not in left_out]
        batch = transitions.apply_batch(category, catalog, kept_commands)
        if batch.catalog is None:
            return 0
        return size_past_cap(batch.catalog.render(), limit=limit, read_size=read_size) or 0

    if not growing or size_keeping(0):
        return []
    fits, past = 0, len(growing)  # keeping `fits` stores fits; keeping `past` does not
    sizes = {past: size}
    while past - fits > 1:
        middle = (fits + past) // 2
        over = size_keeping(middle)
        if over:
            sizes[middle] = over
            past = middle
        else:
            fits = middle
    return [(index, sizes[past]) for index in growing[fits:]]
