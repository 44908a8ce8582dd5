"""memd's MCP tools: their names, arguments and output schemas, and the path from a call to the
daemon and back.

Rules:
- The tools keep HackLM Memory's names and argument shapes (`storeMemory`, `queryMemory`), so
  instruction files written for HackLM keep working; the others (`getMemory`, `memoryStats`,
  `cleanupMemory`, `memoryContext`, `deleteMemory`, `memoryCheck`) follow the same style. A
  category is taken in any case, as the CLI takes it (`any_case`).
- The bridge holds no memory state. Each call opens its own `AsyncClient` (with autostart), so
  concurrent calls run in parallel on separate connections.
- Each result is a `CallToolResult`: text for the agent (`memd.mcp_bridge.text`) and structured
  content, which is the daemon's result Struct as builtins plus `workspace` and
  `workspace_source`.
- The wire types are defined once, in `memd_client.protocol`. Each tool's published output
  schema is derived from its result Struct (`output_schema`), never written by hand here.
- Every failure reaches the agent as a `ToolError` with one sentence (then the workspace used,
  when known): a memd error keeps memd's sentence; anything else is logged on stderr with its
  traceback and summed up in one sentence (`guarded`). Never the SDK's bare "Error executing
  tool X". Arguments the input schema rejects are no exception: `CheckedTool` names each one
  in a sentence (`text.bad_arguments`, from pydantic's structured errors), then the workspace.
- `mcp` is an optional extra: it is imported only inside functions. The tools are closures over
  those local imports, and the SDK reads their annotations when it registers them, which is why
  this module does not use `from __future__ import annotations`.

Size: the MCP tool table; `_read_tools` and `_write_tools` each register their tools with the SDK's
decorators, one block per tool, read as a list.
"""

import contextlib
import functools
import inspect
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec, TypeVar, get_args

import msgspec

import memd
from memd.config import ConfigError, LlmSettings, load_config
from memd.core.format.categories import BUILTIN, Categories, Category, custom_categories
from memd.core.format.controls import visible
from memd.fs import project_categories
from memd.mcp_bridge import LogLevel
from memd.mcp_bridge.second_opinion import SecondOpinion, propose, render_opinion
from memd.mcp_bridge.text import (
    bad_arguments,
    failure,
    render_check,
    render_cleanup,
    render_context,
    render_delete,
    render_entries,
    render_history,
    render_query,
    render_stats,
    render_store,
    structured,
    unexpected,
)
from memd.mcp_bridge.workspace import Workspace, WorkspaceSource, pick_workspace, roots_resolver
from memd_client import DEFAULT_MAX_FRAME, MemdError, protocol as p
from memd_client.errors import InvalidParams

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations

    from memd_client.aio import AsyncClient

__all__ = ["Bridge", "build_server", "output_schema"]

logger = logging.getLogger("memd.mcp")
T = TypeVar("T")
P = ParamSpec("P")

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

CATEGORY_HELP = (
    "Instruction: how to behave in this project. Quirk: project-specific weirdness, the "
    "non-obvious stuff. Preference: style, design and naming choices. Decision: architectural "
    "commitments. Security: rules that must never be broken. Procedure: a named workflow and "
    "its steps. Episode: a dated event and its outcome."
)
CONVERSATION_HELP = (
    "Optional: the last few turns of your conversation with the user, as plain text (at most "
    f"{p.MAX_CONVERSATION:,} characters, newest last). memd may ask a model which other "
    "lessons it implies and put them in the review inbox for the person; it is never stored "
    "as a memory."
)
SCOPE_HELP = (
    '"project" (the default): this project\'s memory. "global": the user\'s memory for every '
    'project, for rules that hold wherever they work (e.g. "Use uv, never pip."); queries in '
    "any project find it."
)

# ---------------------------------------------------------------------------- output schemas


