"""BM25 relevance ranking of memory entries, over one inverted index per category file.

Rules:
- Text is NFKD-normalised with accents dropped, lowercased and split on every character that is
  not a letter or digit, so "fs.open" is "fs" + "open" and "don't" is "don" + "t". Digits are
  kept ("utf8", "2023"). Stop words (`STOP_WORDS`, including "not", "never" and the
  contraction pieces "s", "t", "ll"...) are dropped, the rest stemmed with the Porter2 `stem`.
- An entry is indexed as its content terms plus its slug's terms (the slug split on "-") at
  `SLUG_WEIGHT`: a slug term adds that much to the term's frequency and the entry's length.
  Two terms that are adjacent in the content (after stop words are dropped) also form a phrase
  ("bigram") term.
- Scoring is Okapi BM25 with `K1` and `B`, idf = ln(1 + (N - df + 0.5) / (df + 0.5)). N, the
  document frequencies and the average entry length are taken over every index passed to one
  `search` call, so one category is ranked against its own corpus and all five against theirs.
- Each distinct query term counts once, however often the query repeats it. Each adjacent
  pair of query terms that is also a phrase term of an entry adds `BIGRAM_WEIGHT` times its
  own BM25 score.
- Scores are rounded to 4 decimals. Hits are ordered by score descending, then category in
  `CATEGORIES` order, then line number; entries scoring 0 (or below `min_score`) are not hits.
- A query without searchable terms (empty, punctuation, only stop words) lists every entry in
  (category order, line) order with score 0.0, and `min_score` is ignored.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Sequence

import msgspec

from memd.core.categories import CATEGORIES, Category
from memd.core.mdformat import Entry
from memd.core.stemmer import stem

K1 = 1.0
B = 0.3
SLUG_WEIGHT = 0.5
BIGRAM_WEIGHT = 0.3
DECIMALS = 4
_UNIT = 10.0**-DECIMALS
_NORM_CACHE_SIZE = 8

_STOP_WORDS_TEXT = """
a about above after again against all am an and any are aren as at be because been before being
below between both but by can cannot could couldn d did didn do does doesn doing don down
during each few for from further had hadn has hasn have haven having he her here hers herself
him himself his how i if in into is isn it its itself just ll m me more most mustn my myself
never no nor not now o of off on once only or other ought our ours ourselves out over own re s
same shan she should shouldn so some such t than that the their theirs them themselves then
there these they this those through to too under until up ve very was wasn we were weren what
when where which while who whom why will with won would wouldn y you your yours yourself
yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

_TOKEN = re.compile(r"[^\W_]+")
_BIGRAM_SEPARATOR = " "

_CATEGORY_ORDER = {category: position for position, category in enumerate(CATEGORIES)}


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One ranked entry: its category, the entry itself and its relevance score."""

    category: Category
    entry: Entry
    score: float


class SearchResult(msgspec.Struct, frozen=True, kw_only=True):
    """The best hits (at most `limit`, best first) and how many entries matched in all."""

    hits: tuple[Hit, ...]
    total: int


class Postings(msgspec.Struct, frozen=True):
    """The entries (by position in the index) holding one term, with the term's frequency."""

    docs: tuple[int, ...]
    freqs: tuple[float, ...]


