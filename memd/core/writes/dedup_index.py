"""An inverted keyword index that finds `dedup.ranked`'s candidates without comparing the new
content with every entry of the category.

Theory of operation: every entry is known by an integer key, and keys increase in file order
(the caller's promise; `catalog.Catalog` keeps it). The index maps each keyword to the keys of the
entries holding it, each normalised text to its keys, and each keyword-set size to the keys of
that size. A keyword held by fewer than DENSE_MIN entries keeps its keys in a tuple; a more common
one keeps them in a bit set (a Python int, bit k for key k), so "how many of the new content's
keywords does each entry hold" is a bit-sliced sum of a few bit sets (whole-int operations, no
loop over entries), and the entries with the highest count and the smallest size come out first.

Rules (the result is exactly `dedup.ranked`'s over the same entries in key order):
- An entry with the content's normal form, or its plain form (`wording.plain_key`: the same
  words but for case and punctuation), is a repeat and the only candidate: the smallest key
  among them.
- Otherwise the candidates are the `limit` entries with the greatest Jaccard similarity among
  those close to the content (`close`: sharing CONTAINMENT of the smaller keyword set), ties by
  smallest key; entries sharing no keyword with the content are never looked at.
- Entries reached through a rare keyword are compared one by one (there are few). The others
  hold only common keywords of the content, so their count of shared keywords `c` and their size
  `s` give their similarity `c / (|A| + s - c)` exactly; groups are visited from the highest
  count down and stop as soon as no remaining entry can reach the candidates found
  (`c / |A|` bounds it). A keyword that every entry holds is not summed: it adds one to every
  count.
- `DedupIndex` is immutable. `edit()` returns an `IndexEditor` that copies what it changes and
  whose `freeze()` is the next version; an editor belongs to one owner (a batch of commands).

Memory: a bit set is as long as the largest key (about n/8 bytes for n entries), and only a
keyword held by DENSE_MIN entries or more gets one, so there are at most (keywords over all
entries) / DENSE_MIN of them; in practice a few hundred (the common words of a category). Most
keywords and forms are held by one entry: their key is kept as a bare int, not a tuple of one
(`Keys`); an entry's keywords are a tuple (a frozenset of ten costs 730 bytes, a tuple 136)
of the stemmer's interned strings, shared with the search index.
"""

from __future__ import annotations

from collections.abc import Iterable

from memd.core.writes.layers import Layers
from memd.core.writes.wording import bulk_index_terms, index_terms, plain_key

CONTAINMENT = 0.5
"""The least share of the smaller keyword set two texts must share to be candidates for each
other: no skip or update of the 633 labelled store pairs shares less."""

DENSE_MIN = 8
"""A keyword held by this many entries keeps them in a bit set instead of a tuple."""
SPARSE_MAX = DENSE_MIN // 2
"""A bit set that shrinks below this many entries turns back into a tuple."""

Keys = int | tuple[int, ...]
"""The keys of the entries holding a keyword or form, ascending: one key as a bare int."""

Ranked = list[tuple[float, int]]
"""Candidates as (similarity, key), best first: similarity descending, then key ascending."""


class _Tables:
    """The index's tables; `DedupIndex` and `IndexEditor` share the lookup."""

    __slots__ = ("dense", "normal", "sizes", "sparse", "words")

    def __init__(
        self,
        dense: dict[str, int],
        sparse: Layers[str, Keys],
        normal: Layers[str, Keys],
        sizes: dict[int, int],
        words: Layers[int, tuple[str, ...]],
    ) -> None:
        self.dense = dense  # keyword -> bit set of keys
        self.sparse = sparse  # keyword -> keys, ascending (fewer than DENSE_MIN)
        self.normal = normal  # normal form or plain key -> keys, ascending
        self.sizes = sizes  # keyword-set size (>= 1) -> bit set of keys
        self.words = words  # key -> its keyword set

    def ranked(self, content: str, limit: int) -> list[int]:
        """Return the keys of the candidates for `content`, best first (see the module rules)."""
        normal, wanted = index_terms(content)
        same = _keys(self.normal.get(normal))
        twin = _keys(self.normal.get(plain_key(content)))
        if same or twin:
            return [min((*same[:1], *twin[:1]))]
        if not wanted or limit < 1:
            return []
        return [key for _, key in _ranked_by_keywords(self, wanted, limit)]


def close(shared: int, size: int, other: int) -> bool:
    """True if two keyword sets of `size` and `other` keywords sharing `shared` are close enough
    for one text to be a skip or an update of the other."""
    return shared > 0 and shared >= CONTAINMENT * min(size, other)


