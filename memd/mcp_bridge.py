"""`memd mcp`: an MCP server on stdio that forwards every tool call to the memd daemon.

The bridge holds no memory state. Each tool call opens its own `AsyncClient` (with autostart),
so concurrent calls run in parallel on separate connections. The tools keep HackLM Memory's
names and argument shapes (`storeMemory`, `queryMemory`), so instruction files written for
HackLM keep working. Each result carries text for the agent and structured content (the daemon's
result plus the workspace used).

Workspace, in this order:
1. `--workspace DIR`.
2. The MCP client's first `file://` root, if the client declares the roots capability. Roots are
   deprecated in the 2026-07-28 spec but still served. On a handshake-era connection the bridge
   asks for them itself, so a failure falls back to step 3. On a 2026-07-28 connection the
   SDK's `ListRoots` resolver asks through the multi-round-trip flow.
3. The current directory's project root: the nearest ancestor holding `.memory/` or `.git`,
   as for the CLI.

stdout carries only MCP frames (the SDK moves the wire to a private descriptor and points fd 1
at stderr while serving). Logs go to stderr, at WARNING unless `$MEMD_LOG_LEVEL` says otherwise.

The `mcp` package is an optional extra (`pip install 'memd[mcp]'`), so this module imports it
only inside functions, and `run_mcp` says what to install when it is missing. The tools are
closures over those local imports, and the SDK reads their annotations when it registers them,
which is why this module does not use `from __future__ import annotations`.
"""

import argparse
import contextlib
import importlib
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypeVar
from urllib.parse import unquote, urlsplit

import msgspec

import memd
from memd_client import MemdError, find_workspace, protocol as p

if sys.version_info >= (3, 12):
    from typing import TypedDict
else:  # pydantic needs typing_extensions' TypedDict before 3.12 (a dependency of anyio there)
    from typing_extensions import TypedDict

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, ListRootsResult

    from memd_client.aio import AsyncClient

__all__ = ["Bridge", "build_server", "run_mcp", "workspace_from_roots"]

logger = logging.getLogger("memd.mcp")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

ROOTS_TIMEOUT = 5.0
"""Seconds to wait for a handshake-era client to answer `roots/list` before using the cwd."""
MODERN_PROTOCOL = "2026-07-28"
"""From this protocol version on, server-to-client requests ride the multi-round-trip flow."""

Category = Literal["Instruction", "Quirk", "Preference", "Decision", "Security"]
WorkspaceSource = Literal["--workspace", "client root", "current directory"]

_SOURCE_PHRASES: dict[str, str] = {
    "--workspace": "from --workspace",
    "client root": "from the client's first root",
    "current directory": "from the current directory",
}

INSTRUCTIONS = """\
memd holds this project's memory: short rules and lessons in .memory/*.md, shared with every \
agent and editor on this machine (and with HackLM Memory).

- At the start of a task, call memoryContext (or queryMemory with what the task is about) \
before planning or answering questions about architecture, conventions or style.
- Always follow every Security and Instruction entry you are given. They are rules, not hints.
- When you learn something durable, store it with storeMemory before you end your turn. That \
covers a preference or rule the user states (store it before acting), a correction, the cause \
and fix of a failed build or command, and a decision or convention a task introduced. Write one \
short sentence per entry. Give a kebab-case slug to update the entry later (same slug = update, \
not duplicate). Do not store task progress or changelogs.
"""

# ---------------------------------------------------------------------------- structured output


