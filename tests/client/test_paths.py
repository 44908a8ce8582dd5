"""Socket discovery and workspace discovery follow the documented order."""

from __future__ import annotations

from pathlib import Path

from memd_client import default_socket_path, find_workspace


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
