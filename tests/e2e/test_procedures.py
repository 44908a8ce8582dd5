"""Procedures end to end, through a real daemon: stored from the CLI and from MCP, outcomes
recorded beside the memory (never in it) and changing the ranking, and layer C of `context`
after layers A and B, within the budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd_client import Client, EntryNotFound, InvalidEntry
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd
from tests.e2e.test_mcp import bridge, call, fails

DEPLOY = "- [deploy-staging] Deploy to staging: build the image; push it; restart the web pods."


def test_cli_stores_a_procedure_and_records_outcomes(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock = daemon.socket_path
    stored = memd(
        "procedure",
        "Deploy to staging",
        "build the image",
        "push it",
        "restart the web pods",
        cwd=workspace,
        socket=sock,
    )
    assert stored.returncode == 0, stored.stderr
    assert "[deploy-staging]" in stored.stdout
    text = (workspace / ".memory" / "procedures.md").read_text()
    assert text.endswith(DEPLOY + "\n")

    again = memd(
        "procedure",
        "deploy to  staging",
        "build",
        "push",
        cwd=workspace,
        socket=sock,
    )
    assert again.returncode == 0, again.stderr
    lines = (workspace / ".memory" / "procedures.md").read_text().splitlines()
    assert lines.count("- [deploy-staging] deploy to staging: build; push.") == 1
    assert DEPLOY not in lines  # updated in place: the old text went to the archive
    assert (
        DEPLOY.removeprefix("- [deploy-staging] ")
        in (workspace / ".memory" / "archive.md").read_text()
    )

    worked = memd("outcome", "deploy-staging", "success", "--json", cwd=workspace, socket=sock)
    assert worked.returncode == 0, worked.stderr
    assert json.loads(worked.stdout)["outcomes"] == {"successes": 1, "failures": 0}
    listed = json.loads(memd("list", "--json", cwd=workspace, socket=sock).stdout)
    (procedure,) = [e for e in listed["entries"] if e["file"] == "procedures.md"]
    assert procedure["outcomes"] == {"successes": 1, "failures": 0}
    assert "success" not in (workspace / ".memory" / "procedures.md").read_text()

    unknown = memd("outcome", "no-such-thing", "failure", cwd=workspace, socket=sock)
    assert unknown.returncode == 1
    assert "No procedure has the slug 'no-such-thing'" in unknown.stderr

    bad = memd("procedure", "Release", "tag it; push it", cwd=workspace, socket=sock)
    assert bad.returncode == 1
    assert "holds '; '" in bad.stderr


def test_outcomes_change_the_ranking(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.procedure("Deploy the web app", ["build the web image", "roll the pods"])
        client.procedure("Deploy the web site", ["build the web bundle", "sync the bucket"])
        before = [hit.slug for hit in client.query("deploy web").results]
        assert len(before) == 2
        last = before[-1]
        assert last is not None
        client.outcome(last, "success")
        client.outcome(last, "success")
        after = client.query("deploy web").results
        assert after[0].slug == last
        assert after[0].outcomes is not None and after[0].outcomes.successes == 2
        client.outcome(last, "failure")
        client.outcome(last, "failure")
        client.outcome(last, "failure")
        sunk = client.query("deploy web").results
        assert sunk[-1].slug == last
        with pytest.raises(EntryNotFound):
            client.outcome("deploy-the-moon", "success")
        with pytest.raises(InvalidEntry):
            client.procedure("Deploy: now", ["go"])


def test_different_names_never_replace_each_other(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        first = client.procedure("Deploy to staging", ["build", "push"])
        second = client.procedure("Deploy staging", ["ask Dana", "press the button"])
        assert (first.slug, second.slug) == ("deploy-staging", "deploy-staging-2")
        assert {first.action, second.action} == {"stored"}
        # A plain store into Procedure, in the procedure shape, follows the same slug rule:
        # another name is stored beside, never judged a changed value of its neighbour.
        prod = client.store(category="procedure", content="Deploy to production: build; push.")
        again = client.store(category="Procedure", content="Deploy to staging: build; push; tag.")
        assert (prod.action, prod.slug) == ("stored", "deploy-production")
        assert (again.action, again.slug) == ("updated", "deploy-staging")
    lines = (workspace / ".memory" / "procedures.md").read_text().splitlines()
    assert "- [deploy-staging] Deploy to staging: build; push; tag." in lines
    assert "- [deploy-staging-2] Deploy staging: ask Dana; press the button." in lines
    assert "- [deploy-production] Deploy to production: build; push." in lines


def test_context_with_a_file_and_a_task_gives_layers_a_b_c_in_order(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            origin="user", category="Security", content="Never commit .env files.", slug="no-env"
        )
        client.store(
            category="Quirk",
            content="The staging web pods take two minutes to restart.",
            slug="slow-pods",
        )
        client.procedure(
            "Deploy to staging", ["build the image", "push it", "restart the web pods"]
        )
        client.procedure("Deploy docs", ["build the docs", "upload to the staging bucket"])
        client.outcome("deploy-staging", "success")
        block = client.context(
            "deploy to staging and restart the web pods", file="deploy/staging.yaml"
        )
        layers = [entry.layer for entry in block.entries]
        assert layers[0] == "always"
        assert "relevant" in layers and "procedures" in layers
        assert layers == sorted(layers, key=["always", "relevant", "procedures"].index)
        procedures = [e for e in block.entries if e.layer == "procedures"]
        assert procedures[0].slug == "deploy-staging"
        assert procedures[0].outcomes is not None and procedures[0].outcomes.successes == 1
        assert all(e.slug != "deploy-staging" for e in block.entries if e.layer == "relevant")
        assert block.tokens <= block.budget_tokens
        markdown = block.markdown
        assert markdown.index("Always follow:") < markdown.index("Relevant to this prompt:")
        assert markdown.index("Relevant to this prompt:") < markdown.index("Procedures for this")
        assert "  1. build the image\n" in markdown
        assert "(worked 1 of 1 time)" in markdown

        explained = {e.slug: e for e in client.why("deploy/staging.yaml").entries}
        assert explained["deploy-staging"].reason == "score"
        assert "never for a file alone" in explained["deploy-staging"].detail
        with_task = client.why("deploy/staging.yaml", "deploy to staging and restart the web pods")
        given = {e.slug: e for e in with_task.entries}["deploy-staging"]
        assert (given.reason, given.layer) == ("given", "procedures")

        tight = client.context("deploy to staging and restart the web pods", budget_tokens=60)
        assert tight.tokens <= 60
        shown = [e.slug for e in tight.entries if e.layer == "procedures"]
        assert set(shown) | set(tight.omitted_procedures) >= {"deploy-staging"}


async def test_mcp_stores_a_procedure_and_records_an_outcome(
    short_tmp: Path, workspace: Path, daemon: DaemonProcess
) -> None:
    env = {  # as tests/e2e/test_mcp.py's `env`
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        said, data = await call(
            c, "storeProcedure", name="Deploy to staging", steps=["build the image", "push it"]
        )
        assert data["slug"] == "deploy-staging" and "[deploy-staging]" in said
        said, data = await call(c, "recordOutcome", slug="deploy-staging", outcome="success")
        assert data["outcomes"] == {"successes": 1, "failures": 0}
        assert "worked 1 of 1 time." in said
        error = await fails(c, "recordOutcome", slug="nope", outcome="failure")
        assert "No procedure has the slug 'nope'" in error
        error = await fails(c, "storeProcedure", name="Deploy", steps=["a; b"])
        assert "holds '; '" in error
    text = (workspace / ".memory" / "procedures.md").read_text()
    assert "- [deploy-staging] Deploy to staging: build the image; push it." in text
