"""The category actor against the writers it races: lock-less writers landing after its last
check, HackLM writing between memd's apply and its lock, a file that vanished while git works on
it, HackLM's first-use header over acknowledged entries, and git's index lock."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from memd.core.format import mdformat
from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.writes import transitions
from memd.fs import renames
from memd.fs.lock_file import Busy, LockCheck
from memd.server.workspaces import actor as actor_module
from memd.server.workspaces.actor import CategoryActor
from memd.server.workspaces.workspace import Workspace
from memd.server.workspaces.write_lock import Staging, Unlocked
from memd_client.errors import LockTimeout, RpcError, ServerBusy
from tests.polling import until

T = TypeVar("T")


def _ignore(records: list[ArchivedEntry]) -> None:
    pass


def _slugs(path: Path) -> list[str | None]:
    return [e.slug for e in mdformat.entries(mdformat.parse(path.read_text()))]


def _replace_outside(path: Path, text: str) -> None:
    """What an editor or a lock-less tool does: write a temp file and rename it over."""
    temp = path.with_name(path.name + ".outside")
    temp.write_text(text)
    os.replace(temp, path)


class HackLMFirst:
    """A write lock under which HackLM's writer got the lock first, every time until `times`
    runs out: it writes the file just before memd's work runs (the file then stays still)."""

    lock_timeout = 10.0

    def __init__(self, path: Path, times: int) -> None:
        self.path = path
        self.times = times

    async def try_write(
        self, work: Callable[[LockCheck], T], *, deadline: float, staging: Staging | None = None
    ) -> T | Busy:
        if self.times > 0:
            self.times -= 1
            text = self.path.read_text()
            self.path.write_text(text + f"- [hacklm-{self.times}] Written by HackLM.\n")
        return await anyio.to_thread.run_sync(work, lambda: None)

    def lock_timeout_error(self) -> RpcError:
        return LockTimeout("never")

    async def wait_turn(self) -> None:
        pass


async def _store_once(actor: CategoryActor, command: transitions.Command) -> transitions.Outcome:
    """Run `actor`, submit `command`, stop the actor; return the outcome or raise its error."""
    replies: list[transitions.Outcome | RpcError] = []
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            try:
                replies.append(await actor.submit(command))
            except RpcError as error:
                replies.append(error)
            actor.close()
    if isinstance(replies[0], RpcError):
        raise replies[0]
    return replies[0]


