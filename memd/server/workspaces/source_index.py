"""A workspace's read-only sources as its searches see them: which files
(`memd.fs.source_files`), each one's chunks (`memd.core.sources.chunks`) and their search indexes
(`SourcesIndex`, one a segment of files, `memd.core.sources.segments`).

Rules:
- One owner: the workspace (`Workspace.sources`). Nothing here ever writes.
- A search is served the last look and never waits for a new one (but for the first, when
  there is nothing to serve): when the last look may be out of date, the search asks for a new
  one and `run`, the workspace's one builder, takes it in a worker thread. So a result may be
  one look behind for a moment. One look at a time per workspace; a look and its indexes never
  change, so a worker thread may rank them while the next look is built.
- When the last look may be out of date: memd's config `sources` or `max_file_bytes` changed;
  where the watcher watches every directory the look found (`watch`, the directories where a
  change can add, change or remove a source), when it reported a change there or in
  `.memory/memd.toml`, or lost events; where it cannot, once the look is `FRESH_SECONDS` old.
  A file's content changing (no name coming or going) is a *touch*: the next look reads only
  the touched files again, without walking the tree.
- A look re-reads and re-chunks only the files whose fingerprint changed; a segment whose
  files are all unchanged keeps its index, and a changed one's index is updated from its last
  version (a fork: the served look's index is left as it is), so an append costs about its own
  chunks' terms, plus reading and chunking that one file again. Looks start at least as long
  after the last one ended as it took (a source changing nonstop costs at most half a core),
  and each look lets the last go (nothing grows with the number of looks).
- A chunk is an entry whose line is the chunk's first line and whose content is its searchable
  text (its heading path, then its text); `chunk_at` gives the chunk back for results. The
  block `memd init` writes into AGENTS.md or CLAUDE.md (memd's own instructions, not the
  project's knowledge) is left out.
- What cannot be used is left out and kept in `refused`, one sentence each: a link out of the
  workspace, a file too big or not UTF-8, files past `MAX_TOTAL_BYTES` in all, a
  `.memory/memd.toml` that cannot be used (then the defaults and memd's config apply). A look
  that fails outright (a tree too deep to walk) keeps the last look's files and says why.

Size: the look (full or touched files only), its segments' indexes and the builder that
serves the last look while taking the next, which share the look's invariants.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import anyio

from memd.config import ConfigError
from memd.core.format.categories import CATEGORY_FILES
from memd.core.format.mdformat import Entry
from memd.core.project.agent_files import BlockError, find_block
from memd.core.search import ranking
from memd.core.search.index import SearchIndex
from memd.core.sources.chunks import Chunk, chunk, split_lines
from memd.core.sources.segments import segments
from memd.core.sources.source_globs import resolve_sources
from memd.fs import source_files
from memd.fs.storage import Fingerprint
from memd_client.errors import RpcError

FRESH_SECONDS = 1.0
"""How old a look at sources the watcher cannot watch may be before a search asks again."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""The most source text one workspace holds in memory: files past it are left out (and said)."""

Asked = tuple[tuple[str, ...], int]
"""What a look is taken under: memd's config `sources` and `max_file_bytes`."""
Watch = Callable[[Sequence[str]], tuple[bool, bool]]
"""Watch these directories (and no others); says whether every one is watched now, and whether
some were not watched before."""


class SourceFile:
    """One version of one source file: its chunks as entries."""

    def __init__(
        self,
        path: str,
        real_path: str,
        fingerprint: Fingerprint,
        chunks: Sequence[Chunk],
    ) -> None:
        self.path = path
        self.real_path = real_path
        self.fingerprint = fingerprint
        self.chunks = tuple(chunks)
        self.entries = tuple(
            Entry(line=part.start, slug=None, content=part.searchable) for part in self.chunks
        )

    @functools.cached_property
    def tags(self) -> dict[int, frozenset[str]]:
        """No tags: a source's `#` words are its authors' text."""
        return {}

    @functools.cached_property
    def chunk_at(self) -> dict[int, Chunk]:
        """Each chunk by its first line."""
        return {part.start: part for part in self.chunks}


