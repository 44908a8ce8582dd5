"""What a workspace's code says about a set of citations: which cited paths exist, where the
missing ones went, which cited words occur in the code now and which did at an entry's
baseline, and what each runner can run. Blocking: call it in a worker thread.

Rules, in a git work tree (`memd.fs.git_state.git_dir` finds one):
- Files are git's own index (`git ls-files`: staged renames and additions included), run in
  the workspace root, so a workspace in a subfolder of a repository sees its own files,
  relative to itself. A path key resolves (`_Resolver`) to: the exact file; a directory (a
  prefix of tracked files); the key plus one extension (`src/api/client` ->
  `src/api/client.ts`); a path under a subfolder ending with it (`api/client.ts` ->
  `src/api/client.ts`), only when at most `MAX_FOUND` do (more: ambiguous, not found); a
  glob's matches. A tracked file deleted from the working tree is not found; an untracked
  one that exists and is not ignored is.
- `ignored` comes from one `git check-ignore --stdin` of the keys not found (as a file and as
  a directory). `known`: the key resolves among the paths git's history renamed or deleted
  (one `git log -M --diff-filter=RD` of the last `HISTORY_COMMITS` commits, then the staged
  renames and deletions) or the index holds it. `moved_to` follows the renames, oldest
  first, through chains to a path in the index now (a directory: when every renamed file
  under it went to one new directory); a path deleted (or renamed, then deleted) is known,
  with no `moved_to`.
- Words are found by `grep -w -F -o` (Aho-Corasick: linear in the text whatever the number
  of words) of all asked words over the tracked files (not `.memory/`, where the entries
  themselves are), `GREP_PROCESSES` greps side by side over parts of the tree; `git grep`
  where there is no grep. Up to `MAX_WORD_FILES` files are kept for each word.
  `known_words[baseline]` holds the words missing now that occurred at that commit: a
  `git grep` of those words at each distinct baseline, the most used first, over the files
  changed since it only, for at most `MAX_BASELINES` baselines and `BASELINES_BUDGET`
  seconds ("" is HEAD). A baseline not looked at (over the caps, unknown to git, a failing
  git) is absent: its entries' missing words are unverifiable.
- Every git runs with a timeout, a bounded output, `GIT_OPTIONAL_LOCKS=0` (it never takes
  the index lock), and never raises here: a word not looked up is absent from `words`, a
  path whose facts git could not give is not known. A failing `git ls-files` (git not
  installed, a corrupt repository, a timeout) falls back to the walk below, with nothing
  known (so nothing is found missing).
Without git: a bounded walk (`MAX_WALK_FILES` files, `MAX_WALK_DIRS` directories, never
into `.git`, `node_modules` or a link) honouring every `.gitignore` on the way; words by
reading those text files (at most `MAX_TEXT_BYTES` each, `MAX_WALK_BYTES` in all); no
history, so `known_words` is empty and a path is known when its first directory exists (a
walk cut short knows nothing). Manifests (`memd.core.citations.manifests`) are read from
the working tree either way, at most `MAX_MANIFESTS` of `MAX_TEXT_BYTES` each.

Size: the three gatherers (git, walk, blame) share the resolver, the bounded process runner
and the readers; apart, each would redo them.
"""

from __future__ import annotations

import bisect
import concurrent.futures
import contextlib
import hashlib
import os
import re
import selectors
import shutil
import stat
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memd.core.citations.manifests import is_manifest, targets_of
from memd.core.citations.model import Anchor, CodeFacts, PathFact, Targets, WordFact
from memd.core.citations.path_patterns import (
    IgnoreRule,
    excluded_here,
    glob_regex,
    is_glob,
    is_ignored,
    parse_gitignore,
)
from memd.fs.git_state import git_dir
from memd.paths import MEMORY_DIR

