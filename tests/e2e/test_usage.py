"""Usage signals end to end: recalls and stores kept in a sidecar under XDG_STATE_HOME (never
in `.memory/`), a bad sidecar set aside without stopping anything, unused entries reported by
cleanup."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import msgspec

from memd.core.format.categories import HACKLM_CATEGORIES
from memd.server.workspaces.usage_store import usage_path
from memd_client import Client
from tests.conftest import start_daemon

DAY = 86400


def sidecar(short_tmp: Path, workspace: Path) -> Path:
    return Path(
        usage_path(os.path.realpath(workspace), {"XDG_STATE_HOME": str(short_tmp / "state")})
    )


def plant_history(short_tmp: Path, workspace: Path, entries: dict[str, dict[str, float]]) -> None:
    """Write a usage sidecar for `workspace` before its daemon starts."""
    path = sidecar(short_tmp, workspace)
    path.parent.mkdir(parents=True)
    history = {"workspace": os.path.realpath(workspace), "entries": entries}
    path.write_bytes(msgspec.json.encode(history))


def cleanup_plan(short_tmp: Path, workspace: Path) -> list[str | None]:
    """Run `cleanup` (a plan) on a fresh daemon; return the slugs reported unused."""
    daemon = start_daemon(short_tmp)
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            plan = client.cleanup()
    finally:
        assert daemon.stop() == 0
    return [entry.slug for entry in plan.unused]


def test_recalls_and_stores_are_saved_outside_the_memory_files(
    short_tmp: Path, workspace: Path
) -> None:
    daemon = start_daemon(short_tmp)
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            client.store(category="Decision", content="We deploy with Helm.", slug="helm")
            client.query("deploy helm")
            client.query("helm")
            client.get(slug="helm")
            client.list()  # listing is not recalling
    finally:
        assert daemon.stop() == 0
    saved = json.loads(sidecar(short_tmp, workspace).read_text())
    assert saved["workspace"] == os.path.realpath(workspace)
    record = saved["entries"]["Decision/helm"]
    assert record["recalls"] == 3
    assert record["stored_at"] > 0
    # Only the category files (all five: a first write creates them): no usage file there.
    assert sorted(p.name for p in (workspace / ".memory").iterdir()) == sorted(
        c.file for c in HACKLM_CATEGORIES
    )


def test_a_bad_sidecar_is_set_aside(short_tmp: Path, workspace: Path) -> None:
    path = sidecar(short_tmp, workspace)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    daemon = start_daemon(short_tmp)
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            client.store(category="Quirk", content="The cache warms slowly.")
            assert client.query("cache").total == 1
    finally:
        assert daemon.stop() == 0
    assert path.with_name(path.name + ".bad").read_text() == "{not json"
    assert "unreadable" in daemon.stderr()


def test_cleanup_reports_entries_nobody_recalls(short_tmp: Path, workspace: Path) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text(
        "# Decisions\n\n- [old-way] We used to deploy by hand.\n- [new-way] We deploy with Helm.\n"
    )
    long_ago = time.time() - 365 * DAY
    plant_history(
        short_tmp,
        workspace,
        {
            "Decision/old-way": {"recalls": 0, "recalled_at": 0.0, "stored_at": long_ago},
            "Decision/new-way": {"recalls": 4, "recalled_at": time.time(), "stored_at": long_ago},
        },
    )
    assert cleanup_plan(short_tmp, workspace) == ["old-way"]
    assert (memory / "decisions.md").read_text().count("- [") == 2  # reported, not removed


def test_rules_every_prompt_carries_are_never_reported_unused(
    short_tmp: Path, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "security.md").write_text("# Security\n\n- [no-env] Never commit .env files.\n")
    long_ago = time.time() - 365 * DAY
    plant_history(
        short_tmp,
        workspace,
        {"Security/no-env": {"recalls": 0, "recalled_at": 0.0, "stored_at": long_ago}},
    )
    assert cleanup_plan(short_tmp, workspace) == []


def test_entries_stored_by_extract_are_recorded_as_a_store_is(
    short_tmp: Path, workspace: Path
) -> None:
    """`extract --store` goes through the one store path: its entries get a `stored_at` in the
    sidecar (their freshness nudge; cleanup can report them unused), as a `store`'s do."""
    daemon = start_daemon(short_tmp)
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            result = client.extract(
                "From now on, always run the migrations before deploying.", store=True
            )
    finally:
        assert daemon.stop() == 0
    stored = [c.stored for c in result.candidates if c.stored is not None]
    assert stored and all(s.action == "stored" for s in stored)
    saved = json.loads(sidecar(short_tmp, workspace).read_text())["entries"]
    for s in stored:
        assert saved[f"{s.category}/{s.slug}"]["stored_at"] > 0


def test_the_prompt_block_ranks_with_the_usage_nudge_as_query_does(
    short_tmp: Path, workspace: Path
) -> None:
    """Issue 31's decision: the prompt block's relevant layer is ranked by the one search that
    `query` uses, usage nudge included. Two entries tying on words come in the same order in
    both: the one recalled often and lately first, although it is further down the file."""
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text(
        "# Decisions\n\n"
        "- [staging] Deploy the charts with helm on staging.\n"
        "- [prod] Deploy the charts with helm on production.\n"
    )
    now = time.time()
    plant_history(
        short_tmp,
        workspace,
        {"Decision/prod": {"recalls": 20, "recalled_at": now, "stored_at": now}},
    )
    daemon = start_daemon(short_tmp)
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            block = client.context("deploy the charts with helm")
            found = client.query("deploy the charts with helm", mode="lexical")
    finally:
        assert daemon.stop() == 0
    relevant = [entry.slug for entry in block.entries if entry.layer == "relevant"]
    assert relevant == [hit.slug for hit in found.results] == ["prod", "staging"]
