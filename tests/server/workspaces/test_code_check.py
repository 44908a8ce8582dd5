"""The per-workspace citation check (`memd.server.workspaces.code_check`), in process: a store
and a query never wait for a gather; `check` waits for an up-to-date one; the cache asks only
about entries it has not seen at one tree state, and holds only the current entries."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import anyio
import pytest

from memd.core.citations import anchors as citation_anchors
from memd.core.citations.model import Anchor, CodeFacts
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.fs import code_facts
from memd.server.methods.handlers import Methods
from memd.server.workspaces import code_check
from memd.server.workspaces.code_check import NOTHING, CodeCheck, gather_verdicts
from memd.server.workspaces.registry import Registry
from memd_client import protocol as p
from memd_client.errors import ServerBusy
from tests.git_env import git_env
from tests.polling import until

QUIRK = Category.QUIRK


def _entry(line: int, content: str, slug: str | None = None) -> Entry:
    return Entry(line=line, slug=slug, content=content)


async def test_a_store_and_a_query_never_wait_for_a_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src").mkdir()
    released = threading.Event()
    gathering = threading.Event()
    real_gather = code_facts.gather

    def slow_gather(
        root: str, anchors: Iterable[Anchor], baselines: Iterable[str] = ()
    ) -> CodeFacts:
        gathering.set()
        released.wait(30)
        return real_gather(root, anchors, baselines)

    monkeypatch.setattr(code_facts, "gather", slow_gather)
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        methods = Methods(registry, started=0.0, socket_path="unused")
        root = str(tmp_path)
        with registry.leases():
            content = "The parser sits in `src/parse.py` today."
            stored = await methods.store(
                p.StoreParams(workspace=root, category="Quirk", content=content, slug="parse"),
                None,  # type: ignore[arg-type]
            )
            assert stored.action == "stored"
            query = p.QueryParams(workspace=root, query="parser")
            first = await methods.query(query, None)  # type: ignore[arg-type]
            assert first.results[0].status is None  # not checked yet: not waited for
            await until(gathering.is_set)  # the query woke the background check
            again = await methods.query(query, None)  # type: ignore[arg-type]
            assert again.results[0].status is None  # the gather is still blocked
            released.set()
            workspace = await registry.get(root)
            await until(lambda: workspace.code.last.verdicts)
            hit = (await methods.query(query, None)).results[0]  # type: ignore[arg-type]
            assert hit.status == "stale"
            assert hit.stale == "cites src/parse.py, which no longer exists"
        registry.close()


def test_a_gather_asks_only_about_entries_not_checked_at_the_same_tree_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    real_gather = code_facts.gather

    def counting(root: str, anchors: Iterable[Anchor], baselines: Iterable[str] = ()) -> CodeFacts:
        anchors = list(anchors)
        asked.append([anchor.key for anchor in anchors])
        return real_gather(root, anchors, baselines)

    monkeypatch.setattr(code_facts, "gather", counting)
    monkeypatch.setattr(code_facts, "tree_state", lambda root: "HEAD:1")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    one = [(QUIRK, _entry(3, "See `src/a.py` first."))]
    first = gather_verdicts(str(tmp_path), one, NOTHING, full=False)
    two = [*one, (QUIRK, _entry(4, "See `src/b.py` next."))]
    second = gather_verdicts(str(tmp_path), two, first, full=False)
    third = gather_verdicts(str(tmp_path), two, second, full=False)
    assert asked == [["src/a.py"], ["src/b.py"]]  # the third asked nothing
    assert third.verdict(*two[0]).check.status == "ok"  # type: ignore[union-attr]
    assert third.verdict(*two[1]).check.status == "stale"  # type: ignore[union-attr]
    gather_verdicts(str(tmp_path), two, third, full=True)
    assert asked[-1] == ["src/a.py", "src/b.py"]  # a full gather asks about everything
    shrunk = gather_verdicts(str(tmp_path), two[1:], third, full=False)
    assert list(shrunk.verdicts) == [("See `src/b.py` next.", "")]  # only current entries


def test_a_new_tree_state_drops_every_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = ["HEAD:1"]
    monkeypatch.setattr(code_facts, "tree_state", lambda root: state[0])
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("")
    entries = [(QUIRK, _entry(3, "See `src/a.py` first."))]
    before = gather_verdicts(str(tmp_path), entries, NOTHING, full=False)
    (tmp_path / "src" / "a.py").unlink()
    assert gather_verdicts(str(tmp_path), entries, before, full=False) == before._replace(
        entries=before.entries
    )  # same tree state: the cache holds
    state[0] = "HEAD:2"
    read: list[str] = []
    real_anchors_of = citation_anchors.anchors_of

    def counted(content: str) -> tuple[Anchor, ...]:
        read.append(content)
        return real_anchors_of(content)

    monkeypatch.setattr(citation_anchors, "anchors_of", counted)
    after = gather_verdicts(str(tmp_path), entries, before, full=False)
    assert after.verdict(*entries[0]).check.status == "stale"  # type: ignore[union-attr]
    assert read == []  # its citations come from the verdict held, not read again


async def test_check_waits_for_a_gather_and_reads_never_do(tmp_path: Path) -> None:
    entries = [(QUIRK, _entry(3, "Nothing cited here at all."))]
    check = CodeCheck(str(tmp_path), lambda: entries)
    assert check.verdict(*entries[0]) is None
    check.wake(unchecked=True)  # no `run`: nothing happens, nothing waits
    checked = await check.current()
    assert checked.verdict(*entries[0]).check.status == "none"  # type: ignore[union-attr]
    assert check.verdict(*entries[0]) is not None and check.gathers == 1


async def test_run_refreshes_when_woken_and_stops(tmp_path: Path) -> None:
    entries: list[tuple[Category, Entry]] = []
    check = CodeCheck(str(tmp_path), lambda: entries)
    async with anyio.create_task_group() as tg:
        tg.start_soon(check.run)
        entries.append((QUIRK, _entry(3, "Nothing cited here.")))
        check.wake(unchecked=True)
        await until(lambda: check.verdict(*entries[0]) is not None)
        check.stop()
    assert code_check.checked_at(check.last).endswith("+00:00")


async def test_a_workspace_in_use_is_looked_at_again_without_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a read, the background looks at the tree state by itself: a file renamed by a
    commit is seen before the next read, which then finds the entry already marked."""
    monkeypatch.setattr(code_check, "POLL_SECONDS", 0.05)
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "parse.py").write_text("def parse(): ...\n")
    env = git_env(tmp_path / "home")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "one")
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        methods = Methods(registry, started=0.0, socket_path="unused")
        root = str(repo)
        with registry.leases():
            content = "The parser sits in `src/parse.py` today."
            await methods.store(
                p.StoreParams(workspace=root, category="Quirk", content=content, slug="parse"),
                None,  # type: ignore[arg-type]
            )
            query = p.QueryParams(workspace=root, query="parser")
            await methods.query(query, None)  # type: ignore[arg-type]
            workspace = await registry.get(root)
            entry = workspace.memory_entries()[0][1]
            await until(lambda: workspace.code.verdict(QUIRK, entry) is not None)
            assert workspace.code.verdict(QUIRK, entry).check.status == "ok"  # type: ignore[union-attr]
            git("mv", "src/parse.py", "src/parser.py")
            git("commit", "-qm", "rename")

            def marked() -> bool:
                verdict = workspace.code.verdict(QUIRK, entry)
                return verdict is not None and verdict.check.status == "stale"

            await until(marked)  # no read in between
            hit = (await methods.query(query, None)).results[0]  # type: ignore[arg-type]
            assert hit.status == "stale"
            assert hit.stale.endswith("moved to src/parser.py")
        registry.close()