GIT_TIMEOUT = 10.0
"""The longest one git command (but a grep) may run, in seconds."""
GREP_TIMEOUT = 30.0
"""The longest one `git grep` may run, in seconds."""
HISTORY_COMMITS = 2000
"""How many of the latest commits rename detection looks at."""
MAX_GIT_OUTPUT = 64 * 1024 * 1024
"""The most bytes read from one git command; past it the command is stopped."""
GREP_ARGS_BYTES = 256 * 1024
"""The most bytes of file names given to one grep (a command line is bounded)."""
GREP_PROCESSES = max(1, min(4, os.cpu_count() or 1))
"""Greps run side by side over parts of the tree (reading the tree is most of a gather)."""
MAX_PATHSPECS = 20_000
"""The most changed files named to a baseline's grep; more: its whole tree is searched."""
MAX_WORKTREE_FILES = 4096
"""The most edited working-tree files whose stat goes into the tree state (then their count)."""
MAX_FOUND = 3
"""The most paths a key resolves to; a subfolder-relative key matching more is ambiguous."""
MAX_WORD_FILES = 3
"""The most files recorded for one word."""
MAX_BASELINES = 256
"""The most distinct baseline commits looked at in one gather."""
BASELINES_BUDGET = 3.0
"""Seconds spent at most on the baselines' words in one gather (the rest are unverifiable);
only entries citing a word that is gone need it."""
MAX_WALK_FILES = 50_000
MAX_WALK_DIRS = 20_000
MAX_WALK_DEPTH = 64
MAX_WALK_BYTES = 64 * 1024 * 1024
MAX_TEXT_BYTES = 1024 * 1024
"""The largest file read (for words, a manifest or a .gitignore)."""
MAX_MANIFESTS = 200
MANIFEST_RUNNERS = frozenset({"make", "npm", "pnpm", "yarn", "bun", "just", "cargo"})
"""Runners whose commands are judged by manifests; any other runner's name is a word."""
_SKIPPED = frozenset({".git", "node_modules"})
_MEMORY_PREFIX = MEMORY_DIR + "/"
_EXCLUDE_MEMORY = f":(exclude){MEMORY_DIR}"
_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
_GIT_CONFIG = (
    "-c",
    "core.quotePath=false",
    "-c",
    "color.ui=false",
    "-c",
    "grep.fallbackToNoIndex=false",
)


def tree_state(root: str) -> str:
    """Return a fingerprint of the workspace's code: git's HEAD, the commit of the branch it
    names, the index's mtime and size, and the working-tree files that differ from the index
    (`_worktree_part`); "" without git (then the caller re-gathers by age). A few stats, two
    small reads and one `git diff-files` (about 70 ms in a 50,000-file tree)."""
    directory = git_dir(root)
    if directory is None:
        return ""
    head = _read_small(os.path.join(directory, "HEAD")).strip()
    parts = [f"HEAD:{head}"]
    if head.startswith("ref:"):
        ref = head[4:].strip()
        common = _read_small(os.path.join(directory, "commondir")).strip()
        bases = [directory]
        if common:
            bases.append(os.path.normpath(os.path.join(directory, common)))
        for base in bases:
            value = _read_small(os.path.join(base, *ref.split("/"))).strip()
            if value:
                parts.append(f"ref:{value}")
                break
        else:
            for base in bases:
                parts.append(_stat_part("packed", os.path.join(base, "packed-refs")))
    parts.append(_stat_part("index", os.path.join(directory, "index")))
    parts.append(_worktree_part(root))
    return ";".join(parts)


def _worktree_part(root: str) -> str:
    """The tracked files whose working-tree copy differs from the index by git's stat cache
    (`git diff-files`: edited, deleted, touched), each with its size and mtime (at most
    MAX_WORKTREE_FILES of them, then their count): an edit nobody staged still changes the
    fingerprint. A stat of every tracked file, in git."""
    out = _git(root, ["diff-files", "--name-only", "-z", "--relative"], timeout=GIT_TIMEOUT)
    if not out.ok:
        return "worktree:?"
    names = [name for name in out.data.split(b"\0") if name]
    digest = hashlib.blake2b(digest_size=16)
    for name in names[:MAX_WORKTREE_FILES]:
        digest.update(name + b"\0")
        try:
            st = os.lstat(os.path.join(os.fsencode(root), name))
        except OSError:
            digest.update(b"gone\0")
        else:
            digest.update(b"%d:%d\0" % (st.st_size, st.st_mtime_ns))
    return f"worktree:{len(names)}:{digest.hexdigest()}"