class EntryOut(TypedDict):
    """A memory entry."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str


class MatchedOut(TypedDict):
    """The existing entry a store was compared with."""

    slug: str | None
    content: str
    line: int


class StoreOut(TypedDict):
    """What `store` did, as the daemon reports it, plus the workspace used."""

    action: Literal["stored", "updated", "skipped"]
    category: str
    file: str
    line: int
    slug: str | None
    content: str
    similarity: float
    matched: MatchedOut | None
    message: str
    conflict: bool
    over_limit: bool
    entries: int
    limit: int
    workspace: str
    workspace_source: WorkspaceSource


class HitOut(TypedDict):
    """A query result."""

    category: str
    file: str
    line: int
    slug: str | None
    content: str
    score: float


class QueryOut(TypedDict):
    """The best hits and how many entries matched in all."""

    results: list[HitOut]
    total: int
    workspace: str
    workspace_source: WorkspaceSource


class EntriesOut(TypedDict):
    """Entries, in category then file order."""

    entries: list[EntryOut]
    workspace: str
    workspace_source: WorkspaceSource


class CategoryStatsOut(TypedDict):
    """One category's file, entry count and limit."""

    category: str
    file: str
    entries: int
    limit: int
    exists: bool
    error: NotRequired[str | None]


class StatsOut(TypedDict):
    """Per-category counts; `workspace` is the daemon's real path for it."""

    workspace: str
    workspace_source: WorkspaceSource
    categories: list[CategoryStatsOut]
    total: int
    loaded_at: str


class MergeOut(TypedDict):
    """Near-duplicates folded into one entry."""

    category: str
    file: str
    kept: EntryOut
    removed: list[EntryOut]
    content: str
    slug: str


class PruneOut(TypedDict):
    """An entry removed because its category was over its limit."""

    category: str
    file: str
    entry: EntryOut
    score: int


class SlugOut(TypedDict):
    """A slug given to an entry that had none."""

    category: str
    file: str
    entry: EntryOut
    slug: str


class CleanupOut(TypedDict):
    """The cleanup plan, and whether it was applied."""

    applied: bool
    merged: list[MergeOut]
    pruned: list[PruneOut]
    slugged: list[SlugOut]
    archive: str
    message: str
    workspace: str
    workspace_source: WorkspaceSource


class ContextEntryOut(TypedDict):
    """An entry in the block: `always` (Security, Instruction) or `relevant` (ranked)."""

    layer: str
    category: str
    file: str
    line: int
    slug: str | None
    content: str
    score: NotRequired[float | None]


class ContextOut(TypedDict):
    """The memory block (`markdown`) and what went into it."""

    markdown: str
    tokens: int
    budget_tokens: int
    entries: list[ContextEntryOut]
    omitted: int
    workspace: str
    workspace_source: WorkspaceSource


# ---------------------------------------------------------------------------- workspace


class Workspace(msgspec.Struct, frozen=True):
    """The workspace a call uses, and where it came from."""

    path: str
    source: WorkspaceSource

    def describe(self) -> str:
        """For example "workspace /home/me/proj (from --workspace)"."""
        return f"workspace {self.path} ({_SOURCE_PHRASES[self.source]})"


def workspace_from_roots(uris: Iterable[str]) -> str | None:
    """Return the local path of the first `file://` URI in `uris`, or None if there is none."""
    for uri in uris:
        parts = urlsplit(uri)
        if parts.scheme == "file" and parts.netloc in ("", "localhost") and parts.path:
            return os.path.abspath(unquote(parts.path))
    return None


def cwd_workspace() -> Workspace:
    """The current directory's project root, as the CLI finds it."""
    try:
        return Workspace(find_workspace(), "current directory")
    except OSError as exc:  # the cwd was deleted under us
        raise MemdError(
            f"The current directory cannot be read ({exc.strerror or exc}); start `memd mcp` "
            "with --workspace DIR."
        ) from None


# ---------------------------------------------------------------------------- text for the agent


def _entry_label(category: str, slug: str | None) -> str:
    return f"[{category}] [{slug}]" if slug else f"[{category}]"


def render_query(result: p.QueryResult, query: str) -> str:
    """The hits as lines "- [Category] [slug] content (score 0.87)"."""
    if not result.results:
        if query.strip():
            return f'No memories found matching "{query}".'
        return "No memories stored yet."
    count = len(result.results)
    lines = [f"Found {count} {'memory' if count == 1 else 'memories'}:", ""]
    lines += [
        f"- {_entry_label(hit.category, hit.slug)} {hit.content} (score {hit.score:.2f})"
        for hit in result.results
    ]
    if result.total > count:
        lines.append(f"({count} of {result.total} matches; raise limit to see more.)")
    return "\n".join(lines)


