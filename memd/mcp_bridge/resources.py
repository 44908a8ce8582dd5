"""memd's memory files as live MCP resources: list, read, subscribe, and notices when they
change.

URIs (mime type text/markdown):
- `memd://project/<file>`: a category file of the bridge's workspace (`memd://project/
  decisions.md`), and `memd://project/inbox.md`, its review inbox;
- `memd://global/<file>`: the same for the user-wide memory (`memd://global/inbox.md` its
  inbox).

Rules:
- Only files that exist are listed: a category file appears once something is stored in it,
  and `notifications/resources/list_changed` says so (and when one goes). The category files are
  the daemon's (`stats`, with the workspace's own categories, and the inbox's path from
  `inbox`); the user-wide memory's are asked for only once it holds entries (`stats` of
  "global" would create it).
  A read asks the daemon again which files there are, then reads the file it names: one
  source of truth, the right workspace, and a URI is never a path (no `..`, no other file).
- The workspace is the tools' (`--workspace`, the client's first root, the cwd: `workspace`),
  resolved on each resources request; the live feed follows the last one resolved.
- Subscribe is the handshake era's `resources/subscribe` / `resources/unsubscribe`, served on
  the low-level server (which advertises `resources.subscribe` for it). Updates go to each
  session subscribed to the URI as `notifications/resources/updated`, and to the SDK's
  `SubscriptionBus` too, which serves 2026-07-28 `subscriptions/listen` streams.
- The feed (`ResourceFeed.run`, in the bridge's lifespan task group, for the bridge's
  lifetime) starts at the first resources request. It keeps ONE `subscribe` to the daemon for
  the workspace and one for the user-wide memory (refused until it exists: asked again),
  each reconnecting with a bounded backoff (RETRY_MIN to RETRY_MAX seconds) when the daemon
  goes away; on a reconnect it tells subscribers every file may have changed. The inboxes
  are not in the daemon's change feed: their files are looked at every INBOX_POLL seconds.
  Every send is bounded (SEND_TIMEOUT); a session that went away is dropped.
- `mcp` is an optional extra: it is imported only inside functions.

Size: the URI scheme, the listing, the four request handlers and the feed, kept together
because each handler feeds the feed's state.
"""

import contextlib
import errno
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio
import msgspec

from memd.core.format.limits import MAX_FILE_BYTES
from memd.core.review.inbox_format import INBOX_FILE
from memd.fs import storage
from memd.fs.storage import Fingerprint, fingerprint_of
from memd.mcp_bridge.workspace import Workspace, pick_workspace
from memd_client import MemdError, protocol as p
from memd_client.errors import InvalidParams

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.mcpserver import MCPServer
    from mcp.server.session import ServerSession
    from mcp.types import EmptyResult, ListResourcesResult, ReadResourceResult

    from memd.mcp_bridge.tools import Bridge

__all__ = [
    "MemoryFile",
    "ResourceFeed",
    "parse_uri",
    "resource_uri",
]

logger = logging.getLogger("memd.mcp")

ResourceScope = Literal["project", "global"]
SCHEME = "memd"
MIME_TYPE = "text/markdown"
RETRY_MIN = 0.5
"""Seconds before the first reconnect to the daemon after it went away."""
RETRY_MAX = 10.0
"""The longest wait between reconnects (the wait doubles from RETRY_MIN up to this)."""
INBOX_POLL = 2.0
"""Seconds between looks at the review inboxes' files (not in the daemon's change feed)."""
SUBSCRIBE_WAIT = 5.0
"""Seconds a `resources/subscribe` waits for the feed's own subscription to the daemon, so
that changes after its reply are seen (it answers anyway when the daemon is away)."""
SEND_TIMEOUT = 5.0
"""Seconds one notification to the client may take before it is given up."""


