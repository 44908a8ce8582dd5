"""The daemon while git works, with real git: a checkout that rewrites every category file is
one `changed` a file, saying `git`; stores from several clients while branches switch back and
forth never overwrite what git put there, never break git, and every store acknowledged after a
checkout is in the files the next round finds."""

from __future__ import annotations

import random
import subprocess
import threading
import time
from pathlib import Path

import pytest

from memd.core.format import mdformat
from memd.core.format.categories import CATEGORIES
from memd_client import Client, MemdError, protocol as p
from tests.conftest import DaemonProcess
from tests.git_env import git_env

DEADLINE = 30.0
ROUNDS = 12
CLIENTS = 4


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_env(repo.parent),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _branch_text(category_file: str, branch: str) -> str:
    name = category_file.removesuffix(".md")
    rules = "".join(
        f"- [{branch}-{name}-{n}] Branch {branch} keeps rule {n} of {name}.\n" for n in range(3)
    )
    return f"# {name.title()}\n\n{rules}"


def _branch_slugs(branch: str) -> set[str]:
    return {f"{branch}-{c.file.removesuffix('.md')}-{n}" for c in CATEGORIES for n in range(3)}


@pytest.fixture
def repo(short_tmp: Path) -> Path:
    root = short_tmp / "repo"
    (root / ".memory").mkdir(parents=True)
    assert _git(root, "init", "-q", "-b", "one").returncode == 0
    for branch in ("one", "two"):
        if branch == "two":
            assert _git(root, "checkout", "-q", "-b", "two").returncode == 0
        for category in CATEGORIES:
            (root / ".memory" / category.file).write_text(_branch_text(category.file, branch))
        assert _git(root, "add", "-A").returncode == 0
        assert _git(root, "commit", "-q", "-m", branch).returncode == 0
    assert _git(root, "checkout", "-q", "one").returncode == 0
    return root


def _slugs_on_disk(repo: Path) -> set[str]:
    found = set()
    for category in CATEGORIES:
        text = (repo / ".memory" / category.file).read_text()
        found |= {e.slug for e in mdformat.entries(mdformat.parse(text)) if e.slug}
    return found


def test_a_checkout_is_one_change_a_file_saying_git(daemon: DaemonProcess, repo: Path) -> None:
    seen: list[p.Changed] = []
    done = threading.Event()

    def on_event(event: p.Event) -> None:
        if isinstance(event, p.Changed):
            seen.append(event)
            if event.source == "memd":
                done.set()

    with Client(daemon.socket_path, workspace=repo) as client:
        client.list()  # loaded and watched
        with client.subscribe(on_event):
            checkout = _git(repo, "checkout", "-q", "two")
            assert checkout.returncode == 0, checkout.stderr
            deadline = time.monotonic() + DEADLINE
            while len({e.file for e in seen}) < len(CATEGORIES):
                assert time.monotonic() < deadline, seen
                time.sleep(0.01)
            # A marker after the checkout's notifications: a store's own `changed`.
            client.store(category="Quirk", content="A marker stored after the checkout.")
            assert done.wait(DEADLINE), seen
    outside = [e for e in seen if e.source == "external"]
    assert sorted(e.file for e in outside) == sorted(c.file for c in CATEGORIES)
    assert all(e.git for e in outside), outside
    assert all({x.slug for x in e.entries} <= _branch_slugs("two") for e in outside)
    assert all(len(e.entries) == 3 for e in outside)  # never a file half-written or missing


class Storers:
    """`CLIENTS` threads storing into random categories, each store's content its own words;
    `pause` stops them between stores, `resume` lets them go on. `sent` holds each
    acknowledged store as (when it was sent, the slug of the entry on disk)."""

    def __init__(self, daemon: DaemonProcess, repo: Path) -> None:
        self.daemon, self.repo = daemon, repo
        self.sent: list[tuple[float, str]] = []
        self.failures: list[str] = []
        self._stop, self._gate = threading.Event(), threading.Event()
        self._gate.set()
        self._lock = threading.Lock()
        self._busy = threading.Semaphore(CLIENTS)  # one held while a store is in flight
        self._threads = [threading.Thread(target=self._run, args=(n,)) for n in range(CLIENTS)]

    def __enter__(self) -> Storers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._gate.set()
        for thread in self._threads:
            thread.join(DEADLINE)

    def _run(self, number: int) -> None:
        rng = random.Random(number)
        with Client(self.daemon.socket_path, workspace=self.repo, timeout=DEADLINE) as client:
            while self._gate.wait() and not self._stop.is_set():
                words = " ".join("".join(rng.choices("bcdfgklmnprstvz", k=6)) for _ in range(5))
                with self._busy:
                    at = time.monotonic()
                    try:
                        # As a person: an agent's Security or Instruction store would
                        # wait in the review inbox, and these model writes into every file.
                        stored = client.store(
                            category=rng.choice(CATEGORIES).name,
                            content=f"Keep {words}.",
                            origin="user",
                        )
                    except MemdError as exc:  # failing cleanly is allowed: a sentence
                        self.failures.append(exc.message)
                        continue
                assert stored.slug is not None
                with self._lock:
                    self.sent.append((at, stored.slug))

    def pause(self) -> None:
        """Stop the clients between stores (each finishes the one in flight)."""
        self._gate.clear()
        for _ in range(CLIENTS):
            assert self._busy.acquire(timeout=DEADLINE)
        for _ in range(CLIENTS):
            self._busy.release()

    def resume(self) -> None:
        self._gate.set()

    def sent_after(self, moment: float) -> set[str]:
        with self._lock:
            return {slug for at, slug in self.sent if at > moment}


def _switch(repo: Path, branch: str, storers: Storers) -> None:
    """Commit what was stored, then check `branch` out while the clients store: git refuses
    when a store lands before it looks (then try again), and never fails for memd's writes."""
    for _ in range(100):
        storers.pause()
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "stores")
        storers.resume()
        switched = _git(repo, "checkout", "-q", branch)
        assert "File exists" not in switched.stderr, switched.stderr
        if switched.returncode == 0:
            return
        assert "would be overwritten" in switched.stderr, switched.stderr
    pytest.fail(f"git never switched to {branch}")


def test_stores_while_branches_switch_never_undo_git_or_lose_an_ack(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Storers(daemon, repo) as storers:
        branch = "one"
        for _ in range(ROUNDS):
            branch = "two" if branch == "one" else "one"
            _switch(repo, branch, storers)
            ended = time.monotonic()
            deadline = ended + DEADLINE
            while len(storers.sent_after(ended)) < CLIENTS and time.monotonic() < deadline:
                time.sleep(0.01)
            storers.pause()
            on_disk = _slugs_on_disk(repo)
            after = storers.sent_after(ended)
            assert after, storers.failures
            assert after <= on_disk, after - on_disk  # acknowledged after git: on disk
            assert _branch_slugs(branch) <= on_disk  # what git put there: never undone
            storers.resume()
