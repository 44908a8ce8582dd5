"""Judge a new memory against one existing entry: skip it, update the entry, or store it apart.

`judge(old, new)` compares the two texts word by word (`memd.core.writes.wording`): it aligns their
words, finds what was replaced, added, dropped or moved, reads the role of each replaced phrase
and the polarity of every shared word, and returns a `Judgement`: how the texts relate, the
verdict that follows, whether the old entry is now wrong (`conflict`), and the old and new values
when one was swapped.

The one rule above the others: a new memory is never thrown away unless it says nothing the
entry does not, and an entry is never replaced by a different rule. Where the reading is
uncertain, the verdict leans to keeping data: update rather than skip (the old text goes to the
archive), store rather than update (both stay).

Entries scoped to different files (`(paths: ...)` markers naming different globs, or one
scoped and one not: `memd.core.format.path_scopes`) are different rules whatever their words:
UNRELATED (store both). A scope is never widened, narrowed or dropped by a dedup.

Relations, checked in this order (the first that applies decides):
1. SAME (skip): the same words with the same polarity and tags; formatting, articles, "always"
   and small words other than opposites ("with" / "via", a dropped "to") do not count. Texts
   with one `wording.plain_form` (equal but for case and punctuation) are the same whatever
   their punctuation does to the reading: "Log errors with the structured logger, not
   console.log." / "log errors with the structured logger not console.log" (a comma scopes a
   "not"; without it the whole clause reads negated) is a repeat, never a reversal.
2. UNRELATED (store): no content word in common, unless the texts differ in a single short
   phrase in the same frame, one phrase on each side ("Use pnpm." / "Use Bun."; not "Use tabs
   for indentation." / "Use pnpm.").
3. REVERSED (update, conflict), by order: what an ordering word orders swapped sides, with no
   word lost ("start A before B" / "start B before A").
4. OTHER_SUBJECT (store): a replaced phrase names which thing the rule is about: the subject, a
   word that qualifies a kept noun ("the Stripe key" / "the Twilio key"), the object of a verb
   that does not choose ("Strip PII from error logs" / "... analytics events"), anything in a
   phrase led by a scope word ("for", "from", "against"), an environment or platform
   ("staging", "Windows"), the object of a ban ("No secrets in git" / "... in logs": both bans
   hold), or anything that opens the sentence ("<Uploads> over 5 MB time out", even a number)
   but an opposite ("Enable X" / "Disable X"). A phrase led by a tool preposition names a
   place, not a tool, after the clause already chose ("Use React Query in <the admin app>") or
   after a noun with an article ("an index on <X>"). A replaced phrase of more than MAX_SWAP
   words on either side is read the same way, and so is a look-alike: a word swapped for one
   of its stem with another ending ("the Kubernetes <operator>" / "a Kubernetes <operation>").
   One frame: when every word but one slot is the same on both sides (same order, same
   polarity), the slot is at most FRAME_SLOT words a side and at least FRAME_SHARED content
   words stand around it, the slot is read by its place in the sentence. A rule has a topic,
   what it is about, and a comment, what it says holds; a slot in the comment holds an
   alternative for one role (a tool, a format, a value, a time, a branch, a version, a
   language) and is CHANGED_CHOICE or CHANGED_VALUE (rules 7, 8), not another subject. The
   slot is in the comment (`_in_comment`) when:
   - it is the subject of a clause that names the one holder of a role: before the auxiliary,
     with a predicate that opens with a definite noun ("<Python 3.11> is the minimum version";
     not "<Migration 0042> is irreversible", a fact about one of many);
   - or nothing after it in its clause says more (only environments may follow: "in CI"), and
     it is either a last bare word after a verb and its object or subject, not a noun of its
     own ("Run the integration suite <nightly>", "is wiped every <Sunday>"; not "covers the
     <SF> office", "Log failed <logins>": too few shared words), or a word qualifying a kept
     noun that ends a phrase led by a tool, place or source preposition
     (COMMENT_PREPOSITIONS: "from the <main> branch", "in <YAML> files", "as <conventional>
     commits", "against a <Postgres> container"), unless the clause already chose ("Use React
     Query in the <admin> app": a place) or the slot is a part of an identifier whose other
     parts stay (`RUST_<BACKTRACE>` / `RUST_<LOG>`).
   A slot followed by a phrase that still says something is the topic ("Cache <user
   sessions> in Redis", "Run <unit> tests on every push": two rules). A swap under a ban, of
   an environment, or of a look-alike stays another subject in a frame too.
5. REVERSED (update, conflict): a shared word is negated in one text and not in the other,
   and the other text holds all of the negated clause ("Commit the lockfile" / "Don't commit
   the lockfile"; "Use UTC" / "Use local time, not UTC"; but not "Never log access tokens" /
   "Access tokens expire after 15 minutes"); or a word swapped for its opposite ("before" /
   "after", "enable" / "disable", "--frozen-lockfile" / "--no-frozen-lockfile").
6. OTHER_ROLES (store): the shared words come in another order ("The billing module must not
   import from auth" / "The auth module must not import from billing"; a word and its
   derivation count as one: "Deploy tests" / "Test deployments"), unless only a phrase
   moved whole with its preposition ("Before deploying, run tests"): that is the same wording,
   and the rules below go on.
7. CHANGED_VALUE (update, conflict): only numbers changed ("15 minutes" / "60 minutes", "Node
   18" / "Node 20"), maybe with their unit; words may be added (a reason), none dropped.
8. CHANGED_CHOICE (update, conflict): the chosen alternative was swapped: the object of a
   choosing verb ("Use pnpm" / "Use Bun") or the end of a phrase led by a tool preposition
   ("Format Python with black" / "... with ruff format"; "run in make test" / "... make lint");
   again words may be added, none dropped.
9. VALUE_MADE_EXACT (update): a vague amount became a number ("about an hour" / "60 minutes").
10. NARROWS (store): the entry is a ban and the new text adds a limiting phrase to it, the
    mirror of BROADENS ("Never push to main" / "Never push to main on Fridays"): the wider ban
    must not be replaced by a narrower one, so both are kept. A text that drops, from an entry
    that is not a ban, a phrase led by a limiting word ("in", "for", ...; see
    `lexicon.LIMITING`) is OTHER_SUBJECT (store), naming the phrase: "Use tabs for indentation"
    is a wider rule than "... in Go files", not a shorter form of it to skip. The other way
    round, a phrase led by "in", "for", "only", "inside" or "within" added to such an entry
    (`lexicon.NARROWING`) is OTHER_SUBJECT too, a narrower rule beside the wider one; other
    added phrases ("on save", "under the Unreleased heading") are ADDS_DETAIL.
11. ADDS_DETAIL (update): the new text holds every content word of the entry and more.
12. BROADENS (update): the new text, still a ban, drops a limiting phrase from it ("Never run
    load tests against production" / "Never run load tests"): a wider ban is new information.
13. SAYS_LESS (skip): the new text only drops words from the entry (a part of a list, a
    reason, a detail), and makes no choice and uses no small word the entry does not ("Always
    use tabs" is not a part of "Indent Python code with tabs").
14. REWORDED (update) when at least REWORDED_OVERLAP of the content words are shared and no
    environment or platform was swapped, else DIFFERENT (store).
New or changed tags turn a skip into an update (TAGS): tags are metadata, never a conflict.
A text of more than MAX_WORDS words is only ever SAME (equal normal forms) or DIFFERENT.

Size: one ordered rule table, first match decides; splitting it would hide the order that decides.
"""

