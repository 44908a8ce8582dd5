"""Where coding agents keep the current user's session transcripts, and which of them belong to
a workspace: the file-system half of the "chat" source (`memd.core.transcripts` reads them).

Rules:
- Claude Code: `<home>/projects/<encoded cwd>/<session>.jsonl`, where `<home>` is
  `$CLAUDE_CONFIG_DIR` when set and not empty, else `~/.claude`, and the encoded cwd is the
  real path with every character outside `[a-zA-Z0-9]` turned into `-` (`encode_claude`). A
  session started in a directory below the workspace lives in that directory's own folder, whose
  name starts with the workspace's and `-`. The encoding is lossy (`/a/b_c` and `/a/b/c` meet),
  so a file counts only when the `cwd` its own lines name is the workspace or below it.
- A file counts only when it was written within `max_age_days`, is a regular file, and at most
  `MAX_FILES` of the newest are taken (the rest are left out, newest first wins).
- Nothing here raises on a missing or unreadable directory or file: it is left out.
- Blocking: call it in a worker thread.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from memd.core.transcripts import Agent
from memd.core.transcripts.lines import complete_objects

MAX_FILES = 2000
"""The most session files one workspace's "chat" source takes (the newest)."""
HEAD_BYTES = 64 * 1024
"""How much of a file's start is read to find the `cwd` its session ran in."""

_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")


class TranscriptFile(NamedTuple):
    """A session transcript of the workspace: where, whose, and its state when found."""

    path: str
    agent: Agent
    size: int
    mtime: float
    identity: tuple[int, int]
    """(device, inode): a file replaced under the same name is another file."""


def claude_home(env: Mapping[str, str]) -> str:
    """Claude Code's config directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    given = env.get("CLAUDE_CONFIG_DIR", "")
    if given:
        return os.path.expanduser(given)
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")


def encode_claude(path: str) -> str:
    """A directory's name under Claude Code's `projects/`: its path, each character outside
    `[a-zA-Z0-9]` as `-`."""
    return _NOT_ALNUM.sub("-", path)


def within(cwd: str, root: str) -> bool:
    """Whether a session's `cwd` is the workspace `root` or below it."""
    cwd = os.path.normpath(cwd)
    return cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep)


def find_transcripts(
    root: str, env: Mapping[str, str], *, max_age_days: int, now: float
) -> list[TranscriptFile]:
    """The session transcripts of the workspace at `root` (a real path), newest first (see the
    module rules)."""
    oldest = now - max_age_days * 86400.0
    found = [
        found
        for found in _claude_files(root, env)
        if found.mtime >= oldest and _claude_cwd_within(found.path, root)
    ]
    found.sort(key=lambda f: (-f.mtime, f.path))
    return found[:MAX_FILES]


def _claude_files(root: str, env: Mapping[str, str]) -> Iterator[TranscriptFile]:
    projects = os.path.join(claude_home(env), "projects")
    name = encode_claude(root)
    try:
        folders = [
            entry.path
            for entry in os.scandir(projects)
            if entry.name == name or entry.name.startswith(name + "-")
        ]
    except OSError:
        return
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            found = _stat(entry.path, "claude")
            if found is not None:
                yield found


def _stat(path: str, agent: Agent) -> TranscriptFile | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return TranscriptFile(path, agent, info.st_size, info.st_mtime, (info.st_dev, info.st_ino))


def _claude_cwd_within(path: str, root: str) -> bool:
    """Whether the first `cwd` a Claude Code transcript's head names is within `root`."""
    head = _head(path)
    for _, line in complete_objects(head).objects:
        cwd = line.get("cwd")
        if isinstance(cwd, str) and cwd:
            return within(cwd, root)
    return False


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(HEAD_BYTES)
    except OSError:
        return b""
