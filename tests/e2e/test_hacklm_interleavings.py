"""Each of HackLM's write sequences, with a memd store at every point between its steps, against
a real daemon: memd never undoes HackLM's change, and HackLM never loses memd's acknowledged
store.

HackLM's sequences (hacklm-spec.md; the stand-in in tests/hacklm_standin.py does them step by
step): first use, an exists-check and later an unlocked header write; delete, under the lock,
read then rewrite without the line; upsert, under the lock, read, rewrite without the slug's
line, then append the new one; its store tool's update, a delete then an append. The points are
"before" (memd's store acknowledged right before HackLM starts: the case memd used to undo), each
pause point of the stand-in, and "after". Where HackLM holds `.memory/.lock` at the point, the
test waits until memd is waiting for that lock (it reads `.lock`, seen through inotify) before
HackLM goes on, so memd's store was decided on the version before HackLM's write.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memd.server.watch import inotify
from memd_client import Client
from tests.conftest import DaemonProcess
from tests.e2e.test_hacklm_first_use import PauseAtCheck
from tests.hacklm_standin import HackLMWriter, Pauses, store_header
from tests.polling_sync import wait_until

pytestmark = pytest.mark.skipif(not inotify.available(), reason="needs Linux inotify")

IN_OPEN = 0x00000020
MEMD_HEADER = "# Decisions\n\nArchitectural commitments made in this project.\n\n"
HACKLM_HEADER = store_header("Decision")
HEADERS = {"memd's header": MEMD_HEADER, "HackLM's first-use header": HACKLM_HEADER}
LOCKED_POINTS = ("locked", "upsert-read", "upsert-written", "delete-read")


def entries(path: Path) -> list[str]:
    """The entry lines of `path`, as written."""
    return [line for line in path.read_text().splitlines() if line.startswith("- ")]


@pytest.fixture
def decisions(workspace: Path) -> Path:
    memory = workspace / ".memory"
    memory.mkdir()
    return memory / "decisions.md"


class Race:
    """One HackLM operation run in a thread, paused at `point` (None: run straight through)."""

    def __init__(self, memory: Path, operation: Callable[[HackLMWriter], object], point: str):
        self.pauses = Pauses(point)
        self.point = point
        self.writer = HackLMWriter(memory, hook=self.pauses)
        self.result: list[object] = []
        self.thread = threading.Thread(target=lambda: self.result.append(operation(self.writer)))

    def __enter__(self) -> Race:
        self.thread.start()
        self.pauses.wait_reached(self.point)
        return self

    def __exit__(self, *exc: object) -> None:
        self.pauses.release_all()
        self.thread.join(60)
        assert not self.thread.is_alive(), "the HackLM stand-in did not finish"


def store_while_locked(client: Client, memory: Path, race: Race, content: str, slug: str) -> None:
    """Send memd's store while HackLM holds the lock at its point: wait until memd is waiting
    for `.lock` (it opens it to read the holder), then let HackLM go on, then wait for memd's
    acknowledgement."""
    replies: list[object] = []
    watcher = inotify.Inotify.open()
    try:
        watcher.add_watch(str(memory), IN_OPEN)
        sender = threading.Thread(
            target=lambda: replies.append(
                client.store(category="Decision", content=content, slug=slug)
            )
        )
        sender.start()
        deadline = time.monotonic() + 30
        while not any(event.name == b".lock" for event in _events(watcher, deadline)):
            assert time.monotonic() < deadline, "memd never waited for HackLM's lock"
    finally:
        watcher.close()
    race.pauses.release_all()
    sender.join(60)
    assert replies and getattr(replies[0], "action", None) == "stored", replies


def _events(watcher: inotify.Inotify, deadline: float) -> Iterator[inotify.Event]:
    ready, _, _ = select.select([watcher.fd], [], [], max(0.0, deadline - time.monotonic()))
    if ready:
        yield from watcher.read_events()


def store(client: Client, content: str, slug: str) -> None:
    assert client.store(category="Decision", content=content, slug=slug).action == "stored"


# ---------------------------------------------------------------------------- delete


@pytest.mark.parametrize("header", list(HEADERS), ids=list(HEADERS))
@pytest.mark.parametrize("point", ["before", "locked", "delete-read", "after"])
def test_a_hacklm_delete_is_never_undone_and_memds_store_stays(
    daemon: DaemonProcess, workspace: Path, decisions: Path, header: str, point: str
) -> None:
    memory = decisions.parent
    decisions.write_text(HEADERS[header] + "- Use tabs for indentation.\n- [keep] Keep this one.\n")

    def delete(writer: HackLMWriter) -> bool:
        return writer.delete("Decision", "Use tabs for indentation.")

    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()
        if point == "before":
            store(client, "Deploy with blue green releases.", "deploy")
            assert delete(HackLMWriter(memory)) is True
        elif point == "after":
            assert delete(HackLMWriter(memory)) is True
            store(client, "Deploy with blue green releases.", "deploy")
        else:
            with Race(memory, delete, point) as race:
                store_while_locked(
                    client, memory, race, "Deploy with blue green releases.", "deploy"
                )
            assert race.result == [True]
        # memd has seen HackLM's version, then wrote once more (any undo would show by now).
        wait_until(lambda: "tabs" not in " ".join(e.content for e in client.list().entries))
        store(client, "The CI runner has no network.", "ci")
        slugs = sorted(e.slug or "" for e in client.list(category="Decision").entries)
    assert slugs == ["ci", "deploy", "keep"]
    assert not any("tabs" in line for line in entries(decisions))


def test_hacklm_deleting_memds_own_fresh_entry_stays_deleted(
    daemon: DaemonProcess, workspace: Path, decisions: Path
) -> None:
    """memd acknowledged the entry a moment ago; HackLM deleting it is a person's choice."""
    decisions.write_text(MEMD_HEADER)
    with Client(daemon.socket_path, workspace=workspace) as client:
        store(client, "Deploy with blue green releases.", "deploy")
        assert HackLMWriter(decisions.parent).delete(
            "Decision", "Deploy with blue green releases.", slug="deploy"
        )
        wait_until(lambda: not client.list(category="Decision").entries)
        store(client, "The CI runner has no network.", "ci")
        assert [e.slug for e in client.list(category="Decision").entries] == ["ci"]
    assert entries(decisions) == ["- [ci] The CI runner has no network."]


