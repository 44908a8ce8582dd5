"""Judge a new memory against one existing entry: skip it, update the entry, or store it apart.

`judge(old, new)` compares the two texts word by word (`memd.core.wording`): it aligns their
words, finds what was replaced, added, dropped or moved, reads the role of each replaced phrase
and the polarity of every shared word, and returns a `Judgement`: how the texts relate, the
verdict that follows, whether the old entry is now wrong (`conflict`), and the old and new values
when one was swapped.

The one rule above the others: a new memory is never thrown away unless it says nothing the
entry does not, and an entry is never replaced by a different rule. Where the reading is
uncertain, the verdict leans to keeping data: update rather than skip (the old text goes to the
archive), store rather than update (both stay).

Relations, checked in this order (the first that applies decides):
1. SAME (skip): the same words with the same polarity and tags; formatting, articles, "always"
   and small words other than opposites ("with" / "via", a dropped "to") do not count.
2. UNRELATED (store): no content word in common, unless the texts differ in a single short
   phrase in the same frame ("Use pnpm." / "Use Bun.").
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
   words on either side is read the same way.
5. REVERSED (update, conflict): a shared word is negated in one text and not in the other,
   and the other text holds all of the negated clause ("Commit the lockfile" / "Don't commit
   the lockfile"; "Use UTC" / "Use local time, not UTC"; but not "Never log access tokens" /
   "Access tokens expire after 15 minutes"); or a word swapped for its opposite ("before" /
   "after", "enable" / "disable", "--frozen-lockfile" / "--no-frozen-lockfile").
6. OTHER_ROLES (store): the shared words come in another order ("The billing module must not
   import from auth" / "The auth module must not import from billing"), unless only a phrase
   moved whole with its preposition ("Before deploying, run tests"): that is the same wording,
   and the rules below go on.
7. CHANGED_VALUE (update, conflict): only numbers changed ("15 minutes" / "60 minutes", "Node
   18" / "Node 20"), maybe with their unit; words may be added (a reason), none dropped.
8. CHANGED_CHOICE (update, conflict): the chosen alternative was swapped: the object of a
   choosing verb ("Use pnpm" / "Use Bun") or the end of a phrase led by a tool preposition
   ("Format Python with black" / "... with ruff format"; "run in make test" / "... make lint");
   again words may be added, none dropped.
9. VALUE_MADE_EXACT (update): a vague amount became a number ("about an hour" / "60 minutes").
10. ADDS_DETAIL (update): the new text holds every content word of the entry and more.
11. BROADENS (update): the new text, still a ban, drops a limiting phrase from it ("Never run
    load tests against production" / "Never run load tests"): a wider ban is new information.
12. SAYS_LESS (skip): the new text only drops words from the entry (a part of a list, a
    reason, a detail), and makes no choice and uses no small word the entry does not ("Always
    use tabs" is not a part of "Indent Python code with tabs").
13. REWORDED (update) when at least REWORDED_OVERLAP of the content words are shared and no
    environment or platform was swapped, else DIFFERENT (store).
New or changed tags turn a skip into an update (TAGS): tags are metadata, never a conflict.
"""

from __future__ import annotations

import difflib
import enum
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from memd.core import lexicon
from memd.core.wording import Kind, Word, Wording, analyse, is_cjk

MAX_SWAP = 3
"""A replaced phrase longer than this (content words, either side) is another subject."""
REWORDED_OVERLAP = 0.5
"""Share of content words two texts must have in common to be read as one rule reworded."""


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


