"""Search terms: how entry text and queries are split into the terms the index holds.

Rules:
- Text is NFKD-normalised with accents dropped, lowercased and split on every character that is
  not a letter or digit, so "fs.open" is "fs" + "open" and "don't" is "don" + "t". Digits are
  kept ("utf8", "2023"). Stop words (`STOP_WORDS`, including "not", "never" and the
  contraction pieces "s", "t", "ll"...) are dropped, the rest stemmed with the Porter2 `stem`.
- Identifiers are split into their words: at `_`, `-`, `.` and `/` joins and at case changes
  ("sendLmRequest" is send + lm + request), and the whole identifier is also one term
  ("=sendlmrequest", at `IDENTIFIER_WEIGHT`), so `snake_case`, `kebab-case` and `file.ts` match
  their parts and, better, themselves.
- A query word also matches the same letters written as an identifier, and the reverse
  (`spelling_alternatives`): "github" finds "GitHub" (its whole term "=github") and "GitHub"
  finds "github" (the joined word's stem), as "followup" finds "follow-up".
- An entry is indexed as its content terms plus its slug's terms (the slug split on "-") at
  `SLUG_WEIGHT`: a slug term adds that much to the term's frequency and the entry's length.
  Two terms that are adjacent in the content (after stop words are dropped) also form a phrase
  ("bigram") term, joined by a space; an index keeps no phrase postings but derives a phrase's
  entries from its two words' when a query asks for it (`phrase_count`).

Splitting a run of text ("sendLmRequest", "fs.open") is memoised, since the same words recur
across entries: indexing costs a dictionary lookup per word once a word has been seen.
"""

from __future__ import annotations

import collections
import itertools
import re
import unicodedata
from collections.abc import Sequence

from memd.core.format.mdformat import Entry
from memd.core.text.memo import memo, table_of
from memd.core.text.stemmer import stem

SLUG_WEIGHT = 0.5
IDENTIFIER_WEIGHT = 0.5

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

WHOLE_PREFIX = "="
"""Marks a whole-identifier term ("=sendlmrequest"); phrase terms hold a space instead."""