def output_schema(result: type[msgspec.Struct], *, omit: Iterable[str] = ()) -> dict[str, Any]:
    """The JSON schema of a tool's structured content: `result`'s schema as msgspec writes it,
    with its definition inlined as the root (MCP wants an object schema there; `$defs` stays
    for nested references), plus `workspace` and `workspace_source`, less the fields in `omit`
    (which the tool drops from its content)."""
    schema = msgspec.json.schema(result)
    defs: dict[str, Any] = dict(schema["$defs"])
    root: dict[str, Any] = defs[result.__name__]
    if f'"{schema["$ref"]}"' not in json.dumps(defs):  # kept only for a recursive Struct
        del defs[result.__name__]
    properties: dict[str, Any] = dict(root["properties"])
    required: list[str] = list(root.get("required", []))
    for name in omit:
        properties.pop(name, None)
        if name in required:
            required.remove(name)
    properties["workspace"] = {
        "type": "string",
        "description": "The project root whose .memory/ this call used.",
    }
    properties["workspace_source"] = {
        "enum": list(get_args(WorkspaceSource)),
        "description": "Why that workspace: --workspace, the client's first root, or the cwd.",
    }
    required += [name for name in ("workspace", "workspace_source") if name not in required]
    extra = {"$defs": defs} if defs else {}
    return {**root, "properties": properties, "required": required, **extra}


# ---------------------------------------------------------------------------- plumbing


MAX_CONTENT_BYTES = DEFAULT_MAX_FRAME // 2
"""The most content, JSON-encoded, that the bridge sends in one store: a longer one would not
fit in one request to memd (its frame cap, 1 MiB by default), whose connection would break."""


def check_content_size(content: str) -> None:
    """Refuse content too long to send, with what one memory may hold.

    Raises:
        InvalidParams: its JSON encoding is over MAX_CONTENT_BYTES.
    """
    size = len(msgspec.json.encode(content))
    if size > MAX_CONTENT_BYTES:
        raise InvalidParams(
            f"Argument `content` is {len(content):,} characters, far more than one memory holds "
            f"(max_entry_chars, 2,000 by default) and more than one request to memd carries "
            f"({DEFAULT_MAX_FRAME // 1024:,} KiB); store the lesson itself, in one sentence."
        )


class Bridge:
    """What every tool call shares: the socket, a fixed workspace if any, and the plumbing
    from a call to the daemon and back."""

    def __init__(
        self,
        socket: str | None,
        workspace: str | None,
        opinions: SecondOpinion | None = None,
    ) -> None:
        self.socket = socket
        self.opinions = opinions or SecondOpinion(LlmSettings(), BUILTIN)
        """The second opinion of the client's own model (`memd.mcp_bridge.second_opinion`)."""
        self.fixed = Workspace(os.path.abspath(workspace), "--workspace") if workspace else None
        self.writer = p.Writer(client="mcp", origin="agent")
        """Who this bridge's writes are recorded as from: the MCP client's `clientInfo` name
        and version from its initialize request, once a tool call shows it (`note_client`)."""

    def note_client(self, ctx: Any) -> None:
        """Take the MCP client's name and version from a call's context (one stdio bridge
        serves one client; a context without them keeps the last known)."""
        params = getattr(getattr(ctx, "session", None), "client_params", None)
        info = getattr(params, "client_info", None)
        name = getattr(info, "name", None)
        if isinstance(name, str) and name.strip():
            version = getattr(info, "version", None)
            self.writer = p.Writer(
                client=name.strip()[:100],
                version=version[:100] if isinstance(version, str) else None,
                origin="agent",
            )

    async def call(
        self,
        roots: "ListRootsResult | None",
        action: "Callable[[AsyncClient], Awaitable[T]]",
    ) -> tuple[T, Workspace]:
        """Run `action` on a fresh client (starting a daemon if none runs) for the call's
        workspace. Any failure becomes a ToolError: one sentence, then the workspace used."""
        from mcp.server.mcpserver.exceptions import ToolError

        ws: Workspace | None = None
        try:
            ws = pick_workspace(self.fixed, roots)
            async with self.client(ws) as client:
                return await action(client), ws
        except MemdError as exc:
            raise ToolError(failure(exc.message, ws)) from None
        except Exception as exc:
            # Chained, so that `guarded` logs the traceback under the tool's name.
            raise ToolError(failure(unexpected(exc), ws)) from exc

    def client(self, ws: Workspace, *, autostart: bool = True) -> "AsyncClient":
        """A fresh client for `ws` (starting a daemon if none runs, unless not `autostart`),
        writing as this bridge."""
        from memd_client.aio import AsyncClient

        return AsyncClient(
            self.socket,
            workspace=ws.path,
            autostart=autostart,
            client_name=self.writer.client,
            client_version=self.writer.version,
            origin=self.writer.origin,
        )

    def proposer(
        self, ws: Workspace, source: p.ProposalSource
    ) -> Callable[[list[p.Proposal]], Awaitable[p.ProposeResult]]:
        """What sends proposals for `ws`'s review inbox, on a fresh client (gap analysis runs
        after its call's reply)."""

        async def send(proposals: list[p.Proposal]) -> p.ProposeResult:
            async with self.client(ws) as client:
                return await propose(client, source, proposals)

        return send

    def reply(self, text: str, data: dict[str, Any]) -> "CallToolResult":
        """Text for the agent plus structured content."""
        from mcp.types import CallToolResult, TextContent

        return CallToolResult(
            content=[TextContent(type="text", text=visible(text))], structured_content=data
        )