class CategoryIndex:
    """An immutable inverted index over the entries of one category file.

    Build it with `build_index` once per version of the file; `search` combines several.
    Entries are kept sorted by line number; postings refer to them by position.
    """

    __slots__ = ("_entries", "_lengths", "_norms", "_postings", "_total_length")

    def __init__(
        self,
        entries: tuple[Entry, ...],
        lengths: tuple[float, ...],
        postings: dict[str, Postings],
    ) -> None:
        """Wrap prepared index data; use `build_index` instead of calling this directly."""
        self._entries = entries
        self._lengths = lengths
        self._postings = postings
        self._total_length = math.fsum(lengths)
        self._norms: dict[tuple[float, float], tuple[float, ...]] = {}

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The indexed entries, sorted by line number."""
        return self._entries

    @property
    def lengths(self) -> tuple[float, ...]:
        """Each entry's length in terms (slug terms weighted), by position."""
        return self._lengths

    @property
    def total_length(self) -> float:
        """The sum of all entry lengths."""
        return self._total_length

    def norms(self, base: float, per_length: float) -> tuple[float, ...]:
        """Return `base + per_length * length` for each entry (memoised per pair of factors).

        The memo is an invisible cache: the index never changes observably.
        """
        key = (base, per_length)
        found = self._norms.get(key)
        if found is None:
            found = tuple(base + per_length * length for length in self._lengths)
            if len(self._norms) >= _NORM_CACHE_SIZE:
                self._norms.clear()
            self._norms[key] = found
        return found

    def postings(self, term: str) -> Postings | None:
        """Return the entries holding `term` with its frequencies, or None."""
        return self._postings.get(term)

    def __len__(self) -> int:
        """Return the number of indexed entries."""
        return len(self._entries)

    def __repr__(self) -> str:
        """Return a short description (entry and term counts)."""
        return f"CategoryIndex(entries={len(self._entries)}, terms={len(self._postings)})"


def tokenize(text: str) -> list[str]:
    """Return the searchable terms of `text`, in order (see the module rules).

    Args:
        text: Any text: entry content, a slug's words or a query.

    Returns:
        Stemmed, lowercase terms without stop words; may be empty.
    """
    folded = unicodedata.normalize("NFKD", text.lower())
    if not folded.isascii():
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return [stem(token) for token in _TOKEN.findall(folded) if token not in STOP_WORDS]


def bigrams(terms: Sequence[str]) -> list[str]:
    """Return the phrase terms of `terms`: each adjacent pair joined by a space."""
    return [first + _BIGRAM_SEPARATOR + second for first, second in itertools.pairwise(terms)]


def build_index(entries: Sequence[Entry]) -> CategoryIndex:
    """Build the inverted index of one category's entries.

    Args:
        entries: The category's entries, normally in file order.

    Returns:
        An immutable index to pass to `search` together with its category.
    """
    ordered = tuple(sorted(entries, key=lambda entry: entry.line))
    lists: dict[str, tuple[list[int], list[float]]] = {}
    lengths: list[float] = []
    for position, entry in enumerate(ordered):
        counts, length = _entry_terms(entry)
        lengths.append(length)
        for term, freq in counts.items():
            found = lists.get(term)
            if found is None:
                lists[term] = ([position], [freq])
            else:
                found[0].append(position)
                found[1].append(freq)
    postings = {term: Postings(tuple(docs), tuple(freqs)) for term, (docs, freqs) in lists.items()}
    return CategoryIndex(ordered, tuple(lengths), postings)


def _entry_terms(entry: Entry) -> tuple[dict[str, float], float]:
    """Return an entry's weighted term frequencies (words, phrases, slug words) and length."""
    words = tokenize(entry.content)
    slug_words = tokenize(entry.slug.replace("-", " ")) if entry.slug else []
    counts: dict[str, float] = {}
    get = counts.get
    for term in words:
        counts[term] = get(term, 0.0) + 1.0
    for term in bigrams(words):
        counts[term] = get(term, 0.0) + 1.0
    for term in slug_words:
        counts[term] = get(term, 0.0) + SLUG_WEIGHT
    return counts, len(words) + SLUG_WEIGHT * len(slug_words)


