"""`Client`: the blocking client, on a stdlib Unix socket."""

from __future__ import annotations

import os
import socket
from types import TracebackType
from typing import Any

from memd_client import _calls, protocol as p
from memd_client._connection import ClientBase
from memd_client.errors import ConnectionLost, DaemonUnavailable, RequestTimeout


def unavailable(path: str, exc: OSError) -> DaemonUnavailable:
    """Return the error for a daemon that cannot be reached at `path`."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return DaemonUnavailable(
        f"No memd daemon is answering on {path} ({reason}); start one with `memd serve`."
    )


class Client(ClientBase):
    """A blocking connection to memd; methods mirror the protocol and return typed results.

    The connection opens on first use and is reused; after a timeout it is closed, since a late
    reply would be out of step. Use it as a context manager or call `close()`.
    """

    _sock: socket.socket | None = None

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (the next call reconnects)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._reset_decoder()

    def call(self, call: _calls.Call) -> Any:
        """Send one prepared request and return its typed result."""
        request_id, frame = self._connection.request(call.method, call.params)
        sock = self._connect()
        try:
            sock.sendall(frame)
            reply = self._receive_frame(sock)
        except TimeoutError:
            self.close()
            raise RequestTimeout(
                f"memd did not answer {call.method} within {self.timeout:g} s; it may be "
                "overloaded, or raise the client timeout."
            ) from None
        except OSError as exc:
            self.close()
            raise ConnectionLost(
                f"The connection to memd broke during {call.method} ({exc}); retry the request."
            ) from None
        return self._connection.response(reply, request_id, call.result_type)

    def _connect(self) -> socket.socket:
        if self._sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self.socket_path)
            except OSError as exc:
                sock.close()
                raise unavailable(self.socket_path, exc) from None
            self._sock = sock
        return self._sock

    def _receive_frame(self, sock: socket.socket) -> bytes:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("the daemon closed the connection")
            frames = self._decoder.feed(chunk)
            if frames:
                return frames[0]

    # -------------------------------------------------------------- protocol methods

    def store(
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
        result: p.StoreResult = self.call(_calls.store(ws, category, content, slug, dry_run))
        return result

    def query(
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
        result: p.QueryResult = self.call(_calls.query(ws, query, category, limit, min_score))
        return result

    def get(
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
        result: p.EntriesResult = self.call(_calls.get(ws, category, slug, file, lines))
        return result

    def delete(
        self, *, category: str, slug: str, workspace: str | os.PathLike[str] | None = None
    ) -> p.DeleteResult:
        """Delete an entry by slug (it is archived, not lost)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.DeleteResult = self.call(_calls.delete(ws, category, slug))
        return result

    def cleanup(
        self, *, apply: bool = False, workspace: str | os.PathLike[str] | None = None
    ) -> p.CleanupResult:
        """Plan a cleanup, or carry it out with `apply=True`."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.CleanupResult = self.call(_calls.cleanup(ws, apply))
        return result

    def stats(self, *, workspace: str | os.PathLike[str] | None = None) -> p.StatsResult:
        """Per-category entry counts and limits."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.StatsResult = self.call(_calls.stats(ws))
        return result

    def status(self) -> p.StatusResult:
        """The daemon's version, pid, uptime and loaded workspaces."""
        result: p.StatusResult = self.call(_calls.status())
        return result

    def list(
        self, *, category: str | None = None, workspace: str | os.PathLike[str] | None = None
    ) -> p.EntriesResult:
        """List every entry, or those of one category."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.EntriesResult = self.call(_calls.list_entries(ws, category))
        return result
