"""BM25 relevance ranking of memory entries, over one inverted index per category file.

Rules:
- Entries and queries are split into terms as `memd.core.search.terms` says: stemmed words without
  stop words, whole identifiers (at `IDENTIFIER_WEIGHT`), adjacent-word phrases, slug words (at
  `SLUG_WEIGHT`).
- A query word found nowhere, at least `PREFIX_MIN` characters long, is taken as a partial
  word: the indexed words starting with it (the `PREFIX_EXPANSIONS` most frequent) match at
  `PREFIX_WEIGHT`.
- Scoring is Okapi BM25 with `K1` and b, idf = ln(1 + (N - df + 0.5) / (df + 0.5)). N and the
  document frequencies are taken over every index passed to one `search` call, so one category
  is ranked against its own corpus and all five against theirs. The average entry length and b
  are taken within each kind of unit searched (memory entries, project and user-wide alike;
  source chunks, `memd.core.search.shelves`): a chunk is long or short among chunks, not beside
  one-line memories (as BM25F normalises each field by its own average).
- b, the strength of length normalisation, follows how much entry lengths vary
  (`length_normalisation`): `B` where they vary as notes or chat turns do (the standard
  deviation of ln(1 + length) up to `SPREAD_LOW`), `B_SPREAD` where short entries sit beside
  entries many times longer (from `SPREAD_HIGH`), linearly between. Where lengths are alike, a
  longer entry usually says more, and weak normalisation lets it; where they differ by an order
  of magnitude, a long entry matches many query words by its size alone and would bury the
  short one that holds the answer.
- A query word or identifier written the other way in an entry (`terms.spelling_alternatives`:
  "github" / "GitHub") matches through its alternative term, planned at the weight of the terms
  it stands for; the ideal entry then holds whichever spelling gains more, so a match through
  the other spelling is not partial.
- Each distinct query term counts once, however often the query repeats it. Each adjacent
  pair of query terms that is also a phrase term of an entry adds `BIGRAM_WEIGHT` times its
  own BM25 score.
- Scores are normalised to 0..1: an entry's BM25 sum divided by the ideal entry's (one holding
  every query word and phrase found in the corpus, saturated; a query word found nowhere still
  counts, at the highest idf, so matching part of a query scores below 1), times the index's
  priority (`memd.core.search.shelves`: Security and Instruction slightly above the rest, a
  source file's chunks slightly below), capped at 1. So `min_score` means the same for every
  query.
- Scores are rounded to 4 decimals. An entry is a match when its score (before any `boost`)
  rounds to at least `min_score`, and to more than 0. `total` counts the matches; the hits are
  the best `limit` of them by boosted score, then by `shelves.order` (the workspace's categories
  in `CATEGORIES` order, then the user-wide scope's, then source files), then line.
- A `boost` (the usage nudge) multiplies a match's score by a factor from 1 to `MAX_BOOST`,
  capped at 1: it reorders near-equal matches, it never makes or unmakes a match.
- A query without searchable terms (empty, punctuation, only stop words) lists every entry in
  (category order, line) order with score 0.0, and `min_score` is ignored.

How it stays fast (exact results, less work): an entry holding one query term scores what its impact
class gives (see `memd.core.search.index`), so for each term only its best classes are walked, and
each class's first `limit` entries in line order stand for the rest; classes are counted, not
visited. Entries holding two or more query terms are found by intersecting the terms' postings (pair
by pair for short queries) and scored one by one, but for those holding just two words whose best
possible score (those words' and their phrase's best gains) cannot beat the `limit` best found so
far: a pair's entries are then skipped whole. A walk stops at the first class that cannot beat the
`limit` best found so far. The walks and the pairs of every index wait in one list, worked from the
highest bound down across all indexes, so that the best candidates are found first and most pairs
of the later indexes are never scored; the first item that cannot make a hit ends the search.
With `keep`, or for a query of more than `_WALK_MOST` words (a prompt), every matching entry is
scored instead (the same results: a property test holds the two to each other).

Size: one scoring function and the search that walks the index with it; they share their invariants.
"""

from __future__ import annotations

