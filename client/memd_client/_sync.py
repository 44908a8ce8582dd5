"""`Client`: the blocking client, on a stdlib Unix socket; `SyncSubscription`: its event thread.

Size: just over the ~400-line guide: one short method per wire method, mirroring `aio`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, Literal

import msgspec

from memd_client import _autostart, _calls, protocol as p
from memd_client._connection import ClientBase, Connection, Reply
from memd_client._log import logger
from memd_client._transport_errors import (
    lost,
    reply_on_subscription,
    subscription_lost,
    timed_out,
    transport_errors,
    unavailable,
)
from memd_client.errors import InvalidParams, MemdError

CLOSE_TIMEOUT = 5.0
"""How long `SyncSubscription.close()` waits for a running callback to return."""


def _connect_unix(path: str, timeout: float) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


def _receive(sock: socket.socket, connection: Connection) -> None:
    """Read what `sock` has (blocking until something comes) into `connection`."""
    chunk = sock.recv(65536)
    if not chunk:
        raise ConnectionResetError("the daemon closed the connection")
    connection.receive_data(chunk)


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
            self._reset_connection()

    def call(self, call: _calls.Call) -> Any:
        """Send one prepared request and return its typed result (notifications are skipped)."""
        call = self._stamped(call)
        try:
            return self._call(call)
        except InvalidParams as exc:
            again = self._without_writer(call, exc)
            if again is None:
                raise
            return self._call(again)

    def _call(self, call: _calls.Call) -> Any:
        if self._sock is None:
            self._sock = self._open(self._connection)
        sock = self._sock
        connection = self._connection
        request_id, frame = connection.request(call.method, call.params)
        try:  # `transport_errors`, spelt out: this is every request's path
            sock.sendall(frame)
            while (reply := connection.next_reply()) is None:
                _receive(sock, connection)
        except MemdError:
            self.close()
            raise
        except TimeoutError:
            self.close()
            raise timed_out(call.method, self.timeout) from None
        except OSError as exc:
            self.close()
            raise lost(call.method, exc) from None
        return connection.result(reply, request_id, call.result_type)

    def subscribe(
        self,
        callback: Callable[[p.Event], object],
        *,
        workspace: str | os.PathLike[str] | None = None,
        on_error: Callable[[MemdError], object] | None = None,
        scope: p.Scope = "project",
    ) -> SyncSubscription:
        """Call `callback(event)` on a background thread for each change to a workspace (with
        scope "global", to the user-wide memory).

        The subscription has its own connection, so this client stays usable. Errors in
        subscribing are raised here; see `SyncSubscription` for what happens afterwards.
        """
        call = _calls.subscribe(_calls.workspace_path(workspace, self.workspace), scope)
        connection = Connection()
        sock = self._open(connection)
        early: list[p.Event] = []
        request_id, frame = connection.request(call.method, call.params)
        try:
            with transport_errors(call.method, self.timeout):
                sock.sendall(frame)
                while not isinstance(message := connection.next_message(), Reply):
                    if message is None:
                        _receive(sock, connection)
                    else:
                        early.append(message)
            connection.result(message, request_id, call.result_type)
        except BaseException:
            sock.close()
            raise
        return SyncSubscription(sock, connection, early, callback, on_error)

    def _open(self, connection: Connection) -> socket.socket:
        """Connect (starting a daemon if allowed) and check the daemon's protocol version."""
        sock = self._connect()
        try:
            request_id, frame = connection.handshake()
            with transport_errors("status", self.timeout):
                sock.sendall(frame)
                while (reply := connection.next_reply()) is None:
                    _receive(sock, connection)
            connection.check_handshake(reply, request_id, self.socket_path)
        except BaseException:
            sock.close()
            raise
        return sock

    def _connect(self) -> socket.socket:
        try:
            return _connect_unix(self.socket_path, self.timeout)
        except OSError as exc:
            if not (self.autostart and _autostart.may_start(exc)):
                raise unavailable(self.socket_path, exc) from None
        _autostart.start_daemon(self.socket_path, timeout=self.autostart_timeout)
        try:
            return _connect_unix(self.socket_path, self.timeout)
        except OSError as exc:
            raise unavailable(self.socket_path, exc) from None

    # -------------------------------------------------------------- protocol methods

    def store(
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
        result: p.StoreResult = self.call(call)
        return result

    def inbox(
        self, *, workspace: str | os.PathLike[str] | None = None, scope: p.Scope = "project"
    ) -> p.InboxResult:
        """List the entries waiting in the review inbox (`.memory/inbox.md`); `scope`
        "global": the user-wide memory's."""
        call = _calls.inbox(_calls.workspace_path(workspace, self.workspace), scope)
        result: p.InboxResult = self.call(call)
        return result

    def resolve(
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
        result: p.ResolveResult = self.call(
            _calls.resolve(ws, ident, action, content, reason, scope)
        )
        return result

    def propose(
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
        result: p.ProposeResult = self.call(_calls.propose(ws, source, proposals))
        return result

    def reflect(
        self, transcript: str, *, workspace: str | os.PathLike[str] | None = None
    ) -> p.ReflectResult:
        """Session review: the daemon's model (`[llm] command`) reads a transcript excerpt and
        its proposed memories go to the review inbox like `propose`'s (source "session");
        `llm` says whether it answered. Raises InvalidParams when no model is configured."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.ReflectResult = self.call(_calls.reflect(ws, transcript))
        return result

    def query(
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
        result: p.QueryResult = self.call(
            _calls.query(
                ws, query, category, limit, min_score, tags, mode, sources, file, include_archived
            )
        )
        return result

    def episode(
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
        result: p.StoreResult = self.call(call)
        return result

    def get(
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
        result: p.EntriesResult = self.call(call)
        return result

    def delete(
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
        result: p.DeleteResult = self.call(_calls.delete(ws, category, slug, scope))
        return result

    def history(
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
        result: p.HistoryResult = self.call(_calls.history(ws, slug, text, scope))
        return result

    def undo(
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
        result: p.UndoResult = self.call(_calls.undo(ws, to, dry_run, scope))
        return result

    def restore(
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
        result: p.RestoreResult = self.call(call)
        return result

    def cleanup(
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
        result: p.CleanupResult = self.call(_calls.cleanup(ws, apply, scope, propose))
        return result

    def check(
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
        result: p.CheckResult = self.call(_calls.check(ws, category, propose))
        return result

    def stats(
        self, *, workspace: str | os.PathLike[str] | None = None, scope: p.Scope = "project"
    ) -> p.StatsResult:
        """Per-category entry counts and limits; `scope` "global": of the user-wide memory."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.StatsResult = self.call(_calls.stats(ws, scope))
        return result

    def status(self) -> p.StatusResult:
        """The daemon's version, pid, uptime and loaded workspaces."""
        result: p.StatusResult = self.call(_calls.status())
        return result

    def context(
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
        result: p.ContextResult = self.call(call)
        return result

    def procedure(
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
        result: p.StoreResult = self.call(_calls.procedure(ws, name, steps, slug, dry_run))
        return result

    def outcome(
        self,
        slug: str,
        outcome: p.OutcomeKind,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> p.OutcomeResult:
        """Record that the procedure `slug` worked ("success") or failed ("failure")."""
        ws = _calls.workspace_path(workspace, self.workspace)
        result: p.OutcomeResult = self.call(_calls.outcome(ws, slug, outcome))
        return result

    def why(
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
        result: p.WhyResult = self.call(call)
        return result

    def extract(
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
        result: p.ExtractResult = self.call(call)
        return result

    def list(
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
        result: p.ListResult = self.call(call)
        return result


class SyncSubscription:
    """A running subscription from `Client.subscribe`: one daemon thread reads the connection
    and calls `callback(event)` for each `Changed` or `Resync`, in order (events that arrived
    before the subscribe reply first).

    An exception from `callback` is logged (logger "memd_client") and the next event is still
    delivered. If the connection breaks or the daemon sends garbage, the thread ends and calls
    `on_error(ConnectionLost(...))` (or `ProtocolViolation`), or logs a warning without
    `on_error`; subscribe again to resume, and `list` to catch up. `close()` (or leaving the
    `with` block) unsubscribes by closing the connection; neither callback is called after it.
    """

    def __init__(
        self,
        sock: socket.socket,
        connection: Connection,
        early: list[p.Event],
        callback: Callable[[p.Event], object],
        on_error: Callable[[MemdError], object] | None,
    ) -> None:
        sock.settimeout(None)  # events may be minutes apart
        self._sock, self._connection = sock, connection
        self._callback, self._on_error = callback, on_error
        self._closing = threading.Event()
        self._sock_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._run, args=(early,), name="memd-subscription", daemon=True
        )
        self._thread.start()

    def __enter__(self) -> SyncSubscription:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """Whether the thread is still reading events."""
        return self._thread.is_alive()

    def close(self) -> None:
        """Stop the thread and close the connection; waits up to `CLOSE_TIMEOUT` for a running
        callback to return. Safe to call more than once, and from the callback itself."""
        self._closing.set()
        with self._sock_lock, contextlib.suppress(OSError):
            if self._sock.fileno() != -1:
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked recv()
        if threading.current_thread() is not self._thread:
            self._thread.join(CLOSE_TIMEOUT)

    def _run(self, early: list[p.Event]) -> None:
        connection = self._connection
        try:
            for event in early:
                self._deliver(event)
            while not self._closing.is_set():
                message = connection.next_message()
                if message is None:
                    _receive(self._sock, connection)
                elif isinstance(message, Reply):
                    raise reply_on_subscription()
                else:
                    self._deliver(message)
        except OSError as exc:
            self._fail(subscription_lost(str(exc)))
        except MemdError as exc:
            self._fail(exc)
        finally:
            with self._sock_lock:
                self._sock.close()

    def _deliver(self, event: p.Event) -> None:
        if self._closing.is_set():
            return
        try:
            self._callback(event)
        except Exception:
            logger().exception(
                "memd subscription callback failed on a %s event for %s",
                type(event).__name__,
                event.workspace,
            )

    def _fail(self, error: MemdError) -> None:
        if self._closing.is_set():
            return
        if self._on_error is None:
            logger().warning("memd subscription ended: %s", error)
            return
        try:
            self._on_error(error)
        except Exception:
            logger().exception("memd subscription on_error callback failed")
