"""A workspace's read-only sources kept up to date without making a search wait or walk
(issue 30): a change re-reads and re-chunks only the file it touched, a search is served the
last look while the next is built, a tree is looked at again from the watcher's events (by age
where it cannot be watched), and old looks are let go."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from pathlib import Path

import anyio
import pytest

from memd.core.format.limits import MAX_FILE_BYTES
from memd.core.search import ranking
from memd.core.sources.segments import OWN_SEGMENT_BYTES
from memd.server.methods.search import Searchable
from memd.server.watch import inotify
from memd.server.workspaces import source_index as sources_module
from memd.server.workspaces.registry import Registry
from memd.server.workspaces.source_index import (
    FRESH_SECONDS,
    SourcesSnapshot,
    WorkspaceSources,
    look_again,
    look_at,
)
from tests.polling import until

ASKED = ((), MAX_FILE_BYTES)


def _paragraphs(word: str, count: int) -> str:
    return "".join(f"{word} paragraph number {n} about things.\n\n" for n in range(count))


def _hits(look: SourcesSnapshot, query: str) -> list[tuple[str, int]]:
    searchable = Searchable.of_sources(look.segments)
    found = ranking.search(searchable.indexes, query, limit=50)
    return [
        (hit.key.path, hit.entry.line)  # type: ignore[union-attr]
        for hit in map(searchable.hit, found.hits)
    ]


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "big.md").write_text(
        _paragraphs("zebra", OWN_SEGMENT_BYTES // 30), encoding="utf-8"
    )
    (tmp_path / "memory" / "other.md").write_text(
        _paragraphs("walrus", OWN_SEGMENT_BYTES // 30), encoding="utf-8"
    )
    (tmp_path / "CLAUDE.md").write_text("- Use the staging cluster.\n", encoding="utf-8")
    return tmp_path


def test_an_append_rechunks_only_that_file_and_keeps_the_others(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    first = look_at(str(root), (), MAX_FILE_BYTES)
    assert sorted(first.chunked) == ["CLAUDE.md", "memory/big.md", "memory/other.md"]
    assert len(first.segments) >= 2  # each big file has an index of its own
    with (root / "memory" / "big.md").open("a", encoding="utf-8") as out:
        out.write("A new zebra crossing paragraph.\n")
    touched = frozenset({str((root / "memory" / "big.md").resolve())})
    second = look_again(first, touched, MAX_FILE_BYTES)
    assert second is not None
    assert second.chunked == ("memory/big.md",)
    assert second.files["memory/other.md"] is first.files["memory/other.md"]
    assert second.files["CLAUDE.md"] is first.files["CLAUDE.md"]
    untouched = [s for s in first.segments if "memory/big.md" not in s.paths]
    assert all(segment in second.segments for segment in untouched)
    # The new look finds the appended text; the served one still searches as it did.
    last_line = second.files["memory/big.md"].chunks[-1].start
    assert ("memory/big.md", last_line) in _hits(second, "zebra crossing")
    assert ("memory/big.md", last_line) not in _hits(first, "zebra crossing")
    assert _hits(first, "walrus paragraph") == _hits(second, "walrus paragraph")
    # A walk finding it as it is re-chunks nothing.
    assert look_at(str(root), (), MAX_FILE_BYTES, second).chunked == ()


def test_an_updated_segment_ranks_as_one_built_afresh(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    look = look_at(str(root), (), MAX_FILE_BYTES)
    big = root / "memory" / "big.md"
    for n in range(5):
        with big.open("a", encoding="utf-8") as out:
            out.write(f"zebra appended {n} walrus\n\n")
        look = look_again(look, frozenset({str(big.resolve())}), MAX_FILE_BYTES) or look
    fresh = look_at(str(root), (), MAX_FILE_BYTES)
    for query in ("zebra appended", "walrus paragraph number 3", "staging", "appended 4"):
        assert _hits(look, query) == _hits(fresh, query)


def test_old_looks_are_let_go(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    first = look_at(str(root), (), MAX_FILE_BYTES)
    gone: list[weakref.ref[object]] = [weakref.ref(segment) for segment in first.segments]
    gone.append(weakref.ref(first.files["memory/big.md"]))
    big = root / "memory" / "big.md"
    look = first
    for n in range(3):
        with big.open("a", encoding="utf-8") as out:
            out.write(f"zebra appended {n}\n")
        look = look_again(look, frozenset({str(big.resolve())}), MAX_FILE_BYTES) or look
    current = look
    del first, look
    gc.collect()
    alive = [ref() for ref in gone]
    # Only the segments no append touched are still held (by the current look).
    assert alive[-1] is None
    held = {id(segment) for segment in current.segments}
    assert all(found is None or id(found) in held for found in alive[:-1])


async def test_a_search_during_a_look_is_served_the_last_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path)
    sources = WorkspaceSources(str(root))
    first = await sources.refresh(*ASKED)
    assert "memory/new.md" not in first.files
    started, release = threading.Event(), threading.Event()
    real = sources_module.look_at

    def held(*args: object) -> SourcesSnapshot:
        started.set()
        release.wait()
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sources_module, "look_at", held)
    (root / "memory" / "new.md").write_text("- A new note about yaks.\n", encoding="utf-8")
    sources.changed(None)  # as the watcher reports a name coming
    async with anyio.create_task_group() as tg:
        tg.start_soon(sources.run)
        assert await sources.refresh(*ASKED) is first  # asks for a look, never waits for it
        await anyio.to_thread.run_sync(started.wait)
        assert await sources.refresh(*ASKED) is first  # while the look is held
        looked = sources.looked
        release.set()
        await looked.wait()
        assert "memory/new.md" in (await sources.refresh(*ASKED)).files
        sources.stop()


async def test_where_nothing_is_watched_a_look_is_taken_again_by_age(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    sources = WorkspaceSources(str(root))
    first = await sources.refresh(*ASKED)
    assert not sources.stale(ASKED)
    (root / "memory" / "new.md").write_text("- A new note about yaks.\n", encoding="utf-8")
    sources.current = first._replace(at=time.monotonic() - FRESH_SECONDS)
    assert sources.stale(ASKED)
    async with anyio.create_task_group() as tg:
        tg.start_soon(sources.run)
        looked = sources.looked
        assert "memory/new.md" not in (await sources.refresh(*ASKED)).files
        await looked.wait()
        assert "memory/new.md" in (await sources.refresh(*ASKED)).files
        assert sources.walks == 2
        sources.stop()


@pytest.mark.skipif(not inotify.available(), reason="inotify is Linux only")
async def test_a_watched_tree_is_walked_again_only_when_the_watcher_reports_a_change(
    tmp_path: Path,
) -> None:
    root = _workspace(tmp_path)
    (root / ".memory").mkdir()
    (root / ".memory" / "memd.toml").write_text('sources = ["docs/**/*.md"]\n')
    for name in ("a", "b", "c"):
        (root / "docs" / name / "deep").mkdir(parents=True)
        (root / "docs" / name / "deep" / "notes.md").write_text(f"- Note {name} on llamas.\n")
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        workspace = await registry.get(str(root))
        assert registry.watches.mode == "inotify"
        sources = workspace.sources

        async def settled() -> SourcesSnapshot:
            while sources.stale(ASKED):
                looked = sources.looked
                await sources.refresh(*ASKED)
                await looked.wait()
            return sources.current

        await sources.refresh(*ASKED)
        look = await settled()  # the first look's directories are watched
        walks, looks = sources.walks, sources.looks
        assert "docs/b/deep/notes.md" in look.files
        for _ in range(5):
            assert await sources.refresh(*ASKED) is look
        assert (sources.walks, sources.looks) == (walks, looks)  # no change: no look at all

        # A new file in a watched directory: a walk, after the watcher's report.
        (root / "docs" / "b" / "deep" / "more.md").write_text("- More on alpacas.\n")
        await until(lambda: sources.stale(ASKED))
        look = await settled()
        assert "docs/b/deep/more.md" in look.files
        walks = sources.walks

        # A new directory with a file in it.
        (root / "docs" / "d" / "deep").mkdir(parents=True)
        (root / "docs" / "d" / "deep" / "x.md").write_text("- Vicunas.\n")
        await until(lambda: sources.stale(ASKED))
        look = await settled()
        assert "docs/d/deep/x.md" in look.files
        walks = sources.walks

        # An append: that file alone is read again, and nothing is walked.
        with (root / "docs" / "a" / "deep" / "notes.md").open("a") as out:
            out.write("- Guanacos too.\n")
        await until(lambda: sources.stale(ASKED))
        look = await settled()
        assert look.chunked == ("docs/a/deep/notes.md",)
        assert sources.walks == walks
        assert _hits(look, "guanacos")[0][0] == "docs/a/deep/notes.md"

        # A removed file is gone after the report.
        (root / "docs" / "c" / "deep" / "notes.md").unlink()
        await until(lambda: sources.stale(ASKED))
        assert "docs/c/deep/notes.md" not in (await settled()).files
        registry.close()
