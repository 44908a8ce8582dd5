"""A workspace's read-only sources as its searches see them: which files (`memd.fs.sources`),
each one's chunks (`memd.core.sources.chunks`) and their search index.

Rules:
- One owner: the workspace (`Workspace.sources`). Nothing here ever writes.
- Refreshed on use: a search that finds the last look older than `FRESH_SECONDS` looks again, in
  one worker-thread call: the project's `.memory/memd.toml`, the files the sources name (a scan,
  bounded), and each file whose fingerprint changed is read, chunked and indexed again (there,
  never on the event loop); a file gone is gone from the search. One look at a time per
  workspace (concurrent searches share it). A file's version and its index never change, so a
  worker thread may rank them.
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
from collections.abc import Sequence
from typing import NamedTuple

import anyio

from memd.config import ConfigError
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
    """One version of one source file: its chunks as entries, indexed on first use."""

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
    def index(self) -> CategoryIndex:
        """The search index of the chunks."""
        return ranking.build_index(self.entries)

    @functools.cached_property
    def tags(self) -> dict[int, frozenset[str]]:
        """No tags: a source's `#` words are its authors' text."""
        return {}

    @functools.cached_property
    def chunk_at(self) -> dict[int, Chunk]:
        """Each chunk by its first line."""
        return {part.start: part for part in self.chunks}


class Look(NamedTuple):
    """What one look at the sources found."""

    files: dict[str, SourceFile]
    refused: list[str]
    at: float


class WorkspaceSources:
    """The read-only sources of the workspace at `root` (see the module rules)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.current = Look({}, [], 0.0)
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
                    self.current = Look(previous.files, [problem], time.monotonic())
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
        kept = previous.files.get(source.path)
        if kept is not None and kept.fingerprint == source.fingerprint:
            files[source.path] = kept
            continue
        try:
            read = found.read_source(source.real_path, max_bytes, shown=source.path)
        except RpcError as exc:  # not a regular file, too big, not UTF-8, refused by the system
            refused.append(exc.message)
            continue
        if read is not None:
            text, fingerprint = read
            fresh = SourceFile(source.path, source.real_path, fingerprint, _chunks(text))
            fresh.index  # noqa: B018 (built here, in the worker thread, never on the event loop)
            files[source.path] = fresh
    return Look(files, refused, time.monotonic())


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
