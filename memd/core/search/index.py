"""`SearchIndex`: the inverted index of one file's entries, updated incrementally.

One index per thing a search reads: a category file, a user-wide memory file, or a segment of
the read-only sources' chunks (`memd.core.sources.segments`).

Layout, chosen so that a search touches little and an edit costs only what changed:
- Each entry has a document number (`doc`). Numbers follow line order: the entries' numbers
  increase with their line numbers. An entry replaced in place keeps its number, an entry added
  after the last one gets the next number, a removed one leaves an unused number behind.
- An entry's *impact class* for a term is its (term frequency, entry length) pair. BM25's
  saturation `tf / (tf + k1 * (1 - b + b * length / average))` depends on nothing else but the
  corpus-wide average and b, so a search computes it once per class, not once per entry.
- The index counts its entries per length, so the spread of their lengths (which sets b, see
  `memd.core.search.ranking`) is read from those counts, not from the entries.
- A term's postings are one sorted list of `class << 32 | doc`: grouped by class, each class's
  entries in line order. So a search can walk a term's entries from the highest saturation down,
  and count a class's entries without visiting them.
- Phrase terms (adjacent word pairs) have no stored postings: most of them are held by one
  entry, and storing them was most of a big index's terms and memory. When a search asks for
  one, its postings are derived (the entries holding both words, from their postings, each
  re-split to count the pair's adjacent occurrences) and cached until an entry holding one of
  its words is added or removed. Their
  impact classes exist beforehand (each entry's phrase frequencies are registered when it is
  indexed), so deriving one never adds a class while a search reads the saturations.

Updating: `build_index(entries, previous)` compares the new entries with the ones `previous` was
built for. The common start and end are kept; only the entries in between are removed and
added (their terms recomputed), so a store costs its own terms. The previous index is taken
over and must not be used again. A change that cannot keep numbers in line order (more entries
inserted between two kept ones than were removed there) or that leaves too many unused numbers
rebuilds the index from scratch.

Size: one data structure (postings, impact classes, incremental edits) whose invariants span the
file.
"""

from __future__ import annotations

import array
import bisect
import contextlib
import heapq
import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from memd.core.format.mdformat import Entry
from memd.core.search.terms import WHOLE_PREFIX, entry_terms, is_word, phrase_count, split_phrase

CLASS_SHIFT = 32
DOC_MASK = (1 << CLASS_SHIFT) - 1
_VIEW_BUDGET_MIN = 4096
"""Cached term views hold at least this many postings (and up to 4 per entry) per index."""

_PHRASES_CHECKED = 512
"""An entry's change drops only the cached phrases of its words while at most this many are
cached (each checked), and all of them past that."""

_line = operator.attrgetter("line")
_POSTING_BYTES = 8

IMAGE_VERSION = 4
"""4: no phrase postings (an image of version 3 holds them, and is ignored and rebuilt)."""


class IndexImage(msgspec.Struct, array_like=True, frozen=True):
    """An index as data, to keep between runs: `key` names the entries it indexes (the
    caller's choice, e.g. a digest of the file), numbered 0, 1, ... in line order."""

    version: int
    key: str
    entries: int
    classes: list[tuple[float, float]]
    postings: dict[str, bytes]
    """Each term's postings, packed as native int64s."""
    total_length: float
    lengths: list[tuple[float, int]] = msgspec.field(default_factory=list)
    """How many entries have each length."""


LengthMoments = tuple[int, float, float]
"""Over some entries: their number, the sum of ln(1 + length) and the sum of its squares."""