class SourcesIndex:
    """The chunks of a run of source files (a segment, in path order) in one search index: a
    search's cost grows with the number of indexes it walks, and a workspace may have dozens
    of sources.

    The index's entries are numbered 1, 2, ... over the files in path order, each file's chunks
    in line order (so equal scores go by path, then line, as one index a file would give);
    `owner` gives an entry back as its file's path and its own entry. Built from `previous`
    (the same segment in the last look), it updates a fork of that one's index.
    """

    def __init__(self, files: Sequence[SourceFile], previous: SourcesIndex | None = None) -> None:
        self.files = tuple(sorted(files, key=lambda source: source.path))
        self.paths = tuple(source.path for source in self.files)
        self.owners: list[tuple[str, Entry]] = []
        numbered: list[Entry] = []
        for source in self.files:
            for entry in source.entries:
                self.owners.append((source.path, entry))
                numbered.append(Entry(line=len(self.owners), slug=None, content=entry.content))
        base = previous.index.forked() if previous is not None else None
        self.index: SearchIndex = ranking.build_index(numbered, base)

    def owner(self, entry: Entry) -> tuple[str, Entry]:
        """The path of the file holding an entry of `index`, and the chunk's entry there."""
        return self.owners[entry.line - 1]


class SourcesSnapshot(NamedTuple):
    """What one look at the sources found: an immutable snapshot of a workspace's sources."""

    files: dict[str, SourceFile]
    refused: list[str]
    at: float
    segments: tuple[SourcesIndex, ...]
    """Every file's chunks, in a few search indexes (`memd.core.sources.segments`)."""
    directories: tuple[str, ...] = ()
    """The real paths of the directories where a change can add, change or remove a source."""
    asked: Asked | None = None
    capped: bool = False
    """Some file was left out past `MAX_TOTAL_BYTES` (a look at touched files cannot judge)."""
    chunked: tuple[str, ...] = ()
    """The files this look read and chunked (the others were kept from the last look)."""


NOTHING = SourcesSnapshot({}, [], 0.0, ())
"""The look before the first: no files, taken as stale."""


