"""`memd mcp`'s resources and prompts (issue 36), driven as a real subprocess over stdio by the
MCP SDK's own client on the handshake-era protocol (where `resources/subscribe` exists), against
a real daemon: the capabilities, the listing of the category files (and the inbox once it
exists), reading their Markdown, `notifications/resources/updated` after another client's
store and after a hand edit, none after unsubscribing, `list_changed` when a file appears, the
feed surviving a daemon restart, and the three prompts."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import (
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    TextContent,
    TextResourceContents,
)

from memd.mcp_bridge.prompts import PROMPT_NAMES
from memd.mcp_bridge.resources import parse_uri, resource_uri
from memd_client import protocol as p
from memd_client.aio import AsyncClient
from memd_client.errors import InvalidParams
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_mcp import TOOLS

pytestmark = [
    pytest.mark.anyio,
    # resources/subscribe is the handshake era's, deprecated in 2026-07-28: what is tested here.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

WAIT = 20.0
"""The longest a test waits for a notification (a bound, never a pause)."""


class Notices:
    """The server's notifications as they arrive, to wait on."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self._arrived = anyio.Event()

    async def handle(self, message: Any) -> None:
        if not isinstance(message, Exception):
            self.seen.append(message)
            self._arrived.set()

    def updated(self, uri: str) -> int:
        """How many `resources/updated` notices for `uri` arrived so far."""
        return sum(
            1
            for m in self.seen
            if isinstance(m, ResourceUpdatedNotification) and str(m.params.uri) == uri
        )

    def list_changed(self) -> int:
        return sum(1 for m in self.seen if isinstance(m, ResourceListChangedNotification))

    async def until(self, done: Any) -> None:
        """Wait (at most WAIT seconds) until `done()` is true."""
        with anyio.fail_after(WAIT):
            while not done():
                self._arrived = anyio.Event()
                await self._arrived.wait()


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """The bridge's own directories (its daemon is the test's, by --socket)."""
    return {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"],  # the daemon's user-wide memory
        "MEMD_LOG_LEVEL": "INFO",
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }


