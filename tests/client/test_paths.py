"""Socket discovery and workspace discovery follow the documented order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd_client import (
    FoundWorkspace,
    default_socket_path,
    find_workspace,
    find_workspace_with_reason,
)
from tests.conftest import skip_inside_a_project


def test_socket_path_order() -> None:
    env = {"MEMD_SOCKET": "/run/x.sock", "XDG_RUNTIME_DIR": "/run/user/7"}
    assert default_socket_path("/explicit.sock", env=env) == "/explicit.sock"
    assert default_socket_path(None, env=env) == "/run/x.sock"
    assert default_socket_path(None, env={"XDG_RUNTIME_DIR": "/run/user/7"}) == (
        "/run/user/7/memd/memd.sock"
    )
    assert default_socket_path(None, env={}, uid=7, platform="linux") == "/tmp/memd-7/memd.sock"


def test_macos_socket_lives_where_launchd_can_keep_it() -> None:
    env = {"HOME": "/Users/ada"}
    assert default_socket_path(None, env=env, platform="darwin") == (
        "/Users/ada/Library/Application Support/memd/memd.sock"
    )
    assert default_socket_path(None, env=dict(env, XDG_RUNTIME_DIR="/r"), platform="darwin") == (
        "/r/memd/memd.sock"
    )


def test_workspace_is_the_nearest_root(short_tmp: Path) -> None:
    root = short_tmp / "proj"
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_workspace(deep) == str(deep)
    (root / ".git").mkdir()
    assert find_workspace(deep) == str(root)
    (root / "src" / ".memory").mkdir()
    assert find_workspace(deep) == str(root / "src")


def test_a_bare_directory_is_its_own_workspace_found_by_nothing(short_tmp: Path) -> None:
    bare = short_tmp / "x" / "y"
    bare.mkdir(parents=True)
    skip_inside_a_project(bare)
    assert find_workspace_with_reason(bare) == FoundWorkspace(str(bare), "start")


def test_the_reason_names_the_marker_of_the_nearest_root(short_tmp: Path) -> None:
    repo = short_tmp / "repo"
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    (repo / ".git").write_text("gitdir: ../elsewhere\n")  # a worktree's .git is a file
    assert find_workspace_with_reason(deep) == FoundWorkspace(str(repo), "git")
    (repo / ".memory").mkdir()
    assert find_workspace_with_reason(deep) == FoundWorkspace(str(repo), "memory")
    (deep / ".git").mkdir()  # a nearer .git (a submodule) wins over a farther .memory/
    assert find_workspace_with_reason(deep) == FoundWorkspace(str(deep), "git")


def test_a_relative_start_gives_an_absolute_root(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (short_tmp / "p" / ".memory").mkdir(parents=True)
    (short_tmp / "p" / "sub").mkdir()
    monkeypatch.chdir(short_tmp / "p" / "sub")
    assert find_workspace_with_reason() == FoundWorkspace(str(short_tmp / "p"), "memory")
    found = find_workspace_with_reason("..")
    assert os.path.isabs(found.path) and found == (str(short_tmp / "p"), "memory")
    assert find_workspace(".") == found.path
