"""Provenance against a real daemon: who wrote each entry (the client library, the CLI, a real
MCP client session, a hand edit), what each write replaced, `history`/`memd blame`, and that
nothing of it is written into the Markdown."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp import Client as McpClient
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from memd_client import Client
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_cli import memd
from tests.polling_sync import wait_until


def wait_for_history(client: Client, slug: str, count: int) -> list[dict[str, object]]:
    """The entry's versions once there are `count` of them (a hand edit is seen by the
    watcher a moment later)."""
    wait_until(lambda: len(client.history(slug=slug).versions) >= count)
    return [
        {f: getattr(v, f) for f in ("action", "text", "replaced", "client", "origin")}
        for v in client.history(slug=slug).versions
    ]


def test_library_cli_and_hand_edit_each_recorded_with_what_they_replaced(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace, client_name="my-agent") as client:
        client.store(category="Decision", content="Deploy with Helm.", slug="deploy-tool")
        done = memd(
            "store", "-c", "Decision", "--slug", "deploy-tool", "Deploy with Kustomize.",
            cwd=workspace, socket=daemon.socket_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        path = workspace / ".memory" / "decisions.md"
        text = path.read_text()
        assert "my-agent" not in text and "memd" not in text.replace(".memory", "")
        path.write_text(text.replace("Deploy with Kustomize.", "Deploy with Argo CD."))
        versions = wait_for_history(client, "deploy-tool", 3)
        client.delete(category="Decision", slug="deploy-tool")
        versions = wait_for_history(client, "deploy-tool", 4)
    assert versions == [
        {
            "action": "store",
            "text": "Deploy with Helm.",
            "replaced": None,
            "client": "my-agent",
            "origin": "agent",
        },
        {
            "action": "update",
            "text": "Deploy with Kustomize.",
            "replaced": "Deploy with Helm.",
            "client": "memd",
            "origin": "user",
        },
        {
            "action": "edit",
            "text": "Deploy with Argo CD.",
            "replaced": "Deploy with Kustomize.",
            "client": "edit",
            "origin": "user",
        },
        {
            "action": "delete",
            "text": None,
            "replaced": "Deploy with Argo CD.",
            "client": "my-agent",
            "origin": "agent",
        },
    ]
    blamed = memd("blame", "deploy-tool", "--json", cwd=workspace, socket=daemon.socket_path)
    assert blamed.returncode == 0, blamed.stderr
    result = json.loads(blamed.stdout)
    assert [v["action"] for v in result["versions"]] == ["store", "update", "edit", "delete"]
    assert any("Deploy with Helm." in line for line in result["archived"])
    said = memd("blame", "deploy-tool", cwd=workspace, socket=daemon.socket_path).stdout
    assert "by my-agent 0.1.0 (agent)" in said and "was: Deploy with Helm." in said
    assert "removed: Deploy with Argo CD." in said


def test_history_survives_a_daemon_restart(short_tmp: Path, workspace: Path) -> None:
    (short_tmp / "d").mkdir()  # both daemons keep their state under it
    first = start_daemon(short_tmp / "d", name="one.sock")
    try:
        with Client(first.socket_path, workspace=workspace, client_name="lib") as client:
            client.store(category="Quirk", content="The build needs Node 20 for the tests.")
            updated = client.store(
                category="Quirk", content="The build needs Node 22 for the tests."
            )
            assert updated.action == "updated"
    finally:
        first.stop()
    second = start_daemon(short_tmp / "d", name="two.sock")
    try:
        with Client(second.socket_path, workspace=workspace) as client:
            found = client.history(slug=updated.slug)
            missing = memd("blame", cwd=workspace, socket=second.socket_path)
    finally:
        second.stop()
    assert [(v.action, v.text, v.replaced) for v in found.versions] == [
        ("store", "The build needs Node 20 for the tests.", None),
        ("update", updated.content, "The build needs Node 20 for the tests."),
    ]
    assert missing.returncode == 2 and "SLUG or --text" in missing.stderr


async def test_an_mcp_clients_name_and_version_are_recorded(
    daemon: DaemonProcess, short_tmp: Path, workspace: Path
) -> None:
    env = {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "memd",
            "mcp",
            "--socket",
            str(daemon.socket_path),
            "--workspace",
            str(workspace),
        ],
        env=env,
    )
    with (short_tmp / "bridge.log").open("w") as errlog:
        session = McpClient(
            stdio_client(params, errlog=errlog),
            mode="legacy",
            client_info=Implementation(name="test-editor", version="9.9"),
        )
        async with session:
            stored = await session.call_tool(
                "storeMemory", {"category": "Decision", "content": "Use tabs.", "slug": "tabs"}
            )
            assert not stored.is_error
            shown = await session.call_tool("memoryHistory", {"slug": "tabs"})
    assert not shown.is_error and shown.structured_content is not None
    (version,) = shown.structured_content["versions"]
    assert (version["client"], version["version"], version["origin"]) == (
        "test-editor",
        "9.9",
        "agent",
    )


def test_extracted_stores_and_an_applied_cleanup_are_recorded_as_such(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace, client_name="hook") as client:
        found = client.extract("I prefer pnpm over npm.", store=True)
        (stored,) = [c.stored for c in found.candidates if c.stored is not None]
        (version,) = client.history(slug=stored.slug).versions
        assert (version.action, version.client, version.origin) == ("store", "hook", "extracted")
        memory = workspace / ".memory" / "quirks.md"
        before = memory.read_text() if memory.exists() else ""
        memory.write_text(before + "- The CI cache expires after 7 days.\n")
        wait_until(lambda: client.history(text="The CI cache expires after 7 days.").versions)
        client.cleanup(apply=True)  # gives the hand-written line a slug
        (line,) = [e for e in client.list().entries if "CI cache" in e.content]
        assert line.slug is not None
        versions = client.history(slug=line.slug).versions
    assert [(v.action, v.origin, v.text) for v in versions] == [
        ("cleanup", "agent", "The CI cache expires after 7 days.")
    ]