class TermView:
    """One term's postings, read for searching: its classes' spans and each entry's class.

    `spans` lists (class, start, end): the postings positions holding that class's entries.
    """

    __slots__ = ("_ranked", "class_of", "postings", "size", "spans")

    def __init__(self, postings: Postings) -> None:
        self.postings = postings
        self.size = len(postings)
        self._ranked: tuple[object, Ranked] | None = None
        spans: list[tuple[int, int, int]] = []
        start, end = 0, len(postings)
        while start < end:
            klass = postings[start] >> CLASS_SHIFT
            stop = bisect.bisect_left(postings, (klass + 1) << CLASS_SHIFT, start)
            spans.append((klass, start, stop))
            start = stop
        self.spans = spans
        self.class_of = {value & DOC_MASK: value >> CLASS_SHIFT for value in postings}

    def ranked(self, saturations: Saturations) -> Ranked:
        """Return the spans ordered by their class's saturation, highest first, with those
        saturations and the running total of entries (memoised per `saturations`)."""
        if self._ranked is not None and self._ranked[0] is saturations:
            return self._ranked[1]
        order = sorted(self.spans, key=lambda span: saturations[span[0]], reverse=True)
        running = [0]
        for _, start, stop in order:
            running.append(running[-1] + stop - start)
        ranked = Ranked([saturations[klass] for klass, _, _ in order], order, running)
        self._ranked = (saturations, ranked)
        return ranked


class Ranked(NamedTuple):
    """A term's spans by saturation: `levels[i]` is the saturation of `spans[i]`, and
    `running[i]` the number of entries in the spans before `i`."""

    levels: list[float]
    spans: list[tuple[int, int, int]]
    running: list[int]


if TYPE_CHECKING:
    Postings = array.array[int]
else:  # array.array takes a type argument at run time from Python 3.12 only
    Postings = array.array
"""A term's postings: `class << 32 | doc`, sorted, as int64s ("q": 8 bytes each, where a list
would hold a 40-byte int object and its pointer)."""

Saturations = list[float]
"""Each impact class's `tf / (tf + norm)` for one average entry length, by class number."""


