"""Idle workspaces unload (and nothing keeps them alive after) and load again on use; no
request ever gets a closed workspace; the cache of path spellings stays bounded and forgets
unloaded workspaces."""

from __future__ import annotations

import gc
import random
import time
import weakref
from pathlib import Path

import anyio
import pytest
from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.core.writes import transitions
from memd.server.methods.handlers import Methods
from memd.server.rpc.session import Session
from memd.server.workspaces.registry import PATH_MAX, Registry
from memd.server.workspaces.spellings import ENTRY_OVERHEAD, SpellingCache
from memd.server.workspaces.workspace import Workspace, WorkspaceSettings
from memd_client import protocol as p
from memd_client.errors import InvalidParams
from tests.polling import until


async def test_an_idle_workspace_unloads_and_the_next_request_loads_it_again(
    tmp_path: Path,
) -> None:
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time, limits=WorkspaceSettings(idle_unload=0.05))
        with registry.leases():
            first = await registry.get(str(tmp_path))
            await first.actor(Category.QUIRK).submit(transitions.Store(content="Kept on disk."))
        await until(lambda: registry.roots == [])
        assert len(registry._spellings) == 0  # its spellings went with it
        with registry.leases():
            again = await registry.get(str(tmp_path))
            assert again is not first and first.stopped.is_set() and not again.stopped.is_set()
            assert [e.content for e in again.actor(Category.QUIRK).snapshot.entries] == [
                "Kept on disk."
            ]
        await until(lambda: registry.unloaded == 2)
        registry.close()


async def test_unloaded_workspaces_are_freed(tmp_path: Path) -> None:
    """Once every workspace has unloaded, none is still alive: not the ones of the request
    that started the registry's services (whose tasks keep copies of its context), nor the
    first of two a request held when it loaded the second, nor one that queries used (worker
    thread calls, timers), nor the last one the idle check looked at."""
    roots = [tmp_path / f"w{n}" for n in range(5)]
    for root in roots:
        root.mkdir()
        (root / "CLAUDE.md").write_text("# Rules\n\n- Widgets spin twice.\n")
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time, limits=WorkspaceSettings(idle_unload=0.02))
        _, query = Methods(registry, started=0.0, socket_path="unused").table["query"]

        async def held(*paths: Path) -> list[weakref.ref[Workspace]]:
            with registry.leases():
                return [weakref.ref(await registry.get(str(path))) for path in paths]

        async def queried(path: Path) -> weakref.ref[Workspace]:
            await query(p.QueryParams(workspace=str(path), query="widgets"), Session())
            return weakref.ref(registry._workspaces[str(path)])

        workspaces = await held(roots[0], roots[1])
        for root in roots[2:]:
            workspaces.append(await queried(root))
        await until(lambda: registry.roots == [] and registry.unloaded == len(roots))
        gc.collect()
        alive = [
            root.name for root, ref in zip(roots, workspaces, strict=True) if ref() is not None
        ]
        assert alive == []
        registry.close()


async def test_a_held_or_subscribed_workspace_stays_loaded(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time, limits=WorkspaceSettings(idle_unload=0.02))
        session = Session()
        with registry.leases():
            subscribed = await registry.get(str(tmp_path / "b"))
            subscribed.subscribe(session)
        with registry.leases():
            held = await registry.get(str(tmp_path / "a"))
            checks = registry.idle_checks
            await until(lambda: registry.idle_checks >= checks + 10)
            assert registry.roots == [str(tmp_path / "a"), str(tmp_path / "b")]
            assert held.idle_for(anyio.current_time()) == 0
        await until(lambda: registry.roots == [str(tmp_path / "b")])
        subscribed.unsubscribe(session)
        subscribed.last_used = anyio.current_time()
        await until(lambda: registry.roots == [])
        registry.close()


