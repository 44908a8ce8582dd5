"""memd's MCP tools for undo (issue 34): `undoWrite` takes back the project's newest write
operation (or every one since a time), `restoreMemory` brings an archived entry back; and the
text both the tools and the CLI (`memd undo`, `memd restore`) show. They follow
`memd.mcp_bridge.tools`' rules (one fresh client a call, a `CallToolResult` of text and the
result Struct, one-sentence errors) and, like it, do not use `from __future__ import
annotations`: the SDK reads the tools' annotations when it registers them. An agent undoes
only what the person asked for: the tool's description says so.
"""

import datetime
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from memd.mcp_bridge.printable import printable
from memd.mcp_bridge.text import structured
from memd.mcp_bridge.tools import Bridge, make_tool
from memd_client import protocol as p

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools import Tool


def render_undo(result: p.UndoResult) -> str:
    """The result's message, then one line a change: its outcome, the operation (when, what,
    category, slug) and what it said, with the reason of a refusal or an unchanged one."""
    lines = [result.message]
    verb = {"reverted": "would revert" if result.dry_run else "reverted"}
    for change in result.changes:
        when = datetime.datetime.fromtimestamp(change.at).strftime("%Y-%m-%d %H:%M:%S")
        name = f"[{change.slug}] " if change.slug else ""
        said = change.text if change.text is not None else f"(removed) {change.replaced}"
        outcome = verb.get(change.outcome, change.outcome)
        lines.append(
            f"{outcome:<13} #{change.operation} {when} {change.action} {change.category} "
            f"{name}{said}"
        )
        if change.reason:
            lines.append(f"    {change.reason}")
        if change.now_slug:
            lines.append(f"    back as [{change.now_slug}]")
    return printable("\n".join(lines))


def render_restore(result: p.RestoreResult) -> str:
    """What a restore did, and the entry."""
    name = f"[{result.slug}] " if result.slug else ""
    return printable(f"{result.message}\n{result.category}: {name}{result.content}")


def undo_tools(bridge: Bridge, resolver: Callable[..., Awaitable[Any]]) -> list["Tool"]:
    """undoWrite and restoreMemory. (Long: one decorated block per tool, read as a list.)"""
    from mcp.server.mcpserver import Resolve
    from mcp.types import CallToolResult, ListRootsResult, ToolAnnotations
    from pydantic import Field

    Roots = Annotated[ListRootsResult | None, Resolve(resolver)]

    async def undo_write(
        roots: Roots,
        to: Annotated[
            str | None,
            Field(
                description="Undo every write since this time: an age ('10m', '2h', '1d') or "
                "an ISO time ('2026-11-20T14:05', local). Leave out to undo the newest write."
            ),
        ] = None,
        dry_run: Annotated[bool, Field(description="Only show what it would take back.")] = False,
    ) -> CallToolResult:
        """Take back the project's newest memory write (a store, update, delete, cleanup,
        hand edit or git merge), or every write since a time, when the person asks for it.

        It goes through memd's normal writes: an added entry goes to the archive, an updated
        one gets its old text back, a deleted one comes back. A line that changed since is
        refused, never overwritten; each change's outcome is in the result. Call it again to
        undo the next older write.
        """
        result, ws = await bridge.call(roots, lambda client: client.undo(to=to, dry_run=dry_run))
        return bridge.reply(render_undo(result), structured(result, ws))

    async def restore_memory(
        roots: Roots,
        slug: Annotated[
            str | None, Field(description="The archived entry's slug, e.g. 'use-tabs'.")
        ] = None,
        text: Annotated[
            str | None, Field(description="For an entry without a slug: its exact text.")
        ] = None,
    ) -> CallToolResult:
        """Bring an archived memory (.memory/archive.md) back, word for word under its slug.

        Refused when the slug now holds another text; a text the project reviews waits in the
        review inbox instead.
        """
        result, ws = await bridge.call(roots, lambda client: client.restore(slug=slug, text=text))
        return bridge.reply(render_restore(result), structured(result, ws))

    return [
        make_tool(
            undo_write,
            bridge=bridge,
            name="undoWrite",
            annotations=ToolAnnotations(
                title="Undo the newest memory write",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=False,
                open_world_hint=False,
            ),
            result=p.UndoResult,
            omit=("dry_run",),
        ),
        make_tool(
            restore_memory,
            bridge=bridge,
            name="restoreMemory",
            annotations=ToolAnnotations(
                title="Restore an archived memory",
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            result=p.RestoreResult,
            omit=("dry_run",),
        ),
    ]
