"""`undo` and `restore` against a real daemon: each kind of operation taken back through the
normal writes (a store, an update, a delete, an applied cleanup, a hand edit, a git checkout),
one at a time or `--to` a time, refusals where a line changed since, undos recorded so the next
undo goes further back, and archived entries restored."""

from __future__ import annotations

import datetime
import json
import subprocess
import time
from pathlib import Path

from memd.core.format import mdformat
from memd_client import Client
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_cli import memd
from tests.git_env import git_env
from tests.polling_sync import wait_until


def entries(workspace: Path, file: str) -> list[tuple[str | None, str]]:
    path = workspace / ".memory" / file
    if not path.exists():
        return []
    return [(e.slug, e.content) for e in mdformat.entries(mdformat.parse(path.read_text()))]


def archive(workspace: Path) -> str:
    path = workspace / ".memory" / "archive.md"
    return path.read_text() if path.exists() else ""


def test_store_update_and_delete_are_undone_newest_first_one_at_a_time(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace, client_name="agent") as client:
        client.store(category="Decision", content="Deploy with Helm.", slug="deploy-tool")
        client.store(category="Decision", content="Deploy with Kustomize.", slug="deploy-tool")
        client.delete(category="Decision", slug="deploy-tool")
        assert entries(workspace, "decisions.md") == []

        planned = client.undo(dry_run=True)
        assert [(c.action, c.outcome) for c in planned.changes] == [("delete", "reverted")]
        assert entries(workspace, "decisions.md") == []  # a dry run writes nothing

        undone = client.undo()
        assert [(c.action, c.outcome) for c in undone.changes] == [("delete", "reverted")]
        assert entries(workspace, "decisions.md") == [("deploy-tool", "Deploy with Kustomize.")]

        undone = client.undo()
        assert [(c.action, c.outcome) for c in undone.changes] == [("update", "reverted")]
        assert entries(workspace, "decisions.md") == [("deploy-tool", "Deploy with Helm.")]

        undone = client.undo()
        assert [(c.action, c.outcome) for c in undone.changes] == [("store", "reverted")]
        assert entries(workspace, "decisions.md") == []

        nothing = client.undo()
        versions = client.history(slug="deploy-tool").versions
    assert nothing.changes == [] and "Nothing to undo" in nothing.message
    assert [v.action for v in versions] == ["store", "update", "delete", "undo", "undo", "undo"]
    assert [v.undoes for v in versions[3:]] == [v.operation for v in reversed(versions[:3])]
    # Nothing was lost: every text the undos took away is in the archive.
    assert "Deploy with Kustomize." in archive(workspace)
    assert "Deploy with Helm." in archive(workspace)


def test_a_hand_edit_and_an_applied_cleanup_are_undone_entry_by_entry(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "quirks.md").write_text(
        "# Quirks\n\n"
        "- [ci-cache] The CI cache expires after 7 days.\n"
        "- [ci-cache-2] The CI cache expires after 7 days.\n"
        "- The flaky test is test_upload.\n"
    )
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()  # loaded and watched
        text = (memory / "quirks.md").read_text()
        (memory / "quirks.md").write_text(text.replace("test_upload", "test_download"))
        wait_until(lambda: client.history(text="The flaky test is test_download.").versions)
        cleaned = client.cleanup(apply=True)
        after_cleanup = entries(workspace, "quirks.md")

        undone = client.undo()
        outcomes = {(c.slug, c.text, c.outcome) for c in undone.changes}
        after_undo = entries(workspace, "quirks.md")

        edit_undone = client.undo()
        final = entries(workspace, "quirks.md")
    assert cleaned.applied
    assert ("ci-cache-2", "The CI cache expires after 7 days.") not in after_cleanup
    assert all(c.action == "cleanup" for c in undone.changes)
    # The merged duplicate is back; the slug the cleanup gave the slug-less line stays.
    assert (
        "ci-cache-2",
        None,
        "reverted",
    ) in outcomes, outcomes
    assert ("ci-cache-2", "The CI cache expires after 7 days.") in after_undo
    assert any(c.outcome == "unchanged" and "slug" in c.reason for c in undone.changes)
    assert [(c.action, c.outcome) for c in edit_undone.changes] == [("edit", "reverted")]
    texts = [text for _, text in final]
    assert "The flaky test is test_upload." in texts
    assert "The flaky test is test_download." not in texts
    assert "The flaky test is test_download." in archive(workspace)
