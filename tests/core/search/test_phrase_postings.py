"""Derived phrase postings rank exactly as stored ones did (issue 35, second pass).

An index no longer stores the postings of phrase terms (adjacent word pairs); it derives a
phrase's entries from its two words' postings when a search asks. The reference here is the
same index with every phrase's postings stored the way the index did before (counted per entry
from its adjacent word pairs): every search must give the same hits, scores and totals, fresh,
after incremental edits, and from a kept image.
"""

from __future__ import annotations

import array
import collections
import itertools

from hypothesis import example, given, settings, strategies as st

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import index as indexing
from memd.core.search.index import CLASS_SHIFT, build_index, from_image, to_image
from memd.core.search.ranking import SearchIndex, search
from memd.core.search.terms import entry_terms, split_terms
from tests.budget import examples

_WORDS = ("lock", "file", "write", "cache", "key", "run", "the", "deploy", "sendLmRequest", "a-b")
_contents = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=9).map(" ".join)
_slugs = st.one_of(st.none(), st.sampled_from(("lock-file", "cache-key", "run-9")))
_items = st.lists(st.tuples(_slugs, _contents), max_size=16)
_queries = st.lists(st.sampled_from((*_WORDS, "zzz", "loc")), min_size=1, max_size=5).map(" ".join)


def _numbered(items: list[tuple[str | None, str]]) -> list[Entry]:
    return [
        Entry(line=1 + number, slug=slug, content=content)
        for number, (slug, content) in enumerate(items)
    ]


def _stored_phrases(index: SearchIndex) -> SearchIndex:
    """A copy of `index` holding every phrase's postings, counted as the index used to."""
    reference = index.forked()
    lists: dict[str, list[int]] = collections.defaultdict(list)
    for doc, entry in enumerate(reference._slots):
        if entry is None:
            continue
        _, length, _ = entry_terms(entry)
        words = split_terms(entry.content)[0]
        pairs = collections.Counter(itertools.pairwise(words))
        for (first, second), count in pairs.items():
            klass = reference._class_ids[length][float(count)]  # registered when indexed
            lists[f"{first} {second}"].append(klass << CLASS_SHIFT | doc)
    for term, values in lists.items():
        reference._postings[term] = array.array("q", sorted(values))
    return reference


def _same_rankings(derived: SearchIndex, queries: list[str]) -> None:
    stored = _stored_phrases(derived)
    for query in queries:
        for limit in (1, 3, 40):
            for keep in (None, lambda _category, entry: entry.line % 2 == 0):
                assert search([(Category.QUIRK, derived)], query, limit=limit, keep=keep) == (
                    search([(Category.QUIRK, stored)], query, limit=limit, keep=keep)
                )


@given(_items, st.lists(_queries, min_size=1, max_size=6))
@example(
    [(None, "lock file lock file"), (None, "file lock"), ("lock-file", "the lock")], ["lock file"]
)
@example([(None, "run run run"), (None, "run")], ["run run"])
@settings(max_examples=examples(300), deadline=None)
def test_a_fresh_index_ranks_as_with_stored_phrases(
    items: list[tuple[str | None, str]], queries: list[str]
) -> None:
    _same_rankings(build_index(_numbered(items)), queries)


@given(st.lists(_items, min_size=2, max_size=4), st.lists(_queries, min_size=1, max_size=4))
@settings(max_examples=examples(150), deadline=None)
def test_an_edited_index_ranks_as_with_stored_phrases(
    versions: list[list[tuple[str | None, str]]], queries: list[str]
) -> None:
    index = build_index(_numbered(versions[0]))
    for items in versions[1:]:
        _same_rankings(index, queries)  # derives (and caches) phrases of this version
        index = build_index(_numbered(items), index)
        _same_rankings(index, queries)  # the cached phrases of the last version are gone


@given(_items, st.lists(_queries, min_size=1, max_size=4))
@settings(max_examples=examples(100), deadline=None)
def test_a_kept_image_ranks_as_with_stored_phrases(
    items: list[tuple[str | None, str]], queries: list[str]
) -> None:
    entries = _numbered(items)
    kept = from_image(entries, to_image(build_index(entries), "k"), "k")
    assert kept is not None
    _same_rankings(kept, queries)


def test_an_index_stores_no_phrase_postings() -> None:
    index = build_index(_numbered([(None, "lock file write"), (None, "write lock file")]))
    assert all(" " not in term for term in index._postings)
    assert index.frequency("lock file") == 2
    assert index.frequency("file write") == 1
    assert index.frequency("write file") == 0


def test_an_image_of_the_previous_version_is_ignored() -> None:
    entries = _numbered([(None, "lock file")])
    image = to_image(build_index(entries), "k")
    older = indexing.IndexImage(
        version=indexing.IMAGE_VERSION - 1,
        key=image.key,
        entries=image.entries,
        classes=image.classes,
        postings=image.postings,
        total_length=image.total_length,
        lengths=image.lengths,
    )
    assert from_image(entries, older, "k") is None


def test_an_edit_drops_only_the_phrases_of_its_words() -> None:
    items: list[tuple[str | None, str]] = [(None, "lock file write"), (None, "run deploy key")]
    index = build_index(_numbered(items))
    assert index.frequency("lock file") == 1
    assert index.frequency("file write") == 1
    assert index.frequency("deploy key") == 1
    index = build_index(_numbered([*items, (None, "deploy key lock")]), index)
    assert "lock file" not in index._phrases  # the new entry holds "lock"
    assert "file write" in index._phrases  # kept: it holds neither word
    assert "deploy key" not in index._phrases
    assert index.frequency("deploy key") == 2