class SearchIndex:
    """The inverted index of one file's entries or one segment of source chunks (see the module
    docstring).

    Build it with `build_index`; `memd.core.search.ranking.search` reads it. Readers see it as
    immutable: only `build_index` changes an index, and only one it takes over.
    """

    __slots__ = (
        "_class_ids",
        "_classes",
        "_docs",
        "_entries",
        "_lengths",
        "_moments",
        "_owned",
        "_phrase_postings",
        "_phrases",
        "_postings",
        "_readers",
        "_retired",
        "_saturations",
        "_slots",
        "_total_length",
        "_view_postings",
        "_views",
        "_vocabulary",
    )

    def __init__(self) -> None:
        """Create an empty index; use `build_index` instead of calling this directly."""
        self._entries: tuple[Entry, ...] = ()
        self._docs: list[int] = []
        self._slots: list[Entry | None] = []
        # A term's postings are an array, or the packed int64 bytes of one (from a kept image),
        # or the one posting of a term only one entry holds (most terms of a big file of
        # distinct words: an int costs 32 bytes, an array of one 72), turned into an array
        # when first used: a restart reads only what it needs.
        self._postings: dict[str, Postings | bytes | int] = {}
        self._classes: list[tuple[float, float]] = []
        self._class_ids: dict[float, dict[float, int]] = {}
        self._vocabulary: list[str] = []
        self._total_length = 0.0
        self._lengths: dict[float, int] = {}  # entries per length
        self._moments: LengthMoments | None = None
        self._views: dict[str, TermView] = {}
        self._view_postings = 0
        self._saturations: tuple[tuple[float, float, int], Saturations] | None = None
        self._readers = 0
        self._retired = False
        self._owned: set[str] | None = None  # a fork's own postings (None: all its own)
        # Derived phrase terms (None: held by no entry), dropped when an entry holding a word
        # of theirs changes.
        self._phrases: dict[str, TermView | None] = {}
        self._phrase_postings = 0

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The indexed entries, sorted by line number."""
        self._check()
        return self._entries

    @property
    def total_length(self) -> float:
        """The sum of all entry lengths (in terms, slug and identifier terms weighted)."""
        return self._total_length

    def length_moments(self) -> LengthMoments:
        """Return the entries' number, sum of ln(1 + length) and sum of its squares (summed
        over the length counts in order, so the same entries give the same sums however the
        index was built; memoised until an entry is added or removed)."""
        if self._moments is None:
            items = sorted(self._lengths.items())
            logs = [(math.log1p(length), count) for length, count in items]
            self._moments = (
                sum(count for _, count in logs),
                math.fsum(value * count for value, count in logs),
                math.fsum(value * value * count for value, count in logs),
            )
        return self._moments

    @property
    def classes(self) -> Sequence[tuple[float, float]]:
        """Each impact class's (term frequency, entry length), by class number."""
        return self._classes

    def saturations(self, base: float, per_length: float) -> Saturations:
        """Return `tf / (tf + base + per_length * length)` for each impact class (memoised
        for the last pair of factors; the same list object while they and the classes last)."""
        key = (base, per_length, len(self._classes))
        if self._saturations is None or self._saturations[0] != key:
            levels = [tf / (tf + base + per_length * length) for tf, length in self._classes]
            self._saturations = (key, levels)
        return self._saturations[1]

    def entry(self, doc: int) -> Entry:
        """Return the entry with document number `doc` (one found in the postings)."""
        found = self._slots[doc]
        assert found is not None, "postings never hold a removed entry"
        return found

    def frequency(self, term: str) -> int:
        """Return how many entries hold `term`."""
        found = self._postings.get(term)
        if found is None:
            phrase = self._phrase(term)
            return phrase.size if phrase is not None else 0
        if isinstance(found, int):
            return 1
        return len(found) if isinstance(found, array.array) else len(found) // _POSTING_BYTES

    def postings(self, term: str) -> Postings | None:
        """Return `term`'s postings (`class << 32 | doc`, sorted; do not change them), or None."""
        self._check()
        return self._listed(term)

    def view(self, term: str) -> TermView | None:
        """Return `term`'s view for searching (memoised until the term's postings change;
        while the index is read elsewhere, see `reading`, the memo is only looked at)."""
        self._check()
        if term not in self._postings:
            return self._phrase(term)
        if self._readers:
            found = self._views.get(term)
            if found is None:
                postings = self._listed(term)
                return TermView(postings) if postings is not None else None
            return found
        found = self._views.pop(term, None)
        if found is None:
            postings = self._listed(term)
            if postings is None:
                return None
            found = TermView(postings)
            self._view_postings += found.size
            budget = max(_VIEW_BUDGET_MIN, 4 * len(self._entries))
            while self._view_postings > budget and self._views:
                oldest = next(iter(self._views))
                self._drop_view(oldest)
        self._views[term] = found  # (re)inserted last: the least recently used go first
        return found

    def _listed(self, term: str) -> Postings | None:
        """`term`'s postings (unpacking them if they come from a kept image, deriving them for
        a phrase term)."""
        found = self._postings.get(term)
        if found is None:
            phrase = self._phrase(term)
            return phrase.postings if phrase is not None else None
        if isinstance(found, array.array):
            return found
        unpacked = array.array("q")
        if isinstance(found, int):
            unpacked.append(found)
        else:
            unpacked.frombytes(found)
        self._postings[term] = unpacked
        return unpacked

    def _phrase(self, term: str) -> TermView | None:
        """The view of the phrase term `term` (derived, then cached until an entry holding its
        words changes; the cache holds at most `_VIEW_BUDGET_MIN` or 4 postings per entry), or
        None when it is no phrase or no entry holds it. While the index is read elsewhere (see
        `reading`), the cache is only looked at, as `view`'s is: a derived phrase is not kept."""
        if term in self._phrases:
            return self._phrases[term]
        words = split_phrase(term)
        if words is None:
            return None
        postings = self._derived(*words)
        found = TermView(postings) if postings else None
        if self._readers:
            return found
        phrases = self._phrases
        phrases[term] = found
        self._phrase_postings += found.size if found is not None else 1
        budget = max(_VIEW_BUDGET_MIN, 4 * len(self._entries))
        while self._phrase_postings > budget and len(phrases) > 1:
            dropped = phrases.pop(next(iter(phrases)))
            self._phrase_postings -= dropped.size if dropped is not None else 1
        return found

    def _derived(self, first: str, second: str) -> Postings:
        """The postings of the phrase `first second`: the entries holding both words whose
        content has `second` right after `first`, each in class (pair count, its length)."""
        one, other = self._postings.get(first), self._postings.get(second)
        if one is None or other is None:
            return array.array("q")
        one, other = self._listed(first), self._listed(second)
        assert one is not None and other is not None
        if len(one) > len(other):
            one, other = other, one
        classes = {value & DOC_MASK: value >> CLASS_SHIFT for value in one}
        if one is not other:
            classes = {doc: classes[doc] for value in other if (doc := value & DOC_MASK) in classes}
        values: list[int] = []
        slots, lengths, class_ids = self._slots, self._classes, self._class_ids
        for doc, klass in classes.items():
            entry = slots[doc]
            assert entry is not None, "postings never hold a removed entry"
            count = phrase_count(entry.content, first, second)
            if count:
                by_tf = class_ids[lengths[klass][1]]
                values.append(by_tf[float(count)] << CLASS_SHIFT | doc)  # registered: `_add`
        values.sort()
        return array.array("q", values)

    def _forget_phrases(self, terms: dict[str, float]) -> None:
        """Drop the derived phrases an entry holding `terms` changes (it is added or removed):
        those of its words (all of them, past `_PHRASES_CHECKED` cached phrases)."""
        phrases = self._phrases
        if not phrases:
            return
        if len(phrases) > _PHRASES_CHECKED:
            self._phrases = {}
            self._phrase_postings = 0
            return
        for term in list(phrases):
            first, _, second = term.partition(" ")
            if first in terms or second in terms:
                dropped = phrases.pop(term)
                self._phrase_postings -= dropped.size if dropped is not None else 1

    def words_starting(self, prefix: str) -> list[str]:
        """Return the indexed word terms that start with `prefix` (not `prefix` itself)."""
        self._check()
        vocabulary = self._vocabulary
        found = []
        for position in range(bisect.bisect_right(vocabulary, prefix), len(vocabulary)):
            term = vocabulary[position]
            if not term.startswith(prefix):
                break
            found.append(term)
        return found

    def __len__(self) -> int:
        """Return the number of indexed entries."""
        return len(self._entries)

    def __repr__(self) -> str:
        """Return a short description (entry and term counts)."""
        return f"SearchIndex(entries={len(self._entries)}, terms={len(self._postings)})"

    @contextlib.contextmanager
    def reading(self) -> Iterator[SearchIndex]:
        """Keep this index unchanged while a search runs elsewhere (in a worker thread): while
        it is read, `build_index` leaves it alone and builds a new index instead. Enter and
        leave on the thread that builds indexes."""
        self._check()
        self._readers += 1
        try:
            yield self
        finally:
            self._readers -= 1

    # ------------------------------------------------------------------ building

    def _check(self) -> None:
        if self._retired:
            raise RuntimeError("this index was taken over by a newer one; search that one")

    def _class(self, tf: float, length: float) -> int:
        by_tf = self._class_ids.get(length)
        if by_tf is None:
            by_tf = self._class_ids[length] = {}
        found = by_tf.get(tf)
        if found is None:
            found = by_tf[tf] = len(self._classes)
            self._classes.append((tf, length))
        return found

    def _fill(self, ordered: tuple[Entry, ...]) -> None:
        """Index `ordered` (sorted by line) into this empty index, numbering them 0, 1, ..."""
        filling = _Filling(self, ordered)
        while not filling.step(len(ordered) + 1):
            pass

    def _add(self, doc: int, entry: Entry) -> None:
        counts, length, phrase_frequencies = entry_terms(entry)
        self._forget_phrases(counts)
        for tf in phrase_frequencies:
            self._class(tf, length)
        for term, tf in counts.items():
            value = self._class(tf, length) << CLASS_SHIFT | doc
            postings = self._writable(term)
            if postings is None:
                self._postings[term] = array.array("q", (value,))
                if is_word(term):
                    bisect.insort(self._vocabulary, term)
            else:
                self._drop_view(term)
                bisect.insort(postings, value)
        self._slots[doc] = entry
        self._total_length += length
        self._lengths[length] = self._lengths.get(length, 0) + 1
        self._moments = None

    def _remove(self, doc: int, entry: Entry) -> None:
        counts, length, _ = entry_terms(entry)
        self._forget_phrases(counts)
        for term, tf in counts.items():
            value = self._class(tf, length) << CLASS_SHIFT | doc
            postings = self._writable(term)
            assert postings is not None, "an indexed entry's terms have postings"
            self._drop_view(term)
            del postings[bisect.bisect_left(postings, value)]
            if not postings:
                del self._postings[term]
                if is_word(term):
                    del self._vocabulary[bisect.bisect_left(self._vocabulary, term)]
        self._slots[doc] = None
        self._total_length -= length
        left = self._lengths[length] - 1
        if left:
            self._lengths[length] = left
        else:
            del self._lengths[length]
        self._moments = None

    def _writable(self, term: str) -> Postings | None:
        """`term`'s postings, to change: a fork copies those it still shares first."""
        postings = self._listed(term)
        if postings is None or self._owned is None or term in self._owned:
            return postings
        copied = array.array("q", postings)
        self._postings[term] = copied
        self._owned.add(term)
        return copied

    def forked(self) -> SearchIndex:
        """A copy of this index for `build_index` to take over, leaving this one as it is (it
        may be searched meanwhile, even in another thread): the copy shares the postings and
        copies each one before it changes it, so an update costs its own terms plus copying
        the term table, not a rebuild."""
        self._check()
        fork = SearchIndex()
        fork._entries = self._entries
        fork._docs = list(self._docs)
        fork._slots = list(self._slots)
        fork._postings = dict(self._postings)
        fork._classes = list(self._classes)
        fork._class_ids = {length: dict(by_tf) for length, by_tf in self._class_ids.items()}
        fork._vocabulary = list(self._vocabulary)
        fork._total_length = self._total_length
        fork._lengths = dict(self._lengths)
        fork._owned = set()
        return fork

    def _drop_view(self, term: str) -> None:
        dropped = self._views.pop(term, None)
        if dropped is not None:
            self._view_postings -= dropped.size

    def _take_over(self, ordered: tuple[Entry, ...]) -> SearchIndex | None:
        """Return an index of `ordered` made by updating this one (which is retired), or None
        when a rebuild is needed (see the module docstring)."""
        old = self._entries
        old_count, new_count = len(old), len(ordered)
        start = old_count if ordered[:old_count] == old else _common_start(old, ordered)
        end = _common_end(old, ordered, min(old_count, new_count) - start)
        removed = range(start, old_count - end)
        added = ordered[start : new_count - end]
        if end and len(added) > len(removed):
            return None  # no numbers left between the kept neighbours
        slots_after = len(self._slots) + (0 if end else len(added))
        if slots_after > 2 * new_count + 64:
            return None  # mostly unused numbers: a fresh, dense index is smaller and faster
        docs = self._docs
        for position in removed:
            self._remove(docs[position], old[position])
        if end:
            numbers = docs[start : start + len(added)]
        else:
            numbers = list(range(len(self._slots), slots_after))
            self._slots.extend([None] * len(added))
        for doc, entry in zip(numbers, added, strict=True):
            self._add(doc, entry)
        kept = docs[old_count - end :]
        for doc, entry in zip(kept, ordered[new_count - end :], strict=True):
            self._slots[doc] = entry  # the same entry, maybe on another line now
        updated = SearchIndex()
        for name in self.__slots__:
            setattr(updated, name, getattr(self, name))
        updated._entries = ordered
        updated._docs = docs[:start] + numbers + kept
        self._retire()
        return updated

    def _retire(self) -> None:
        self._retired = True
        self._postings, self._views, self._slots, self._docs = {}, {}, [], []
        self._phrases = {}


