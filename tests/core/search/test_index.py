"""The incremental index and the pruned search: both must give exactly what the simple ways give.

- An index updated through any sequence of edits answers every query exactly as an index built
  from scratch on the same entries (and holds exactly the same length statistics).
- The pruned search (no filter) returns exactly the hits and total of scoring every match (the
  path a filter takes; a filter that keeps everything must change nothing), with or without a
  boost, for any limit and min_score.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings, strategies as st

from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd.core.search.index import build_index
from memd.core.search.ranking import MAX_BOOST, SearchIndex, search
from memd.core.search.terms import EntryTerms, entry_terms
from tests.budget import examples

_WORDS = (
    "lock",
    "locks",
    "file",
    "write",
    "writing",
    "cache",
    "key",
    "test",
    "run",
    "the",
    "of",
    "deploy",
    "sendLmRequest",
    "snake_case",
    "fs.open",
)
_contents = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)
_slugs = st.one_of(st.none(), st.sampled_from(("lock-file", "cache-key", "run-tests")))
_queries = st.one_of(
    st.lists(st.sampled_from(_WORDS), max_size=4).map(" ".join),
    st.sampled_from(("loc", "wri", "cach deploy", "lock file write", "sendlmrequest", "zzz")),
)
_QUERIES = ("lock", "lock file", "write the cache", "loc", "deploy key", "snake case", "fs.open")


def _numbered(items: list[tuple[str | None, str]]) -> list[Entry]:
    return [
        Entry(line=3 + 2 * number, slug=slug, content=content)
        for number, (slug, content) in enumerate(items)
    ]


_items = st.lists(st.tuples(_slugs, _contents), max_size=14)


def _same_answers(updated: SearchIndex, fresh: SearchIndex) -> None:
    assert updated.entries == fresh.entries
    assert updated.total_length == fresh.total_length
    assert updated.length_moments() == fresh.length_moments()  # exactly: b depends on them
    for query in _QUERIES:
        for limit in (1, 3, 50):
            assert search([(Category.QUIRK, updated)], query, limit=limit) == search(
                [(Category.QUIRK, fresh)], query, limit=limit
            )


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_items, min_size=2, max_size=6))
def test_an_updated_index_answers_like_a_fresh_one(
    versions: list[list[tuple[str | None, str]]],
) -> None:
    index = build_index(_numbered(versions[0]))
    for items in versions[1:]:
        entries = _numbered(items)
        index = build_index(entries, index)
        _same_answers(index, build_index(entries))


@settings(max_examples=examples(300), deadline=None)
@given(
    _items,
    st.lists(
        st.tuples(
            st.sampled_from(("append", "replace", "remove", "insert")),
            st.integers(min_value=0, max_value=20),
            st.tuples(_slugs, _contents),
        ),
        max_size=12,
    ),
)
def test_edits_one_at_a_time_keep_the_index_exact(
    start: list[tuple[str | None, str]], edits: list[tuple[str, int, tuple[str | None, str]]]
) -> None:
    items = list(start)
    index = build_index(_numbered(items))
    for kind, where, item in edits:
        at = where % (len(items) + 1)
        if kind == "append":
            items.append(item)
        elif kind == "insert":
            items.insert(at, item)
        elif items and kind == "replace":
            items[at % len(items)] = item
        elif items:
            del items[at % len(items)]
        index = build_index(_numbered(items), index)
    _same_answers(index, build_index(_numbered(items)))


def test_an_index_taken_over_cannot_be_searched() -> None:
    first = build_index(_numbered([(None, "lock the file")]))
    build_index(_numbered([(None, "lock the file"), (None, "write the cache")]), first)
    with pytest.raises(RuntimeError, match="taken over"):
        search([(Category.QUIRK, first)], "lock", limit=3)


def test_appending_indexes_only_the_new_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    from memd.core.search import index as indexing

    items: list[tuple[str | None, str]] = [(None, f"rule {n} about locks") for n in range(50)]
    index = build_index(_numbered(items))
    calls: list[str] = []

    def counting(entry: Entry) -> EntryTerms:
        calls.append(entry.content)
        return entry_terms(entry)

    monkeypatch.setattr(indexing, "entry_terms", counting)
    build_index(_numbered([*items, (None, "a new rule")]), index)
    assert calls == ["a new rule"]


_workspaces = st.dictionaries(
    st.sampled_from(CATEGORIES), _items.map(_numbered), min_size=1, max_size=5
)


def _keep_all(category: Category, entry: Entry) -> bool:
    return True


def _boost(category: Category, entry: Entry) -> float:
    return 1.0 + (MAX_BOOST - 1.0) * ((entry.line * 7 + len(entry.content)) % 5) / 4


@settings(max_examples=examples(500), deadline=None)
@given(
    _workspaces,
    _queries,
    st.integers(min_value=1, max_value=12),
    st.one_of(st.none(), st.sampled_from((0.05, 0.2, 0.5, 0.8))),
    st.booleans(),
)
@example(  # an entry's terms summed in another order than the full scoring's: 0.4937 vs 0.4938
    {Category.INSTRUCTION: _numbered([(None, "snake_case")])}, "snake_case", 1, None, False
)
def test_the_pruned_search_equals_scoring_every_match(
    workspace: dict[Category, list[Entry]],
    query: str,
    limit: int,
    min_score: float | None,
    boosted: bool,
) -> None:
    indexes = [(category, build_index(entries)) for category, entries in workspace.items()]
    boost = _boost if boosted else None
    pruned = search(indexes, query, limit=limit, min_score=min_score, boost=boost)
    every = search(indexes, query, limit=limit, min_score=min_score, boost=boost, keep=_keep_all)
    assert pruned == every


def test_ties_beyond_the_limit_go_by_line() -> None:
    entries = _numbered([(None, "lock the file") for _ in range(30)])
    hits = search([(Category.QUIRK, build_index(entries))], "lock", limit=4).hits
    assert [hit.entry.line for hit in hits] == [3, 5, 7, 9]
    assert len({hit.score for hit in hits}) == 1


def test_the_usage_nudge_stays_within_what_search_allows_for() -> None:
    from memd.core.search import usage

    assert 1.0 + usage.MAX_NUDGE <= MAX_BOOST


def test_an_index_being_read_is_left_alone() -> None:
    first = build_index(_numbered([(None, "lock the file")]))
    with first.reading():
        second = build_index(_numbered([(None, "lock the file"), (None, "write the cache")]), first)
        assert [hit.entry.line for hit in search([(Category.QUIRK, first)], "lock", limit=3).hits]
    assert second is not first
    assert len(search([(Category.QUIRK, second)], "cache", limit=3).hits) == 1


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=0, max_size=300),
    st.integers(min_value=1, max_value=40),
)
def test_the_vocabulary_sorted_in_runs_is_the_sorted_vocabulary(words: list[str], run: int) -> None:
    """The vocabulary (what partial words expand to) is sorted a run at a time and merged, so
    no one sort holds the GIL for long; the result is `sorted`'s."""
    import memd.core.search.index as index_module

    saved = index_module._RUN
    index_module._RUN = run
    try:
        assert index_module._sorted_in_runs(list(words)) == sorted(words)
    finally:
        index_module._RUN = saved


def test_an_index_built_a_unit_at_a_time_has_the_vocabulary_of_one_built_at_once() -> None:
    from memd.core.search.index import IndexBuild

    entries = [
        Entry(line=n + 1, slug=None, content=f"deploy{n % 97} service{n} zone{n % 13} rule")
        for n in range(400)
    ]
    build = IndexBuild(entries, 3)  # packs 48 terms a step: many sorted runs
    built = None
    while built is None:
        built = build.step()
    whole = build_index(entries)
    assert built._vocabulary == whole._vocabulary == sorted(whole._vocabulary)
    assert built.words_starting("deploy1") == whole.words_starting("deploy1")
