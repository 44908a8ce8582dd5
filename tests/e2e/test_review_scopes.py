"""Where the review inbox's rules come from, end to end with a real daemon started with memd's
defaults: an agent's (the library's) store into Security or Instruction waits, a person's (the
CLI's) goes direct; a project's `.memory/memd.toml` `[review]` changes that per category (a
bad entry left out and named in `stats`); an agent's user-wide store waits in the user-wide
memory's own inbox, which `memd review --global` walks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memd_client import Client
from tests.conftest import DaemonProcess


def _memd(
    workspace: Path, daemon: DaemonProcess, *args: str, answers: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), *args],
        cwd=workspace,
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_by_default_an_agents_security_and_instruction_stores_wait(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    with Client(daemon.socket_path, workspace=workspace) as client:
        for category in ("Security", "Instruction"):
            held = client.store(category=category, content=f"Agent rule for {category}.")
            assert held.action == "pending", held
        assert client.store(category="Decision", content="Deploy with Helm.").action == "stored"
    done = _memd(workspace, daemon, "store", "-c", "Security", "Never log the session token.")
    assert done.returncode == 0, done.stderr
    assert "Never log the session token." in (workspace / ".memory" / "security.md").read_text()


def test_a_projects_review_table_wins_and_a_bad_entry_is_named(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "memd.toml").write_text(
        '[review]\nSecurity = "direct"\nDecision = "pending"\nQuirk = "sometimes"\n'
    )
    with Client(daemon.socket_path, workspace=workspace) as client:
        assert client.store(category="Security", content="Rotate keys.").action == "stored"
        assert client.store(category="Decision", content="Deploy with Helm.").action == "pending"
        assert client.store(category="Instruction", content="Use tabs.").action == "pending"
        assert client.store(category="Quirk", content="CI has no IPv6.").action == "stored"
        stats = client.stats()
        assert stats.review_problem is not None and "Quirk" in stats.review_problem
        assert "memd.toml" in stats.review_problem and stats.categories_problem is None
        # Changing the file applies to the next request.
        (memory / "memd.toml").write_text('[review]\nDecision = "direct"\n')
        assert client.store(category="Decision", content="Ship on Fridays.").action == "stored"
        assert client.stats().review_problem is None
    shown = _memd(workspace, daemon, "stats")
    assert "Review settings left out" not in shown.stdout


def test_an_agents_global_store_waits_in_the_user_wide_inbox(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    user_wide = Path(os.environ["XDG_DATA_HOME"]) / "memd" / "global" / ".memory"
    with Client(daemon.socket_path, workspace=workspace) as client:
        held = client.store(category="Instruction", content="Use uv for Python.", scope="global")
        assert held.action == "pending" and held.inbox_id is not None
        assert held.inbox_id in (user_wide / "inbox.md").read_text()
        assert not (workspace / ".memory" / "inbox.md").exists()
        assert client.inbox().entries == []
        assert [e.id for e in client.inbox(scope="global").entries] == [held.inbox_id]
    walked = _memd(workspace, daemon, "review", "--global", answers="a\n")
    assert walked.returncode == 0, walked.stderr
    assert "Accepted 1" in walked.stdout
    assert "] Use uv for Python." in (user_wide / "instructions.md").read_text()
    with Client(daemon.socket_path, workspace=workspace) as client:
        assert client.inbox(scope="global").entries == []
