"""Decide what a store does with new content: skip it, update an entry, or store it as new.

Theory of operation: new content is compared with the entries of its category in two steps.
First the candidates: the entries sharing keywords with it (`wording.keywords`: content words,
numbers, identifiers, CJK character pairs), ranked by keyword Jaccard; `dedup_index` finds them
without scanning the category. Then each candidate is judged word by word (`judge.judge`), and
the decision follows from those judgements.

Rules:
- An entry with the content's normal form (the same words, polarity and tags:
  `wording.normal_form`) or its plain form (the same words but for case and punctuation:
  `wording.plain_form`) is a repeat: skip, matched with the first such entry in file order.
- Candidates: at most CANDIDATES entries, highest keyword Jaccard first, then file order, among
  the entries close to the content (`dedup_index.close`: sharing at least CONTAINMENT of the
  smaller keyword set; no skip or update of the labelled store pairs shares less, so the others
  are other rules without being judged).
- The decision: skip if a candidate says everything the content says (the first such, in
  candidate order); else update the first candidate whose judgement is an update (the replaced
  text goes to the archive; `conflict` when the entry is now wrong); else store, reporting the
  closest candidate and how it relates, so the reply can say why both are kept.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from memd.core.format.mdformat import Entry
from memd.core.writes.dedup_index import close
from memd.core.writes.judge import Judgement, Relation, Verdict, judge
from memd.core.writes.wording import analyse, index_terms, keywords, normal_form, plain_form

__all__ = [
    "CANDIDATES",
    "Match",
    "Verdict",
    "decide",
    "find_match",
    "jaccard",
    "keywords",
    "normal_form",
    "ranked",
]

CANDIDATES = 5
"""How many of the most similar entries a store is judged against."""


class Match(msgspec.Struct, frozen=True, kw_only=True):
    """The decision for new content: the verdict, the entry it concerns, and why.

    `entry` is the entry skipped for or updated, or for a store the closest candidate (None when
    no entry shares a keyword). `relation`, `old_value` and `new_value` come from the judgement
    against `entry` (see `judge.Judgement`).
    """

    verdict: Verdict
    similarity: float
    entry: Entry | None
    conflict: bool
    relation: Relation | None = None
    old_value: str | None = None
    new_value: str | None = None

    @classmethod
    def of(cls, entry: Entry, judgement: Judgement) -> Match:
        """The decision `judgement` makes about `entry`."""
        return cls(
            verdict=judgement.verdict,
            similarity=judgement.similarity,
            entry=entry,
            conflict=judgement.conflict,
            relation=judgement.relation,
            old_value=judgement.old_value,
            new_value=judgement.new_value,
        )


NO_MATCH = Match(verdict=Verdict.STORE, similarity=0.0, entry=None, conflict=False)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Return |a ∩ b| / |a ∪ b|, or 0.0 when either set is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def ranked(content: str, entries: Iterable[Entry]) -> list[Entry]:
    """Return the candidates for `content` among `entries` (one category, in file order), best
    first: a normal-form repeat alone, else the CANDIDATES entries with the highest keyword
    Jaccard among those `close` to it (see the module rules). `dedup_index` gives the same
    list (it finds a plain-form repeat by `wording.plain_key`)."""
    normal, words = index_terms(content)
    plain = plain_form(content)
    scored: list[tuple[float, int, Entry]] = []
    for position, entry in enumerate(entries):
        other_normal, other = index_terms(entry.content)
        if other_normal == normal or plain_form(entry.content) == plain:
            return [entry]
        if close(len(words & other), len(words), len(other)):
            scored.append((-jaccard(words, other), position, entry))
    scored.sort(key=lambda item: item[:2])
    return [entry for _, _, entry in scored[:CANDIDATES]]


def find_match(content: str, entries: Iterable[Entry]) -> Match:
    """Return the decision for storing `content` among `entries` (one category, file order)."""
    return decide(content, ranked(content, entries))


def decide(content: str, candidates: Iterable[Entry]) -> Match:
    """Return the decision for `content` judged against `candidates`, best first (see the
    module rules). Only a candidate holding every content word of `content`, or with its plain
    form (the same words punctuated otherwise can read as others: a quoted `not` is code), can
    be a skip, so those are judged first; then the others in order, up to the first update."""
    ordered = list(candidates)
    if not ordered:
        return NO_MATCH
    words = analyse(content).content
    plain = plain_form(content)
    judged: dict[int, Judgement] = {}

    def judgement(number: int) -> Judgement:
        if number not in judged:
            judged[number] = judge(ordered[number].content, content)
        return judged[number]

    for number, entry in enumerate(ordered):
        holds = words <= analyse(entry.content).content or plain_form(entry.content) == plain
        if holds and judgement(number).verdict is Verdict.SKIP:
            return Match.of(entry, judgement(number))
    for number, entry in enumerate(ordered):
        if judgement(number).verdict is Verdict.UPDATE:
            return Match.of(entry, judgement(number))
    return Match.of(ordered[0], judgement(0))
