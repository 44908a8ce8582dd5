"""The dedup index gives exactly `dedup.ranked`'s candidates, and stays equal to a fresh build
however it is edited."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

from memd.core.format.mdformat import Entry
from memd.core.writes import dedup, dedup_index
from memd.core.writes.dedup_index import DedupIndex, IndexEditor
from memd.core.writes.layers import Layers
from tests.budget import examples

# Few words, so entries share keywords, tie, and are often normal-form equal; stop words and
# punctuation give empty keyword sets and texts that differ only in case or punctuation.
WORDS = ["tabs", "Tabs", "spaces", "lock", "locks", "write", "file", "the", "is", "never", "use"]
LIMITS = (1, 2, dedup.CANDIDATES)
texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join) | st.sampled_from(
    ["", "Tabs!", "tabs.", "the is", "Use tabs, never spaces."]
)


@contextmanager
def dense_from(count: int) -> Iterator[None]:
    """Make keywords held by `count` entries use bit sets (1: every keyword)."""
    with (
        mock.patch.object(dedup_index, "DENSE_MIN", count),
        mock.patch.object(dedup_index, "SPARSE_MAX", max(1, count // 2)),
    ):
        yield


def _naive(query: str, contents: dict[int, str], limit: int = dedup.CANDIDATES) -> list[int]:
    """`dedup.ranked` over the entries in key order, as keys."""
    entries = [Entry(line=key, slug=None, content=text) for key, text in sorted(contents.items())]
    with mock.patch.object(dedup, "CANDIDATES", limit):
        return [entry.line for entry in dedup.ranked(query, entries)]


def _ranked(index: DedupIndex, query: str, limit: int = dedup.CANDIDATES) -> list[int]:
    return index.ranked(query, limit)


def _canonical(index: DedupIndex) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
    """What the index says, whatever the representation: keyword -> keys, normal -> keys."""
    postings = {word: set(dedup_index._keys(keys)) for word, keys in index.sparse.as_dict().items()}
    for word, bits in index.dense.items():
        postings[word] = {key for key in range(bits.bit_length()) if bits >> key & 1}
    normal = index.normal.as_dict()
    return postings, {name: set(dedup_index._keys(keys)) for name, keys in normal.items()}


@pytest.mark.parametrize("dense", [1, 2, dedup_index.DENSE_MIN])
@settings(max_examples=examples(150))
@given(contents=st.lists(texts, max_size=30), queries=st.lists(texts, min_size=1, max_size=4))
def test_ranked_is_the_scans_ranking(dense: int, contents: list[str], queries: list[str]) -> None:
    with dense_from(dense):
        index = DedupIndex.build(enumerate(contents))
    by_key = dict(enumerate(contents))
    for query in [*queries, *contents[:2]]:
        for limit in LIMITS:
            assert _ranked(index, query, limit) == _naive(query, by_key, limit)


@pytest.mark.parametrize("dense", [1, 3, dedup_index.DENSE_MIN])
@settings(max_examples=examples(100))
@given(
    start=st.lists(texts, max_size=12),
    steps=st.lists(st.tuples(st.booleans(), texts, st.integers(0, 40)), max_size=40),
    query=texts,
)
def test_edits_match_a_fresh_build(
    dense: int, start: list[str], steps: list[tuple[bool, str, int]], query: str
) -> None:
    """Random adds (new largest key) and removes, frozen now and then: each version answers
    like `find_match` and holds what a fresh build of its entries holds."""
    with dense_from(dense):
        index = DedupIndex.build(enumerate(start))
        contents = dict(enumerate(start))
        versions = [(index, dict(contents))]
        editor: IndexEditor = index.edit()
        for number, (add, text, pick) in enumerate(steps):
            if add or not contents:
                key = max(contents, default=-1) + 1
                editor.add(key, text)
                contents[key] = text
            else:
                key = sorted(contents)[pick % len(contents)]
                editor.remove(key, contents.pop(key))
            if number % 3 == 0:
                versions.append((editor.freeze(), dict(contents)))
        versions.append((editor.freeze(), dict(contents)))
        for version, held in versions:  # an older version never sees later edits
            assert _ranked(version, query) == _naive(query, held)
            assert _canonical(version) == _canonical(DedupIndex.build(sorted(held.items())))


def test_a_common_keyword_does_not_make_every_entry_a_candidate() -> None:
    """Entries that share only a keyword everyone has are judged by count, not one by one."""
    contents = [f"feed the reach ref token{n} alpha{n % 7} beta{n % 11}" for n in range(400)]
    index = DedupIndex.build(enumerate(contents))
    query = "feed reach ref alpha3 beta5 gamma"
    for limit in LIMITS:
        assert _ranked(index, query, limit) == _naive(query, dict(enumerate(contents)), limit)
    assert "feed" in index.dense and "token7" in index.sparse


def test_layers_share_the_base_and_fold_changes_in() -> None:
    first: Layers[str, int] = Layers.of({"a": 1, "b": 2})
    second = first.edited()
    second.set("a", None)
    second.set("c", 3)
    assert (first.get("a"), "a" in first, "c" in first) == (1, True, False)
    assert (second.get("a"), "a" in second, second.get("c"), second.get("b")) == (None, False, 3, 2)
    assert second.base is first.base
    big: Layers[str, int] = Layers.of({}).edited()
    for n in range(300):
        big.set(str(n), n)
    settled = big.settled()
    assert settled.changes == {} and settled.get("299") == 299


@pytest.mark.parametrize(
    ("contents", "query", "dense"),
    [
        # A rare-keyword entry (compared one by one) ties with an earlier common-keyword one.
        (["alpha zeta", "gamma eta", "alpha omega theta iota"], "alpha gamma", 2),
        # Two count groups tie: 2 shared of 2 and 3 shared of 5 are both 0.5 against 4 keywords;
        # the later group holds the earlier entry.
        (["alpha beta", "alpha beta gamma xray yolk"], "alpha beta gamma delta", 1),
        # Both ways round, and a normal-form equal entry after a Jaccard-1 one.
        (["alpha beta gamma xray yolk", "alpha beta"], "alpha beta gamma delta", 1),
        (["Tabs, spaces!", "tabs spaces"], "tabs spaces", 1),
    ],
)
def test_ties_go_to_the_first_entry_in_the_file(
    contents: list[str], query: str, dense: int
) -> None:
    with dense_from(dense):
        index = DedupIndex.build(enumerate(contents))
    for limit in LIMITS:
        assert _ranked(index, query, limit) == _naive(query, dict(enumerate(contents)), limit)


_MEASURE = """
import gc, json, random, tracemalloc
from memd.core.text import memo
from memd.core.writes.dedup_index import DedupIndex
rng = random.Random(7)
letters = "abcdefghijklmnopqrstuvwxyz"
contents = [
    " ".join("".join(rng.choices(letters, k=rng.randint(4, 9))) for _ in range(9))
    for _ in range(2000)
]
size = sum(len(text) for text in contents)
gc.collect()
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
index = DedupIndex.build(enumerate(contents))
for cache in memo._caches:
    cache.clear()
gc.collect()
held = tracemalloc.get_traced_memory()[0] - before
values = list(index.sparse.as_dict().values())
small = sum(1 for keys in values if not isinstance(keys, int) and len(keys) < 2)
print(json.dumps({"held": held, "size": size, "small": small}))
"""


def test_an_index_of_distinct_words_costs_a_bounded_share_of_its_text() -> None:
    """A category whose every word is new (a hostile file) keeps each entry's keywords in a
    tuple and a keyword one entry holds as a bare int (no tuples of one: checked), and the index
    holds under 36 bytes per byte of text (25 measured). Measured in an interpreter of its own:
    inside the suite the figure depended on what earlier tests had left (the interned-string
    table's growth, the stemmer's cache), from 32 to 46."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE], capture_output=True, text=True, timeout=120, check=True
    )
    measured = json.loads(done.stdout)
    assert measured["small"] == 0
    held, size = measured["held"], measured["size"]
    assert held < 36 * size, f"{held / size:.1f} bytes per byte of text"
