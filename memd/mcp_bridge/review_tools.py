"""memd's MCP tools for the review inbox (issue 34): `reviewInbox` lists what waits for a
person's review, `resolveInboxEntry` accepts (optionally with the person's edited text) or
rejects one. They follow `memd.mcp_bridge.tools`' rules (one fresh client a call, a
`CallToolResult` of text and the result Struct, one-sentence errors) and, like it, do not use
`from __future__ import annotations`: the SDK reads the tools' annotations when it registers
them. An agent resolves an entry only on the person's word: the tool's description says so.
"""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from memd.mcp_bridge.printable import printable
from memd.mcp_bridge.text import name_tools, structured
from memd.mcp_bridge.tools import Bridge, make_tool
from memd_client import protocol as p

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools import Tool


def render_inbox(result: p.InboxResult) -> str:
    """One line per waiting entry: its id, what accepting does, why it waits, its text."""
    if not result.entries:
        return "The review inbox is empty."
    lines = [f"{len(result.entries)} waiting for review in {result.file}:"]
    for entry in result.entries:
        target = f"{entry.category}/{entry.slug}" if entry.slug else entry.category
        verb = "delete from" if entry.kind == "prune" else "store into"
        lines.append(f"- {entry.id}: {verb} {target} ({entry.reason}): {entry.content}")
    return printable("\n".join(lines))


def review_tools(bridge: Bridge, resolver: Callable[..., Awaitable[Any]]) -> list["Tool"]:
    """reviewInbox and resolveInboxEntry. (Long: one decorated block per tool, read as a
    list.)"""
    from mcp.server.mcpserver import Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import Field

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]

    async def review_inbox(roots: Roots) -> CallToolResult:
        """List the memories waiting for the person's review (.memory/inbox.md): agent stores
        into the categories the project reviews, and any store with instruction-like text, wait
        there instead of becoming memories. Show them to the person when they ask what is pending.
        """
        result, ws = await bridge.call(roots, lambda client: client.inbox())
        return bridge.reply(render_inbox(result), structured(result, ws))

    async def resolve_inbox_entry(
        id: Annotated[
            str, Field(description="The entry's id from reviewInbox, e.g. 'p-1a2b3c4d'.")
        ],
        action: Annotated[
            Literal["accept", "reject"],
            Field(description="'accept' stores it as the person's memory; 'reject' archives it."),
        ],
        roots: Roots,
        content: Annotated[
            str | None,
            Field(description="With accept: the person's edited text, stored instead."),
        ] = None,
        reason: Annotated[
            str | None, Field(description="With reject: why, in the person's words.")
        ] = None,
    ) -> CallToolResult:
        """Accept or reject one entry of the review inbox, exactly as the person decided.

        Call it only after showing the person the entry and getting their answer: never accept
        on your own judgement. Accepting stores it as a memory; rejecting moves it to the
        archive.
        """
        result, ws = await bridge.call(
            roots,
            lambda client: client.resolve(id, action, content=content, reason=reason),
        )
        return bridge.reply(printable(name_tools(result.message)), structured(result, ws))

    return [
        make_tool(
            review_inbox,
            bridge=bridge,
            name="reviewInbox",
            annotations=ToolAnnotations(
                title="List the review inbox",
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            result=p.InboxResult,
        ),
        make_tool(
            resolve_inbox_entry,
            bridge=bridge,
            name="resolveInboxEntry",
            annotations=ToolAnnotations(
                title="Accept or reject a review inbox entry",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=False,
                open_world_hint=False,
            ),
            result=p.ResolveResult,
        ),
    ]
