"""A workspace's memories checked against the code they cite (`memd.core.citations`): the
verdicts `check` returns and `query` and `context` show beside each entry.

Rules:
- One owner: the workspace (`Workspace.code`). Nothing here ever writes a file.
- The verdicts are cached by (entry content, baseline) for one tree state
  (`code_facts.tree_state`): the cache holds only the current entries' verdicts (bounded by
  the number of entries), and a new tree state drops them all.
- A gather (`code_facts.gather`, with `baselines` and the pure `check_entry`) runs in a worker
  thread, one at a time per workspace, bounded by `GATHER_TIMEOUT` seconds; a gather at the
  same tree state asks only about the entries not in the cache (incremental). A gather that
  ran over its time (or outlived its workspace's `stop`) is left to finish in its thread, and
  no new one starts for that root until it has (`ServerBusy` meanwhile): abandoned threads
  never pile up.
- `check` (`current`) waits for an up-to-date result: it gathers again when the tree state
  changed (a commit, a checkout, the index, an edited tracked file) or the last full gather is
  older than `CHECK_FRESH_SECONDS` (`NO_GIT_CHECK_FRESH_SECONDS` without git, where nothing
  cheaper says the code changed), else only the entries not checked yet. Before anything is
  archived for its verdict (`cleanup --apply`), `current(full=True)` gathers everything again:
  the tree state does not see a file created untracked.
- `query` and `context` never wait (`verdict`, `wake`): they read the cache (an entry not in
  it has no status) and, when it may be out of date (the tree state not looked at within
  `LOOK_SECONDS`, or an entry not checked yet), wake `run`, the workspace's background task,
  which refreshes it. A store's acknowledgement never waits for a check.
- While the workspace is read (a `query` or `context` within `IN_USE_SECONDS`), `run` also
  looks at the tree state every `POLL_SECONDS` (or `POLL_COST_FACTOR` times its last look's
  cost, if more), so the next read after a commit, a rename or an edit finds its verdicts
  already refreshed; an idle workspace is never looked at.
- Without git (`tree_state` ""), a background refresh gathers everything again once the last
  gather is `NO_GIT_REFRESH_SECONDS` old, since nothing cheaper says the code changed; sooner,
  it checks only entries not checked yet.
- An entry citing nothing (status none) keeps its verdict across tree states: only entries with
  citations are gathered again.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

import anyio

from memd.core.citations import anchors as citation_anchors, verdicts
from memd.core.citations.model import Anchor, EntryCheck
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.fs import code_facts, git_state
from memd.paths import MEMORY_DIR
from memd_client.errors import ServerBusy

LOOK_SECONDS = 2.0
"""How long a look at the tree state serves `query` and `context` before they ask again."""
CHECK_FRESH_SECONDS = 60.0
"""How old a full gather may be when `check` answers from it, the tree state unchanged (what
the tree state does not see: a file created untracked)."""
NO_GIT_CHECK_FRESH_SECONDS = 3.0
"""The same without git, where there is no tree state."""
NO_GIT_REFRESH_SECONDS = 10.0
"""Without git (no tree state), how old the last gather may be before a read's wake takes a new
one in the background (a walk of the tree; `check` takes one after
`NO_GIT_CHECK_FRESH_SECONDS`)."""
IN_USE_SECONDS = 600.0
"""How long after a read the background keeps looking at the tree state by itself."""
POLL_SECONDS = 5.0
"""How often the background looks at the tree state of a workspace in use."""
POLL_COST_FACTOR = 20.0
"""A look is spaced at least this many times its own cost apart (a huge tree's `git
diff-files`), so looking costs at most 1/POLL_COST_FACTOR of a core."""
GATHER_TIMEOUT = 30.0
"""The longest `check` waits for a gather (a huge repository on a slow disk)."""

Entries = Callable[[], Sequence[tuple[Category, Entry]]]
"""The workspace's memory entries now (every category's snapshot)."""


class Verdict(NamedTuple):
    """One entry's check, what is wrong with it in one sentence (`note`, "" unless stale) and
    the content `--fix` would store (None: nothing moved)."""

    check: EntryCheck
    note: str
    fix: str | None


Key = tuple[str, str]
"""(entry content, baseline): what a verdict depends on, at one tree state."""


class Checked(NamedTuple):
    """The cache after a gather: the tree state it was taken at, each line's baseline, the
    verdicts, whether the workspace is in git, when the last full gather was (monotonic and
    wall clock), the entries it checked, and what went wrong gathering (`CodeFacts.problem`)."""

    state: str
    baselines: dict[tuple[str, int], str]
    verdicts: dict[Key, Verdict]
    git: bool
    at: float
    wall: float
    entries: tuple[tuple[Category, Entry], ...] = ()
    problem: str = ""

    def verdict(self, category: Category, entry: Entry) -> Verdict | None:
        """One entry's verdict (None: not checked by this gather)."""
        return self.verdicts.get(_key(self.baselines, category, entry))


NOTHING = Checked("\0", {}, {}, False, float("-inf"), 0.0)
"""Before the first gather: nothing checked, a tree state no tree has."""


def memory_path(category: Category) -> str:
    """A category file's path relative to the workspace, as `baselines` takes it."""
    return f"{MEMORY_DIR}/{category.file}"


def _key(baselines: dict[tuple[str, int], str], category: Category, entry: Entry) -> Key:
    """What an entry's verdict is cached under, given its file's lines' baselines."""
    return (entry.content, baselines.get((memory_path(category), entry.line), ""))


def gather_verdicts(
    root: str,
    entries: Sequence[tuple[Category, Entry]],
    previous: Checked,
    *,
    full: bool,
) -> Checked:
    """Check `entries` against the workspace at `root` as it is now (blocking): all of them when
    `full` or the tree state moved on since `previous`, else only those not in its cache. The
    result's cache holds the verdicts of `entries` only."""
    state = code_facts.tree_state(root)
    same = not full and state == previous.state
    if same:
        held = [_key(previous.baselines, category, entry) for category, entry in entries]
        if all(key in previous.verdicts for key in held):  # nothing new: no blame, no gather
            kept_only = {key: previous.verdicts[key] for key in held}
            return previous._replace(verdicts=kept_only, entries=tuple(entries))
    files = sorted({memory_path(category) for category, _ in entries})
    lines = code_facts.baselines(root, files)
    keys = [_key(lines, category, entry) for category, entry in entries]
    # An entry citing nothing is "none" whatever the code says: kept across tree states.
    kept = (
        previous.verdicts
        if same
        else {k: v for k, v in previous.verdicts.items() if not v.check.anchors}
    )
    wanted = dict.fromkeys(key for key in keys if key not in kept)  # in entry order
    # An entry's citations depend on its text alone: those of a verdict already held are kept.
    cited = {
        key[0]: tuple(c.anchor for c in v.check.anchors) for key, v in previous.verdicts.items()
    }
    anchored = {key: cited.get(key[0]) or citation_anchors.anchors_of(key[0]) for key in wanted}
    every: list[Anchor] = [anchor for found in anchored.values() for anchor in found]
    git = previous.git if same else False
    problem = previous.problem if same else ""
    new: dict[Key, Verdict] = {}
    if anchored:
        facts = code_facts.gather(root, every, sorted({key[1] for key in anchored}))
        git, problem = facts.git, facts.problem
        for key, found in anchored.items():
            check = verdicts.check_entry(found, facts, key[1])
            new[key] = Verdict(
                check, verdicts.stale_note(check), verdicts.fixed_content(key[0], check)
            )
    elif not same:
        git = git_state.git_dir(root) is not None
    cache = {key: kept[key] if key in kept else new[key] for key in keys}
    at, wall = (previous.at, previous.wall) if same else (time.monotonic(), time.time())
    return Checked(state, lines, cache, git, at, wall, tuple(entries), problem)


_running: Counter[str] = Counter()
"""The roots with a gather running in a worker thread now (abandoned ones included)."""
_running_lock = threading.Lock()


def _gather_counted(
    root: str, entries: Sequence[tuple[Category, Entry]], previous: Checked, full: bool
) -> Checked:
    """`gather_verdicts`, counted in `_running` while it runs (in its worker thread)."""
    with _running_lock:
        _running[root] += 1
    try:
        return gather_verdicts(root, entries, previous, full=full)
    finally:
        with _running_lock:
            _running[root] -= 1
            if not _running[root]:
                del _running[root]


def gathering(root: str) -> bool:
    """Whether a gather of `root` runs in a worker thread now."""
    with _running_lock:
        return root in _running


class CodeCheck:
    """The citation check of the workspace at `root` (see the module rules); `entries` gives
    its memory entries now. `gathers` counts the gathers taken."""

    def __init__(self, root: str, entries: Entries) -> None:
        self.root = root
        self.entries = entries
        self.last = NOTHING
        self.gathers = 0
        self._looked_at = float("-inf")
        self._read_at = float("-inf")
        self._look_cost = 0.0
        self._lock = anyio.Lock()
        self._wanted = anyio.Event()
        self._scope = anyio.CancelScope()

    def verdict(self, category: Category, entry: Entry) -> Verdict | None:
        """The cached verdict of one entry (None: not checked yet; `wake` then refreshes).
        Never waits, never touches a file."""
        return self.last.verdict(category, entry)

    def wake(self, *, unchecked: bool = False) -> None:
        """Ask `run` for a refresh when the cache may be out of date: an entry was not in it
        (`unchecked`), or the tree state was not looked at within `LOOK_SECONDS`."""
        now = time.monotonic()
        self._read_at = now
        if unchecked or now - self._looked_at >= LOOK_SECONDS:
            self._wanted.set()

    async def current(self, *, full: bool = False) -> Checked:
        """An up-to-date check of every entry (waits for a gather when needed); `full`: gather
        everything again whatever the cache holds.

        Raises:
            ServerBusy: the gather took longer than `GATHER_TIMEOUT` seconds.
        """
        fresh = CHECK_FRESH_SECONDS if self.last.state else NO_GIT_CHECK_FRESH_SECONDS
        full = full or time.monotonic() - self.last.at >= fresh
        return await self._gather(full=full)

    async def run(self) -> None:
        """Refresh the cache each time `wake` asks, and every poll while the workspace is in
        use, one gather at a time, until `stop`."""
        with self._scope:
            while True:
                with anyio.move_on_after(self._poll_delay()):
                    await self._wanted.wait()
                self._wanted = anyio.Event()
                if time.monotonic() - self._read_at > IN_USE_SECONDS:
                    continue  # a poll of a workspace nobody reads any more
                age = time.monotonic() - self.last.at
                full = self.last.state == "" and age >= NO_GIT_REFRESH_SECONDS
                # On a timeout the next wake tries again; reads meanwhile serve the last cache.
                with contextlib.suppress(ServerBusy):
                    await self._gather(full=full)

    def _poll_delay(self) -> float | None:
        """Seconds until the next look by itself (None: not in use, wait for a wake)."""
        if time.monotonic() - self._read_at > IN_USE_SECONDS:
            return None
        return max(POLL_SECONDS, POLL_COST_FACTOR * self._look_cost)

    def stop(self) -> None:
        """End `run` (a gather in progress is left to finish in its worker thread, unused)."""
        self._scope.cancel()

    async def _gather(self, *, full: bool) -> Checked:
        """Gather in a worker thread (one at a time) and make the result the cache."""
        async with self._lock:
            if gathering(self.root):  # only an abandoned one can run now: never a second
                raise ServerBusy(
                    "An earlier check of this workspace's code is still running after "
                    f"{GATHER_TIMEOUT:.0f} s; try again in a minute."
                )
            entries = list(self.entries())
            previous = self.last
            started = time.monotonic()
            try:
                with anyio.fail_after(GATHER_TIMEOUT):
                    checked = await anyio.to_thread.run_sync(
                        functools.partial(_gather_counted, self.root, entries, previous, full),
                        abandon_on_cancel=True,
                    )
            except TimeoutError:
                raise ServerBusy(
                    f"Checking the memories against the code took over {GATHER_TIMEOUT:.0f} s; "
                    "try again (a first check of a huge repository warms its caches)."
                ) from None
            self.last = checked
            self._looked_at = time.monotonic()
            self._look_cost = self._looked_at - started
            self.gathers += 1
            return checked


def checked_at(checked: Checked) -> str:
    """When the code was looked at, ISO 8601 (UTC)."""
    return datetime.datetime.fromtimestamp(checked.wall, datetime.UTC).isoformat()