def _offer(top: Ranked, score: float, key: int, limit: int) -> bool:
    """Put (score, key) among the `limit` best in `top` if it belongs there; return whether it
    did."""
    if len(top) == limit and (score, -key) <= (top[-1][0], -top[-1][1]):
        return False
    top.append((score, key))
    top.sort(key=lambda item: (-item[0], item[1]))
    del top[limit:]
    return True


def _floor(top: Ranked, limit: int) -> float:
    """The lowest similarity that can still join `top` (ties may, by key)."""
    return top[-1][0] if len(top) == limit else 0.0


def _ranked_by_keywords(tables: _Tables, wanted: frozenset[str], limit: int) -> Ranked:
    size = len(wanted)
    top: Ranked = []
    seen: set[int] = set()
    dense: list[int] = []
    everyone = _union(list(tables.sizes.values()))  # every entry with a keyword
    common = 0  # keywords every entry holds: they add the same to every count
    for word in wanted:
        postings = tables.dense.get(word)
        if postings is None:
            seen.update(_keys(tables.sparse.get(word)))
        elif postings == everyone:
            common += 1
        else:
            dense.append(postings)
    words = tables.words
    for key in sorted(seen):
        other = words.get(key) or ()
        shared = sum(1 for word in other if word in wanted)
        if close(shared, size, len(other)):
            _offer(top, shared / (size + len(other) - shared), key, limit)
    if not dense and not common:
        return top
    exclude = 0
    for key in seen:
        exclude |= 1 << key
    planes = _bit_sliced_sum(dense)
    candidates = everyone if common else _union(planes)
    _ranked_dense(tables, planes, common, size, candidates & ~exclude, top, limit)
    return top


def _union(sets: list[int]) -> int:
    union = 0
    for bits in sets:
        union |= bits
    return union


def _bit_sliced_sum(sets: list[int]) -> list[int]:
    """Return bit planes p0, p1, ...: bit k of plane j is bit j of how many `sets` hold key k."""
    planes: list[int] = []
    for bits in sets:
        carry = bits
        for level, plane in enumerate(planes):
            planes[level] = plane ^ carry
            carry &= plane
            if not carry:
                break
        else:
            if carry:
                planes.append(carry)
    return planes


def _ranked_dense(
    tables: _Tables,
    planes: list[int],
    common: int,
    size: int,
    remaining: int,
    top: Ranked,
    limit: int,
) -> None:
    """Offer the `remaining` entries to `top` by how many keywords they share (`common` plus
    their count in `planes`), highest count first."""
    sizes = sorted(tables.sizes)
    top_level = len(planes) - 1
    while remaining:
        group, count = remaining, common
        for level in range(top_level, -1, -1):
            hit = group & planes[level]
            if hit:
                group = hit
                count += 1 << level
        if count / size < _floor(top, limit):  # every remaining entry shares at most `count`
            break
        for other in sizes:
            if other < count:
                continue
            score = count / (size + other - count)
            if score < _floor(top, limit) or not close(count, size, other):
                break  # larger entries are further away on both counts
            hit = group & tables.sizes[other]
            while hit:
                low = hit & -hit
                if not _offer(top, score, low.bit_length() - 1, limit):
                    break  # later keys are larger: they cannot join either
                hit ^= low
        remaining ^= group


class DedupIndex(_Tables):
    """One immutable version of the index; see the module docstring."""

    __slots__ = ()

    @classmethod
    def build(cls, items: Iterable[tuple[int, str]]) -> DedupIndex:
        """Return the index of `(key, content)` pairs (keys ascending, as in the file)."""
        build = DedupBuild(items, unit=1 << 62)
        while (built := build.step()) is None:
            pass
        return built

    def edit(self) -> IndexEditor:
        """Return an editor that starts from this version and leaves it unchanged."""
        return IndexEditor(self)


_EMPTY = DedupIndex({}, Layers({}, {}), Layers({}, {}), {}, Layers({}, {}))


class DedupBuild:
    """`DedupIndex.build` a unit at a time, so a caller can give each unit its own
    worker-thread call and let others run in between: `step()` reads up to `unit` entries and
    returns None; the call that reads the last returns the index."""

    def __init__(self, items: Iterable[tuple[int, str]], unit: int) -> None:
        self._items = iter(items)
        self._unit = unit
        self._editor = IndexEditor(_EMPTY)

    def step(self) -> DedupIndex | None:
        """Read one unit of entries; return the index once every entry is in it."""
        editor = self._editor
        for _ in range(self._unit):
            item = next(self._items, None)
            if item is None:
                built = editor.freeze()
                return DedupIndex(
                    built.dense,
                    Layers.of(built.sparse.as_dict()),
                    Layers.of(built.normal.as_dict()),
                    built.sizes,
                    Layers.of(built.words.as_dict()),
                )
            key, content = item
            editor.add_terms(key, *bulk_index_terms(content), plain_key(content))
        return None


