"""Inline #tags through a real daemon: `query` and `list` filtered by tags (all must match),
tags on results, invalid tags, the CLI's --tag and queryMemory's `tags`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd.core.search.usage import MAX_NUDGE
from memd_client import Client, InvalidParams, protocol as p
from memd_client.aio import AsyncClient
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd
from tests.e2e.test_mcp import bridge, call

DECISIONS = (
    "# Decisions\n\nArchitectural commitments made in this project.\n\n"
    "- [one-transaction] Run each schema migration in one transaction. #db #Migrations\n"
    "- [pool-size] Keep the connection pool at 20 connections. #db #perf\n"
    "- [cache-keys] Cache keys carry the schema version. #perf\n"
    "- [plain] Write migration notes in the changelog, not `#db` comments.\n"
)
SECURITY = (
    "# Security\n\nRules that must NEVER be broken. Always read this file.\n\n"
    "- [no-dump] Never copy a production database dump to a laptop. #security #db\n"
    "- [issue-ref] Rotate keys after incident #12 and see https://x.io/runbook#keys.\n"
)


@pytest.fixture
def env(short_tmp: Path) -> dict[str, str]:
    """Private home, state, config and runtime directories for `memd mcp` (as in test_mcp)."""
    return {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        # The tree under test: without it the bridge imports the installed memd_client.
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }


@pytest.fixture
def tagged(workspace: Path) -> Path:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text(DECISIONS)
    (memory / "security.md").write_text(SECURITY)
    return workspace


def _slugs(entries: list[p.EntryInfo] | list[p.QueryHit]) -> list[str | None]:
    return [entry.slug for entry in entries]


def test_list_and_query_keep_the_entries_carrying_every_tag(
    daemon: DaemonProcess, tagged: Path
) -> None:
    with Client(daemon.socket_path, workspace=tagged) as client:
        everything = client.list()
        assert len(everything.entries) == 6
        by_slug = {entry.slug: entry.tags for entry in everything.entries}
        assert by_slug == {
            "one-transaction": ["db", "migrations"],
            "pool-size": ["db", "perf"],
            "cache-keys": ["perf"],
            "plain": [],  # `#db` is in a code span
            "no-dump": ["db", "security"],
            "issue-ref": [],  # an issue number and a URL fragment
        }

        # list: one tag, two tags (all must match), any spelling of a tag, a category.
        listed = client.list(tags=["db"]).entries
        assert _slugs(listed) == ["one-transaction", "pool-size", "no-dump"]  # category order
        assert _slugs(client.list(tags=["#DB", "perf"]).entries) == ["pool-size"]
        assert _slugs(client.list(tags=["db"], category="Security").entries) == ["no-dump"]
        assert client.list(tags=["db", "cooking"]).entries == []
        assert _slugs(client.list(tags=[]).entries) == _slugs(everything.entries)  # no filter

        # query with an empty text lists the tagged entries, `total` counting only them.
        listing = client.query("", tags=["db"], limit=2)
        assert _slugs(listing.results) == ["one-transaction", "pool-size"]
        assert listing.total == 3
        assert all(hit.score == 0.0 for hit in listing.results)

        # query with text ranks only among the tagged entries; filtered before `limit`.
        untagged = client.query("migration", limit=20)
        assert _slugs(untagged.results)[0] in {"one-transaction", "plain"}
        assert set(_slugs(untagged.results)) == {"one-transaction", "plain"}
        found = client.query("migration", tags=["db"], limit=1)
        assert _slugs(found.results) == ["one-transaction"]
        assert found.total == 1
        assert found.results[0].tags == ["db", "migrations"]
        # A hit's score does not depend on the filter (the corpus is the same); only usage
        # (each query above recalled it once more) may nudge it, by at most MAX_NUDGE.
        same = next(hit for hit in untagged.results if hit.slug == "one-transaction")
        assert same.score <= found.results[0].score <= same.score * (1 + MAX_NUDGE)

        two = client.query("connections pool cache", tags=["perf", "#db"])
        assert (_slugs(two.results), two.total) == (["pool-size"], 1)
        assert client.query("migration", tags=["perf"]).total == 0
        assert client.query("dump", tags=["db"], category="Decision").total == 0


def test_an_invalid_tag_is_invalid_params_naming_the_tag(
    daemon: DaemonProcess, tagged: Path
) -> None:
    with Client(daemon.socket_path, workspace=tagged) as client:
        for bad in ("db migrations", "#123", "", "-x"):
            with pytest.raises(InvalidParams) as caught:
                client.query("x", tags=["db", bad])
            assert caught.value.message.startswith(f"tags: {bad!r} is not a tag;")
            with pytest.raises(InvalidParams, match="is not a tag"):
                client.list(tags=[bad])
        with pytest.raises(TypeError, match="list of tags"):
            client.list(tags="db")  # one string would otherwise be three one-letter tags


async def test_async_client_filters_by_tags(daemon: DaemonProcess, tagged: Path) -> None:
    async with AsyncClient(daemon.socket_path, workspace=tagged) as client:
        listed = await client.list(tags=["security"])
        assert _slugs(listed.entries) == ["no-dump"]
        found = await client.query("database", tags=["db"])
        assert set(_slugs(found.results)) == {"no-dump"}
        stored = await client.store(category="Quirk", content="The test DB resets nightly. #db")
        assert stored.action == "stored"
        assert len((await client.list(tags=["db"])).entries) == 4


def test_cli_tag_flag(daemon: DaemonProcess, tagged: Path) -> None:
    sock = daemon.socket_path
    listed = memd("list", "--tag", "db", "-t", "#perf", cwd=tagged, socket=sock)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "Decision (decisions.md)",
        "     6  [pool-size] Keep the connection pool at 20 connections. #db #perf",
    ]
    found = json.loads(
        memd("query", "--json", "--tag", "db", "dump", cwd=tagged, socket=sock).stdout
    )
    assert [hit["slug"] for hit in found["results"]] == ["no-dump"]
    assert found["results"][0]["tags"] == ["db", "security"]

    nothing = memd("query", "--tag", "cooking", cwd=tagged, socket=sock)
    assert (nothing.returncode, nothing.stdout.strip()) == (0, "No memories tagged #cooking.")
    nothing = memd("list", "-t", "cooking", "-t", "db", cwd=tagged, socket=sock)
    assert nothing.stdout.strip() == "No entries tagged #cooking and #db."

    bad = memd("list", "--tag", "1x", cwd=tagged, socket=sock)
    assert bad.returncode == 1
    assert bad.stderr.startswith("memd: tags: '1x' is not a tag;")
    as_json = memd("query", "--json", "--tag", "1x", "db", cwd=tagged, socket=sock)
    error = json.loads(as_json.stdout)["error"]
    assert (error["type"], error["code"]) == ("InvalidParams", -32602)
    assert "'1x'" in error["message"]


async def test_query_memory_takes_optional_tags(
    daemon: DaemonProcess, short_tmp: Path, env: dict[str, str], tagged: Path
) -> None:
    args = ("--socket", str(daemon.socket_path), "--workspace", str(tagged))
    async with bridge(short_tmp, env, *args) as c:
        schema = {t.name: t.input_schema for t in (await c.list_tools()).tools}["queryMemory"]
        assert schema["required"] == ["query"]  # HackLM's calls stay valid
        assert "tags" in schema["properties"]

        said, found = await call(c, "queryMemory", query="", tags=["db", "perf"])
        assert said.startswith("Found 1 memory:")
        assert [hit["slug"] for hit in found["results"]] == ["pool-size"]
        assert found["results"][0]["tags"] == ["db", "perf"]
        said, found = await call(c, "queryMemory", query="migration")  # without tags, as before
        assert found["total"] == 2
        said, _ = await call(c, "queryMemory", query="migration", tags=["security"])
        assert said == 'No memories tagged #security found matching "migration".'