def guarded(name: str, fn: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """`fn`, turning every exception into a ToolError with one sentence. An unexpected one is
    logged on stderr with its traceback (the SDK would log it too, but tell the agent only
    "Error executing tool X")."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)  # the SDK reads the signature through __wrapped__
    async def tool(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except ToolError as exc:
            if exc.__cause__ is not None:  # Bridge.call's way of passing on a crash
                logger.error("%s failed unexpectedly", name, exc_info=exc.__cause__)
            raise
        except MemdError as exc:
            raise ToolError(failure(exc.message, None)) from None
        except Exception as exc:
            logger.exception("%s failed unexpectedly", name)
            raise ToolError(failure(unexpected(exc), None)) from None

    return tool


def known_categories(workspace: str | None) -> Categories:
    """The categories the tools' schemas list: the built-ins, memd's config file's and those of
    `workspace`'s (or the cwd's) `.memory/memd.toml` as the bridge starts. A call may still
    name a category another workspace defines: the daemon checks it."""
    configured: tuple[Category, ...] = ()
    with contextlib.suppress(ConfigError, ValueError, OSError):
        configured = custom_categories(load_config(None, {}).categories, BUILTIN)
    root = os.path.abspath(workspace) if workspace else os.getcwd()
    try:
        return project_categories.categories_of(root, configured).categories
    except OSError:
        return BUILTIN.with_custom(configured)


def bridge_settings() -> LlmSettings:
    """The `[llm]` settings of memd's config file as the bridge starts (defaults, sampling
    off, when the file cannot be read: the daemon reports that file's errors)."""
    try:
        return load_config(None, {}).llm
    except (ConfigError, ValueError, OSError):
        return LlmSettings()


def category_help(categories: Categories) -> str:
    """`CATEGORY_HELP`, and the custom categories of `categories`."""
    custom = "; ".join(f"{c.name}: {c.description}" for c in categories.custom)
    return f"{CATEGORY_HELP} This project's own: {custom}" if custom else CATEGORY_HELP


def any_case(categories: Categories) -> Callable[[object], object]:
    """A category name in any case as the category (as the CLI takes it); anything else as
    given, for the daemon to check (a workspace may define categories the schema lists not)."""

    def canonical(value: object) -> object:
        if isinstance(value, str) and (category := categories.get(value.strip())) is not None:
            return category.name
        return value

    return canonical


