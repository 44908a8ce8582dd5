"""A workspace's read-only sources as its searches see them: which files (`memd.fs.sources`),
each one's chunks (`memd.core.sources.chunks`) and their search index.

Rules:
- One owner: the workspace (`Workspace.sources`). Nothing here ever writes.
- Refreshed on use: a search that finds the last look older than `FRESH_SECONDS` looks again, in
  one worker-thread call: the project's `.memory/memd.toml`, the files the sources name (a scan,
  bounded), and each file whose fingerprint changed is read and chunked again; when any file
  changed, came or went, every chunk is indexed again, in one index (`SourcesIndex`; there,
  never on the event loop); a file gone is gone from the search. One look at a time per
  workspace (concurrent searches share it). A look and its index never change, so a worker
  thread may rank them.
- A chunk is an entry whose line is the chunk's first line and whose content is its searchable
  text (its heading path, then its text); `chunk_at` gives the chunk back for results. The
  block `memd init` writes into AGENTS.md or CLAUDE.md (memd's own instructions, not the
  project's knowledge) is left out.
- What cannot be used is left out and kept in `refused`, one sentence each: a link out of the
  workspace, a file too big or not UTF-8, files past `MAX_TOTAL_BYTES` in all, a
  `.memory/memd.toml` that cannot be used (then the defaults and memd's config apply). A look
  that fails outright (a tree too deep to walk) keeps the last look's files and says why.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import anyio

from memd.config import ConfigError
from memd.core.format.categories import CATEGORY_FILES
from memd.core.format.mdformat import Entry
from memd.core.project.agent_files import BlockError, find_block
from memd.core.search import ranking
from memd.core.search.index import CategoryIndex
from memd.core.sources.chunks import Chunk, chunk, split_lines
from memd.core.sources.selection import resolve_sources
from memd.fs import sources as found
from memd.fs.storage import Fingerprint
from memd_client.errors import RpcError

FRESH_SECONDS = 1.0
"""How old a look at the sources may be before a search looks again."""
MAX_TOTAL_BYTES = 16 * 1024 * 1024
"""The most source text one workspace holds in memory: files past it are left out (and said)."""


class SourceFile:
    """One version of one source file: its chunks as entries."""

    def __init__(
        self, path: str, real_path: str, fingerprint: Fingerprint, chunks: Sequence[Chunk]
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
    """Every chunk of a look's files in one search index: a search's cost grows with the number
    of indexes it walks, and a workspace may have dozens of sources.

    The index's entries are numbered 1, 2, ... over the files in path order, each file's chunks
    in line order (so equal scores go by path, then line, as one index a file would give);
    `owner` gives an entry back as its file's path and its own entry.
    """

    def __init__(self, files: Mapping[str, SourceFile]) -> None:
        self.owners: list[tuple[str, Entry]] = []
        numbered: list[Entry] = []
        for path in sorted(files):
            for entry in files[path].entries:
                self.owners.append((path, entry))
                numbered.append(Entry(line=len(self.owners), slug=None, content=entry.content))
        self.index: CategoryIndex = ranking.build_index(numbered)

    def owner(self, entry: Entry) -> tuple[str, Entry]:
        """The path of the file holding an entry of `index`, and the chunk's entry there."""
        return self.owners[entry.line - 1]


class Look(NamedTuple):
    """What one look at the sources found."""

    files: dict[str, SourceFile]
    refused: list[str]
    at: float
    merged: SourcesIndex
    """Every file's chunks, in one search index."""


NOTHING = Look({}, [], 0.0, SourcesIndex({}))
"""The look before the first: no files, taken as stale."""


class WorkspaceSources:
    """The read-only sources of the workspace at `root` (see the module rules)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.current = NOTHING
        self._lock = anyio.Lock()

    async def refresh(self, configured: Sequence[str], max_bytes: int) -> Look:
        """The sources as they are now (looking again when the last look is stale);
        `configured` is memd's config `sources`, `max_bytes` the cap on one file."""
        async with self._lock:
            if time.monotonic() - self.current.at >= FRESH_SECONDS:
                previous = self.current
                try:
                    self.current = await anyio.to_thread.run_sync(
                        _look, self.root, tuple(configured), max_bytes, previous
                    )
                except (RecursionError, OSError, ValueError) as exc:  # never fail a search
                    problem = f"the sources could not be looked at ({type(exc).__name__}: {exc})"
                    self.current = previous._replace(refused=[problem], at=time.monotonic())
            return self.current


def _look(root: str, configured: tuple[str, ...], max_bytes: int, previous: Look) -> Look:
    """Look at the sources again, re-reading only the files whose fingerprint changed
    (blocking)."""
    refused: list[str] = []
    project: tuple[str, ...] = ()
    try:
        project = found.read_project_config(root).sources
    except ConfigError as exc:
        refused.append(str(exc))
    try:
        selection = resolve_sources(configured, project)
    except ValueError as exc:
        refused.append(f"the sources are not usable ({exc}); memd looks at the defaults only")
        selection = resolve_sources()
    scan = found.find_sources(root, selection, max_bytes=max_bytes)
    refused += [refusal.message for refusal in scan.refused]
    files: dict[str, SourceFile] = {}
    total = 0
    for source in scan.files:
        total += source.size
        if total > MAX_TOTAL_BYTES:
            refused.append(
                f"{source.path} is left out: the workspace's sources pass "
                f"{MAX_TOTAL_BYTES // (1024 * 1024)} MiB; name fewer in sources"
            )
            continue
        kept = previous.files.get(listed_as(source.path))
        if kept is not None and kept.fingerprint == source.fingerprint:
            files[kept.path] = kept
            continue
        try:
            read = found.read_source(source.real_path, max_bytes, shown=source.path)
        except RpcError as exc:  # not a regular file, too big, not UTF-8, refused by the system
            refused.append(exc.message)
            continue
        if read is not None:
            text, fingerprint = read
            shown = listed_as(source.path)
            files[shown] = SourceFile(shown, source.real_path, fingerprint, _chunks(text))
    unchanged = files.keys() == previous.files.keys() and all(
        files[path] is previous.files[path] for path in files
    )
    # Built here, in the worker thread, never on the event loop; a look finding every file
    # as it was keeps the index it has (nothing is read or indexed again).
    merged = previous.merged if unchanged else SourcesIndex(files)
    return Look(files, refused, time.monotonic(), merged)


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
        RpcError: the file cannot be read (as `memd.fs.sources.read_source` says).
    """
    read = found.read_source(source.real_path, max_bytes, shown=source.path)
    if read is None:
        return ""
    return "\n".join(split_lines(read[0])[first - 1 : last])
