"""A workspace's sources ranked as a few indexes, runs of files in path order (`search.Searchable`,
`sources.SourcesIndex`), give the hits, scores, tie order and total of one index a file, with
filters and boosts that see each file's own key and entry (random workspaces from a seed)."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from memd.core.format.categories import CATEGORIES
from memd.core.format.mdformat import Entry
from memd.core.search import ranking
from memd.core.search.index import build_index
from memd.core.search.shelves import Key, Shelf
from memd.server.methods.search import Searchable, SearchedFile
from memd.server.workspaces.snapshot import Snapshot
from memd.server.workspaces.source_index import SourceFile, SourcesIndex, _chunks
from tests.budget import examples

_WORDS = (
    "lock",
    "locks",
    "file",
    "write",
    "cache",
    "key",
    "run",
    "deploy",
    "test",
    "config",
    "abc",
    "abcd",
    "alpha",
    "beta",
    "snake_case",
    "fs.open",
    "the",
)
_PATHS = (
    "CLAUDE.md",
    "AGENTS.md",
    "a.md",
    "docs/a.md",
    "docs/b.md",
    "memory/x.md",
    "./decisions.md",
    "Z.md",
)


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(count))


def _markdown(rng: random.Random) -> str:
    blocks = []
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        if kind < 0.2:
            blocks.append("#" * rng.randint(1, 3) + " " + _words(rng, rng.randint(1, 3)))
        elif kind < 0.6:
            blocks.append("- " + _words(rng, rng.randint(1, 10)))
        else:
            blocks.append(_words(rng, rng.randint(1, 15)))
    return "\n\n".join(blocks) + "\n"


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_segments_of_sources_rank_as_one_index_a_file(seed: int) -> None:
    rng = random.Random(seed)
    searched: dict[Key, SearchedFile] = {}
    for category in rng.sample(CATEGORIES, rng.randint(0, 3)):
        entries = [
            Entry(line=3 + 2 * n, slug=None, content=_words(rng, rng.randint(1, 10)))
            for n in range(rng.randint(0, 10))
        ]
        snapshot = Snapshot(None, 0.0, index=build_index(entries))
        searched[category] = SearchedFile(None, snapshot, category)  # type: ignore[arg-type]
    files = {
        path: SourceFile(path, "/nowhere/" + path, None, _chunks(_markdown(rng)))  # type: ignore[arg-type]
        for path in rng.sample(_PATHS, rng.randint(0, 6))
    }
    # Runs of files in path order, cut at random (one index for all, one a file, or between).
    ordered = [files[path] for path in sorted(files)]
    cuts = sorted(rng.sample(range(1, len(ordered)), rng.randint(0, max(0, len(ordered) - 1))))
    runs = [ordered[a:b] for a, b in zip([0, *cuts], [*cuts, len(ordered)], strict=True)]
    segments = tuple(SourcesIndex(run) for run in runs if run)
    for path, source in files.items():
        searched[Shelf("file", path)] = SearchedFile(None, source, None, segments)  # type: ignore[arg-type]
    query = rng.choice(["", "the", _words(rng, rng.randint(1, 6)), "loc", _words(rng, 12)])
    limit, min_score = rng.randint(1, 12), rng.choice([None, None, 0.05, 0.2, 0.5])
    salt = rng.random()
    boost = rng.choice(
        [None, lambda k, e: 1.0 + (ranking.MAX_BOOST - 1.0) * (hash((k, e.line, salt)) % 100) / 99]
    )
    keep = rng.choice([None, lambda k, e: hash((k, e.line, salt)) % 3 != 0])

    separate = [
        (
            key,
            shelved.snapshot.index
            if isinstance(shelved.snapshot, Snapshot)
            else build_index(shelved.snapshot.entries),
        )
        for key, shelved in searched.items()
    ]
    expected = ranking.search(
        separate, query, limit=limit, min_score=min_score, boost=boost, keep=keep
    )
    searchable = Searchable(searched)
    found = ranking.search(
        searchable.indexes,
        query,
        limit=limit,
        min_score=min_score,
        boost=None if boost is None else searchable.per_file(boost),
        keep=None if keep is None else searchable.per_file(keep),
    )
    assert found.total == expected.total
    assert tuple(map(searchable.hit, found.hits)) == expected.hits
