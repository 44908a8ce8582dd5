"""memd's MCP tool for a session review (issue 34): `reviewSession` takes a transcript excerpt
and puts the memories it implies into the review inbox, each first run through the write
decision as a dry run (the daemon's `propose`). It asks the MCP client's own model when the
bridge may (`[llm] sampling = true` and a client that offers sampling), else the daemon's
model (`reflect`, `llm_command`), whose error says when it has none. It follows
`memd.mcp_bridge.tools`' rules and, like it, does not use `from __future__ import annotations`.
"""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from memd.mcp_bridge.second_opinion import render_session_review
from memd.mcp_bridge.text import structured
from memd.mcp_bridge.tools import Bridge, make_tool
from memd_client import protocol as p

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools import Tool

    from memd_client.aio import AsyncClient


def session_tools(bridge: Bridge, resolver: Callable[..., Awaitable[Any]]) -> list["Tool"]:
    """reviewSession."""
    from mcp.server.mcpserver import Context, Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import Field

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]

    async def review_session(
        transcript: Annotated[
            str,
            Field(
                min_length=1,
                max_length=p.MAX_TRANSCRIPT,
                description=(
                    "The session's transcript, or its part worth reviewing, as plain text "
                    f"(at most {p.MAX_TRANSCRIPT:,} characters; the newest part counts most)."
                ),
            ),
        ],
        roots: Roots,
        ctx: Context[Any, Any] | None = None,
    ) -> CallToolResult:
        """Review this session for lessons worth keeping: a model reads the transcript and
        proposes memories that the project's memory lacks. They go to the review inbox, not
        into memory: nothing is stored until the person accepts it.

        Call it at the end of a session when the user asks to review it or to remember what
        was learned. Then show the person what was queued (reviewInbox) or tell them to run
        `memd review`.
        """
        model = bridge.opinions.model(ctx)

        async def review(client: "AsyncClient") -> p.ReflectResult:
            if model is not None:
                return await bridge.opinions.session_review(client, model, transcript)
            return await client.reflect(transcript)

        result, ws = await bridge.call(roots, review)
        return bridge.reply(render_session_review(result), structured(result, ws))

    return [
        make_tool(
            review_session,
            bridge=bridge,
            name="reviewSession",
            annotations=ToolAnnotations(
                title="Review this session for memories",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=False,
            ),
            result=p.ReflectResult,
        ),
    ]
