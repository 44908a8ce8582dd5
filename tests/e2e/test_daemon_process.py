"""A real `memd serve` subprocess driven over its socket by the client library."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memd.core.format import mdformat
from memd_client import (
    Client,
    DaemonUnavailable,
    EntryNotFound,
    InvalidParams,
    WorkspaceNotFound,
    _calls,
)
from tests.conftest import DaemonProcess, start_daemon

WRITERS = 16
PER_WRITER = 50
WRITER_SCRIPT = textwrap.dedent(
    f"""
    import sys
    sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
    from bench._text import word
    from memd_client import Client
    socket_path, workspace, writer = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Client(socket_path, workspace=workspace, timeout=120) as client:
        for i in range(int(sys.argv[4])):
            content = f"Writer{{writer}} note{{i}}: {{word(writer, i)}} holds."
            result = client.store(category="Decision", content=content)
            assert result.action == "stored", result
    """
)


def test_store_query_get_list_delete_stats_status(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        stored = client.store(category="decision", content="Take the lock before writing the file.")
        assert (stored.action, stored.category, stored.file) == (
            "stored",
            "Decision",
            "decisions.md",
        )
        client.store(
            category="Quirk", content="Watchfiles goes blind when its directory is recreated."
        )
        client.store(
            category="Preference", content="Use msgspec Structs for every wire type.", slug="wire"
        )

        hits = client.query("writing lock").results
        assert hits[0].slug == stored.slug and hits[0].category == "Decision"
        assert client.query("").total == 3

        got = client.get(category="Preference", slug="wire").entries
        assert [e.content for e in got] == ["Use msgspec Structs for every wire type."]
        by_lines = client.get(file="decisions.md", lines="1-100").entries
        assert [e.slug for e in by_lines] == [stored.slug]
        with pytest.raises(EntryNotFound):
            client.get(category="Preference", slug="missing")

        assert [e.category for e in client.list().entries] == ["Quirk", "Preference", "Decision"]
        assert client.stats().total == 3

        deleted = client.delete(category="Preference", slug="wire")
        assert deleted.deleted and deleted.entry is not None
        assert "wire" in (workspace / ".memory" / "archive.md").read_text()
        assert not client.delete(category="Preference", slug="wire").deleted

        status = client.status()
        assert status.pid == daemon.process.pid and status.workspaces == [str(workspace)]


def test_every_acknowledged_write_is_in_the_file(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        result = client.store(origin="user", category="Security", content="Never log secrets.")
        text = (workspace / ".memory" / "security.md").read_text()
        assert f"- [{result.slug}] Never log secrets.\n" in text
        assert text.startswith("# Security\n\nRules that must NEVER be broken.")


def test_sixteen_processes_storing_at_once_lose_nothing(
    daemon: DaemonProcess, workspace: Path
) -> None:
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER_SCRIPT,
                str(daemon.socket_path),
                str(workspace),
                str(n),
                str(PER_WRITER),
            ],
            stderr=subprocess.PIPE,
        )
        for n in range(WRITERS)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err.decode()
    text = (workspace / ".memory" / "decisions.md").read_text()
    entries = mdformat.entries(mdformat.parse(text))
    contents = [e.content for e in entries]
    assert len(contents) == WRITERS * PER_WRITER
    assert len(set(contents)) == len(contents)
    assert len({e.slug for e in entries}) == len(entries)
    expected = {f"Writer{w} note{i}:" for w in range(WRITERS) for i in range(PER_WRITER)}
    assert {" ".join(c.split()[:2]) for c in contents} == expected
    assert mdformat.render(mdformat.parse(text)) == text


def test_a_second_daemon_on_a_live_socket_is_refused(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "memd", "serve", "--socket", str(daemon.socket_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode != 0
    assert "already running" in second.stderr and str(daemon.process.pid) in second.stderr
    assert daemon.socket_path.exists()
    with Client(daemon.socket_path) as client:
        assert client.status().pid == daemon.process.pid


def test_a_stale_socket_file_is_replaced(short_tmp: Path) -> None:
    stale = short_tmp / "memd.sock"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(stale))
    leftover.close()
    process = start_daemon(short_tmp)
    try:
        with Client(process.socket_path) as client:
            assert client.status().pid == process.process.pid
    finally:
        assert process.stop() == 0


def test_socket_is_private_and_its_new_directory_is_0700(short_tmp: Path) -> None:
    run_dir = short_tmp / "run"
    process = start_daemon(short_tmp, socket_path=run_dir / "memd.sock")
    try:
        assert stat.S_IMODE(os.stat(run_dir).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(process.socket_path).st_mode) == 0o600
    finally:
        assert process.stop() == 0


def test_sigint_stops_gracefully(short_tmp: Path, workspace: Path) -> None:
    process = start_daemon(short_tmp)
    with Client(process.socket_path, workspace=workspace) as client:
        client.store(category="Quirk", content="SIGINT must exit cleanly.")
    process.process.send_signal(2)
    assert process.process.wait(timeout=20) == 0
    assert not process.socket_path.exists()
    assert "SIGINT" in process.stderr()
    with pytest.raises(DaemonUnavailable):
        Client(process.socket_path, timeout=5).status()


def test_workspace_must_be_absolute_and_exist(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path) as client:
        with pytest.raises(WorkspaceNotFound, match="not an existing directory"):
            client.stats(workspace=workspace / "missing")
        with pytest.raises(InvalidParams, match="absolute"):
            client.call(_calls.stats("relative/path"))


def test_reads_see_hand_edits_and_deletions_at_once(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Preference", content="Prefer ripgrep over grep.", slug="rg")
        path = workspace / ".memory" / "preferences.md"
        with path.open("a") as handle:
            handle.write("\n- [by-hand] Prefer fd over find for file searches.\n")
        assert client.query("file searches").results[0].slug == "by-hand"
        assert [e.slug for e in client.list(category="Preference").entries] == ["rg", "by-hand"]
        path.unlink()
        assert client.list().entries == []
        assert client.stats().categories[2].exists is False
        (workspace / ".memory" / "quirks.md").write_text("- [q] A quirk typed by hand.\n")
        assert client.get(category="Quirk", slug="q").entries[0].content == "A quirk typed by hand."
