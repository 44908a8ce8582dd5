"""A category file parsed for writing, kept current one change at a time.

Theory of operation: a `Catalog` is one version of a category file: its lines as raw strings
(each with its own line ending, so rendering is one join), its entries in file order, a key per
entry for the dedup index, the keys of each slug, and the dedup index itself (built on first
use); the `Document` of those lines is built only when asked for. Keys
increase in file order: a new entry always goes right after the last one and takes the next key,
an updated entry keeps its key. A batch of commands changes a `CatalogEditor`, a private working
copy, and `freeze()` is the next version. A change costs what it touches (a delete also
renumbers the entries below it) plus copying the line and entry tuples once per batch, never a
re-parse of the file or a rebuild of the index.

Rules:
- Every edit follows `mdformat`'s rules exactly (`insert_entry`, `replace_line`, `remove_line`):
  a frozen catalog equals `Catalog.from_document` of its own document, entries and index alike.
- A version is never changed after it is made; an editor's changes are invisible to its base.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator

from memd.core.format import mdformat
from memd.core.format.mdformat import Document, Entry, Line
from memd.core.writes import dedup
from memd.core.writes.dedup_index import DedupBuild, DedupIndex, IndexEditor
from memd.core.writes.layers import Layers

Slugs = Layers[str, tuple[int, ...]]
"""Slug -> keys of the entries with that slug, ascending (the first in the file first)."""


class Catalog:
    """One version of a category file; see the module docstring."""

    __slots__ = ("_doc", "_index", "entries", "keys", "next_key", "raws", "slugs")

    def __init__(
        self,
        raws: tuple[str, ...],
        entries: tuple[Entry, ...],
        keys: tuple[int, ...],
        slugs: Slugs,
        next_key: int,
        *,
        index: DedupIndex | None = None,
        doc: Document | None = None,
    ) -> None:
        """Wrap prepared parts; use `from_document`, `from_text` or an editor instead."""
        self.raws = raws
        self.entries = entries
        self.keys = keys
        self.slugs = slugs
        self.next_key = next_key
        self._index = index
        self._doc = doc

    @classmethod
    def from_document(cls, doc: Document) -> Catalog:
        """Return the catalog of `doc` (entries keyed 0, 1, ... in file order)."""
        raws = tuple(line.text + line.eol for line in doc.lines)
        found = mdformat.entries(doc)
        slugs: dict[str, tuple[int, ...]] = {}
        for key, entry in enumerate(found):
            if entry.slug is not None:
                slugs[entry.slug] = (*slugs.get(entry.slug, ()), key)
        keys = tuple(range(len(found)))
        return cls(raws, found, keys, Layers.of(slugs), len(found), doc=doc)

    @classmethod
    def from_text(cls, text: str, *, previous: Catalog | None = None) -> Catalog:
        """Return the catalog of the file text `text`.

        With `previous` (the same file before an outside edit), the entries above the first
        changed line keep their keys and their place in the dedup index, and only the entries
        from there on are indexed again (an edit near the end, such as an append, costs what it
        changed); the result equals a fresh catalog of `text`.
        """
        fresh = cls._of_text(text)
        if previous is None or previous._index is None:
            return fresh
        return fresh._rekeyed_after(previous)

    @classmethod
    def _of_text(cls, text: str) -> Catalog:
        """`from_document(mdformat.parse(text))`, without building (or keeping) the document:
        a catalog holds the text once, as its raw lines, plus its entries' contents."""
        parts = text.split("\n")
        raws = [part + "\n" for part in parts[:-1]]
        if parts[-1]:
            raws.append(parts[-1])
        del parts
        found: list[Entry] = []
        slugs: dict[str, tuple[int, ...]] = {}
        for number, raw in enumerate(raws, start=1):
            parsed = mdformat.parse_entry_line(_split(raw)[0])
            if parsed is not None:
                if parsed[0] is not None:
                    slugs[parsed[0]] = (*slugs.get(parsed[0], ()), len(found))
                found.append(Entry(line=number, slug=parsed[0], content=parsed[1]))
        keys = tuple(range(len(found)))
        return cls(tuple(raws), tuple(found), keys, Layers.of(slugs), len(found))

    @property
    def has_index(self) -> bool:
        """Whether the dedup index is built (`index` costs nothing more)."""
        return self._index is not None

    def _rekeyed_after(self, previous: Catalog) -> Catalog:
        """Return this (fresh) catalog keyed to follow `previous`, reusing its index."""
        old, new = previous.raws, self.raws
        limit = min(len(old), len(new))
        same = 0
        while same < limit and old[same] == new[same]:
            same += 1
        kept = bisect.bisect_right(previous.entries, same, key=_line_of)
        index = previous.index.edit()
        for key, entry in zip(previous.keys[kept:], previous.entries[kept:], strict=True):
            index.remove(key, entry.content)
        start = previous.next_key
        added = self.entries[kept:]
        keys = (*previous.keys[:kept], *range(start, start + len(added)))
        for key, entry in zip(keys[kept:], added, strict=True):
            index.add(key, entry.content)
        slugs: dict[str, tuple[int, ...]] = {}
        for key, entry in zip(keys, self.entries, strict=True):
            if entry.slug is not None:
                slugs[entry.slug] = (*slugs.get(entry.slug, ()), key)
        return Catalog(
            self.raws,
            self.entries,
            keys,
            Layers.of(slugs),
            start + len(added),
            index=index.freeze(),
            doc=self._doc,
        )

    @property
    def doc(self) -> Document:
        """The file as a `Document` (built on first use)."""
        if self._doc is None:
            self._doc = Document(tuple(Line(*_split(raw)) for raw in self.raws))
        return self._doc

    @property
    def index(self) -> DedupIndex:
        """The dedup index of the entries, by key (built on first use)."""
        if self._index is None:
            self._index = DedupIndex.build(self._items())
        return self._index

    def index_in_units(self, unit: int) -> Callable[[], DedupIndex | None]:
        """Return a step that builds `index` a unit (`unit` entries) per call: None until the
        call that completes it, which also makes it this catalog's index (for a caller that
        gives each unit its own worker-thread call)."""
        build = None if self._index is not None else DedupBuild(self._items(), unit)

        def step() -> DedupIndex | None:
            if self._index is None and build is not None:
                built = build.step()
                if built is None:
                    return None
                self._index = built
            return self._index

        return step

    def _items(self) -> Iterator[tuple[int, str]]:
        return zip(self.keys, (entry.content for entry in self.entries), strict=True)

    def render(self) -> str:
        """Return the file text, byte for byte `mdformat.render(self.doc)`."""
        return "".join(self.raws)

    def edit(self) -> CatalogEditor:
        """Return a working copy to change; this version stays as it is."""
        return CatalogEditor(self)


