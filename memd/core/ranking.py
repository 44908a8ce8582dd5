"""BM25 relevance ranking of memory entries, over one inverted index per category file.

Rules:
- Text is NFKD-normalised with accents dropped, lowercased and split on every character that is
  not a letter or digit, so "fs.open" is "fs" + "open" and "don't" is "don" + "t". Digits are
  kept ("utf8", "2023"). Stop words (`STOP_WORDS`, including "not", "never" and the
  contraction pieces "s", "t", "ll"...) are dropped, the rest stemmed with the Porter2 `stem`.
- Identifiers are split into their words: at `_`, `-`, `.` and `/` joins and at case changes
  ("sendLmRequest" is send + lm + request), and the whole identifier is also one term
  ("=sendlmrequest", at `IDENTIFIER_WEIGHT`), so `snake_case`, `kebab-case` and `file.ts` match
  their parts and, better, themselves.
- An entry is indexed as its content terms plus its slug's terms (the slug split on "-") at
  `SLUG_WEIGHT`: a slug term adds that much to the term's frequency and the entry's length.
  Two terms that are adjacent in the content (after stop words are dropped) also form a phrase
  ("bigram") term.
- A query word found nowhere, at least `PREFIX_MIN` characters long, is taken as a partial
  word: the indexed words starting with it (the `PREFIX_EXPANSIONS` most frequent) match at
  `PREFIX_WEIGHT`.
- Scoring is Okapi BM25 with `K1` and `B`, idf = ln(1 + (N - df + 0.5) / (df + 0.5)). N, the
  document frequencies and the average entry length are taken over every index passed to one
  `search` call, so one category is ranked against its own corpus and all five against theirs.
- Each distinct query term counts once, however often the query repeats it. Each adjacent
  pair of query terms that is also a phrase term of an entry adds `BIGRAM_WEIGHT` times its
  own BM25 score.
- Scores are normalised to 0..1: an entry's BM25 sum divided by the ideal entry's (one holding
  every query word and phrase found in the corpus, saturated; a query word found nowhere still
  counts, at the highest idf, so matching part of a query scores below 1), times the category's
  `PRIORITY` (Security and Instruction slightly above the rest), capped at 1. So `min_score`
  means the same for every query.
- Scores are rounded to 4 decimals. Hits are ordered by score descending, then category in
  `CATEGORIES` order, then line number; entries scoring 0 (or below `min_score`) are not hits.
- A query without searchable terms (empty, punctuation, only stop words) lists every entry in
  (category order, line) order with score 0.0, and `min_score` is ignored.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Sequence

import msgspec

from memd.core.categories import CATEGORIES, Category
from memd.core.mdformat import Entry
from memd.core.stemmer import stem

K1 = 1.0
B = 0.3
SLUG_WEIGHT = 0.5
BIGRAM_WEIGHT = 0.3
IDENTIFIER_WEIGHT = 0.5
PREFIX_WEIGHT = 0.6
PREFIX_MIN = 3
PREFIX_EXPANSIONS = 8
PRIORITY = {Category.SECURITY: 1.1, Category.INSTRUCTION: 1.05}
"""Score factors by category (others 1.0): Security and Instruction rank above near-equals."""
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
_COMPOUND = re.compile(r"[^\W_]+(?:[_\-./][^\W_]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
_WHOLE_PREFIX = "="
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

    __slots__ = (
        "_entries",
        "_lengths",
        "_norms",
        "_postings",
        "_terms",
        "_total_length",
        "_vocabulary",
    )

    def __init__(
        self,
        entries: tuple[Entry, ...],
        lengths: tuple[float, ...],
        postings: dict[str, Postings],
        terms: dict[tuple[str | None, str], EntryTerms] | None = None,
    ) -> None:
        """Wrap prepared index data; use `build_index` instead of calling this directly."""
        self._terms = terms or {}
        self._entries = entries
        self._lengths = lengths
        self._postings = postings
        self._total_length = math.fsum(lengths)
        self._norms: dict[tuple[float, float], tuple[float, ...]] = {}
        self._vocabulary = tuple(sorted(term for term in postings if _is_word(term)))

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

    def words_starting(self, prefix: str) -> list[str]:
        """Return the indexed word terms that start with `prefix` (not `prefix` itself)."""
        start = bisect.bisect_right(self._vocabulary, prefix)
        found = []
        for term in self._vocabulary[start:]:
            if not term.startswith(prefix):
                break
            found.append(term)
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
    return _terms(text)[0]


def identifiers(text: str) -> list[str]:
    """Return the whole-identifier terms of `text`: each `sendLmRequest`, `snake_case`,
    `kebab-case` or `file.ts` as one term (its parts joined, lowercase), in order."""
    return _terms(text)[1]


def _terms(text: str) -> tuple[list[str], list[str]]:
    """Split `text` into word terms and whole-identifier terms (see the module rules)."""
    folded = unicodedata.normalize("NFKD", text)
    if not folded.isascii():
        folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words: list[str] = []
    wholes: list[str] = []
    for compound in _COMPOUND.findall(folded):
        parts = [part.lower() for run in _TOKEN.findall(compound) for part in _camel_parts(run)]
        words.extend(stem(part) for part in parts if part not in STOP_WORDS)
        if len(parts) > 1:
            wholes.append(_WHOLE_PREFIX + "".join(parts))
    return words, wholes


def _camel_parts(run: str) -> list[str]:
    """Split one letters-and-digits run at case changes: "sendLMRequest2" gives send, LM,
    Request, 2; a run in one case stays whole."""
    if not run.isascii() or run.islower() or run.isupper() or run.isdigit():
        return [run]  # case changes split ASCII identifiers only, never words like "Straße"
    return _CAMEL.findall(run) or [run]


def bigrams(terms: Sequence[str]) -> list[str]:
    """Return the phrase terms of `terms`: each adjacent pair joined by a space."""
    return [first + _BIGRAM_SEPARATOR + second for first, second in itertools.pairwise(terms)]


EntryTerms = tuple[dict[str, float], float]
"""An entry's weighted term frequencies and its length."""