class WorkspaceSources:
    """The read-only sources of the workspace at `root` (see the module rules).

    `watch` (set by the workspace) watches a look's directories; `changed` takes the watcher's
    reports; `run` is the builder (the workspace runs it). `looks` counts the looks taken and
    `walks` those that walked the tree (the others read touched files only)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.current = NOTHING
        self.watch: Watch | None = None
        self.looks = 0
        self.walks = 0
        self.looked = anyio.Event()
        """Set (and replaced) each time a look ends."""
        self._first = anyio.Lock()
        self._scope = anyio.CancelScope()
        self._wanted = anyio.Event()
        self._asked: Asked | None = None
        self._touched: set[str] | None = set()  # None: anything may have changed
        self._watched = False
        self._next_at = 0.0
        self._by_real: tuple[SourcesSnapshot, dict[str, str]] = (NOTHING, {})

    def changed(self, directory: str | None, name: str = "", content: bool = False) -> None:
        """Take one watcher report: `name` in `directory` (a real path) changed, its content
        only when `content`; a `directory` None means anything may have changed (events were
        lost, a watched directory went away, or `.memory/memd.toml` changed)."""
        if self._touched is None:
            return
        if directory is None or not content:
            self._touched = None
            return
        path = os.path.join(directory, name)
        if path in self._real_paths():
            self._touched.add(path)
        elif self.current.refused:  # a refused file may have become usable
            self._touched = None

    def _real_paths(self) -> dict[str, str]:
        """The current look's files by real path (kept while it is current)."""
        look, by_real = self._by_real
        if look is not self.current:
            by_real = real_paths(self.current)
            self._by_real = (self.current, by_real)
        return by_real

    def stale(self, asked: Asked) -> bool:
        """Whether the last look may be out of date (see the module rules)."""
        look = self.current
        if look is NOTHING or look.asked != asked or self._touched is None or self._touched:
            return True
        return not self._watched and time.monotonic() - look.at >= FRESH_SECONDS

    async def refresh(self, configured: Sequence[str], max_bytes: int) -> SourcesSnapshot:
        """The last look at the sources (the first is taken here, and waited for); asks `run`
        for a new one when it may be out of date. `configured` is memd's config `sources`,
        `max_bytes` the cap on one file."""
        asked: Asked = (tuple(configured), max_bytes)
        if self.current is NOTHING:
            async with self._first:
                if self.current is NOTHING:
                    await self.look_now(asked)
            return self.current
        if self.stale(asked):
            self._asked = asked
            self._wanted.set()
        return self.current

    async def run(self) -> None:
        """Take each look asked for, one at a time, in the background, until `stop`."""
        with self._scope:
            while True:
                await self._wanted.wait()
                self._wanted = anyio.Event()
                wait = self._next_at - time.monotonic()
                if wait > 0:
                    await anyio.sleep(wait)
                asked = self._asked
                if asked is not None and self.stale(asked):
                    await self.look_now(asked, abandon_on_cancel=True)

    def stop(self) -> None:
        """End `run` (a look in progress is left to finish in its worker thread, unused)."""
        self._scope.cancel()

    async def look_now(self, asked: Asked, *, abandon_on_cancel: bool = False) -> SourcesSnapshot:
        """Look at the sources again (in a worker thread), make it the current look, watch its
        directories, and return it."""
        previous = self.current
        touched, self._touched = self._touched, set()
        started = time.monotonic()
        again = (
            touched is not None
            and previous is not NOTHING
            and previous.asked == asked
            and self._watched
        )
        try:
            look = None
            if again and touched:
                look = await anyio.to_thread.run_sync(
                    look_again,
                    previous,
                    frozenset(touched),
                    asked[1],
                    abandon_on_cancel=abandon_on_cancel,
                )
            if look is None:
                self.walks += 1
                look = await anyio.to_thread.run_sync(
                    look_at,
                    self.root,
                    asked[0],
                    asked[1],
                    previous,
                    abandon_on_cancel=abandon_on_cancel,
                )
        except (RecursionError, OSError, ValueError) as exc:  # never fail a search
            problem = f"the sources could not be looked at ({type(exc).__name__}: {exc})"
            look = previous._replace(refused=[problem], at=time.monotonic(), asked=asked)
        self.current = look
        self.looks += 1
        ended = time.monotonic()
        self._next_at = ended + (ended - started)
        if self.watch is not None:
            watched, added = self.watch(look.directories)
            self._watched = watched
            if added and self._touched is not None:
                # A change between the walk listing a directory and its watch was not heard.
                self._touched = None
        self.looked.set()
        self.looked = anyio.Event()
        return look


def real_paths(look: SourcesSnapshot) -> dict[str, str]:
    """The files of `look` by real path."""
    return {source.real_path: path for path, source in look.files.items()}


def look_at(
    root: str, configured: Sequence[str], max_bytes: int, previous: SourcesSnapshot = NOTHING
) -> SourcesSnapshot:
    """Look at the sources again: walk the tree, re-reading only the files whose fingerprint
    changed (blocking)."""
    refused: list[str] = []
    project: tuple[str, ...] = ()
    try:
        project = source_files.read_project_config(root).sources
    except ConfigError as exc:
        refused.append(str(exc))
    try:
        selection = resolve_sources(tuple(configured), project)
    except ValueError as exc:
        refused.append(f"the sources are not usable ({exc}); memd looks at the defaults only")
        selection = resolve_sources()
    scan = source_files.find_sources(root, selection, max_bytes=max_bytes)
    refused += [refusal.message for refusal in scan.refused]
    files: dict[str, SourceFile] = {}
    chunked: list[str] = []
    total = 0
    capped = False
    for source in scan.files:
        total += source.size
        if total > MAX_TOTAL_BYTES:
            capped = True
            refused.append(_capped(source.path))
            continue
        kept = previous.files.get(listed_as(source.path))
        if kept is not None and kept.fingerprint == source.fingerprint:
            files[kept.path] = kept
            continue
        try:
            read = _read(source.path, source.real_path, max_bytes)
        except RpcError as exc:  # not a regular file, too big, not UTF-8, refused by the system
            refused.append(exc.message)
            continue
        if read is not None:
            files[read.path] = read
            chunked.append(read.path)
    directories = {*scan.directories, *(os.path.dirname(f.real_path) for f in files.values())}
    indexed = _segments(files, previous)
    return SourcesSnapshot(
        files,
        refused,
        time.monotonic(),  # once indexed: its age says how long it has been served
        indexed,
        tuple(sorted(directories)),
        (tuple(configured), max_bytes),
        capped,
        tuple(chunked),
    )