class CatalogEditor:
    """A private, changing copy of a catalog for one batch of commands; see `Catalog`.

    Lookups see every change made so far. Copies are taken on the first change.
    """

    def __init__(self, base: Catalog) -> None:
        self._base = base
        self._raws: list[str] | tuple[str, ...] = base.raws
        self._entries: list[Entry] | tuple[Entry, ...] = base.entries
        self._keys: list[int] | tuple[int, ...] = base.keys
        self._slugs = base.slugs
        self._index: DedupIndex | IndexEditor = base.index
        self._next_key = base.next_key
        self.changed = False
        """Whether any line changed (the file must be written)."""

    # ------------------------------------------------------------------ lookups

    @property
    def count(self) -> int:
        """How many entries the file holds now."""
        return len(self._entries)

    @property
    def taken(self) -> Slugs:
        """The slugs in use now (for `slugs.derive_slug`)."""
        return self._slugs

    def first_with_slug(self, slug: str) -> Entry | None:
        """Return the first entry (in file order) whose slug is `slug`, or None."""
        keys = self._slugs.get(slug)
        return self._entries[bisect.bisect_left(self._keys, keys[0])] if keys else None

    def holding(self, content: str, *, slugless: bool = False) -> Entry | None:
        """Return the first entry whose text is exactly `content` (with `slugless`: the first
        such entry without a slug), or None (a scan: for the rare restore, not for stores)."""
        found = (e for e in self._entries if e.content == content and not (slugless and e.slug))
        return next(found, None)

    def match(self, content: str) -> dedup.Match:
        """Return `dedup.find_match(content, entries)`, its candidates found through the index."""
        return dedup.decide(content, self.candidates(content))

    def candidates(self, content: str) -> list[Entry]:
        """Return `dedup.ranked(content, entries)`, found through the index."""
        keys = self._index.ranked(content, dedup.CANDIDATES)
        return [self._entries[bisect.bisect_left(self._keys, key)] for key in keys]

    def next_line(self) -> int:
        """Return the line number `insert` would give a new entry now (changes nothing)."""
        raws, entries = self._raws, self._entries
        position = entries[-1].line if entries else len(raws)
        return position + (1 if self._tight() or not _needs_separator(raws, position) else 2)

    def document(self) -> Document:
        """Return the document as it stands now."""
        return self.freeze().doc

    # ------------------------------------------------------------------ changes

    def insert(self, slug: str, content: str) -> Entry:
        """Add `- [slug] content` right after the last entry (`mdformat.insert_entry`); return
        the new entry."""
        raws, entries, keys = self._own()
        eol = _first_eol(raws)
        if raws and not raws[-1].endswith("\n"):
            raws[-1] += eol
        position = entries[-1].line if entries else len(raws)
        text = mdformat.format_entry(slug, content)
        new = [text + eol]
        if not self._tight() and _needs_separator(raws, position):
            new.insert(0, eol)
        raws[position:position] = new
        entry = _entry(position + len(new), text)
        key = self._next_key
        self._next_key += 1
        entries.append(entry)
        keys.append(key)
        self._add(key, entry)
        return entry

    def replace(self, old: Entry, slug: str, content: str) -> Entry:
        """Rewrite entry `old`'s line as `- [slug] content`, in place; return the new entry."""
        raws, entries, keys = self._own()
        position = self._position(old)
        key = keys[position]
        text, eol = _split(raws[old.line - 1])
        new_text = mdformat.format_entry(slug, content)
        if new_text == text:
            return old
        raws[old.line - 1] = new_text + eol
        entry = _entry(old.line, new_text)
        entries[position] = entry
        self._drop(key, old)
        self._add(key, entry)
        return entry

    def remove(self, old: Entry) -> None:
        """Delete entry `old`'s line (and a blank line that would double, as
        `mdformat.remove_line`); the entries below move up."""
        raws, entries, keys = self._own()
        position = self._position(old)
        index = old.line - 1
        before_blank = index > 0 and _is_blank(raws[index - 1])
        after_blank = index + 1 >= len(raws) or _is_blank(raws[index + 1])
        start = index - 1 if before_blank and after_blank else index
        del raws[start : index + 1]
        shift = index + 1 - start
        self._drop(keys[position], old)
        del entries[position]
        del keys[position]
        for number in range(position, len(entries)):
            moved = entries[number]
            entries[number] = Entry(line=moved.line - shift, slug=moved.slug, content=moved.content)

    def freeze(self) -> Catalog:
        """Return the edited catalog as a new version (the editor may go on changing)."""
        index = self._index.freeze() if isinstance(self._index, IndexEditor) else self._index
        self._index = index
        self._slugs = self._slugs.settled()
        if not isinstance(self._raws, list):  # unchanged since the last version
            return self._base
        catalog = Catalog(
            tuple(self._raws),
            tuple(self._entries),
            tuple(self._keys),
            self._slugs,
            self._next_key,
            index=index,
        )
        self._base = catalog
        self._raws, self._entries, self._keys = catalog.raws, catalog.entries, catalog.keys
        return catalog

    # ------------------------------------------------------------------ helpers

    def _own(self) -> tuple[list[str], list[Entry], list[int]]:
        """Return the lists to change, copying them (and the slug and index tables) once."""
        self.changed = True
        if not isinstance(self._raws, list):
            self._raws = list(self._raws)
            self._entries = list(self._entries)
            self._keys = list(self._keys)
        if self._slugs is self._base.slugs:
            self._slugs = self._slugs.edited()
        if isinstance(self._index, DedupIndex):
            self._index = self._index.edit()
        assert isinstance(self._entries, list) and isinstance(self._keys, list)
        return self._raws, self._entries, self._keys

    def _position(self, entry: Entry) -> int:
        """Return where `entry` (an entry of this file as it stands) is in the entry list."""
        position = bisect.bisect_left(self._entries, entry.line, key=_line_of)
        assert self._entries[position] == entry, "not an entry of this catalog"
        return position

    def _tight(self) -> bool:
        entries = self._entries
        return len(entries) >= 2 and entries[-1].line == entries[-2].line + 1

    def _add(self, key: int, entry: Entry) -> None:
        if entry.slug is not None:
            keys = self._slugs.get(entry.slug) or ()
            self._slugs.set(entry.slug, tuple(sorted((*keys, key))))
        index = self._index
        assert isinstance(index, IndexEditor)
        index.add(key, entry.content)

    def _drop(self, key: int, entry: Entry) -> None:
        if entry.slug is not None:
            keys = tuple(k for k in self._slugs.get(entry.slug) or () if k != key)
            self._slugs.set(entry.slug, keys or None)
        index = self._index
        assert isinstance(index, IndexEditor)
        index.remove(key, entry.content)