from __future__ import annotations

import difflib
import enum
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from memd.core.format.path_scopes import scope_of
from memd.core.writes import lexicon
from memd.core.writes.wording import Kind, Word, Wording, analyse, is_cjk, plain_form

_ID = re.compile(r"v?\d+")
MAX_SWAP = 3
"""A replaced phrase longer than this (content words, either side) is another subject."""
REWORDED_OVERLAP = 0.5
"""Share of content words two texts must have in common to be read as one rule reworded."""
FRAME_SHARED = 3
"""Content words two texts must share around one swapped slot to be read as one frame."""
FRAME_SLOT = 2
"""The most content words a side that a frame's swapped slot holds."""
COMMENT_PREPOSITIONS = (lexicon.INSTRUMENT - lexicon.ATTRIBUTIVE) | frozenset({"from", "against"})
"""Prepositions whose phrase, ending a clause, says what a rule holds: a tool, a place, a
source, a form ("with the <structured> logger", "from the <main> branch", "in <YAML> files",
"against a <Postgres> container");
not "on" / "to", whose object is more often a target the rule applies to ("Grant access to
<analytics>")."""
_QUANTIFIER_KEYS = frozenset(lexicon.QUANTIFIERS.values())
MAX_WORDS = 200
"""Texts longer than this (words, either side) are compared only by their normal forms: a
memory is one sentence, and aligning two essays word by word costs time a store must not."""


class Verdict(enum.Enum):
    """What a store does with new content."""

    STORE = "store"
    UPDATE = "update"
    SKIP = "skip"


class Relation(enum.Enum):
    """How a new memory relates to an existing entry (see the module rules)."""

    SAME = "same"
    SAYS_LESS = "says_less"
    TAGS = "tags"
    ADDS_DETAIL = "adds_detail"
    VALUE_MADE_EXACT = "value_made_exact"
    BROADENS = "broadens"
    NARROWS = "narrows"
    REWORDED = "reworded"
    CHANGED_VALUE = "changed_value"
    CHANGED_CHOICE = "changed_choice"
    REVERSED = "reversed"
    OTHER_SUBJECT = "other_subject"
    OTHER_ROLES = "other_roles"
    DIFFERENT = "different"
    UNRELATED = "unrelated"


_VERDICTS = {
    Relation.SAME: Verdict.SKIP,
    Relation.SAYS_LESS: Verdict.SKIP,
    Relation.TAGS: Verdict.UPDATE,
    Relation.ADDS_DETAIL: Verdict.UPDATE,
    Relation.VALUE_MADE_EXACT: Verdict.UPDATE,
    Relation.BROADENS: Verdict.UPDATE,
    Relation.NARROWS: Verdict.STORE,
    Relation.REWORDED: Verdict.UPDATE,
    Relation.CHANGED_VALUE: Verdict.UPDATE,
    Relation.CHANGED_CHOICE: Verdict.UPDATE,
    Relation.REVERSED: Verdict.UPDATE,
    Relation.OTHER_SUBJECT: Verdict.STORE,
    Relation.OTHER_ROLES: Verdict.STORE,
    Relation.DIFFERENT: Verdict.STORE,
    Relation.UNRELATED: Verdict.STORE,
}
CONFLICTS = frozenset({Relation.CHANGED_VALUE, Relation.CHANGED_CHOICE, Relation.REVERSED})
"""Relations after which the old entry is wrong: the update replaces a contradicted rule."""