def build_index(entries: Sequence[Entry], previous: CategoryIndex | None = None) -> CategoryIndex:
    """Build the inverted index of one category's entries.

    Args:
        entries: The category's entries, normally in file order.
        previous: The index of the file's previous version, if there is one: entries whose
            slug and content did not change reuse its terms instead of being tokenised again,
            so a store or an edit costs only what changed (plus assembling the postings).

    Returns:
        An immutable index to pass to `search` together with its category.
    """
    ordered = tuple(sorted(entries, key=lambda entry: entry.line))
    known = previous._terms if previous is not None else {}
    terms: dict[tuple[str | None, str], EntryTerms] = {}
    lists: dict[str, tuple[list[int], list[float]]] = {}
    lengths: list[float] = []
    for position, entry in enumerate(ordered):
        key = (entry.slug, entry.content)
        entry_terms = terms.get(key) or known.get(key) or _entry_terms(entry)
        terms[key] = entry_terms
        counts, length = entry_terms
        lengths.append(length)
        for term, freq in counts.items():
            found = lists.get(term)
            if found is None:
                lists[term] = ([position], [freq])
            else:
                found[0].append(position)
                found[1].append(freq)
    postings = {term: Postings(tuple(docs), tuple(freqs)) for term, (docs, freqs) in lists.items()}
    return CategoryIndex(ordered, tuple(lengths), postings, terms)


def _entry_terms(entry: Entry) -> tuple[dict[str, float], float]:
    """Return an entry's weighted term frequencies (words, phrases, whole identifiers, slug
    words) and length."""
    words, wholes = _terms(entry.content)
    slug_words = tokenize(entry.slug.replace("-", " ")) if entry.slug else []
    counts: dict[str, float] = {}
    get = counts.get
    for term in words:
        counts[term] = get(term, 0.0) + 1.0
    for term in bigrams(words):
        counts[term] = get(term, 0.0) + 1.0
    for term in wholes:
        counts[term] = get(term, 0.0) + IDENTIFIER_WEIGHT
    for term in slug_words:
        counts[term] = get(term, 0.0) + SLUG_WEIGHT
    length = len(words) + IDENTIFIER_WEIGHT * len(wholes) + SLUG_WEIGHT * len(slug_words)
    return counts, length


def search(
    indexes: Sequence[tuple[Category, CategoryIndex]],
    query: str,
    *,
    limit: int,
    min_score: float | None = None,
    boost: Callable[[Category, Entry], float] | None = None,
    keep: Callable[[Category, Entry], bool] | None = None,
) -> SearchResult:
    """Rank the entries of `indexes` by BM25 relevance to `query`.

    Args:
        indexes: The categories to search, each with its index; their order does not matter.
        query: Free text. Without searchable terms every entry is listed (see module rules).
        limit: The most hits to return; at least 1.
        min_score: When given, hits must score at least this much (after rounding).
        boost: A factor per matching entry (usage signals, `memd.core.usage.nudge`); the
            boosted score is still capped at 1.
        keep: When given, only entries it accepts can be hits (and count in `total`); the
            others still shape the statistics, so scores do not depend on the filter.

    Returns:
        The best `limit` hits, best first, and the number of entries that matched.
    """
    ordered = sorted(indexes, key=lambda pair: _CATEGORY_ORDER[pair[0]])
    weights = query_weights(query)
    if not weights:
        return _list_all(ordered, limit, keep)
    scores = _score(ordered, weights)
    if boost is not None or keep is not None:
        scores = [
            _adjust(category, index, found, boost, keep)
            for (category, index), found in zip(ordered, scores, strict=True)
        ]
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