def _quirk_actor(directory: Path, **kwargs: object) -> CategoryActor:
    return CategoryActor(
        str(directory),
        Category.QUIRK,
        archive=_ignore,
        clock=time.time,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_a_lockless_replace_after_the_last_check_is_put_back_and_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that ignores the lock renames its file in after memd's last check and before
    memd's rename: memd swaps, sees the displaced file is not the one it read, swaps it back and
    applies its store to it."""
    path = tmp_path / "quirks.md"
    path.write_text("- [old] Already there.\n")
    real_swap = renames.swap
    landed: list[str] = []

    def swap_after_an_outside_write(dir_fd: int, a: str, b: str) -> bool:
        if not landed:
            landed.append(b)
            _replace_outside(path, path.read_text() + "- [outside] Saved without the lock.\n")
        return real_swap(dir_fd, a, b)

    monkeypatch.setattr(renames, "swap", swap_after_an_outside_write)
    await _store_once(_quirk_actor(tmp_path), transitions.Store(content="Stored.", slug="mine"))
    assert landed == ["quirks.md"]
    assert _slugs(path) == ["old", "outside", "mine"]


async def test_a_lockless_in_place_write_after_the_last_check_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("- [old] Already there.\n")
    real_swap = renames.swap
    done: list[bool] = []

    def swap_after_an_append(dir_fd: int, a: str, b: str) -> bool:
        if not done:
            done.append(True)
            with path.open("a") as handle:  # an append in place: same inode, new size
                handle.write("- [appended] Appended in place.\n")
        return real_swap(dir_fd, a, b)

    monkeypatch.setattr(renames, "swap", swap_after_an_append)
    await _store_once(_quirk_actor(tmp_path), transitions.Store(content="Stored.", slug="mine"))
    assert _slugs(path) == ["old", "appended", "mine"]


async def test_a_file_hacklm_keeps_writing_is_read_again_under_the_lock(tmp_path: Path) -> None:
    """HackLM takes the lock between memd's apply and memd's turn, again and again: memd used to
    give up after 5 attempts ("kept changing", 1-18 % of stores); now its second attempt reads
    the file under the lock, where HackLM cannot change it."""
    path = tmp_path / "quirks.md"
    path.write_text("- [old] Already there.\n")
    lock = HackLMFirst(path, times=50)
    outcome = await _store_once(
        _quirk_actor(tmp_path, write_lock=lock), transitions.Store(content="Stored.", slug="mine")
    )
    assert isinstance(outcome, transitions.StoreOutcome) and outcome.action == "stored"
    assert lock.times == 48  # HackLM wrote twice: before each of memd's two attempts
    assert _slugs(path) == ["old", "hacklm-49", "hacklm-48", "mine"]


async def test_a_lockless_writer_that_never_stops_gets_a_retryable_busy(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("- [old] Already there.\n")
    count = [0]

    def always_changing() -> None:  # runs right before each rename
        count[0] += 1
        _replace_outside(path, path.read_text() + f"- [w{count[0]}] Another write.\n")

    with pytest.raises(ServerBusy, match="safe to retry"):
        await _store_once(
            _quirk_actor(tmp_path, write_lock=Unlocked(always_changing)),
            transitions.Store(content="Stored.", slug="mine"),
        )
    assert "mine" not in _slugs(path)
    assert _slugs(path)[:2] == ["old", "w1"]


async def test_a_vanished_file_is_not_an_empty_base(tmp_path: Path) -> None:
    """git unlinks a tracked file and creates it again with O_EXCL: a store arriving in between
    waits for it to come back instead of creating a file of its own (git would then fail)."""
    path = tmp_path / "quirks.md"
    committed = "- [kept] Committed quirk.\n"
    path.write_text(committed)
    actor = _quirk_actor(tmp_path)
    outcome: list[transitions.Outcome] = []

    async def store() -> None:
        outcome.append(await actor.submit(transitions.Store(content="Stored.", slug="mine")))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            os.unlink(path)
            tg.start_soon(store)
            # The store saw the file gone and waits for it.
            await until(lambda: actor._vanished_at is not None)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)  # git's create
            os.write(fd, committed.encode())
            os.close(fd)
            await until(lambda: outcome)
            actor.close()
    assert _slugs(path) == ["kept", "mine"]


async def test_a_file_deleted_for_good_is_created_once_it_settles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(actor_module, "VANISH_SETTLE", 0.05)
    path = tmp_path / "quirks.md"
    path.write_text("- [gone] Deleted by the user.\n")
    actor = _quirk_actor(tmp_path)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            os.unlink(path)
            await actor.submit(transitions.Store(content="Stored.", slug="mine"))
            actor.close()
    assert _slugs(path) == ["mine"]


async def test_hacklms_first_use_header_over_a_commit_gets_its_entries_back(
    tmp_path: Path,
) -> None:
    """HackLM checked the file was missing just before memd created it, then wrote its header
    over it: the acknowledged store comes back."""
    path = tmp_path / "quirks.md"
    actor = _quirk_actor(tmp_path)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            await actor.submit(transitions.Store(content="Acknowledged quirk.", slug="ack"))
            path.write_text("# Quirk\n\nMemories stored by HackLM Memory.\n\n")  # no lock, O_TRUNC
            await actor.sync()
            await until(lambda: "ack" in _slugs(path))
            actor.close()
    assert path.read_text().startswith("# Quirk\n\nMemories stored by HackLM Memory.\n")
    assert _slugs(path) == ["ack"]


def _git_lock(root: Path) -> Path:
    (root / ".git").mkdir()
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    return lock


async def test_nothing_is_written_while_git_holds_its_index_lock(tmp_path: Path) -> None:
    lock = _git_lock(tmp_path)
    workspace = Workspace(str(tmp_path), clock=time.time)
    done: list[transitions.Outcome] = []

    async def store() -> None:
        actor = workspace.actor(Category.QUIRK)
        done.append(await actor.submit(transitions.Store(content="Stored.", slug="mine")))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(workspace.run)
            tg.start_soon(store)
            # The write found git working and backs off.
            await until(lambda: workspace.lock._git_lock is not None)
            assert not (tmp_path / ".memory" / "quirks.md").exists()
            lock.unlink()  # git is done
            await until(lambda: done)
            workspace.close()
    assert _slugs(tmp_path / ".memory" / "quirks.md") == ["mine"]


async def test_a_git_lock_held_too_long_fails_the_write_naming_git(tmp_path: Path) -> None:
    _git_lock(tmp_path)
    workspace = Workspace(str(tmp_path), clock=time.time, lock_timeout=0.3)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(workspace.run)
            with pytest.raises(LockTimeout, match=r"git has been working.*index\.lock"):
                await workspace.actor(Category.QUIRK).submit(transitions.Store(content="No."))
            workspace.close()
    assert not (tmp_path / ".memory" / "quirks.md").exists()


async def test_a_stale_git_lock_does_not_stop_writes(tmp_path: Path) -> None:
    lock = _git_lock(tmp_path)
    old = time.time() - 3600
    os.utime(lock, (old, old))
    workspace = Workspace(str(tmp_path), clock=time.time, lock_timeout=0.3)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(workspace.run)
            await workspace.actor(Category.QUIRK).submit(
                transitions.Store(content="Yes.", slug="y")
            )
            workspace.close()
    assert _slugs(tmp_path / ".memory" / "quirks.md") == ["y"]