class Judgement(NamedTuple):
    """The decision for storing `new` beside `old`, and why."""

    relation: Relation
    similarity: float
    """Shared content words over all content words (1.0 for SAME)."""
    old_value: str | None = None
    """For a swap (value, choice, subject, opposite): the old words, as the entry wrote them."""
    new_value: str | None = None
    """The words that replace `old_value`, as the new text wrote them."""

    @property
    def verdict(self) -> Verdict:
        """Skip, update or store (see the module rules)."""
        return _VERDICTS[self.relation]

    @property
    def conflict(self) -> bool:
        """True if the entry is now wrong: a reversed rule, a changed value or choice."""
        return self.relation in CONFLICTS


class _Swap(NamedTuple):
    """A phrase of the old text replaced by a phrase of the new one."""

    old: tuple[Word, ...]
    new: tuple[Word, ...]
    before: Word | None
    """The old text's word right before the phrase, if any."""
    after: Word | None
    """The old text's word right after the phrase, if any."""
    leading: tuple[Word, ...]
    """The old text's words of the same clause before the phrase."""
    declarative: bool
    """The phrase's clause has an auxiliary or modal ("is", "must"): it has a subject."""


class _Diff:
    """What changed between two wordings, from their aligned word keys."""

    def __init__(self, old: Wording, new: Wording) -> None:
        self.old, self.new = old, new
        self.swaps: list[_Swap] = []
        self.dropped: list[tuple[tuple[Word, ...], Word | None]] = []
        """Runs of the old text whose content the new one lacks, each with the word before it."""
        self.added: list[tuple[Word, ...]] = []
        self.small: list[tuple[tuple[Word, ...], tuple[Word, ...]]] = []
        """Small words swapped for others where nothing else changed ("after" / "before")."""
        a, b = old.words, new.words
        counts_a, counts_b = _counts(a), _counts(b)
        self.lost = _excess(counts_a, counts_b)
        """Content keys the old text holds more often than the new one (with how many more)."""
        self.gained = _excess(counts_b, counts_a)
        unplaced_a, unplaced_b = dict(self.lost), dict(self.gained)
        matcher = difflib.SequenceMatcher(None, [w.key for w in a], [w.key for w in b], False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            gone = _take(a[i1:i2], unplaced_a)
            came = _take(b[j1:j2], unplaced_b)
            if gone and came:
                start = a.index(gone[0], i1)
                end = a.index(gone[-1], i1) + 1
                before = a[start - 1] if start > 0 else None
                after = a[end] if end < len(a) else None
                clause = a[start].clause
                leading = tuple(w for w in a[:start] if w.clause == clause)
                declarative = any(w.predicate for w in a if w.clause == clause)
                self.swaps.append(_Swap(gone, came, before, after, leading, declarative))
            elif gone:
                self.dropped.append((a[i1:i2], a[i1 - 1] if i1 > 0 else None))
            elif came:
                self.added.append(b[j1:j2])
            small_a = tuple(w for w in a[i1:i2] if w.kind is Kind.RELATION)
            small_b = tuple(w for w in b[j1:j2] if w.kind is Kind.RELATION)
            if small_a and small_b and not gone and not came:
                self.small.append((small_a, small_b))


def _counts(words: Sequence[Word], kind: Kind | None = None) -> dict[str, int]:
    """How often each key occurs: content words, or words of `kind`."""
    counts: dict[str, int] = {}
    for word in words:
        if word.content if kind is None else word.kind is kind:
            counts[word.key] = counts.get(word.key, 0) + 1
    return counts


def _excess(counts: dict[str, int], other: dict[str, int]) -> dict[str, int]:
    """The keys `counts` holds more often than `other`, with how many more."""
    return {key: n - other.get(key, 0) for key, n in counts.items() if n > other.get(key, 0)}


def _take(words: Sequence[Word], unplaced: dict[str, int]) -> tuple[Word, ...]:
    """The content words among `words` that the other text lacks, using up `unplaced`."""
    taken = []
    for word in words:
        if word.content and unplaced.get(word.key, 0) > 0:
            unplaced[word.key] -= 1
            taken.append(word)
    return tuple(taken)


def judge(old: str, new: str) -> Judgement:
    """Return how `new` relates to the existing entry `old` (see the module rules)."""
    a, b = analyse(old), analyse(new)
    if a.normal == b.normal or plain_form(old) == plain_form(new):
        return Judgement(Relation.SAME, 1.0)
    pair = _Pair(a, b)
    if ("(path" in old or "(path" in new) and set(scope_of(old).globs) != set(scope_of(new).globs):
        return pair.judged(Relation.UNRELATED)  # rules for different files: keep both
    if len(a.words) > MAX_WORDS or len(b.words) > MAX_WORDS:
        return pair.judged(Relation.DIFFERENT)  # too long to read closely: keep both
    judgement = next(found for rule in _RULES if (found := rule(pair)) is not None)
    if judgement.verdict is Verdict.SKIP and b.tags - a.tags:
        return judgement._replace(relation=Relation.TAGS)
    return judgement


class _Pair:
    """The two wordings being judged, what changed between them (aligned on first use), and
    their similarity."""

    def __init__(self, old: Wording, new: Wording) -> None:
        self.old, self.new = old, new
        union = old.content | new.content
        self.similarity = len(old.content & new.content) / len(union) if union else 0.0

    @functools.cached_property
    def diff(self) -> _Diff:
        return _Diff(self.old, self.new)

    @property
    def mirrored(self) -> _Pair:
        """The same two wordings the other way round (what one adds, the other drops)."""
        return _Pair(self.new, self.old)

    def judged(self, relation: Relation, *swaps: _Swap) -> Judgement:
        """A judgement of this pair, naming the words `swaps` replaced."""
        if not swaps:
            return Judgement(relation, self.similarity)
        return Judgement(
            relation,
            self.similarity,
            old_value=_written(word for swap in swaps for word in swap.old),
            new_value=_written(word for swap in swaps for word in swap.new),
        )


def _unrelated(pair: _Pair) -> Judgement | None:
    """Rule 2: no content word in common, and not one short swap in the same frame."""
    old, new = pair.old.content, pair.new.content
    if old & new:
        return None
    if len(old) <= 2 and len(new) <= 2 and _one_short_swap(pair.diff):
        return None
    return pair.judged(Relation.UNRELATED)


def _order_reversed(pair: _Pair) -> Judgement | None:
    """Rule 3: what an ordering word orders crossed it ("A before B"), and no content word
    was lost (the same words in another order, maybe with a reason added)."""
    if pair.old.content <= pair.new.content and _crosses_order(pair.old.words, pair.new.words):
        return pair.judged(Relation.REVERSED)
    return None


def _other_subject(pair: _Pair) -> Judgement | None:
    """Rule 4: a replaced phrase names another thing, or a word was added to or dropped from
    an identifier whose other words stay (`orders` / `orders_archive`, `API_URL` /
    `NEXT_PUBLIC_API_URL`: another table, another variable)."""
    slot = _framed_slot(pair)
    for swap in pair.diff.swaps:
        if _names_subject(swap, comment=swap is slot and _in_comment(pair.old.words, swap)):
            return pair.judged(Relation.OTHER_SUBJECT, swap)
    part = _reshaped_identifier(pair)
    if part is not None and part.text.casefold() not in lexicon.NEGATING_PARTS:
        return pair.judged(Relation.OTHER_SUBJECT)
    return None


def _reshaped_identifier(pair: _Pair) -> Word | None:
    """A content word dropped from, or added to, a joined identifier whose other words the
    other text still holds."""
    diff = pair.diff
    sides = (
        ([run for run, _ in diff.dropped], pair.old, pair.new),
        (diff.added, pair.new, pair.old),
    )
    for runs, text, other in sides:
        for run in runs:
            for word in run:
                if not (word.content and word.group):
                    continue
                siblings = (w for w in text.words if w.group == word.group and w not in run)
                if any(w.key in other.content for w in siblings):
                    return word  # the rest of the identifier stayed where it was
    return None


def _reversed(pair: _Pair) -> Judgement | None:
    """Rule 5: a shared word's polarity flipped, or a word was swapped for its opposite. A
    flip that is not a clean reversal is an exception or another rule: both are kept."""
    flipped = _flipped(pair.old.words, pair.new.words)
    if flipped:
        if _negation_flipped(pair, flipped):
            return pair.judged(Relation.REVERSED)
        return pair.judged(Relation.DIFFERENT)  # "Cache API responses" / "Don't ... for admins"
    for swap in pair.diff.swaps:
        if _is_opposite(swap):
            return pair.judged(Relation.REVERSED, swap)
    for small_old, small_new in pair.diff.small:
        for old in small_old:
            for new in small_new:
                if not _opposites(old, new):
                    continue
                if old.text.casefold() == new.text.casefold():  # "without", under a ban
                    return pair.judged(Relation.REVERSED)
                return Judgement(Relation.REVERSED, pair.similarity, old.text, new.text)
    part = _reshaped_identifier(pair)
    if part is not None and part.text.casefold() in lexicon.NEGATING_PARTS:
        return pair.judged(Relation.REVERSED)  # "non-root" / "root"
    return None


def _other_roles(pair: _Pair) -> Judgement | None:
    """Rule 6: the shared words come in another order, other than one phrase moved whole."""
    order_old, order_new = _shared_order(pair.old, pair.new)
    if order_old == order_new or _moved_as_phrase(pair.old, pair.new, order_old, order_new):
        return None
    return pair.judged(Relation.OTHER_ROLES)


def _changed(pair: _Pair) -> Judgement | None:
    """Rules 7 and 8: only numbers changed, or the chosen alternative did (and nothing else was
    dropped: a swap inside a rewrite is a rewrite)."""
    swaps = pair.diff.swaps
    if any(word.content for dropped, _ in pair.diff.dropped for word in dropped):
        return None
    if swaps and all(_is_value_change(swap) for swap in swaps):
        return pair.judged(Relation.CHANGED_VALUE, *swaps)
    choices = [swap for swap in swaps if not _is_made_exact(swap)]
    if choices:
        return pair.judged(Relation.CHANGED_CHOICE, *choices)
    return None


def _grown_or_shrunk(pair: _Pair) -> Judgement | None:
    """Rules 9 to 13: a value made exact, words only added, or only dropped (or, if nothing
    was, the same words)."""
    diff = pair.diff
    if diff.swaps:
        return pair.judged(Relation.VALUE_MADE_EXACT, *diff.swaps)
    if diff.gained and not diff.lost:
        if _broadens(pair.mirrored):
            return pair.judged(Relation.NARROWS)
        if limit := _dropped_limit(pair.mirrored, lexicon.NARROWING):
            return Judgement(Relation.OTHER_SUBJECT, pair.similarity, new_value=limit)
        return pair.judged(Relation.ADDS_DETAIL)
    if diff.lost and not diff.gained:
        if _broadens(pair):
            return pair.judged(Relation.BROADENS)
        if limit := _dropped_limit(pair):
            return Judgement(Relation.OTHER_SUBJECT, pair.similarity, old_value=limit)
        if _chooses(pair.new) and not _chooses(pair.old):
            return None  # "Always use tabs" is not a part of "Indent Python code with tabs"
        if _excess(_counts(pair.new.words, Kind.RELATION), _counts(pair.old.words, Kind.RELATION)):
            return None  # a small word the entry lacks ("up to", "since"): not only less
        return pair.judged(Relation.SAYS_LESS)
    if not diff.lost and not diff.gained:
        if _negations(pair.old) != _negations(pair.new) or _small_words_changed(pair.old, pair.new):
            return pair.judged(Relation.REWORDED)  # "Only admins may ..."; "imported by"
        return pair.judged(Relation.SAME)
    return None


def _small_words_changed(old: Wording, new: Wording) -> bool:
    """True if a small word that matters was added, dropped or swapped, over the whole text (a
    phrase moved whole keeps its small words; see `lexicon.LIGHT`, `lexicon.EQUIVALENT`)."""
    counts_old = _small_counts(old)
    counts_new = _small_counts(new)
    dropped = _excess(counts_old, counts_new)
    added = _excess(counts_new, counts_old)
    if dropped and added:
        return True  # a small word swapped for another that does not mean the same
    return any(
        _weighs(word)
        for text, keys in ((old, dropped), (new, added))
        for word in text.words
        if word.kind is Kind.RELATION and _small_key(word) in keys
    )


def _small_key(word: Word) -> str:
    """A small word's key, equivalent words sharing one ("with" / "via")."""
    group = lexicon.EQUIVALENT.get(word.key)
    return word.key if group is None else f"<{group}>"


def _small_counts(wording: Wording) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in wording.words:
        if word.kind is Kind.RELATION:
            key = _small_key(word)
            counts[key] = counts.get(key, 0) + 1
    return counts


def _weighs(word: Word) -> bool:
    """True if adding or dropping this small word alone changes a rule."""
    if word.key in lexicon.LIGHT or lexicon.EQUIVALENT.get(word.key) == lexicon.EQUIVALENT["than"]:
        return False
    return word.key != "<all>" or word.negative  # "all" matters only under a negation


def _broadens(pair: _Pair) -> bool:
    """True if the new text, still a ban, dropped a part of it that was not a list item: a
    qualifier ("never log raw card numbers" / "... card numbers"), a subject ("contractors
    must not ..."), a limit ("... against production") or an exception ("... unless it is a
    hotfix"). Of the pair mirrored, true if the entry's ban gained such a part (NARROWS)."""
    if not any(word.negative for word in pair.new.words if word.content):
        return False
    for run, before in pair.diff.dropped:
        content = [w for w in run if w.content]
        if not content:
            continue
        if any(w.text.casefold() in lexicon.EXCEPTIONS for w in run) or _scope_nouns(
            w.key for w in content
        ):
            return True  # "... unless it is a hotfix", "dev is the exception", "Prod: ..."
        joined = before is not None and (
            before.key in lexicon.CONJUNCTIONS or before.phrase != run[0].phrase
        )
        listed = joined or any(w.key in lexicon.CONJUNCTIONS for w in run)
        if not listed and any(w.negative for w in content):
            return True
    return False


def _dropped_limit(pair: _Pair, leads: frozenset[str] = lexicon.LIMITING) -> str | None:
    """The phrase the new text dropped that limited where the entry holds ("in Go files"): led
    by one of `leads`, in the same clause, not a list item and not a ban of its own ("never in
    .env files"); None if it dropped no such phrase. Without it a rule that is not a ban is
    another, wider rule, not a shorter form of the entry. Of the pair mirrored: the phrase the
    new text added, making it a narrower rule."""
    for run, before in pair.diff.dropped:
        if not any(word.content for word in run) or run[0].key not in leads:
            continue
        if any(word.negative for word in run):
            continue  # "Keep secrets in Vault, never in .env files": a ban beside the rule
        if next(word for word in run if word.content).kind is Kind.VALUE:
            continue  # "for 5 minutes": an amount, not a place
        if before is not None and (
            before.key in lexicon.CONJUNCTIONS or before.clause != run[0].clause
        ):
            continue  # "in Go and in YAML files": a list item; or a clause of its own
        return _written(run)
    return None


def _reworded(pair: _Pair) -> Judgement | None:
    """Rule 14: words both dropped and added; the same rule only if most words are shared and
    no environment or platform was swapped."""
    diff = pair.diff
    if _scope_nouns(diff.lost) or _scope_nouns(diff.gained):
        return pair.judged(Relation.DIFFERENT)
    if _order_changed(pair.old.words, pair.new.words):
        return pair.judged(Relation.DIFFERENT)  # "lint before tests" / "tests before build"
    if pair.similarity >= REWORDED_OVERLAP:
        return pair.judged(Relation.REWORDED)
    return pair.judged(Relation.DIFFERENT)


_RULES: tuple[Callable[[_Pair], Judgement | None], ...] = (
    _unrelated,
    _order_reversed,
    _other_subject,
    _reversed,
    _other_roles,
    _changed,
    _grown_or_shrunk,
    _reworded,
)
"""The rules in the order the module docstring gives (rule 1 is `judge`'s own test)."""


def _chooses(wording: Wording) -> bool:
    return any(word.kind is Kind.CHOICE for word in wording.words)


def _negations(wording: Wording) -> int:
    return sum(word.negative for word in wording.words if word.content)


def _scope_nouns(keys: Iterable[str]) -> bool:
    return any(key in lexicon.SCOPE_NOUNS for key in keys)


def _written(words: Iterable[Word]) -> str:
    return " ".join(word.text for word in words)


def _one_short_swap(diff: _Diff) -> bool:
    """True if the texts differ only in one short phrase, in the same frame of small words,
    each side a run of words with no small word inside it: "Use pnpm" / "Use Bun" (or "Use CSS
    modules" / "Use Tailwind") are one choice swapped, but "Use tabs for indentation" / "Use
    pnpm" share no more than the verb."""
    if len(diff.swaps) != 1 or diff.dropped or diff.added:
        return False
    swap = diff.swaps[0]
    framed = swap.before is not None or swap.after is not None
    unbroken = _unbroken(swap.old, diff.old.words) and _unbroken(swap.new, diff.new.words)
    return framed and unbroken and len(swap.old) <= 2 and len(swap.new) <= 2


def _unbroken(run: Sequence[Word], words: Sequence[Word]) -> bool:
    """True if `run`'s words follow one another in `words` (no small word between them)."""
    where = [next(i for i, word in enumerate(words) if word is part) for part in run]
    return where == list(range(where[0], where[0] + len(where))) if where else True


def _names_subject(swap: _Swap, *, comment: bool = False) -> bool:
    """True if the replaced phrase says which thing the rule is about (see the module rules);
    `comment`: it is the one slot of a frame, in the part of the sentence that says what the
    rule holds (`_in_comment`), so only a look-alike, an environment, a ban's object or a
    number naming a thing makes it another subject."""
    if len(swap.old) > MAX_SWAP or len(swap.new) > MAX_SWAP:
        return True
    if _is_opposite(swap):
        return False
    if _look_alike(swap):
        return True  # "the Kubernetes <operator>" / "a Kubernetes <operation>"
    first, after = swap.old[0], swap.after
    if comment:
        pass
    elif first.clause == 0 and not swap.leading and after is not None and after.clause == 0:
        return True  # the subject: "<Writer0> note: ..." / "<Writer1> note: ..."
    elif swap.declarative and not any(w.predicate for w in swap.old):
        return True  # before the clause's auxiliary: "Migration <0042> is irreversible"
    named = swap.before is not None and swap.before.kind is Kind.WORD
    if named and any(w.negative for w in swap.old):
        return True  # a name under a ban: "Never expose port <5432>" / "... port <6379>"
    if (_is_value_change(swap) and not _is_id(swap)) or _is_made_exact(swap):
        return False
    words = (*swap.old, *swap.new)
    if any(
        word.key in lexicon.SCOPE_NOUNS or word.text.casefold() in lexicon.SCOPE_NOUNS
        for word in words
    ):
        return True
    if any(word.negative for word in swap.old):
        return True  # bans on two things both hold
    return not (comment or _in_choice_slot(swap))


def _look_alike(swap: _Swap) -> bool:
    """True if a word was swapped for another of its stem with another derivational ending
    ("operator" / "operation", "product" / "production"): a look-alike names another thing."""
    return any(
        old.key != new.key and _stem_of(old.key) == _stem_of(new.key)
        for old in swap.old
        for new in swap.new
    )


def _framed_slot(pair: _Pair) -> _Swap | None:
    """The one swap of a pair whose texts are one frame, else None: every word but the swap's
    is the same on both sides, in the same order and with the same polarity, the swap is one
    unbroken run of at most FRAME_SLOT content words a side, and at least FRAME_SHARED content
    words stand around it ("Use a <Postgres> container for tests" / "... <MySQL> ...")."""
    swaps = pair.diff.swaps
    if len(swaps) != 1:
        return None
    swap = swaps[0]
    if len(swap.old) > FRAME_SLOT or len(swap.new) > FRAME_SLOT:
        return None
    a, b = pair.old.words, pair.new.words
    if not (_unbroken(swap.old, a) and _unbroken(swap.new, b)):
        return None
    i, j = _position(swap.old[0], a), _position(swap.new[0], b)
    frame_a = (*a[:i], *a[i + len(swap.old) :])
    frame_b = (*b[:j], *b[j + len(swap.new) :])
    if i != j or [(w.key, w.negative) for w in frame_a] != [(w.key, w.negative) for w in frame_b]:
        return None
    return swap if sum(w.content for w in frame_a) >= FRAME_SHARED else None


def _in_comment(words: Sequence[Word], swap: _Swap) -> bool:
    """True if the swapped slot is in the part of its clause that says what the rule holds (its
    comment), not in what the rule is about (its topic); see the module rules, rule 4."""
    start = _position(swap.old[0], words)
    clause = words[start].clause
    after = [w for w in words[start + len(swap.old) :] if w.clause == clause]
    tail = list(itertools.takewhile(lambda w: w.content, after))
    if _identifies(swap, after):
        return True  # "Python <3.11> is the minimum version"
    if any(w.content and w.key not in lexicon.SCOPE_NOUNS for w in after[len(tail) :]):
        return False  # a phrase after it says what holds: "Cache <user sessions> in Redis"
    if any(w.group and w not in swap.old for w in words if w.group in _groups(swap.old)):
        return False  # a part of an identifier whose other parts stay: another identifier
    at = len(swap.leading) - 1
    while at >= 0 and (swap.leading[at].content or swap.leading[at].key in _QUANTIFIER_KEYS):
        at -= 1  # back over the phrase's kept words: "from the <main> branch", "every <Sunday>"
    head = swap.leading[at] if at >= 0 else None
    if head is None:
        # a last word after a verb and its object or subject, not a noun of its own: "Run the
        # suite <nightly>", "is wiped every <Sunday>" (but "covers the <SF> office")
        content = sum(w.content for w in swap.leading)
        return not tail and not swap.old[0].determined and content >= 2
    if not tail or head.key not in COMMENT_PREPOSITIONS:
        return False  # a phrase-final object is read by `_in_choice_slot`
    earlier = swap.leading[:at]
    return not (head.key in lexicon.PLACES and _chosen_earlier(earlier))


def _in_choice_slot(swap: _Swap) -> bool:
    """True if the replaced phrase is where the rule's choice goes: the object of a choosing
    verb, or the end of a phrase led by a tool preposition ("with <X>", "in make <X>")."""
    after = swap.after
    if after is not None and after.kind is Kind.CHOICE and is_cjk(after.text):
        return True  # Japanese puts the verb after its object: "X を使う"
    at = len(swap.leading) - 1
    while at >= 0 and swap.leading[at].content:
        at -= 1  # back over the phrase's kept words: "in make <test>"
    head = swap.leading[at] if at >= 0 else None
    if head is not None and head.kind is Kind.CHOICE:
        return True
    first = swap.old[0]
    phrase_final = after is None or after.kind is Kind.RELATION or after.clause != first.clause
    if head is None or head.kind is not Kind.RELATION or not phrase_final:
        return False
    if head.key not in lexicon.INSTRUMENT:
        return False
    earlier = swap.leading[:at]
    if head.key in lexicon.ATTRIBUTIVE and earlier and earlier[-1].determined:
        return False  # "an index on <X>": which index, not a tool
    return not (head.key in lexicon.PLACES and _chosen_earlier(earlier))


def _is_id(swap: _Swap) -> bool:
    """True if the swapped number names a thing rather than counting one: an integer (or
    "v2") right after a lowercase word and followed by no word it would count ("bug <1234> only
    ...", "port <5432> to ..."), read by its role like a word, unlike "<3> retries", "holds
    <20> connections", "Python <3.11>" or "Node <18>"."""
    before, after = swap.before, swap.after
    return (
        before is not None
        and before.kind is Kind.WORD
        and before.text.islower()  # "Java 17", "iOS 15", "Node 18" are versions of a product
        and all(_ID.fullmatch(w.key) for w in (*swap.old, *swap.new))
        and (after is None or not after.content)
    )


def _chosen_earlier(leading: Sequence[Word]) -> bool:
    """True if the clause names its choice or its scope before a place phrase ("Use React Query
    for server state in <X>", "approval for changes to <X>": <X> is where, not what). A word
    joining a noun to its owner is no scope ("messages de commit en <français>")."""
    return any(
        word.kind is Kind.CHOICE
        or (
            word.kind is Kind.RELATION
            and word.key in lexicon.SCOPE
            and word.key not in lexicon.GENITIVE
        )
        for word in leading
    )


def _groups(words: Iterable[Word]) -> set[int]:
    """The identifiers (`Word.group`) that `words` are parts of."""
    return {w.group for w in words if w.group}


def _identifies(swap: _Swap, after: Sequence[Word]) -> bool:
    """True if the slot is the subject of a clause that names the one thing holding a role:
    before its auxiliary, whose predicate opens with a definite noun ("<Node 18> is the
    minimum", "<Room 4B> is our war room"; not "<Migration 0042> is irreversible")."""
    if not swap.declarative or any(w.predicate for w in swap.old):
        return False
    predicate = next((w for w in after if w.predicate), None)
    return predicate is not None and predicate.definite


def _position(word: Word, words: Sequence[Word]) -> int:
    """Where `word` itself (not an equal word) stands in `words`."""
    return next(i for i, other in enumerate(words) if other is word)


def _is_value_change(swap: _Swap) -> bool:
    """True if only numbers (and maybe their unit) changed."""
    old = [w for w in swap.old if w.text.casefold() not in lexicon.UNITS]
    new = [w for w in swap.new if w.text.casefold() not in lexicon.UNITS]
    return bool(old and new) and all(w.kind is Kind.VALUE for w in (*old, *new))


def _is_made_exact(swap: _Swap) -> bool:
    """True if a vague amount ("about an hour", "regularly") became a number."""
    vague = lexicon.VAGUE | lexicon.UNITS
    return all(w.kind is not Kind.VALUE and w.text.casefold() in vague for w in swap.old) and any(
        w.kind is Kind.VALUE for w in swap.new
    )


def _is_opposite(swap: _Swap) -> bool:
    """True if one word was swapped for its opposite ("enable" / "disable")."""
    return len(swap.old) == len(swap.new) == 1 and _opposites(swap.old[0], swap.new[0])


def _opposites(old: Word, new: Word) -> bool:
    """True for a pair of opposite words (as written, or as read: "never X without Y" reads
    "with"), or a flag and its "--no-" form."""
    pair = old.text.casefold(), new.text.casefold()
    if frozenset(pair) in lexicon.OPPOSITES or frozenset((old.key, new.key)) in lexicon.OPPOSITES:
        return True
    first, second = sorted(pair, key=len)
    return first.startswith("-") and second in (f"--no{first.lstrip('-')}", f"--no-{first[2:]}")


def _negation_flipped(pair: _Pair, flipped: set[str]) -> bool:
    """True if the flipped words reverse the rule: the negated clause they are in is all there
    in the other text ("Don't commit the lockfile" / "Commit the lockfile"; not "Never log
    access tokens" / "Access tokens expire": "log" is gone), and their clauses do not both lose
    and gain words ("Prefer const over let" / "Prefer let over var" is a second rule)."""
    a, b = pair.old, pair.new
    if not (_negated_clauses_shared(a, b, flipped) and _negated_clauses_shared(b, a, flipped)):
        return False
    clauses_a = {w.clause for w in a.words if w.key in flipped}
    clauses_b = {w.clause for w in b.words if w.key in flipped}
    only_a, only_b = a.content - b.content, b.content - a.content
    lost = any(w.key in only_a for w in a.words if w.clause in clauses_a)
    gained = any(w.key in only_b for w in b.words if w.clause in clauses_b)
    return not (lost and gained)


def _negated_clauses_shared(text: Wording, other: Wording, flipped: set[str]) -> bool:
    """True if every negated content word of `text`'s clauses that negate a flipped word is in
    `other`."""
    clauses = {w.clause for w in text.words if w.negative and w.key in flipped}
    negated = {w.key for w in text.words if w.negative and w.content and w.clause in clauses}
    return negated <= other.content


def _flipped(a: Sequence[Word], b: Sequence[Word]) -> set[str]:
    """The shared content keys that are negated in one text and never in the other."""
    polarity_a: dict[str, set[bool]] = {}
    polarity_b: dict[str, set[bool]] = {}
    for words, polarity in ((a, polarity_a), (b, polarity_b)):
        for word in words:
            if word.content:
                polarity.setdefault(word.key, set()).add(word.negative)
    return {
        key for key, seen in polarity_a.items() if key in polarity_b and not seen & polarity_b[key]
    }


def _crosses_order(a: Sequence[Word], b: Sequence[Word]) -> bool:
    """True if what an ordering word both texts hold orders came from the other side of it
    ("start A before B" / "start B before A")."""
    for marker in {w.key for w in a if w.key in lexicon.ORDERED} & {w.key for w in b}:
        head_a, tail_a, first_a = _sides(a, marker)
        head_b, tail_b, first_b = _sides(b, marker)
        if first_a != first_b and (first_b in head_a - tail_a or first_a in head_b - tail_b):
            return True
    return False


def _order_changed(a: Sequence[Word], b: Sequence[Word]) -> bool:
    """True if an ordering word both texts hold orders something else in each."""
    for marker in {w.key for w in a if w.key in lexicon.ORDERED} & {w.key for w in b}:
        if _sides(a, marker)[2] != _sides(b, marker)[2]:
            return True
    return False


def _sides(words: Sequence[Word], marker: str) -> tuple[set[str], set[str], str | None]:
    """The content keys of the marker's clause outside and inside its phrase after it, and the
    first content key after it (what it orders: "before <the web server>")."""
    at = next(i for i, w in enumerate(words) if w.key == marker)
    clause, phrase = words[at].clause, words[at].phrase
    following = [w.key for w in words[at + 1 :] if w.content and w.phrase == phrase]
    head = {w.key for w in words if w.content and w.clause == clause} - set(following)
    return head, set(following), following[0] if following else None


def _shared_order(a: Wording, b: Wording) -> tuple[list[str], list[str]]:
    """The stems both texts hold, in each text's order: a word and its derivation count as
    one ("Deploy tests" / "Test deployments": the verb and the noun swapped roles)."""
    shared = {_stem_of(key) for key in a.content} & {_stem_of(key) for key in b.content}
    return (
        _unique([_stem_of(w.key) for w in a.words if w.content and _stem_of(w.key) in shared]),
        _unique([_stem_of(w.key) for w in b.words if w.content and _stem_of(w.key) in shared]),
    )


def _stem_of(key: str) -> str:
    """A word's key without its derivational class ("deploy~ment" -> "deploy")."""
    return key.partition("~")[0]


def _unique(keys: list[str]) -> list[str]:
    """`keys` without repeats, first occurrences in order."""
    return list(dict.fromkeys(keys))


def _moved_as_phrase(a: Wording, b: Wording, order_a: list[str], order_b: list[str]) -> bool:
    """True if the reordering is one phrase moved whole, led by a preposition in both texts
    ("Run tests before deploying" / "Before deploying, run tests")."""
    for cut in range(1, len(order_a)):
        if order_a[cut:] + order_a[:cut] != order_b:
            continue
        return _led_by_relation(a, order_a[cut]) and _led_by_relation(b, order_a[cut])
    return False


def _led_by_relation(wording: Wording, key: str) -> bool:
    """True if the first word with `key` follows a preposition or conjunction."""
    words = wording.words
    at = next(i for i, w in enumerate(words) if _stem_of(w.key) == key)
    return at > 0 and words[at - 1].kind is Kind.RELATION