_RUN = 32_768
"""Terms sorted in one C call by `_sorted_in_runs`: a few milliseconds of the GIL."""


def _sorted_in_runs(terms: list[str]) -> list[str]:
    """`sorted(terms)`, without holding the GIL for long: runs of `_RUN` sorted in C, merged
    in Python (which lets other threads, the event loop's among them, run every few ms)."""
    runs = [sorted(terms[start : start + _RUN]) for start in range(0, len(terms), _RUN)]
    return list(heapq.merge(*runs))


class _Filling:
    """`SearchIndex._fill` a unit at a time: each `step(unit)` indexes up to `unit` entries, or
    packs up to 16 * `unit` terms, and returns True once the index is complete."""

    def __init__(self, index: SearchIndex, ordered: tuple[Entry, ...]) -> None:
        self.index = index
        self.ordered = ordered
        self.lists: dict[str, list[int] | int] = {}  # a term one entry holds: its posting
        self.packed: dict[str, Postings | bytes | int] = {}
        self.done = 0
        self.total = 0.0
        self.lengths: dict[float, int] = {}
        self.vocabulary_runs: list[list[str]] = []  # each packing unit's words, sorted

    def step(self, unit: int) -> bool:
        """Do one unit of the build; return True when the index is complete."""
        if self.done < len(self.ordered):
            self._index_entries(unit)
            return False
        lists, packed = self.lists, self.packed
        words: list[str] = []
        pop, append = lists.popitem, words.append
        for _ in range(min(len(lists), 16 * unit)):  # emptied as packed: never all at once
            term, values = pop()
            packed[term] = values if type(values) is int else array.array("q", sorted(values))  # type: ignore[arg-type]
            if term[0] != WHOLE_PREFIX and " " not in term:  # `is_word`, inlined: per term
                append(term)
        words.sort()  # the vocabulary sorted a unit at a time: one sort of it all holds the
        self.vocabulary_runs.append(words)  # GIL (everyone's event loop) for about a second
        if lists:
            return False
        index, ordered = self.index, self.ordered
        index._entries = ordered
        index._docs = list(range(len(ordered)))
        index._slots = list(ordered)
        index._postings = packed
        index._vocabulary = list(heapq.merge(*self.vocabulary_runs))  # merged in Python steps
        self.vocabulary_runs = []
        index._total_length = self.total
        index._lengths = self.lengths
        index._moments = None
        return True

    def _index_entries(self, unit: int) -> None:
        index, lists, lengths = self.index, self.lists, self.lengths
        class_ids = index._class_ids
        start = self.done
        stop = min(len(self.ordered), start + unit)
        ordered, known = self.ordered, lists.get
        total = self.total
        for doc in range(start, stop):
            counts, length, phrase_frequencies = entry_terms(ordered[doc])
            total += length
            lengths[length] = lengths.get(length, 0) + 1
            by_tf = class_ids.get(length)  # this loop is most of a cold start: kept tight
            if by_tf is None:
                by_tf = class_ids[length] = {}
            for tf in phrase_frequencies:  # the classes a derived phrase posting will need
                if tf not in by_tf:
                    index._class(tf, length)
            for term, tf in counts.items():
                klass = by_tf.get(tf)
                if klass is None:
                    klass = index._class(tf, length)
                posting = klass << CLASS_SHIFT | doc
                found = known(term)
                if found is None:
                    lists[term] = posting
                elif type(found) is int:
                    lists[term] = [found, posting]
                else:
                    found.append(posting)  # type: ignore[union-attr]
        self.total = total
        self.done = stop