def _line_of(entry: Entry) -> int:
    return entry.line


def _split(raw: str) -> tuple[str, str]:
    """Return a raw line's text and its ending ("\r\n", "\n" or ""), as `mdformat.parse`."""
    if raw.endswith("\r\n"):
        return raw[:-2], "\r\n"
    if raw.endswith("\n"):
        return raw[:-1], "\n"
    return raw, ""


def _is_blank(raw: str) -> bool:
    """`mdformat.is_blank` of a raw line (its ending is whitespace too)."""
    return not raw.strip()


def _first_eol(raws: list[str]) -> str:
    """`mdformat.line_ending`: the first line's ending, or "\n"."""
    for raw in raws:
        if raw.endswith("\n"):
            return "\r\n" if raw.endswith("\r\n") else "\n"
    return "\n"


def _needs_separator(raws: list[str] | tuple[str, ...], position: int) -> bool:
    """Whether an entry inserted at `position` (0-based) needs a blank line before it."""
    return position > 0 and not _is_blank(raws[position - 1])


def _entry(line: int, text: str) -> Entry:
    """Return the entry on line `line` whose text is `text` (as `mdformat.entries` reads it)."""
    parsed = mdformat.parse_entry_line(text)
    assert parsed is not None, "an entry line memd writes always parses as an entry"
    return Entry(line=line, slug=parsed[0], content=parsed[1])
