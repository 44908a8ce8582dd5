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
