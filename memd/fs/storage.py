"""The only module that reads and writes memory files. All functions block: call them in a
worker thread (`anyio.to_thread.run_sync`).

Rules:
- Reads return the text and a `Fingerprint` (device, inode, size, mtime) of what was read, so a
  writer can tell whether the file changed since (never overwrite a change you have not read).
- A file that is not valid UTF-8, or not a regular file, raises `FileFormatError` and is never
  overwritten.
- Writes are atomic and durable: a temp file in the same directory, fsync, rename over the
  target, fsync the directory. A write told which version it replaces (`expected`) never
  replaces another: it creates only if the name is free, and swaps, checks what it displaced and
  swaps back if that was not the version (see `renames`). An existing file keeps its
  permission bits. With `follow_links=False` (a workspace's memory files) a symbolic link, for
  the file or its directory, is refused instead of followed; otherwise a link is written through
  to its target.
- A workspace's memory file over its size cap (`max_bytes`) is refused, never read into memory.
- The archive is append-only and must be a regular file: one write of whole lines, then fsync,
  all or nothing (a failed write is truncated away), never glued onto a line without its
  newline. Once it would pass its cap it is moved aside to a dated file, never deleted.
- Temp files are named `.<name>.memd-<12 hex digits>.tmp`. One left by a crash is debris: it is
  never read as data, and `remove_debris` deletes it (the caller holds the write lock, and only
  debris older than the process's first look at the directory goes: a commit's file is written
  at its temp name before the lock is taken, so a newer one is a write in flight).

Size: every blocking operation on a workspace's files, so that one module owns the no-follow, non-
blocking, regular-file and atomic-write rules.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
from collections.abc import Callable
from typing import Literal, NamedTuple

from memd.fs import renames
from memd_client.errors import FileFormatError, RpcError, StorageError

logger = logging.getLogger(__name__)

NEW_FILE_MODE = 0o644
_NO_FOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A stale `.memory/.lock` is renamed to a name with this prefix before it is deleted.
STALE_ASIDE_PREFIX = ".lock.memd-stale-"
_TEMP_NAME = re.compile(r"\..+\.memd-[0-9a-f]{12}\.tmp")


class Fingerprint(NamedTuple):
    """What identifies one version of a file on disk."""

    dev: int
    ino: int
    size: int
    mtime_ns: int


class ChangedOnDisk(Exception):
    """Raised by a `before_replace` check: the file changed since it was read; re-read it."""


class NotNow(Exception):
    """Raised by a `before_replace` check: another program is working on the files (git holds
    its index lock: `args[0]` is its path); nothing was written, try again shortly."""


def fingerprint_of(st: os.stat_result) -> Fingerprint:
    """Return the fingerprint of a stat result."""
    return Fingerprint(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_RAISE_THE_CAP = "or raise max_file_bytes in memd's config file and send the daemon SIGHUP"
_TOO_BIG = {
    None: ("{path} holds", "move old entries into .memory/archive.md by hand"),
    "store": ("Not stored: {path} would grow to", "run cleanup to archive old entries"),
    "write": ("Nothing written: {path} would grow to", "archive old entries by hand"),
}


def too_big_error(
    path: str, size: int, limit: int, *, refused: Literal["store", "write"] | None = None
) -> FileFormatError:
    """Return the error for a memory file of `size` bytes over the `limit` cap: one that is
    not loaded, or (`refused`) a store or a whole write that was not carried out because it
    would have made the file that big."""
    state, remedy = _TOO_BIG[refused]
    return FileFormatError(
        f"{state.format(path=path)} {size:,} bytes, over the {limit:,}-byte cap for a memory "
        f"file (max_file_bytes); {remedy}, {_RAISE_THE_CAP}.",
        data={"path": path, "size": size, "limit": limit},
    )


def current_fingerprint(path: str) -> Fingerprint | None:
    """Return the fingerprint of `path` now, or None if it does not exist."""
    try:
        return fingerprint_of(os.stat(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise storage_error("check", path, exc) from None


def read_text(
    path: str, *, follow_links: bool = True, max_bytes: int | None = None
) -> tuple[str, Fingerprint] | None:
    """Return the text of `path` and its fingerprint, or None if it does not exist.

    With `follow_links=False` (a workspace's memory files, which a cloned repository controls),
    neither the file nor its directory may be a symbolic link. With `max_bytes`, a bigger file
    is refused before it is read.

    Raises:
        FileFormatError: the file is not a regular file, not UTF-8 text, a symbolic link
            (with `follow_links=False`) or over `max_bytes`.
        StorageError: the file system refused the read.
    """
    try:
        # O_NONBLOCK: opening a FIFO planted where a category file should be must not hang.
        if follow_links:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        else:
            fd = open_no_follow(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise FileFormatError(
                    f"{path} is not a regular file; replace it with a Markdown file or remove it.",
                    data={"path": path},
                )
            if max_bytes is not None and st.st_size > max_bytes:
                raise too_big_error(path, st.st_size, max_bytes)
            data = handle.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise FileFormatError(
            f"{path} is a directory; memd needs a Markdown file there.", data={"path": path}
        ) from None
    except OSError as exc:
        if not follow_links and exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise symlink_error(path) from None
        raise storage_error("read", path, exc) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            f"{path} is not UTF-8 text (bad byte at offset {exc.start}); fix or re-save it as "
            "UTF-8, memd will not overwrite it until then.",
            data={"path": path, "offset": exc.start},
        ) from None
    return text, fingerprint_of(st)


def symlink_error(path: str) -> FileFormatError:
    """The error for a memory file (or its `.memory` directory) that is a symbolic link."""
    return FileFormatError(
        f"{path} (or its directory) is a symbolic link; memd never follows links in a "
        "workspace's .memory/ (a cloned repository could point one at any file of yours): "
        "replace the link with the file itself.",
        data={"path": path},
    )


def open_no_follow(path: str, flags: int, mode: int = 0o644) -> int:
    """Open `path` following no symbolic link in its last two components (the memory file and
    `.memory/`); a link there raises ELOOP (or ENOTDIR)."""
    directory, name = os.path.split(path)
    dir_fd = os.open(directory or os.curdir, _NO_FOLLOW_DIR)
    try:
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def write_atomic(
    path: str,
    text: str,
    *,
    before_replace: Callable[[], None] | None = None,
    follow_links: bool = True,
    expected: Fingerprint | Literal["any"] | None = "any",
) -> Fingerprint:
    """Replace `path` with `text` atomically and durably; return the new file's fingerprint.

    Creates the parent directory (`.memory/`) if missing, but never its parents: a workspace
    that was deleted is not silently recreated. `before_replace` runs once the new content is
    durable in its temp file, just before the rename; anything it raises cancels the write.
    A symbolic link at `path` is written through to its target, unless `follow_links` is False
    (a workspace's memory files): then a link at `path` or at its directory is refused.

    With `expected` (the version the new text was made from, None for "no file"), a file that
    is not that version is never replaced, even one that lands between `before_replace` and the
    rename (a writer that ignores the lock): the new file is created only if the name is free,
    and an existing one is swapped in, the displaced file checked, and swapped back if it was
    not `expected` (see `renames`). Where the platform cannot swap or link, the check in
    `before_replace` is all there is.

    Raises:
        ChangedOnDisk: the file at `path` is not `expected`; nothing was written.
        FileFormatError: with `follow_links=False`, `path` or its directory is a link.
        StorageError: the file system refused the write; the old file is unchanged.
    """
    data = text.encode("utf-8")
    try:
        dir_fd, name, mode = _open_target(path, follow_links)
        try:
            st = _write_replace(dir_fd, name, data, mode, before_replace, expected)
        finally:
            os.close(dir_fd)
    except (RpcError, ChangedOnDisk, NotNow):
        raise  # from `before_replace` (LockTimeout is also a TimeoutError, so an OSError)
    except OSError as exc:
        if not follow_links and exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise symlink_error(path) from None
        raise storage_error("write", path, exc) from None
    return fingerprint_of(st)


DirectorySyncs = dict[tuple[int, int], OSError | None]
"""Directories (device, inode) fsynced after a group of renames, each with the fsync's error
(None: it succeeded): see `Staged.sync`."""


class Staged:
    """A file's new text, durable at a temp name beside it, not yet in place (`stage`): so
    a writer can do the slow part (write, fsync) before it takes the lock, and under the lock
    only check and rename (`put_in_place`), then make the rename durable after (`sync`).
    `close` removes the temp file if it was never put in place."""

    def __init__(self, path: str, dir_fd: int, name: str, temp: str, st: os.stat_result) -> None:
        self.path = path
        self._dir_fd = dir_fd
        self._name = name
        self._temp = temp
        self._st = st
        self.placed = False

    def put_in_place(
        self,
        *,
        before_replace: Callable[[], None] | None = None,
        expected: Fingerprint | Literal["any"] | None = "any",
    ) -> Fingerprint:
        """Rename the staged file to its name, replacing only `expected` (see `write_atomic`);
        return its fingerprint. Not durable until `sync`.

        Raises:
            ChangedOnDisk: the file at its name is not `expected`; nothing was replaced.
            StorageError: the rename failed.
        """
        try:
            if before_replace is not None:
                before_replace()
            _put_in_place(self._dir_fd, self._temp, self._name, self._st, expected)
        except (RpcError, ChangedOnDisk, NotNow):
            raise
        except OSError as exc:
            raise storage_error("write", self.path, exc) from None
        self.placed = True
        return fingerprint_of(self._st)

    def sync(self, synced: DirectorySyncs | None = None) -> None:
        """Make the rename durable (fsync the directory). With `synced` (shared by writes
        whose renames were all made before any of them syncs), a directory already fsynced
        there is not fsynced again: that fsync made this rename durable too, and its failure
        is this write's failure.

        Raises:
            StorageError: the fsync failed.
        """
        key: tuple[int, int] | None = None
        if synced is not None:
            with contextlib.suppress(OSError):  # no key: this write fsyncs on its own
                st = os.fstat(self._dir_fd)
                key = (st.st_dev, st.st_ino)
            if key in synced:
                failed = synced[key]
                if failed is not None:
                    raise storage_error("write", self.path, failed) from None
                return
        try:
            os.fsync(self._dir_fd)
        except OSError as exc:
            if key is not None and synced is not None:
                synced[key] = exc
            raise storage_error("write", self.path, exc) from None
        if key is not None and synced is not None:
            synced[key] = None

    def close(self) -> None:
        """Remove the temp file if it was not put in place (and is still ours); close."""
        if self._dir_fd < 0:
            return
        if not self.placed:
            _discard(self._dir_fd, self._temp, self._st)
        os.close(self._dir_fd)
        self._dir_fd = -1


def stage(path: str, text: str, *, follow_links: bool = True) -> Staged:
    """Write `text` durably to a temp file beside `path` (see `Staged`); a symbolic link is
    handled as `write_atomic` handles it.

    Raises:
        FileFormatError: with `follow_links=False`, `path` or its directory is a link.
        StorageError: the file system refused the write.
    """
    data = text.encode("utf-8")
    try:
        dir_fd, name, mode = _open_target(path, follow_links)
        try:
            temp, st = _write_temp(dir_fd, name, data, mode)
        except BaseException:
            os.close(dir_fd)
            raise
    except OSError as exc:
        if not follow_links and exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise symlink_error(path) from None
        raise storage_error("write", path, exc) from None
    return Staged(path, dir_fd, name, temp, st)


def _open_target(path: str, follow_links: bool) -> tuple[int, str, int]:
    """Open the directory a write to `path` lands in (creating `.memory/` if missing); return
    its descriptor, the file's name in it and the permission bits the file keeps. A link at
    `path` is written through to its target, or (`follow_links` False) raises ELOOP."""
    if follow_links:
        target, mode = _target_of(path)
    else:
        target, mode = path, _mode_of_no_follow(path)
    directory, name = os.path.split(target)
    return _open_directory(directory or os.curdir, follow=follow_links), name, mode


def _mode_of_no_follow(path: str) -> int:
    """The permission bits a rewrite of `path` keeps; raises ELOOP if `path` is a link."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return NEW_FILE_MODE
    if stat.S_ISLNK(st.st_mode):
        raise OSError(errno.ELOOP, "a symbolic link", path)
    return stat.S_IMODE(st.st_mode)


def append_lines(path: str, lines: list[str], *, header: str) -> None:
    """Append `lines` (each gets "\\n") to `path` all or nothing, creating it with `header`
    first; then fsync. Neither `path` nor its directory may be a symbolic link (it is a
    workspace's archive), and it must be a regular file: a FIFO is never written to or waited on.

    A file that does not end in a newline (a line torn by a crash, or a hand edit) gets one
    first, so a record never glues onto it. A write or fsync that fails (the disk is full) is
    taken back: the file is truncated to its size before, so no torn line is left.

    Raises:
        FileFormatError: `path` or its directory is a symbolic link, or `path` is not a
            regular file.
        StorageError: the file system refused the write; the file is as it was.
    """
    records = "".join(line + "\n" for line in lines).encode("utf-8")
    try:
        fd = open_no_follow(path, _APPEND_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise symlink_error(path) from None
        if exc.errno in (errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP):
            raise not_regular_error(path) from None
        raise storage_error("write", path, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular_error(path)
        size = st.st_size
        if size == 0:
            prefix = header.encode("utf-8")
        else:
            prefix = b"" if os.pread(fd, 1, size - 1) == b"\n" else b"\n"
        try:
            _write_all(fd, prefix + records)
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise
    except OSError as exc:
        raise storage_error("write", path, exc) from None
    finally:
        os.close(fd)


# O_RDWR: the last byte is read (is there a newline?); O_NONBLOCK: a FIFO never blocks the open.
_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
_MAX_SAME_DAY = 10_000


def move_aside_if_full(
    path: str, lines: list[str], max_bytes: int, *, header: str, date: str
) -> str | None:
    """If appending `lines` would grow the archive `path` past `max_bytes`, rename it to
    `<stem>-<date>.md` (`-2`, `-3`... if taken; an existing file is never replaced) so the append
    starts a new one; return the new name, or None if it stayed. An archive holding no more than
    `header` stays, however big the append (a batch is never split or refused). Call it under
    the write lock, before `append_lines`. Anything but a regular file is left for
    `append_lines` to report.

    Raises:
        FileFormatError: the directory is a symbolic link.
        StorageError: the rename failed; the archive is as it was.
    """
    directory, name = os.path.split(path)
    adding = sum(len(line.encode("utf-8")) + 1 for line in lines)
    try:
        dir_fd = os.open(directory or os.curdir, _NO_FOLLOW_DIR)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise symlink_error(path) from None
        raise storage_error("check", path, exc) from None
    try:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_size <= len(header.encode("utf-8"))
            or st.st_size + adding <= max_bytes
        ):
            return None
        moved = _rename_no_replace(dir_fd, name, date)
        os.fsync(dir_fd)
        return os.path.join(directory, moved)
    except OSError as exc:
        raise storage_error("move aside", path, exc) from None
    finally:
        os.close(dir_fd)


def _rename_no_replace(dir_fd: int, name: str, date: str) -> str:
    """Rename `name` to the first free `<stem>-<date>[-N]<ext>`; return that name. Through
    `renames.create_only`, so a name that is taken meanwhile is never replaced (a file system
    without hard links gets a check and a rename, under the write lock)."""
    stem, ext = os.path.splitext(name)
    for number in range(1, _MAX_SAME_DAY + 1):
        candidate = f"{stem}-{date}{ext}" if number == 1 else f"{stem}-{date}-{number}{ext}"
        try:
            if renames.create_only(dir_fd, name, candidate):
                return candidate
        except FileExistsError:
            continue
        try:
            os.stat(candidate, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(name, candidate, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return candidate
    raise OSError(errno.EEXIST, f"{_MAX_SAME_DAY:,} archives of {date} exist already")


def not_regular_error(path: str) -> FileFormatError:
    """The error for a file memd appends to or reads beside the memory files (the archive)
    that is not a regular file: a FIFO, a socket or a directory, as a repository could plant."""
    return FileFormatError(
        f"{path} is not a regular file (a FIFO, socket or directory); memd keeps removed and "
        "replaced entries there, so no entry was removed or replaced (a store that would update "
        "one was not made either): replace it with a regular file or delete it.",
        data={"path": path},
    )


def read_regular_bytes(path: str) -> bytes:
    """Return the bytes of `path`, a file memd keeps for itself (usage history, a kept index).
    Opened non-blocking, so a FIFO there never hangs the caller.

    Raises:
        FileNotFoundError: it does not exist.
        OSError: it could not be read, or (EINVAL) it is not a regular file.
    """
    with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return handle.read()


def is_debris(name: str) -> bool:
    """Return True for a file name memd creates only for a moment (a temp file or a stale lock
    renamed aside), which a crash can leave behind."""
    return _TEMP_NAME.fullmatch(name) is not None or name.startswith(STALE_ASIDE_PREFIX)


def has_debris(directory: str, *, lock_file: str) -> bool:
    """Return True if `directory` exists and holds debris (see `is_debris`) or a lock file
    (possibly left by a crash; taking the lock once breaks it if it is stale). A `directory`
    that is a symbolic link holds none (it is a workspace's `.memory/`, never followed)."""
    try:
        dir_fd = os.open(directory, _NO_FOLLOW_DIR)
    except OSError:
        return False
    try:
        return any(is_debris(name) or name == lock_file for name in os.listdir(dir_fd))
    except OSError:
        return False
    finally:
        os.close(dir_fd)


def remove_debris(directory: str, *, before_ns: int | None = None) -> list[str]:
    """Delete the debris in `directory` (call it under the write lock); return what was removed.
    With `before_ns` (epoch ns: when this process began serving the directory), only debris
    last written before then goes: a newer temp file is a write in flight (memd writes and syncs
    a commit's file before it takes the lock). A `directory` that is a symbolic link is left
    alone (it is a workspace's `.memory/`)."""
    removed = []
    try:
        dir_fd = os.open(directory, _NO_FOLLOW_DIR)
    except OSError:
        return []
    try:
        for name in os.listdir(dir_fd):
            if is_debris(name):
                with contextlib.suppress(OSError):  # gone already, or not ours to delete
                    if before_ns is not None:
                        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                        if st.st_mtime_ns >= before_ns:
                            continue  # written since: a write in flight, not a crash's
                    os.unlink(name, dir_fd=dir_fd)
                    removed.append(name)
    finally:
        os.close(dir_fd)
    return removed


def _target_of(path: str) -> tuple[str, int]:
    """Return the file a write to `path` replaces (through a symlink to its target; directories
    on the way are followed by the rename itself) and the permission bits it must keep."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path, NEW_FILE_MODE
    if not stat.S_ISLNK(st.st_mode):
        return path, stat.S_IMODE(st.st_mode)
    target = os.path.realpath(path)
    try:
        return target, stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return target, NEW_FILE_MODE


def _open_directory(directory: str, *, follow: bool = True) -> int:
    """Open `directory`, creating it first if it is missing (never its parents); with
    `follow=False`, a symbolic link there raises ELOOP or ENOTDIR."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        return os.open(directory, flags)
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory)
        return os.open(directory, flags)


def _write_replace(
    dir_fd: int,
    name: str,
    data: bytes,
    mode: int,
    before_replace: Callable[[], None] | None,
    expected: Fingerprint | Literal["any"] | None,
) -> os.stat_result:
    temp, st = _write_temp(dir_fd, name, data, mode)
    try:
        if before_replace is not None:
            before_replace()
        _put_in_place(dir_fd, temp, name, st, expected)
    except BaseException:
        _discard(dir_fd, temp, st)
        raise
    os.fsync(dir_fd)
    return st


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int) -> tuple[str, os.stat_result]:
    """Write `data` durably to a new temp file for `name` with `mode`; return its name and
    stat. A failed write leaves no temp file."""
    temp = f".{name}.memd-{secrets.token_hex(6)}.tmp"  # see _TEMP_NAME
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600, dir_fd=dir_fd)
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    return temp, st


def _discard(dir_fd: int, temp: str, mine: os.stat_result) -> None:
    """Remove our temp file after a failed write, but only if `temp` is still ours: after a
    swap it may hold someone else's version, which is kept under a name of its own."""
    try:
        now = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return
    if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        return
    with contextlib.suppress(OSError):
        _keep_aside(dir_fd, temp)


def _put_in_place(
    dir_fd: int,
    temp: str,
    name: str,
    mine: os.stat_result,
    expected: Fingerprint | Literal["any"] | None,
) -> None:
    """Give `temp` (whose stat is `mine`) the name `name`, replacing only `expected` (see
    `write_atomic`); on return `temp` no longer exists.

    Raises:
        ChangedOnDisk: what is at `name` is not `expected` (it is left there, untouched).
    """
    try:
        if expected is None:
            if renames.create_only(dir_fd, temp, name):
                return
        elif expected != "any" and renames.swap(dir_fd, temp, name):
            displaced = fingerprint_of(os.stat(temp, dir_fd=dir_fd, follow_symlinks=False))
            if displaced != expected:
                _swap_back(dir_fd, temp, name, mine)
                raise ChangedOnDisk(name)
            os.unlink(temp, dir_fd=dir_fd)
            return
    except (FileExistsError, FileNotFoundError):
        raise ChangedOnDisk(name) from None  # created, or removed, since it was checked
    os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _swap_back(dir_fd: int, temp: str, name: str, mine: os.stat_result) -> None:
    """Put back the file a swap displaced into `temp` (someone else's version, written between
    the check and the swap) and remove ours. If that fails, or what comes back is not ours
    either (a third writer in that instant), the file left at `temp` is kept under a name of its
    own and logged, never deleted."""
    try:
        renames.swap(dir_fd, temp, name)
        back = os.stat(temp, dir_fd=dir_fd, follow_symlinks=False)
        if (back.st_dev, back.st_ino) == (mine.st_dev, mine.st_ino):
            os.unlink(temp, dir_fd=dir_fd)
            return
    except OSError:
        pass
    _keep_aside(dir_fd, temp)


def _keep_aside(dir_fd: int, temp: str) -> None:
    """Give someone else's version, left at our temp name `temp`, a name that is not debris
    (`<file>.memd-clobbered-<hex>`), and log it: it is merged by hand, never deleted."""
    name = temp.removeprefix(".").rsplit(".memd-", 1)[0]
    kept = f"{name}.memd-clobbered-{secrets.token_hex(4)}"
    os.rename(temp, kept, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    logger.error(
        "two writers replaced %s while memd wrote it; one version is kept as %s: merge it by hand",
        name,
        kept,
    )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def storage_error(action: str, path: str, exc: OSError) -> StorageError:
    """Return the error for a failed file system `action` on `path`, with a hint what to do."""
    reason = exc.strerror or errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    hint = {
        errno.ENOSPC: "free some disk space and retry",
        errno.EACCES: "check the file's permissions",
        errno.EPERM: "check the file's permissions",
        errno.EROFS: "the file system is read-only",
    }.get(exc.errno or 0, "check the path and retry")
    return StorageError(
        f"Could not {action} {path}: {reason}; {hint}.", data={"path": path, "errno": exc.errno}
    )
