"""Whether git is working in a workspace's repository right now.

`git reset --hard`, `git stash`, `git checkout`, `git merge` and friends unlink tracked files and
create them again with O_EXCL while they hold the repository's `index.lock`. A file memd writes in
that gap makes git fail ("unable to create file ...: File exists") and leaves the committed
version missing from the working tree. So memd writes nothing in a workspace while its
repository's `index.lock` exists.

Rules:
- The repository is found by walking up from the workspace root to the first `.git`: a directory
  (the git directory itself), or a file saying `gitdir: <path>` (a worktree or a submodule, whose
  index and lock live in that directory; a relative path is relative to the `.git` file's
  directory). Nothing found: not a git workspace.
- A lock older than `STALE_AFTER` seconds is a leftover of a git that crashed (git itself then
  refuses to run until it is removed): memd does not wait for it, and says so once per lock.
- `.git` files are read without blocking and only if regular (a hostile repository may plant a
  FIFO), at most `MAX_GITFILE_BYTES`.
- Blocking: call it in a worker thread (it stats a few paths: microseconds on a local disk;
  `staged_as` runs git, for a rare decision only).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import subprocess
import time

logger = logging.getLogger(__name__)

STALE_AFTER = 300.0
MAX_GITFILE_BYTES = 4096
_warned: dict[str, int] = {}  # stale lock path -> its mtime, bounded below
_MAX_WARNED = 256


def git_dir(root: str) -> str | None:
    """Return the git directory of the repository `root` is in, or None."""
    directory = root
    while True:
        candidate = os.path.join(directory, ".git")
        try:
            st = os.lstat(candidate)
        except OSError:
            st = None
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                return candidate
            if stat.S_ISREG(st.st_mode):
                return _gitdir_from_file(candidate)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _gitdir_from_file(path: str) -> str | None:
    """Return the directory a `.git` file points at (`gitdir: <path>`), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_GITFILE_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    line = data.decode("utf-8", "replace").strip()
    if not line.startswith("gitdir:"):
        return None
    target = line[len("gitdir:") :].strip()
    return os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else None


def index_lock_held(root: str, *, now: float | None = None) -> str | None:
    """Return the path of the `index.lock` of the repository `root` is in if git holds it now
    (it exists and is younger than STALE_AFTER seconds), else None."""
    directory = git_dir(root)
    if directory is None:
        return None
    lock = os.path.join(directory, "index.lock")
    try:
        mtime = os.lstat(lock).st_mtime
    except OSError:
        return None
    age = (time.time() if now is None else now) - mtime
    if age <= STALE_AFTER:
        return lock
    if _warned.get(lock) != int(mtime):
        if len(_warned) >= _MAX_WARNED:
            _warned.clear()
        _warned[lock] = int(mtime)
        logger.warning(
            "%s is %.0f s old, so no git command holds it; memd writes anyway (git itself will "
            "refuse to run until it is removed)",
            lock,
            age,
        )
    return None


def index_changed_since(root: str, since_ns: int) -> bool:
    """Return True if the index of the repository `root` is in was written at or after
    `since_ns` (epoch nanoseconds): git reset, stash, checkout or merge ran since then."""
    directory = git_dir(root)
    if directory is None:
        return False
    try:
        return os.stat(os.path.join(directory, "index")).st_mtime_ns >= since_ns
    except OSError:
        return False


INDEX_TIMEOUT = 5.0
"""The longest `staged_as` waits for git."""


def staged_as(root: str, path: str, data: bytes) -> bool:
    """Return True if git's index holds exactly `data` for `path` (a file in the working tree
    of the repository `root` is in): git put that version there (a checkout, stash, reset or
    merge writes the index and the file alike). False when it does not, when `root` is in no
    repository, or when git cannot tell within INDEX_TIMEOUT seconds.

    Runs `git ls-files --stage` (a process: call it only for a rare decision) and compares the
    staged object's id with `data`'s, in the repository's own hash (SHA-1, or SHA-256).
    """
    if git_dir(root) is None:
        return False
    try:
        listed = subprocess.run(
            ["git", "-C", root, "ls-files", "--stage", "-z", "--", os.path.relpath(path, root)],
            capture_output=True,
            timeout=INDEX_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    if listed.returncode != 0:
        return False
    header = b"blob %d\0" % len(data)
    for record in listed.stdout.split(b"\0"):
        fields = record.split(b"\t", 1)[0].split()
        if len(fields) != 3:
            continue
        staged = fields[1].decode("ascii", "replace")
        digest = hashlib.sha256 if len(staged) == 64 else hashlib.sha1
        if digest(header + data).hexdigest() == staged:
            return True
    return False
