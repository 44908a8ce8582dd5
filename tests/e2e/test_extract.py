"""`extract` end to end: candidates with their sentences, and `store` through the normal store
path (dedup included)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memd_client import Client
from tests.conftest import DaemonProcess

MESSAGE = (
    "Thanks, that works. Actually, we deploy with Helm, not kubectl. "
    "Never commit the .env file. Should we always use tabs? I prefer pnpm over npm."
)


def test_candidates_come_with_their_sentences(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        result = client.extract(MESSAGE)
        assert client.stats().total == 0  # nothing stored without `store`
    kinds = [(c.kind, c.category) for c in result.candidates]
    assert kinds == [
        ("correction", "Decision"),
        ("constraint", "Security"),
        ("preference", "Preference"),
    ]
    assert all(c.sentence in MESSAGE for c in result.candidates)
    assert all(c.stored is None and c.error is None for c in result.candidates)


def test_store_goes_through_dedup(daemon: DaemonProcess, workspace: Path) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        first = client.extract(MESSAGE, store=True)
        again = client.extract(MESSAGE, store=True)
        entries = client.list().entries
    assert [c.stored.action for c in first.candidates if c.stored] == ["stored"] * 3
    assert [c.stored.action for c in again.candidates if c.stored] == ["skipped"] * 3
    assert len(entries) == 3


def test_cli_reads_the_message_from_stdin(daemon: DaemonProcess, workspace: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), "extract", "--store"],
        input=MESSAGE,
        capture_output=True,
        text=True,
        cwd=workspace,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "Security: Never commit the .env file." in result.stdout
    assert "Stored in security.md" in result.stdout
    nothing = subprocess.run(
        [
            sys.executable,
            "-m",
            "memd",
            "--socket",
            str(daemon.socket_path),
            "extract",
            "ok, thanks",
        ],
        capture_output=True,
        text=True,
        cwd=workspace,
        timeout=60,
    )
    assert nothing.stdout == "No memories found in that message.\n"
