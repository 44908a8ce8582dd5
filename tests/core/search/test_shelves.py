"""Places searched beside a workspace's category files: a memory ranks above an equal chunk of
a source file, and a project entry before an equal one of the user-wide scope."""

from __future__ import annotations

from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.search.index import SearchIndex
from memd.core.search.ranking import build_index, search
from memd.core.search.shelves import FILE_PRIORITY, Key, Shelf, order, priority

TEXT = "Run the integration tests with make test before pushing."


def _index(*contents: str) -> SearchIndex:
    lines = "".join(f"- {content}\n" for content in contents)
    return build_index(mdformat.entries(mdformat.parse(f"# Decisions\n\nx.\n\n{lines}")))


def test_priorities_and_ties() -> None:
    global_security = Shelf("global", "security.md", Category.SECURITY)
    chunk = Shelf("file", "CLAUDE.md")
    assert priority(Category.SECURITY) == priority(global_security) > 1.0
    assert priority(chunk) == FILE_PRIORITY < priority(Category.DECISION) == 1.0
    keys: list[Key] = [chunk, Shelf("global", "decisions.md", Category.DECISION), Category.QUIRK]
    assert sorted(keys, key=order) == [
        Category.QUIRK,
        Shelf("global", "decisions.md", Category.DECISION),
        chunk,
    ]


def test_a_memory_ranks_above_an_equal_chunk_and_a_project_entry_before_a_global_one() -> None:
    chunk = Shelf("file", "CLAUDE.md")
    user_wide = Shelf("global", "decisions.md", Category.DECISION)
    indexes: list[tuple[Key, SearchIndex]] = [
        (chunk, _index(TEXT)),
        (user_wide, _index(TEXT)),
        (Category.DECISION, _index(TEXT)),
    ]
    hits = search(indexes, "integration tests", limit=3).hits
    assert [hit.key for hit in hits] == [Category.DECISION, user_wide, chunk]
    assert hits[0].score == hits[1].score > hits[2].score


def test_a_chunk_is_long_or_short_among_chunks_not_beside_the_memories() -> None:
    chunks = _index(
        "The deploy lock is held by the release job until every region reports healthy.",
        "Staging mirrors production, but its database is reset every night at two.",
    )
    terse = _index(*(f"use tool{n}" for n in range(40)))
    wordy = _index(
        *(f"use tool{n} for every step of the build, the tests and the docs" for n in range(40))
    )
    scores = []
    for memories in (terse, wordy):
        indexes: list[tuple[Key, SearchIndex]] = [
            (Category.DECISION, memories),
            (Shelf("file", "AGENTS.md"), chunks),
        ]
        found = search(indexes, "deploy lock release", limit=1)
        scores.append(found.hits[0].score)
    # Memories that do not match change neither the chunk's length normalisation nor idf.
    assert scores[0] == scores[1] > 0
