"""HackLM's first use against memd's first store, replayed at its worst moment.

HackLM creates each missing category file with an unlocked exists-check and a plain write
(hacklm-spec.md §1.3). If memd creates that file and acknowledges a store into it between the two,
HackLM's header overwrites the acknowledged entry (1 of 200 timed runs). memd now creates missing
files under the lock when a workspace loads, and stores the entries it acknowledged again when
HackLM's first-use header lands over them, however late (see memd.core.writes.first_use; every
interleaving is in test_hacklm_interleavings.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

from bench._text import word
from memd.core.format.categories import CATEGORIES
from memd_client import Client
from memd_client.errors import RpcError
from tests.conftest import DaemonProcess
from tests.e2e.test_git_races import git
from tests.hacklm_standin import HackLMWriter, Subprocess
from tests.polling_sync import wait_until


class PauseAtCheck:
    """Pause the stand-in right after it found `name` missing, before it writes its header."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reached = threading.Event()
        self.go = threading.Event()

    def __call__(self, point: str, detail: str) -> None:
        if point == "bootstrap-checked" and detail.endswith("/" + self.name):
            self.reached.set()
            assert self.go.wait(60), "the test never let the stand-in go on"


def test_an_entry_hacklms_bootstrap_overwrites_is_stored_again(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    pause = PauseAtCheck("security.md")
    hacklm = HackLMWriter(memory, hook=pause)
    bootstrap = threading.Thread(target=hacklm.ensure_memory_dir)
    bootstrap.start()
    try:
        assert pause.reached.wait(30)  # HackLM saw security.md missing, and has not written yet
        with Client(daemon.socket_path, workspace=workspace) as client:
            stored = client.store(
                category="Security", content="Never commit the .env file.", slug="no-env"
            )
            assert stored.action == "stored"  # acknowledged: it must stay
            pause.go.set()  # HackLM writes its bare header over memd's file now
            bootstrap.join(30)
            wait_until(lambda: "no-env" in (memory / "security.md").read_text())
            entries = client.list(category="Security").entries
            assert [e.slug for e in entries] == ["no-env"]
    finally:
        pause.go.set()
        bootstrap.join(30)
    text = (memory / "security.md").read_text()
    assert text.startswith("# Security\n")
    assert text.count("Never commit the .env file.") == 1


def test_missing_files_are_created_at_load_so_hacklm_never_bootstraps_over_memd(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text("# Decisions\n\n- [db] Use SQLite.\n")
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()  # the workspace loads: the four missing files are created under the lock
        wait_until(lambda: len(list(memory.glob("*.md"))) == 5)
        client.store(category="Quirk", content="The CI runner has no network.", slug="ci")
    seen: list[str] = []
    HackLMWriter(memory, hook=lambda point, detail: seen.append(point)).ensure_memory_dir()
    assert "bootstrap-checked" not in seen  # nothing is missing: HackLM writes no header
    assert "The CI runner has no network." in (memory / "quirks.md").read_text()


def test_stores_under_sustained_hacklm_writing_all_succeed_and_stay(
    daemon: DaemonProcess, workspace: Path
) -> None:
    """Two HackLM writers rewrite decisions.md back to back while four clients store into it:
    1-18 % of memd's stores used to fail with "kept changing"; now memd reads the file again
    under the lock after the first change, so every store lands. (The race at its worst moment,
    HackLM winning the lock before every attempt, is replayed in
    tests/server/test_actor_races.py.)"""
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text("# Decisions\n\n")
    # Back to back, with 5 ms between two stores (two writers that never let go would starve any
    # third one of the lock for 10 s: a 1005 by design, not what this test is about).
    sustained = ["--count", "100000", "--pause", "0.005"]
    writers = [
        Subprocess(memory, "upsert", "Decision", f"h{n}", f"HackLM decision {n}.", *sustained)
        for n in (1, 2)
    ]
    failures: list[str] = []

    def store(c: int) -> None:
        with Client(daemon.socket_path, workspace=workspace) as client:
            for n in range(25):
                try:
                    client.store(
                        category="Decision",
                        content=f"Decision {word(c, n)} about {word(n, c, 1)}.",  # all new rules
                        slug=f"c{c}-{n}",
                    )
                except RpcError as exc:
                    failures.append(exc.message)

    try:
        clients = [threading.Thread(target=store, args=(n,)) for n in range(4)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(120)
    finally:
        for writer in writers:
            writer.kill()
    assert failures == []
    slugs = [
        line.split("]")[0][3:]
        for line in (memory / "decisions.md").read_text().splitlines()
        if line.startswith("- [")
    ]
    assert sorted(s for s in slugs if s.startswith("c")) == sorted(
        f"c{c}-{n}" for c in range(4) for n in range(25)
    )


def test_hacklms_bootstrap_then_its_own_store_keeps_memds_entry(
    daemon: DaemonProcess, workspace: Path
) -> None:
    """HackLM's upsert bootstraps first (check, header) and then writes its own entry under the
    lock: the file memd reads next holds HackLM's header and entry, not a bare header, and
    memd's acknowledged entry must still come back."""
    memory = workspace / ".memory"
    pause = PauseAtCheck("security.md")
    hacklm = HackLMWriter(memory, hook=pause)
    upsert = threading.Thread(target=hacklm.upsert, args=("Security", "hk", "HackLM rule."))
    upsert.start()
    try:
        assert pause.reached.wait(30)
        with Client(daemon.socket_path, workspace=workspace) as client:
            stored = client.store(
                category="Security", content="Never commit the .env file.", slug="no-env"
            )
            assert stored.action == "stored"
            pause.go.set()
            upsert.join(30)
            wait_until(lambda: "no-env" in (memory / "security.md").read_text())
            slugs = {e.slug for e in client.list(category="Security").entries}
            assert slugs == {"hk", "no-env"}
    finally:
        pause.go.set()
        upsert.join(30)


def test_a_fresh_workspaces_first_store_creates_every_file_so_hacklm_bootstraps_none(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Decision", content="Use SQLite for storage.", slug="db")
    assert sorted(p.name for p in memory.glob("*.md")) == sorted(c.file for c in CATEGORIES)
    seen: list[str] = []
    HackLMWriter(memory, hook=lambda point, detail: seen.append(point)).upsert(
        "Security", "hk", "HackLM rule."
    )
    assert "bootstrap-checked" not in seen


def test_an_in_place_rewrite_seen_half_done_is_not_taken_for_a_bare_header(
    daemon: DaemonProcess, workspace: Path
) -> None:
    """HackLM's update truncates, then writes: a read in between sees an empty file. memd must
    not store its last commit again over HackLM's newer value."""
    memory = workspace / ".memory"
    memory.mkdir()
    path = memory / "decisions.md"
    path.write_text("# Decisions\n\n- [db] Use SQLite.\n")
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()
        client.store(category="Decision", content="Deploy with blue green releases.", slug="go")
        hacklm = HackLMWriter(memory)
        hacklm.acquire()
        kept = "\n".join(
            line for line in path.read_text().split("\n") if not line.startswith("- [db] ")
        )
        with path.open("w") as handle:  # truncated: an agent's read lands in this moment
            client.list(category="Decision")
            handle.write(kept)
        with path.open("a") as handle:
            handle.write("\n- [db] Use Postgres.\n")
        hacklm.release()
        wait_until(lambda: "Use Postgres." in [e.content for e in client.list().entries])
        client.store(category="Quirk", content="The CI runner has no network.", slug="ci")
        contents = {e.slug: e.content for e in client.list(category="Decision").entries}
    assert contents == {"go": "Deploy with blue green releases.", "db": "Use Postgres."}


def test_git_stash_right_after_a_store_is_not_undone(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_text("# Decisions\n\n- [db] Use SQLite.\n")
    git(workspace, "init", "-q")
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()  # the missing files are created at load
        wait_until(lambda: len(list(memory.glob("*.md"))) == 5)
        git(workspace, "add", "-A")
        git(workspace, "commit", "-qm", "memories")
        client.store(category="Security", content="Never commit the .env file.", slug="no-env")
        git(workspace, "stash", "-q")
        wait_until(lambda: not client.list(category="Security").entries)
        client.store(category="Quirk", content="The CI runner has no network.", slug="ci")
        assert not client.list(category="Security").entries  # the stash stays stashed
    git(workspace, "checkout", "-q", "--", ".memory/quirks.md")
    assert git(workspace, "stash", "pop", check=False).returncode == 0
    assert "no-env" in (memory / "security.md").read_text()
