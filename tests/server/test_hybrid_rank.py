"""A hybrid query through the handler's own path (`Methods._rank`: the lexical cut, the
candidate rows, the fusion, the count) gives the top results and the total that fusing every
entry gives, with or without tags, `min_score` and the usage boost."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import fusion, ranking
from memd.core.search.shelves import Key
from memd.core.writes.catalog import Catalog
from memd.server.handlers import Methods
from memd.server.scopes import Shelved
from memd.server.snapshot import Snapshot
from memd_client import protocol as p

np = pytest.importorskip("numpy")
nearest = pytest.importorskip("memd.semantic.nearest")

WORDS = [
    "query",
    "store",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "pool",
    "database",
    "token",
    "cache",
    "grid",
    "layout",
    "jwt",
    "expire",
    "index",
]
HEADERS = {Category.DECISION: "# Decisions\n\nx.\n\n", Category.QUIRK: "# Quirks\n\nx.\n\n"}


class Model:
    """Stands in for the daemon's semantic service: fixed vectors, one question vector."""

    def __init__(self, layout: Any, question: Any) -> None:
        self._layout = layout
        self._question = question

    async def layout(self, files: Mapping[Key, tuple[str, Sequence[Entry]]]) -> Any:
        return self._layout, 0

    async def nearest(
        self,
        text: str,
        layout: Any,
        *,
        want: int,
        named: Iterable[int],
        allowed: Sequence[int] | None,
        counted: Callable[[Any], Any],
    ) -> tuple[dict[int, float], int]:
        found: tuple[dict[int, float], int] = nearest.nearest(
            self._question, layout, want=want, named=list(named), allowed=allowed, counted=counted
        )
        return found


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_hybrid_path_ranks_as_fusing_every_entry(seed: int) -> None:
    rng = random.Random(seed)  # whole workspaces from a seed: Hypothesis' own draws stay small
    generator = np.random.default_rng(rng.randrange(2**32))
    snapshots, parts = {}, []
    for category in rng.sample(list(HEADERS), rng.randint(1, 2)):
        lines = [
            f"- {' '.join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))}"
            f"{' #tagx' if rng.random() < 0.4 else ''} n{i}\n"
            for i in range(rng.randint(0, 12))
        ]
        snapshot = Snapshot(Catalog.from_text(HEADERS[category] + "".join(lines)), 0.0)
        snapshots[category] = snapshot
        matrix = generator.standard_normal((len(snapshot.entries), 8)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9
        keys = [b""] * len(snapshot.entries)
        parts.append((category, nearest.Rows(snapshot.entries, keys, matrix)))
    layout = nearest.Layout(parts)
    question = generator.standard_normal(8).astype(np.float32)
    question /= np.linalg.norm(question)
    query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
    limit = rng.randint(1, 6)
    min_score = rng.choice([None, 0.05, 0.2, 0.5, 0.6])
    keep = (lambda c, e: "#tagx" in e.content) if rng.random() < 0.5 else None
    # The usage boost (up to MAX_BOOST): it can lift a hit over fusion.STRONG.
    boost = lambda c, e: 1.0 + (ranking.MAX_BOOST - 1.0) * (e.line % 2)  # noqa: E731

    methods = Methods(None, started=0.0, socket_path="x", semantic=Model(layout, question))  # type: ignore[arg-type]
    params = p.QueryParams(
        workspace="/w", query=query, limit=limit, min_score=min_score, mode="semantic"
    )
    workspace: Any = SimpleNamespace(root="/w", memory_dir="/w/.memory")
    searched: dict[Key, Shelved] = {
        c: Shelved(workspace, snapshot, c) for c, snapshot in snapshots.items()
    }
    hits, total, mode = anyio.run(methods._rank, params, searched, boost, keep)

    indexes = [(c, snapshot.index) for c, snapshot in snapshots.items()]
    every = ranking.search(indexes, query, limit=max(1, layout.size), boost=boost, keep=keep)
    lexical = {(hit.category, hit.entry.line): hit.score for hit in every.hits}
    cosine = {
        (category, entry.line): float(similarity)
        for category, rows in layout.parts
        for entry, similarity in zip(rows.entries, rows.matrix @ question, strict=True)
        if keep is None or keep(category, entry)
    }
    expected = fusion.fuse(lexical, cosine, limit=10**6, min_score=min_score)
    if ranking.query_weights(query):
        assert mode == "hybrid"
        assert [(score, match) for _, _, score, match in hits] == [
            (round(fused.score, 4), fused.match) for fused in expected[:limit]
        ]
        assert total == len(expected)