class IndexBuild:
    """`build_index(entries)` (a fresh index) done a unit at a time, so a caller can give each
    unit its own worker-thread call and let others run in between: `step()` does up to
    `unit` entries' worth of work and returns None, the last call returns the index."""

    def __init__(self, entries: Iterable[Entry], unit: int) -> None:
        self._filling = _Filling(SearchIndex(), tuple(sorted(entries, key=_line)))
        self._unit = unit

    def step(self) -> SearchIndex | None:
        """Do one unit; return the index once it is complete."""
        return self._filling.index if self._filling.step(self._unit) else None


def _common_start(old: tuple[Entry, ...], new: tuple[Entry, ...]) -> int:
    """The number of leading entries that are equal in both."""
    count = 0
    for before, after in zip(old, new, strict=False):
        if before != after:
            break
        count += 1
    return count


def _common_end(old: tuple[Entry, ...], new: tuple[Entry, ...], most: int) -> int:
    """The number of trailing entries (at most `most`) with the same slug and content in both;
    their lines may differ (lines above them were added or removed)."""
    count = 0
    while count < most:
        before, after = old[-1 - count], new[-1 - count]
        if before.slug != after.slug or before.content != after.content:
            break
        count += 1
    return count


def changed_entries(old: Sequence[Entry], new: Sequence[Entry]) -> int:
    """Return how many entries an update from `old` to `new` (both in line order) would remove
    and add: what `build_index(new, index of old)` costs, in entries."""
    old, new = tuple(old), tuple(new)
    start = len(old) if new[: len(old)] == old else _common_start(old, new)
    end = _common_end(old, new, min(len(old), len(new)) - start)
    return (len(old) - start - end) + (len(new) - start - end)