def category_schema(categories: Categories) -> dict[str, Any]:
    """The JSON schema of a tool's category argument: a string, one of `categories`' names
    (in any case: `any_case`)."""
    return {"type": "string", "enum": list(categories.names)}


@functools.cache
def _checked_tool() -> "type[Tool]":
    """The SDK's `Tool`, whose argument errors are one sentence per argument, then the
    workspace the call would have used (`bad_arguments`), not pydantic's dump.

    `Tool.run` validates the arguments before resolving anything; this runs the same
    validation first and, when it fails, resolves the tool's `Resolve` parameters (the
    client's roots) to name the workspace, as the SDK would for the call itself."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.resolve import resolve_arguments
    from mcp.server.mcpserver.tools import Tool
    from mcp_types import InputRequiredResult
    from pydantic import Field, ValidationError

    class CheckedTool(Tool):
        fixed: Any = Field(default=None, exclude=True)  # the Bridge's --workspace, if any

        async def run(
            self, arguments: dict[str, Any], context: Any, convert_result: bool = False
        ) -> Any:
            try:
                self.fn_metadata.validate_arguments(arguments)
            except ValidationError as exc:
                roots = await resolve_arguments(
                    self.resolved_params, self.resolver_plans, {}, context
                )
                if isinstance(roots, InputRequiredResult):  # 2026-07-28: ask, then answer
                    return self.fn_metadata.convert_result(roots) if convert_result else roots
                try:
                    ws: Workspace | None = pick_workspace(self.fixed, roots.get("roots"))
                except MemdError:
                    ws = None
                sentence = failure(bad_arguments(self.name, exc.errors()), ws)
                # Caused by the ValidationError, so the SDK logs the field names only.
                raise ToolError(f"Error executing tool {self.name}: {sentence}") from exc
            return await super().run(arguments, context, convert_result)

    return CheckedTool


def make_tool(
    fn: Callable[..., Awaitable["CallToolResult"]],
    *,
    bridge: Bridge,
    name: str,
    annotations: "ToolAnnotations",
    result: type[msgspec.Struct],
    omit: Iterable[str] = (),
) -> "Tool":
    """The tool `name` for `MCPServer(tools=...)`: `fn` (`guarded`), described by its dedented
    docstring, publishing `output_schema(result)`.

    `Tool.from_function` is what `@server.tool` runs. The SDK derives an output schema only
    from a return annotation, and these tools return a ready `CallToolResult`, so the schema is
    set on the tool's `FuncMetadata`, whose fields the SDK reads live. A schema set without an
    output model is published in `tools/list` but not checked by the server; the SDK's client
    checks results against it.
    """
    tool = _checked_tool().from_function(
        guarded(name, fn),
        name=name,
        title=annotations.title,
        description=inspect.cleandoc(fn.__doc__ or ""),
        annotations=annotations,
    )
    tool.fixed = bridge.fixed  # type: ignore[attr-defined]  # a CheckedTool
    tool.fn_metadata.output_schema = output_schema(result, omit=omit)
    return tool


def build_server(
    *, socket: str | None, workspace: str | None, log_level: LogLevel = "WARNING"
) -> "MCPServer[Any]":
    """Return the MCP server with memd's tools, resources (`resources`, their feed running in
    the server's lifespan) and prompts (`prompts`); `socket` and `workspace` are the CLI's
    flags."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.subscriptions import InMemorySubscriptionBus

    from memd.mcp_bridge.procedure_tools import procedure_tools  # it imports this module
    from memd.mcp_bridge.prompts import register_prompts
    from memd.mcp_bridge.resources import ResourceFeed
    from memd.mcp_bridge.review_tools import review_tools  # it imports this module
    from memd.mcp_bridge.session_tools import session_tools  # it imports this module
    from memd.mcp_bridge.undo_tools import undo_tools  # it imports this module

    categories = known_categories(workspace)
    bridge = Bridge(socket, workspace, SecondOpinion(bridge_settings(), categories))
    resolver = roots_resolver(bridge.fixed, bridge.note_client)
    bus = InMemorySubscriptionBus()
    feed = ResourceFeed(bridge, resolver, bus.publish)

    @contextlib.asynccontextmanager
    async def lifespan(_server: object) -> AsyncIterator[dict[str, Any]]:
        async with bridge.opinions.gap.running_in_task_group() as state, feed.running():
            yield state

    server = MCPServer(
        "memd",
        title="memd project memory",
        version=memd.__version__,
        instructions=INSTRUCTIONS,
        log_level=log_level,
        lifespan=lifespan,
        subscriptions=bus,
        tools=[
            *_write_tools(bridge, resolver, categories),
            *_read_tools(bridge, resolver, categories),
            *procedure_tools(bridge, resolver),
            *review_tools(bridge, resolver),
            *session_tools(bridge, resolver),
            *undo_tools(bridge, resolver),
        ],
    )
    feed.install(server)
    register_prompts(server)
    return server


