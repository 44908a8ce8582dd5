"""The category actor on real files: group commit, durability of replies, external edits."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from memd.core.format import mdformat
from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.writes import transitions
from memd.server.workspaces import actor as actor_module
from memd.server.workspaces.actor import CategoryActor
from memd.server.workspaces.write_lock import Unlocked
from memd_client.errors import FileFormatError, LockTimeout, RpcError, ServerBusy

archived: list[ArchivedEntry] = []


def _archive(records: list[ArchivedEntry]) -> None:
    archived.extend(records)


def _actor(directory: Path, *, lock_check: Callable[[], None] | None = None) -> CategoryActor:
    """A Quirk actor; with `lock_check`, its write lock (no real lock) runs that check before
    each rename."""
    if lock_check is None:
        return CategoryActor(str(directory), Category.QUIRK, archive=_archive, clock=time.time)
    return CategoryActor(
        str(directory),
        Category.QUIRK,
        archive=_archive,
        clock=time.time,
        write_lock=Unlocked(lock_check),
    )


async def test_concurrent_stores_share_commits_and_all_land(tmp_path: Path) -> None:
    actor = _actor(tmp_path)
    outcomes: list[transitions.Outcome] = []

    async def store(n: int) -> None:
        content = f"Concurrent note{n} q{n}x z{n}k w{n}j."
        outcomes.append(await actor.submit(transitions.Store(content=content)))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            async with anyio.create_task_group() as writers:
                for n in range(100):
                    writers.start_soon(store, n)
            actor.close()
    entries = mdformat.entries(mdformat.parse((tmp_path / "quirks.md").read_text()))
    assert len(entries) == 100
    assert all(isinstance(o, transitions.StoreOutcome) and o.action == "stored" for o in outcomes)
    assert actor.commits < 100


async def _one_batch(
    actor: CategoryActor, commands: dict[str, transitions.Command]
) -> dict[str, transitions.Outcome | RpcError]:
    """Queue every command before the actor starts (so they make one batch), run it, close it,
    and return each command's reply."""
    replies: dict[str, transitions.Outcome | RpcError] = {}

    async def send(name: str, command: transitions.Command) -> None:
        try:
            replies[name] = await actor.submit(command)
        except RpcError as error:
            replies[name] = error

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            async with anyio.create_task_group() as senders:
                for name, command in commands.items():
                    senders.start_soon(send, name, command)
                await anyio.wait_all_tasks_blocked()
                await tg.start(actor.run)
            actor.close()
    return replies


QUIRKS = "".join(f"- [q{n}] Quirk number {n} stays.\n" for n in range(100))


async def test_only_the_stores_that_do_not_fit_the_cap_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text(f"# Quirks\n\n{QUIRKS}")
    actor = _actor(tmp_path)
    actor.max_file_bytes = path.stat().st_size + 60
    long = "A new quirk that is far too long to fit under the cap, even with a line deleted."
    replies = await _one_batch(
        actor,
        {
            "fits": transitions.Store(content="Short fits.", slug="short"),
            "duplicate": transitions.Store(content="Quirk number 5 stays."),
            "dry": transitions.Store(content=long, dry_run=True),
            "delete": transitions.Delete(slug="q0"),
            "long": transitions.Store(content=long),
            "shorter": transitions.Store(content="Q1 shorter.", slug="q1"),
            "invalid": transitions.Store(content="bell\x07"),
        },
    )
    refused = replies.pop("long")
    assert isinstance(refused, FileFormatError)
    assert refused.message.startswith(f"Not stored: {path} would grow to")
    assert refused.data["size"] > actor.max_file_bytes
    assert "control characters" in str(replies.pop("invalid"))  # its own error, not the cap's
    actions = {name: getattr(got, "action", type(got).__name__) for name, got in replies.items()}
    assert actions == {
        "fits": "stored",
        "duplicate": "skipped",
        "dry": "stored",
        "delete": "DeleteOutcome",
        "shorter": "updated",
    }
    text = path.read_text()
    assert "- [short] Short fits." in text and "- [q1] Q1 shorter." in text
    assert "[q0]" not in text and long not in text
    assert len(text.encode()) <= actor.max_file_bytes
    assert actor.commits == 1


async def test_the_cap_is_judged_on_the_file_as_it_is_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text(f"# Quirks\n\n{QUIRKS}")
    actor = _actor(tmp_path)
    actor.max_file_bytes = path.stat().st_size + 10
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            path.write_text("# Quirks\n\n- [q0] Quirk number 0 stays.\n")  # trimmed by hand
            outcome = await actor.submit(transitions.Store(content="A new quirk fits now."))
            assert isinstance(outcome, transitions.StoreOutcome) and outcome.action == "stored"
            actor.close()
    assert path.read_text().count("\n- ") == 2