@contextlib.asynccontextmanager
async def bridge(
    short_tmp: Path,
    env: dict[str, str],
    socket: Path,
    workspace: Path,
    notices: Notices,
    mode: str = "legacy",
) -> AsyncIterator[Client]:
    """`memd mcp --socket S --workspace W` with the SDK's client, handshake era ("legacy")
    unless `mode` says otherwise."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memd", "mcp", "--socket", str(socket), "--workspace", str(workspace)],
        env=env,
    )
    with (short_tmp / "bridge.log").open("w") as errlog:
        client = Client(
            stdio_client(params, errlog=errlog), mode=mode, message_handler=notices.handle
        )
        async with client:
            yield client


def text_of(contents: list[Any]) -> str:
    assert len(contents) == 1
    block = contents[0]
    assert isinstance(block, TextResourceContents)
    assert block.mime_type == "text/markdown"
    return block.text


async def test_category_files_are_live_resources(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    notices = Notices()
    decisions = resource_uri("project", "decisions.md")
    async with (
        AsyncClient(str(daemon.socket_path), workspace=str(workspace)) as other,
        bridge(short_tmp, env, daemon.socket_path, workspace, notices) as c,
    ):
        caps = c.server_capabilities
        assert caps.resources is not None and caps.resources.subscribe
        assert caps.resources.list_changed
        assert caps.prompts is not None and caps.prompts.list_changed

        assert (await c.list_resources()).resources == []  # nothing stored yet
        await c.subscribe_resource(decisions)  # before its file exists
        await other.store(
            category="Decision", content="Keep one writer per file.", slug="one-writer"
        )
        await notices.until(lambda: notices.updated(decisions) >= 1)
        await notices.until(lambda: notices.list_changed() >= 1)  # decisions.md appeared

        listed = (await c.list_resources()).resources
        on_disk_files = sorted((workspace / ".memory").glob("*.md"))
        assert {str(r.uri) for r in listed} == {
            resource_uri("project", f.name) for f in on_disk_files
        }
        assert decisions in {str(r.uri) for r in listed}
        assert {r.mime_type for r in listed} == {"text/markdown"}
        markdown = text_of((await c.read_resource(decisions)).contents)
        on_disk = (workspace / ".memory" / "decisions.md").read_text()
        assert markdown == on_disk
        assert "Keep one writer per file." in markdown

        # A hand edit, seen by the daemon's watcher, is an update too.
        before = notices.updated(decisions)
        edited = on_disk.rstrip("\n") + "\n- Rebase, never merge, on main.\n"
        (workspace / ".memory" / "decisions.md").write_text(edited)
        await notices.until(lambda: notices.updated(decisions) > before)
        assert "Rebase, never merge" in text_of((await c.read_resource(decisions)).contents)

        # Unsubscribed: a store to decisions.md sends no update. A store to quirks.md,
        # subscribed meanwhile, first flushes what was under way, then shows the feed runs.
        await c.unsubscribe_resource(decisions)
        quirks = resource_uri("project", "quirks.md")
        await c.subscribe_resource(quirks)
        await other.store(category="Quirk", content="The build needs GNU make.")
        await notices.until(lambda: notices.updated(quirks) >= 1)
        after = notices.updated(decisions)
        await other.store(category="Decision", content="Pin every dependency.")
        await other.store(category="Quirk", content="Socket paths stay under 100 bytes.")
        await notices.until(lambda: notices.updated(quirks) >= 2)
        assert notices.updated(decisions) == after


async def test_the_inbox_and_the_user_wide_memory_are_listed_once_they_exist(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    notices = Notices()
    inbox = resource_uri("project", "inbox.md")
    async with AsyncClient(str(daemon.socket_path), workspace=str(workspace)) as other:
        # Before the bridge starts: the daemon believes a user-wide memory it found absent
        # absent for a few seconds, even past a store that makes it (see the report).
        await other.store(category="Preference", content="Answer in English.", scope="global")
    async with (
        AsyncClient(str(daemon.socket_path), workspace=str(workspace)) as other,
        bridge(short_tmp, env, daemon.socket_path, workspace, notices) as c,
    ):
        await c.subscribe_resource(inbox)
        stored = await other.store(
            category="Security", content="Never log access tokens.", origin="agent"
        )
        uris = {str(r.uri) for r in (await c.list_resources()).resources}
        assert resource_uri("global", "preferences.md") in uris
        assert stored.action == "pending"  # an agent's Security entry waits for review
        assert inbox in uris
        await notices.until(lambda: notices.updated(inbox) >= 1)
        assert "Never log access tokens." in text_of((await c.read_resource(inbox)).contents)
        user_wide = text_of(
            (await c.read_resource(resource_uri("global", "preferences.md"))).contents
        )
        assert "Answer in English." in user_wide

        # The user-wide memory's files are live too (the bridge's second feed).
        preferences = resource_uri("global", "preferences.md")
        await c.subscribe_resource(preferences)
        n = 0
        with anyio.fail_after(WAIT):  # its feed may still be connecting: store until seen
            while notices.updated(preferences) == 0:
                content = f"Prefer short answers, take {n}."
                await other.store(category="Preference", content=content, scope="global")
                n += 1
                with anyio.move_on_after(1.0):
                    await notices.until(lambda: notices.updated(preferences) > 0)

        with pytest.raises(MCPError, match="not one of memd's memory files"):
            await c.read_resource("memd://project/../secrets.md")


async def test_the_feed_comes_back_after_the_daemon_restarts(
    short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    notices = Notices()
    decisions = resource_uri("project", "decisions.md")
    first = start_daemon(short_tmp)
    socket = first.socket_path
    try:
        async with bridge(short_tmp, env, socket, workspace, notices) as c:
            await c.subscribe_resource(decisions)
            assert first.stop() == 0
            second = start_daemon(short_tmp, socket_path=socket)
            try:
                async with AsyncClient(str(socket), workspace=str(workspace)) as other:
                    # Until the feed is back, a store may pass unseen; it then reports every
                    # subscribed file once, so storing until a notice comes is bounded.
                    with anyio.fail_after(WAIT):
                        n = 0
                        while notices.updated(decisions) == 0:
                            await other.store(category="Decision", content=f"Decision number {n}.")
                            n += 1
                            with anyio.move_on_after(0.5):
                                await notices.until(lambda: notices.updated(decisions) > 0)
            finally:
                assert second.stop() == 0
    finally:
        first.stop()


async def test_on_2026_07_28_changes_reach_a_listen_stream(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    decisions = resource_uri("project", "decisions.md")
    async with (
        AsyncClient(str(daemon.socket_path), workspace=str(workspace)) as other,
        bridge(short_tmp, env, daemon.socket_path, workspace, Notices(), mode="auto") as c,
    ):
        assert c.session.protocol_version == "2026-07-28"
        await other.store(category="Decision", content="Keep one writer per file.")
        assert decisions in {str(r.uri) for r in (await c.list_resources()).resources}
        async with c.listen(resource_subscriptions=[decisions]) as stream:
            got: list[ResourceUpdated] = []
            with anyio.fail_after(WAIT):  # the feed may still be connecting: store until seen
                n = 0
                while not got:
                    await other.store(category="Decision", content=f"Decision number {n}.")
                    n += 1
                    with anyio.move_on_after(1.0):
                        event = await stream.__anext__()
                        got += [event] if isinstance(event, ResourceUpdated) else []
        assert got[0].uri == decisions


async def test_prompts_remember_recall_and_review_name_real_tools(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    async with bridge(short_tmp, env, daemon.socket_path, workspace, Notices()) as c:
        prompts = {prompt.name: prompt for prompt in (await c.list_prompts()).prompts}
        assert set(prompts) == set(PROMPT_NAMES)
        assert [a.name for a in prompts["remember"].arguments or []] == ["what"]
        assert [a.name for a in prompts["recall"].arguments or []] == ["topic"]
        assert not prompts["review"].arguments

        def said(result: Any) -> str:
            assert len(result.messages) == 1 and result.messages[0].role == "user"
            content = result.messages[0].content
            assert isinstance(content, TextContent)
            return content.text

        remember = said(await c.get_prompt("remember", {"what": "we use tabs"}))
        assert "we use tabs" in remember and "storeMemory" in remember
        recall = said(await c.get_prompt("recall", {"topic": "the auth bug"}))
        assert "the auth bug" in recall and "queryMemory" in recall and '"chat"' in recall
        review = said(await c.get_prompt("review", {}))
        assert "reviewInbox" in review and "resolveInboxEntry" in review
        for text in (remember, recall, review):
            named = {tool for tool in TOOLS if tool in text}
            assert named, text
            assert named <= {t.name for t in (await c.list_tools()).tools}


def test_uris_name_a_scope_and_a_file_never_a_path() -> None:
    assert parse_uri("memd://project/decisions.md") == ("project", "decisions.md")
    assert parse_uri(resource_uri("global", "inbox.md")) == ("global", "inbox.md")
    for bad in (
        "memd://project/../x.md",
        "memd://project/a/b.md",
        "memd://team/decisions.md",
        "file:///etc/passwd",
        "memd://project/",
        "memd://project/.hidden",
    ):
        assert parse_uri(bad) is None, bad


async def test_subscribing_to_the_user_wide_memory_never_creates_it(
    daemon: DaemonProcess, workspace: Path
) -> None:
    async with AsyncClient(str(daemon.socket_path), workspace=str(workspace)) as client:
        with pytest.raises(InvalidParams, match="holds nothing yet"):
            async with client.subscribe(scope="global"):
                pass
        assert not (Path(os.environ["XDG_DATA_HOME"]) / "memd" / "global").exists()
        await client.store(category="Preference", content="Use uv, never pip.", scope="global")
        async with client.subscribe(scope="global") as events:
            await client.store(category="Preference", content="Answer briefly.", scope="global")
            with anyio.fail_after(WAIT):
                event = await events.__anext__()
        assert isinstance(event, p.Changed)
        assert event.file == "preferences.md"
        assert "Answer briefly." in [entry.content for entry in event.entries]


@given(
    scope=st.sampled_from(["project", "global"]),
    file=st.text(min_size=1, max_size=40).filter(lambda f: "/" not in f and f[0] != "."),
)
def test_every_memory_file_uri_reads_back_as_its_scope_and_file(scope: str, file: str) -> None:
    assert parse_uri(resource_uri("project" if scope == "project" else "global", file)) == (
        scope,
        file,
    )
