"""Resolving workspace paths (`memd.fs.real_path`, `registry.resolve_root`): `realpath`'s answer,
by the kernel's walk and by ours alike, in work linear in the path's length (calls counted at
the file-system seam, never timed), bounded for links and loops, no descriptor left open; and
what the registry says for a loop."""

from __future__ import annotations

import itertools
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memd.fs.real_path import (
    MAX_LINKS,
    MAX_STEPS,
    FdWalk,
    Found,
    PathWalk,
    Unresolvable,
    kernel_resolve,
    resolve,
)
from memd.server.workspaces.registry import PATH_MAX, Registry, check_spelling, resolve_root
from memd.server.workspaces.scopes import Scopes
from memd_client.errors import InvalidParams, WorkspaceNotFound
from tests.budget import examples


class CountingWalk:
    """`FdWalk`, counting every call that reaches the kernel and the bytes of the names it
    hands over; each name must be one component."""

    def __init__(self) -> None:
        self.inner = FdWalk()
        self.calls = 0
        self.name_bytes = 0

    def _count(self, name: str) -> None:
        assert "/" not in name and name, f"handed the kernel {name!r}, not one component"
        self.calls += 1
        self.name_bytes += len(name.encode())

    def root(self) -> tuple[int, tuple[int, int]]:
        self.calls += 1
        return self.inner.root()

    def look(self, directory: int, name: str) -> Found:
        self._count(name)
        return self.inner.look(directory, name)

    def enter(self, directory: int, name: str) -> int:
        self._count(name)
        return self.inner.enter(directory, name)

    def parent(self, directory: int) -> int:
        self._count("..")
        return self.inner.parent(directory)

    def close(self, handle: int) -> None:
        self.inner.close(handle)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _deep_tree(base: Path, depth: int) -> None:
    """`base/a/a/.../a`, `depth` levels (made one level at a time: os.makedirs recurses)."""
    handle = os.open(base, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("a", dir_fd=handle)
        inner = os.open("a", os.O_RDONLY, dir_fd=handle)
        os.close(handle)
        handle = inner
    os.close(handle)


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """A directory holding `a/a/.../a`, 900 deep, and a link `la` to `a`; removed with
    `rm -rf` after (`shutil.rmtree`, pytest's clean-up, recurses once a level)."""
    root = tmp_path / "w"
    root.mkdir()
    (root / "la").symlink_to("a")
    _deep_tree(root, 900)
    yield root
    subprocess.run(["rm", "-rf", "--", str(root)], check=False)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small tree with directories, a file, relative and absolute links, and loops."""
    root = tmp_path / "w"
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    (root / "f").write_text("a file\n")
    (root / "la").symlink_to("a")
    (root / "lb").symlink_to("a/b")
    (root / "a" / "b" / "up").symlink_to("../..")
    (root / "labs").symlink_to(root / "c")
    (root / "lf").symlink_to("f")
    (root / "gone").symlink_to("nowhere")
    (root / "loop").symlink_to("loop")
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    return root


COMPONENTS = ["a", "b", "c", "f", "la", "lb", "up", "labs", "lf", "gone", "missing", ".", ".."]


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*COMPONENTS, "", "loop", "ping"]), max_size=30), st.booleans())
def test_the_answer_is_realpaths(tree: Path, components: list[str], slash: bool) -> None:
    path = str(tree) + "/" + "/".join(components) + ("/" if slash else "")
    expected = os.path.realpath(path)
    before = _open_fds()
    try:
        found = resolve(path)
    except Unresolvable:
        assert {"loop", "ping"} & set(components), f"no loop in {path}"
    else:
        assert found.path == expected
        assert found.exists == os.path.isdir(expected)
        assert resolve(path, FdWalk()) == found  # the kernel's walk and ours agree
        assert resolve(path, PathWalk()) == found  # so does the fallback
    assert _open_fds() == before


def test_what_exists_and_what_is_spelled(tree: Path) -> None:
    assert resolve(str(tree / "lb" / "up" / "c")).exists
    assert not resolve(str(tree / "f")).exists  # a file is no directory
    assert not resolve(str(tree / "gone")).exists  # a link to nothing
    missing = resolve(str(tree / "missing" / "x" / ".." / ".." / "a"))
    assert missing.exists and missing.path == str(tree / "a")  # as realpath: by spelling
    found = resolve(str(tree / "lb"))
    top = os.stat("/")
    assert found.identities[0] == (top.st_dev, top.st_ino)
    inner = os.stat(tree / "a" / "b")
    assert found.identities[-1] == (inner.st_dev, inner.st_ino)
    assert len(found.identities) == len(found.path.split("/"))  # "/" and each directory


HOSTILE: dict[str, Callable[[str, int], str]] = {
    "dots": lambda root, n: root + "/." * n,
    "slashes": lambda root, n: root + "/" * n,
    "up and down": lambda root, n: root + "/a/.." * n,
    "down the links": lambda root, n: root + "/la/.." * n,  # each a link: bounded, refused
    "missing": lambda root, n: root + "/missing" * n,
    "deep": lambda root, n: root + "/a" * n,  # a real tree, n deep
}


@pytest.mark.parametrize("family", list(HOSTILE))
def test_the_work_is_linear_in_the_paths_length(deep: Path, family: str) -> None:
    """Twice the components cost at most twice the calls and twice the bytes handed to the
    kernel (each call one component): linear, where `realpath` hands the kernel the whole
    prefix at every component."""
    work: list[tuple[int, int]] = []
    for n in (100, 200, 400):
        path = HOSTILE[family](str(deep), n)
        check_spelling(path)  # within PATH_MAX: these are accepted spellings
        walk = CountingWalk()
        try:
            resolve(path, walk)
        except Unresolvable:
            assert family == "down the links"
            assert walk.calls <= 4 * (MAX_LINKS + 1)
        work.append((walk.calls, walk.name_bytes))
    for (calls, name_bytes), (twice_calls, twice_bytes) in itertools.pairwise(work):
        assert twice_calls <= 2 * calls + 2
        assert twice_bytes <= 2 * name_bytes + 4


@pytest.mark.parametrize("family", list(HOSTILE))
def test_the_kernels_walk_costs_a_few_calls_whatever_the_length(
    deep: Path, family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel answers (every component there), a spelling costs the same few calls
    at any length: the kernel walks it, in C, without the GIL; the identities cost a few
    calls a level of the real path, not of the spelling."""
    calls: list[str] = []
    for name in ("open", "readlink", "stat", "fstat", "close", "dup"):
        real = getattr(os, name)

        def counted(*args: Any, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            calls.append(_real.__name__)
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, counted)
    depth = len(deep.parts)
    for n in (100, 200, 400):
        path = HOSTILE[family](str(deep), n)
        calls.clear()
        try:
            answer = kernel_resolve(path, identities=False)
        except Unresolvable:
            assert family == "down the links"  # ELOOP, from the kernel itself
        else:
            assert (answer is None) == (family == "missing")  # then walked, as realpath does
        assert len(calls) <= 5
        if family in ("dots", "slashes", "up and down"):
            calls.clear()
            answer = kernel_resolve(path)
            assert answer is not None and len(answer.identities) == depth
            assert len(calls) <= 6 + 3 * (depth + 1)  # a level: .., fstat, close


def test_links_are_bounded_and_a_loop_is_said(tree: Path) -> None:
    chain = tree / "chain"
    chain.mkdir()
    previous = str(tree / "c")
    for hop in range(MAX_LINKS + 1):
        (chain / f"l{hop}").symlink_to(previous)
        previous = str(chain / f"l{hop}")
    assert resolve(str(chain / f"l{MAX_LINKS - 1}")).path == str(tree / "c")  # 40: followed
    hop = 2 * len(Path(previous).parts) + 2  # one link here: a look and an entry a component
    for refused in (chain / f"l{MAX_LINKS}", tree / "loop", tree / "ping" / "a"):
        walk = CountingWalk()
        with pytest.raises(Unresolvable, match="more than 40 symbolic links"):
            resolve(str(refused), walk)
        assert walk.calls <= (MAX_LINKS + 1) * hop  # a loop stops at the bound
    with pytest.raises(InvalidParams, match="symbolic links \\(a loop\\?\\); pass"):
        resolve_root(str(tree / "loop"))


def test_link_targets_count_towards_the_step_bound(tree: Path) -> None:
    """A link whose 4 KB target is `a/..` over and over, walked through again and again: the
    steps stop at MAX_STEPS, whatever the links would add."""
    (tree / "big").symlink_to("a/../" * 800)
    walk = CountingWalk()
    with pytest.raises(Unresolvable, match="4,096 components"):
        resolve(str(tree) + "/big" * 8, walk)
    assert walk.calls <= MAX_STEPS + MAX_LINKS + 8


def test_the_registry_says_what_is_wrong_with_a_path(tree: Path) -> None:
    spelling = str(tree / "loop") + "/." * 1000
    with pytest.raises(InvalidParams) as raised:
        resolve_root(spelling)
    message = str(raised.value)
    assert "symbolic links" in message and "2,0" in message  # its length, not its 2 KB
    assert len(message) < 400
    with pytest.raises(WorkspaceNotFound, match="not an existing directory"):
        resolve_root(str(tree / "f") + "/." * 1000)
    with pytest.raises(InvalidParams, match="kernel file system"):
        resolve_root("/proc/self/cwd")


async def test_the_longest_spellings_are_served(tree: Path) -> None:
    longest = {
        "dots": str(tree) + "/." * ((PATH_MAX - len(str(tree))) // 2),
        "up and down": str(tree) + "/a/.." * ((PATH_MAX - len(str(tree))) // 5),
        "through links": str(tree) + "/lb/up" * 10 + "/." * 1500,
    }
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=lambda: 0.0)
        for spelling in longest.values():
            assert len(spelling.encode()) <= PATH_MAX
            workspace = await registry.get(spelling)
            assert workspace.root == str(tree)
        registry.close()


async def test_the_user_wide_check_resolves_the_same_way(tmp_path: Path, tree: Path) -> None:
    user_wide = tmp_path / "global"
    (user_wide / "inside").mkdir(parents=True)
    (tree / "to-global").symlink_to(user_wide)
    async with anyio.create_task_group() as services:
        scopes = Scopes(Registry(services, clock=lambda: 0.0), str(user_wide))
        assert scopes.is_user_wide(str(tree / "to-global" / "inside") + "/." * 1500)
        assert not scopes.is_user_wide(str(tree / "a") + "/." * 1500)
        assert not scopes.is_user_wide(str(tree / "loop"))  # the registry refuses it, saying why
        scopes.registry.close()
