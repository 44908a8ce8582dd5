"""A loaded workspace notices outside changes by itself and tells subscribers what changed.

These run a real `Workspace` (actors plus watchfiles watcher) on real files, in-process.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from watchfiles import Change

from memd.core.format.categories import CATEGORIES, Category
from memd.core.writes import transitions
from memd.fs import lock_file as hacklm_lock
from memd.server.rpc.session import Session
from memd.server.watch.watcher import mentions, touched_categories
from memd.server.workspaces import write_lock
from memd.server.workspaces.lock_wait import MemoryDirLock
from memd.server.workspaces.workspace import Workspace
from memd_client.errors import FileFormatError, LockTimeout
from tests.polling import until

DEADLINE = 10.0

Note = dict[str, Any]


class Subscriber:
    """A session whose notifications land in a stream the test reads."""

    def __init__(self, receive: MemoryObjectReceiveStream[Note]) -> None:
        self.receive = receive

    async def next(self, predicate: Callable[[Note], bool] = lambda n: True) -> Note:
        """Return the next notification matching `predicate`, skipping others."""
        with anyio.fail_after(DEADLINE):
            async for note in self.receive:
                if predicate(note):
                    return note
        raise AssertionError("the notification stream ended")

    def pending(self) -> list[Note]:
        """Notifications received but not yet read."""
        found = []
        while True:
            try:
                found.append(self.receive.receive_nowait())
            except anyio.WouldBlock:
                return found


@pytest.fixture(params=["with .memory", "without .memory"])
async def loaded(
    tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[Workspace, Subscriber]]:
    """A running workspace with one subscriber; its `.memory` exists at load, or not yet."""
    if request.param == "with .memory":
        (tmp_path / ".memory").mkdir()
    workspace = Workspace(str(tmp_path), clock=time.time)
    session = Session()
    send, receive = anyio.create_memory_object_stream[Note](1000)

    async def deliver(frame: bytes) -> None:
        await send.send(msgspec.json.decode(frame))

    async with send, receive, anyio.create_task_group() as tg:
        await tg.start(workspace.run)
        # The files a load creates in an existing `.memory/` are made first: the tests then
        # change the directory alone.
        await until(lambda: workspace._created or not workspace._memory_at_load)
        workspace.subscribe(session)
        tg.start_soon(session.pump, deliver)
        yield workspace, Subscriber(receive)
        workspace.close()
        tg.cancel_scope.cancel()


def _memory(workspace: Workspace) -> Path:
    """The workspace's `.memory`, created by hand if the workspace was loaded without one."""
    path = Path(workspace.memory_dir)
    path.mkdir(exist_ok=True)
    return path


def _changed(category: str, source: str) -> Callable[[Note], bool]:
    return lambda n: (
        n["method"] == "changed"
        and n["params"]["category"] == category
        and n["params"]["source"] == source
    )


def _contents(note: Note) -> list[str]:
    return [entry["content"] for entry in note["params"]["entries"]]


async def test_a_hand_edit_is_noticed_and_published_as_external(
    loaded: tuple[Workspace, Subscriber],
) -> None:
    workspace, events = loaded
    path = _memory(workspace) / "quirks.md"
    path.write_text("# Quirks\n\n- [by-hand] Typed in an editor.\n")
    note = await events.next(_changed("Quirk", "external"))
    assert _contents(note) == ["Typed in an editor."]
    assert note["params"]["workspace"] == workspace.root
    assert note["params"]["file"] == "quirks.md"
    assert [e.slug for e in workspace.actor(Category.QUIRK).snapshot.entries] == ["by-hand"]


async def test_memds_own_write_is_published_once_and_never_echoes(
    loaded: tuple[Workspace, Subscriber],
) -> None:
    workspace, events = loaded
    actor = workspace.actor(Category.DECISION)
    await actor.submit(transitions.Store(content="First decision about caching.", slug="one"))
    first = await events.next()
    assert first["params"]["source"] == "memd"
    # Give the watcher every chance to report the echo, then make a second, external change:
    # the next notification must be that external change, not an echo of the store.
    path = Path(workspace.memory_dir) / "decisions.md"
    path.write_text(path.read_text() + "- [two] A hand-written second decision.\n")
    second = await events.next()
    assert (second["params"]["source"], second["params"]["category"]) == ("external", "Decision")
    assert _contents(second) == ["First decision about caching.", "A hand-written second decision."]
    assert events.pending() == []


async def test_atomic_renames_are_seen(loaded: tuple[Workspace, Subscriber]) -> None:
    workspace, events = loaded
    temp = _memory(workspace) / "preferences.md.tmp-editor"
    temp.write_text("- [tabs] Prefer tabs.\n")
    os.replace(temp, Path(workspace.memory_dir) / "preferences.md")
    note = await events.next(_changed("Preference", "external"))
    assert _contents(note) == ["Prefer tabs."]