async def test_a_cleanup_that_would_grow_the_file_past_the_cap_writes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "quirks.md"
    text = "# Quirks\n\n- Database migrations run nightly.\n- Cookies expire after an hour.\n"
    path.write_text(text)
    actor = _actor(tmp_path)
    actor.max_file_bytes = len(text)  # loaded; giving each entry a slug would pass the cap
    replies = await _one_batch(actor, {"cleanup": transitions.Cleanup(apply=True)})
    refused = replies["cleanup"]
    assert isinstance(refused, FileFormatError)
    assert refused.message.startswith(f"Nothing written: {path} would grow to")
    assert path.read_text() == text


async def test_a_reply_means_the_write_is_on_disk_and_visible(tmp_path: Path) -> None:
    actor = _actor(tmp_path)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            outcome = await actor.submit(transitions.Store(content="Visible at once.", slug="vis"))
            assert isinstance(outcome, transitions.StoreOutcome)
            assert "- [vis] Visible at once." in (tmp_path / "quirks.md").read_text()
            assert [e.slug for e in actor.snapshot.entries] == ["vis"]
            actor.close()


async def test_a_hand_edit_between_two_stores_survives(tmp_path: Path) -> None:
    actor = _actor(tmp_path)
    path = tmp_path / "quirks.md"
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            await actor.submit(transitions.Store(content="First stored by memd.", slug="first"))
            with path.open("a") as handle:
                handle.write("\n- [by-hand] Typed in an editor.\nA prose line.\n")
            await actor.submit(
                transitions.Store(content="Second stored by memd, later.", slug="second")
            )
            actor.close()
    text = path.read_text()
    assert [e.slug for e in mdformat.entries(mdformat.parse(text))] == [
        "first",
        "by-hand",
        "second",
    ]
    assert "A prose line.\n" in text


async def test_an_unreadable_file_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_bytes(b"- [x] caf\xe9\n")
    actor = _actor(tmp_path)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            with pytest.raises(FileFormatError):
                await actor.submit(transitions.Store(content="Anything."))
            assert path.read_bytes() == b"- [x] caf\xe9\n"
            path.write_text("- [x] cafe\n")
            outcome = await actor.submit(transitions.Store(content="Now it works.", slug="ok"))
            assert isinstance(outcome, transitions.StoreOutcome)
            actor.close()
    assert [e.slug for e in mdformat.entries(mdformat.parse(path.read_text()))] == ["x", "ok"]


async def test_delete_archives_before_removing(tmp_path: Path) -> None:
    archived.clear()
    actor = _actor(tmp_path)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            await actor.submit(transitions.Store(content="Short lived.", slug="gone"))
            outcome = await actor.submit(transitions.Delete(slug="gone"))
            actor.close()
    assert isinstance(outcome, transitions.DeleteOutcome)
    assert outcome.deleted
    assert [(a.slug, a.content, a.reason) for a in archived] == [
        ("gone", "Short lived.", "deleted")
    ]
    assert mdformat.entries(mdformat.parse((tmp_path / "quirks.md").read_text())) == ()


async def test_an_edit_landing_just_before_the_rename_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("- [old] Already there.\n")
    edits = ["- [old] Already there.\n- [late] Saved by an editor at the last moment.\n"]

    def edit_once() -> None:  # runs after the commit read the file, right before its rename
        if edits:
            path.write_text(edits.pop())

    actor = _actor(tmp_path, lock_check=edit_once)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            await actor.submit(transitions.Store(content="Stored by memd.", slug="new"))
            actor.close()
    slugs = [e.slug for e in mdformat.entries(mdformat.parse(path.read_text()))]
    assert slugs == ["old", "late", "new"]


async def test_a_lost_lock_fails_the_batch_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("- [old] Already there.\n")

    def lost() -> None:
        raise LockTimeout("memd lost the lock.")

    actor = _actor(tmp_path, lock_check=lost)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            with pytest.raises(LockTimeout):
                await actor.submit(transitions.Store(content="Never written.", slug="new"))
            actor.close()
    assert path.read_text() == "- [old] Already there.\n"
    assert os.listdir(tmp_path) == ["quirks.md"]


async def test_a_fifo_in_place_of_the_file_is_an_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "quirks.md")
    actor = _actor(tmp_path)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            assert actor.snapshot.error is not None
            assert "not a regular file" in actor.snapshot.error.message
            with pytest.raises(FileFormatError):
                await actor.submit(transitions.Store(content="Anything."))
            actor.close()


async def test_a_write_that_hangs_is_answered_busy_after_the_reply_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One watchdog per actor bounds every wait for a reply; the command may still land."""
    monkeypatch.setattr(actor_module, "REPLY_TIMEOUT", 0.2)
    monkeypatch.setattr(actor_module, "WATCHDOG_INTERVAL", 0.05)
    release = threading.Event()

    def stuck_until_released() -> None:  # runs in the writing thread, right before the rename
        release.wait(10)

    actor = _actor(tmp_path, lock_check=stuck_until_released)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            started = anyio.current_time()
            with pytest.raises(ServerBusy, match="may still be applied"):
                await actor.submit(transitions.Store(content="Slow to land.", slug="slow"))
            assert anyio.current_time() - started < 2
            release.set()
            actor.close()
    assert "- [slow] Slow to land." in (tmp_path / "quirks.md").read_text()
