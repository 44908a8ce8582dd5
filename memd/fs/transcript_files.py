"""Where coding agents keep the current user's session transcripts, and which of them belong to
a workspace: the file-system half of the "chat" source (`memd.core.transcripts` reads them).

Rules:
- A session belongs to the workspace when the directory it STARTED in (the first `cwd` its own
  lines name) is the workspace root or below it, both compared as NFC strings. A session that
  started elsewhere and moved in later does not count, and one that started inside and moved
  out still does (only a file's head is read, never the whole file, to decide).
- Claude Code: `<home>/projects/<encoded cwd>/<session>.jsonl`, where `<home>` is
  `$CLAUDE_CONFIG_DIR` when set and not empty, else `~/.claude`, and the encoded cwd is the
  real path (NFC) with every character outside `[a-zA-Z0-9]` turned into `-` (`encode_claude`),
  cut to `CLAUDE_NAME_MAX` characters plus `-<hash>` when longer (the hash differs between
  Claude Code's builds, so such a folder is matched by its first `CLAUDE_NAME_MAX` characters
  and `-`). A session started in a directory below the workspace lives in that directory's own
  folder, whose name starts with the workspace's and `-`. The encoding is lossy (`/a/b_c` and
  `/a/b/c` meet), so a file counts only when its own lines' `cwd` is within the workspace.
- Codex: `<home>/sessions/**/rollout-*.jsonl` (any depth: the date folders' time zone is not
  relied on), where `<home>` is `$CODEX_HOME` when set and not empty (Codex refuses one that is
  not a directory, so then there are no Codex sessions, never another home's), else
  `~/.codex`. Its cwd is `session_meta`'s, or in old files the first `<environment_context>`'s
  (`memd.core.transcripts.codex.session_cwd`). `archived_sessions/` is not read: the user put
  those away.
- A file counts only when it was written within `max_age_days` (checked before its head is
  read), is a regular file, and at most `MAX_FILES` of the newest are taken (newest first).
- A head's answer is remembered per (path, device, inode) in a bounded LRU (`HEAD_CACHE_SIZE`),
  so looking again over many files reads only the new ones; an answer not yet found is asked
  again only once the file has grown.
- Nothing here raises on a missing or unreadable directory or file: it is left out.
- Blocking: call it in a worker thread.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO, NamedTuple

from memd.core.transcripts import Agent, codex, within as within
from memd.core.transcripts.lines import MAX_LINE_BYTES, complete_objects

MAX_FILES = 2000
"""The most session files one workspace's "chat" source takes (the newest)."""
HEAD_BYTES = 64 * 1024
"""How much of a file's start is read first to find the `cwd` its session ran in (a Codex
`session_meta` line can be longer: then up to `MAX_LINE_BYTES` is read)."""
CLAUDE_NAME_MAX = 200
"""Claude Code cuts a longer encoded folder name to this many characters and adds a hash."""
HEAD_CACHE_SIZE = 8192
"""How many files' head answers are remembered."""

_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")

Objects = Iterable[tuple[int, dict[str, Any]]]


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
        return unicodedata.normalize("NFC", os.path.expanduser(given))
    return os.path.join(_user_home(env), ".claude")


def codex_home(env: Mapping[str, str]) -> str | None:
    """Codex's home: `$CODEX_HOME` (None when it is set but not a directory), else `~/.codex`."""
    given = env.get("CODEX_HOME", "")
    if not given:
        return os.path.join(_user_home(env), ".codex")
    given = os.path.realpath(os.path.expanduser(given))
    return given if os.path.isdir(given) else None


def encode_claude(path: str) -> str:
    """A directory's name under Claude Code's `projects/`: its path (NFC), each character
    outside `[a-zA-Z0-9]` as `-` (uncut: `_claude_folder_prefix` applies the length rule)."""
    return _NOT_ALNUM.sub("-", unicodedata.normalize("NFC", path))