async def test_the_directory_can_be_deleted_and_recreated(
    loaded: tuple[Workspace, Subscriber],
) -> None:
    workspace, events = loaded
    memory = _memory(workspace)
    (memory / "security.md").write_text("- [keys] Never commit keys.\n")
    await events.next(_changed("Security", "external"))
    shutil.rmtree(memory)
    gone = await events.next(_changed("Security", "external"))
    assert _contents(gone) == []
    memory.mkdir()
    (memory / "security.md").write_text("- [tokens] Rotate tokens monthly.\n")
    back = await events.next(_changed("Security", "external"))
    assert _contents(back) == ["Rotate tokens monthly."]
    # And the watch is live again afterwards, not just a one-off rescan.
    (memory / "security.md").write_text("- [tokens] Rotate tokens weekly.\n")
    again = await events.next(_changed("Security", "external"))
    assert _contents(again) == ["Rotate tokens weekly."]


async def test_the_directory_renamed_away_and_back(loaded: tuple[Workspace, Subscriber]) -> None:
    workspace, events = loaded
    memory = _memory(workspace)
    (memory / "quirks.md").write_text("- [q] A quirk.\n")
    await events.next(_changed("Quirk", "external"))
    aside = memory.with_name(".memory-aside")
    memory.rename(aside)
    assert _contents(await events.next(_changed("Quirk", "external"))) == []
    aside.rename(memory)
    assert _contents(await events.next(_changed("Quirk", "external"))) == ["A quirk."]


async def test_a_file_turned_into_a_directory_is_an_error_for_that_file_only(
    loaded: tuple[Workspace, Subscriber],
) -> None:
    workspace, events = loaded
    memory = _memory(workspace)
    (memory / "quirks.md").unlink(missing_ok=True)  # made at load when `.memory/` existed
    (memory / "quirks.md").mkdir()
    note = await events.next(_changed("Quirk", "external"))
    assert "is a directory" in note["params"]["error"]
    outcome = await workspace.actor(Category.DECISION).submit(
        transitions.Store(content="Other files still work.")
    )
    assert isinstance(outcome, transitions.StoreOutcome)
    assert outcome.action == "stored"


async def test_unsubscribed_sessions_get_nothing(loaded: tuple[Workspace, Subscriber]) -> None:
    workspace, events = loaded
    other = Session(capacity=5)
    workspace.subscribe(other)
    assert workspace.unsubscribe(other) is True
    assert workspace.unsubscribe(other) is False
    await workspace.actor(Category.QUIRK).submit(transitions.Store(content="Only one listener."))
    await events.next(_changed("Quirk", "memd"))
    assert other.feeds == {}
    assert len(other._outbox) == 0


def test_only_category_files_count_as_changes() -> None:
    changes = {
        (Change.added, "/w/.memory/quirks.md"),
        (Change.deleted, "/w/.memory/.quirks.md.memd-0123456789ab.tmp"),
        (Change.added, "/w/.memory/.lock"),
        (Change.modified, "/w/.memory/archive.md"),
        (Change.modified, "/w/.memory/decisions.md"),
    }
    assert touched_categories(changes) == {Category.QUIRK, Category.DECISION}
    assert mentions(changes, "/w/.memory/.lock")
    assert not mentions(changes, "/w/.memory")


async def test_writes_queued_behind_a_held_lock_all_time_out_together(tmp_path: Path) -> None:
    """Five categories waiting for one held `.memory/.lock` share one deadline; they do not
    time out one after another (which would take 5 x the timeout)."""
    workspace = Workspace(str(tmp_path), clock=time.time, lock_timeout=1.0)
    holder = MemoryDirLock(workspace.memory_dir)  # another writer, holding the lock throughout
    failures: list[BaseException] = []

    async def store(category: Category) -> None:
        try:
            await workspace.actor(category).submit(transitions.Store(content="Blocked write."))
        except LockTimeout as exc:
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        await tg.start(workspace.run)
        async with holder.held():
            with anyio.fail_after(4):
                async with anyio.create_task_group() as writers:
                    for category in CATEGORIES:
                        writers.start_soon(store, category)
        workspace.close()
    assert len(failures) == len(CATEGORIES)
    # No store was written (the files the sweep creates once the lock is released hold
    # nothing but their headers).
    texts = [
        Path(workspace.memory_dir, name).read_text()  # noqa: ASYNC240  # a test's last look
        for name in os.listdir(workspace.memory_dir)
        if name.endswith(".md")
    ]
    assert not any("Blocked write" in text for text in texts)


