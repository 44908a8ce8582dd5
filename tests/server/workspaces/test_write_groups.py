"""Writes that queue for a workspace's lock share one hold (`write_lock.WorkspaceLock`): one
`.memory/.lock` taken for all of them, each write's outcome its own."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import anyio
import pytest

from memd.core.format.categories import CATEGORIES
from memd.core.writes import transitions
from memd.fs.lock_file import LockCheck
from memd.server.workspaces.registry import Registry
from memd.server.workspaces.workspace import Workspace
from tests.polling import until


async def _first_write_done(workspace: Workspace) -> None:
    """Store once, so `.memory/` is prepared and settled (a first write may wait for that)."""
    await workspace.actor(CATEGORIES[0]).submit(transitions.Store(content="The first entry."))


async def test_stores_to_five_categories_queued_together_share_one_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five stores, one a category, waiting while another write holds the lock, are all written
    in the next hold (one `.memory/.lock` taken, one fsync of `.memory/` after all five
    renames), and each is on disk when answered."""
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        workspace = await registry.get(str(tmp_path))
        await _first_write_done(workspace)
        lock = workspace.lock
        holds: list[int] = []
        directory_syncs: list[int] = []
        fsync = os.fsync

        def counting_fsync(fd: int) -> None:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                directory_syncs.append(fd)
            fsync(fd)

        monkeypatch.setattr(os, "fsync", counting_fsync)
        try_run = lock._dir_lock.try_run

        def counting(work):  # type: ignore[no-untyped-def]
            holds.append(1)
            return try_run(work)

        lock._dir_lock.try_run = counting  # type: ignore[method-assign]
        under_way = lock._running = anyio.Event()  # another write's hold
        outcomes: dict[str, transitions.Outcome] = {}

        async def store(index: int) -> None:
            category = CATEGORIES[index]
            outcomes[category.file] = await workspace.actor(category).submit(
                transitions.Store(content=f"Entry number {index} about the {category.file} file.")
            )

        async with anyio.create_task_group() as writers:
            for index in range(len(CATEGORIES)):
                writers.start_soon(store, index)
            await until(lambda: len(lock._queue) == len(CATEGORIES))
            lock._running = None
            under_way.set()
        assert len(holds) == 1
        assert len(directory_syncs) == 1
        for category in CATEGORIES:
            assert isinstance(outcomes[category.file], transitions.StoreOutcome)
            text = (tmp_path / ".memory" / category.file).read_text()
            assert f"about the {category.file} file." in text
        registry.close()


async def test_one_write_failing_in_a_shared_hold_leaves_the_others_their_outcome(
    tmp_path: Path,
) -> None:
    """A write whose work raises gets its error; the write beside it in the same hold runs and
    gets its own value."""
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        workspace = await registry.get(str(tmp_path))
        await _first_write_done(workspace)
        lock = workspace.lock
        under_way = lock._running = anyio.Event()
        got: dict[str, object] = {}

        def failing(check: LockCheck) -> str:
            check()
            raise OSError("disk full")

        def working(check: LockCheck) -> str:
            check()
            return "written"

        async def write(name: str, work: object) -> None:
            try:
                got[name] = await lock.try_write(work, deadline=anyio.current_time() + 30)  # type: ignore[arg-type]
            except OSError as error:
                got[name] = error

        async with anyio.create_task_group() as writers:
            writers.start_soon(write, "failing", failing)
            writers.start_soon(write, "working", working)
            await until(lambda: len(lock._queue) == 2)
            lock._running = None
            under_way.set()
        assert isinstance(got["failing"], OSError)
        assert got["working"] == "written"
        assert not lock.is_held
        registry.close()


async def test_a_write_that_stops_waiting_before_its_hold_is_never_run(tmp_path: Path) -> None:
    """A write whose deadline passes while it is still queued leaves the queue and is never
    run (its caller is told the lock timed out)."""
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        workspace = await registry.get(str(tmp_path))
        await _first_write_done(workspace)
        lock = workspace.lock
        under_way = lock._running = anyio.Event()
        ran: list[str] = []
        with pytest.raises(Exception, match="lock"):
            await lock.try_write(
                lambda check: ran.append("ran"), deadline=anyio.current_time() + 0.05
            )
        assert lock._queue == []
        lock._running = None
        under_way.set()
        assert ran == []
        registry.close()