import bisect
import heapq
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from memd.core.format.mdformat import Entry
from memd.core.search import shelves
from memd.core.search.index import (
    CLASS_SHIFT,
    DOC_MASK,
    IndexBuild,
    LengthMoments,
    Ranked,
    Saturations,
    SearchIndex,
    TermView,
    build_index,
    changed_entries,
)
from memd.core.search.shelves import Key
from memd.core.search.terms import (
    IDENTIFIER_WEIGHT,
    SLUG_WEIGHT,
    STOP_WORDS,
    bigrams,
    identifiers,
    is_word,
    spelling_alternatives,
    split_terms,
    tokenize,
)

__all__ = [
    "BIGRAM_WEIGHT",
    "B_SPREAD",
    "DECIMALS",
    "IDENTIFIER_WEIGHT",
    "K1",
    "MAX_BOOST",
    "PREFIX_EXPANSIONS",
    "PREFIX_MIN",
    "PREFIX_WEIGHT",
    "SLUG_WEIGHT",
    "SPREAD_HIGH",
    "SPREAD_LOW",
    "STOP_WORDS",
    "B",
    "Boost",
    "Hit",
    "IndexBuild",
    "Keep",
    "SearchIndex",
    "SearchResult",
    "build_index",
    "changed_entries",
    "identifiers",
    "length_normalisation",
    "length_spread",
    "query_weights",
    "search",
    "tokenize",
]

K1 = 1.0
B = 0.3
"""BM25's b where entry lengths vary little (see `length_normalisation`)."""
B_SPREAD = 0.9
"""BM25's b where entry lengths vary most."""
SPREAD_LOW = 0.7
"""Up to this standard deviation of ln(1 + length), b is `B` (notes, chat turns: 0.45-0.7)."""
SPREAD_HIGH = 1.2
"""From this standard deviation of ln(1 + length), b is `B_SPREAD` (one-line messages beside
answers ten times longer: 1.2-1.4)."""
BIGRAM_WEIGHT = 0.3
PREFIX_WEIGHT = 0.6
PREFIX_MIN = 3
PREFIX_EXPANSIONS = 8
MAX_BOOST = 1.05
"""The largest factor a `boost` may give."""
DECIMALS = 4
_UNIT = 10.0**-DECIMALS

_SLACK = 1.0 + 1e-9
"""A bound is widened by this factor, so that summing in another order never puts an entry's
score above it."""
_WALK_MOST = 16
"""Past this many query words (a prompt), every matching entry is scored instead of walking and
intersecting each term's entries: that is cheaper then (on 2 MB of prose and 10k memories,
12 words: 4 ms walked vs 21 ms scored; 27 words: 61 vs 36 ms; a 300-word prompt: 212 vs 15 ms)."""
_PAIRWISE_MOST = 8
"""Up to this many terms, shared entries are found pair by pair (cheapest for short queries)."""

K = TypeVar("K", bound=Key)
"""The key of each index searched: a `Category`, or a `memd.core.search.shelves.Shelf`."""

Boost = Callable[[K, Entry], float]
"""A match's score factor, from 1 to MAX_BOOST."""
Keep = Callable[[K, Entry], bool]
"""Whether an entry may be a hit."""


class Hit(msgspec.Struct, Generic[K], frozen=True, kw_only=True):
    """One ranked entry: the key of its index (a category, a user-wide file or a sources
    segment: a `memd.core.search.shelves.Key` in the server), the entry itself and its relevance
    score."""

    key: K
    entry: Entry
    score: float


class SearchResult(msgspec.Struct, Generic[K], frozen=True, kw_only=True):
    """The best hits (at most `limit`, best first) and how many entries matched in all."""

    hits: tuple[Hit[K], ...]
    total: int