async def test_a_file_name_that_is_not_utf8_does_not_stop_the_watcher(
    loaded: tuple[Workspace, Subscriber],
) -> None:
    workspace, events = loaded
    memory = _memory(workspace)
    os.close(os.open(os.path.join(os.fsencode(memory), b"\xff-notes.md"), os.O_CREAT | os.O_WRONLY))
    (memory / "quirks.md").write_text("- [after] Still watched afterwards.\n")
    note = await events.next(_changed("Quirk", "external"))
    assert _contents(note) == ["Still watched afterwards."]
    (memory / "quirks.md").write_text("- [again] And again.\n")
    assert _contents(await events.next(_changed("Quirk", "external"))) == ["And again."]


async def test_reads_and_outside_edits_never_wait_for_a_write_stuck_on_the_lock(
    tmp_path: Path,
) -> None:
    (tmp_path / ".memory").mkdir()
    workspace = Workspace(str(tmp_path), clock=time.time, lock_timeout=30.0)
    holder = MemoryDirLock(workspace.memory_dir)  # HackLM, say, holding the lock for a while
    path = tmp_path / ".memory" / "quirks.md"
    stored = anyio.Event()

    async def store() -> None:
        await workspace.actor(Category.QUIRK).submit(transitions.Store(content="Queued write."))
        stored.set()

    async with anyio.create_task_group() as tg:
        await tg.start(workspace.run)
        await holder.acquire()
        try:
            tg.start_soon(store)
            path.write_text("- [by-hand] Edited while memd waits for the lock.\n")
            with anyio.fail_after(5):  # far less than the 30 s the store may wait
                await workspace.refresh([Category.QUIRK])
            snapshot = workspace.actor(Category.QUIRK).snapshot
            assert [e.slug for e in snapshot.entries] == ["by-hand"]
            assert not stored.is_set()
        finally:
            await anyio.to_thread.run_sync(holder.release)
        with anyio.fail_after(10):
            await stored.wait()
        workspace.close()
    contents = [line for line in path.read_text().splitlines() if line.startswith("- ")]
    assert contents == [
        "- [by-hand] Edited while memd waits for the lock.",
        "- [queued-write] Queued write.",
    ]


async def test_a_workspace_whose_memory_directory_is_a_link_is_refused(tmp_path: Path) -> None:
    """A `.memory` that is a symbolic link (a cloned repository could point it anywhere) is
    neither read nor written; the directory it points at is left as it was."""
    first_root, second_root = tmp_path / "first", tmp_path / "second"
    (first_root / ".memory").mkdir(parents=True)
    second_root.mkdir()
    (second_root / ".memory").symlink_to(first_root / ".memory")
    workspaces = [Workspace(str(root), clock=time.time) for root in (first_root, second_root)]
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for workspace in workspaces:
                await tg.start(workspace.run)
            stored = (
                await workspaces[0]
                .actor(Category.QUIRK)
                .submit(transitions.Store(content="Stored in the real directory."))
            )
            assert isinstance(stored, transitions.StoreOutcome) and stored.action == "stored"
            with pytest.raises(FileFormatError, match="symbolic link"):
                await (
                    workspaces[1]
                    .actor(Category.QUIRK)
                    .submit(transitions.Store(content="Stored through the link?"))
                )
            for workspace in workspaces:
                workspace.close()
    text = (first_root / ".memory" / "quirks.md").read_text()
    assert "Stored in the real directory." in text and "through the link" not in text


async def test_a_long_write_keeps_its_lock_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace's keeper rewrites `.memory/.lock`'s `ts` while a write holds it, so HackLM
    never sees memd's lock go stale however long the write takes."""
    monkeypatch.setattr(hacklm_lock, "REFRESH_INTERVAL", 0.02)
    monkeypatch.setattr(write_lock, "REFRESH_INTERVAL", 0.02)
    workspace = Workspace(str(tmp_path), clock=time.time)
    lock_file = tmp_path / ".memory" / ".lock"
    (tmp_path / ".memory").mkdir()
    for category in CATEGORIES:  # all there: no new files to let settle before writing
        (tmp_path / ".memory" / category.file).write_text(category.header)

    def slow_write(check: hacklm_lock.LockCheck) -> tuple[bytes, bytes]:
        first = lock_file.read_bytes()
        deadline = time.monotonic() + 5
        while lock_file.read_bytes() == first and time.monotonic() < deadline:
            time.sleep(0.01)
        check()  # still ours after the refresh
        return first, lock_file.read_bytes()

    async with anyio.create_task_group() as tg:
        await tg.start(workspace.run)
        with anyio.fail_after(10):
            result = await workspace.lock.try_write(slow_write, deadline=anyio.current_time() + 5)
        workspace.close()
    assert isinstance(result, tuple)
    first, later = (hacklm_lock.parse_record(data) for data in result)
    assert first is not None and later is not None and later.ts > first.ts
    assert not lock_file.exists()