def look_again(
    previous: SourcesSnapshot, touched: frozenset[str], max_bytes: int
) -> SourcesSnapshot | None:
    """Look again at the touched files of `previous` (real paths) only, or None when only a
    walk can tell (a file is gone, refused, or the total passes `MAX_TOTAL_BYTES`): blocking."""
    if previous.capped:
        return None
    by_real = real_paths(previous)
    files = dict(previous.files)
    chunked: list[str] = []
    for real in sorted(touched):
        path = by_real.get(real)
        if path is None:
            continue
        kept = files[path]
        try:
            read = _read(found_as(path), kept.real_path, max_bytes)
        except RpcError:
            return None
        if read is None:
            return None
        if read.fingerprint == kept.fingerprint:
            continue
        files[path] = read
        chunked.append(path)
    if sum(source.fingerprint.size for source in files.values()) > MAX_TOTAL_BYTES:
        return None
    if not chunked:
        return previous._replace(at=time.monotonic(), chunked=())
    indexed = _segments(files, previous)
    return previous._replace(
        files=files, at=time.monotonic(), segments=indexed, chunked=tuple(chunked)
    )


_SAY_NAME_FEWER = "; name fewer in sources"


def _capped(path: str) -> str:
    return (
        f"{path} is left out: the workspace's sources pass "
        f"{MAX_TOTAL_BYTES // (1024 * 1024)} MiB{_SAY_NAME_FEWER}"
    )


def _read(path: str, real_path: str, max_bytes: int) -> SourceFile | None:
    """Read and chunk one source (None: it is gone).

    Raises:
        RpcError: it cannot be used (as `memd.fs.source_files.read_source` says).
    """
    shown = listed_as(path)
    read = source_files.read_source(real_path, max_bytes, shown=path)
    if read is None:
        return None
    text, fingerprint = read
    return SourceFile(shown, real_path, fingerprint, _chunks(text))


def _segments(
    files: Mapping[str, SourceFile], previous: SourcesSnapshot
) -> tuple[SourcesIndex, ...]:
    """The segments' indexes of `files`: each kept from `previous` when its files are the
    same, else updated from the one of `previous` with the same first file, if any."""
    before = {segment.paths: segment for segment in previous.segments}
    by_first = {segment.paths[0]: segment for segment in previous.segments}
    built = []
    for paths in segments([(path, source.fingerprint.size) for path, source in files.items()]):
        members = [files[path] for path in paths]
        kept = before.get(tuple(paths))
        if kept is not None and all(a is b for a, b in zip(kept.files, members, strict=True)):
            built.append(kept)
            continue
        built.append(SourcesIndex(members, by_first.get(paths[0])))
    return tuple(built)


def listed_as(path: str) -> str:
    """How a source's path (relative to the workspace) is given: as it is, but "./" before
    one named like a category file at the root ("./decisions.md"), since `get` takes the bare
    name for the category file."""
    return f"./{path}" if path in CATEGORY_FILES else path


def found_as(path: str) -> str:
    """A source's path as the sources found it (what globs match): `listed_as` undone."""
    return path.removeprefix("./")


def _chunks(text: str) -> tuple[Chunk, ...]:
    """The chunks of a source, but for those in memd's own block."""
    parts = chunk(text)
    try:
        block = find_block(text)
    except BlockError:
        return parts
    if block is None:
        return parts
    first, last = block
    return tuple(part for part in parts if part.end < first or part.start > last)


def read_lines(source: SourceFile, first: int, last: int, max_bytes: int) -> str:
    """Lines `first` to `last` of a source as they are now, numbered as its chunks are
    (blocking; "" when the file is gone).

    Raises:
        RpcError: the file cannot be read (as `memd.fs.source_files.read_source` says).
    """
    read = source_files.read_source(source.real_path, max_bytes, shown=source.path)
    if read is None:
        return ""
    return "\n".join(split_lines(read[0])[first - 1 : last])
