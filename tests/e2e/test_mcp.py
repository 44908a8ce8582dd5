"""`memd mcp` driven as a real subprocess over stdio by the MCP SDK's own client, against a real
daemon: tool list and schemas (output schemas derived from the protocol Structs), results (text
and structured, checked against those schemas), errors (memd's and unexpected ones), workspace
resolution (--workspace, the client's roots, the current directory), autostart, and a clean
stdout."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema  # type: ignore[import-untyped]  # a dependency of mcp, without type hints
import msgspec
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ListRootsResult, Root, TextContent
from pydantic import FileUrl

from memd.mcp_bridge.text import render_context, render_query
from memd.mcp_bridge.tools import guarded
from memd.mcp_bridge.workspace import workspace_from_roots
from memd_client import protocol as p
from tests.conftest import DaemonProcess, serve_processes, stop_serving
from tests.e2e.test_cleanup_and_async import FIRST_HOUR_PLAN, write_the_first_hour

TOOLS = {
    "storeMemory",
    "queryMemory",
    "getMemory",
    "memoryStats",
    "cleanupMemory",
    "memoryContext",
    "deleteMemory",
    "memoryCheck",
    "storeProcedure",
    "recordOutcome",
    "storeEpisode",
    "memoryHistory",
    "reviewInbox",
    "resolveInboxEntry",
    "reviewSession",
    "undoWrite",
    "restoreMemory",
}
READ_ONLY = {
    "queryMemory",
    "getMemory",
    "memoryStats",
    "memoryContext",
    "memoryCheck",
    "memoryHistory",
    "reviewInbox",
}
CATEGORIES = ["Instruction", "Quirk", "Preference", "Decision", "Security", "Procedure", "Episode"]
RESULTS: dict[str, type[msgspec.Struct]] = {
    "storeMemory": p.StoreResult,
    "queryMemory": p.QueryResult,
    "getMemory": p.EntriesResult,
    "memoryStats": p.StatsResult,
    "cleanupMemory": p.CleanupResult,
    "memoryContext": p.ContextResult,
    "deleteMemory": p.DeleteResult,
    "memoryCheck": p.CheckResult,
    "storeProcedure": p.StoreResult,
    "recordOutcome": p.OutcomeResult,
    "storeEpisode": p.StoreResult,
    "memoryHistory": p.HistoryResult,
    "reviewInbox": p.InboxResult,
    "resolveInboxEntry": p.ResolveResult,
    "reviewSession": p.ReflectResult,
    "undoWrite": p.UndoResult,
    "restoreMemory": p.RestoreResult,
}
"""The protocol Struct each tool's structured content comes from."""


# ---------------------------------------------------------------------------- helpers


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """Private home, state, config and runtime directories for the bridge (and any daemon it
    starts), and its own log level."""
    return {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        "MEMD_LOG_LEVEL": "INFO",
        # The tree under test, for the bridge and the daemon it starts (both import memd_client).
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }


@contextlib.asynccontextmanager
async def bridge(
    short_tmp: Path,
    env: dict[str, str],
    *args: str,
    cwd: Path | None = None,
    mode: str = "legacy",
    roots: list[Path] | None = None,
) -> AsyncIterator[Client]:
    """Run `memd mcp ARGS` and connect the SDK's client to it (`mode` "legacy": the initialize
    handshake; "auto": 2026-07-28 here); its stderr goes to `short_tmp/bridge.log`. With
    `roots`, the client declares the roots capability and lists them."""

    async def list_roots(context: ClientRequestContext) -> ListRootsResult:
        listed = [Root(uri=FileUrl(path.as_uri()), name=path.name) for path in roots or []]
        return ListRootsResult(roots=listed)

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memd", "mcp", *args], env=env, cwd=cwd
    )
    with (short_tmp / "bridge.log").open("w") as errlog:
        client = Client(
            stdio_client(params, errlog=errlog),
            mode=mode,
            list_roots_callback=list_roots if roots is not None else None,
        )
        async with client:
            yield client


