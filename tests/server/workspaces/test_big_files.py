"""A big category file never freezes the event loop: parsing, the search index and the dedup
index are built in worker threads (at load, at a re-read, before the first write decision)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from memd.core.format.categories import Category
from memd.core.search import index as index_module, ranking
from memd.core.search.index import IndexBuild
from memd.core.writes import transitions
from memd.core.writes.catalog import Catalog
from memd.core.writes.dedup_index import DedupBuild, DedupIndex
from memd.server.workspaces import actor as actor_module
from memd.server.workspaces.actor import CategoryActor


def _file(entries: int, word: str = "alpha") -> str:
    lines = "".join(f"- [{word}-{n}] {word} note{n} q{n}x z{n}k w{n}j.\n" for n in range(entries))
    return f"# Quirks\n\n{lines}"


def _off_loop(calls: list[bool]) -> bool:
    """Whether there were calls and none ran on the event loop's thread."""
    return bool(calls) and True not in calls


@pytest.fixture
def threads_used(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[bool]]:
    """For the dedup index build, the catalog parse and the search index build: whether each
    call ran on the main thread (the event loop's)."""
    seen: dict[str, list[bool]] = {"dedup": [], "parse": [], "search": []}

    def recording(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen[name].append(threading.current_thread() is threading.main_thread())
            return function(*args, **kwargs)

        return wrapper

    build = DedupIndex.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(DedupIndex, "build", classmethod(recording("dedup", build)))
    monkeypatch.setattr(DedupBuild, "step", recording("dedup", DedupBuild.step))
    monkeypatch.setattr(index_module.IndexBuild, "step", recording("search", IndexBuild.step))
    from_text = Catalog.from_text.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Catalog, "from_text", classmethod(recording("parse", from_text)))
    monkeypatch.setattr(ranking, "build_index", recording("search", index_module.build_index))
    return seen


async def test_the_first_store_builds_the_dedup_index_in_a_worker_thread(
    tmp_path: Path, threads_used: dict[str, list[bool]]
) -> None:
    (tmp_path / "quirks.md").write_text(_file(300))
    actor = CategoryActor(str(tmp_path), Category.QUIRK, archive=lambda r: None, clock=time.time)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            assert threads_used["parse"] == [False] and _off_loop(threads_used["search"])
            assert threads_used["dedup"] == []  # not built at load: a restart stays quick
            outcome = await actor.submit(transitions.Store(content="Deploy on Fridays only."))
            assert isinstance(outcome, transitions.StoreOutcome) and outcome.action == "stored"
            assert _off_loop(threads_used["dedup"])
            actor.close()


async def test_a_rewritten_file_is_parsed_and_indexed_in_a_worker_thread(
    tmp_path: Path, threads_used: dict[str, list[bool]]
) -> None:
    path = tmp_path / "quirks.md"
    path.write_text(_file(300))
    actor = CategoryActor(str(tmp_path), Category.QUIRK, archive=lambda r: None, clock=time.time)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            await actor.submit(transitions.Store(content="Deploy on Fridays only."))
            actor.snapshot.index  # noqa: B018 - searched once, as a query would
            for name in threads_used:
                threads_used[name].clear()
            path.write_text(_file(actor_module.REINDEX_OFF_LOOP + 50, word="beta"))
            await actor.sync()
            hits = ranking.search(
                [(Category.QUIRK, actor.snapshot.index)], "beta note7", limit=5
            ).hits
            assert hits and hits[0].entry.slug == "beta-7"
            assert threads_used["parse"] == [False]
            assert _off_loop(threads_used["search"])  # a new index, built in worker threads
            assert actor.snapshot.catalog is not None
            assert actor.snapshot.catalog.has_index  # writes came: carried over, in the thread
            outcome = await actor.submit(transitions.Store(content="beta note9 q9x z9k w9j."))
            assert isinstance(outcome, transitions.StoreOutcome) and outcome.action == "skipped"
            assert True not in threads_used["dedup"]
            actor.close()


async def test_a_small_outside_edit_updates_the_search_index_in_place(
    tmp_path: Path, threads_used: dict[str, list[bool]]
) -> None:
    path = tmp_path / "quirks.md"
    path.write_text(_file(300))
    actor = CategoryActor(str(tmp_path), Category.QUIRK, archive=lambda r: None, clock=time.time)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            first = actor.snapshot.index
            threads_used["search"].clear()
            path.write_text(path.read_text() + "- [gamma] gamma appended by hand.\n")
            await actor.sync()
            assert threads_used["search"] == []  # not rebuilt: the next search updates it
            hits = ranking.search([(Category.QUIRK, actor.snapshot.index)], "gamma", limit=5).hits
            assert [hit.entry.slug for hit in hits] == ["gamma"]
            assert threads_used["search"] == [True]  # the update costs one entry
            with pytest.raises(RuntimeError):
                first.entries  # noqa: B018 - taken over, not copied
            actor.close()


async def test_another_worker_thread_call_goes_between_the_units_of_a_big_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one worker thread to share, a call made while a big file is being indexed runs
    before the load ends: each unit of the index build is its own worker-thread call and gives
    the token back (one call for the whole build held it to the end)."""
    monkeypatch.setattr(actor_module, "BUILD_UNIT", 50)
    (tmp_path / "quirks.md").write_text(_file(600))
    order: list[str] = []
    building = anyio.Event()
    step = IndexBuild.step

    def first_unit_says_so(build: IndexBuild) -> Any:
        if not building.is_set():
            anyio.from_thread.run_sync(building.set)
        return step(build)

    monkeypatch.setattr(IndexBuild, "step", first_unit_says_so)

    async def another_client() -> None:
        await building.wait()
        await anyio.to_thread.run_sync(order.append, "another call")

    anyio.to_thread.current_default_thread_limiter().total_tokens = 1
    actor = CategoryActor(str(tmp_path), Category.QUIRK, archive=lambda r: None, clock=time.time)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(another_client)
            await tg.start(actor.run)
            order.append("loaded")
            actor.close()
    assert order == ["another call", "loaded"]
    assert actor.units > 600 // 50  # one worker-thread call per unit of 50 entries, and more
    hits = ranking.search([(Category.QUIRK, actor.snapshot.index)], "note599", limit=1).hits
    assert [hit.entry.slug for hit in hits] == ["alpha-599"]