def _stat_part(name: str, path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return f"{name}:-"
    return f"{name}:{st.st_mtime_ns}:{st.st_size}"


def _read_small(path: str, limit: int = 4096) -> str:
    """The text of a small regular file (at most `limit` bytes), "" when it cannot be read."""
    data = _read_bytes(path, limit)
    return "" if data is None else data.decode("utf-8", "replace")


def _read_bytes(path: str, limit: int) -> bytes | None:
    """The bytes of the regular file at `path` if it holds at most `limit`, else None; never
    follows a final link, never opens a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


@dataclass
class _Output:
    data: bytes
    ok: bool
    """git exited 0 (or 1, "nothing found", where `allow_one`) within its time and bound."""


def _git(
    root: str,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT,
    allow_one: bool = False,
) -> _Output:
    """Run git in `root` with a timeout and a bounded output; never raises."""
    out = _run(
        root, ["git", *_GIT_CONFIG, *args], stdin=stdin, timeout=timeout, allow_one=allow_one
    )
    return _Output(b"", False) if out is None else out


def _run(
    root: str,
    command: Sequence[str],
    *,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT,
    allow_one: bool = False,
) -> _Output | None:
    """Run `command` in `root` with a timeout and a bounded output; None when it cannot be
    started (not installed); never raises."""
    try:
        proc = subprocess.Popen(
            list(command),
            cwd=root,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **_GIT_ENV},
        )
    except (OSError, ValueError):
        return None
    if stdin is not None and proc.stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    chunks: list[bytes] = []
    size, ok = 0, True
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    ok = False
                    break
                if not selector.select(left):
                    continue
                data = os.read(proc.stdout.fileno(), 1 << 16)
                if not data:
                    break
                size += len(data)
                if size > MAX_GIT_OUTPUT:
                    ok = False
                    break
                chunks.append(data)
        if ok:
            try:
                code = proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                ok = False
            else:
                ok = code == 0 or (allow_one and code == 1)
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5.0)
        proc.stdout.close()
    return _Output(b"".join(chunks), ok)


def _feed(pipe: object, data: bytes) -> None:
    try:
        pipe.write(data)  # type: ignore[attr-defined]
        pipe.close()  # type: ignore[attr-defined]
    except (OSError, ValueError):
        pass


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class _Resolver:
    """Resolves path keys among a set of paths (see the module's rules)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = sorted(set(paths))
        self.present = set(self.paths)
        self._by_name: dict[str, list[str]] | None = None

    def _with_prefix(self, prefix: str, limit: int) -> list[str]:
        paths = self.paths
        out: list[str] = []
        for index in range(bisect.bisect_left(paths, prefix), len(paths)):
            if not paths[index].startswith(prefix) or len(out) >= limit:
                break
            out.append(paths[index])
        return out

    def _names(self) -> dict[str, list[str]]:
        """Each file and directory by its last name (built once, on the first suffix key)."""
        if self._by_name is None:
            names: dict[str, list[str]] = {}
            directories: set[str] = set()
            for path in self.paths:
                parent, _, name = path.rpartition("/")
                names.setdefault(name, []).append(path)
                directories.add(parent)
            for directory in list(directories):
                while "/" in directory:
                    directory = directory.rpartition("/")[0]
                    if directory in directories:
                        break
                    directories.add(directory)
            for directory in directories:
                if directory:
                    names.setdefault(directory.rpartition("/")[2], []).append(directory)
            self._by_name = names
        return self._by_name

    def resolve(self, key: str) -> tuple[tuple[str, ...], bool]:
        """The paths `key` resolves to (at most MAX_FOUND) and whether it names a directory."""
        if not key:
            return (), False
        if is_glob(key):
            regex = glob_regex(key)
            return tuple(p for p in self.paths if regex.match(p))[:MAX_FOUND], False
        if key in self.present:
            return (key,), False
        if self._with_prefix(key + "/", 1):
            return (key,), True
        with_extension = [
            path
            for path in self._with_prefix(key + ".", 50)
            if re.fullmatch(r"[A-Za-z0-9]+", path[len(key) + 1 :])
        ]
        if with_extension:
            return tuple(with_extension[:MAX_FOUND]), False
        name = key.rsplit("/", 1)[-1]
        under = sorted(p for p in self._names().get(name, ()) if p.endswith("/" + key))
        if 0 < len(under) <= MAX_FOUND:
            return tuple(under), any(self._with_prefix(p + "/", 1) for p in under)
        return (), False

    def files_under(self, directory: str) -> list[str]:
        return self._with_prefix(directory + "/", len(self.paths))


@dataclass
class _History:
    """What git's history says about paths gone: each renamed path's newest destination, the
    paths renamed or deleted."""

    renamed: dict[str, str] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)

    def apply(self, records: Sequence[str]) -> None:
        """Apply name-status records (status, path[, path]...), oldest first."""
        i = 0
        while i < len(records):
            status = records[i].lstrip("\n")
            if status.startswith("\x01") or not status:
                i += 1
                continue
            if status[0] in "RC" and i + 2 < len(records):
                old, new = records[i + 1], records[i + 2]
                if status[0] == "R":
                    self.renamed[old] = new
                    self.gone.add(old)
                i += 3
            else:
                if status[0] == "D" and i + 1 < len(records):
                    self.gone.add(records[i + 1])
                i += 2

    def follow(self, path: str, present: set[str]) -> str | None:
        """Where `path` went, through chains of renames, if that exists now."""
        seen = {path}
        while path in self.renamed:
            path = self.renamed[path]
            if path in present:
                return path
            if path in seen:
                return None
            seen.add(path)
        return None


def _history(root: str) -> _History | None:
    """The renames and deletions of the last HISTORY_COMMITS commits, then the staged ones;
    None when git could not say."""
    log = _git(
        root,
        [
            "log",
            "-M",
            "--diff-filter=RD",
            "--name-status",
            "-z",
            "--relative",
            "--no-show-signature",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%x01%H",
            f"--max-count={HISTORY_COMMITS}",
        ],
    )
    staged = _git(
        root,
        ["diff", "--cached", "-M", "--name-status", "-z", "--relative", "--no-ext-diff"],
    )
    history = _History()
    if log.ok:
        commits: list[list[str]] = [[]]
        for token in _decode(log.data).split("\0"):
            if token.lstrip("\n").startswith("\x01"):
                commits.append([])
            elif token:
                commits[-1].append(token)
        for records in reversed(commits):
            history.apply(records)
    if staged.ok:
        history.apply([token for token in _decode(staged.data).split("\0") if token])
    return history if log.ok or staged.ok else None


def _moved_directory(key: str, history: _History, current: _Resolver) -> str | None:
    """The one directory every renamed file under `key` went to, if it exists now."""
    targets = set()
    for old in history.renamed:
        if old.startswith(key + "/"):
            rest = old[len(key) + 1 :]
            new = history.follow(old, current.present)
            if new is None or not new.endswith("/" + rest):
                return None
            targets.add(new[: -len(rest) - 1])
    if len(targets) == 1:
        target = targets.pop()
        return target if current.files_under(target) else None
    return None


def _path_facts_git(root: str, keys: Sequence[str], files: Sequence[str]) -> dict[str, PathFact]:
    current = _Resolver(files)
    facts: dict[str, PathFact] = {}
    unresolved: list[str] = []
    for key in keys:
        found, _ = current.resolve(key)
        on_disk = tuple(p for p in found if os.path.lexists(os.path.join(root, p)))
        if on_disk:
            facts[key] = PathFact(found=on_disk, known=True)
        else:
            unresolved.append(key)
            facts[key] = PathFact(known=bool(found))
    if not unresolved:
        return facts
    history = _history(root)
    if history is not None:
        past = _Resolver(history.gone)
        for key in unresolved:
            fact = _gone_fact(key, history, past, current)
            if fact is not None:
                facts[key] = fact
    # Only a key that would be reported gone needs asking whether git ignores it on purpose,
    # or whether it is there untracked: the others are unverifiable either way.
    gone = [key for key in unresolved if facts[key].known]
    ignored = _ignored_git(root, gone)
    for key in gone:
        if key in ignored:
            facts[key] = PathFact(ignored=True, known=True)
        elif not is_glob(key) and os.path.lexists(os.path.join(root, key)):
            facts[key] = PathFact(found=(key,), known=True)  # untracked, not ignored
    return facts


def _gone_fact(key: str, history: _History, past: _Resolver, current: _Resolver) -> PathFact | None:
    """What history says about a key not found now: known (renamed or deleted), and where it
    went; None when history never held it."""
    was, was_dir = past.resolve(key)
    if not was and not is_glob(key) and past.files_under(key):
        was, was_dir = (key,), True
    if not was:
        return None
    moved_to = None
    if was_dir or past.files_under(was[0]):
        moved_to = _moved_directory(was[0], history, current)
    elif len(was) == 1:
        moved_to = history.follow(was[0], current.present)
    return PathFact(known=True, moved_to=moved_to)


def _ignored_git(root: str, keys: Sequence[str]) -> set[str]:
    """The keys git ignores, as a file or as a directory (one `git check-ignore`)."""
    asked = [k for k in keys if "\0" not in k and "\n" not in k]
    if not asked:
        return set()
    data = "".join(f"{key}\0{key}/\0" for key in asked).encode("utf-8", "surrogateescape")
    out = _git(root, ["check-ignore", "--stdin", "-z"], stdin=data, allow_one=True)
    if not out.ok:
        return set()
    said = {token.rstrip("/") for token in _decode(out.data).split("\0") if token}
    return {key for key in asked if key.rstrip("/") in said}


def _grep_words(
    root: str, words: Sequence[str], revisions: Sequence[str] = (), pathspecs: Sequence[str] = ()
) -> _Output:
    patterns = "".join(word + "\n" for word in words).encode("utf-8", "surrogateescape")
    args = ["grep", "-z", "-o", "-w", "-F", "-I", "--no-color", "--no-textconv", "-f", "-"]
    return _git(
        root,
        [*args, *revisions, "--", *pathspecs, _EXCLUDE_MEMORY],
        stdin=patterns,
        timeout=GREP_TIMEOUT,
        allow_one=True,
    )


def _matches(data: bytes) -> Iterable[tuple[str, str]]:
    """The distinct (path, word) pairs of `grep -z -o` output (`path\\0word\\n`...)."""
    pairs = set(data.split(b"\n"))
    pairs.discard(b"")
    for pair in pairs:
        path, zero, word = pair.partition(b"\0")
        if zero:
            yield _decode(path), _decode(word)


def _grep_files(root: str, words: Sequence[str], files: Sequence[str]) -> _Output | None:
    """`grep -F -w -o` (Aho-Corasick: linear in the text, whatever the number of words) over
    `files`, in batches that fit a command line; None when there is no grep to run."""
    patterns = "".join(word + "\n" for word in words).encode("utf-8", "surrogateescape")
    args = ["grep", "-F", "-w", "-o", "-I", "-H", "--null", "--devices=skip", "-f", "-", "--"]
    batches: list[list[str]] = [[]]
    size = 0
    for path in files:
        if size >= GREP_ARGS_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(path)
        size += len(path) + 1
    if len(batches) < GREP_PROCESSES:  # one process per core even for a small tree
        batches = [list(files[i::GREP_PROCESSES]) for i in range(GREP_PROCESSES)]
    batches = [batch for batch in batches if batch]

    def run(batch: list[str]) -> _Output | None:
        return _run(root, [*args, *batch], stdin=patterns, timeout=GREP_TIMEOUT, allow_one=True)

    with concurrent.futures.ThreadPoolExecutor(GREP_PROCESSES) as pool:
        outputs = list(pool.map(run, batches))
    if any(out is None for out in outputs):
        return None
    return _Output(
        b"".join(out.data for out in outputs if out is not None),
        all(out is not None and out.ok for out in outputs),
    )


def _word_facts_git(
    root: str, words: Sequence[str], files: Sequence[str], skipped: set[str]
) -> dict[str, WordFact]:
    if not words:
        return {}
    out = _grep_files(root, words, _greppable(files, skipped))
    if out is None:
        out = _grep_words(root, words)
    files_of: dict[str, list[str]] = {}
    more: set[str] = set()
    for path, word in _matches(out.data):
        seen = files_of.setdefault(word, [])
        if path not in seen:
            if len(seen) < MAX_WORD_FILES:
                seen.append(path)
            else:
                more.add(word)
    asked = set(words)
    facts = {w: WordFact(tuple(f), w in more) for w, f in files_of.items() if w in asked}
    if out.ok:  # a word grep did not get to is absent: unverifiable
        for word in words:
            facts.setdefault(word, WordFact())
    return facts


def _greppable(files: Sequence[str], skipped: set[str]) -> list[str]:
    """The tracked files grep reads: not `.memory/`, not a link or a submodule, not deleted
    from the working tree (`skipped`)."""
    return [p for p in files if p not in skipped and not p.startswith(_MEMORY_PREFIX)]


def _known_words(
    root: str, missing: Sequence[str], baselines: Iterable[str]
) -> dict[str, frozenset[str]]:
    """For the most used distinct baselines (at most MAX_BASELINES), the `missing` words that
    occurred in the code at that commit ("" is HEAD). A word there then and gone now was
    removed from a file changed since, so only the files that differ between the baseline and
    the working tree are searched (`git diff --name-only`)."""
    counts = Counter(b for b in baselines if re.fullmatch(r"[0-9a-fA-F]{4,64}|", b))
    chosen = [b for b, _ in counts.most_common(MAX_BASELINES)]
    if not chosen:
        return {}
    if not missing:
        return {b: frozenset() for b in chosen}
    uncommitted = _changed(root, ["HEAD"])
    known: dict[str, frozenset[str]] = {}
    deadline = time.monotonic() + BASELINES_BUDGET
    for baseline in chosen:
        if time.monotonic() > deadline:
            break
        revision = baseline or "HEAD"
        changed = uncommitted if not baseline else _changed(root, [baseline, "HEAD"])
        if changed is None or uncommitted is None:
            continue
        paths = sorted((changed | uncommitted) - {""})
        paths = [p for p in paths if not p.startswith(_MEMORY_PREFIX)]
        if not paths:
            known[baseline] = frozenset()
            continue
        pathspecs = [f":(literal){p}" for p in paths] if len(paths) <= MAX_PATHSPECS else []
        out = _grep_words(root, missing, [revision], pathspecs)
        if out.ok:
            found = {word for _, word in _matches(out.data)}
            known[baseline] = frozenset(found & set(missing))
    return known


def _changed(root: str, revisions: Sequence[str]) -> set[str] | None:
    """The paths that differ between `revisions` (one: it and the working tree), both sides
    of a rename; None when git could not say."""
    out = _git(root, ["diff", "--name-only", "--no-renames", "-z", "--relative", *revisions, "--"])
    return {_decode(p) for p in out.data.split(b"\0")} if out.ok else None


def _index_files(data: bytes) -> tuple[list[str], set[str]]:
    """The paths of `git ls-files --stage -z` output, and those that are links or
    submodules (never searched for words)."""
    files: list[str] = []
    skipped: set[str] = set()
    for record in data.split(b"\0"):
        meta, tab, raw = record.partition(b"\t")
        if not tab:
            continue
        path = _decode(raw)
        if not files or files[-1] != path:  # a conflicted path has up to three stages
            files.append(path)
        if meta.startswith((b"120000", b"160000")):
            skipped.add(path)
    return files, skipped


def _targets(root: str, files: Iterable[str]) -> dict[str, Targets]:
    manifests = [path for path in files if is_manifest(path)]
    texts: dict[str, str | None] = {}
    for path in manifests[:MAX_MANIFESTS]:
        data = _read_bytes(os.path.join(root, path), MAX_TEXT_BYTES)
        texts[path] = None if data is None else data.decode("utf-8", "replace")
    return targets_of(texts, complete=len(manifests) <= MAX_MANIFESTS)


def _asked(anchors: Iterable[Anchor]) -> tuple[list[str], list[str]]:
    """The path keys and the words the anchors ask about, each once, sorted."""
    keys: set[str] = set()
    words: set[str] = set()
    for anchor in anchors:
        if anchor.kind == "path":
            if anchor.key:
                keys.add(anchor.key)
        elif anchor.kind == "command":
            if anchor.words and anchor.words[0] not in MANIFEST_RUNNERS:
                words.update(anchor.words[1:])
        else:
            words.update(anchor.words)
    words = {w for w in words if w and "\n" not in w and "\0" not in w and w.strip() == w}
    return sorted(keys), sorted(words)


def gather(root: str, anchors: Iterable[Anchor], baselines: Iterable[str] = ()) -> CodeFacts:
    """Return the facts about `anchors` in the workspace at `root` as it is now (see the
    module's rules); `baselines` are the entries' commits (one per entry: the most used are
    looked at first). Never raises for what git or the file system says."""
    keys, words = _asked(anchors)
    if git_dir(root) is not None:
        listed = _git(root, ["ls-files", "-z", "--stage"])
        deleted = _git(root, ["ls-files", "-z", "--deleted"])
        if listed.ok:
            files, skipped = _index_files(listed.data)
            if deleted.ok:
                skipped.update(_decode(p) for p in deleted.data.split(b"\0") if p)
            else:
                words = []  # what grep would miss is unknown: every word unverifiable
            word_facts = _word_facts_git(root, words, files, skipped)
            missing = [w for w, fact in word_facts.items() if not fact.files]
            return CodeFacts(
                git=True,
                paths=_path_facts_git(root, keys, files),
                words=word_facts,
                targets=_targets(root, files),
                known_words=_known_words(root, missing, baselines) if missing else {},
            )
        walk = _walk(root)
        return CodeFacts(
            git=True,
            problem=_git_failed(),
            paths={
                k: PathFact(found=f.found, ignored=f.ignored)
                for k, f in _paths_walk(root, keys, walk).items()
            },
            words=_words_walk(root, words, walk),
            targets=_targets(root, walk.files),
        )
    walk = _walk(root)
    return CodeFacts(
        git=False,
        paths=_paths_walk(root, keys, walk),
        words=_words_walk(root, words, walk),
        targets=_targets(root, walk.files),
    )


def _git_failed() -> str:
    """What to tell the person when `git ls-files` failed in a git work tree."""
    if shutil.which("git", path=os.environ.get("PATH")) is None:
        return (
            "git is not on the daemon's PATH, so memd could not tell a removed file or symbol "
            "from one that was never here; install git, or restart memd with it on PATH."
        )
    return (
        "git could not read this repository (a corrupt or missing .git?), so memd could not "
        "tell a removed file or symbol from one that was never here; run `git status` there "
        "to see why."
    )


@dataclass
class _Walked:
    files: list[str] = field(default_factory=list)
    ignore: dict[str, tuple[IgnoreRule, ...]] = field(default_factory=dict)
    complete: bool = True


def _walk(root: str) -> _Walked:
    """The files of the workspace that no `.gitignore` excludes, within the bounds."""
    walked = _Walked()
    pending: list[tuple[str, int]] = [("", 0)]
    listed = 0
    while pending:
        directory, depth = pending.pop()
        if listed >= MAX_WALK_DIRS or depth > MAX_WALK_DEPTH:
            walked.complete = False
            continue
        listed += 1
        here = os.path.join(root, directory) if directory else root
        text = _read_bytes(os.path.join(here, ".gitignore"), MAX_TEXT_BYTES)
        if text is not None:
            walked.ignore[directory] = parse_gitignore(text.decode("utf-8", "replace"))
        try:
            with os.scandir(here) as entries:
                children = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in entries)
        except OSError:
            walked.complete = False
            continue
        subdirectories = []
        for name, is_dir in children:
            path = f"{directory}/{name}" if directory else name
            if name in _SKIPPED or excluded_here(walked.ignore, path, is_dir=is_dir):
                continue
            if is_dir:
                subdirectories.append((path, depth + 1))
            elif len(walked.files) >= MAX_WALK_FILES:
                walked.complete = False
                return walked
            else:
                walked.files.append(path)
        pending.extend(reversed(subdirectories))
    return walked


