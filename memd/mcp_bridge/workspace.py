"""Which workspace a tool call uses, and where that choice came from.

Rules:
- In this order: `--workspace DIR`; the MCP client's first `file://` root, if the client
  declares the roots capability; the current directory's project root (the nearest ancestor
  holding `.memory/` or `.git`, as for the CLI).
- Roots are deprecated in the 2026-07-28 spec but still served. On a handshake-era connection
  the bridge asks for them itself, with a timeout, and any failure falls back to the current
  directory. On a 2026-07-28 connection the SDK's `ListRoots` resolver asks through the
  multi-round-trip flow.
- With `--workspace`, the client's roots are never asked for.
- Every error, and `memoryStats`, says which workspace was used and why
  (`Workspace.describe`); so does a store that used the current directory's project root or
  created `.memory/` (`text.render_store`). The current directory's root also says how it was
  found (by `.git`, or for want of `.memory/` and `.git`), as the CLI says it.
- `mcp` is an optional extra: it is imported only inside `roots_resolver`. The SDK reads the
  resolver's annotations (to find its `Context` parameter) when a tool is registered, so they
  must be real objects: this module does not use `from __future__ import annotations`.
"""

import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

import msgspec

from memd.mcp_bridge.printable import printable
from memd_client import MemdError, find_workspace_with_reason
from memd_client._paths import WorkspaceFoundBy

if TYPE_CHECKING:
    from mcp.types import ListRootsResult

__all__ = [
    "Workspace",
    "WorkspaceSource",
    "cwd_workspace",
    "pick_workspace",
    "roots_resolver",
    "workspace_from_roots",
]

logger = logging.getLogger("memd.mcp")

ROOTS_TIMEOUT = 5.0
"""Seconds to wait for a handshake-era client to answer `roots/list` before using the cwd."""
MODERN_PROTOCOL = "2026-07-28"
"""From this protocol version on, server-to-client requests ride the multi-round-trip flow."""

WorkspaceSource = Literal["--workspace", "client root", "current directory"]

_SOURCE_PHRASES: dict[WorkspaceSource, str] = {
    "--workspace": "from --workspace",
    "client root": "from the client's first root",
    "current directory": "from the current directory",
}


_FOUND_PHRASES: dict[WorkspaceFoundBy, str] = {
    "memory": "",
    "git": ", found by its .git",
    "start": ", with no .memory/ or .git in it or above it",
}


class Workspace(msgspec.Struct, frozen=True):
    """The workspace a call uses, where it came from and, from the current directory, how it
    was found."""

    path: str
    source: WorkspaceSource
    found_by: WorkspaceFoundBy = "memory"

    def describe(self) -> str:
        """For example "workspace /home/me/proj (from --workspace)" or "workspace /srv/app
        (from the current directory, found by its .git)"."""
        how = _FOUND_PHRASES[self.found_by] if self.source == "current directory" else ""
        return f"workspace {printable(self.path)} ({_SOURCE_PHRASES[self.source]}{how})"


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
        found = find_workspace_with_reason()
        return Workspace(found.path, "current directory", found.found_by)
    except OSError as exc:  # the cwd was deleted under us
        raise MemdError(
            f"The current directory cannot be read ({exc.strerror or exc}); start `memd mcp` "
            "with --workspace DIR."
        ) from None


def pick_workspace(fixed: Workspace | None, roots: "ListRootsResult | None") -> Workspace:
    """--workspace, else the client's first file:// root, else the cwd's project root."""
    if fixed is not None:
        return fixed
    if roots is not None:
        path = workspace_from_roots(str(root.uri) for root in roots.roots)
        if path is not None:
            return Workspace(path, "client root")
    return cwd_workspace()


def roots_resolver(
    fixed: Workspace | None, on_context: Callable[[Any], None] | None = None
) -> Callable[..., Awaitable[Any]]:
    """The resolver that fills each tool's hidden `roots` parameter (None with --workspace);
    it first shows each call's context to `on_context` (the bridge reads the client's name)."""
    from mcp.server.mcpserver import Context, ListRoots
    from mcp.shared.message import ServerMessageMetadata
    from mcp.types import ListRootsRequest, ListRootsResult
    from mcp_types.version import is_version_at_least

    async def client_roots(ctx: Context[Any, Any]) -> ListRoots | ListRootsResult | None:
        """The client's roots, when they matter (no --workspace) and the client has them."""
        if on_context is not None:
            on_context(ctx)
        if fixed is not None:
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
