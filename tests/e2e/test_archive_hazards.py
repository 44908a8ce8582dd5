"""The archive against a real daemon: a FIFO planted at `.memory/archive.md` fails only the
writes that archive (naming the file) and never wedges the workspace or the daemon's stop;
archive.md past `max_archive_bytes` moves to a dated file, and nothing is lost."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from memd_client import Client
from memd_client.errors import FileFormatError
from tests.conftest import STOP_TIMEOUT, DaemonProcess, start_daemon

TIMEOUT = 15.0  # a call that hangs on the FIFO fails the test instead of hanging it


def test_a_fifo_at_the_archive_fails_archiving_writes_only(
    short_tmp: Path, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text("# Decisions\n\n- [old-rule] Deploy on Fridays.\n")
    os.mkfifo(memory / "archive.md")
    daemon = start_daemon(short_tmp)
    try:
        with Client(str(daemon.socket_path), workspace=str(workspace), timeout=TIMEOUT) as client:
            with pytest.raises(FileFormatError) as caught:
                client.delete(category="Decision", slug="old-rule")
            assert str(memory / "archive.md") in caught.value.message
            assert "not a regular file" in caught.value.message
            # Nothing was removed, and everything that archives nothing goes on.
            assert [e.slug for e in client.list(category="Decision").entries] == ["old-rule"]
            stored = client.store(category="Decision", content="Tag releases with semver.")
            assert stored.action == "stored"
            assert client.store(category="Quirk", content="The CI cache is flaky.").action == (
                "stored"
            )
            assert client.query("semver").total == 1
            # An update would archive the text it replaces: it is not made, and says so.
            with pytest.raises(FileFormatError) as update:
                client.store(category="Decision", content="Deploy on Thursdays.", slug="old-rule")
            assert "no entry was removed or replaced" in update.value.message
            assert "not made" in update.value.message
        daemon.process.send_signal(signal.SIGTERM)
        assert daemon.process.wait(timeout=STOP_TIMEOUT) == 0, daemon.stderr()
    finally:
        daemon.stop()
    assert "Deploy on Fridays." in (memory / "decisions.md").read_text()
    assert (memory / "archive.md").is_fifo()  # left alone


def test_a_full_archive_moves_aside_and_keeps_every_record(
    short_tmp: Path, workspace: Path
) -> None:
    config = short_tmp / "config.toml"
    config.write_text("max_archive_bytes = 4096\n")
    daemon: DaemonProcess = start_daemon(short_tmp, "--config", str(config))
    try:
        with Client(str(daemon.socket_path), workspace=str(workspace), timeout=TIMEOUT) as client:
            for n in range(60):
                slug = f"rule-{n}"
                client.store(category="Quirk", content=f"Quirk number {n} {'x' * 80}.", slug=slug)
                assert client.delete(category="Quirk", slug=slug).deleted
    finally:
        assert daemon.stop() == 0
    memory = workspace / ".memory"
    archives = sorted(memory.glob("archive*.md"))
    assert len(archives) >= 2, archives
    assert all(a.stat().st_size <= 4096 for a in archives)
    records = [
        line
        for archive in archives
        for line in archive.read_text().splitlines()
        if line.startswith("- ")
    ]
    assert sorted(records) == sorted(set(records)) and len(records) == 60
    assert "reached max_archive_bytes" in daemon.stderr()
