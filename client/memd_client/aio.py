"""`AsyncClient`: the anyio client (install `memd-client[async]`), and its `Subscription`.

This module is the only part of `memd_client` that imports anyio, so `import memd_client` stays
light for blocking users. Without anyio, importing it raises `ModuleNotFoundError` (an
`ImportError`, `name` "anyio") whose one sentence says what to install.

Size: just over the ~400-line guide: one async method per wire method, each a thin mirror of
the blocking client's, kept together so the two stay in step.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, Literal

import msgspec

try:
    import anyio
    from anyio.abc import SocketStream
except ModuleNotFoundError as missing:
    if missing.name != "anyio":
        raise  # anyio is there but something it needs is not: its own message says what
    raise ModuleNotFoundError(
        "memd_client.aio needs anyio: pip install 'memd-client[async]'", name="anyio"
    ) from None

from memd_client import _autostart, _calls, protocol as p
from memd_client._connection import ClientBase, Connection, Reply
from memd_client._transport_errors import (
    reply_on_subscription,
    subscription_lost,
    transport_errors,
    unavailable,
)
from memd_client.errors import InvalidParams, MemdError

__all__ = ["AsyncClient", "Subscription"]

_BROKEN = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError)


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
            self._reset_connection()
            with anyio.CancelScope(shield=True):
                await stream.aclose()

    async def call(self, call: _calls.Call) -> Any:
        """Send one prepared request and return its typed result (notifications are skipped)."""
        call = self._stamped(call)
        try:
            return await self._call(call)
        except InvalidParams as exc:
            again = self._without_writer(call, exc)
            if again is None:
                raise
            return await self._call(again)

    async def _call(self, call: _calls.Call) -> Any:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            try:
                if self._stream is None:
                    self._stream = await self._open(self._connection)
                with (
                    transport_errors(call.method, self.timeout, _BROKEN),
                    anyio.fail_after(self.timeout),
                ):
                    connection = self._connection
                    request_id, frame = connection.request(call.method, call.params)
                    await self._stream.send(frame)
                    while (reply := connection.next_reply()) is None:
                        connection.receive_data(await self._stream.receive())
            except MemdError:
                await self.aclose()
                raise
        return connection.result(reply, request_id, call.result_type)

    def subscribe(
        self, *, workspace: str | os.PathLike[str] | None = None, scope: p.Scope = "project"
    ) -> Subscription:
        """Return a `Subscription` to a workspace's changes (with scope "global", to the
        user-wide memory's), to use with `async with`."""
        ws = _calls.workspace_path(workspace, self.workspace)
        return Subscription(self, ws, scope)

    async def _open(self, connection: Connection) -> SocketStream:
        """Connect (starting a daemon if allowed: that has its own deadline) and check the
        daemon's protocol version (within `timeout`)."""
        stream = await self._connect()
        try:
            with (
                transport_errors("status", self.timeout, _BROKEN),
                anyio.fail_after(self.timeout),
            ):
                request_id, frame = connection.handshake()
                await stream.send(frame)
                while (reply := connection.next_reply()) is None:
                    connection.receive_data(await stream.receive())
            connection.check_handshake(reply, request_id, self.socket_path)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            raise
        return stream

    async def _connect(self) -> SocketStream:
        try:
            return await anyio.connect_unix(self.socket_path)
        except OSError as exc:
            if not (self.autostart and _autostart.may_start(exc)):
                raise unavailable(self.socket_path, exc) from None
        start = functools.partial(
            _autostart.start_daemon, self.socket_path, timeout=self.autostart_timeout
        )
        # Cancelling the caller does not wait for the start; the daemon still comes up.
        await anyio.to_thread.run_sync(start, abandon_on_cancel=True)
        try:
            return await anyio.connect_unix(self.socket_path)
        except OSError as exc:
            raise unavailable(self.socket_path, exc) from None

    # -------------------------------------------------------------- protocol methods

    async def store(
        self,
        *,
        category: str,
        content: str,
        slug: str | None = None,
        dry_run: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
        replaces: str | None = None,
        reason: str | None = None,
        origin: p.WriteOrigin | None = None,
        conversation: str | None = None,
    ) -> p.StoreResult:
        """Store a memory; see docs/write-decisions.md (store rules) for the dedup rules. `scope`
        "global" stores it in the user-wide memory, searched from every project. `replaces`
        (with `slug`): update that entry only if it still says exactly this, else raise
        `EntryNotFound` and store nothing. `reason`: why the text an update replaces goes to
        the archive (its archive line says so). `origin` (default: the client's own) "user" (a
        person, the CLI) always stores directly; an "agent"'s store into a reviewed category,
        or with instruction-like text, waits in the review inbox (action "pending").
        `conversation`: an excerpt of the agent's conversation for the daemon's gap analysis
        (`[llm]`: it may propose memories the conversation implies into the inbox)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        writer = None if origin is None else msgspec.structs.replace(self.writer, origin=origin)
        call = _calls.store(
            ws, category, content, slug, dry_run, scope, replaces, reason, writer, conversation
        )
        result: p.StoreResult = await self.call(call)
        return result

    async def inbox(
        self, *, workspace: str | os.PathLike[str] | None = None, scope: p.Scope = "project"
    ) -> p.InboxResult:
        """List the entries waiting in the review inbox (`.memory/inbox.md`); `scope`
        "global": the user-wide memory's."""
        call = _calls.inbox(_calls.workspace_path(workspace, self.workspace), scope)
        result: p.InboxResult = await self.call(call)
        return result

    async def resolve(
        self,
        ident: str,
        action: p.ResolveAction,
        *,
        content: str | None = None,
        reason: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
    ) -> p.ResolveResult:
        """Accept (with `content`: the edited text) or reject (archived with `reason`) one
        review inbox entry by its id; `scope` "global": of the user-wide memory's inbox."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.ResolveResult = await self.call(
            _calls.resolve(ws, ident, action, content, reason, scope)
        )
        return result

    async def propose(
        self,
        source: p.ProposalSource,
        proposals: Iterable[p.Proposal],
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.ProposeResult:
        """Put memories into the review inbox as proposals (`source`: "extract", "gap", "session",
        "cleanup" or "check"), each first run through the write decision as a dry run: each
        outcome is "queued" (its inbox id), "skipped" (the category already says it) or
        "refused" (why). Nothing is stored until a person accepts it in `memd review`."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.ProposeResult = await self.call(_calls.propose(ws, source, proposals))
        return result

    async def reflect(
        self, transcript: str, *, workspace: str | os.PathLike[str] | None = None
    ) -> p.ReflectResult:
        """Session review: the daemon's model (`[llm] command`) reads a transcript excerpt and
        its proposed memories go to the review inbox like `propose`'s (source "session");
        `llm` says whether it answered. Raises InvalidParams when no model is configured."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.ReflectResult = await self.call(_calls.reflect(ws, transcript))
        return result

    async def query(
        self,
        query: str,
        *,
        category: str | None = None,
        limit: int = p.DEFAULT_QUERY_LIMIT,
        min_score: float | None = None,
        tags: Iterable[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        mode: p.QueryMode = "auto",
        sources: Iterable[p.Origin] | None = None,
        file: str | None = None,
        include_archived: bool = False,
    ) -> p.QueryResult:
        """Search memories by relevance; an empty query lists entries. With `tags` (e.g.
        `["security"]`), only entries carrying every one of those #tags count. `mode`: "auto"
        (semantic when the daemon can, else lexical), "lexical" or "semantic". `sources`:
        "memory" (the project's), "global" (the user-wide memory's); default both. `file`: the
        entries scoped to it (`(paths: ...)`) first, those scoped to other files left out.
        `include_archived`: archived entries too (their hits say `archived`)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.QueryResult = await self.call(
            _calls.query(
                ws, query, category, limit, min_score, tags, mode, sources, file, include_archived
            )
        )
        return result

    async def episode(
        self,
        text: str,
        *,
        outcome: str | None = None,
        tags: Iterable[str] | None = None,
        dry_run: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
    ) -> p.StoreResult:
        """Store an episode: a dated event (dated today by the daemon unless `text` starts with
        a date), with its `outcome` ("fixed", "failed") and `tags`, in episodes.md."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.episode(ws, text, outcome, tags, dry_run, scope)
        result: p.StoreResult = await self.call(call)
        return result

    async def get(
        self,
        *,
        category: str | None = None,
        slug: str | None = None,
        file: str | None = None,
        lines: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
        around: int = 2,
    ) -> p.EntriesResult:
        """Fetch entries by category and slug, or by file and a line range "a-b" (a category
        file, or a read-only source's path; or a past session's transcript `path` and turns
        "a-b", with `around` turns either side); `scope` "global": from the user-wide memory."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.get(ws, category, slug, file, lines, scope, around)
        result: p.EntriesResult = await self.call(call)
        return result

    async def delete(
        self,
        *,
        category: str,
        slug: str,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
    ) -> p.DeleteResult:
        """Delete an entry by slug (it is archived, not lost); `scope` "global": from the
        user-wide memory."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.DeleteResult = await self.call(_calls.delete(ws, category, slug, scope))
        return result

    async def history(
        self,
        *,
        slug: str | None = None,
        text: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
    ) -> p.HistoryResult:
        """The recorded versions of the entry `slug` (or, without a slug, the entry saying
        exactly `text`): who wrote each, when, and what it replaced."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.HistoryResult = await self.call(_calls.history(ws, slug, text, scope))
        return result

    async def undo(
        self,
        *,
        to: str | None = None,
        dry_run: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
    ) -> p.UndoResult:
        """Take back the newest write operation not undone yet, or with `to` (an age such as
        "10m", or an ISO time) every one recorded after that time; a line changed since is
        refused, never overwritten. Each change's outcome is in the result."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.UndoResult = await self.call(_calls.undo(ws, to, dry_run, scope))
        return result

    async def restore(
        self,
        *,
        slug: str | None = None,
        text: str | None = None,
        category: str | None = None,
        dry_run: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
    ) -> p.RestoreResult:
        """Bring the newest archived entry with `slug` (or the exact `text`) back under its
        slug; refused if the slug now holds another text."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.restore(ws, slug, text, category, dry_run, scope)
        result: p.RestoreResult = await self.call(call)
        return result

    async def cleanup(
        self,
        *,
        apply: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        scope: p.Scope = "project",
        propose: bool = False,
    ) -> p.CleanupResult:
        """Plan a cleanup, or carry it out with `apply=True`; `scope` "global": of the
        user-wide memory. `propose=True`: queue what it would prune into the review inbox."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.CleanupResult = await self.call(_calls.cleanup(ws, apply, scope, propose))
        return result

    async def check(
        self,
        *,
        category: str | None = None,
        workspace: str | os.PathLike[str] | None = None,
        propose: bool = False,
    ) -> p.CheckResult:
        """Check every memory (or one category's) against the code it cites: each entry's
        status ("ok", "stale", "none"), its citations' verdicts and the suggested fix.
        `propose=True`: queue each stale entry (its fix, or its prune) into the review inbox."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.CheckResult = await self.call(_calls.check(ws, category, propose))
        return result

    async def stats(
        self, *, workspace: str | os.PathLike[str] | None = None, scope: p.Scope = "project"
    ) -> p.StatsResult:
        """Per-category entry counts and limits; `scope` "global": of the user-wide memory."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.StatsResult = await self.call(_calls.stats(ws, scope))
        return result

    async def status(self) -> p.StatusResult:
        """The daemon's version, pid, uptime and loaded workspaces."""
        result: p.StatusResult = await self.call(_calls.status())
        return result

    async def context(
        self,
        text: str = "",
        *,
        file: str | None = None,
        budget_tokens: int = p.DEFAULT_CONTEXT_BUDGET,
        workspace: str | os.PathLike[str] | None = None,
        agent_loads: Iterable[str] | None = None,
        session: str | None = None,
        always: bool = True,
        repeat: bool = False,
    ) -> p.ContextResult:
        """A memory block for a prompt: Security and Instruction entries, then what is relevant
        to `text` (and `file`), then chunks of the project's files, within `budget_tokens`.
        `agent_loads`: globs of the files the calling agent loads itself (left out); default
        Claude Code's. `session`: the agent session's id, so it is never given one entry
        twice; `always=False`: no Security/Instruction layer of their own (a file hook);
        `repeat=True`: with `session`, leave nothing out but record what is given (a prompt
        hook)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.context(ws, text, file, budget_tokens, agent_loads, session, always, repeat)
        result: p.ContextResult = await self.call(call)
        return result

    async def procedure(
        self,
        name: str,
        steps: Sequence[str],
        *,
        slug: str | None = None,
        dry_run: bool = False,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.StoreResult:
        """Store a procedure (`name: step; step.` in procedures.md); the same name or `slug`
        updates it."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.StoreResult = await self.call(_calls.procedure(ws, name, steps, slug, dry_run))
        return result

    async def outcome(
        self,
        slug: str,
        outcome: p.OutcomeKind,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.OutcomeResult:
        """Record that the procedure `slug` worked ("success") or failed ("failure")."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.OutcomeResult = await self.call(_calls.outcome(ws, slug, outcome))
        return result

    async def why(
        self,
        file: str,
        text: str = "",
        *,
        budget_tokens: int = p.DEFAULT_CONTEXT_BUDGET,
        workspace: str | os.PathLike[str] | None = None,
        session: str | None = None,
        always: bool = True,
    ) -> p.WhyResult:
        """Which entries `context` would give for `file` (and `text`), and why each other one
        would not be given: its `(paths: ...)` scope does not match, below the score floor, no
        room in `budget_tokens`, or `session` was already given it (`always=False`: as the file
        hook asks, without the always layer)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.why(ws, file, text, budget_tokens, session, always)
        result: p.WhyResult = await self.call(call)
        return result

    async def extract(
        self,
        text: str = "",
        *,
        store: bool = False,
        workspace: str | os.PathLike[str] | None = None,
        propose: bool = False,
        transcript: str | os.PathLike[str] | None = None,
        since_last: bool = False,
        workspace_only: bool = False,
    ) -> p.ExtractResult:
        """Find memories (preferences, corrections, constraints) in a message, or in the
        person's turns of a session transcript (`transcript`: its path, made absolute here, read
        by the daemon instead of `text`); store them too with `store=True`, or queue them into
        the review inbox with `propose=True`. `since_last` and `workspace_only` are the capture
        hook's (see `ExtractParams`)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.extract(ws, text, store, propose, transcript, since_last, workspace_only)
        result: p.ExtractResult = await self.call(call)
        return result

    async def list(
        self,
        *,
        category: str | None = None,
        tags: Iterable[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        sources: Iterable[Literal["memory", "global"]] | None = None,
    ) -> p.ListResult:
        """List every entry, or those of one category; with `tags`, only the entries carrying
        every one of those #tags; the project's, then the user-wide memory's (`sources`
        narrows it)."""
        ws = _calls.workspace_path(workspace, self.workspace)
        call = _calls.list_entries(ws, category, tags, sources)
        result: p.ListResult = await self.call(call)
        return result


class Subscription:
    """A workspace's `Changed` and `Resync` events, on a connection of its own.

    ```python
    async with client.subscribe(workspace=ws) as events:
        async for event in events:
            ...
    ```

    Entering connects, sends `subscribe` and waits for the reply within `timeout`, raising
    `DaemonUnavailable`, `RequestTimeout`, `ConnectionLost` or the `RpcError` the daemon sent.
    Iterating waits for the next event with no timeout; events that arrived before the reply
    come first. If the daemon closes the connection, iteration raises `ConnectionLost`:
    subscribe again to resume, and call `list` to catch up. Leaving the block (or `aclose()`)
    closes the connection, which unsubscribes; iteration then stops.
    """

    def __init__(self, client: AsyncClient, workspace: str, scope: p.Scope = "project") -> None:
        self._client = client
        self.workspace = workspace
        self.scope = scope
        self.timeout = client.timeout
        self._connection = Connection()
        self._stream: SocketStream | None = None
        self._early: deque[p.Event] = deque()
        self._closed = False

    async def __aenter__(self) -> Subscription:
        if self._stream is not None or self._closed:
            raise RuntimeError("A Subscription can be entered only once.")
        call = _calls.subscribe(self.workspace, self.scope)
        connection = self._connection
        try:
            self._stream = stream = await self._client._open(connection)
            request_id, frame = connection.request(call.method, call.params)
            with (
                transport_errors(call.method, self.timeout, _BROKEN),
                anyio.fail_after(self.timeout),
            ):
                await stream.send(frame)
                while not isinstance(message := connection.next_message(), Reply):
                    if message is None:
                        connection.receive_data(await stream.receive())
                    else:
                        self._early.append(message)
            connection.result(message, request_id, call.result_type)
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> p.Event:
        if self._early:
            return self._early.popleft()
        if self._stream is None:
            if self._closed:
                raise StopAsyncIteration
            raise RuntimeError("Enter the Subscription with `async with` before iterating.")
        try:
            while (message := self._connection.next_message()) is None:
                self._connection.receive_data(await self._stream.receive())
            if isinstance(message, Reply):
                raise reply_on_subscription()
        except _BROKEN as exc:
            if self._closed:  # aclose() from another task
                raise StopAsyncIteration from None
            await self.aclose()
            raise subscription_lost(str(exc) or type(exc).__name__) from None
        except MemdError:
            await self.aclose()
            raise
        return message

    async def aclose(self) -> None:
        """Close the connection, ending the subscription; safe to call more than once."""
        self._closed = True
        self._early.clear()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            with anyio.CancelScope(shield=True):
                await stream.aclose()
