"""One category file memd cannot read must not blind the workspace (issue 19): every unscoped
read serves the readable files and names the unreadable one beside its results; a read scoped
to that one category still fails with the file's error."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.cli.render import render_context, render_entries, render_query, unreadable_lines
from memd.mcp_bridge import text as mcp_text
from memd_client import Client, FileFormatError, protocol as p
from tests.conftest import DaemonProcess


def _plant(workspace: Path) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    (memory / "decisions.md").write_bytes(b"# Decisions\n\n- [bad] caf\xe9 latin-1\n")
    (memory / "quirks.md").write_text("# Quirks\n\n- [flaky-clock] The CI clock drifts.\n")


def test_unscoped_reads_serve_readable_files_and_name_the_unreadable_one(
    daemon: DaemonProcess, workspace: Path
) -> None:
    _plant(workspace)
    with Client(daemon.socket_path, workspace=workspace) as client:
        found = client.query("clock")
        assert [hit.slug for hit in found.results] == ["flaky-clock"]
        listed = client.list()
        assert [entry.slug for entry in listed.entries] == ["flaky-clock"]
        got = client.get(slug="flaky-clock")
        assert [entry.slug for entry in got.entries] == ["flaky-clock"]
        block = client.context("clock")
        assert "flaky-clock" in block.markdown
        for result in (found, listed, got, block):
            assert [(u.category, u.file, u.code) for u in result.unreadable] == [
                ("Decision", "decisions.md", 1004)
            ]
            assert "UTF-8" in result.unreadable[0].message
        # A read of that one category still fails with the file's own error.
        with pytest.raises(FileFormatError, match="UTF-8"):
            client.query("clock", category="Decision")
        with pytest.raises(FileFormatError, match="UTF-8"):
            client.list(category="Decision")
        # A slug that is nowhere readable says which file could not be searched.
        with pytest.raises(Exception, match=r"decisions\.md"):
            client.get(slug="bad")

    # The MCP texts carry one line naming the file; the CLI prints its results on stdout and
    # that line on stderr.
    for result, text in (
        (found, render_query(found, "clock")),
        (listed, render_entries(listed)),
        (block, render_context(block)),
    ):
        assert "flaky-clock" in text and "cannot be read" not in text, text
        assert unreadable_lines(result.unreadable) == [
            f"decisions.md cannot be read, so it was left out: {result.unreadable[0].message}"
        ]
    for shown in (
        mcp_text.render_query(found, "clock"),
        mcp_text.render_entries(listed.entries, listed.unreadable),
        mcp_text.render_context(block),
    ):
        assert "decisions.md cannot be read" in shown, shown
        assert "flaky-clock" in shown


def test_old_results_without_the_field_still_decode() -> None:
    import msgspec

    old = msgspec.json.encode({"results": [], "total": 0})
    assert msgspec.json.decode(old, type=p.QueryResult).unreadable == []


def test_the_cli_lists_the_readable_files_and_names_the_unreadable_one_on_stderr(
    daemon: DaemonProcess, workspace: Path
) -> None:
    from tests.e2e.test_cli import memd

    _plant(workspace)
    listed = memd("list", cwd=workspace, socket=daemon.socket_path)
    assert listed.returncode == 0, listed.stderr  # a warning beside a served result
    assert "[flaky-clock]" in listed.stdout
    assert "cannot be read" not in listed.stdout  # stdout is for results only
    assert listed.stderr.startswith("memd: decisions.md cannot be read, so it was left out:")
    scoped = memd("list", "--category", "Decision", cwd=workspace, socket=daemon.socket_path)
    assert scoped.returncode == 1
    assert "UTF-8" in scoped.stderr
