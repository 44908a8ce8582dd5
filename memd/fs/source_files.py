"""Read-only sources: find the files a workspace's source rules name, read one, and read the
project's `.memory/memd.toml`. Everything blocks: call it in a worker thread.

Rules:
- Only what the rules name is looked at: a literal segment costs one lstat, a wildcard segment
  lists one directory, `**` lists every directory below it, never one whose name starts with a
  dot; `.git`, `.memory` and `node_modules` are never entered, at any depth, however reached.
- A file is a source only if the rules select it (the last matching rule includes it; see
  `memd.core.sources.source_globs`), it is a regular file of at most `max_bytes`, and its real
  path (every link resolved) lies inside the walk's base or matches an absolute including
  rule (the user named it in memd's config file). The base is the workspace root for a
  relative rule, and for an absolute rule the real path of its fixed leading directories (of
  the file itself, for a path without wildcards: the user named that file).
- So a link that stays inside the workspace is followed, to a file or a directory (each
  directory is listed once per pattern segment, so a loop of links ends), and a link that
  leaves it is refused unless the user named its target: the refusal says so, and the target
  is never opened (only its path is resolved). A directory link that leaves is followed only
  when an absolute rule could match a file below its target, and each file there must match.
- Bounded: at most `max_files` files and `max_dirs` directory listings; past either the scan
  stops and says so. A walk goes at most MAX_SOURCE_DEPTH directories down; a deeper directory
  is left out and said, and the rest of the scan goes on. A file too big, not regular or
  outside is reported in `refused`, never read; so is a directory that cannot be listed. A
  broken link is skipped.
- The first way a file is found wins (rules in order, names sorted): a file reached twice (by
  two patterns, or through a link) is one source, shown by the first path.
- `read_source` opens every component of the real path with O_NOFOLLOW (it holds no link, so a
  link planted since is refused) and the file with O_NONBLOCK, after checking that it is a
  regular file (a FIFO is never opened); it reads at most `max_bytes` and decodes UTF-8.
- Nothing here ever writes.

Size: the walk, its refusals, the one reader of a source and the reader of memd.toml, so that
one module owns the no-follow, containment and bound rules of everything besides the category
files.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Literal, NamedTuple

from memd.config import PROJECT_CONFIG_NAME, ConfigError, ProjectConfig, parse_project_config
from memd.core.sources.source_globs import (
    SKIPPED_DIRS,
    SourceRule,
    SourceSelection,
    could_contain,
    is_literal,
    is_selected,
    pattern_matches,
    segment_matches,
    split_pattern,
)
from memd.fs.storage import Fingerprint, fingerprint_of, open_no_follow, storage_error
from memd.paths import MEMORY_DIR
from memd_client.errors import FileFormatError

MAX_SOURCE_FILES = 500
"""The most source files one workspace has; past it the scan stops and says so."""
MAX_SOURCE_DIRS = 5000
"""The most directories one scan lists (a `**` lists every directory below it)."""
MAX_SOURCE_DEPTH = 64
"""The deepest a walk goes below its base, in directories; a deeper one is left out and said."""
MAX_PROJECT_CONFIG_BYTES = 64 * 1024
"""The largest `.memory/memd.toml` read."""

RefusalKind = Literal["outside", "too_big", "not_regular", "unreadable", "too_many", "too_deep"]


class SourceFile(NamedTuple):
    """One read-only source found."""

    path: str
    """Relative to the workspace root with `/` (as found, through any link inside it), or
    absolute for a file outside the workspace."""
    real_path: str
    """Absolute, every link resolved: what `read_source` opens."""
    size: int
    fingerprint: Fingerprint
    rule: str
    """The pattern that found it."""


class Refusal(NamedTuple):
    """A file or directory the rules name that is left out, and why."""

    path: str
    kind: RefusalKind
    message: str
    """One sentence starting `refused: `, naming the path and what to do."""


class SourceScan(NamedTuple):
    """What `find_sources` found."""

    files: list[SourceFile]
    refused: list[Refusal]
    directories: list[str]
    """The real paths of the directories looked into (listed, or a literal name checked
    there): where a change can add, change or remove a source."""


def find_sources(
    root: str,
    selection: SourceSelection,
    *,
    max_bytes: int,
    max_files: int = MAX_SOURCE_FILES,
    max_dirs: int = MAX_SOURCE_DIRS,
) -> SourceScan:
    """Return the read-only sources of the workspace at `root` that `selection` names, and
    what was refused (see the module's rules). Nothing is read but directory listings and
    file metadata; `max_bytes` is the cap for one file (the daemon's `max_file_bytes`)."""
    scan = _Scan(os.path.realpath(root), selection.rules, max_bytes, max_files, max_dirs)
    for rule in selection.walk:
        try:
            scan.rule(rule.pattern)
        except _Stop:
            break
    return SourceScan(scan.files, scan.refused, list(scan.directories))


class _Stop(Exception):
    """A bound was reached: the scan ends here."""


class _Walk(NamedTuple):
    pattern: str
    segments: tuple[str, ...]
    base: str
    absolute: bool


class _Scan:
    """One `find_sources` call's state."""

    def __init__(
        self,
        root: str,
        rules: tuple[SourceRule, ...],
        max_bytes: int,
        max_files: int,
        max_dirs: int,
    ) -> None:
        self.root = root
        self.rules = tuple(_with_real_prefixes(rules))
        self.named = tuple(
            rule.pattern for rule in self.rules if rule.include and rule.pattern.startswith("/")
        )
        self.max_bytes, self.max_files, self.max_dirs = max_bytes, max_files, max_dirs
        self.files: list[SourceFile] = []
        self.refused: list[Refusal] = []
        self.directories: dict[str, None] = {}
        self._listings: dict[str, list[str]] = {}
        self._visited: set[tuple[str, str, int]] = set()
        self._seen: set[tuple[int, int]] = set()
        self._refused_keys: set[tuple[str, str]] = set()

    def rule(self, pattern: str) -> None:
        absolute, segments = split_pattern(pattern)
        if not absolute:
            self._step(_Walk(pattern, segments, self.root, False), self.root, (), 0)
            return
        fixed = next((n for n, seg in enumerate(segments) if not is_literal(seg)), len(segments))
        base = os.path.realpath("/" + "/".join(segments[:fixed]))
        walk = _Walk(pattern, segments, base, True)
        if fixed == len(segments):
            self._candidate(walk, os.path.dirname(base), os.path.basename(base), segments)
        else:
            self._step(walk, base, segments[:fixed], fixed)

    def _step(self, walk: _Walk, directory: str, shown: tuple[str, ...], place: int) -> None:
        """Match `walk.segments[place:]` in `directory` (a real path), reached as `shown`; once
        per pattern, directory and place, so a loop of links ends."""
        key = (walk.pattern, directory, place)
        if key in self._visited:
            return
        self._visited.add(key)
        self.directories[directory] = None
        segment = walk.segments[place]
        if segment == "**":
            self._step(walk, directory, shown, place + 1)
            for name in self._names(walk, directory, shown):
                if not name.startswith(".") and name not in SKIPPED_DIRS:
                    self._descend(walk, directory, (*shown, name), place)
            return
        if is_literal(segment):
            names = [segment]
        else:
            listed = self._names(walk, directory, shown)
            names = [name for name in listed if segment_matches(segment, name)]
        last = place == len(walk.segments) - 1
        for name in names:
            if name in SKIPPED_DIRS:
                continue
            if last:
                self._candidate(walk, directory, name, (*shown, name))
            else:
                self._descend(walk, directory, (*shown, name), place + 1)

    def _descend(self, walk: _Walk, directory: str, shown: tuple[str, ...], place: int) -> None:
        if len(shown) > MAX_SOURCE_DEPTH:
            where = _shown(walk, shown[:-1])
            self._refuse(
                where,
                "too_deep",
                f"refused: {where} is {MAX_SOURCE_DEPTH} directories deep; memd looks no "
                "further down for sources (the rest of the scan goes on).",
            )
            return
        child = self._enter(walk, os.path.join(directory, shown[-1]), shown)
        if child is not None:
            self._step(walk, child, shown, place)

    def _enter(self, walk: _Walk, path: str, shown: tuple[str, ...]) -> str | None:
        """The real path of the directory at `path` if the walk may go in, else None."""
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(path)
            if not os.path.isdir(real):
                return None  # a link to a file, or broken: nothing to walk
        elif stat.S_ISDIR(st.st_mode):
            real = path
        else:
            return None
        if _under(real, walk.base):
            return None if _skipped(real, walk.base) else real
        if any(could_contain(pattern, real) for pattern in self.named):
            return real
        self._refuse_outside(walk, _shown(walk, shown), real)
        return None

    def _candidate(self, walk: _Walk, directory: str, name: str, shown: tuple[str, ...]) -> None:
        """Take the file `name` in `directory`, reached as `shown`, if it is a source."""
        path = os.path.join(directory, name)
        try:
            st = os.lstat(path)
        except OSError:
            return
        linked = stat.S_ISLNK(st.st_mode)
        real = os.path.realpath(path) if linked else path
        found = _shown(walk, shown)
        if walk.absolute:
            relative = _relative(real, self.root)
            shown_as = relative or found
        else:
            relative = shown_as = found
            found = f"{self.root.rstrip('/')}/{found}"
        if not is_selected(self.rules, relative, (found, real)):
            return
        if _under(real, walk.base):
            if _skipped(real, walk.base):
                return
        elif not any(pattern_matches(pattern, real) for pattern in self.named):
            self._refuse_outside(walk, shown_as, real)
            return
        if linked:
            try:
                st = os.lstat(real)
            except OSError:
                return  # a broken link, or a loop of links
        self._take(walk, shown_as, real, st)

    def _take(self, walk: _Walk, shown_as: str, real: str, st: os.stat_result) -> None:
        if stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode):
            return
        key = (st.st_dev, st.st_ino)
        if key in self._seen:
            return
        self._seen.add(key)
        if not stat.S_ISREG(st.st_mode):
            self._refuse(
                shown_as,
                "not_regular",
                f"refused: {shown_as} is not a regular file (a FIFO, socket or device); memd "
                "reads only regular files as sources.",
            )
        elif st.st_size > self.max_bytes:
            self._refuse(
                shown_as,
                "too_big",
                f"refused: {shown_as} holds {st.st_size:,} bytes, over the "
                f"{self.max_bytes:,}-byte cap for a source file (max_file_bytes); shorten it, "
                "leave it out of sources with a ! entry, or raise max_file_bytes.",
            )
        elif len(self.files) >= self.max_files:
            self._refuse(
                shown_as,
                "too_many",
                f"refused: {shown_as} and any further files, since a workspace has at most "
                f"{self.max_files:,} source files; narrow sources (a ! entry leaves files out).",
            )
            raise _Stop
        else:
            source = SourceFile(shown_as, real, st.st_size, fingerprint_of(st), walk.pattern)
            self.files.append(source)

    def _names(self, walk: _Walk, directory: str, shown: tuple[str, ...]) -> list[str]:
        """The names in `directory`, sorted (each directory is listed once per scan)."""
        listed = self._listings.get(directory)
        if listed is not None:
            return listed
        where = _shown(walk, shown) or "the workspace root"
        if len(self._listings) >= self.max_dirs:
            self._refuse(
                where,
                "too_many",
                f"refused: {where} and what is left, since memd stopped looking for sources "
                f"after listing {self.max_dirs:,} directories; narrow sources (a ** lists every "
                "directory below it).",
            )
            raise _Stop
        try:
            with os.scandir(directory) as entries:
                listed = sorted(entry.name for entry in entries)
        except (FileNotFoundError, NotADirectoryError):
            listed = []
        except OSError as exc:
            listed = []
            reason = exc.strerror or type(exc).__name__
            self._refuse(
                where,
                "unreadable",
                f"refused: memd cannot list {where} ({reason}); check its permissions.",
            )
        self._listings[directory] = listed
        return listed

    def _refuse_outside(self, walk: _Walk, shown_as: str, target: str) -> None:
        outside = walk.base if walk.absolute else "the workspace"
        self._refuse(
            shown_as,
            "outside",
            f"refused: {shown_as} links outside {outside} (to {target}); name the target in "
            "sources in memd's config file to include it.",
        )

    def _refuse(self, path: str, kind: RefusalKind, message: str) -> None:
        if (path, kind) not in self._refused_keys:
            self._refused_keys.add((path, kind))
            self.refused.append(Refusal(path, kind, message))


def _with_real_prefixes(rules: tuple[SourceRule, ...]) -> list[SourceRule]:
    """`rules`, each absolute one followed by a copy whose fixed leading directories (the whole
    path, for one without wildcards) have their links resolved: a real path matches it."""
    out = []
    for rule in rules:
        out.append(rule)
        absolute, segments = split_pattern(rule.pattern)
        if not absolute:
            continue
        fixed = next((n for n, seg in enumerate(segments) if not is_literal(seg)), len(segments))
        real = os.path.realpath("/" + "/".join(segments[:fixed]))
        pattern = "/".join((real.rstrip("/"), *segments[fixed:])) if fixed < len(segments) else real
        if pattern != rule.pattern:
            out.append(rule._replace(pattern=pattern))
    return out


def _shown(walk: _Walk, shown: tuple[str, ...]) -> str:
    return ("/" if walk.absolute else "") + "/".join(shown)


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip("/") + "/")