def render_entries(entries: list[p.EntryInfo]) -> str:
    """Entries as lines "- [Category] [slug] content (file:line)"."""
    return "\n".join(
        f"- {_entry_label(e.category, e.slug)} {e.content} ({e.file}:{e.line})" for e in entries
    )


def render_stats(result: p.StatsResult, workspace: Workspace) -> str:
    """Per-category counts, headed by the workspace and where it came from."""
    lines = [f"Memory of {workspace.describe()}:"]
    for row in result.categories:
        note = ""
        if row.error:
            note = f"; cannot be read: {row.error}"
        elif not row.exists:
            note = "; no file yet"
        elif row.entries > row.limit:
            note = "; over its limit, run cleanupMemory"
        lines.append(f"- {row.category} ({row.file}): {row.entries} of {row.limit} entries{note}")
    lines.append(f"Total: {result.total} {'entry' if result.total == 1 else 'entries'}.")
    return "\n".join(lines)


def render_cleanup(result: p.CleanupResult) -> str:
    """The daemon's summary, then one line per merge, prune and slug."""
    lines = [result.message]
    for merge in result.merged:
        removed = ", ".join(f"[{e.slug}]" if e.slug else f'"{e.content}"' for e in merge.removed)
        lines.append(f"- merge in {merge.file}: keep [{merge.slug}], fold in {removed}")
    for prune in result.pruned:
        entry = prune.entry
        lines.append(
            f"- prune in {prune.file}: {_entry_label(prune.category, entry.slug)} "
            f"{entry.content} (score {prune.score})"
        )
    for slugged in result.slugged:
        lines.append(
            f"- slug in {slugged.file}:{slugged.entry.line}: "
            f'"{slugged.entry.content}" becomes [{slugged.slug}]'
        )
    if not result.applied and (result.merged or result.pruned or result.slugged):
        lines.append("Nothing was changed; call cleanupMemory with apply=true to carry this out.")
    return "\n".join(lines)


def render_context(result: p.ContextResult) -> str:
    """The block itself, or a sentence when memory has nothing for this task."""
    if result.markdown.strip():
        return result.markdown
    return "No memories to add for this task."


def structured(result: msgspec.Struct, workspace: Workspace, **extra: Any) -> dict[str, Any]:
    """The daemon's result as JSON-ready builtins, with the workspace used."""
    data: dict[str, Any] = msgspec.to_builtins(result)
    data.setdefault("workspace", workspace.path)
    data["workspace_source"] = workspace.source
    data.update(extra)
    return data


def cleandoc(fn: F) -> F:
    """Dedent a tool's docstring: the SDK sends it to the agent as the tool's description."""
    fn.__doc__ = inspect.cleandoc(fn.__doc__ or "")
    return fn


# ---------------------------------------------------------------------------- entry point


def run_mcp(args: argparse.Namespace) -> int:
    """Serve the MCP tools on stdin/stdout until the client goes away; return the exit code."""
    try:
        importlib.import_module("mcp.server.mcpserver")  # the optional extra
    except ImportError as exc:
        sys.stderr.write(
            f"memd: `memd mcp` needs the MCP Python SDK, which is not installed ({exc}); "
            "install it with `pip install 'memd[mcp]'`.\n"
        )
        return 1
    level = _configure_logging()
    server = build_server(socket=args.socket, workspace=args.workspace, log_level=level)
    logger.info(
        "serving MCP on stdio (memd %s, socket %s, workspace %s)",
        memd.__version__,
        args.socket or "default",
        args.workspace or "from the client's roots or the current directory",
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.run("stdio")
    logger.info("the MCP client went away; exiting")
    return 0


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _configure_logging() -> LogLevel:
    """Send every log line to stderr (stdout is the MCP wire), at $MEMD_LOG_LEVEL or WARNING."""
    wanted = os.environ.get("MEMD_LOG_LEVEL", "").strip().upper() or "WARNING"
    level: LogLevel = next((name for name in LOG_LEVELS if name == wanted), "WARNING")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter("%(asctime)s memd-mcp[%(process)d] %(levelname)s %(name)s: %(message)s")
    )
    logging.basicConfig(level=level, handlers=[handler], force=True)
    if wanted != level:
        logger.warning("MEMD_LOG_LEVEL=%s is not one of %s; using WARNING", wanted, LOG_LEVELS)
    return level


