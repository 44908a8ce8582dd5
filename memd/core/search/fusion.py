"""Hybrid ranking: memd's lexical scores and a model's cosine similarities, fused into one
ranked list with one 0..1 score and what matched.

Rules (measured with `bench/fusion_sweep.py`; figures in docs/semantic.md):
- A keyword match is an entry whose words carry the query: a lexical score of at least `EXACT`
  (most of the query's weight, as an exact phrase or identifier has), or at least `STRONG` with
  the model agreeing (cosine at least `SIMILAR`). Weaker lexical hits are the padding BM25 finds
  for almost any question, and in a large workspace a modest lexical hit the model finds
  unrelated is padding too.
- Keyword matches rank first, ordered by `MIX * lexical + (1 - MIX) * cosine`: the model
  reorders them a little, never below an entry only the model found, so an exact or identifier
  match never drops below a vague neighbour.
- Every other entry ranks by cosine alone (its weak lexical score counts for nothing more).
- One score, ordered as the ranking: a keyword match scores `KEYWORD_FLOOR + (1 - KEYWORD_FLOOR)
  * mixed`, at least 0.5; any other entry `KEYWORD_FLOOR * cosine`, below 0.5. `min_score`
  applies to this score, so 0.5 keeps keyword matches only.
- `match`: "both" (a keyword match the model agrees with), "keyword" (an exact match the model
  finds unrelated), "semantic" (ranked by the model alone).
- An entry whose cosine is 0 or less and is not a keyword match is not a result at all. (A cut
  at `SIMILAR` instead cost paraphrase R@5 0.733 -> 0.663 on coding-memory-dev: a paraphrase's
  answer can sit at cosine 0.15 and still be the best there is.)
- Never a score that is not a finite number in 0..1, whatever comes in (`fuse` is the one place
  scores are combined): a cosine that is not finite (NaN: a text the model gave no usable
  vector) means the model has nothing to say about that entry, which is then judged by its
  words alone: a keyword match from `STRONG`, scoring `KEYWORD_FLOOR + (1 - KEYWORD_FLOOR) *
  lexical`, never a result by meaning. So when every cosine is NaN, every lexical hit of at least
  `STRONG` is kept, in lexical order. A lexical score that is not finite counts as 0.
- Only the keyword matches and the best entries by cosine can be results: a caller with many
  entries passes every lexical hit of at least `STRONG` and the `limit + len(those)` best by
  cosine, and counts the others with `semantic_result` (`total` in `memd.server.methods.handlers`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeVar

EXACT = 0.5
"""Lexical score from which a hit is a keyword match whatever the model says."""
STRONG = 0.12
"""Lexical score from which a hit is a keyword match when the model agrees."""
SIMILAR = 0.2
"""Cosine from which the model agrees with a lexical hit."""
MIX = 0.7
"""Weight of the lexical score among keyword matches (the rest is the cosine's)."""
KEYWORD_FLOOR = 0.5
"""The fused score every keyword match has at least, and no other entry reaches."""
RELATED = KEYWORD_FLOOR * SIMILAR
"""The fused score from which the model finds an entry related (a prompt's block keeps those)."""

Match = Literal["keyword", "semantic", "both"]
Key = TypeVar("Key", bound=Hashable)


class Fused(NamedTuple):
    """One result: the entry's key, its 0..1 score and what matched."""

    key: Hashable
    score: float
    match: Match


def is_keyword_match(lexical: float, cosine: float) -> bool:
    """True when an entry's words carry the query (see the module rules)."""
    return lexical >= EXACT or (lexical >= STRONG and cosine >= SIMILAR)


def semantic_result(cosine: Any, min_score: float | None = None) -> Any:
    """Whether an entry that is not a keyword match is a result: its cosine is finite and above
    0, and its fused score at least `min_score`. `cosine` is a float, or an array of them (then
    so is the answer)."""
    result = (cosine > 0) & (cosine < math.inf)
    if min_score is not None:
        result = result & (KEYWORD_FLOOR * cosine >= min_score)
    return result


def fuse(
    lexical: Mapping[Key, float],
    cosine: Mapping[Key, float],
    *,
    limit: int,
    min_score: float | None = None,
) -> list[Fused]:
    """Return the best `limit` entries, fused (see the module rules).

    Args:
        lexical: The lexical hits' scores (0..1), by entry key (hits under `STRONG` may be
            left out: they count for nothing).
        cosine: Each candidate entry's cosine with the query, by the same keys (an entry with
            no cosine counts as unrelated; a cosine that is not finite, as no opinion).
        limit: How many results at most.
        min_score: Drop results whose fused score is below it.
    """
    keyword: list[Fused] = []
    for key, given in lexical.items():
        score = _unit(given)
        similarity = cosine.get(key, 0.0)
        if not math.isfinite(similarity):  # no opinion: its words alone
            if score >= STRONG:
                keyword.append(Fused(key, KEYWORD_FLOOR + (1 - KEYWORD_FLOOR) * score, "keyword"))
            continue
        if not is_keyword_match(score, similarity):
            continue
        mixed = MIX * score + (1 - MIX) * _unit(similarity)
        match: Match = "both" if similarity >= SIMILAR else "keyword"
        keyword.append(Fused(key, KEYWORD_FLOOR + (1 - KEYWORD_FLOOR) * mixed, match))
    chosen = {fused.key for fused in keyword}
    semantic = [
        Fused(key, KEYWORD_FLOOR * _unit(similarity), "semantic")
        for key, similarity in cosine.items()
        if key not in chosen and semantic_result(similarity)
    ]
    ranked = _best(keyword) + _best(semantic)
    if min_score is not None:
        ranked = [fused for fused in ranked if fused.score >= min_score]
    return ranked[:limit]


def _unit(value: float) -> float:
    """`value` within 0..1; 0 when it is not finite."""
    return min(max(value, 0.0), 1.0) if math.isfinite(value) else 0.0


def _best(results: Sequence[Fused]) -> list[Fused]:
    return sorted(results, key=lambda fused: -fused.score)
