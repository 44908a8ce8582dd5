"""`memd mcp`: an MCP server on stdio that forwards every tool call to the memd daemon.

The package:
- this module: `run_mcp` (the CLI's entry point) and logging;
- `missing_sdk`: what `memd mcp` says, to stderr and to the MCP client, when the `mcp` extra is
  missing;
- `workspace`: which workspace a call uses (`--workspace`, the client's first root, the cwd);
- `tools`: the tools, their output schemas (derived from `memd_client.protocol`) and the path
  from a call to the daemon and back;
- `text`: what the agent reads;
- `review_tools`, `procedure_tools`, `session_tools`: more tools, in the same style;
- `resources`: the memory files as resources, with subscribe and change notices (issue 36);
  `prompts`: the `remember`, `recall` and `review` prompts;
- `sampling` and `second_opinion`: the MCP client's own model as memd's second opinion (issue
  34: a store's redundancy check, gap analysis, session review), off unless `[llm] sampling`.

Rules:
- stdout carries only MCP frames (the SDK moves the wire to a private descriptor and points
  fd 1 at stderr while serving). Logs go to stderr, at WARNING unless `$MEMD_LOG_LEVEL` says
  otherwise.
- The stdio run (`serve_stdio`) advertises `listChanged` for resources and prompts
  (`NotificationOptions`; MCPServer's own stdio run advertises neither).
- The `mcp` package is an optional extra (`memd-daemon[mcp]`). No module of this package
  imports it at import time, so `memd mcp` without it prints one sentence saying what to install
  on stderr, answers the client's opening requests with that sentence as a JSON-RPC error, and
  exits 1.
"""

import argparse
import contextlib
import importlib
import importlib.util
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Literal

import memd
from memd.mcp_bridge.missing_sdk import missing_sdk_message, refuse_requests

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["run_mcp", "serve_stdio"]

logger = logging.getLogger("memd.mcp")

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def run_mcp(args: argparse.Namespace) -> int:
    """Serve the MCP tools on stdin/stdout until the client goes away; return the exit code."""
    try:
        importlib.import_module("mcp.server.mcpserver")  # the optional extra
    except ImportError as exc:
        absent = isinstance(exc, ModuleNotFoundError) and exc.name == "mcp"
        has_pip = importlib.util.find_spec("pip") is not None
        message = missing_sdk_message(sys.executable, None if absent else str(exc), has_pip=has_pip)
        sys.stderr.write(f"memd: {message}\n")
        sys.stderr.flush()
        refuse_requests(message)
        return 1
    from memd.mcp_bridge.tools import build_server

    level = _configure_logging()
    server = build_server(socket=args.socket, workspace=args.workspace, log_level=level)
    logger.info(
        "serving MCP on stdio (memd %s, socket %s, workspace %s)",
        memd.__version__,
        args.socket or "default",
        args.workspace or "from the client's roots or the current directory",
    )
    import anyio  # not at import time: the CLI's client verbs import this package's module

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve_stdio, server)
    logger.info("the MCP client went away; exiting")
    return 0


async def serve_stdio(server: "MCPServer[Any]") -> None:
    """Serve `server` on stdin/stdout, as `MCPServer.run("stdio")` does, but advertising that
    the resources' and prompts' lists may change (clients then heed `list_changed`)."""
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # no public accessor; the SDK's own client uses it
    options = lowlevel.create_initialization_options(
        NotificationOptions(resources_changed=True, prompts_changed=True)
    )
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, options)


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
