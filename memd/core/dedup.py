"""Decide whether new content duplicates, updates or contradicts an existing entry.

Rules (hacklm-spec.md §2.3, §2.9, with memd's fixes from §11.2):
- Keywords: lowercase; drop every character but a-z, 0-9, whitespace and "-"; split on
  whitespace; keep tokens longer than 2 characters that are not stop words; stem each one, so
  "write", "writes" and "writing" are one keyword (HackLM has no stemming).
- Similarity is the Jaccard index of two keyword sets; 0 when either set is empty.
- Normalised-equal text (lowercase, only a-z/0-9/space, whitespace collapsed) is similarity 1.
- Best match: the first entry, in file order, with the strictly greatest similarity.
- Verdict: >= SKIP_THRESHOLD -> skip, >= UPDATE_THRESHOLD -> update, otherwise store.
- A negation flip (always/never, do/don't, use/avoid, enable/disable, allow/disallow,
  keep/remove, must/must not, or a rule and the same rule negated: "Use tabs" / "Never use
  tabs") between the new text and the best match turns a skip into an update and marks it a
  conflict: a reversed rule replaces the old one instead of vanishing.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable

import msgspec

from memd.core.mdformat import Entry
from memd.core.stemmer import stem

SKIP_THRESHOLD = 0.8
UPDATE_THRESHOLD = 0.6

# HackLM's 103 stop words (hacklm-spec.md §2.3).
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "could",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "can",
        "need",
        "dare",
        "to",
        "of",
        "in",
        "for",
        "on",
        "with",
        "at",
        "by",
        "from",
        "as",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "and",
        "but",
        "or",
        "nor",
        "not",
        "so",
        "yet",
        "both",
        "either",
        "neither",
        "each",
        "every",
        "all",
        "any",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "only",
        "own",
        "same",
        "than",
        "too",
        "very",
        "just",
        "because",
        "if",
        "when",
        "while",
        "where",
        "how",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "they",
        "them",
        "their",
        "use",
        "used",
        "using",
        "always",
        "never",
    }
)

_NOT_KEYWORD_CHAR = re.compile(r"[^a-z0-9\s-]")
_NOT_NORMAL_CHAR = re.compile(r"[^a-z0-9\s]")
_SPACES = re.compile(r"\s+")

# Each pair: (pattern for the positive form, pattern for the negative form), whole words.
_NEGATION_PAIRS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (re.compile(positive, re.IGNORECASE), re.compile(negative, re.IGNORECASE))
    for positive, negative in (
        (r"\balways\b", r"\bnever\b"),
        (r"\bdo\b(?!\s+not\b)(?!n)", r"\b(?:don'?t|do\s+not)\b"),
        (r"\buse\b", r"\bavoid\b"),
        (r"\benable\b", r"\bdisable\b"),
        (r"\ballow\b", r"\bdisallow\b"),
        (r"\bkeep\b", r"\bremove\b"),
        (r"\bmust\b(?!\s+not\b)(?!n)", r"\b(?:mustn'?t|must\s+not)\b"),
    )
)


# Words that negate a whole rule; a text with one of them reverses a text with none.
_NEGATOR = re.compile(
    r"\b(?:never|not|no|cannot|(?:do|does|did|must|should|can|could|would|will|wo|is|are)"
    r"n'?t)\b",
    re.IGNORECASE,
)


class Verdict(enum.Enum):
    """What a store should do with new content."""

    STORE = "store"
    UPDATE = "update"
    SKIP = "skip"


class Match(msgspec.Struct, frozen=True, kw_only=True):
    """The dedup decision: verdict, best similarity, best entry, and whether it flips a rule."""

    verdict: Verdict
    similarity: float
    entry: Entry | None
    conflict: bool


@functools.lru_cache(maxsize=65536)
def keywords(text: str) -> frozenset[str]:
    """Return the stemmed keyword set of `text` (see the module rules)."""
    cleaned = _NOT_KEYWORD_CHAR.sub("", text.lower())
    return frozenset(
        _stem(token) for token in cleaned.split() if len(token) > 2 and token not in STOP_WORDS
    )


def _stem(token: str) -> str:
    """`stem(token)`, without running the stemmer on a token ending in a digit: every suffix it
    removes ends in a letter, so such a token is its own stem (identifiers, versions and ids,
    which are also the tokens least likely to be cached)."""
    return token if token[-1].isdigit() else stem(token)


@functools.lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """Return `text` lowercased, reduced to a-z/0-9/space, with whitespace collapsed."""
    return _SPACES.sub(" ", _NOT_NORMAL_CHAR.sub("", text.lower())).strip()


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Return |a ∩ b| / |a ∪ b|, or 0.0 when either set is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def similarity(a: str, b: str) -> float:
    """Return how alike two texts are: 1.0 if normalised-equal, else keyword Jaccard."""
    if normalise(a) == normalise(b):
        return 1.0
    return jaccard(keywords(a), keywords(b))


def is_negation_flip(old: str, new: str) -> bool:
    """Return True if `new` reverses `old` on one of the negation pairs.

    A pair flips when one text has only the positive form and the other the negative form (a
    text holding both forms of a pair, like "use X, avoid Y", does not count as reversing it).
    A text with a negating word ("never", "not", "no", "don't", ...) also reverses a text
    without any.
    """
    if bool(_NEGATOR.search(old)) != bool(_NEGATOR.search(new)):
        return True
    for positive, negative in _NEGATION_PAIRS:
        old_pos, old_neg = bool(positive.search(old)), bool(negative.search(old))
        new_pos, new_neg = bool(positive.search(new)), bool(negative.search(new))
        if (old_pos and not old_neg and new_neg and not new_pos) or (
            old_neg and not old_pos and new_pos and not new_neg
        ):
            return True
    return False


def find_match(content: str, candidates: Iterable[Entry]) -> Match:
    """Return the dedup decision for storing `content` among `candidates` (one category)."""
    normal = normalise(content)
    words = keywords(content)
    best: Entry | None = None
    best_score = 0.0
    for entry in candidates:
        if normalise(entry.content) == normal:
            best, best_score = entry, 1.0
            break
        score = jaccard(words, keywords(entry.content))
        if score > best_score:
            best, best_score = entry, score
    return decide(content, best, best_score)


def decide(content: str, best: Entry | None, score: float) -> Match:
    """Return the verdict for `content` whose best match is `best` with similarity `score`."""
    if best is None or score < UPDATE_THRESHOLD:
        return Match(verdict=Verdict.STORE, similarity=score, entry=best, conflict=False)
    conflict = is_negation_flip(best.content, content)
    if score >= SKIP_THRESHOLD and not conflict:
        return Match(verdict=Verdict.SKIP, similarity=score, entry=best, conflict=False)
    return Match(verdict=Verdict.UPDATE, similarity=score, entry=best, conflict=conflict)