async def test_a_gather_over_its_time_is_never_joined_by_a_second_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    released = threading.Event()
    calls: list[str] = []

    def stuck(root: str, anchors: Iterable[Anchor], baselines: Iterable[str] = ()) -> CodeFacts:
        calls.append(root)
        released.wait(30)
        return CodeFacts(git=False)

    monkeypatch.setattr(code_facts, "gather", stuck)
    monkeypatch.setattr(code_check, "GATHER_TIMEOUT", 0.05)
    entries = [(QUIRK, _entry(3, "See `src/a.py` first."))]
    check = CodeCheck(str(tmp_path), lambda: entries)
    with pytest.raises(ServerBusy, match="took over"):
        await check.current()
    await until(lambda: calls == [str(tmp_path)])
    again = CodeCheck(str(tmp_path), lambda: entries)  # the workspace unloaded and came back
    for checker in (check, again):
        with pytest.raises(ServerBusy, match=r"still running .* try again in a minute"):
            await checker.current()
    assert calls == [str(tmp_path)]  # no second thread while the first one runs
    released.set()
    await until(lambda: not code_check.gathering(str(tmp_path)))
    monkeypatch.setattr(code_check, "GATHER_TIMEOUT", 30.0)
    assert (await check.current()).verdict(*entries[0]) is not None
    assert len(calls) == 2


async def test_cleanup_says_so_when_the_check_does_not_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    released = threading.Event()

    def stuck(root: str, anchors: Iterable[Anchor], baselines: Iterable[str] = ()) -> CodeFacts:
        released.wait(30)
        return CodeFacts(git=False)

    monkeypatch.setattr(code_facts, "gather", stuck)
    monkeypatch.setattr(code_check, "GATHER_TIMEOUT", 0.05)
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        methods = Methods(registry, started=0.0, socket_path="unused")
        root = str(tmp_path)
        with registry.leases():
            content = "The parser sits in `src/parse.py` today."
            await methods.store(
                p.StoreParams(workspace=root, category="Quirk", content=content, slug="parse"),
                None,  # type: ignore[arg-type]
            )
            applied = await methods.cleanup(
                p.CleanupParams(workspace=root, apply=True),
                None,  # type: ignore[arg-type]
            )
            assert applied.stale == []
            assert "did not finish in time, so no stale memory was proposed" in applied.message
            released.set()
            await until(lambda: not code_check.gathering(root))
        registry.close()
