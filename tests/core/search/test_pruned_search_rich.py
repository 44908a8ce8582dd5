"""The pruned search (pairs skipped whole, `_Overlap`, `_offer_several`) against
scoring every match, over a richer vocabulary than tests/core/search/test_index.py: stems that merge
("lock", "locks", "locking"), prefix families ("abc", "abcd", ...: a missing query word's
expansions may repeat a query word), identifiers whose parts are query words, repeated-word
phrases ("lock lock"), up to 14 query words (both sides of `_PAIRWISE_MOST`), source shelves
and user-wide shelves (other priorities), every limit 1..12, any min_score, boosts.

Run longer with MEMD_TEST_BUDGET=deep (50,000 examples)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from memd.core.format.categories import CATEGORIES, Category
from memd.core.format.mdformat import Entry
from memd.core.search.index import build_index
from memd.core.search.ranking import MAX_BOOST, search
from memd.core.search.shelves import Key, Shelf
from tests.budget import examples

_EXAMPLES = examples(400, deep=50000)

_WORDS = (
    "lock",
    "locks",
    "locking",
    "file",
    "files",
    "write",
    "cache",
    "key",
    "deploy",
    "config",
    "configure",
    "abc",
    "abcd",
    "abcde",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "omega",
    "kappa",
    "sigma",
    "theta",
    "zeta",
    "the",
    "not",
    "snake_case",
    "lock_file",
    "lockFile",
    "file.lock",
    "lock-lock",
    "cache_key",
    "abc_abcd",
)
_FRAGMENTS = ("loc", "lockf", "conf", "abc", "abcd", "wri", "dep", "zzz", "alp", "sig")
_KEYS: tuple[Key, ...] = (
    *CATEGORIES,
    Shelf("global", "security.md", Category.SECURITY),
    Shelf("global", "quirks.md", Category.QUIRK),
    Shelf("file", "CLAUDE.md"),
    Shelf("file", "docs/a.md"),
)


@st.composite
def _content(draw: st.DrawFn) -> str:
    pool = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5, unique=True))
    return " ".join(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=14)))


_slugs = st.one_of(
    st.none(), st.lists(st.sampled_from(_WORDS[:24]), min_size=1, max_size=3).map("-".join)
)


@st.composite
def _shelves(draw: st.DrawFn) -> list[tuple[Key, list[Entry]]]:
    keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=5, unique=True))
    found = []
    for key in keys:
        items: list[tuple[str | None, str]] = draw(
            st.lists(st.tuples(_slugs, _content()), max_size=18)
        )
        copies: int = draw(st.integers(0, 14))
        if items and copies:  # duplicated entries: ties, classes past `limit`
            items += [items[0]] * copies
        entries = [
            Entry(line=3 + 2 * number, slug=slug, content=content)
            for number, (slug, content) in enumerate(items)
        ]
        found.append((key, entries))
    return found


@st.composite
def _query(draw: st.DrawFn) -> str:
    words = st.sampled_from(_WORDS + _FRAGMENTS)
    if draw(st.integers(0, 4)) == 0:  # one word repeated, maybe one more: "lock lock x"
        word = draw(words)
        return " ".join([word] * draw(st.integers(2, 4)) + draw(st.lists(words, max_size=1)))
    return " ".join(draw(st.lists(words, max_size=14)))


def _boost(key: Key, entry: Entry) -> float:
    return 1.0 + (MAX_BOOST - 1.0) * ((entry.line * 7 + len(entry.content)) % 5) / 4


def _full_boost(key: Key, entry: Entry) -> float:
    return MAX_BOOST


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _shelves(),
    _query(),
    st.integers(min_value=1, max_value=12),
    st.one_of(
        st.none(),
        st.sampled_from((0.0001, 0.05, 0.2, 0.5, 0.8, 1.0)),
        st.floats(0.0, 1.0).map(lambda x: round(x, 4)),
    ),
    st.sampled_from((None, _boost, _full_boost)),
)
def test_the_pruned_search_equals_scoring_every_match_on_rich_inputs(
    shelves: list[tuple[Key, list[Entry]]],
    query: str,
    limit: int,
    min_score: float | None,
    boost: object,
) -> None:
    indexes = [(key, build_index(entries)) for key, entries in shelves]
    kwargs = {"limit": limit, "min_score": min_score, "boost": boost}
    pruned = search(indexes, query, **kwargs)  # type: ignore[arg-type]
    every = search(indexes, query, keep=lambda key, entry: True, **kwargs)  # type: ignore[arg-type]
    assert pruned == every