def _paths_walk(root: str, keys: Sequence[str], walk: _Walked) -> dict[str, PathFact]:
    current = _Resolver(walk.files)
    facts: dict[str, PathFact] = {}
    for key in keys:
        found, _ = current.resolve(key)
        ignored = not found and (
            is_ignored(walk.ignore, key) or is_ignored(walk.ignore, key, is_dir=True)
        )
        if not found and not ignored and not is_glob(key):
            found = (key,) if os.path.lexists(os.path.join(root, key)) else ()
        first = key.split("/", 1)[0]
        known = bool(found) or (
            walk.complete
            and "/" in key
            and not is_glob(first)
            and os.path.isdir(os.path.join(root, first))
        )
        facts[key] = PathFact(found=found, ignored=ignored, known=known)
    return facts


_TOKEN = re.compile(rb"[A-Za-z0-9_]+")


def _words_walk(root: str, words: Sequence[str], walk: _Walked) -> dict[str, WordFact]:
    """Where each word occurs in the walked text files (bounded: a word not found in a cut
    short reading is absent, unverifiable)."""
    if not words:
        return {}
    simple = {
        w.encode("utf-8", "surrogateescape") for w in words if re.fullmatch(r"\w+", w, re.ASCII)
    }
    others = [w.encode("utf-8", "surrogateescape") for w in words if w.encode() not in simple]
    other_regex = (
        re.compile(
            rb"(?<![A-Za-z0-9_])(?:"
            + b"|".join(re.escape(w) for w in sorted(others, key=len, reverse=True))
            + rb")(?![A-Za-z0-9_])"
        )
        if others
        else None
    )
    files: dict[str, list[str]] = {}
    more: set[str] = set()
    budget = MAX_WALK_BYTES
    complete = walk.complete
    for path in walk.files:
        if path.startswith(_MEMORY_PREFIX):
            continue
        data = _read_bytes(os.path.join(root, path), MAX_TEXT_BYTES)
        if data is None or b"\0" in data[:8192]:
            continue
        budget -= len(data)
        if budget < 0:
            complete = False
            break
        hits = simple.intersection(_TOKEN.findall(data))
        if other_regex is not None:
            hits.update(other_regex.findall(data))
        for hit in hits:
            word = hit.decode("utf-8", "surrogateescape")
            seen = files.setdefault(word, [])
            if len(seen) < MAX_WORD_FILES:
                seen.append(path)
            else:
                more.add(word)
    facts = {w: WordFact(tuple(f), w in more) for w, f in files.items()}
    if complete:
        for word in words:
            facts.setdefault(word, WordFact())
    return facts


def baselines(root: str, files: Sequence[str]) -> dict[tuple[str, int], str]:
    """Return, for each line of the memory files `files` (relative to `root`), the commit that
    wrote it: `git blame --porcelain`, "" for a line not committed yet (a file git does not
    track: every line). {} without git; a file git cannot blame in time is left out."""
    if git_dir(root) is None:
        return {}
    out: dict[tuple[str, int], str] = {}
    for name in files:
        blamed = _git(root, ["blame", "--porcelain", "--", name])
        if blamed.ok:
            for match in re.finditer(rb"(?m)^([0-9a-f]{40,64}) \d+ (\d+)", blamed.data):
                commit = match.group(1).decode("ascii")
                out[(name, int(match.group(2)))] = "" if set(commit) == {"0"} else commit
            continue
        data = _read_bytes(os.path.join(root, name), MAX_TEXT_BYTES)
        tracked = _git(root, ["ls-files", "-z", "--", name])
        if data is not None and tracked.ok and not tracked.data:  # untracked: uncommitted
            for number in range(1, len(data.splitlines()) + 1):
                out[(name, number)] = ""
    return out