class IndexEditor(_Tables):
    """A private, changing copy of an index; `freeze()` gives the new version.

    Tables are copied on the first change (the large ones only their recent changes, see
    `Layers`), so reading an unchanged editor costs nothing.
    """

    __slots__ = ("_copied",)

    def __init__(self, base: _Tables) -> None:
        super().__init__(base.dense, base.sparse, base.normal, base.sizes, base.words)
        self._copied = False

    def _own(self) -> None:
        if not self._copied:
            self.dense = dict(self.dense)
            self.sparse = self.sparse.edited()
            self.normal = self.normal.edited()
            self.sizes = dict(self.sizes)
            self.words = self.words.edited()
            self._copied = True

    def add(self, key: int, content: str) -> None:
        """Index entry `key` (not indexed yet) holding `content`."""
        self.add_terms(key, *index_terms(content), plain_key(content))

    def add_terms(self, key: int, normal: str, found: frozenset[str], plain: str) -> None:
        """Index entry `key` (not indexed yet) by its normal form, keywords and `plain_key`."""
        self._own()
        for form in (normal, plain):
            self.normal.set(form, _with(self.normal.get(form), key))
        self.words.set(key, tuple(found))
        if not found:
            return
        bit = 1 << key
        self.sizes[len(found)] = self.sizes.get(len(found), 0) | bit
        for word in found:
            bits = self.dense.get(word)
            if bits is not None:
                self.dense[word] = bits | bit
                continue
            keys = _with(self.sparse.get(word), key)
            if not isinstance(keys, int) and len(keys) >= DENSE_MIN:
                self.sparse.set(word, None)
                self.dense[word] = _to_bits(keys)
            else:
                self.sparse.set(word, keys)

    def remove(self, key: int, content: str) -> None:
        """Forget entry `key`, indexed with `content`."""
        self._own()
        normal = index_terms(content)[0]  # an update's old text was just judged: cached
        for form in (normal, plain_key(content)):
            self.normal.set(form, _without(self.normal.get(form), key))
        found = self.words.get(key)
        self.words.set(key, None)
        if not found:
            return
        bit = 1 << key
        sized = self.sizes[len(found)] & ~bit
        if sized:
            self.sizes[len(found)] = sized
        else:
            del self.sizes[len(found)]
        for word in found:
            bits = self.dense.get(word)
            if bits is None:
                self.sparse.set(word, _without(self.sparse.get(word), key))
                continue
            bits &= ~bit
            if bits.bit_count() < SPARSE_MAX:
                del self.dense[word]
                self.sparse.set(word, _compact(_to_keys(bits)))
            else:
                self.dense[word] = bits

    def freeze(self) -> DedupIndex:
        """Return the edited index as a new immutable version. The editor may go on changing;
        the version returned stays as it is."""
        self.sparse = self.sparse.settled()
        self.normal = self.normal.settled()
        self.words = self.words.settled()
        frozen = DedupIndex(self.dense, self.sparse, self.normal, self.sizes, self.words)
        self._copied = False  # a later change copies again
        return frozen


def _keys(found: Keys | None) -> tuple[int, ...]:
    """The keys a table holds under a name, as a tuple (empty for None)."""
    if found is None:
        return ()
    return (found,) if isinstance(found, int) else found


def _compact(keys: tuple[int, ...]) -> Keys | None:
    """How a table keeps `keys`: None for none, a bare int for one, else the tuple."""
    if not keys:
        return None
    return keys[0] if len(keys) == 1 else keys


def _with(found: Keys | None, key: int) -> Keys:
    """Return the keys `found` plus `key`, ascending (new keys are almost always the largest)."""
    if found is None:
        return key
    keys = _keys(found)
    if keys[-1] < key:
        return (*keys, key)
    return tuple(sorted((*keys, key)))


def _without(found: Keys | None, key: int) -> Keys | None:
    return _compact(tuple(k for k in _keys(found) if k != key))


def _to_bits(keys: Iterable[int]) -> int:
    bits = 0
    for key in keys:
        bits |= 1 << key
    return bits


def _to_keys(bits: int) -> tuple[int, ...]:
    keys = []
    while bits:
        low = bits & -bits
        keys.append(low.bit_length() - 1)
        bits ^= low
    return tuple(keys)