class MemoryFile(msgspec.Struct, frozen=True):
    """One resource: its URI, scope, file name, absolute path and what it holds."""

    uri: str
    scope: ResourceScope
    file: str
    path: str
    category: str
    """The category it holds; "" for the review inbox."""

    def describe(self) -> str:
        """The resource's description, e.g. "The project's Decision entries (decisions.md)"."""
        whose = "The project's" if self.scope == "project" else "The user-wide memory's"
        if not self.category:
            return f"{whose} review inbox: memories waiting for a person's review ({self.file})."
        return f"{whose} {self.category} entries ({self.file})."


def resource_uri(scope: ResourceScope, file: str) -> str:
    """The URI of a memory file, e.g. "memd://project/decisions.md"."""
    return f"{SCHEME}://{scope}/{file}"


def parse_uri(uri: str) -> tuple[ResourceScope, str] | None:
    """The scope and file name a memd URI names, or None if it is not one (another scheme, a
    scope other than project and global, a path with a "/" or a leading ".")."""
    prefix = f"{SCHEME}://"
    if not uri.startswith(prefix):
        return None
    scope, _, file = uri[len(prefix) :].partition("/")
    if scope not in ("project", "global") or not file or "/" in file or file.startswith("."):
        return None
    return ("project" if scope == "project" else "global"), file


def memory_files(scope: ResourceScope, stats: p.StatsResult, inbox: str | None) -> list[MemoryFile]:
    """The resources of one memory: its category files that exist (in `stats`' order), then
    its inbox at path `inbox` (None: it does not exist)."""
    memory_dir = os.path.join(stats.workspace, ".memory")
    files = [
        MemoryFile(
            resource_uri(scope, row.file),
            scope,
            row.file,
            os.path.join(memory_dir, row.file),
            row.category,
        )
        for row in stats.categories
        if row.exists
    ]
    if inbox is not None:
        files.append(MemoryFile(resource_uri(scope, INBOX_FILE), scope, INBOX_FILE, inbox, ""))
    return files


def _signature(path: str) -> Fingerprint | None:
    """A file's fingerprint, or None when it cannot be seen."""
    try:
        return fingerprint_of(os.stat(path))
    except OSError:
        return None


def _signatures(paths: dict[str, str]) -> dict[str, Fingerprint | None]:
    """`_signature` of each path, by URI."""
    return {uri: _signature(path) for uri, path in paths.items()}


def _read(path: str) -> str:
    """A memory file's text, read as the daemon reads one (`storage.read_text`: never through
    a link a cloned repository planted, never a FIFO, at most `MAX_FILE_BYTES`).

    Raises:
        OSError: it is gone.
        MemdError: it cannot be used (the message says why).
    """
    read = storage.read_text(path, follow_links=False, max_bytes=MAX_FILE_BYTES)
    if read is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", path)
    return read[0]