class _Diff:
    """What changed between two wordings, from their aligned word keys."""

    def __init__(self, old: Wording, new: Wording) -> None:
        self.old, self.new = old, new
        self.swaps: list[_Swap] = []
        self.dropped: list[tuple[Word, ...]] = []
        self.added: list[tuple[Word, ...]] = []
        self.relation_swaps: list[tuple[Word, Word]] = []
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
                leading = tuple(w for w in a[:start] if w.clause == a[start].clause)
                self.swaps.append(_Swap(gone, came, before, after, leading))
            elif gone:
                self.dropped.append(a[i1:i2])
            elif came:
                self.added.append(b[j1:j2])
            single = tag == "replace" and i2 - i1 == 1 and j2 - j1 == 1
            if single and a[i1].kind is b[j1].kind is Kind.RELATION:
                self.relation_swaps.append((a[i1], b[j1]))


def _counts(words: Sequence[Word]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in words:
        if word.content:
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
    if a.normal == b.normal:
        return Judgement(Relation.SAME, 1.0)
    pair = _Pair(a, b)
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
    """Rule 4: a replaced phrase names another thing."""
    for swap in pair.diff.swaps:
        if _names_subject(swap):
            return pair.judged(Relation.OTHER_SUBJECT, swap)
    return None


def _reversed(pair: _Pair) -> Judgement | None:
    """Rule 5: a shared word's polarity flipped, or a word was swapped for its opposite."""
    if _negation_flipped(pair.old, pair.new):
        return pair.judged(Relation.REVERSED)
    for swap in pair.diff.swaps:
        if _is_opposite(swap):
            return pair.judged(Relation.REVERSED, swap)
    for old, new in pair.diff.relation_swaps:
        if _opposites(old, new):
            return Judgement(Relation.REVERSED, pair.similarity, old.text, new.text)
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
    if any(word.content for dropped in pair.diff.dropped for word in dropped):
        return None
    if swaps and all(_is_value_change(swap) for swap in swaps):
        return pair.judged(Relation.CHANGED_VALUE, *swaps)
    choices = [swap for swap in swaps if not _is_made_exact(swap)]
    if choices:
        return pair.judged(Relation.CHANGED_CHOICE, *choices)
    return None


def _grown_or_shrunk(pair: _Pair) -> Judgement | None:
    """Rules 9 to 12: a value made exact, words only added, or only dropped (or, if nothing
    was, the same words)."""
    diff = pair.diff
    if diff.swaps:
        return pair.judged(Relation.VALUE_MADE_EXACT, *diff.swaps)
    if diff.gained and not diff.lost:
        return pair.judged(Relation.ADDS_DETAIL)
    if diff.lost and not diff.gained:
        still_a_ban = any(word.negative for word in pair.new.words if word.content)
        if still_a_ban and any(_limits_a_ban(dropped) for dropped in diff.dropped):
            return pair.judged(Relation.BROADENS)
        if _chooses(pair.new) and not _chooses(pair.old):
            return None  # "Always use tabs" is not a part of "Indent Python code with tabs"
        if _relations(pair.new) - _relations(pair.old):
            return None  # a small word the entry lacks ("up to", "since"): not only less
        return pair.judged(Relation.SAYS_LESS)
    if not diff.lost and not diff.gained:
        if _negations(pair.old) != _negations(pair.new):
            return pair.judged(Relation.REWORDED)  # a negated word that cannot be read
        return pair.judged(Relation.SAME)
    return None


def _reworded(pair: _Pair) -> Judgement | None:
    """Rule 13: words both dropped and added; the same rule only if most words are shared and
    no environment or platform was swapped."""
    diff = pair.diff
    if _scope_nouns(diff.lost) or _scope_nouns(diff.gained):
        return pair.judged(Relation.DIFFERENT)
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


def _relations(wording: Wording) -> Counter[str]:
    return Counter(word.key for word in wording.words if word.kind is Kind.RELATION)


def _chooses(wording: Wording) -> bool:
    return any(word.kind is Kind.CHOICE for word in wording.words)


def _negations(wording: Wording) -> int:
    return sum(word.negative for word in wording.words if word.content)


def _scope_nouns(keys: Iterable[str]) -> bool:
    return any(key in lexicon.SCOPE_NOUNS for key in keys)


def _written(words: Iterable[Word]) -> str:
    return " ".join(word.text for word in words)


def _one_short_swap(diff: _Diff) -> bool:
    """True if the texts differ only in one short phrase, in the same frame of small words."""
    if len(diff.swaps) != 1 or diff.dropped or diff.added:
        return False
    swap = diff.swaps[0]
    framed = swap.before is not None or swap.after is not None
    return framed and len(swap.old) <= 2 and len(swap.new) <= 2


def _names_subject(swap: _Swap) -> bool:
    """True if the replaced phrase says which thing the rule is about (see the module rules)."""
    if len(swap.old) > MAX_SWAP or len(swap.new) > MAX_SWAP:
        return True
    if _is_opposite(swap):
        return False
    first, after = swap.old[0], swap.after
    if first.clause == 0 and not swap.leading and after is not None and after.clause == 0:
        return True  # the subject: "<Writer0> note: ..." / "<Writer1> note: ..."
    if _is_value_change(swap) or _is_made_exact(swap):
        return False
    words = (*swap.old, *swap.new)
    if any(
        word.key in lexicon.SCOPE_NOUNS or word.text.casefold() in lexicon.SCOPE_NOUNS
        for word in words
    ):
        return True
    if any(word.negative for word in swap.old):
        return True  # bans on two things both hold
    return not _in_choice_slot(swap)


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


def _chosen_earlier(leading: Sequence[Word]) -> bool:
    """True if the clause names its choice or its scope before a place phrase ("Use React Query
    for server state in <X>", "approval for changes to <X>": <X> is where, not what)."""
    return any(
        word.kind is Kind.CHOICE or (word.kind is Kind.RELATION and word.key in lexicon.SCOPE)
        for word in leading
    )


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
    """True for a pair of opposite words, or a flag and its "--no-" form."""
    pair = old.text.casefold(), new.text.casefold()
    if frozenset(pair) in lexicon.OPPOSITES:
        return True
    first, second = sorted(pair, key=len)
    return first.startswith("-") and second in (f"--no{first.lstrip('-')}", f"--no-{first[2:]}")


def _negation_flipped(a: Wording, b: Wording) -> bool:
    """True if a shared word is negated in one text and never in the other, and the negated
    clause it is in is all there in the other text ("Don't commit the lockfile" / "Commit the
    lockfile"; not "Never log access tokens" / "Access tokens expire": "log" is gone)."""
    flipped = _flipped(a.words, b.words)
    return (
        bool(flipped)
        and _negated_clauses_shared(a, b, flipped)
        and (_negated_clauses_shared(b, a, flipped))
    )


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


def _sides(words: Sequence[Word], marker: str) -> tuple[set[str], set[str], str | None]:
    """The content keys of the marker's clause outside and inside its phrase after it, and the
    first content key after it (what it orders: "before <the web server>")."""
    at = next(i for i, w in enumerate(words) if w.key == marker)
    clause, phrase = words[at].clause, words[at].phrase
    following = [w.key for w in words[at + 1 :] if w.content and w.phrase == phrase]
    head = {w.key for w in words if w.content and w.clause == clause} - set(following)
    return head, set(following), following[0] if following else None


def _shared_order(a: Wording, b: Wording) -> tuple[list[str], list[str]]:
    shared = a.content & b.content
    return (
        _unique([w.key for w in a.words if w.key in shared]),
        _unique([w.key for w in b.words if w.key in shared]),
    )


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
    at = next(i for i, w in enumerate(words) if w.key == key)
    return at > 0 and words[at - 1].kind is Kind.RELATION


def _limits_a_ban(dropped: tuple[Word, ...]) -> bool:
    """True if a dropped phrase limited a ban ("never X against production"): it holds a
    preposition and negated content."""
    return any(
        w.kind is Kind.RELATION and w.key in lexicon.INSTRUMENT | lexicon.SCOPE for w in dropped
    ) and any(w.content and w.negative for w in dropped)