_TOKEN = re.compile(r"[^\W_]+")
_COMPOUND = re.compile(r"[^\W_]+(?:[_\-./][^\W_]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
_BIGRAM_SEPARATOR = " "
_COMPOUND_BUDGET = 8 << 20
"""Bytes of split compounds kept (`memo.memo`), each charged 300 + 48 bytes a character (a
camelCase run "aBaB..." splits into a stem per character)."""

EntryTerms = tuple[dict[str, float], float, tuple[float, ...]]
"""An entry's weighted term frequencies, its length and its phrase terms' distinct frequencies."""


def tokenize(text: str) -> list[str]:
    """Return the searchable terms of `text`, in order (see the module rules).

    Args:
        text: Any text: entry content, a slug's words or a query.

    Returns:
        Stemmed, lowercase terms without stop words; may be empty.
    """
    return split_terms(text)[0]


def identifiers(text: str) -> list[str]:
    """Return the whole-identifier terms of `text`: each `sendLmRequest`, `snake_case`,
    `kebab-case` or `file.ts` as one term (its parts joined, lowercase), in order."""
    return split_terms(text)[1]


def split_terms(text: str) -> tuple[list[str], list[str]]:
    """Split `text` into word terms and whole-identifier terms (see the module rules)."""
    if not text.isascii():
        text = _without_accents(text)
    words: list[str] = []
    wholes: list[str] = []
    known = _COMPOUNDS_SEEN.get  # the memo's table probed inline: most of an index build
    for compound in _COMPOUND.findall(text):
        found = known(compound)
        stems, whole = found[0] if found is not None else _compound_terms(compound)
        words += stems
        if whole:
            wholes.append(whole)
    return words, wholes


def _without_accents(text: str) -> str:
    """`text` NFKD-normalised with its combining marks (accents) dropped."""
    if text.isascii():
        return text
    folded = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


@memo(_COMPOUND_BUDGET, base=300, per_char=48)
def _compound_terms(compound: str) -> tuple[tuple[str, ...], str]:
    """The stemmed word terms of one compound ("sendLmRequest", "fs.open", "Writing") and its
    whole-identifier term ("" when it is a single word)."""
    parts = [part.lower() for run in _TOKEN.findall(compound) for part in _camel_parts(run)]
    stems = tuple(stem(part) for part in parts if part not in STOP_WORDS)
    return stems, (WHOLE_PREFIX + "".join(parts) if len(parts) > 1 else "")


_COMPOUNDS_SEEN = table_of(_compound_terms)


def _camel_parts(run: str) -> list[str]:
    """Split one letters-and-digits run at case changes: "sendLMRequest2" gives send, LM,
    Request, 2; a run in one case stays whole."""
    if not run.isascii() or run.islower() or run.isupper() or run.isdigit():
        return [run]  # case changes split ASCII identifiers only, never words like "Straße"
    return _CAMEL.findall(run) or [run]


def spelling_alternatives(text: str) -> dict[str, tuple[str, ...]]:
    """Return each other spelling of the words of a query `text`, with the terms it stands for.

    A single word ("github") may be written as an identifier elsewhere ("GitHub", "git-hub"):
    its alternative is that identifier's whole term ("=github"), standing for the word's stem.
    An identifier ("GitHub", "follow-up") may be written as one word elsewhere: its
    alternative is the joined word's stem ("github"), standing for the identifier's word terms
    and whole term. Stop words have none.

    Args:
        text: A query.

    Returns:
        Each alternative term mapped to the query terms it stands for; empty when none.
    """
    text = _without_accents(text)
    alternatives: dict[str, tuple[str, ...]] = {}
    for compound in _COMPOUND.findall(text):
        stems, whole = _compound_terms(compound)
        if whole:
            joined = stem(whole.removeprefix(WHOLE_PREFIX))
            if joined not in stems:
                alternatives.setdefault(joined, (*stems, whole))
        elif stems:
            alternatives.setdefault(WHOLE_PREFIX + compound.lower(), stems)
    return alternatives


def bigrams(terms: Sequence[str]) -> list[str]:
    """Return the phrase terms of `terms`: each adjacent pair joined by a space."""
    return [first + _BIGRAM_SEPARATOR + second for first, second in itertools.pairwise(terms)]


def is_word(term: str) -> bool:
    """True for a word term (not a phrase term nor a whole identifier)."""
    return term[0] != WHOLE_PREFIX and _BIGRAM_SEPARATOR not in term


def entry_terms(entry: Entry) -> EntryTerms:
    """Return an entry's weighted term frequencies (words, whole identifiers, slug words), its
    length, and the distinct frequencies of its phrase terms (not the phrases themselves: an
    index derives a phrase's entries when a query asks, see `phrase_count`)."""
    words, wholes = split_terms(entry.content)
    slug_words = _slug_words(entry.slug) if entry.slug else ()
    counts: dict[str, float] = dict.fromkeys(words, 0.0)
    if len(words) < 2:
        phrase_frequencies: tuple[float, ...] = ()
    elif len(counts) == len(words):
        phrase_frequencies = _ONCE  # no word twice: every adjacent pair once
    else:
        phrase_frequencies = tuple(
            sorted({float(n) for n in collections.Counter(itertools.pairwise(words)).values()})
        )
    for term in words:
        counts[term] += 1.0
    get = counts.get
    for term in wholes:
        counts[term] = get(term, 0.0) + IDENTIFIER_WEIGHT
    for term in slug_words:
        counts[term] = get(term, 0.0) + SLUG_WEIGHT
    length = len(words) + IDENTIFIER_WEIGHT * len(wholes) + SLUG_WEIGHT * len(slug_words)
    return counts, length, phrase_frequencies


_ONCE = (1.0,)


def phrase_count(content: str, first: str, second: str) -> int:
    """Return how often the phrase term `first second` occurs in an entry's `content`: how
    many times the word term `second` directly follows `first` (stop words dropped)."""
    words = split_terms(content)[0]
    return sum(1 for pair in itertools.pairwise(words) if pair == (first, second))


def split_phrase(term: str) -> tuple[str, str] | None:
    """Return a phrase term's two word terms, or None for any other term."""
    first, separator, second = term.partition(_BIGRAM_SEPARATOR)
    return (first, second) if separator and term[0] != WHOLE_PREFIX else None


def _slug_words(slug: str) -> list[str]:
    """A slug's word terms (its parts are joined by "-"): `tokenize(slug.replace("-", " "))`,
    with each plain part ("database", "v2") looked up as the compound it is, and a number
    ("-2", "-1041": often what makes a slug unique) its own term, never kept in the memo."""
    words: list[str] = []
    known = _COMPOUNDS_SEEN.get
    for part in slug.split("-"):
        if part.isascii() and part.isdigit():
            words.append(part)  # what `_compound_terms` gives a number: itself
        elif part.isascii() and part.isalnum():
            found = known(part)
            words += found[0][0] if found is not None else _compound_terms(part)[0]
        elif part:
            words += split_terms(part)[0]
    return words
