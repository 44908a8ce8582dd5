"""Custom categories end to end, with a real daemon: `[[categories]]` in a project's
`.memory/memd.toml` and in memd's config file, through store, query, list, context, stats and
cleanup (client library, CLI and MCP), read again the moment memd.toml changes."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd_client import Client, protocol as p
from memd_client.errors import CategoryNotFound
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_mcp import bridge, call, env

__all__ = ["env"]  # the bridge's environment, a fixture

PROJECT_TOML = """\
[[categories]]
name = "Runbook"
file = "runbooks.md"
limit = 2
description = "How to operate the service."

[[categories]]
name = "Gate"
file = "gates.md"
limit = 10
layer = "always"
"""
GATE_RULE = "Never merge while the release train is frozen."


def memd(*args: str, socket: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(socket), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / ".memory").mkdir(exist_ok=True)
    (workspace / ".memory" / "memd.toml").write_text(PROJECT_TOML)
    return workspace


def test_a_projects_category_works_like_hacklms(daemon: DaemonProcess, project: Path) -> None:
    with Client(daemon.socket_path, workspace=project) as client:
        stored = client.store(category="runbook", content="Restart the workers after a deploy.")
        client.store(category="Gate", content=GATE_RULE)
        client.store(category="Quirk", content="The staging database resets at midnight.")
        assert (stored.category, stored.file) == ("Runbook", "runbooks.md")
        found = client.query("restart workers deploy")
        listed = client.list(category="RUNBOOK")
        context = client.context("how do we deploy and restart the workers")
        stats = client.stats()
    runbooks = (project / ".memory" / "runbooks.md").read_text()
    assert runbooks.startswith("# Runbooks\n\nHow to operate the service.\n\n")
    assert "Restart the workers after a deploy." in runbooks
    assert found.results[0].category == "Runbook"
    assert [e.content for e in listed.entries] == ["Restart the workers after a deploy."]
    layers = {(e.layer, e.category, e.content) for e in context.entries}
    assert ("always", "Gate", GATE_RULE) in layers  # a custom rule of layer A
    assert ("relevant", "Runbook", "Restart the workers after a deploy.") in layers
    rows = {row.category: (row.file, row.limit, row.entries) for row in stats.categories}
    assert rows["Runbook"] == ("runbooks.md", 2, 1) and rows["Gate"] == ("gates.md", 10, 1)
    # HackLM's five were made at load; memd's own kinds' files wait for their first store.
    assert (project / ".memory" / "quirks.md").exists()
    assert not (project / ".memory" / "procedures.md").exists()
    assert not (project / ".memory" / "episodes.md").exists()


def test_cleanup_keeps_a_custom_categorys_limit_and_archives(
    daemon: DaemonProcess, project: Path
) -> None:
    with Client(daemon.socket_path, workspace=project) as client:
        for step in ("Drain the queue first.", "Scale the web pods to zero.", "Page the on-call."):
            client.store(category="Runbook", content=step)
        plan = client.cleanup()
        applied = client.cleanup(apply=True)
    assert [p.category for p in plan.pruned] == ["Runbook"]
    assert applied.applied and len(applied.pruned) == 1
    archive = (project / ".memory" / "archive.md").read_text()
    assert applied.pruned[0].entry.content in archive
    kept = (project / ".memory" / "runbooks.md").read_text()
    assert applied.pruned[0].entry.content not in kept
    assert kept.count("\n- ") == 2


def test_a_category_added_while_the_daemon_runs_is_there_at_once(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Quirk", content="The CI cache expires after a week.")
        with pytest.raises(CategoryNotFound, match=r"use one of: Instruction, .*Episode"):
            client.store(category="Runbook", content="Restart the workers after a deploy.")
        (workspace / ".memory" / "memd.toml").write_text(PROJECT_TOML)
        stored = client.store(category="Runbook", content="Restart the workers after a deploy.")
        assert stored.action == "stored"
        quirks = client.list(category="Quirk")
        assert [e.content for e in quirks.entries] == ["The CI cache expires after a week."]
        # Dropped again: memd stops serving it, and never deletes its file.
        (workspace / ".memory" / "memd.toml").write_text("")
        with pytest.raises(CategoryNotFound):
            client.list(category="Runbook")
    assert "Restart the workers" in (workspace / ".memory" / "runbooks.md").read_text()


def test_a_bad_table_is_left_out_the_others_kept_and_stats_says_why(
    daemon: DaemonProcess, project: Path
) -> None:
    (project / ".memory" / "memd.toml").write_text(PROJECT_TOML.replace('"Gate"', '"gate"'))
    with Client(daemon.socket_path, workspace=project) as client:
        stored = client.store(category="Runbook", content="Restart the workers after a deploy.")
        with pytest.raises(CategoryNotFound) as failure:
            client.store(category="gate", content=GATE_RULE)
        stats = client.stats()
    assert stored.file == "runbooks.md"
    message = str(failure.value)
    assert "This project's own categories were left out" in message
    assert "memd.toml" in message and "categories table 2: name 'gate'" in message
    assert stats.categories_problem is not None
    assert "categories table 2" in stats.categories_problem
    shown = memd("stats", socket=daemon.socket_path, cwd=project)
    assert "Categories left out: Bad categories table 2" in shown.stdout


def test_the_cli_takes_a_custom_category(daemon: DaemonProcess, project: Path) -> None:
    stored = memd(
        "store", "-c", "runbook", "Restart the workers after a deploy.",
        socket=daemon.socket_path, cwd=project,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    listed = memd("list", "-c", "Runbook", "--json", socket=daemon.socket_path, cwd=project)
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)["entries"]
    assert [(e["category"], e["content"]) for e in entries] == [
        ("Runbook", "Restart the workers after a deploy.")
    ]


@pytest.fixture
def configured(short_tmp: Path) -> Iterator[DaemonProcess]:
    """A daemon whose config file adds a category for every workspace."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "memd" / "config.toml"
    config.write_text(
        'semantic = false\n[[categories]]\nname = "Runbook"\nfile = "runbooks.md"\nlimit = 5\n'
    )
    process = start_daemon(short_tmp, "--config", str(config))
    try:
        yield process
    finally:
        assert process.stop() == 0, process.stderr()