def search(
    indexes: Sequence[tuple[Category, CategoryIndex]],
    query: str,
    *,
    limit: int,
    min_score: float | None = None,
) -> SearchResult:
    """Rank the entries of `indexes` by BM25 relevance to `query`.

    Args:
        indexes: The categories to search, each with its index; their order does not matter.
        query: Free text. Without searchable terms every entry is listed (see module rules).
        limit: The most hits to return; at least 1.
        min_score: When given, hits must score at least this much (after rounding).

    Returns:
        The best `limit` hits, best first, and the number of entries that matched.
    """
    ordered = sorted(indexes, key=lambda pair: _CATEGORY_ORDER[pair[0]])
    weights = query_weights(query)
    if not weights:
        return _list_all(ordered, limit)
    scores = _score(ordered, weights)
    raw: list[float] = []
    for found in scores:
        raw.extend(found.values())
    raw.sort()
    smallest = max(_UNIT, 0.0 if min_score is None else min_score)
    first = _first_rounding_to(raw, smallest)
    total = len(raw) - first
    if not total:
        return SearchResult(hits=(), total=0)
    cut = round(raw[max(first, len(raw) - limit)], DECIMALS)
    threshold = raw[_first_rounding_to(raw, cut)]
    best = sorted(
        [
            (-round(value, DECIMALS), number, doc)
            for number, found in enumerate(scores)
            for doc, value in found.items()
            if value >= threshold
        ]
    )[:limit]
    hits = tuple(
        Hit(category=ordered[number][0], entry=ordered[number][1].entries[doc], score=-negated)
        for negated, number, doc in best
    )
    return SearchResult(hits=hits, total=total)


def query_weights(query: str) -> dict[str, float]:
    """Return the weight of each distinct term and phrase term of `query`.

    Args:
        query: Free text.

    Returns:
        Each distinct word term (weight 1) and adjacent-word phrase term (`BIGRAM_WEIGHT`);
        empty when the query has no searchable terms.
    """
    words = tokenize(query)
    weights = dict.fromkeys(words, 1.0)
    for pair in bigrams(words):
        weights.setdefault(pair, BIGRAM_WEIGHT)
    return weights


def _first_rounding_to(ascending: list[float], smallest: float) -> int:
    """Return the first position whose value rounds to at least `smallest` (binary search)."""
    low, high = 0, len(ascending)
    while low < high:
        middle = (low + high) // 2
        if round(ascending[middle], DECIMALS) >= smallest:
            high = middle
        else:
            low = middle + 1
    return low


def _score(
    ordered: Sequence[tuple[Category, CategoryIndex]], weights: dict[str, float]
) -> list[dict[int, float]]:
    """Return the raw BM25 score of every entry holding a query term, per index by position."""
    count = sum(len(index) for _, index in ordered)
    average = math.fsum(index.total_length for _, index in ordered) / max(count, 1) or 1.0
    plans: list[list[tuple[float, Postings]]] = [[] for _ in ordered]
    for term, weight in weights.items():
        found = [index.postings(term) for _, index in ordered]
        frequency = sum(len(postings.docs) for postings in found if postings)
        if not frequency:
            continue
        idf = math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
        for plan, postings in zip(plans, found, strict=True):
            if postings:
                plan.append((weight * idf * (K1 + 1.0), postings))
    factors = (K1 * (1.0 - B), K1 * B / average)
    return [
        _accumulate(index.norms(*factors), plan)
        for (_, index), plan in zip(ordered, plans, strict=True)
    ]


def _accumulate(norm: tuple[float, ...], plan: list[tuple[float, Postings]]) -> dict[int, float]:
    """Sum BM25 contributions `gain * tf / (tf + norm)` per entry, longest postings first."""
    if not plan:
        return {}
    plan.sort(key=lambda item: len(item[1].docs), reverse=True)
    gain, postings = plan[0]
    scores = {
        doc: gain * tf / (tf + norm[doc])
        for doc, tf in zip(postings.docs, postings.freqs, strict=True)
    }
    get = scores.get
    for gain, postings in plan[1:]:
        for doc, tf in zip(postings.docs, postings.freqs, strict=True):
            scores[doc] = get(doc, 0.0) + gain * tf / (tf + norm[doc])
    return scores


def _list_all(ordered: Sequence[tuple[Category, CategoryIndex]], limit: int) -> SearchResult:
    """Return every entry in (category, line) order with score 0.0: the empty-query listing."""
    hits: list[Hit] = []
    for category, index in ordered:
        if len(hits) >= limit:
            break
        wanted = index.entries[: limit - len(hits)]
        hits.extend(Hit(category=category, entry=entry, score=0.0) for entry in wanted)
    return SearchResult(hits=tuple(hits), total=sum(len(index) for _, index in ordered))