def _relative(path: str, root: str) -> str | None:
    """`path` relative to `root` with `/`, or None if it is not below it."""
    if path == root or not _under(path, root):
        return None
    return path[len(root.rstrip("/")) + 1 :]


def _skipped(real: str, base: str) -> bool:
    """Whether `real`, below `base`, lies in a directory never searched (a link into .git)."""
    return any(name in SKIPPED_DIRS for name in real[len(base) :].split("/"))


_PATH_ONLY: int = getattr(os, "O_PATH", os.O_RDONLY)
_DIR_FLAGS = _PATH_ONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def read_source(
    path: str, max_bytes: int, *, shown: str | None = None
) -> tuple[str, Fingerprint] | None:
    """Return the text of the source file at `path` (a `SourceFile.real_path`) and its
    fingerprint, or None if it no longer exists. `shown` names it in errors (its
    `SourceFile.path`). Never writes, never follows a link, never opens a FIFO.

    Raises:
        FileFormatError: the file is not a regular file, over `max_bytes`, not UTF-8 text, or
            a link now lies on its path.
        StorageError: the file system refused the read.
    """
    label = shown or path
    try:
        fd = _open_real(path)
    except FileNotFoundError:
        return None
    except _NotRegular:
        raise _not_regular_error(label) from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileFormatError(
                f"{label} is now a symbolic link, or lies under one; memd never follows one "
                "when it reads a source, so it leaves this one out until the sources are "
                "looked for again.",
                data={"path": label},
            ) from None
        raise storage_error("read", label, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular_error(label)
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1) if st.st_size <= max_bytes else b""
    except OSError as exc:
        raise storage_error("read", label, exc) from None
    finally:
        os.close(fd)
    if st.st_size > max_bytes or len(data) > max_bytes:
        size = max(st.st_size, len(data))
        raise FileFormatError(
            f"{label} holds {size:,} bytes, over the {max_bytes:,}-byte cap for a source file "
            "(max_file_bytes); memd leaves it out: shorten it or raise max_file_bytes.",
            data={"path": label, "size": size, "limit": max_bytes},
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            f"{label} is not UTF-8 text (bad byte at offset {exc.start}); memd leaves this "
            "source out until it is re-saved as UTF-8.",
            data={"path": label, "offset": exc.start},
        ) from None
    return text, fingerprint_of(st)