async def test_a_request_during_an_unload_waits_for_it_then_loads_afresh(
    tmp_path: Path,
) -> None:
    """The old workspace still has a write to finish when a request for it comes: the request
    waits until the old one has stopped, and only then loads it again (never two sets of actors
    on one directory)."""
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        old = await registry.get(str(tmp_path))
        under_way = old.lock._running = anyio.Event()  # a write of the old workspace, under way
        services.start_soon(
            old.actor(Category.QUIRK).submit, transitions.Store(content="Queued before.")
        )
        await until(lambda: old.actor(Category.QUIRK)._waiting)  # queued
        registry._unload(old, services)  # what the idle check does; queued writes still finish
        got: list[Workspace] = []
        stopped_at: list[float] = []

        async def request() -> None:
            got.append(await registry.get(str(tmp_path)))

        async def note_stop() -> None:
            await old.stopped.wait()
            stopped_at.append(anyio.current_time())

        services.start_soon(note_stop)
        services.start_soon(request)
        with anyio.move_on_after(0.5):  # time enough to load a workspace, were it allowed to
            await until(lambda: got)
        assert not got and not old.stopped.is_set()
        old.lock._running = None  # that write's group is over
        under_way.set()
        await until(lambda: got and stopped_at)
        new = got[0]
        assert new is not old and new.last_used >= stopped_at[0]
        assert [e.content for e in new.actor(Category.QUIRK).snapshot.entries] == ["Queued before."]
        assert registry.roots == [str(tmp_path)] and registry.unloaded == 1
        registry.close()


async def test_requests_racing_unloads_never_get_a_closed_workspace(tmp_path: Path) -> None:
    """Requests come and go at random while the idle time is shorter than the gaps between
    them: workspaces unload and reload many times, and every request's store succeeds."""
    roots = [tmp_path / f"w{n}" for n in range(3)]
    for root in roots:
        root.mkdir()
    stored: list[str] = []
    rng = random.Random(17)

    async def client(number: int) -> None:
        for step in range(25):
            root = rng.choice(roots)
            with registry.leases():
                workspace: Workspace = await registry.get(str(root))
                assert not workspace.stopped.is_set()
                n = number * 100 + step
                content = f"Client note{n} q{n}x z{n}k w{n}j."
                outcome = await workspace.actor(Category.DECISION).submit(
                    transitions.Store(content=content)
                )
                assert isinstance(outcome, transitions.StoreOutcome)
                assert outcome.action == "stored", outcome
                stored.append(content)
            await anyio.sleep(rng.choice((0, 0.001, 0.01, 0.02)))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as services:
            registry = Registry(
                services, clock=time.time, limits=WorkspaceSettings(idle_unload=0.005)
            )
            async with anyio.create_task_group() as clients:
                for number in range(6):
                    clients.start_soon(client, number)
            assert registry.unloaded > 0
            registry.close()
    on_disk = "".join((root / ".memory" / "decisions.md").read_text() for root in roots)
    assert all(content in on_disk for content in stored) and len(stored) == 150


async def test_a_spelling_past_path_max_is_refused_before_it_is_resolved(tmp_path: Path) -> None:
    """A 200 KB spelling used to cost seconds of a worker thread each (quadratic in its
    length); it is refused at once, and nothing is loaded or kept for it."""
    spelling = str(tmp_path) + "/." * 100_000
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        with pytest.raises(InvalidParams, match="PATH_MAX"):
            await registry.get(spelling)
        assert len(registry._spellings) == 0 and registry.roots == []
        longest = str(tmp_path) + "/." * ((PATH_MAX - len(str(tmp_path))) // 2)
        workspace = await registry.get(longest)  # as long as a path can be: still served
        assert workspace.root == str(tmp_path)
        registry.close()


@given(st.lists(st.tuples(st.text(max_size=60), st.integers(0, 5)), max_size=200))
def test_the_spelling_cache_keeps_to_its_bounds(puts: list[tuple[str, int]]) -> None:
    targets = [object() for _ in range(6)]
    cache: SpellingCache[object] = SpellingCache(
        max_entries=20, max_bytes=20 * ENTRY_OVERHEAD + 300, max_spelling_bytes=50
    )
    for spelling, target in puts:
        cache.put(spelling, targets[target])
        assert len(cache) <= 20 and cache.bytes <= cache.max_bytes
        if len(spelling.encode("utf-8", "surrogatepass")) <= 50:
            assert cache.get(spelling) is targets[target]  # the newest is always kept
    for each in targets:
        cache.forget(each)
    assert len(cache) == 0 and cache.bytes == 0