def _adjust(
    category: Category,
    index: CategoryIndex,
    found: dict[int, float],
    boost: Callable[[Category, Entry], float] | None,
    keep: Callable[[Category, Entry], bool] | None,
) -> dict[int, float]:
    """Drop the entries `keep` refuses and apply `boost` (capped at 1)."""
    adjusted = {}
    for doc, value in found.items():
        entry = index.entries[doc]
        if keep is None or keep(category, entry):
            adjusted[doc] = value if boost is None else min(1.0, value * boost(category, entry))
    return adjusted


def query_weights(query: str) -> dict[str, float]:
    """Return the weight of each distinct term and phrase term of `query`.

    Args:
        query: Free text.

    Returns:
        Each distinct word term (weight 1) and adjacent-word phrase term (`BIGRAM_WEIGHT`);
        empty when the query has no searchable terms.
    """
    words, wholes = _terms(query)
    weights = dict.fromkeys(words, 1.0)
    for pair in bigrams(words):
        weights.setdefault(pair, BIGRAM_WEIGHT)
    for whole in wholes:
        weights.setdefault(whole, IDENTIFIER_WEIGHT)
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
    """Return every matching entry's score in 0..1, per index by position.

    An entry's BM25 sum is divided by the ideal score (every query term present and
    saturated; a term found nowhere counts at the highest idf), times its category's
    `PRIORITY`, capped at 1.
    """
    count = sum(len(index) for _, index in ordered)
    average = math.fsum(index.total_length for _, index in ordered) / max(count, 1) or 1.0
    highest_idf = math.log(1.0 + (count + 0.5) / 0.5)
    plans: list[list[tuple[float, Postings]]] = [[] for _ in ordered]
    ideal = 0.0
    for term, weight in weights.items():
        idf = _plan_term(ordered, plans, term, weight, count)
        if idf:
            ideal += weight * idf * (K1 + 1.0)
        elif _is_word(term):  # a missing word makes every match partial; a phrase does not
            ideal += weight * highest_idf * (K1 + 1.0)
            if len(term) >= PREFIX_MIN:
                for longer in _expansions(ordered, term):
                    _plan_term(ordered, plans, longer, PREFIX_WEIGHT * weight, count)
    factors = (K1 * (1.0 - B), K1 * B / average)
    results = []
    for (category, index), plan in zip(ordered, plans, strict=True):
        scale = PRIORITY.get(category, 1.0) / ideal if ideal else 0.0
        raw = _accumulate(index.norms(*factors), plan)
        results.append({doc: min(1.0, value * scale) for doc, value in raw.items()})
    return results


def _is_word(term: str) -> bool:
    """True for a word term (not a phrase term nor a whole identifier)."""
    return term[0] != _WHOLE_PREFIX and " " not in term


def _expansions(ordered: Sequence[tuple[Category, CategoryIndex]], prefix: str) -> list[str]:
    """The indexed words a partial query word may mean: those starting with it, the most
    frequent first (then alphabetical), at most PREFIX_EXPANSIONS."""
    frequency: dict[str, int] = {}
    for _, index in ordered:
        for term in index.words_starting(prefix):
            postings = index.postings(term)
            frequency[term] = frequency.get(term, 0) + (len(postings.docs) if postings else 0)
    ranked = sorted(frequency, key=lambda term: (-frequency[term], term))
    return ranked[:PREFIX_EXPANSIONS]


def _plan_term(
    ordered: Sequence[tuple[Category, CategoryIndex]],
    plans: list[list[tuple[float, Postings]]],
    term: str,
    weight: float,
    count: int,
) -> float:
    """Add `term`'s BM25 contributions, at `weight`, to each index's plan; return its idf
    (0.0, and nothing added, when no entry holds it)."""
    found = [index.postings(term) for _, index in ordered]
    frequency = sum(len(postings.docs) for postings in found if postings)
    if not frequency:
        return 0.0
    idf = math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
    for plan, postings in zip(plans, found, strict=True):
        if postings:
            plan.append((weight * idf * (K1 + 1.0), postings))
    return idf


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


def _list_all(
    ordered: Sequence[tuple[Category, CategoryIndex]],
    limit: int,
    keep: Callable[[Category, Entry], bool] | None = None,
) -> SearchResult:
    """Return every entry (that `keep` accepts) in (category, line) order with score 0.0: the
    empty-query listing."""
    hits: list[Hit] = []
    total = 0
    for category, index in ordered:
        for entry in index.entries:
            if keep is not None and not keep(category, entry):
                continue
            total += 1
            if len(hits) < limit:
                hits.append(Hit(category=category, entry=entry, score=0.0))
    return SearchResult(hits=tuple(hits), total=total)
