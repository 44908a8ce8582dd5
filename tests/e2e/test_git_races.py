"""Real git racing real stores: memd never breaks a git operation, never writes inside a merge.

`git reset --hard`, `git stash` and `git checkout` unlink tracked files and create them again with
O_EXCL while they hold `.git/index.lock`. Before memd waited for git, a store landing in that gap
made git fail ("unable to create file .memory/decisions.md: File exists") and left the committed
entries missing from the working tree (5 of 60 resets). Each test runs many iterations with
stores arriving all the time, and checks git's exit status and the committed entries every time.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd_client import Client
from memd_client.errors import MergeConflict, RpcError
from tests.conftest import DaemonProcess

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")

ITERATIONS = 60
COMMITTED = [f"- [kept-{n}] Committed decision number {n} stays in the tree." for n in range(15)]


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in `repo` with a fixed identity and no user config."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=check, timeout=60
    )


@pytest.fixture
def repo(workspace: Path) -> Path:
    """A repository whose `.memory/decisions.md` holds 15 committed entries."""
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text("# Decisions\n\n" + "\n".join(COMMITTED) + "\n")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", ".memory/decisions.md")
    git(workspace, "commit", "-q", "-m", "memories")
    return workspace


class Storer:
    """Stores into decisions.md from a thread until stopped; counts what was acknowledged."""

    def __init__(self, daemon: DaemonProcess, repo: Path, name: str) -> None:
        self._name = name
        self._client = Client(daemon.socket_path, workspace=repo, timeout=60)
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self.acknowledged = 0
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            try:
                self._client.store(
                    category="Decision",
                    content=f"Racing store {self._name} {n} with its own words zq{n}x.",
                    slug=f"race-{self._name}-{n}",
                )
                with self._progress:
                    self.acknowledged += 1
                    self._progress.notify_all()
            except RpcError as exc:
                with self._progress:
                    self.errors.append(exc.message)
                    self._progress.notify_all()

    def wait_for(self, more: int) -> None:
        """Wait (at most 60 s) until `more` further stores are acknowledged, or one failed."""
        with self._progress:
            target = self.acknowledged + more
            self._progress.wait_for(
                lambda: self.acknowledged >= target or bool(self.errors), timeout=60
            )

    def __enter__(self) -> Storer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        self._client.close()


@pytest.fixture
def storer(daemon: DaemonProcess, repo: Path) -> Iterator[Storer]:
    """Four clients storing at once (one is watched; the others add pressure)."""
    with contextlib.ExitStack() as stack:
        others = [stack.enter_context(Storer(daemon, repo, f"o{n}")) for n in range(3)]
        watched = stack.enter_context(Storer(daemon, repo, "w"))
        yield watched
    assert all(other.errors == [] for other in others)


def _assert_committed_present(repo: Path, operation: str) -> None:
    text = (repo / ".memory" / "decisions.md").read_text()
    missing = [line for line in COMMITTED if line not in text]
    assert not missing, f"after {operation}, {len(missing)} committed entries are missing"


def test_git_reset_hard_never_fails_and_keeps_the_committed_entries(
    repo: Path, storer: Storer
) -> None:
    for n in range(ITERATIONS):
        storer.wait_for(1)
        done = git(repo, "reset", "-q", "--hard", check=False)
        assert done.returncode == 0, f"reset {n} failed: {done.stderr}"
        _assert_committed_present(repo, f"reset {n}")
    assert storer.errors == []
    assert storer.acknowledged >= ITERATIONS


def test_git_stash_and_checkout_never_fail_and_keep_the_committed_entries(
    repo: Path, storer: Storer
) -> None:
    for n in range(ITERATIONS):
        storer.wait_for(1)
        stash = git(repo, "stash", "-q", check=False)
        assert stash.returncode == 0, f"stash {n} failed: {stash.stderr}"
        _assert_committed_present(repo, f"stash {n}")
        storer.wait_for(1)
        checkout = git(repo, "checkout", "-q", "--", ".memory/decisions.md", check=False)
        assert checkout.returncode == 0, f"checkout {n} failed: {checkout.stderr}"
        _assert_committed_present(repo, f"checkout {n}")
    assert storer.errors == []
    # What memd stored is in the stashes: git keeps it, nothing was lost.
    stashed = git(repo, "stash", "list").stdout.splitlines()
    assert stashed


def test_a_file_with_conflict_markers_serves_its_last_good_entries_and_refuses_writes(
    daemon: DaemonProcess, repo: Path
) -> None:
    """After a conflicted `git merge`, a store would have been inserted inside the conflict
    hunk (and dropped by resolving with "ours"); now it is refused until the merge is done."""
    path = repo / ".memory" / "decisions.md"
    git(repo, "checkout", "-q", "-b", "theirs")
    path.write_text(path.read_text() + "- [db] Use Postgres for the main store.\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(category="Decision", content="Use SQLite for the main store.", slug="db")
        git(repo, "commit", "-q", "-am", "ours")
        before = [e.content for e in client.list(category="Decision").entries]
        merge = git(repo, "merge", "-q", "theirs", check=False)
        assert merge.returncode != 0 and "<<<<<<<" in path.read_text()
        with pytest.raises(MergeConflict) as refused:
            client.store(category="Decision", content="Deploy on Fridays never.", slug="fri")
        assert "decisions.md" in refused.value.message
        assert "conflict markers" in refused.value.message
        assert "Deploy on Fridays" not in path.read_text()
        # Reads go on, from the last good version; stats and status say what is wrong.
        assert [e.content for e in client.list(category="Decision").entries] == before
        row = next(r for r in client.stats().categories if r.file == "decisions.md")
        assert row.conflict is not None and "merge" in row.conflict
        assert client.status().conflicts == [str(path)]
        # Resolving the merge (both sides kept) lets writes resume.
        lines = [line for line in path.read_text().splitlines() if line[:7] not in _MARKERS]
        path.write_text("\n".join(lines) + "\n")
        git(repo, "commit", "-q", "-am", "merged")
        stored = client.store(category="Decision", content="Deploy on Fridays never.", slug="fri")
        assert stored.action == "stored"
        assert client.status().conflicts == []
    assert "Deploy on Fridays never." in path.read_text()


_MARKERS = {"<<<<<<<", "=======", ">>>>>>>"}