def to_image(index: SearchIndex, key: str) -> IndexImage:
    """Return `index` as data (numbered densely, whatever numbers it uses), under `key`."""
    index._check()
    renumber = {doc: position for position, doc in enumerate(index._docs)}
    dense = all(doc == position for doc, position in renumber.items())
    postings: dict[str, bytes] = {}
    for term, found in index._postings.items():
        if isinstance(found, bytes) and dense:
            postings[term] = found
            continue
        if isinstance(found, int):
            values: Postings = array.array("q", (found,))  # kept an int in the index
        elif isinstance(found, array.array):
            values = found
        else:
            unpacked = index._listed(term)
            if unpacked is None:
                continue
            values = unpacked
        if not dense:
            values = array.array(
                "q",
                sorted(
                    value >> CLASS_SHIFT << CLASS_SHIFT | renumber[value & DOC_MASK]
                    for value in values
                ),
            )
        postings[term] = values.tobytes()
    return IndexImage(
        version=IMAGE_VERSION,
        key=key,
        entries=len(index._entries),
        classes=list(index._classes),
        postings=postings,
        total_length=index._total_length,
        lengths=sorted(index._lengths.items()),
    )


def from_image(entries: Iterable[Entry], image: IndexImage, key: str) -> SearchIndex | None:
    """Return the index `image` holds for `entries`, or None when it is not theirs (another
    `key`, entry count or format version, or length counts that are not the entries')."""
    ordered = tuple(sorted(entries, key=_line))
    if image.version != IMAGE_VERSION or image.key != key or image.entries != len(ordered):
        return None
    index = SearchIndex()
    index._entries = ordered
    index._docs = list(range(len(ordered)))
    index._slots = list(ordered)
    index._postings = dict(image.postings)
    index._classes = [(float(tf), float(length)) for tf, length in image.classes]
    for number, (tf, length) in enumerate(index._classes):
        index._class_ids.setdefault(length, {})[tf] = number
    index._vocabulary = _sorted_in_runs([term for term in image.postings if is_word(term)])
    index._total_length = image.total_length
    index._lengths = {float(length): count for length, count in image.lengths}
    if sum(index._lengths.values()) != len(ordered):
        return None
    return index


def build_index(entries: Iterable[Entry], previous: SearchIndex | None = None) -> SearchIndex:
    """Build the inverted index of one category's entries.

    Args:
        entries: The category's entries, in any order.
        previous: The index of the file's previous version, if there is one. It is taken over
            (unless it is being read, see `SearchIndex.reading`): the entries both versions
            share keep their place and only the changed ones are indexed, so a store or an
            edit costs only what changed. Do not use it afterwards.

    Returns:
        An index to pass to `memd.core.search.ranking.search` together with its category.
    """
    ordered = tuple(sorted(entries, key=_line))
    if previous is not None and not previous._readers:
        previous._check()
        updated = previous._take_over(ordered)
        if updated is not None:
            return updated
        previous._retire()
    index = SearchIndex()
    index._fill(ordered)
    return index