class ResourceFeed:
    """The resources' handlers and their live feed (see the module rules)."""

    def __init__(
        self,
        bridge: "Bridge",
        resolver: Callable[..., Awaitable[Any]],
        publish: Callable[[Any], Awaitable[None]],
    ) -> None:
        self.bridge = bridge
        self.resolver = resolver
        """The tools' roots resolver (it takes the SDK's `Context`)."""
        self.publish = publish
        """Publishes an event to the SDK's SubscriptionBus (2026-07-28 listen streams)."""
        self.subscribed: dict[str, dict[object, ServerSession]] = {}
        """The sessions subscribed to each URI, by their connection (`_peer`)."""
        self.listeners: dict[object, ServerSession] = {}
        """Sessions that listed, read or subscribed to resources, by their connection: told
        when the list changes."""
        self.listed: dict[str, MemoryFile] = {}
        """The files as last listed, by URI: a difference is a list change."""
        self.workspace: Workspace | None = None
        self._moved = anyio.Event()
        """Set when the workspace to follow changes (the feed then starts over)."""
        self._connected = anyio.Event()
        """Set while the feed's subscription to the daemon is in place."""

    # ------------------------------------------------------------------------ listing

    async def list_files(self, ws: Workspace, *, autostart: bool = True) -> list[MemoryFile]:
        """The memory files of `ws` and the user-wide memory, as the daemon names them
        (starting a daemon if none runs, as a tool call does, unless not `autostart`).

        Raises:
            MemdError: the daemon cannot be reached or refused the call.
        """
        async with self.bridge.client(ws, autostart=autostart) as client:
            listed: list[tuple[ResourceScope, p.StatsResult]] = [("project", await client.stats())]
            # Asked only once it holds entries: `stats` of "global" would create it.
            if (await client.list(sources=["global"])).entries:
                listed.append(("global", await client.stats(scope="global")))
        inboxes = [os.path.join(stats.workspace, ".memory", INBOX_FILE) for _, stats in listed]
        seen = await anyio.to_thread.run_sync(lambda: [os.path.isfile(f) for f in inboxes])
        files: list[MemoryFile] = []
        for (scope, stats), inbox, exists in zip(listed, inboxes, seen, strict=True):
            files += memory_files(scope, stats, inbox if exists else None)
        return files

    async def _refresh(self, ws: Workspace) -> None:
        """List again; tell the listeners if a file appeared or went (the feed never starts a
        daemon)."""
        try:
            files = {f.uri: f for f in await self.list_files(ws, autostart=False)}
        except MemdError as exc:
            logger.info("could not list the memory files (%s)", exc.message)
            return
        changed = files.keys() != self.listed.keys()
        self.listed = files
        if changed:
            await self._tell_list_changed()

    # ------------------------------------------------------------------------ handlers

    async def _workspace(self, ctx: "ServerRequestContext[Any, Any]", server: Any) -> Workspace:
        """The workspace of a resources request, as a tool call's (see `workspace`)."""
        from mcp.server.mcpserver import Context
        from mcp.types import ListRootsResult

        roots = await self.resolver(Context(request_context=ctx, mcp_server=server))
        listed = roots if isinstance(roots, ListRootsResult) else None
        ws = pick_workspace(self.bridge.fixed, listed)
        if self.workspace is None or ws.path != self.workspace.path:
            self.workspace = ws
            self._connected = anyio.Event()  # not yet for this workspace
            self._moved.set()
        return ws

    def install(self, server: "MCPServer[Any]") -> None:
        """Serve resources/list, resources/read, resources/subscribe and resources/unsubscribe
        on `server`'s low-level server (replacing MCPServer's static resources). (Long: the
        four handlers, closures over the SDK's local imports, read as a list.)"""
        from mcp.shared.exceptions import MCPError
        from mcp.types import (
            INTERNAL_ERROR,
            INVALID_PARAMS,
            EmptyResult,
            ListResourcesResult,
            PaginatedRequestParams,
            ReadResourceRequestParams,
            ReadResourceResult,
            Resource,
            SubscribeRequestParams,
            TextResourceContents,
            UnsubscribeRequestParams,
        )

        lowlevel = server._lowlevel_server  # no public accessor; the SDK's own client uses it

        async def files(ctx: "ServerRequestContext[Any, Any]") -> list[MemoryFile]:
            ws: Workspace | None = None
            try:
                ws = await self._workspace(ctx, server)
                listed = await self.list_files(ws)
            except MemdError as exc:
                where = f" ({ws.describe()})" if ws is not None else ""
                raise MCPError(code=INTERNAL_ERROR, message=f"{exc.message}{where}") from None
            self.listeners[_peer(ctx.session)] = ctx.session
            self.listed = {f.uri: f for f in listed}
            return listed

        async def on_list(
            ctx: "ServerRequestContext[Any, Any]", params: PaginatedRequestParams | None
        ) -> "ListResourcesResult":
            return ListResourcesResult(
                resources=[
                    Resource(
                        uri=f.uri,
                        name=f.file if f.scope == "project" else f"global/{f.file}",
                        title=f.describe().rstrip("."),
                        description=f.describe(),
                        mime_type=MIME_TYPE,
                    )
                    for f in await files(ctx)
                ]
            )

        async def on_read(
            ctx: "ServerRequestContext[Any, Any]", params: ReadResourceRequestParams
        ) -> "ReadResourceResult":
            uri = str(params.uri)
            found = next((f for f in await files(ctx) if f.uri == uri), None)
            if found is None:
                raise MCPError(code=INVALID_PARAMS, message=_not_listed(uri))
            try:
                text = await anyio.to_thread.run_sync(_read, found.path)
            except OSError as exc:
                raise MCPError(
                    code=INTERNAL_ERROR,
                    message=f"{uri} cannot be read ({exc.strerror or exc}); list the "
                    "resources again.",
                ) from None
            except MemdError as exc:
                raise MCPError(code=INTERNAL_ERROR, message=f"{uri}: {exc}") from None
            return ReadResourceResult(
                contents=[TextResourceContents(uri=uri, text=text, mime_type=MIME_TYPE)]
            )

        async def on_subscribe(
            ctx: "ServerRequestContext[Any, Any]", params: SubscribeRequestParams
        ) -> "EmptyResult":
            uri = str(params.uri)
            if parse_uri(uri) is None:
                raise MCPError(code=INVALID_PARAMS, message=_not_listed(uri))
            self.subscribed.setdefault(uri, {})[_peer(ctx.session)] = ctx.session
            self.listeners[_peer(ctx.session)] = ctx.session
            with contextlib.suppress(MemdError):  # no workspace yet: the next request's
                await self._workspace(ctx, server)
            with anyio.move_on_after(SUBSCRIBE_WAIT):  # active from the reply, daemon willing
                await self._connected.wait()
            return EmptyResult()

        async def on_unsubscribe(
            ctx: "ServerRequestContext[Any, Any]", params: UnsubscribeRequestParams
        ) -> "EmptyResult":
            sessions = self.subscribed.get(str(params.uri), {})
            sessions.pop(_peer(ctx.session), None)
            if not sessions:
                self.subscribed.pop(str(params.uri), None)
            return EmptyResult()

        lowlevel.add_request_handler("resources/list", PaginatedRequestParams, on_list)
        lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, on_read)
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, on_subscribe)
        lowlevel.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, on_unsubscribe
        )

    # ------------------------------------------------------------------------ the feed

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the feed in a task group of its own while the block runs (the bridge's
        lifespan); leaving the block stops it."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.run)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def run(self) -> None:
        """Follow the workspace's changes for the bridge's lifetime (cancel to stop)."""
        while True:
            await self._moved.wait()
            self._moved = anyio.Event()
            ws = self.workspace
            if ws is None:
                continue
            logger.info("the resources feed follows %s", ws.describe())
            async with anyio.create_task_group() as inner:
                inner.start_soon(self._daemon_feed, ws, "project")
                inner.start_soon(self._daemon_feed, ws, "global")
                inner.start_soon(self._inbox_poll, ws)
                await self._moved.wait()  # a new workspace: start over
                inner.cancel_scope.cancel()

    async def _daemon_feed(self, ws: Workspace, scope: ResourceScope) -> None:
        """One subscription to the daemon for `ws`'s memory or the user-wide memory (`scope`),
        renewed with a bounded backoff (the user-wide one is refused until it holds
        something: it is asked for again every RETRY_MAX seconds at most)."""
        from memd_client.aio import AsyncClient

        delay = RETRY_MIN
        first = True
        while True:
            try:
                client = AsyncClient(self.bridge.socket, workspace=ws.path, autostart=False)
                async with client, client.subscribe(scope=scope) as events:
                    delay = RETRY_MIN
                    if scope == "project":
                        self._connected.set()
                    await self._refresh(ws)
                    if not first:  # changes made while the daemon was away
                        await self._tell_updated(self._subscribed_in(scope))
                    first = False
                    async for event in events:
                        await self._on_event(ws, scope, event)
            except InvalidParams as exc:
                logger.debug("the resources feed cannot follow %s yet (%s)", scope, exc.message)
            except MemdError as exc:
                logger.info("the resources feed lost the daemon (%s); retrying", exc.message)
            if scope == "project" and self._connected.is_set():
                self._connected = anyio.Event()
            await anyio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    async def _on_event(self, ws: Workspace, scope: ResourceScope, event: p.Event) -> None:
        """A category file of `scope` changed (or notices were dropped: every file may
        have)."""
        if isinstance(event, p.Changed):
            uri = resource_uri(scope, event.file)
            if uri not in self.listed or not event.entries:  # may have appeared or gone
                await self._refresh(ws)
            await self._tell_updated([uri])
        else:
            await self._refresh(ws)
            await self._tell_updated(self._subscribed_in(scope))

    def _subscribed_in(self, scope: ResourceScope) -> list[str]:
        """The subscribed URIs of `scope`."""
        return [uri for uri in self.subscribed if (parse_uri(uri) or ("", ""))[0] == scope]

    async def _inbox_poll(self, ws: Workspace) -> None:
        """Look at the inboxes' files every INBOX_POLL seconds; a change is an update."""
        last: dict[str, Fingerprint | None] = {}
        while True:
            inboxes = [f for f in self.listed.values() if not f.category]
            paths = {f.uri: f.path for f in inboxes}
            if ws.path and not any(f.scope == "project" for f in inboxes):
                paths[resource_uri("project", INBOX_FILE)] = os.path.join(
                    ws.path, ".memory", INBOX_FILE
                )
            now = await anyio.to_thread.run_sync(_signatures, paths)
            moved = [uri for uri, sig in now.items() if uri in last and last[uri] != sig]
            if any((last[uri] is None) != (now[uri] is None) for uri in moved):
                await self._refresh(ws)
            if moved:
                await self._tell_updated(moved)
            last = now
            await anyio.sleep(INBOX_POLL)

    # ------------------------------------------------------------------------ sending

    async def _tell_updated(self, uris: list[str]) -> None:
        """`notifications/resources/updated` to each subscribed session, and the bus."""
        from mcp.server.subscriptions import ResourceUpdated

        for uri in uris:
            for session in list(self.subscribed.get(uri, {}).values()):
                await self._send(session, session.send_resource_updated, uri)
            await self.publish(ResourceUpdated(uri=uri))

    async def _tell_list_changed(self) -> None:
        """`notifications/resources/list_changed` to each listening session, and the bus."""
        from mcp.server.subscriptions import ResourcesListChanged

        for session in list(self.listeners.values()):
            await self._send(session, session.send_resource_list_changed)
        await self.publish(ResourcesListChanged())

    async def _send(
        self, session: "ServerSession", send: Callable[..., Awaitable[None]], *args: str
    ) -> None:
        """Send one notification within SEND_TIMEOUT; a session that fails is dropped."""
        try:
            with anyio.fail_after(SEND_TIMEOUT):
                await send(*args)
        except Exception as exc:
            logger.info("dropping an MCP session that cannot be notified (%s)", exc)
            self.listeners.pop(_peer(session), None)
            for sessions in self.subscribed.values():
                sessions.pop(_peer(session), None)


def _peer(session: "ServerSession") -> object:
    """What identifies a session's client: its connection (the SDK hands each request a
    fresh `ServerSession` proxy over the same connection)."""
    return getattr(session, "_connection", session)


def _not_listed(uri: str) -> str:
    """The error for a URI that names no memory file."""
    return (
        f"{uri} is not one of memd's memory files; list the resources for their URIs "
        "(memd://project/<file> or memd://global/<file>)."
    )