# ---------------------------------------------------------------------------- the server


class Bridge:
    """What every tool call shares: the socket, a fixed workspace if any, and the plumbing
    from a call to the daemon and back."""

    def __init__(self, socket: str | None, workspace: str | None) -> None:
        self.socket = socket
        self.fixed = Workspace(os.path.abspath(workspace), "--workspace") if workspace else None

    def pick_workspace(self, roots: "ListRootsResult | None") -> Workspace:
        """--workspace, else the client's first file:// root, else the cwd's project root."""
        if self.fixed is not None:
            return self.fixed
        if roots is not None:
            path = workspace_from_roots(str(root.uri) for root in roots.roots)
            if path is not None:
                return Workspace(path, "client root")
        return cwd_workspace()

    async def call(
        self,
        roots: "ListRootsResult | None",
        action: "Callable[[AsyncClient], Awaitable[T]]",
    ) -> tuple[T, Workspace]:
        """Run `action` on a fresh client (starting a daemon if none runs) for the call's
        workspace. A memd error becomes a ToolError: its sentence, then the workspace used."""
        from mcp.server.mcpserver.exceptions import ToolError

        from memd_client.aio import AsyncClient

        ws: Workspace | None = None
        try:
            ws = self.pick_workspace(roots)
            async with AsyncClient(self.socket, workspace=ws.path, autostart=True) as client:
                return await action(client), ws
        except MemdError as exc:
            used = f" This call used {ws.describe()}." if ws is not None else ""
            raise ToolError(f"{exc.message}{used}") from None

    def reply(self, text: str, data: dict[str, Any]) -> "CallToolResult":
        """Text for the agent plus structured content."""
        from mcp.types import CallToolResult, TextContent

        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )


def build_server(
    *, socket: str | None, workspace: str | None, log_level: LogLevel = "WARNING"
) -> "MCPServer[Any]":
    """Return the MCP server with memd's tools; `socket` and `workspace` are the CLI's flags."""
    from mcp.server.mcpserver import MCPServer

    bridge = Bridge(socket, workspace)
    server: MCPServer[Any] = MCPServer(
        "memd",
        title="memd project memory",
        version=memd.__version__,
        instructions=INSTRUCTIONS,
        log_level=log_level,
    )
    resolver = _roots_resolver(bridge)
    _add_write_tools(server, bridge, resolver)
    _add_read_tools(server, bridge, resolver)
    return server