# ---------------------------------------------------------------------------- update


@pytest.mark.parametrize("header", list(HEADERS), ids=list(HEADERS))
@pytest.mark.parametrize("point", ["before", "locked", "upsert-read", "upsert-written", "after"])
def test_a_hacklm_upsert_is_never_undone_and_memds_store_stays(
    daemon: DaemonProcess, workspace: Path, decisions: Path, header: str, point: str
) -> None:
    memory = decisions.parent
    decisions.write_text(HEADERS[header] + "- [db] Use SQLite.\n")

    def upsert(writer: HackLMWriter) -> str:
        return writer.upsert("Decision", "db", "Use Postgres.")

    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()
        if point == "before":
            store(client, "Deploy with blue green releases.", "deploy")
            assert upsert(HackLMWriter(memory)) == "updated"
        elif point == "after":
            assert upsert(HackLMWriter(memory)) == "updated"
            store(client, "Deploy with blue green releases.", "deploy")
        else:
            with Race(memory, upsert, point) as race:
                store_while_locked(
                    client, memory, race, "Deploy with blue green releases.", "deploy"
                )
            assert race.result == ["updated"]
        wait_until(lambda: "Use Postgres." in [e.content for e in client.list().entries])
        store(client, "The CI runner has no network.", "ci")
        contents = {e.slug: e.content for e in client.list(category="Decision").entries}
    assert contents == {
        "db": "Use Postgres.",
        "deploy": "Deploy with blue green releases.",
        "ci": "The CI runner has no network.",
    }


@pytest.mark.parametrize("header", list(HEADERS), ids=list(HEADERS))
def test_hacklms_store_tool_update_right_after_a_memd_store_is_never_undone(
    daemon: DaemonProcess, workspace: Path, decisions: Path, header: str
) -> None:
    """HackLM's store tool updates by deleting the old text, then appending the new."""
    old = "Cache user sessions in Redis with a short expiry window."
    new = "Cache user sessions in Redis with a long expiry window."
    decisions.write_text(HEADERS[header] + f"- {old}\n")
    hacklm = HackLMWriter(decisions.parent)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.list()
        store(client, "Deploy with blue green releases.", "deploy")
        assert hacklm.delete("Decision", old)
        hacklm.append("Decision", new)
        wait_until(lambda: new in [e.content for e in client.list().entries])
        store(client, "The CI runner has no network.", "ci")
        contents = [e.content for e in client.list(category="Decision").entries]
    assert sorted(contents) == sorted(
        [new, "Deploy with blue green releases.", "The CI runner has no network."]
    )


# ---------------------------------------------------------------------------- first use


@pytest.mark.parametrize("late", [False, True], ids=["at once", "seconds late"])
@pytest.mark.parametrize("then", ["nothing", "append", "upsert"])
def test_hacklms_first_use_header_never_takes_an_acknowledged_store(
    daemon: DaemonProcess, workspace: Path, late: bool, then: str
) -> None:
    """HackLM found security.md missing, then memd created it and acknowledged two stores; the
    header lands at once or seconds later (a stalled extension host), maybe followed by HackLM's
    own entry. No time window: both of memd's entries come back, HackLM's stays."""
    memory = workspace / ".memory"
    pauses = PauseAtCheck("security.md")
    hacklm = HackLMWriter(memory, hook=pauses)
    action = {
        "nothing": hacklm.ensure_memory_dir,
        "append": lambda: hacklm.append("Security", "HackLM rule."),
        "upsert": lambda: hacklm.upsert("Security", "hk", "HackLM rule."),
    }[then]
    thread = threading.Thread(target=action)
    thread.start()
    path = memory / "security.md"
    try:
        assert pauses.reached.wait(30)  # HackLM found security.md missing, has not written
        with Client(daemon.socket_path, workspace=workspace) as client:
            for slug, content in [
                ("no-env", "Never commit the .env file."),
                ("no-keys", "Rotate keys on leave."),
            ]:
                assert (
                    client.store(
                        origin="user", category="Security", content=content, slug=slug
                    ).action
                    == "stored"
                )
            if late:  # a stalled extension host: the header lands well after memd's replies
                written = path.stat().st_mtime
                wait_until(lambda: time.time() - written > 1.5, deadline=10)
            pauses.go.set()
            thread.join(60)
            wait_until(lambda: "no-keys" in path.read_text() and "no-env" in path.read_text())
            slugs = sorted(e.slug or "" for e in client.list(category="Security").entries)
    finally:
        pauses.go.set()
        thread.join(60)
    expected = ["no-env", "no-keys"] + (["hk"] if then == "upsert" else [])
    assert slugs == sorted(expected + ([""] if then == "append" else []))
    text = path.read_text()
    assert text.count("Never commit the .env file.") == 1
    assert text.count("Rotate keys on leave.") == 1
    if then != "nothing":
        assert text.count("HackLM rule.") == 1
    assert not (memory / "archive.md").exists()  # nothing of memd's was taken away