def search(
    indexes: Sequence[tuple[K, SearchIndex]],
    query: str,
    *,
    limit: int,
    min_score: float | None = None,
    boost: Boost[K] | None = None,
    keep: Keep[K] | None = None,
) -> SearchResult[K]:
    """Rank the entries of `indexes` by BM25 relevance to `query`.

    Args:
        indexes: The categories (or other shelves, `memd.core.search.shelves`) to search, each
            with its index; their order does not matter.
        query: Free text. Without searchable terms every entry is listed (see module rules).
        limit: The most hits to return; at least 1.
        min_score: When given, matches must score at least this much (after rounding).
        boost: A factor per match (usage signals, `memd.core.search.usage.nudge`), from 1 to
            `MAX_BOOST`; the boosted score is still capped at 1.
        keep: When given, only entries it accepts can be hits (and count in `total`); the
            others still shape the statistics, so scores do not depend on the filter.

    Returns:
        The best `limit` hits, best first, and the number of entries that matched.
    """
    ordered = sorted(indexes, key=lambda pair: shelves.order(pair[0]))
    weights = query_weights(query)
    if not weights:
        return _list_all(ordered, limit, keep)
    plan = _Plan(
        ordered,
        weights,
        smallest=max(_UNIT, min_score or 0.0),
        alternatives=spelling_alternatives(query),
    )
    if keep is not None or sum(map(is_word, weights)) > _WALK_MOST:
        return _search_every_match(plan, limit, boost, keep)
    return _search_best(plan, limit, boost)


def length_normalisation(spread: float) -> float:
    """Return BM25's b for entries whose lengths spread as much as `spread` says.

    Args:
        spread: The standard deviation of ln(1 + length) over the entries searched (0 when
            they are all alike; 1.0 when a typical entry is e times longer or shorter than
            the geometric mean).

    Returns:
        `B` up to `SPREAD_LOW`, `B_SPREAD` from `SPREAD_HIGH`, linear between.
    """
    if spread <= SPREAD_LOW:
        return B
    if spread >= SPREAD_HIGH:
        return B_SPREAD
    return B + (B_SPREAD - B) * (spread - SPREAD_LOW) / (SPREAD_HIGH - SPREAD_LOW)


def length_spread(moments: Sequence[LengthMoments]) -> float:
    """Return the standard deviation of ln(1 + length) over the entries of several indexes
    (each given by its `SearchIndex.length_moments`); 0.0 without entries."""
    count = sum(found[0] for found in moments)
    if not count:
        return 0.0
    mean = math.fsum(found[1] for found in moments) / count
    square = math.fsum(found[2] for found in moments) / count
    return math.sqrt(max(0.0, square - mean * mean))


def query_weights(query: str) -> dict[str, float]:
    """Return the weight of each distinct term and phrase term of `query`.

    Args:
        query: Free text.

    Returns:
        Each distinct word term (weight 1) and adjacent-word phrase term (`BIGRAM_WEIGHT`);
        empty when the query has no searchable terms.
    """
    words, wholes = split_terms(query)
    weights = dict.fromkeys(words, 1.0)
    for pair in bigrams(words):
        weights.setdefault(pair, BIGRAM_WEIGHT)
    for whole in wholes:
        weights.setdefault(whole, IDENTIFIER_WEIGHT)
    return weights


