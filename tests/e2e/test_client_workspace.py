"""A client made without `workspace=` uses the project of the current directory, as the CLI does:
the nearest ancestor holding `.memory/` or `.git`, decided when the client is made. `Client` and
`AsyncClient` behave the same, against a real daemon."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from memd_client import Client
from memd_client.aio import AsyncClient
from tests.conftest import DaemonProcess, skip_inside_a_project

NO_DIRECTORY = (
    "This client has no workspace (when it was made, its current directory was in no project, "
    "with no .memory/ or .git in it or above it, or could not be read); pass workspace= (a "
    "project root path) to the call or to the client."
)


@pytest.fixture
def inside(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make `workspace` a git project and move into a folder deep inside it."""
    (workspace / ".git").mkdir()
    deep = workspace / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    return deep


def test_client_without_a_workspace_stores_in_the_project_of_the_current_directory(
    daemon: DaemonProcess, workspace: Path, inside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Client(daemon.socket_path) as client:
        assert client.workspace == str(workspace)
        monkeypatch.chdir(workspace.parent)  # moving later changes nothing: decided when made
        stored = client.store(category="Decision", content="Keep one writer per category file.")
        assert stored.action == "stored"
        assert (client.stats()).workspace == str(workspace)
    assert "Keep one writer per category file." in (workspace / ".memory/decisions.md").read_text()
    assert not (inside / ".memory").exists()
    assert not (workspace.parent / ".memory").exists()


async def test_async_client_picks_the_same_default(
    daemon: DaemonProcess, workspace: Path, inside: Path
) -> None:
    async with AsyncClient(daemon.socket_path) as client:
        assert client.workspace == Client(daemon.socket_path).workspace == str(workspace)
        stored = await client.store(category="Quirk", content="The async client agrees.")
        assert stored.action == "stored"
    assert "The async client agrees." in (workspace / ".memory/quirks.md").read_text()


async def test_without_a_readable_current_directory_calls_ask_for_a_workspace(
    daemon: DaemonProcess, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = workspace / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    os.rmdir(gone)
    with Client(daemon.socket_path) as client:
        assert client.workspace is None
        assert client.status().pid == daemon.process.pid  # no workspace needed
        with pytest.raises(ValueError, match=f"^{re.escape(NO_DIRECTORY)}$"):
            client.stats()
        assert client.stats(workspace=workspace).workspace == str(workspace)
    async with AsyncClient(daemon.socket_path) as aclient:
        assert aclient.workspace is None
        with pytest.raises(ValueError, match=f"^{re.escape(NO_DIRECTORY)}$"):
            await aclient.stats()


def test_outside_any_project_a_client_has_no_workspace_and_creates_nothing(
    daemon: DaemonProcess, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = short_tmp / "bare"
    bare.mkdir()
    skip_inside_a_project(bare)
    monkeypatch.chdir(bare)
    with Client(daemon.socket_path) as client:
        assert client.workspace is None
        with pytest.raises(ValueError, match=f"^{re.escape(NO_DIRECTORY)}$"):
            client.store(category="Decision", content="Never land here.")
    assert not (bare / ".memory").exists()