def test_a_configured_category_is_in_every_workspace(
    configured: DaemonProcess, short_tmp: Path
) -> None:
    for name in ("one", "two"):
        root = short_tmp / name
        root.mkdir()
        with Client(configured.socket_path, workspace=root) as client:
            stored = client.store(category="Runbook", content=f"Deploy {name} with make.")
        assert stored.file == "runbooks.md"
        assert f"Deploy {name} with make." in (root / ".memory" / "runbooks.md").read_text()
    # A project cannot take its name.
    clash = short_tmp / "clash"
    (clash / ".memory").mkdir(parents=True)
    (clash / ".memory" / "memd.toml").write_text(PROJECT_TOML)
    with Client(configured.socket_path, workspace=clash) as client:
        stored = client.store(category="Runbook", content="Deploy with make.")
        gate = client.store(category="Gate", content=GATE_RULE)  # its other table is kept
        stats = client.stats()
    assert stored.file == "runbooks.md" and gate.file == "gates.md"
    assert stats.categories_problem is not None
    assert "the name 'Runbook' is taken (left out)" in stats.categories_problem


def test_a_bad_config_table_stops_the_daemon_naming_it(short_tmp: Path) -> None:
    config = short_tmp / "config.toml"
    config.write_text('[[categories]]\nname = "Quirk"\nfile = "q2.md"\nlimit = 5\n')
    result = subprocess.run(
        [sys.executable, "-m", "memd", "serve", "--socket", str(short_tmp / "s"), "--config",
         str(config)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode != 0
    assert "Bad categories table 1: the name 'Quirk' is taken" in result.stderr
    assert "Traceback" not in result.stderr


async def test_mcps_schemas_list_the_projects_categories_and_store_takes_them(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], project: Path
) -> None:
    args = ("--socket", str(daemon.socket_path), "--workspace", str(project))
    async with bridge(short_tmp, env, *args) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools["storeMemory"].input_schema["properties"]["category"]
        assert schema["enum"][-2:] == ["Runbook", "Gate"]
        assert "Runbook: How to operate the service." in schema["description"]
        _, stored = await call(
            client, "storeMemory", category="runbook", content="Drain the queue first."
        )
        _, found = await call(client, "queryMemory", query="drain queue", category="Runbook")
    assert stored["category"] == "Runbook" and stored["file"] == "runbooks.md"
    assert found["results"][0]["content"] == "Drain the queue first."


def test_a_subscriber_keeps_its_feed_when_memd_toml_changes(
    daemon: DaemonProcess, workspace: Path
) -> None:
    events: queue.Queue[p.Event] = queue.Queue()
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Quirk", content="The CI cache expires after a week.")
        with client.subscribe(events.put):
            (workspace / ".memory" / "memd.toml").write_text(PROJECT_TOML)
            client.store(category="Runbook", content="Restart the workers after a deploy.")
            seen: list[p.Event] = []
            deadline = time.monotonic() + 30
            while not any(isinstance(e, p.Changed) and e.category == "Runbook" for e in seen):
                assert time.monotonic() < deadline, seen
                with contextlib.suppress(queue.Empty):
                    seen.append(events.get(timeout=0.5))
    resyncs = [e for e in seen if isinstance(e, p.Resync)]
    assert resyncs and "categories" in resyncs[0].message
