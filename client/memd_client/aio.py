"""`AsyncClient`: the anyio client (install `memd-client[async]`).

This module is the only part of `memd_client` that imports anyio, so `import memd_client` stays
light for blocking users.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import SocketStream

from memd_client import _calls, protocol as p
from memd_client._connection import ClientBase
from memd_client._sync import unavailable
from memd_client.errors import ConnectionLost, RequestTimeout

__all__ = ["AsyncClient"]


class AsyncClient(ClientBase):
    """An anyio connection to memd; the same methods as `Client`, awaitable.

    Calls on one client are sent one at a time (a lock keeps replies in step); open several
    clients for parallel requests.
    """

    _stream: SocketStream | None = None
    _lock: anyio.Lock | None = None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection (the next call reconnects)."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            self._reset_decoder()
            with anyio.CancelScope(shield=True):
                await stream.aclose()

    async def call(self, call: _calls.Call) -> Any:
        """Send one prepared request and return its typed result."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            request_id, frame = self._connection.request(call.method, call.params)
            try:
                with anyio.fail_after(self.timeout):
                    stream = await self._connect()
                    await stream.send(frame)
                    reply = await self._receive_frame(stream)
            except TimeoutError:
                await self.aclose()
                raise RequestTimeout(
                    f"memd did not answer {call.method} within {self.timeout:g} s; it may be "
                    "overloaded, or raise the client timeout."
                ) from None
            except (anyio.BrokenResourceError, anyio.EndOfStream, OSError) as exc:
                await self.aclose()
                raise ConnectionLost(
                    f"The connection to memd broke during {call.method} ({exc!r}); retry it."
                ) from None
        return self._connection.response(reply, request_id, call.result_type)

    async def _connect(self) -> SocketStream:
        if self._stream is None:
            try:
                self._stream = await anyio.connect_unix(self.socket_path)
            except OSError as exc:
                raise unavailable(self.socket_path, exc) from None
        return self._stream

    async def _receive_frame(self, stream: SocketStream) -> bytes:
        while True:
            frames = self._decoder.feed(await stream.receive())
            if frames:
                return frames[0]

    # -------------------------------------------------------------- protocol methods

    async def store(
        self,
        *,
        category: str,
        content: str,
        slug: str | None = None,
        dry_run: bool = False,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.StoreResult:
        """Store a memory; see the README's protocol section for the dedup rules."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.StoreResult = await self.call(_calls.store(ws, category, content, slug, dry_run))
        return result

    async def query(
        self,
        query: str,
        *,
        category: str | None = None,
        limit: int = p.DEFAULT_QUERY_LIMIT,
        min_score: float | None = None,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.QueryResult:
        """Search memories by relevance; an empty query lists entries."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.QueryResult = await self.call(_calls.query(ws, query, category, limit, min_score))
        return result

    async def get(
        self,
        *,
        category: str | None = None,
        slug: str | None = None,
        file: str | None = None,
        lines: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.EntriesResult:
        """Fetch entries by category and slug, or by file and a line range "a-b"."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.EntriesResult = await self.call(_calls.get(ws, category, slug, file, lines))
        return result

    async def delete(
        self, *, category: str, slug: str, workspace: str | os.PathLike[str] | None = None
    ) -> p.DeleteResult:
        """Delete an entry by slug (it is archived, not lost)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.DeleteResult = await self.call(_calls.delete(ws, category, slug))
        return result

    async def cleanup(
        self, *, apply: bool = False, workspace: str | os.PathLike[str] | None = None
    ) -> p.CleanupResult:
        """Plan a cleanup, or carry it out with `apply=True`."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.CleanupResult = await self.call(_calls.cleanup(ws, apply))
        return result

    async def stats(self, *, workspace: str | os.PathLike[str] | None = None) -> p.StatsResult:
        """Per-category entry counts and limits."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.StatsResult = await self.call(_calls.stats(ws))
        return result

    async def status(self) -> p.StatusResult:
        """The daemon's version, pid, uptime and loaded workspaces."""
        result: p.StatusResult = await self.call(_calls.status())
        return result

    async def list(
        self, *, category: str | None = None, workspace: str | os.PathLike[str] | None = None
    ) -> p.EntriesResult:
        """List every entry, or those of one category."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.EntriesResult = await self.call(_calls.list_entries(ws, category))
        return result
