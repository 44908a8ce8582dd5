"""While semantic search is still loading, a query by meaning answered by words alone says so,
in the CLI's text, its --json (`semantic_loading`), `memd context`'s stderr and the MCP tools'
text, with how many entries are ready; once it is ready, none of them does. A daemon whose
semantic search is off says nothing of loading.

The daemon runs a stand-in model whose loading waits for a gate file
(`tests.gated_model_daemon`), so "still loading" lasts exactly until the test opens the gate.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_cli import memd
from tests.polling_sync import wait_until

pytest.importorskip("numpy")

DECISIONS = (
    "# Decisions\n\nArchitectural commitments made in this project.\n\n"
    "- [jwt-expiry] Bearer JWTs expire after 15 minutes.\n"
    "- [pool-size] Keep the database connection pool at 20 connections.\n"
    "- [changelog] Write migration notes in the changelog.\n"
    "- [css-grid] Lay out the dashboard with CSS grid, not floats.\n"
)
PARAPHRASE = "how long does a login session stay valid?"
LOADING = "Semantic search is still loading (0 of 4 entries ready)"
READY_DEADLINE = 60.0


@pytest.fixture
def gate(short_tmp: Path) -> Path:
    return short_tmp / "model-gate"


@pytest.fixture
def gated_daemon(short_tmp: Path, gate: Path) -> Iterator[DaemonProcess]:
    """A daemon with semantic search on whose model loads once `gate` exists."""
    env = {
        **_base_env(short_tmp),
        "MEMD_TEST_MODEL_GATE": str(gate),
    }
    config = short_tmp / "on.toml"
    config.write_text("semantic = true\n")  # the tests' default config turns it off
    command = (sys.executable, "-m", "tests.gated_model_daemon")
    process = start_daemon(short_tmp, "--config", str(config), memd=command, env=env)
    try:
        yield process
    finally:
        gate.touch()  # a load still waiting ends at once
        assert process.stop() == 0, process.stderr()


def _base_env(short_tmp: Path) -> dict[str, str]:
    return dict(os.environ, HOME=str(short_tmp / "home"), XDG_CACHE_HOME=str(short_tmp / "cache"))


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / ".memory").mkdir()
    (workspace / ".memory" / "decisions.md").write_text(DECISIONS)
    return workspace


def test_the_cli_says_semantic_search_is_loading_until_it_is_ready(
    gated_daemon: DaemonProcess, project: Path, gate: Path
) -> None:
    sock = gated_daemon.socket_path

    missed = memd("query", PARAPHRASE, cwd=project, socket=sock)
    assert missed.returncode == 0, missed.stderr
    assert missed.stdout.strip() == (
        f'No memories match "{PARAPHRASE}". {LOADING}, so only words were matched; retry in a '
        "few seconds to search by meaning too."
    )

    found = memd("query", "connection pool", cwd=project, socket=sock)
    lines = found.stdout.strip().splitlines()
    assert "[pool-size]" in lines[0]
    assert lines[-1] == f"{LOADING}; showing word matches."

    as_json = json.loads(memd("query", "--json", PARAPHRASE, cwd=project, socket=sock).stdout)
    assert as_json["mode"] == "lexical"
    assert as_json["semantic_loading"] == {"ready": 0, "total": 4}

    context = memd("context", "connection pool", cwd=project, socket=sock)
    assert context.returncode == 0
    assert "[pool-size]" in context.stdout
    assert LOADING not in context.stdout  # the block goes into a prompt: unchanged
    assert f"memd: {LOADING}; the block's relevant entries are word matches only." in (
        context.stderr
    )

    # Mode lexical asked for words only: nothing to say.
    lexical = memd("query", "--mode", "lexical", "connection pool", cwd=project, socket=sock)
    assert "still loading" not in lexical.stdout

    gate.touch()
    with Client(sock, workspace=project) as client:
        wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=READY_DEADLINE)
    ready = memd("query", "connection pool", cwd=project, socket=sock)
    assert "[pool-size]" in ready.stdout and "still loading" not in ready.stdout
    ready_json = json.loads(memd("query", "--json", "pool", cwd=project, socket=sock).stdout)
    assert (ready_json["mode"], ready_json["semantic_loading"]) == ("hybrid", None)
    context = memd("context", "connection pool", cwd=project, socket=sock)
    assert "still loading" not in context.stderr


async def test_the_mcp_tools_say_semantic_search_is_loading(
    gated_daemon: DaemonProcess, project: Path, short_tmp: Path, env: dict[str, str]
) -> None:
    from tests.e2e.test_mcp import bridge, call

    args = ("--socket", str(gated_daemon.socket_path), "--workspace", str(project))
    async with bridge(short_tmp, env, *args) as client:
        missed, data = await call(client, "queryMemory", query=PARAPHRASE)
        assert missed == (
            f'No memories found matching "{PARAPHRASE}". {LOADING}, so only words were '
            "matched; call again in a few seconds to search by meaning too."
        )
        assert data["semantic_loading"] == {"ready": 0, "total": 4}
        found, _ = await call(client, "queryMemory", query="connection pool")
        assert found.splitlines()[-1] == f"{LOADING}; showing word matches."
        block, data = await call(client, "memoryContext", text="connection pool")
        assert "[pool-size]" in block
        assert f"{LOADING}; the relevant memories were matched by words only" in block
        assert data["semantic_loading"] == {"ready": 0, "total": 4}


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """The bridge's environment, as `tests.e2e.test_mcp` gives it."""
    return {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }


def test_with_semantic_search_off_a_query_says_nothing_of_loading(
    short_tmp: Path, project: Path
) -> None:
    config = short_tmp / "memd.toml"
    config.write_text("semantic = false\n")
    process = start_daemon(short_tmp, "--config", str(config), env=_base_env(short_tmp))
    try:
        missed = memd("query", PARAPHRASE, cwd=project, socket=process.socket_path)
        assert missed.stdout.strip() == f'No memories match "{PARAPHRASE}".'
        as_json = json.loads(
            memd("query", "--json", PARAPHRASE, cwd=project, socket=process.socket_path).stdout
        )
        assert as_json["semantic_loading"] is None
    finally:
        assert process.stop() == 0, process.stderr()
