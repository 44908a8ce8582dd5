"""The registry: workspaces load once each, side by side, and take the limits in force."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import anyio.lowlevel

from memd.core.format.categories import Category
from memd.core.writes import transitions
from memd.server.workspaces.registry import Registry
from memd.server.workspaces.workspace import Workspace, WorkspaceSettings


async def test_one_workspace_per_directory_however_many_ask_at_once(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    spellings = [tmp_path / "a", tmp_path / "link", tmp_path / "b" / ".." / "a", tmp_path / "b"]
    got: list[Workspace] = []

    async def get(path: Path) -> None:
        got.append(await registry.get(str(path)))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time)
            async with anyio.create_task_group() as askers:
                for path in spellings * 3:
                    askers.start_soon(get, path)
            assert registry.roots == [str(tmp_path / "a"), str(tmp_path / "b")]
            assert len({id(workspace) for workspace in got}) == 2
            registry.close()


async def test_limits_set_while_a_workspace_loads_apply_to_it(tmp_path: Path) -> None:
    limits = WorkspaceSettings(lock_timeout=1.5, max_file_bytes=5000, max_entry_chars=50)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time)
            loaded: list[Workspace] = []
            done = anyio.Event()

            async def load() -> None:
                loaded.append(await registry.get(str(tmp_path)))
                done.set()

            services.start_soon(load)
            while not registry._loading:  # the load has begun (and not finished)
                await anyio.lowlevel.checkpoint()
            registry.set_limits(limits)
            await done.wait()
            workspace = loaded[0]
            assert (workspace.lock.lock_timeout, workspace.max_file_bytes) == (1.5, 5000)
            assert registry.limits == limits
            registry.close()


RUNBOOK = '[[categories]]\nname = "Runbook"\nfile = "runbooks.md"\nlimit = 5\n'


async def test_a_categories_reload_waits_until_no_request_holds_the_workspace(
    tmp_path: Path,
) -> None:
    """A request that holds a workspace keeps it open while another request sees memd.toml
    change: an outcome it records (usage, saved only while the workspace is open) is not lost,
    and its stores are not refused. The next request after it loads the new categories."""
    (tmp_path / ".memory").mkdir()
    toml = tmp_path / ".memory" / "memd.toml"
    with anyio.fail_after(20):
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time)
            with registry.leases():
                held = await registry.get(str(tmp_path))
                toml.write_text(RUNBOOK)
                async with anyio.create_task_group() as other:  # another request, meanwhile
                    other.start_soon(registry.get, str(tmp_path))
                assert not held.stopped.is_set() and registry.roots == [str(tmp_path)]
                await held.actor(Category.QUIRK).submit(transitions.Store(content="Still taken."))
            again = await registry.get(str(tmp_path))
            assert again is not held and held.stopped.is_set()
            assert "Runbook" in [category.name for category in again.categories]
            registry.close()