class _Plan:
    """What one search needs: per index, the query terms it holds with their BM25 gains,
    each impact class's saturation, and the score scale (see the module rules)."""

    def __init__(
        self,
        ordered: Sequence[tuple[Any, SearchIndex]],
        weights: dict[str, float],
        *,
        smallest: float,
        alternatives: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.ordered = ordered
        self.smallest = smallest
        count = sum(len(index) for _, index in ordered)
        self.terms: list[list[tuple[float, str]]] = [[] for _ in ordered]
        highest_idf = math.log(1.0 + (count + 0.5) / 0.5)
        ideals: dict[str, float] = {}  # each query term's part of the ideal entry's score
        found: set[str] = set()
        for term, weight in weights.items():
            idf = self._add_term(term, weight, count)
            if idf:
                ideals[term] = weight * idf * (K1 + 1.0)
                found.add(term)
            elif is_word(term):  # a missing word makes every match partial; a phrase does not
                ideals[term] = weight * highest_idf * (K1 + 1.0)
                if len(term) >= PREFIX_MIN:
                    for longer in _expansions(ordered, term):
                        self._add_term(longer, PREFIX_WEIGHT * weight, count)
        for alternative, members in (alternatives or {}).items():
            stands_for = [member for member in members if member in weights]
            weight = sum(weights[member] for member in stands_for)
            if alternative in weights or not weight:
                continue
            idf = self._add_term(alternative, weight, count)
            if idf:  # the ideal entry holds whichever spelling gains more
                spelled = sum(ideals.pop(member, 0.0) for member in stands_for if member in found)
                for member in stands_for:
                    ideals.pop(member, None)
                ideals[alternative] = max(spelled, weight * idf * (K1 + 1.0))
        ideal = math.fsum(ideals.values())
        self.scales = [
            shelves.priority(category) / ideal if ideal else 0.0 for category, _ in ordered
        ]
        # Length normalisation within each kind of unit (memory entries, source chunks): a
        # chunk is long or short among chunks, not beside one-line memories.
        kinds = [shelves.origin(key) == "file" for key, _ in ordered]
        norms: dict[bool, tuple[float, float]] = {}
        for kind in set(kinds):
            alike = [index for (_, index), same in zip(ordered, kinds, strict=True) if same == kind]
            units = sum(len(index) for index in alike)
            mean = math.fsum(index.total_length for index in alike) / max(units, 1) or 1.0
            b = length_normalisation(length_spread([index.length_moments() for index in alike]))
            norms[kind] = (K1 * (1.0 - b), K1 * b / mean)
        self._norms = [norms[kind] for kind in kinds]

    def _add_term(self, term: str, weight: float, count: int) -> float:
        """Plan `term` at `weight` in each index holding it; return its idf (0.0: none does)."""
        found = [index.frequency(term) for _, index in self.ordered]
        frequency = sum(found)
        if not frequency:
            return 0.0
        idf = math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
        for terms, holding in zip(self.terms, found, strict=True):
            if holding:
                terms.append((weight * idf * (K1 + 1.0), term))
        return idf

    def saturations(self, number: int) -> Saturations:
        """Return `tf / (tf + norm)` for each impact class of the `number`-th index."""
        base, per_length = self._norms[number]
        return self.ordered[number][1].saturations(base, per_length)


_ORDER = operator.itemgetter(0, 1, 2)
"""A candidate's order: best final score, then category, then line."""


class _Best:
    """The candidates for the hits, and the `limit` best final scores seen so far."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.finals: list[float] = []  # a min-heap of at most `limit` scores
        self.candidates: list[tuple[float, int, int, Entry]] = []

    def beats(self, score: float) -> bool:
        """True when `limit` candidates already score more than `score` (so it cannot be a
        hit; equal scores are ordered by category and line, so they can)."""
        return len(self.finals) >= self.limit and self.finals[0] > score

    def add(self, final: float, number: int, entry: Entry) -> None:
        """Add one candidate hit: its final score and the number of its category's index."""
        self.candidates.append((-final, number, entry.line, entry))
        if len(self.finals) < self.limit:
            heapq.heappush(self.finals, final)
        elif final > self.finals[0]:
            heapq.heapreplace(self.finals, final)

    def hits(self, ordered: Sequence[tuple[Any, SearchIndex]]) -> tuple[Hit[Any], ...]:
        """The best `limit` candidates as hits, best first."""
        best = heapq.nsmallest(self.limit, self.candidates, key=_ORDER)
        return tuple(
            Hit(key=ordered[number][0], entry=entry, score=-negated)
            for negated, number, _, entry in best
        )


def _search_best(plan: _Plan, limit: int, boost: Boost[Any] | None) -> SearchResult[Any]:
    """The search without a filter: walk each term's best classes (see the module docstring)."""
    best = _Best(limit)
    total = 0
    # What is left to offer, from every category: each term's walk and each pair of terms'
    # shared entries, by the best score any of their entries can have.
    pending: list[tuple[float, _Walk | None, set[int], _Found, float | _Scorer]] = []
    for number, (category, index) in enumerate(plan.ordered):
        if not plan.terms[number]:
            continue
        scale = plan.scales[number]
        saturation = plan.saturations(number)
        walks: list[_Walk] = []
        words = {term for _, term in plan.terms[number]}
        phrases: list[tuple[_Walk, str, str]] = []  # their entries hold both words
        named: dict[str, int] = {}
        planned: list[_Walk] = []  # in the plan's order: an entry's terms are summed in it
        for gain, term in plan.terms[number]:
            view = index.view(term)
            if view is not None:
                walk = _Walk(gain, scale, plan.smallest, view, view.ranked(saturation))
                planned.append(walk)
                first, _, second = term.partition(" ")
                if second and first != second and first in words and second in words:
                    phrases.append((walk, first, second))
                else:
                    named[term] = len(walks)
                    walks.append(walk)
        overlap = _Overlap([walk.view for walk in walks])
        several = overlap.several
        # A phrase's words, as positions in `walks` (-1: a word not planned in this index).
        paired = [(walk, named.get(one, -1), named.get(other, -1)) for walk, one, other in phrases]
        walks += [walk for walk, _, _ in phrases]
        # Entries holding one query term: their classes are counted, not visited. Entries
        # holding several are scored one by one (and taken back out of those counts).
        total += sum(walk.running[walk.matching] for walk in walks)
        found = _Found(best, number, category, index, boost)
        if several:
            score = _Scorer(planned, saturation, scale)
            total += _offer_several(
                overlap, walks, paired, score, scale, plan.smallest, found, pending
            )
        pending.extend(
            (walk.top * scale, walk, several, found, scale)
            for walk in walks
            if not several or not walk.view.class_of.keys() <= several  # (a phrase's entries
        )  # hold its words too: all in `several`, so there is nothing left to walk)
    # Walks and pairs go best first across all categories, so that most of them stop at once.
    pending.sort(key=lambda item: item[0], reverse=True)
    for top, walked, docs, found, how in pending:
        if found.cannot_reach(top):
            break  # none of these entries can make a hit, nor can any after them
        if isinstance(how, _Scorer):  # a pair's entries (`docs`), scored
            _offer_sorted(found, how.scored(docs))
        else:  # a term's walk, at its category's scale (`docs`: the entries not to walk)
            assert walked is not None
            _walk_classes(walked, how, docs, found)
    return SearchResult(hits=best.hits(plan.ordered), total=total)


def _offer_several(
    overlap: _Overlap,
    walks: list[_Walk],
    phrases: list[tuple[_Walk, int, int]],
    score: _Scorer,
    scale: float,
    smallest: float,
    found: _Found,
    pending: list[tuple[float, _Walk | None, set[int], _Found, float | _Scorer]],
) -> int:
    """Offer the entries holding several query terms that can still be hits, or leave them in
    `pending` (those holding just two words, by their pair's bound: `_search_best` offers them
    best first across categories); return how many of them match, less those already counted
    as single-term matches (`total`'s share).

    `walks` holds the word terms (as `overlap` saw them) then the phrases; `phrases` gives
    each phrase's two words as positions in `walks`.
    """
    several = overlap.several
    if all(walk.matching == len(walk.levels) for walk in walks):
        # The usual case: every entry of every term matches on that term alone (and so does
        # every entry holding several), so the matches are counted without scoring them, and
        # only those that may be hits are scored.
        if overlap.pairs is None:
            counted = sum(len(several & walk.view.class_of.keys()) for walk in walks)
            _offer_sorted(found, score.scored(several))
            return len(several) - counted
        # Entries holding three words or more are scored; one holding just two scores at
        # most those words' and their phrases' best gains, and is scored only if that could
        # still make a hit (the pairs go from the highest such bound down). Each entry was
        # counted once a term it holds: twice for one holding two words, once more for each
        # further word, and once for each phrase (whose entries hold both its words).
        words = [walk.view.class_of.keys() for walk in walks[: len(walks) - len(phrases)]]
        counted = 2 * len(several) + sum(walk.view.size for walk, _, _ in phrases)
        for doc in overlap.more:
            counted += sum(doc in held for held in words) - 2
        _offer_sorted(found, score.scored(overlap.more))
        for (first, second), docs in overlap.pairs.items():
            both = {first, second}
            bound = walks[first].top + walks[second].top
            bound += sum(walk.top for walk, one, other in phrases if {one, other} == both)
            pending.append((bound * scale * _SLACK, None, docs - overlap.more, found, score))
        return len(several) - counted
    return _offer_partial(several, score, smallest, found)


def _offer_partial(several: set[int], score: _Scorer, smallest: float, found: _Found) -> int:
    """`_offer_several` where some term's weakest classes are no match on their own: score
    every entry of `several` and count, in one pass, how many of its terms counted it."""
    counted = 0
    checks = [(walk.view.class_of.get, walk.gain, walk.counted) for walk in score.walks]
    saturation, scale = score.saturation, score.scale
    scored: list[tuple[float, int]] = []
    for doc in several:
        value = 0.0
        for class_of, gain, counted_classes in checks:
            klass = class_of(doc)
            if klass is not None:
                value += gain * saturation[klass]
                if klass in counted_classes:
                    counted += 1
        value = min(1.0, value * scale)
        if round(value, DECIMALS) >= smallest:
            scored.append((value, doc))
    _offer_sorted(found, scored)
    return len(scored) - counted


class _Scorer:
    """An entry's score (before rounding and boost) from the query terms it holds, summed in
    the plan's order (as `_search_every_match` sums them, so both give the same score)."""

    __slots__ = ("lookups", "saturation", "scale", "walks")

    def __init__(self, walks: list[_Walk], saturation: Saturations, scale: float) -> None:
        self.walks = walks
        self.lookups = [(walk.view.class_of.get, walk.gain) for walk in walks]
        self.saturation = saturation
        self.scale = scale

    def scored(self, docs: Iterable[int]) -> list[tuple[float, int]]:
        """Each of `docs` with its score: its terms' gains times their saturations, summed in
        the plan's order, times the scale, at most 1."""
        saturation, scale, lookups = self.saturation, self.scale, self.lookups
        scored = []
        for doc in docs:
            value = 0.0
            for class_of, gain in lookups:
                klass = class_of(doc)
                if klass is not None:
                    value += gain * saturation[klass]
            value *= scale
            scored.append((value if value < 1.0 else 1.0, doc))
        return scored


def _offer_sorted(found: _Found, scored: list[tuple[float, int]]) -> None:
    """Offer scored entries best first, until none left can be a hit."""
    scored.sort(reverse=True)
    best, boost, most, category = found.best, found.boost, found.most, found.category
    entry_of, number, finals, limit = found.index.entry, found.number, best.finals, best.limit
    for score, doc in scored:
        if len(finals) >= limit and finals[0] > round(min(1.0, score * most), DECIMALS):
            break  # `found.cannot_reach(score)`: no lower score can be a hit either
        entry = entry_of(doc)
        if boost is not None:
            score = min(1.0, score * boost(category, entry))
        best.add(round(score, DECIMALS), number, entry)


def _walk_classes(walk: _Walk, scale: float, several: set[int], found: _Found) -> None:
    """Offer the entries holding only `walk`'s term, best class first, until no entry left
    can be a hit; without a boost, a class's first `limit` entries stand for the rest."""
    postings, gain = walk.view.postings, walk.gain
    best, boost, most = found.best, found.boost, found.most
    limit, number, category, entry_of = best.limit, found.number, found.category, found.index.entry
    for level, (_, start, stop) in zip(walk.levels, walk.spans[: walk.matching], strict=False):
        score = min(1.0, gain * level * scale)
        if best.beats(round(min(1.0, score * most), DECIMALS)):
            return
        rounded = round(score, DECIMALS)
        taken = 0  # entries added at `rounded` (not boosted above it)
        for position in range(start, stop):
            doc = postings[position] & DOC_MASK
            if doc in several:
                continue
            entry = entry_of(doc)
            if boost is None:
                best.add(rounded, number, entry)
                taken += 1
                if taken == limit:
                    break  # the rest of the class ties with these, on later lines
                continue
            factor = boost(category, entry)
            if factor == 1.0:
                # Unboosted, it ties with the `limit` taken before it on earlier lines (and
                # adding it would change neither the hits nor the scores to beat): skipped.
                if taken < limit:
                    taken += 1
                    best.add(rounded, number, entry)
                continue
            best.add(round(min(1.0, score * factor), DECIMALS), number, entry)


class _Found:
    """Offers one index's matches to the best candidates, boosted."""

    __slots__ = ("best", "boost", "category", "index", "most", "number")

    def __init__(
        self,
        best: _Best,
        number: int,
        category: Any,
        index: SearchIndex,
        boost: Boost[Any] | None,
    ) -> None:
        self.best = best
        self.number = number
        self.category = category
        self.index = index
        self.boost = boost
        self.most = MAX_BOOST if boost is not None else 1.0

    def cannot_reach(self, score: float) -> bool:
        """True when `limit` matches better than `score` (before the boost) are known, so no
        match scoring at most that can be a hit."""
        return self.best.beats(round(min(1.0, score * self.most), DECIMALS))


class _Walk:
    """One query term in one index, ready to walk: its classes by saturation, how many of
    them hold matches (`matching`: a single-term score that rounds to at least `smallest`),
    and those classes (`counted`)."""

    __slots__ = ("gain", "levels", "matching", "running", "spans", "top", "view")

    def __init__(
        self, gain: float, scale: float, smallest: float, view: TermView, ranked: Ranked
    ) -> None:
        self.gain = gain
        self.view = view
        levels, self.spans, self.running = ranked
        self.levels = levels
        if round(min(1.0, gain * levels[-1] * scale), DECIMALS) >= smallest:
            self.matching = len(levels)  # the usual case: every class holds matches
        else:
            self.matching = bisect.bisect_left(
                levels,
                True,
                key=lambda level: round(min(1.0, gain * level * scale), DECIMALS) < smallest,
            )
        self.top = gain * levels[0] if self.matching else 0.0

    @property
    def counted(self) -> set[int]:
        """The classes whose entries count as matches on this term alone."""
        return {klass for klass, _, _ in self.spans[: self.matching]}


class _Overlap:
    """Which entries hold two or more of some terms (`several`). Up to `_PAIRWISE_MOST`
    terms, also which hold each pair (`pairs`, by the terms' positions) and which hold three
    or more (`more`); past it, `pairs` is None and `more` empty."""

    __slots__ = ("more", "pairs", "several")

    def __init__(self, views: list[TermView]) -> None:
        self.several: set[int] = set()
        self.more: set[int] = set()
        self.pairs: dict[tuple[int, int], set[int]] | None = None
        if len(views) <= _PAIRWISE_MOST:
            self.pairs = {}
            for position, first in enumerate(views):
                for other in range(position + 1, len(views)):
                    both = first.class_of.keys() & views[other].class_of.keys()
                    if both:
                        self.more |= self.several & both
                        self.several |= both
                        self.pairs[position, other] = both
            return
        seen: set[int] = set()
        for view in views:  # a long query (a prompt): linear in the postings, not quadratic
            self.several |= seen & view.class_of.keys()
            seen |= view.class_of.keys()


def _search_every_match(
    plan: _Plan, limit: int, boost: Boost[Any] | None, keep: Keep[Any] | None
) -> SearchResult[Any]:
    """The search with a filter, or for a long query (a prompt): score every entry that holds
    a query term (past `_WALK_MOST` words, walking and intersecting each term's entries costs
    more than scoring them all)."""
    best = _Best(limit)
    total = 0
    for number, (category, index) in enumerate(plan.ordered):
        scale = plan.scales[number]
        saturation = plan.saturations(number)
        values: dict[int, float] = {}
        get = values.get
        for gain, term in plan.terms[number]:
            for packed in index.postings(term) or ():
                doc = packed & DOC_MASK
                values[doc] = get(doc, 0.0) + gain * saturation[packed >> CLASS_SHIFT]
        for doc, value in values.items():
            score = min(1.0, value * scale)
            if round(score, DECIMALS) < plan.smallest:
                continue
            entry = index.entry(doc)
            if keep is not None and not keep(category, entry):
                continue
            total += 1
            if boost is not None:
                score = min(1.0, score * boost(category, entry))
            best.add(round(score, DECIMALS), number, entry)
    return SearchResult(hits=best.hits(plan.ordered), total=total)


def _expansions(ordered: Sequence[tuple[Any, SearchIndex]], prefix: str) -> list[str]:
    """The indexed words a partial query word may mean: those starting with it, the most
    frequent first (then alphabetical), at most PREFIX_EXPANSIONS."""
    frequency: dict[str, int] = {}
    for _, index in ordered:
        for term in index.words_starting(prefix):
            frequency[term] = frequency.get(term, 0) + index.frequency(term)
    ranked = sorted(frequency, key=lambda term: (-frequency[term], term))
    return ranked[:PREFIX_EXPANSIONS]


def _list_all(
    ordered: Sequence[tuple[Any, SearchIndex]], limit: int, keep: Keep[Any] | None
) -> SearchResult[Any]:
    """Return every entry (that `keep` accepts) in (category, line) order with score 0.0: the
    empty-query listing."""
    hits: list[Hit[Any]] = []
    total = 0
    for category, index in ordered:
        for entry in index.entries:
            if keep is not None and not keep(category, entry):
                continue
            total += 1
            if len(hits) < limit:
                hits.append(Hit(key=category, entry=entry, score=0.0))
    return SearchResult(hits=tuple(hits), total=total)