def _roots_resolver(bridge: Bridge) -> "Callable[..., Awaitable[Any]]":
    """The resolver that fills each tool's hidden `roots` parameter."""
    from mcp.server.mcpserver import Context, ListRoots
    from mcp.shared.message import ServerMessageMetadata
    from mcp.types import ListRootsRequest, ListRootsResult
    from mcp_types.version import is_version_at_least

    async def client_roots(ctx: Context[Any, Any]) -> ListRoots | ListRootsResult | None:
        """The client's roots, when they matter (no --workspace) and the client has them."""
        if bridge.fixed is not None:
            return None
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.roots is None:
            return None
        version = ctx.protocol_version
        if version is not None and is_version_at_least(version, MODERN_PROTOCOL):
            return ListRoots()  # the SDK asks through the multi-round-trip flow
        try:  # a handshake-era connection: ask over the back-channel ourselves
            roots: ListRootsResult = await ctx.session.send_request(
                ListRootsRequest(),
                ListRootsResult,
                request_read_timeout_seconds=ROOTS_TIMEOUT,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except Exception as exc:  # a client that cannot answer: fall back to the cwd
            logger.warning("could not read the client's roots (%s); using the cwd", exc)
            return None
        return roots

    return client_roots


CATEGORY_HELP = (
    "Instruction: how to behave in this project. Quirk: project-specific weirdness, the "
    "non-obvious stuff. Preference: style, design and naming choices. Decision: architectural "
    "commitments. Security: rules that must never be broken."
)


def _add_write_tools(
    server: "MCPServer[Any]", bridge: Bridge, resolver: "Callable[..., Awaitable[Any]]"
) -> None:
    """storeMemory and cleanupMemory."""
    from mcp.server.mcpserver import Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import Field

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]

    @server.tool(
        name="storeMemory",
        title="Store a memory",
        annotations=ToolAnnotations(
            title="Store a memory",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    @cleandoc
    async def store_memory(
        category: Annotated[Category, Field(description=CATEGORY_HELP)],
        content: Annotated[
            str,
            Field(
                description=(
                    "One short, self-contained sentence on one line (under 2000 characters), "
                    'e.g. "Use a lock before writing. One write at a time."'
                )
            ),
        ],
        roots: Roots,
        slug: Annotated[
            str | None,
            Field(
                description=(
                    "Optional kebab-case id (lowercase letters, digits, single hyphens; up to 64 "
                    "characters), e.g. 'use-tabs'. An existing entry with this slug is updated "
                    "in place; leave it out to get one derived from the content."
                )
            ),
        ] = None,
    ) -> Annotated[CallToolResult, StoreOut]:
        """Save one durable lesson to the project's memory (.memory/<category>.md), shared
        with every agent working on this project.

        Call it when the user states a preference or rule (store it before acting), when the
        user corrects you, when a build or command failed and you found the cause and fix, and
        after a task for each new decision or convention it introduced. Write one sentence per
        call. Pass a slug to update that entry later: same slug = update, not duplicate. A near
        duplicate of an existing entry is skipped or merged, and the result says which.
        """
        result, ws = await bridge.call(
            roots, lambda client: client.store(category=category, content=content, slug=slug)
        )
        data = structured(result, ws)
        data.pop("dry_run", None)
        return bridge.reply(result.message, data)

    @server.tool(
        name="cleanupMemory",
        title="Clean up memory",
        annotations=ToolAnnotations(
            title="Clean up memory",
            read_only_hint=False,
            destructive_hint=True,
            open_world_hint=False,
        ),
    )
    @cleandoc
    async def cleanup_memory(
        roots: Roots,
        apply: Annotated[
            bool,
            Field(
                description=(
                    "false (the default) only reports the plan. true rewrites the memory files; "
                    "removed entries are kept in .memory/archive.md."
                )
            ),
        ] = False,
    ) -> Annotated[CallToolResult, CleanupOut]:
        """Plan or carry out a cleanup of the project's memory. It merges near-duplicate
        entries, prunes categories over their limit (weakest entries first) and gives a slug to
        every entry without one.

        Call it without apply first and show the plan to the user. Pass apply=true only when
        the user agrees.
        """
        result, ws = await bridge.call(roots, lambda client: client.cleanup(apply=apply))
        return bridge.reply(render_cleanup(result), structured(result, ws))


def _add_read_tools(
    server: "MCPServer[Any]", bridge: Bridge, resolver: "Callable[..., Awaitable[Any]]"
) -> None:
    """queryMemory, getMemory, memoryStats and memoryContext: read-only, closed-world."""
    from mcp.server.mcpserver import Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import Field

    from memd_client.aio import AsyncClient

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]

    def read_only(title: str) -> ToolAnnotations:
        return ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)

    @server.tool(name="queryMemory", title="Search memory", annotations=read_only("Search memory"))
    @cleandoc
    async def query_memory(
        query: Annotated[
            str,
            Field(
                description=(
                    "What the task is about, in plain words, e.g. 'database migrations' or "
                    "'error handling style'. An empty string lists entries."
                )
            ),
        ],
        roots: Roots,
        category: Annotated[
            Category | None, Field(description="Search only this category.")
        ] = None,
        limit: Annotated[
            int, Field(ge=1, le=p.MAX_QUERY_LIMIT, description="Most results to return.")
        ] = p.DEFAULT_QUERY_LIMIT,
    ) -> Annotated[CallToolResult, QueryOut]:
        """Search the project's memory for entries relevant to a task.

        Call it at the start of a task and before answering questions about architecture,
        conventions, style or past decisions. Results are ranked by relevance and show each
        entry's category, slug and score. Follow every Security and Instruction entry it
        returns.
        """
        result, ws = await bridge.call(
            roots, lambda client: client.query(query, category=category, limit=limit)
        )
        return bridge.reply(render_query(result, query), structured(result, ws))

    @server.tool(
        name="getMemory", title="Get a memory by slug", annotations=read_only("Get a memory")
    )
    @cleandoc
    async def get_memory(
        slug: Annotated[str, Field(description="The entry's kebab-case slug, e.g. 'use-tabs'.")],
        roots: Roots,
        category: Annotated[
            Category | None,
            Field(description="The entry's category; leave it out to look in every category."),
        ] = None,
    ) -> Annotated[CallToolResult, EntriesOut]:
        """Fetch the current text of the entries with a given slug.

        Use it when you know a slug (from queryMemory, memoryContext or an instruction file)
        and need that exact entry. Slugs are unique within a category, so without a category
        several entries may come back.
        """

        async def fetch(client: AsyncClient) -> list[p.EntryInfo]:
            if category is not None:
                return (await client.get(category=category, slug=slug)).entries
            found = [e for e in (await client.list()).entries if e.slug == slug]
            if not found:
                raise MemdError(f"No entry [{slug}] in any category; queryMemory shows the slugs.")
            return found

        entries, ws = await bridge.call(roots, fetch)
        result = p.EntriesResult(entries=entries)
        return bridge.reply(render_entries(entries), structured(result, ws))

    @server.tool(
        name="memoryStats", title="Memory statistics", annotations=read_only("Memory statistics")
    )
    @cleandoc
    async def memory_stats(roots: Roots) -> Annotated[CallToolResult, StatsOut]:
        """Count the entries in each category against its limit, and say which workspace's
        memory this server uses and why.

        Use it to check the setup (is this the right project?) or whether a cleanup is due.
        """
        result, ws = await bridge.call(roots, lambda client: client.stats())
        return bridge.reply(render_stats(result, ws), structured(result, ws))

    @server.tool(
        name="memoryContext",
        title="Memory for this task",
        annotations=read_only("Memory for this task"),
    )
    @cleandoc
    async def memory_context(
        roots: Roots,
        text: Annotated[
            str, Field(description="What the task or prompt is about, in plain words.")
        ] = "",
        file: Annotated[
            str | None,
            Field(description="A file the task is about; the words of its path count too."),
        ] = None,
        budget_tokens: Annotated[
            int,
            Field(
                ge=1, le=100_000, description="The largest block to return, in estimated tokens."
            ),
        ] = p.DEFAULT_CONTEXT_BUDGET,
    ) -> Annotated[CallToolResult, ContextOut]:
        """Get a ready-to-read memory block for a task. It holds every Security and
        Instruction entry first, then the entries most relevant to `text` (and `file`), within
        a token budget.

        Call it once at the start of a task, instead of several queryMemory calls. Always
        follow the Security and Instruction entries in it.
        """
        result, ws = await bridge.call(
            roots, lambda client: client.context(text, file=file, budget_tokens=budget_tokens)
        )
        return bridge.reply(render_context(result), structured(result, ws))
