"""A hybrid query through the one search's own path (`Search.rank`: the lexical cut, the
candidate rows, the fusion, the count) gives the top results and the total that fusing every
entry gives, with or without tags, `min_score` and the usage boost, with rows that have no
vector too; when the model has nothing to say about a query, it is answered lexically."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from hypothesis import assume, given, settings, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import fusion, ranking
from memd.core.search.shelves import Key
from memd.core.writes.catalog import Catalog
from memd.server.methods.handlers import Methods
from memd.server.methods.search import Ranked, SearchedFile
from memd.server.workspaces.snapshot import Snapshot
from memd_client import protocol as p
from memd_client.errors import SemanticSearchUnavailable
from tests.budget import examples

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
    ) -> tuple[dict[int, float], int] | None:
        found: tuple[dict[int, float], int] | None = nearest.nearest(
            self._question, layout, want=want, named=list(named), allowed=allowed, counted=counted
        )
        return found


def _workspace(
    rng: random.Random, generator: Any, no_vectors: float = 0.0
) -> tuple[dict[Category, Snapshot], Any]:
    """Category files of random entries, and their layout: random unit rows, a share
    `no_vectors` of them rows of texts the model gave no usable vector (NaN)."""
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
        matrix[generator.random(len(matrix)) < no_vectors] = np.nan
        keys = [b""] * len(snapshot.entries)
        parts.append((category, nearest.Rows(snapshot.entries, keys, matrix)))
    return snapshots, nearest.Layout(parts)


def _searched(
    snapshots: dict[Category, Snapshot], boost: Callable[[Category, Entry], float]
) -> dict[Key, SearchedFile]:
    """The snapshots as searched files of one workspace whose usage history nudges by `boost`."""
    usage = SimpleNamespace(make_boost=lambda: boost)
    workspace: Any = SimpleNamespace(root="/w", memory_dir="/w/.memory", usage=usage)
    return {c: SearchedFile(workspace, snapshot, c) for c, snapshot in snapshots.items()}


def _rank(
    methods: Methods,
    params: p.QueryParams,
    searched: dict[Key, SearchedFile],
    keep: ranking.Keep[Key] | None,
) -> Ranked:
    """What `query` ranks for `params` (its one search, `Search.rank`)."""

    async def rank() -> Ranked:
        return await methods.search.rank(
            searched,
            params.query,
            mode=params.mode,
            limit=params.limit,
            min_score=params.min_score,
            keep=keep,
        )

    return anyio.run(rank)


def _clear_of_the_cuts(score: float) -> bool:
    """Whether a rounded lexical score is further than rounding from fusion's cuts."""
    return all(abs(score - cut) > 10**-ranking.DECIMALS for cut in (fusion.STRONG, fusion.EXACT))


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_hybrid_path_ranks_as_fusing_every_entry(seed: int) -> None:
    rng = random.Random(seed)  # whole workspaces from a seed: Hypothesis' own draws stay small
    generator = np.random.default_rng(rng.randrange(2**32))
    # Some rows without a vector (NaN), as long as one has one: fused by their words.
    snapshots, layout = _workspace(rng, generator, rng.choice([0.0, 0.0, 0.3]))
    filled = [rows for _, rows in layout.parts if len(rows)]
    if filled and not any(np.isfinite(rows.matrix).all(axis=1).any() for rows in filled):
        filled[0].matrix[0] = np.eye(8, dtype=np.float32)[0]
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
    hits, total, mode, loading = _rank(methods, params, _searched(snapshots, boost), keep)
    assert loading is None

    indexes = [(c, snapshot.index) for c, snapshot in snapshots.items()]
    every = ranking.search(indexes, query, limit=max(1, layout.size), boost=boost, keep=keep)
    lexical = {(hit.key, hit.entry.line): hit.score for hit in every.hits}
    # The scores here are rounded to ranking.DECIMALS; the hybrid path compares unrounded ones
    # with fusion's cuts, so a score within rounding of a cut may fall either side of it.
    assume(all(_clear_of_the_cuts(score) for score in lexical.values()))
    cosine = {
        (category, entry.line): float(similarity)
        for category, rows in layout.parts
        for entry, similarity in zip(rows.entries, rows.matrix @ question, strict=True)
        if keep is None or keep(category, entry)
    }
    expected = fusion.fuse(lexical, cosine, limit=10**6, min_score=min_score)
    assert all(math.isfinite(score) and 0 <= score <= 1 for _, _, score, _ in hits)
    if ranking.query_weights(query):
        assert mode == "hybrid"
        assert [(score, match) for _, _, score, match in hits] == [
            (round(fused.score, 4), fused.match) for fused in expected[:limit]
        ]
        assert total == len(expected)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["nan question", "no row has a vector"]))
def test_when_the_model_has_nothing_to_say_a_query_is_answered_lexically(
    seed: int, why: str
) -> None:
    rng = random.Random(seed)
    generator = np.random.default_rng(rng.randrange(2**32))
    snapshots, layout = _workspace(rng, generator, 1.0 if why == "no row has a vector" else 0.0)
    question = np.full(8, np.nan, dtype=np.float32) if why == "nan question" else np.eye(8)[0]
    query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
    limit = rng.randint(1, 6)
    min_score = rng.choice([None, 0.05, 0.2, 0.5])
    keep = (lambda c, e: "#tagx" in e.content) if rng.random() < 0.5 else None
    boost = lambda c, e: 1.0 + (ranking.MAX_BOOST - 1.0) * (e.line % 2)  # noqa: E731
    methods = Methods(None, started=0.0, socket_path="x", semantic=Model(layout, question))  # type: ignore[arg-type]
    auto = p.QueryParams(workspace="/w", query=query, limit=limit, min_score=min_score)
    hits, total, mode, loading = _rank(methods, auto, _searched(snapshots, boost), keep)
    assert loading is None  # the model had nothing to say: not loading

    indexes = [(c, snapshot.index) for c, snapshot in snapshots.items()]
    lexical = ranking.search(
        indexes, query, limit=limit, min_score=min_score, boost=boost, keep=keep
    )
    # Exactly the lexical answer: every hit, in order, with its score, and the lexical total.
    assert (mode, total) == ("lexical", lexical.total) or layout.size == 0
    assert [(c, e.line, score) for c, e, score, _ in hits] == [
        (hit.key, hit.entry.line, hit.score) for hit in lexical.hits
    ]
    if layout.size and ranking.query_weights(query):
        semantic = p.QueryParams(workspace="/w", query=query, mode="semantic")
        with pytest.raises(SemanticSearchUnavailable, match="no usable vector"):
            _rank(methods, semantic, _searched(snapshots, boost), keep)
