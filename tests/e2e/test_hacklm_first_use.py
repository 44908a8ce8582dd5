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
import time
from pathlib import Path

from bench._text import word
from memd.core.format.categories import HACKLM_CATEGORIES
from memd_client import Client
from memd_client.errors import RpcError
from tests.conftest import DaemonProcess
from tests.e2e.test_git_races import git
from tests.hacklm_standin import HackLMWriter, Subprocess
from tests.polling_sync import wait_until

STORES_WAIT = 300.0
"""The upper bound on the sustained test's 100 stores (1-6 s on a loaded 2-core machine)."""


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
                origin="user",
                category="Security",
                content="Never commit the .env file.",
                slug="no-env",
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


class StoringClients:
    """Four clients, each in a thread of its own, storing 25 new decisions (slugs
    `c<client>-<n>`); what each store answered, and every error of any type."""

    def __init__(self, daemon: DaemonProcess, workspace: Path) -> None:
        self.daemon, self.workspace = daemon, workspace
        self.slugs = [f"c{c}-{n}" for c in range(4) for n in range(25)]
        self.acknowledged: dict[str, str] = {}
        self.failures: list[str] = []
        self._threads = [
            threading.Thread(target=self._store, args=(c,), daemon=True) for c in range(4)
        ]

    def start(self) -> None:
        """Start the four clients."""
        for thread in self._threads:
            thread.start()

    def finish(self, timeout: float) -> None:
        """Wait for all four within `timeout` seconds in all; fail if one is still storing."""
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        running = sum(thread.is_alive() for thread in self._threads)
        assert running == 0, (
            f"{running} of 4 clients were still storing after {timeout:g} s "
            f"({len(self.acknowledged)} of {len(self.slugs)} stores acknowledged)"
        )

    def _store(self, c: int) -> None:
        try:
            with Client(self.daemon.socket_path, workspace=self.workspace) as client:
                for n in range(25):
                    slug = f"c{c}-{n}"
                    try:
                        stored = client.store(
                            category="Decision",
                            content=f"Decision {word(c, n)} about {word(n, c, 1)}.",  # all new
                            slug=slug,
                        )
                    except RpcError as exc:
                        self.failures.append(f"{slug}: {exc.message}")
                    else:
                        self.acknowledged[slug] = stored.action
        except Exception as exc:  # a timeout or a lost connection ends this client
            self.failures.append(f"client {c}: {type(exc).__name__}: {exc}")


def test_stores_under_sustained_hacklm_writing_all_succeed_and_stay(
    daemon: DaemonProcess, workspace: Path
) -> None:
    """Two HackLM writers rewrite decisions.md back to back while four clients store into it:
    1-18 % of memd's stores used to fail with "kept changing"; now memd reads the file again
    under the lock after the first change, so every store lands. (The race at its worst moment,
    HackLM winning the lock before every attempt, is replayed in
    tests/server/workspaces/test_actor_races.py.)

    Every client must finish and every store be acknowledged before anything is judged, and the
    writers are stopped after their write under way (`Subprocess.stop`): a SIGKILL between an
    upsert's truncate and its write emptied the file in 4 of 100 runs under load, which once
    looked like memd losing all 100 acknowledged stores."""
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
    clients = StoringClients(daemon, workspace)
    try:
        for writer in writers:  # HackLM is writing before the first store
            writer.wait_for("upsert-read", timeout=60)
        clients.start()
        clients.finish(timeout=STORES_WAIT)
        assert clients.failures == []
        assert clients.acknowledged == dict.fromkeys(clients.slugs, "stored")
        for writer in writers:
            writer.stop()
    finally:
        for writer in writers:
            writer.kill()
    entries = [
        line.split("]")[0][3:]
        for line in (memory / "decisions.md").read_text().splitlines()
        if line.startswith("- [")
    ]
    assert sorted(entries) == sorted([*clients.slugs, "h1", "h2"])  # HackLM's two stay, once


def test_a_sustained_writer_told_to_stop_mid_upsert_finishes_it_first(workspace: Path) -> None:
    """How the test above ends its writers: stopped between its read and its write (the
    truncate and write come next), the stand-in finishes that upsert and exits."""
    memory = workspace / ".memory"
    memory.mkdir()
    path = memory / "decisions.md"
    path.write_text("# Decisions\n\n- [h1] Old text.\n- [a] Use SQLite.\n- [b] Log in UTC.\n")
    args = [
        "upsert",
        "Decision",
        "h1",
        "New text.",
        "--count",
        "100000",
        "--stop-at",
        "upsert-read",
    ]
    writer = Subprocess(memory, *args)
    try:
        writer.stopped_at("upsert-read")
        assert writer.stop() == ["upsert-written", "done updated"]
    finally:
        writer.kill()
    assert (
        path.read_text()
        == "# Decisions\n\n- [a] Use SQLite.\n- [b] Log in UTC.\n\n- [h1] New text.\n"
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
                origin="user",
                category="Security",
                content="Never commit the .env file.",
                slug="no-env",
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
    assert sorted(p.name for p in memory.glob("*.md")) == sorted(c.file for c in HACKLM_CATEGORIES)
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
        client.store(
            origin="user", category="Security", content="Never commit the .env file.", slug="no-env"
        )
        git(workspace, "stash", "-q")
        wait_until(lambda: not client.list(category="Security").entries)
        client.store(category="Quirk", content="The CI runner has no network.", slug="ci")
        assert not client.list(category="Security").entries  # the stash stays stashed
    git(workspace, "checkout", "-q", "--", ".memory/quirks.md")
    assert git(workspace, "stash", "pop", check=False).returncode == 0
    assert "no-env" in (memory / "security.md").read_text()