class _NotRegular(Exception):
    pass


def _open_real(path: str) -> int:
    """Open the file at the absolute `path` for reading, each directory and the file itself
    with O_NOFOLLOW (a link anywhere raises ELOOP or ENOTDIR), only if it is a regular file."""
    parts = [part for part in path.split("/") if part]
    if not os.path.isabs(path) or not parts:
        raise ValueError(f"{path!r} is not the absolute path of a file")
    *directories, name = parts
    dir_fd = os.open("/", _DIR_FLAGS)
    try:
        for part in directories:
            next_fd = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise OSError(errno.ELOOP, "a symbolic link", path)
        if not stat.S_ISREG(st.st_mode):
            raise _NotRegular(path)
        return os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _not_regular_error(label: str) -> FileFormatError:
    return FileFormatError(
        f"{label} is not a regular file (a FIFO, socket, device or directory); memd reads only "
        "regular files as sources.",
        data={"path": label},
    )


def read_project_config(root: str) -> ProjectConfig:
    """Return what the workspace's `.memory/memd.toml` sets (nothing, if it does not exist).
    Neither it nor `.memory/` may be a link; it must be a regular UTF-8 file of at most
    `MAX_PROJECT_CONFIG_BYTES`.

    Raises:
        ConfigError: the file cannot be used; the message names it and what to do.
    """
    path = os.path.join(root, MEMORY_DIR, PROJECT_CONFIG_NAME)
    try:
        fd = open_no_follow(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return ProjectConfig()
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ConfigError(
                f"{path} (or its .memory/) is a symbolic link; memd never follows links in a "
                "workspace's .memory/: replace the link with the file itself."
            ) from None
        raise ConfigError(f"Cannot read {path} ({exc.strerror}); fix or remove it.") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path} is not a regular file; make it a TOML file or remove it.")
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_PROJECT_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"Cannot read {path} ({exc.strerror}); fix or remove it.") from None
    finally:
        os.close(fd)
    if len(data) > MAX_PROJECT_CONFIG_BYTES:
        raise ConfigError(
            f"{path} is over {MAX_PROJECT_CONFIG_BYTES:,} bytes, the cap for memd.toml; shorten it."
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (bad byte at offset {exc.start}); re-save it as UTF-8."
        ) from None
    return parse_project_config(text, path)