def text(result: CallToolResult) -> str:
    """The result's one text block."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def call(client: Client, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    """Call a tool that must succeed; return its text and structured content, which must be
    valid against the tool's published output schema."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
    jsonschema.validate(result.structured_content, schemas[tool])
    return text(result), result.structured_content


async def fails(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; return the error text the agent sees."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    message = text(result)
    assert message.startswith(f"Error executing tool {tool}: ")
    assert "Traceback" not in message
    return message


@pytest.fixture
def autostart_socket(short_tmp: Path) -> Iterator[Path]:
    """A socket path nothing serves yet; any daemon started on it is stopped afterwards."""
    path = short_tmp / "auto" / "memd.sock"
    try:
        yield path
    finally:
        stop_serving(path)


# ---------------------------------------------------------------------------- tools


async def test_tools_keep_hacklm_names_and_schemas_and_a_daemon_that_cannot_start_is_a_sentence(
    short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    blocked = short_tmp / "blocked.sock"
    blocked.write_text("not a socket")  # nothing answers here, and memd cannot serve here
    args = ("--socket", str(blocked), "--workspace", str(workspace))
    try:
        async with bridge(short_tmp, env, *args) as c:
            assert c.server_info is not None
            assert c.server_info.name == "memd"
            assert c.server_info.version
            assert c.instructions is not None
            assert "queryMemory" in c.instructions and "storeMemory" in c.instructions
            assert "Security and Instruction" in c.instructions

            tools = {tool.name: tool for tool in (await c.list_tools()).tools}
            assert set(tools) == TOOLS
            for name, tool in tools.items():
                assert tool.description and not tool.description.startswith(" "), name
                assert tool.output_schema is not None and tool.output_schema["type"] == "object"
                hints = tool.annotations
                assert hints is not None
                assert hints.open_world_hint is False, name
                assert bool(hints.read_only_hint) == (name in READ_ONLY), name
            for destructive in ("cleanupMemory", "deleteMemory"):
                hints = tools[destructive].annotations
                assert hints is not None and hints.destructive_hint is True, destructive
            assert tools["deleteMemory"].input_schema["required"] == ["category", "slug"]
            store = tools["storeMemory"].annotations
            assert store is not None and store.destructive_hint is False

            schema = tools["storeMemory"].input_schema
            assert schema["required"] == ["category", "content"]
            assert schema["properties"]["category"]["enum"] == CATEGORIES
            # No roots, no ctx: the SDK fills those.
            assert set(schema["properties"]) == {
                "category",
                "content",
                "slug",
                "scope",
                "conversation",
            }
            assert all(p.get("description") for p in schema["properties"].values())
            query = tools["queryMemory"].input_schema["properties"]
            assert query["limit"]["type"] == "integer" and query["limit"]["default"] == 10
            assert "minimum" not in query["limit"] and "maximum" not in query["limit"]  # clamped
            assert query["category"]["anyOf"][0]["enum"] == CATEGORIES
            assert "file" in query and query["file"].get("description")
            assert tools["getMemory"].input_schema.get("required", []) == []
            assert set(tools["memoryStats"].input_schema.get("properties", {})) == {"scope"}
            assert tools["cleanupMemory"].input_schema["properties"]["apply"]["default"] is False
            context = tools["memoryContext"].input_schema["properties"]
            assert set(context) == {"text", "file", "budget_tokens"}

            # Output schemas come from the protocol's result Structs, plus the workspace used.
            for name, struct in RESULTS.items():
                output = tools[name].output_schema
                assert output is not None
                assert output["type"] == "object" and "$ref" not in output, name
                assert output["title"] == struct.__name__
                jsonschema.validators.validator_for(output).check_schema(output)
                fields = {f.encode_name for f in msgspec.structs.fields(struct)} - {"dry_run"}
                assert set(output["properties"]) == fields | {"workspace", "workspace_source"}
                assert {"workspace", "workspace_source"} <= set(output["required"])
            store_out = tools["storeMemory"].output_schema
            query_out = tools["queryMemory"].output_schema
            assert store_out is not None and query_out is not None
            assert {"action", "slug", "message"} <= set(store_out["required"])
            # HackLM's three, and memd's "pending" (waiting in the review inbox).
            actions = store_out["properties"]["action"]["enum"]
            assert actions == ["pending", "skipped", "stored", "updated"]
            assert query_out["required"][:2] == ["results", "total"]
            assert query_out["properties"]["results"]["items"] == {"$ref": "#/$defs/QueryHit"}

            # A missing argument is refused before anything reaches the daemon. A category the
            # schema does not list goes on: the call's workspace may define its own, and the
            # daemon names the valid ones (test_argument_errors_are_one_sentence_...).
            await fails(c, "storeMemory", category="Decision")

            # Then a call: no daemon answers, and the one autostart tries cannot serve there.
            message = await fails(c, "memoryStats")
    finally:
        stop_serving(blocked)
    assert f"Could not start memd on {blocked}" in message
    assert "exists and is not a socket" in message
    assert message.endswith(f"This call used workspace {workspace} (from --workspace).")
    assert blocked.read_text() == "not a socket"


async def test_query_memory_with_a_file_puts_its_scoped_entries_first(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    """queryMemory's `file`: an entry scoped to that file with (paths: ...) comes first, one
    scoped to other files is left out, an unscoped one stays."""
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        for content in (
            "Take the lock before writing any file.",
            "Lock files in the db layer are advisory (paths: src/db/**).",
            "Lock the UI thread never (paths: src/ui/**).",
        ):
            await call(c, "storeMemory", category="Quirk", content=content)
        _, in_db = await call(c, "queryMemory", query="lock", file="src/db/pool.py")
        contents = [hit["content"] for hit in in_db["results"]]
        assert contents[0].startswith("Lock files in the db layer")
        assert "Take the lock before writing any file." in contents
        assert not any("UI thread" in content for content in contents)


async def test_store_query_get_and_stats_give_text_and_structured_content(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    elsewhere = short_tmp / "elsewhere"
    elsewhere.mkdir()
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args, roots=[elsewhere]) as c:  # --workspace wins
        said, stored = await call(
            c, "storeMemory", category="Decision", content="Take the lock before writing files."
        )
        slug = stored["slug"]
        assert said == (
            f'Stored in decisions.md as [{slug}]: "Take the lock before writing files." This '
            f"call used workspace {workspace} (from --workspace); it created {workspace}/.memory/."
        )
        assert stored["action"] == "stored"
        assert stored["workspace"] == str(workspace)
        assert stored["workspace_source"] == "--workspace"
        assert stored["created_memory_dir"] is True
        assert (
            (workspace / ".memory" / "decisions.md")
            .read_text()
            .endswith(f"- [{slug}] Take the lock before writing files.\n")
        )

        said, updated = await call(
            c, "storeMemory", category="Decision", content="Lock, then write.", slug=slug
        )
        assert updated["action"] == "updated" and updated["slug"] == slug
        assert updated["created_memory_dir"] is False and "This call used" not in said

        found, hits = await call(c, "queryMemory", query="lock write")
        assert found.startswith("Found 1 memory:")
        score = hits["results"][0]["score"]
        assert f"- [Decision] [{slug}] Lock, then write. (score {score:.2f})" in found
        assert hits["total"] == 1 and hits["results"][0]["slug"] == slug
        none, empty = await call(c, "queryMemory", query="kubernetes", category="Security")
        assert none == 'No memories found matching "kubernetes".'
        assert empty["results"] == []

        for where in ({}, {"category": "Decision"}):
            got, entries = await call(c, "getMemory", slug=slug, **where)
            assert got == f"- [Decision] [{slug}] Lock, then write. (decisions.md:5)"
            assert [e["slug"] for e in entries["entries"]] == [slug]
        missing = await fails(c, "getMemory", slug="no-such-slug")
        assert "No entry [no-such-slug] in any category" in missing  # the daemon's sentence
        hint = "With these tools, call queryMemory with an empty query to list the entries."
        assert missing.endswith(f"{hint} This call used workspace {workspace} (from --workspace).")
        missing = await fails(c, "getMemory", slug="no-such-slug", category="Quirk")
        assert "No entry [no-such-slug] in quirks.md" in missing
        assert hint in missing

        # Concurrent calls, each on its own connection to the daemon.
        results: list[CallToolResult] = []

        async def store(n: int) -> None:
            arguments = {"category": "Quirk", "content": f"Parallel note{n} q{n}x z{n}k w{n}j."}
            results.append(await c.call_tool("storeMemory", arguments))

        async with anyio.create_task_group() as tg:
            for n in range(8):
                tg.start_soon(store, n)
        assert [r.is_error for r in results] == [False] * 8

        stats_text, stats = await call(c, "memoryStats")
        lines = stats_text.splitlines()
        assert lines[0] == f"Memory of workspace {workspace} (from --workspace):"
        assert "- Quirk (quirks.md): 8 of 40 entries" in lines
        assert lines[-2:] == [
            "Total: 9 entries.",
            "Search: by words; semantic search is off (semantic = false in the settings).",
        ]
        assert stats["total"] == 9 and stats["workspace_source"] == "--workspace"
    assert not (elsewhere / ".memory").exists()


async def test_a_store_in_the_current_directory_names_the_workspace_it_used(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    """No --workspace and no roots: the bridge falls back to its current directory, and a store
    says so, with how that root was found and whether it created .memory/ there."""
    args = ("--socket", str(daemon.socket_path))
    async with bridge(short_tmp, env, *args, cwd=workspace) as c:
        said, stored = await call(c, "storeMemory", category="Quirk", content="CI runs at night.")
        assert said.endswith(
            f"This call used workspace {workspace} (from the current directory, with no .memory/ "
            f"or .git in it or above it); it created {workspace}/.memory/."
        )
        assert stored["workspace"] == str(workspace)
        assert stored["workspace_source"] == "current directory"
        assert stored["created_memory_dir"] is True
        said, stored = await call(c, "storeMemory", category="Quirk", content="Builds are slow.")
        assert said.endswith(f"This call used workspace {workspace} (from the current directory).")
        assert stored["created_memory_dir"] is False
        listed, _ = await call(c, "queryMemory", query="")
        assert "This call used" not in listed  # reads stay as they were
    (workspace / "sub").mkdir()
    (workspace / ".git").mkdir()
    (workspace / ".memory").rename(workspace / "moved")
    async with bridge(short_tmp, env, *args, cwd=workspace / "sub") as c:
        said, _ = await call(c, "storeMemory", category="Quirk", content="Caches live in /var.")
        assert said.endswith(
            f"This call used workspace {workspace} (from the current directory, found by its "
            f".git); it created {workspace}/.memory/."
        )


async def test_daemon_errors_cleanup_and_context_in_the_clients_first_root(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "quirks.md").write_text("# Quirks\n\n- Watchfiles goes blind when the dir is gone.\n")
    # The agent's Security store below is to be in the block at once, not wait for review.
    (memory / "memd.toml").write_text('[review]\nSecurity = "direct"\n')
    second = short_tmp / "second root"
    second.mkdir()
    args = ("--socket", str(daemon.socket_path))  # no --workspace: the first root is used
    async with bridge(short_tmp, env, *args, cwd=second, roots=[workspace, second]) as c:
        where = f"This call used workspace {workspace} (from the client's first root)."
        bad_slug = await fails(c, "storeMemory", category="Quirk", content="x y z", slug="Bad Slug")
        assert "'Bad Slug' is not valid kebab-case" in bad_slug
        assert bad_slug.endswith(where)
        too_long = await fails(c, "storeMemory", category="Quirk", content="word " * 500)
        assert "over the 2,000-character cap (max_entry_chars)" in too_long

        plan, planned = await call(c, "cleanupMemory")
        assert planned["applied"] is False and len(planned["slugged"]) == 1
        assert planned["workspace_source"] == "client root"
        assert "becomes [" in plan and "apply: true" in plan
        assert "- Watchfiles goes blind" in (memory / "quirks.md").read_text()
        _, applied = await call(c, "cleanupMemory", apply=True)
        assert applied["applied"] is True
        slug = planned["slugged"][0]["slug"]
        assert f"- [{slug}] Watchfiles goes blind" in (memory / "quirks.md").read_text()

        await call(c, "storeMemory", category="Security", content="Never commit the .env file.")
        await call(c, "storeMemory", category="Decision", content="Deploys go through the queue.")
        block, context = await call(
            c, "memoryContext", text="how do deploys work", budget_tokens=400
        )
        assert "Never commit the .env file." in block
        assert "Deploys go through the queue." in block
        assert block == context["markdown"]
        layers = {e["content"]: e["layer"] for e in context["entries"]}
        assert layers["Never commit the .env file."] == "always"
        assert layers["Deploys go through the queue."] == "relevant"
        assert context["tokens"] <= 400 and context["workspace"] == str(workspace)

        (workspace / "lib").mkdir()
        content = "Parsing lives in `lib/parse.py` alone."
        await call(c, "storeMemory", category="Quirk", content=content)
        text, checked = await call(c, "memoryCheck", category="quirk")
        assert checked["counts"] == {"ok": 0, "stale": 1, "none": 1}
        assert f"{content} (quirks.md:" in text
        assert "cites lib/parse.py, which no longer exists" in text and "memd check --fix" in text
    assert not (second / ".memory").exists()
    assert "Tool 'storeMemory' failed" in (short_tmp / "bridge.log").read_text()  # INFO, stderr


async def test_a_missing_daemon_is_started_and_roots_work_on_2026_07_28(
    short_tmp: Path, env: dict[str, str], workspace: Path, autostart_socket: Path
) -> None:
    args = ("--socket", str(autostart_socket))
    async with bridge(short_tmp, env, *args, mode="auto", roots=[workspace]) as c:
        # mode="auto" negotiates 2026-07-28: roots come through the multi-round-trip flow.
        _, stored = await call(c, "storeMemory", category="Quirk", content="Autostart works.")
        assert stored["action"] == "stored"
        assert stored["workspace"] == str(workspace)
        assert stored["workspace_source"] == "client root"
        # A bad argument still names the workspace: the roots are asked for first.
        missing = await fails(c, "storeMemory", category="Quirk")
        assert missing.endswith(
            "Argument `content` is missing; call storeMemory again with it. This call used "
            f"workspace {workspace} (from the client's first root)."
        )
    assert len(serve_processes(autostart_socket)) == 1
    assert "started a daemon" in (short_tmp / "bridge.log").read_text()


async def test_limit_is_clamped_over_limit_names_cleanup_and_get_looks_everywhere(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    rules = "".join(f"- [rule-{n}] Rule {n}: keep the {n}-th gate z{n}q shut.\n" for n in range(30))
    (memory / "security.md").write_text(f"# Security\n\n{rules}")
    # The agent's Security store below is to be stored over the limit, not wait for review.
    (memory / "memd.toml").write_text('[review]\nSecurity = "direct"\n')
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        # HackLM caps `limit` at 20 and never rejects a number; memd also raises one below 1.
        for limit, expected in ((100, 20), (20, 20), (3, 3), (0, 1), (-5, 1)):
            said, found = await call(c, "queryMemory", query="", limit=limit)
            assert (len(found["results"]), found["total"]) == (expected, 30), limit
            assert said.startswith(f"Found {expected} {'memory' if expected == 1 else 'memories'}")

        # Security holds 30 of 30: one more is stored, and the text names the tool to clean up.
        said, stored = await call(
            c, "storeMemory", category="Security", content="Rotate the deploy keys every month."
        )
        assert stored["over_limit"] is True and stored["action"] == "stored"
        assert "run `memd cleanup` to review." in said  # the daemon's sentence, shared with CLI
        assert said.endswith("With these tools, call cleanupMemory to see the cleanup plan.")

        # Without a category, getMemory finds the slug in every category (the daemon's `get`).
        await call(c, "storeMemory", category="Quirk", content="Gate 7 sticks.", slug="rule-7")
        got, entries = await call(c, "getMemory", slug="rule-7")
        assert got.splitlines() == [
            "- [Quirk] [rule-7] Gate 7 sticks. (quirks.md:5)",
            "- [Security] [rule-7] Rule 7: keep the 7-th gate z7q shut. (security.md:10)",
        ]
        assert [e["category"] for e in entries["entries"]] == ["Quirk", "Security"]


async def test_the_cleanup_plan_says_apply_true_once_and_names_each_entry_once(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    write_the_first_hour(workspace / ".memory")
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        plan, planned = await call(c, "cleanupMemory")
        lines = plan.splitlines()
        assert [lines[0], *(line.removeprefix("- ") for line in lines[1:-1])] == FIRST_HOUR_PLAN
        assert lines[-1] == "Call cleanupMemory with apply: true to carry it out."
        assert "--apply" not in plan and "memd cleanup" not in plan
        assert plan.lower().count("nothing") == 1  # "nothing was written", once
        (pruned,) = planned["pruned"]
        assert (pruned["entry"]["slug"], pruned["tied_with"]["slug"]) == ("rule-0", "rule-1")

        applied, _ = await call(c, "cleanupMemory", apply=True)
        assert applied.splitlines()[0].endswith(
            "the removed entries are kept in .memory/archive.md."
        )
        assert "apply" not in applied and "nothing" not in applied.lower()


async def test_argument_errors_are_one_sentence_any_case_category_and_delete_archives(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    where = f"This call used workspace {workspace} (from --workspace)."
    async with bridge(short_tmp, env, *args) as c:
        # A wrong-case category is taken, as the CLI takes it.
        _, stored = await call(c, "storeMemory", category="quirk", content="Gate 9 sticks.")
        assert stored["category"] == "Quirk"
        _, found = await call(c, "queryMemory", query="gate", category="QUIRK")
        assert found["total"] == 1

        # Bad arguments: one sentence naming the argument, then the workspace; no pydantic dump.
        for tool, arguments, sentence in (
            (
                "storeMemory",
                {"category": "Nope", "content": "x"},
                "Unknown category 'Nope'; use one of: Instruction, Quirk, Preference, "
                "Decision, Security, Procedure, Episode (a project adds its own in "
                ".memory/memd.toml, see docs/reference/categories.md).",
            ),
            (
                "storeMemory",
                {"category": "Quirk"},
                "Argument `content` is missing; call storeMemory again with it.",
            ),
            (
                "memoryContext",
                {"budget_tokens": 0},
                "Argument `budget_tokens` is 0, but it should be greater than or equal to 1; "
                "call memoryContext again with a valid value.",
            ),
        ):
            message = await fails(c, tool, **arguments)
            assert message == f"Error executing tool {tool}: {sentence} {where}", message

        # deleteMemory archives the entry, as the CLI's delete does.
        slug = stored["slug"]
        said, deleted = await call(c, "deleteMemory", category="quirk", slug=slug)
        assert deleted["deleted"] is True and deleted["entry"]["slug"] == slug
        assert said == f"Deleted [{slug}] from quirks.md; it is kept in archive.md."
        assert "Gate 9 sticks." not in (workspace / ".memory" / "quirks.md").read_text()
        assert "Gate 9 sticks." in (workspace / ".memory" / "archive.md").read_text()
        missing = await fails(c, "deleteMemory", category="Quirk", slug=slug)
        assert missing == (
            f"Error executing tool deleteMemory: No entry [{slug}] in quirks.md; nothing was "
            f"deleted. {where}"
        )


async def test_content_too_long_for_one_request_says_so_and_the_bridge_goes_on(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    """A 3 MB content broke the connection ("retry the request", which failed the same way):
    the bridge says what is wrong and what one memory may hold."""
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        message = await fails(c, "storeMemory", category="Quirk", content="x" * 3_000_000)
        assert "Argument `content` is 3,000,000 characters" in message
        assert "max_entry_chars" in message and "retry" not in message
        _, stored = await call(c, "storeMemory", category="Quirk", content="Gate 9 sticks.")
        assert stored["action"] == "stored"


async def test_a_global_store_says_it_went_to_the_users_own_memory(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        said, stored = await call(
            c, "storeMemory", category="Preference", content="Answer in English.", scope="global"
        )
    assert stored["action"] == "stored"
    assert "This call used your user-wide memory" in said
    assert "from --workspace" not in said


async def test_an_unexpected_error_is_one_sentence_and_a_logged_traceback(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str]
) -> None:
    # A directory whose name is not UTF-8: the path cannot go on memd's JSON wire.
    odd = os.fsdecode(os.fsencode(short_tmp) + b"/caf\xe9")
    os.mkdir(odd)
    args = ("--socket", str(daemon.socket_path), "--workspace", odd)
    async with bridge(short_tmp, env, *args) as c:
        message = await fails(c, "memoryStats")
        assert (await c.list_tools()).tools  # the session is still fine
    assert message == (
        "Error executing tool memoryStats: A path or text in this call is not valid UTF-8, which "
        "memd's protocol cannot carry (UnicodeEncodeError: 'utf-8' codec can't encode character "
        f"'\\udce9' in position {len(odd) - 1}: surrogates not allowed); use a UTF-8 path or "
        f"text. This call used workspace {short_tmp}/caf\\xe9 (from --workspace)."
    )
    log = (short_tmp / "bridge.log").read_text()
    assert "ERROR memd.mcp: memoryStats failed unexpectedly\nTraceback" in log
    assert "UnicodeEncodeError" in log


async def test_any_other_exception_becomes_a_tool_error_sentence(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken() -> None:
        raise OSError(24, "Too many open files")

    with pytest.raises(ToolError) as raised:
        await guarded("memoryStats", broken)()
    assert str(raised.value) == (
        "memd's MCP server failed unexpectedly (OSError: [Errno 24] Too many open files); its "
        "log on stderr has the traceback."
    )
    assert raised.value.__cause__ is None
    (record,) = caplog.records
    assert record.getMessage() == "memoryStats failed unexpectedly"
    assert record.exc_info is not None and isinstance(record.exc_info[1], OSError)


def test_a_block_pointing_at_a_cli_verb_also_names_the_tool() -> None:
    unreadable = (
        "- .memory/security.md cannot be read, so its rules are missing here; see `memd stats`."
    )
    block = p.ContextResult(
        markdown=f"## Memory\n\n{unreadable}\n", tokens=20, budget_tokens=800, entries=[], omitted=0
    )
    assert render_context(block) == (
        f"## Memory\n\n{unreadable}\n\nWith these tools, call memoryStats."
    )
    plain = msgspec.structs.replace(block, markdown="## Memory\n\n- [Quirk] x\n")
    assert render_context(plain) == plain.markdown


def test_a_hit_found_by_meaning_says_so_as_in_the_cli() -> None:
    def hit(slug: str, score: float, match: p.Match) -> p.QueryHit:
        return p.QueryHit("Decision", "decisions.md", 5, slug, f"{slug} text.", score, match=match)

    hits = [hit("pool", 0.81, "keyword"), hit("grid", 0.62, "both"), hit("jwt", 0.13, "semantic")]
    found = p.QueryResult(results=hits, total=3, mode="hybrid")
    assert render_query(found, "q").splitlines()[2:] == [
        "- [Decision] [pool] pool text. (score 0.81)",
        "- [Decision] [grid] grid text. (score 0.62) [words and meaning]",
        "- [Decision] [jwt] jwt text. (score 0.13) [by meaning]",
    ]


def test_file_uris_become_paths() -> None:
    assert workspace_from_roots(["https://example.com/x", "file:///a%20b/c"]) == "/a b/c"
    assert workspace_from_roots(["file://localhost/srv/p"]) == "/srv/p"
    assert workspace_from_roots(["file://otherhost/srv/p", "file:///"]) == "/"
    assert workspace_from_roots([]) is None


# ---------------------------------------------------------------------------- the process


async def test_raw_session_stdout_frames_cwd_fallback_stderr_logs_and_exit_0(
    daemon: DaemonProcess, short_tmp: Path, workspace: Path
) -> None:
    """A handshake-era client that declares roots but fails to list them, started in a
    subdirectory of a git project without --workspace: the bridge uses the project root."""
    (workspace / ".git").mkdir()
    inside = workspace / "src" / "pkg"
    inside.mkdir(parents=True)
    command = [sys.executable, "-m", "memd", "mcp", "--socket", str(daemon.socket_path)]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMD_")}
    environ["MEMD_LOG_LEVEL"] = "INFO"
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": False}},
        "clientInfo": {"name": "raw-test", "version": "0"},
    }
    frames: list[dict[str, Any]] = []

    async def send(stream: Any, message: dict[str, Any]) -> None:
        await stream.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    with (short_tmp / "raw.log").open("w+b") as errlog, anyio.fail_after(30):
        process = await anyio.open_process(command, cwd=inside, env=environ, stderr=errlog)
        async with process:
            assert process.stdin is not None and process.stdout is not None
            reader = BufferedByteReceiveStream(process.stdout)

            async def answer(request_id: int) -> dict[str, Any]:
                while True:
                    line = await reader.receive_until(b"\n", 1 << 20)
                    frame: dict[str, Any] = json.loads(line)
                    frames.append(frame)
                    if frame.get("method") == "roots/list":
                        error = {"code": -32603, "message": "cannot list roots"}
                        await send(process.stdin, {"id": frame["id"], "error": error})
                    elif frame.get("id") == request_id and "method" not in frame:
                        return frame

            await send(process.stdin, {"id": 1, "method": "initialize", "params": initialize})
            initialized = await answer(1)
            await send(process.stdin, {"method": "notifications/initialized"})
            call_params = {"name": "memoryStats", "arguments": {}}
            await send(process.stdin, {"id": 2, "method": "tools/call", "params": call_params})
            stats = await answer(2)
            await process.stdin.aclose()
            rest = b""
            with contextlib.suppress(anyio.EndOfStream, anyio.IncompleteRead):
                while True:
                    rest += await reader.receive()
            assert await process.wait() == 0
        errlog.seek(0)
        stderr = errlog.read().decode()
    assert rest.strip() == b""  # every byte on stdout was one of the frames above
    assert all(frame["jsonrpc"] == "2.0" for frame in frames)
    assert [f.get("method") for f in frames] == [None, "roots/list", None]
    assert initialized["result"]["serverInfo"]["name"] == "memd"
    result = stats["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["workspace"] == str(workspace)
    assert result["structuredContent"]["workspace_source"] == "current directory"
    assert (
        f"workspace {workspace} (from the current directory, found by its .git)"
        in result["content"][0]["text"]
    )
    assert "serving MCP on stdio" in stderr
    assert "could not read the client's roots" in stderr
    assert "the MCP client went away" in stderr


def test_with_a_broken_mcp_sdk_it_says_why_and_what_to_install(short_tmp: Path) -> None:
    shadow = short_tmp / "shadow" / "mcp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('mcp is broken (test)')\n")
    # The shadow, then the tree under test (the venv's installed memd may be another checkout).
    path = os.pathsep.join(filter(None, [str(shadow.parent), os.environ.get("PYTHONPATH")]))
    environ = dict(os.environ, PYTHONPATH=path)
    result = subprocess.run(
        [sys.executable, "-m", "memd", "mcp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "memd: memd mcp needs the MCP SDK (mcp is broken (test)); install it into the Python memd "
        f"runs from: {shlex.quote(sys.executable)} -m pip install 'memd-daemon[mcp]'\n"
    )
    assert "Traceback" not in result.stderr