# ---------------------------------------------------------------------------- the tools


def _write_tools(
    bridge: Bridge, resolver: Callable[..., Awaitable[Any]], categories: Categories
) -> list["Tool"]:
    """storeMemory, storeEpisode, cleanupMemory and deleteMemory. (Long: one decorated block
    per tool, read as a list.)"""
    from mcp.server.mcpserver import Context, Resolve
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import BeforeValidator, Field, WithJsonSchema

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]
    AnyCase = Annotated[
        str, BeforeValidator(any_case(categories)), WithJsonSchema(category_schema(categories))
    ]
    ScopeArg = Annotated[Literal["project", "global"], Field(description=SCOPE_HELP)]

    async def store_memory(
        category: Annotated[AnyCase, Field(description=category_help(categories))],
        content: Annotated[
            str,
            Field(
                description=(
                    "One short, self-contained sentence on one line (at most 2,000 characters "
                    "by default), "
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
        scope: ScopeArg = "project",
        conversation: Annotated[
            str | None, Field(max_length=p.MAX_CONVERSATION, description=CONVERSATION_HELP)
        ] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> CallToolResult:
        """Save one durable lesson to the project's memory (.memory/<category>.md), shared
        with every agent working on this project (or, with scope "global", to the user's
        memory for every project).

        Call it when the user states a preference or rule (store it before acting), when the
        user corrects you, when a build or command failed and you found the cause and fix, and
        after a task for each new decision or convention it introduced. Write one sentence per
        call. Pass a slug to update that entry later: same slug = update, not duplicate. A new
        slug always makes its own entry (if another entry says the same or contradicts it, the
        result names it, a contradiction as a conflict, and both are kept). Without a slug, a
        text that says nothing new is skipped; the same rule with more detail, or with a new
        value, tool or polarity, updates its entry (a contradiction is reported as a conflict
        naming the old value); anything else is stored as a new entry. The result says which
        and why. A store of text telling agents to run something, or into a category the
        project reviews, waits for the person's review ("pending"): tell them `memd review`.
        """

        async def store(client: "AsyncClient") -> p.StoreResult:
            check_content_size(content)
            params = p.StoreParams(
                workspace="", category=category, content=content, slug=slug, scope=scope
            )
            return await bridge.opinions.store(client, params, ctx, conversation)

        result, ws = await bridge.call(roots, store)
        data = structured(result, ws)
        data.pop("dry_run", None)
        said = " ".join(filter(None, [render_store(result, ws, scope), render_opinion(result.llm)]))
        reply = bridge.reply(said, data)
        bridge.opinions.after_store(ctx, result, conversation, bridge.proposer(ws, "gap"))
        return reply

    async def store_episode(
        text: Annotated[
            str,
            Field(
                description=(
                    "What happened and what fixed it, one sentence, e.g. 'Migration 0042 timed "
                    "out on the prod replica; batching the backfill fixed it.'"
                )
            ),
        ],
        roots: Roots,
        outcome: Annotated[
            str | None,
            Field(description="How it ended, one word: 'fixed', 'failed', 'worked-around'."),
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description="Inline #tags to add, e.g. ['db'].")
        ] = None,
        scope: ScopeArg = "project",
    ) -> CallToolResult:
        """Record an episode: a dated event and its outcome, in the project's episodes.md
        (dated today). Episodes rank lower as they age, and cleanup turns three similar ones
        into a Quirk.

        Call it after something notable happened (an outage, a failed deploy, a long debugging
        session) to say what happened and how it ended. Each call is its own episode: one is
        never skipped as a repeat of another day's.
        """

        async def store(client: "AsyncClient") -> p.StoreResult:
            check_content_size(text)
            return await client.episode(text, outcome=outcome, tags=tags, scope=scope)

        result, ws = await bridge.call(roots, store)
        data = structured(result, ws)
        data.pop("dry_run", None)
        return bridge.reply(render_store(result, ws, scope), data)

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
        scope: ScopeArg = "project",
    ) -> CallToolResult:
        """Plan or carry out a cleanup of the project's memory. It merges entries that say
        nothing another entry does not (repeats and shorter forms; each merge says why), prunes
        categories over their limit (weakest entries first; on a tie the older entry goes and
        the newer stays) and gives a slug to every entry without one.

        Call it without apply first and show the plan to the user. Pass apply: true only when
        the user agrees.
        """
        result, ws = await bridge.call(
            roots, lambda client: client.cleanup(apply=apply, scope=scope)
        )
        return bridge.reply(render_cleanup(result), structured(result, ws))

    async def delete_memory(
        category: Annotated[AnyCase, Field(description="The entry's category.")],
        slug: Annotated[str, Field(description="The entry's kebab-case slug, e.g. 'use-tabs'.")],
        roots: Roots,
        scope: ScopeArg = "project",
    ) -> CallToolResult:
        """Delete one entry from the project's memory by category and slug (with scope
        "global", from the user's memory for every project: a [user-wide] hit). It is moved to
        the archive (.memory/archive.md), not lost.

        Call it to retract a memory that is wrong or no longer holds (find its slug with
        queryMemory or getMemory). To change an entry's text, store it again with its slug
        instead.
        """
        result, ws = await bridge.call(
            roots, lambda client: client.delete(category=category, slug=slug, scope=scope)
        )
        if not result.deleted:
            raise ToolError(failure(result.message, ws))
        return bridge.reply(render_delete(result), structured(result, ws))

    return [
        make_tool(
            store_memory,
            bridge=bridge,
            name="storeMemory",
            annotations=ToolAnnotations(
                title="Store a memory",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            result=p.StoreResult,
            omit=("dry_run",),
        ),
        make_tool(
            store_episode,
            bridge=bridge,
            name="storeEpisode",
            annotations=ToolAnnotations(
                title="Record an episode",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=False,
            ),
            result=p.StoreResult,
            omit=("dry_run",),
        ),
        make_tool(
            cleanup_memory,
            bridge=bridge,
            name="cleanupMemory",
            annotations=ToolAnnotations(
                title="Clean up memory",
                read_only_hint=False,
                destructive_hint=True,
                open_world_hint=False,
            ),
            result=p.CleanupResult,
        ),
        make_tool(
            delete_memory,
            bridge=bridge,
            name="deleteMemory",
            annotations=ToolAnnotations(
                title="Delete a memory",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            result=p.DeleteResult,
        ),
    ]


_QUERY_SOURCES = (
    "Where to search (default: memory, global and file): 'memory' (the project's .memory/), "
    "'global' (the user's memory for every project), 'file' (the project's instruction files: "
    "CLAUDE.md, AGENTS.md, rules files, MEMORY.md), 'chat' (past sessions of coding agents in "
    "this project: what was said, not curated rules; only when named; each hit is an excerpt, "
    "getMemory with its file and lines reads the turns)."
)
_QUERY_FILE = (
    "A file the task is about (relative to the project): entries scoped to it with "
    "(paths: ...) come first, entries scoped to other files are left out."
)

_QUERY_ARCHIVED = (
    "Also search the entries memd archived (.memory/archive.md: deleted, merged, pruned, old "
    "episodes); their hits say [archived] with when and why. Default false."
)


def _read_tools(
    bridge: Bridge, resolver: Callable[..., Awaitable[Any]], categories: Categories
) -> list["Tool"]:
    """queryMemory, getMemory, memoryStats, memoryContext and memoryCheck: read-only,
    closed-world.
    (Long: one decorated block per tool, read as a list.)"""
    from mcp.server.mcpserver import Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import BeforeValidator, Field, WithJsonSchema

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]
    AnyCase = Annotated[
        str, BeforeValidator(any_case(categories)), WithJsonSchema(category_schema(categories))
    ]
    ScopeArg = Annotated[Literal["project", "global"], Field(description=SCOPE_HELP)]

    def read_only(title: str) -> ToolAnnotations:
        return ToolAnnotations(title=title, read_only_hint=True, open_world_hint=False)

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
        category: Annotated[AnyCase | None, Field(description="Search only this category.")] = None,
        limit: Annotated[
            int,
            Field(
                description=(
                    f"Most results to return, up to {p.MAX_QUERY_LIMIT}: a larger number counts "
                    f"as {p.MAX_QUERY_LIMIT}, and one below 1 as 1."
                )
            ),
        ] = p.DEFAULT_QUERY_LIMIT,
        tags: Annotated[
            list[str] | None,
            Field(
                description=(
                    "Only entries carrying every one of these inline #tags, e.g. ['security'] "
                    "or ['#db', 'migrations']; with an empty query, lists those entries."
                )
            ),
        ] = None,
        sources: Annotated[
            list[Literal["memory", "global", "file", "chat"]] | None,
            Field(description=_QUERY_SOURCES),
        ] = None,
        file: Annotated[str | None, Field(description=_QUERY_FILE)] = None,
        include_archived: Annotated[bool, Field(description=_QUERY_ARCHIVED)] = False,
    ) -> CallToolResult:
        """Search the project's memory for entries relevant to a task.

        Call it at the start of a task and before answering questions about architecture,
        conventions, style or past decisions. Results are ranked by relevance and show each
        entry's category, slug and score. Follow every Security and Instruction entry it
        returns. Entries can carry inline #tags (e.g. "#db"); pass tags to search only those.
        It also searches the user's memory for every project (marked [user-wide]) and the
        project's instruction files (shown as [path:lines]).
        """
        clamped = min(max(limit, 1), p.MAX_QUERY_LIMIT)  # HackLM caps at 20 and never rejects
        result, ws = await bridge.call(
            roots,
            lambda client: client.query(
                query,
                category=category,
                limit=clamped,
                tags=tags,
                sources=sources,
                file=file,
                include_archived=include_archived,
            ),
        )
        return bridge.reply(render_query(result, query, tags), structured(result, ws))

    async def get_memory(
        roots: Roots,
        slug: Annotated[
            str | None, Field(description="The entry's kebab-case slug, e.g. 'use-tabs'.")
        ] = None,
        category: Annotated[
            AnyCase | None,
            Field(description="The entry's category; leave it out to look in every category."),
        ] = None,
        file: Annotated[
            str | None,
            Field(
                description="Instead of a slug: a hit's path (a source file, or a 'chat' hit's "
                "session transcript), with lines."
            ),
        ] = None,
        lines: Annotated[
            str | None, Field(description="With file: the hit's lines 'a-b' (a chat hit's turns).")
        ] = None,
        around: Annotated[
            int,
            Field(description="For a chat hit: this many turns before and after too.", ge=0, le=50),
        ] = 2,
    ) -> CallToolResult:
        """Fetch the current text of the entries with a given slug, or a hit's text by its file
        and lines (a past session's turns around a 'chat' hit).

        Use it when you know a slug (from queryMemory, memoryContext or an instruction file)
        and need that exact entry. Slugs are unique within a category, so without a category
        several entries may come back.
        """
        if slug is None:  # the daemon says what is missing
            got, where = await bridge.call(
                roots, lambda client: client.get(file=file, lines=lines, around=around)
            )
            if got.text:
                return bridge.reply(got.text, structured(got, where))
            return bridge.reply(render_entries(got.entries, got.unreadable), structured(got, where))
        result, ws = await bridge.call(
            roots, lambda client: client.get(slug=slug, category=category)
        )
        return bridge.reply(
            render_entries(result.entries, result.unreadable), structured(result, ws)
        )

    async def memory_history(
        roots: Roots,
        slug: Annotated[
            str | None, Field(description="The entry's kebab-case slug, e.g. 'use-tabs'.")
        ] = None,
        text: Annotated[
            str | None, Field(description="For an entry without a slug: its exact text.")
        ] = None,
        scope: ScopeArg = "project",
    ) -> CallToolResult:
        """Show who wrote each version of a memory, when, and what it replaced.

        Give a slug (or, for an entry without one, its exact text). Each version names the
        client (an agent's MCP client, the memd CLI, a hand edit, git) and its origin (user,
        agent, extracted, merged); archive lines that name the entry follow.
        """
        result, ws = await bridge.call(
            roots, lambda client: client.history(slug=slug, text=text, scope=scope)
        )
        return bridge.reply(render_history(result), structured(result, ws))

    async def memory_stats(
        roots: Roots,
        scope: ScopeArg = "project",
    ) -> CallToolResult:
        """Count the entries in each category against its limit, and say which workspace's
        memory this server uses and why (and the project's instruction files searched).

        Use it to check the setup (is this the right project?) or whether a cleanup is due.
        """
        result, ws = await bridge.call(roots, lambda client: client.stats(scope=scope))
        return bridge.reply(render_stats(result, ws), structured(result, ws))

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
    ) -> CallToolResult:
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

    async def memory_check(
        roots: Roots,
        category: Annotated[AnyCase | None, Field(description="Check only this category.")] = None,
    ) -> CallToolResult:
        """Check the project's memories against the code they cite (file paths, functions,
        make/npm scripts): lists each stale one (a cited file renamed or deleted, a function or
        script gone) with what is wrong and the fix it suggests.

        Use it before relying on a memory that names code, or when asked to tidy the memory.
        """
        result, ws = await bridge.call(roots, lambda client: client.check(category=category))
        return bridge.reply(render_check(result), structured(result, ws))

    return [
        make_tool(
            query_memory,
            bridge=bridge,
            name="queryMemory",
            annotations=read_only("Search memory"),
            result=p.QueryResult,
        ),
        make_tool(
            get_memory,
            bridge=bridge,
            name="getMemory",
            annotations=read_only("Get a memory by slug"),
            result=p.EntriesResult,
        ),
        make_tool(
            memory_history,
            bridge=bridge,
            name="memoryHistory",
            annotations=read_only("Who wrote a memory"),
            result=p.HistoryResult,
        ),
        make_tool(
            memory_stats,
            bridge=bridge,
            name="memoryStats",
            annotations=read_only("Memory statistics"),
            result=p.StatsResult,
        ),
        make_tool(
            memory_context,
            bridge=bridge,
            name="memoryContext",
            annotations=read_only("Memory for this task"),
            result=p.ContextResult,
        ),
        make_tool(
            memory_check,
            bridge=bridge,
            name="memoryCheck",
            annotations=read_only("Check memories against the code"),
            result=p.CheckResult,
        ),
    ]
