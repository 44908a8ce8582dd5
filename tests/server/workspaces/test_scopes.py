"""The user-wide memory's existence check never outlives a store that created it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import anyio
import pytest

from memd.server.workspaces.registry import Registry
from memd.server.workspaces.scopes import Scopes


async def test_a_check_overtaken_by_a_creation_does_not_hide_the_new_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "global"
    memory = str(root / ".memory")
    checking, release = threading.Event(), threading.Event()
    real_isdir = os.path.isdir

    def slow_isdir(path: str) -> bool:
        if path == memory and not checking.is_set():
            answer = real_isdir(path)  # absent now; the creation lands while this waits
            checking.set()
            release.wait(10)
            return answer
        return real_isdir(path)

    monkeypatch.setattr(os.path, "isdir", slow_isdir)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as services:
            scopes = Scopes(Registry(services, clock=time.time), root=str(root))
            found: list[object] = []
            searched = anyio.Event()

            async def search() -> None:
                found.append(await scopes.user_wide(create=False))
                searched.set()

            services.start_soon(search)
            await anyio.to_thread.run_sync(checking.wait, 10)
            await scopes.user_wide(create=True)
            os.makedirs(memory)  # what the store's write does
            release.set()
            await searched.wait()
            assert found == [None]  # that search began before the memory existed
            assert await scopes.user_wide(create=False) is not None
            scopes.registry.close()