def find_transcripts(
    root: str, env: Mapping[str, str], *, max_age_days: int, now: float
) -> list[TranscriptFile]:
    """The session transcripts of the workspace at `root` (a real path), newest first (see the
    module rules)."""
    oldest = now - max_age_days * 86400.0
    candidates = [*_claude_files(root, env), *_codex_files(env)]
    found = [found for found in candidates if found.mtime >= oldest and _cwd_within(found, root)]
    found.sort(key=lambda f: (-f.mtime, f.path))
    return found[:MAX_FILES]


def _user_home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _claude_folder_matches(root: str) -> Callable[[str], bool]:
    """Whether a folder under `projects/` may hold sessions started at `root` or below."""
    name = encode_claude(root)
    if len(name) > CLAUDE_NAME_MAX:
        prefix = name[:CLAUDE_NAME_MAX] + "-"
        return lambda folder: folder.startswith(prefix)
    return lambda folder: folder == name or folder.startswith(name + "-")


def _claude_files(root: str, env: Mapping[str, str]) -> Iterator[TranscriptFile]:
    projects = os.path.join(claude_home(env), "projects")
    matches = _claude_folder_matches(root)
    try:
        folders = [entry.path for entry in os.scandir(projects) if matches(entry.name)]
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


def _codex_files(env: Mapping[str, str]) -> Iterator[TranscriptFile]:
    home = codex_home(env)
    if home is None:
        return
    for folder, _dirs, names in os.walk(os.path.join(home, "sessions")):
        for name in names:
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                found = _stat(os.path.join(folder, name), "codex")
                if found is not None:
                    yield found


def open_transcript(path: str) -> BinaryIO:
    """`path` opened to read, refused unless it is a regular file (a FIFO put in a transcript's
    place would block the reader forever; opening does not wait for a writer).

    Raises:
        OSError: it cannot be opened, or it is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _stat(path: str, agent: Agent) -> TranscriptFile | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return TranscriptFile(path, agent, info.st_size, info.st_mtime, (info.st_dev, info.st_ino))


class _HeadAnswer(NamedTuple):
    cwd: str | None
    size: int
    """The file's size when `cwd` was not found yet (-1 once found: it never changes)."""


_heads: OrderedDict[tuple[str, tuple[int, int]], _HeadAnswer] = OrderedDict()
_heads_lock = threading.Lock()


def _cwd_within(found: TranscriptFile, root: str) -> bool:
    """Whether the directory a transcript's session started in is within `root`."""
    cwd = _started_in(found)
    return cwd is not None and within(cwd, root)


def _started_in(found: TranscriptFile) -> str | None:
    """The `cwd` a transcript's head names (remembered, see the module rules)."""
    key = (found.path, found.identity)
    with _heads_lock:
        known = _heads.get(key)
        if known is not None:
            _heads.move_to_end(key)
            if known.size < 0 or known.size == found.size:
                return known.cwd
    cwd = _head_cwd(found.path, _claude_cwd if found.agent == "claude" else codex.session_cwd)
    with _heads_lock:
        _heads[key] = _HeadAnswer(cwd, -1 if cwd is not None else found.size)
        _heads.move_to_end(key)
        while len(_heads) > HEAD_CACHE_SIZE:
            _heads.popitem(last=False)
    return cwd


def _head_cwd(path: str, cwd_of: Callable[[Objects], str | None]) -> str | None:
    """`cwd_of` the complete lines of the file's first `HEAD_BYTES`, or of its first
    `MAX_LINE_BYTES` when those do not tell (a long first line, a large snapshot)."""
    try:
        with open_transcript(path) as handle:
            head = handle.read(HEAD_BYTES)
            cwd = cwd_of(complete_objects(head).objects)
            if cwd is not None or len(head) < HEAD_BYTES:
                return cwd
            head += handle.read(MAX_LINE_BYTES - HEAD_BYTES)
    except OSError:
        return None
    return cwd_of(complete_objects(head).objects)


def _claude_cwd(objects: Objects) -> str | None:
    for _, line in objects:
        cwd = line.get("cwd")
        if isinstance(cwd, str) and cwd:
            return cwd
    return None
