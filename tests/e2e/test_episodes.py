"""Episodes end to end, with a real daemon: stored by the CLI and MCP (dated, never skipped as
another day's repeat), consolidated by cleanup (old unrecalled ones archived, a recurring
lesson promoted to a Quirk, the episodes kept), and the archive searched with
include_archived."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd
from tests.e2e.test_mcp import bridge, call

TODAY = datetime.date.today()


def _ago(days: int) -> str:
    return (TODAY - datetime.timedelta(days=days)).isoformat()


EPISODES = (
    "# Episodes\n\n"
    f"- [{_ago(400)}-ci-cache-disk] {_ago(400)}: The CI cache filled the runner's disk. "
    "#outcome/fixed\n"
    f"- [{_ago(60)}-migration-0042] {_ago(60)}: Migration 0042 timed out on the prod replica; "
    "batching the backfill fixed it. #outcome/fixed\n"
    f"- [{_ago(30)}-migration-0043] {_ago(30)}: Migration 0043 timed out on prod again; "
    "batching the backfill fixed it. #outcome/fixed\n"
    "- [hand-written] The backfill migration timed out on the prod replica until we batched "
    "it.\n"
)


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """Private home, state, config and runtime directories for `memd mcp` (as in test_mcp)."""
    return {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }


def test_cli_stores_dated_episodes_and_never_skips_another_days(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock = daemon.socket_path
    (workspace / ".git").mkdir()
    text = "The deploy timed out on the staging cluster."
    first = memd(
        "episode", "--json", "-o", "failed", "-t", "deploy", text, cwd=workspace, socket=sock
    )
    assert first.returncode == 0, first.stderr
    stored = json.loads(first.stdout)
    assert stored["action"] == "stored" and stored["file"] == "episodes.md"
    assert stored["slug"].startswith(TODAY.isoformat() + "-")
    assert stored["content"] == f"{TODAY.isoformat()}: {text} #outcome/failed #deploy"
    # The same event on another day is another episode; the very same line again is skipped.
    other = memd("episode", "--json", f"{_ago(1)}: {text}", cwd=workspace, socket=sock)
    assert json.loads(other.stdout)["action"] == "stored"
    again = memd(
        "episode", "--json", "-o", "failed", "-t", "deploy", text, cwd=workspace, socket=sock
    )
    assert json.loads(again.stdout)["action"] == "skipped"
    lines = (workspace / ".memory" / "episodes.md").read_text().splitlines()
    assert sum(1 for line in lines if line.startswith("- [")) == 2
    found = memd("query", "deploy timed out", cwd=workspace, socket=sock)
    assert "episodes.md" in found.stdout
    bad = memd("episode", "-o", "!!", text, cwd=workspace, socket=sock)
    assert bad.returncode != 0 and "cannot be a tag" in bad.stderr


def test_cleanup_proposes_applies_and_the_archive_is_searched_when_asked(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "episodes.md").write_text(EPISODES)
    with Client(daemon.socket_path, workspace=workspace) as client:
        plan = client.cleanup()
        assert [info.entry.slug for info in plan.consolidated] == [f"{_ago(400)}-ci-cache-disk"]
        assert not plan.consolidated[0].archived
        (lesson,) = plan.promoted
        assert lesson.category == "Quirk" and lesson.stored is None
        assert len(lesson.episodes) == 3
        assert f"[{_ago(60)}-migration-0042]" in lesson.content
        assert (memory / "episodes.md").read_text() == EPISODES  # a plan writes nothing

        done = client.cleanup(apply=True)
        assert done.consolidated[0].archived
        assert done.promoted[0].stored is not None
        assert done.promoted[0].stored.action == "stored"
        quirks = (memory / "quirks.md").read_text()
        assert "Recurring lesson (3 episodes:" in quirks
        episodes = (memory / "episodes.md").read_text()
        assert "CI cache" not in episodes and "Migration 0042" in episodes  # kept
        archive = (memory / "archive.md").read_text()
        assert "CI cache filled" in archive and "consolidated: an episode 400 days old" in archive
        assert client.cleanup().promoted == []  # a second plan proposes nothing new

        live = client.query("CI cache disk")
        assert all(not hit.archived for hit in live.results)
        assert all("CI cache" not in hit.content for hit in live.results)
        found = client.query("CI cache disk", include_archived=True)
        hit = next(hit for hit in found.results if hit.archived)
        assert hit.category == "Episode" and hit.file == "archive.md"
        assert hit.archived_reason.startswith("consolidated:")
    shown = memd(
        "query", "--include-archived", "CI cache", cwd=workspace, socket=daemon.socket_path
    )
    assert "(archived " in shown.stdout


async def test_mcp_stores_an_episode_and_queries_the_archive(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        tools = {t.name: t.input_schema for t in (await c.list_tools()).tools}
        assert tools["storeEpisode"]["required"] == ["text"]
        assert "include_archived" in tools["queryMemory"]["properties"]
        said, data = await call(
            c, "storeEpisode", text="Redis evicted the session keys.", outcome="fixed"
        )
        assert "episodes.md" in said
        assert data["action"] == "stored" and data["file"] == "episodes.md"
        assert data["content"].endswith("#outcome/fixed")
        _said, data = await call(c, "queryMemory", query="redis session", include_archived=True)
        assert data["results"][0]["category"] == "Episode"
