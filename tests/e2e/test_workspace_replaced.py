"""A loaded workspace whose root directory is replaced under it, through a real daemon.

memd checks the root's identity (device and inode, no link followed) before each write and on
each request: a root that is now a link to the user-wide memory is refused as a project, and
nothing of the project (a new store, or an entry deleted with the old directory) is ever written
into the user-wide memory; a root replaced by another directory is a new workspace.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memd_client import Client
from memd_client.errors import InvalidParams
from tests.conftest import DaemonProcess

RULE = "Use uv to manage Python packages, never pip."


def _user_wide() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "memd" / "global"


@pytest.mark.parametrize("then", ["store", "query then store"])
def test_a_project_swapped_for_a_link_to_the_user_wide_memory_writes_nothing_there(
    daemon: DaemonProcess, short_tmp: Path, then: str
) -> None:
    project = short_tmp / "app"
    (project / ".git").mkdir(parents=True)
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
        client.store(category="Decision", content="A real project rule.", slug="real")
        shutil.rmtree(project)
        project.symlink_to(_user_wide())  # at once: every cached answer is still warm
        if then == "query then store":
            with pytest.raises(InvalidParams):
                client.query("rule")
        with pytest.raises(InvalidParams) as refused:
            client.store(category="Decision", content="Land in the user-wide memory.")
        assert "user-wide memory" in refused.value.message
    other = short_tmp / "other"
    (other / ".git").mkdir(parents=True)
    with Client(daemon.socket_path, workspace=other) as client:  # still served as itself
        assert [e.content for e in client.list(sources=["global"]).entries] == [RULE]
    memory = _user_wide() / ".memory"
    held = "".join(path.read_text() for path in memory.glob("*.md"))
    assert "A real project rule." not in held
    assert "Land in the user-wide memory." not in held


def test_a_project_directory_replaced_by_another_is_a_new_workspace(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = short_tmp / "app"
    (project / ".git").mkdir(parents=True)
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(category="Decision", content="Use SQLite for storage.", slug="db")
        shutil.rmtree(project)
        (project / ".git").mkdir(parents=True)  # a fresh clone at the same path
        stored = client.store(category="Quirk", content="The CI runner has no network.")
        assert stored.action == "stored"
        assert [e.slug for e in client.list().entries] == [stored.slug]
    assert "Use SQLite" not in "".join(p.read_text() for p in project.glob(".memory/*.md"))
