"""A path's real path in time linear in its length: `resolve(path)`, what `os.path.realpath`
answers, without its quadratic cost.

Python 3.11's `realpath` copies the rest of the path at every component and `lstat`s the whole
prefix at every component, so a 4 KB spelling of many components (`/.` or `a/..` repeated, or
a deep tree) costs the square of its length, much of it holding the GIL that the daemon's event
loop needs. Here, on Linux, the kernel walks the path in one `open` (`kernel_resolve`: linear,
in C, the GIL released) and says where it landed. Where it cannot (a missing component, which
`realpath` spells on past), the path is split once and walked one component a step, relative
to the directory reached so far (an `O_PATH` descriptor), so every step costs about the same
whatever the path's length.

Rules:
- The answer is `realpath`'s for a path without a symbolic-link loop: `.` and empty components
  are skipped, `..` goes up the real path (never above `/`), a link's target is resolved in
  the link's directory (from `/` when absolute), and a component that is missing or not a
  directory is kept as spelled, with the rest of the path applied to it by spelling (`..`
  still takes it off again); the answer then says it does not exist.
- Bounded: at most MAX_LINKS symbolic links are followed (Linux's own limit, 40; a loop
  reaches it), and at most MAX_STEPS components are walked (the path's and its links'
  targets'); past either, `Unresolvable` says which, and nothing more is spent on the path.
- No descriptor outlives a call, whatever it raises.
- `Walk` is the seam to the file system: `FdWalk` (descriptors, Linux) or `PathWalk` (path
  strings, where `O_PATH` is missing: each step then `lstat`s the real prefix, a cost bounded by
  PATH_MAX but not linear). Every name a walk is given is one component.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

__all__ = [
    "MAX_LINKS",
    "MAX_STEPS",
    "FdWalk",
    "Found",
    "PathWalk",
    "Resolved",
    "Unresolvable",
    "Walk",
    "default_walk",
    "resolve",
]

MAX_LINKS = 40
"""The most symbolic links one resolution follows (Linux's MAXSYMLINKS): one more is a loop,
or as good as one."""

MAX_STEPS = 4096
"""The most components one resolution walks, the path's own and its links' targets' together
(`.` and empty ones are free). A PATH_MAX-long path holds at most 2,048; a real one, a few
dozen."""

H = TypeVar("H")

Identity = tuple[int, int]
"""A directory's device and inode."""


class Unresolvable(Exception):
    """The path goes through too many symbolic links (a loop) or takes too many steps; the
    message says which, in one sentence."""


@dataclass(frozen=True)
class Found:
    """What one component names in a directory: a directory (its `identity`), a symbolic link
    (its `target`), or neither (`exists`: something that is not a directory, or nothing)."""

    identity: Identity | None = None
    target: str | None = None
    exists: bool = False


@dataclass(frozen=True)
class Resolved:
    """A resolution's answer.

    `path`: the real path (as `realpath` gives it). `exists`: it is an existing directory.
    `identities`: the device and inode of `/` and of each directory of `path` found on disk,
    outermost first (a missing tail has none).
    """

    path: str
    exists: bool
    identities: tuple[Identity, ...]


class Walk(Protocol, Generic[H]):
    """The file system as a resolution sees it: one component at a time."""

    def root(self) -> tuple[H, Identity]:
        """A handle to `/`, and its identity."""
        ...

    def look(self, directory: H, name: str) -> Found:
        """What `name` (one component) is in `directory`, no link followed."""
        ...

    def enter(self, directory: H, name: str) -> H:
        """A handle to directory `name` (one component) in `directory` (to be closed); OSError
        if it is no longer a directory."""
        ...

    def parent(self, directory: H) -> H:
        """A handle to `directory`'s parent (to be closed)."""
        ...

    def close(self, handle: H) -> None:
        """Let `handle` go."""
        ...


class FdWalk:
    """`Walk` on `O_PATH` descriptors (Linux): every call hands the kernel one component."""

    FLAGS = getattr(os, "O_PATH", 0) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

    def root(self) -> tuple[int, Identity]:
        handle = os.open("/", self.FLAGS)
        found = os.fstat(handle)
        return handle, (found.st_dev, found.st_ino)

    def look(self, directory: int, name: str) -> Found:
        try:
            found = os.stat(name, dir_fd=directory, follow_symlinks=False)
            if stat.S_ISLNK(found.st_mode):
                return Found(target=os.readlink(name, dir_fd=directory), exists=True)
        except (OSError, ValueError):  # missing, not searchable, or not a path (NUL, surrogate)
            return Found()
        if not stat.S_ISDIR(found.st_mode):
            return Found(exists=True)
        return Found(identity=(found.st_dev, found.st_ino), exists=True)

    def enter(self, directory: int, name: str) -> int:
        return os.open(name, self.FLAGS, dir_fd=directory)

    def parent(self, directory: int) -> int:
        return os.open("..", self.FLAGS, dir_fd=directory)

    def close(self, handle: int) -> None:
        os.close(handle)


class PathWalk:
    """`Walk` on path strings, for platforms without `O_PATH`: each step `lstat`s the real
    prefix reached so far (bounded by PATH_MAX, not linear)."""

    def root(self) -> tuple[str, Identity]:
        found = os.stat("/")
        return "/", (found.st_dev, found.st_ino)

    def look(self, directory: str, name: str) -> Found:
        path = os.path.join(directory, name)
        try:
            found = os.lstat(path)
            if stat.S_ISLNK(found.st_mode):
                return Found(target=os.readlink(path), exists=True)
        except (OSError, ValueError):
            return Found()
        if not stat.S_ISDIR(found.st_mode):
            return Found(exists=True)
        return Found(identity=(found.st_dev, found.st_ino), exists=True)

    def enter(self, directory: str, name: str) -> str:
        return os.path.join(directory, name)

    def parent(self, directory: str) -> str:
        return os.path.dirname(directory)

    def close(self, handle: str) -> None:
        pass


def kernel_resolve(path: str, *, identities: bool = True) -> Resolved | None:
    """`path`'s real path found by the kernel in one `open` (its own walk: linear, in C, with
    Linux's limit of 40 links), read back from `/proc/self/fd` and checked to name the same
    directory; None when the kernel cannot answer that way (a component missing or not a
    directory, where `realpath` goes on by spelling; no `O_PATH` or `/proc`; a path longer
    than PATH_MAX), for the component walk to answer. With `identities`, the directory's and
    its parents' (up to `/`, at most MAX_STEPS) are read going up through `..`.

    Raises:
        Unresolvable: the kernel found a link loop (ELOOP).
    """
    flags = getattr(os, "O_PATH", 0)
    if not flags:
        return None
    try:
        handle = os.open(path, flags | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Unresolvable(
                f"it goes through more than {MAX_LINKS} symbolic links (a loop?)"
            ) from None
        return None
    except ValueError:  # a NUL or a lone surrogate: not a path
        return None
    try:
        real = os.readlink(f"/proc/self/fd/{handle}")
        found = os.fstat(handle)
        named = os.stat(real) if real.startswith("/") else None
        if named is None or (named.st_dev, named.st_ino) != (found.st_dev, found.st_ino):
            return None  # not a path of this process's view (unreachable, deleted, moved)
        chain = _parents(handle, (found.st_dev, found.st_ino)) if identities else ()
    except OSError:
        return None
    finally:
        os.close(handle)
    return Resolved(real, True, chain)


def _parents(handle: int, identity: Identity) -> tuple[Identity, ...]:
    """The identities of directory `handle` and of its parents up to `/`, outermost first."""
    chain = [identity]
    here = os.dup(handle)
    try:
        for _ in range(MAX_STEPS):
            parent = os.open("..", FdWalk.FLAGS, dir_fd=here)
            os.close(here)
            here = parent
            found = os.fstat(here)
            if (found.st_dev, found.st_ino) == chain[-1]:
                break  # `/`: its own parent
            chain.append((found.st_dev, found.st_ino))
    finally:
        os.close(here)
    chain.reverse()
    return tuple(chain)


def default_walk() -> FdWalk | PathWalk:
    """`FdWalk` where the platform has `O_PATH` (Linux), else `PathWalk`."""
    return FdWalk() if hasattr(os, "O_PATH") else PathWalk()


def resolve(path: str, walk: Walk[Any] | None = None, *, identities: bool = True) -> Resolved:
    """The real path of absolute `path` (see the module rules), walked through `walk`; with
    no `walk`, the kernel's own walk first (`kernel_resolve`), then `default_walk()` if that
    cannot answer. Without `identities`, `Resolved.identities` may be left empty.

    A directory found is entered (a handle opened) only when something is looked up in it, so
    `name/..` costs one look.

    Raises:
        Unresolvable: more than MAX_LINKS links, or more than MAX_STEPS components.
    """
    if walk is None:
        answer = kernel_resolve(path, identities=identities)
        if answer is not None:
            return answer
    chosen: Walk[Any] = walk if walk is not None else default_walk()
    pending = path.split("/")
    pending.reverse()  # the next component last: each step pops it in constant time
    state = _State(chosen)
    try:
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            state.count_step()
            if name == "..":
                state.up()
            elif state.spelled:
                state.spell(name)
            else:
                target = state.down(name)
                if target is not None:
                    target_names = target.split("/")
                    target_names.reverse()
                    pending.extend(target_names)
    finally:
        state.close()
    return Resolved("/" + "/".join(state.names), state.spelled == 0, tuple(state.identities))


class _State:
    """Where a resolution stands: the real names so far, the identities of those found on disk
    (and of `/`), the handle of the deepest one entered, and what it spent.

    Rule: `names` ends with `spelled` names not found on disk; before them, each name has its
    identity (`identities` holds one more: `/`'s). When `found` is set, the last name is a
    directory not entered yet, in `here`; otherwise `here` is the last name's directory.
    """

    def __init__(self, walk: Walk[Any]) -> None:
        self.walk = walk
        self.here, top = walk.root()
        self.identities: list[Identity] = [top]
        self.names: list[str] = []
        self.found = False
        self.spelled = 0
        self.steps = 0
        self.links = 0

    def count_step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unresolvable(f"it takes more than {MAX_STEPS:,} components to resolve")

    def up(self) -> None:
        """`..`: drop the last name (never above `/`)."""
        if self.spelled:
            self.spelled -= 1
        elif self.found:
            self.found = False
            self.identities.pop()
        elif self.names:
            self.identities.pop()
            self._move(self.walk.parent(self.here))
        else:
            return
        self.names.pop()

    def spell(self, name: str) -> None:
        """Add `name` by spelling: something before it is not on disk."""
        self.names.append(name)
        self.spelled += 1

    def down(self, name: str) -> str | None:
        """Look `name` up where the walk stands; return a link's target (to walk next)."""
        if self.found:
            self.found = False
            try:
                self._move(self.walk.enter(self.here, self.names[-1]))
            except OSError:  # replaced since it was looked at: the rest goes by spelling
                self.identities.pop()
                self.spelled = 1
                self.spell(name)
                return None
        found = self.walk.look(self.here, name)
        if found.target is not None:
            self.links += 1
            if self.links > MAX_LINKS:
                raise Unresolvable(
                    f"it goes through more than {MAX_LINKS} symbolic links (a loop?)"
                )
            if found.target.startswith("/"):
                self.names.clear()
                del self.identities[1:]
                self._move(self.walk.root()[0])
            return found.target
        self.names.append(name)
        if found.identity is not None:
            self.identities.append(found.identity)
            self.found = True
        else:
            self.spelled = 1
        return None

    def _move(self, handle: Any) -> None:
        self.walk.close(self.here)
        self.here = handle

    def close(self) -> None:
        self.walk.close(self.here)
