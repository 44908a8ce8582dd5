"""memd's MCP tools for procedures (issue 33): `storeProcedure` stores a named workflow and its
steps, `recordOutcome` records whether one worked. They follow `memd.mcp_bridge.tools`' rules
(one fresh client a call, a `CallToolResult` of text and the result Struct, one-sentence
errors), and, like that module, do not use `from __future__ import annotations`: the SDK reads
the tools' annotations when it registers them.
"""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from memd.mcp_bridge.printable import printable
from memd.mcp_bridge.text import render_store, structured
from memd.mcp_bridge.tools import Bridge, make_tool
from memd_client import protocol as p

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools import Tool

    from memd_client.aio import AsyncClient


def procedure_tools(bridge: Bridge, resolver: Callable[..., Awaitable[Any]]) -> list["Tool"]:
    """storeProcedure and recordOutcome. (Long: one decorated block per tool, read as a
    list.)"""
    from mcp.server.mcpserver import Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import Field

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]

    async def store_procedure(
        name: Annotated[
            str,
            Field(description="What the procedure does, e.g. 'Deploy to staging' (no ': ')."),
        ],
        steps: Annotated[
            list[str],
            Field(
                description=(
                    "Its steps in order, each a short imperative without '; ', e.g. "
                    "['build the image', 'push it', 'run the migration job']."
                ),
                min_length=1,
            ),
        ],
        roots: Roots,
        slug: Annotated[
            str | None,
            Field(
                description=(
                    "Optional kebab-case id; default: the slug of the procedure with the same "
                    "name (which is then updated), else one derived from the name."
                )
            ),
        ] = None,
    ) -> CallToolResult:
        """Save a workflow that worked, as a named procedure with its steps
        (.memory/procedures.md: `- [slug] Name: step; step; step.`), shared with every agent
        on this project. memoryContext offers the procedures that match a task, those that
        worked first.

        Call it after you completed a multi-step task that others will repeat (a deploy, a
        release, a migration, a local setup). Storing the same name again updates it. After
        following a stored procedure, call recordOutcome with its slug.
        """

        async def store(client: "AsyncClient") -> p.StoreResult:
            return await client.procedure(name, steps, slug=slug)

        result, ws = await bridge.call(roots, store)
        data = structured(result, ws)
        data.pop("dry_run", None)
        return bridge.reply(render_store(result, ws), data)

    async def record_outcome(
        slug: Annotated[str, Field(description="The procedure's slug, e.g. 'deploy-staging'.")],
        outcome: Annotated[
            Literal["success", "failure"],
            Field(description="'success' if following it worked, else 'failure'."),
        ],
        roots: Roots,
    ) -> CallToolResult:
        """Record that a stored procedure worked or failed when you followed it. Procedures
        that worked are offered first; failing ones sink. The counts are kept beside the
        memory (never in .memory/), and show in queryMemory and memoryContext results.
        """
        result, ws = await bridge.call(roots, lambda client: client.outcome(slug, outcome))
        return bridge.reply(printable(result.message), structured(result, ws))

    return [
        make_tool(
            store_procedure,
            bridge=bridge,
            name="storeProcedure",
            annotations=ToolAnnotations(
                title="Store a procedure",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            result=p.StoreResult,
            omit=("dry_run",),
        ),
        make_tool(
            record_outcome,
            bridge=bridge,
            name="recordOutcome",
            annotations=ToolAnnotations(
                title="Record a procedure's outcome",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=False,
            ),
            result=p.OutcomeResult,
        ),
    ]
