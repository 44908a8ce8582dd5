"""The loaded workspaces: one per real path, found through a bounded cache of the spellings
clients use, loaded on first use (side by side, a request for a loading one waits for it) and
unloaded after `idle_unload` seconds with nothing using them (a request during an unload waits
for it, then loads the workspace again: no request ever gets a closed workspace).

Rule: the registry owns the workspaces' lifetimes; what a workspace does is `workspace.py`.
A workspace whose categories changed (its memd.toml, or the config's on SIGHUP) is unloaded and
loaded afresh (`memd.fs.project_categories`); its subscribers move to the new load, each
told to catch up (`resync`).

Size: the workspaces' lifetimes (load, reload, replace, idle unload) and resolving the paths
clients give (`resolve_root`).
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus

from memd.core.format.categories import BUILTIN
from memd.fs import project_categories, real_path
from memd.fs.real_path import Unresolvable, Walk
from memd.server.watch.watcher import WatchHub
from memd.server.workspaces.actor import Handover
from memd.server.workspaces.spellings import SpellingCache
from memd.server.workspaces.workspace import DEFAULT_LIMITS, Workspace, WorkspaceSettings
from memd_client.errors import InvalidParams, ShuttingDown, WorkspaceNotFound

logger = logging.getLogger(__name__)


HANDED_ROOTS = 256
"""The most unloaded workspaces whose acknowledged entries are kept for their next load (see
`core.writes.first_use`)."""

MAX_IDLE_CHECK = 30.0
"""The longest wait between two looks for idle workspaces, in seconds."""

_leased: contextvars.ContextVar[list[Workspace] | None] = contextvars.ContextVar(
    "memd_leased", default=None
)


class Registry:
    """The loaded workspaces, keyed by real path; loads new ones into `services`, and unloads
    idle ones (see the module docstring).

    The registry's own services (the daemon's `WatchHub` and the idle check) start with the
    first load and stop at `close`.
    """

    def __init__(
        self,
        services: TaskGroup,
        *,
        clock: Callable[[], float],
        limits: WorkspaceSettings = DEFAULT_LIMITS,
    ) -> None:
        self._services = services
        self._clock = clock
        self.limits = limits
        self.watches = WatchHub()
        self._workspaces: dict[str, Workspace] = {}
        self._spellings: SpellingCache[Workspace] = SpellingCache()
        self._loading: dict[str, tuple[Workspace, anyio.Event]] = {}
        self._unloading: dict[str, anyio.Event] = {}
        self._background: anyio.Event | None = None
        self._background_scope = anyio.CancelScope()
        self._unloads: TaskGroup | None = None  # the background task group, where unloads run
        self.resolving = anyio.CapacityLimiter(RESOLVERS)
        """What every workspace path resolution runs under (see RESOLVERS)."""
        # What unloaded workspaces acknowledged, for their next load (bounded: HANDED_ROOTS).
        self._handed: collections.OrderedDict[str, dict[str, Handover]] = collections.OrderedDict()
        # Workspaces unloaded for a reload, by root, whose subscribers the next load takes over
        # (bounded: HANDED_ROOTS).
        self._reloaded: collections.OrderedDict[str, Workspace] = collections.OrderedDict()
        self._limits_changed = anyio.Event()
        self.unloaded = 0
        """How many times a workspace was unloaded for being idle."""
        self.idle_checks = 0
        """How many times the registry looked for idle workspaces."""
        self.closed = False

    def set_limits(self, limits: WorkspaceSettings) -> None:
        """Apply `limits` to every write and load from now on, in every workspace (loading
        ones too)."""
        recheck = not BUILTIN.with_custom(limits.categories).same_as(
            BUILTIN.with_custom(self.limits.categories)
        )
        self.limits = limits
        for workspace in [*self._workspaces.values(), *(w for w, _ in self._loading.values())]:
            workspace.apply(limits)
            workspace.categories_stale |= recheck
        self._limits_changed.set()
        self._limits_changed = anyio.Event()

    @property
    def roots(self) -> list[str]:
        """The loaded workspace roots, sorted."""
        return sorted(self._workspaces)

    def conflicts(self) -> list[str]:
        """The memory files of loaded workspaces that hold git conflict markers, sorted."""
        return sorted(
            actor.path
            for workspace in self._workspaces.values()
            for actor in workspace.actors.values()
            if actor.snapshot.conflict is not None
        )

    @contextlib.contextmanager
    def leases(self) -> Iterator[None]:
        """Hold every workspace that `get` returns within this block (one request's): none of
        them unloads before the block ends.

        Rule: the list of held workspaces is emptied when the block ends. Every copy of the
        context made within the block holds that list (asyncio's timers, anyio's worker thread
        calls and tasks' done callbacks copy it), and some copies outlive the request: they
        must not keep its workspaces alive once unloaded.
        """
        held: list[Workspace] = []
        token = _leased.set(held)
        try:
            yield
        finally:
            _leased.reset(token)
            now = anyio.current_time()
            for workspace in held:
                workspace.in_use -= 1
                workspace.last_used = now
            held.clear()

    async def get(self, path: str) -> Workspace:
        """Return the workspace at `path`, loading it on first use (held until the end of the
        enclosing `leases` block, if any).

        Raises:
            InvalidParams: `path` is not absolute.
            WorkspaceNotFound: `path` is not an existing directory.
            ShuttingDown: the daemon is stopping.
        """
        if self.closed:
            raise ShuttingDown("memd is shutting down; retry once it is back.")
        known = self._spellings.get(path)
        if known is not None and (known.replaced or known.root_is_replaced()):
            self._forget_replaced(known)  # its directory is another one now: load that
            known = None
        # A request that holds it keeps it open (see `_reload`): asked before and after the read.
        if known is not None and not known.in_use and await self._categories_changed(known):
            self._reload(known)
            known = None
        if known is None:
            check_spelling(path)
            root = await anyio.to_thread.run_sync(resolve_root, path, limiter=self.resolving)
            known = self._workspaces.get(root)
            if known is None:
                known = await self._load(root)
            self._spellings.put(path, known)
        # No await from the lookup to here: the workspace is loaded, and now held.
        held = _leased.get()
        if held is not None:
            held.append(known)
            known.in_use += 1
        known.last_used = anyio.current_time()
        return known

    async def _categories_changed(self, workspace: Workspace) -> bool:
        """Return True if `workspace`'s categories are no longer what it was loaded with (see
        `memd.fs.project_categories`): one `lstat` of its memd.toml, and a read only when that
        changed."""
        fingerprint = project_categories.project_config_fingerprint(workspace.root)
        if fingerprint == workspace.category_set.fingerprint and not workspace.categories_stale:
            return False
        found = await anyio.to_thread.run_sync(
            project_categories.categories_of, workspace.root, self.limits.categories
        )
        if found.categories.same_as(workspace.categories):
            workspace.categories_stale = False
            workspace.category_set = found._replace(categories=workspace.categories)
            return False
        return True  # still stale (or a new fingerprint) until the reload: a deferred one retries

    def _reload(self, workspace: Workspace) -> None:
        """Unload `workspace`, whose categories changed, so the next request loads it afresh
        (what it acknowledged is handed over).

        Rule: only a workspace no request holds (`in_use` 0) is reloaded; while one does, it
        keeps serving with its old categories and the first request after reloads it. Closing
        it under a request would refuse that request's writes as if memd were stopping, and
        lose what it records in the usage history (an outcome) after the history's last save."""
        self._spellings.forget(workspace)
        if workspace.in_use:
            return
        if self._workspaces.get(workspace.root) is workspace and self._unloads is not None:
            logger.info("the categories of %s changed; loading it afresh", workspace.root)
            self._reloaded[workspace.root] = workspace
            while len(self._reloaded) > HANDED_ROOTS:
                self._reloaded.popitem(last=False)
            self._unload(workspace, self._unloads)

    def _forget_replaced(self, workspace: Workspace) -> None:
        """Stop serving `workspace`, whose root was replaced (another directory, or a link):
        every spelling of it is forgotten and it is unloaded, so the path is resolved and
        loaded afresh. Its queued writes are refused by their own root check."""
        self._spellings.forget(workspace)
        if self._workspaces.get(workspace.root) is workspace and self._unloads is not None:
            logger.warning("workspace %s was replaced on disk; loading it afresh", workspace.root)
            self._unload(workspace, self._unloads)

    async def _load(self, root: str) -> Workspace:
        """Load the workspace at `root` once; workspaces load side by side, and a request for
        one that is loading waits for it (or loads it, if that load failed), and a request for
        one that is unloading waits for the unload, then loads it again."""
        await self._start_background()
        while (workspace := self._workspaces.get(root)) is None:
            if self.closed:
                raise ShuttingDown("memd is shutting down; retry once it is back.")
            if root in self._unloading:
                await self._unloading[root].wait()
                continue
            if root in self._loading:
                await self._loading[root][1].wait()
                continue
            found = await anyio.to_thread.run_sync(
                project_categories.categories_of, root, self.limits.categories
            )
            if root in self._workspaces or root in self._loading or root in self._unloading:
                continue  # another request began loading it meanwhile
            workspace = Workspace(
                root,
                clock=self._clock,
                watches=self.watches,
                handed=self._handed.pop(root, None),
                categories=found,
            )
            workspace.apply(self.limits)
            loaded = anyio.Event()
            self._loading[root] = (workspace, loaded)
            try:
                with _outside_lease():
                    await self._services.start(workspace.run)
                self._workspaces[root] = workspace
                logger.info("loaded workspace %s", root)
                if (earlier := self._reloaded.pop(root, None)) is not None:
                    workspace.take_subscribers(earlier)
            finally:
                del self._loading[root]
                loaded.set()
        return workspace

    async def _start_background(self) -> None:
        if self._background is None:
            self._background = anyio.Event()
            try:
                with _outside_lease():
                    await self._services.start(self._run_background)
            finally:
                self._background.set()
        else:
            await self._background.wait()
        if self.watches.mode == "starting":
            raise ShuttingDown("memd is shutting down; retry once it is back.")

    async def _run_background(
        self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        with self._background_scope:
            async with anyio.create_task_group() as tg:
                await tg.start(self.watches.run)
                self._unloads = tg
                tg.start_soon(self._unload_idle, tg)
                task_status.started()

    async def _unload_idle(self, unloads: TaskGroup) -> None:
        """Unload every workspace idle for `limits.idle_unload` seconds, checking every quarter
        of that (at most every MAX_IDLE_CHECK seconds)."""
        while True:
            limit = self.limits.idle_unload
            changed = self._limits_changed
            self.idle_checks += 1
            if limit > 0:
                self._unload_idle_now(limit, unloads)
            with anyio.move_on_after(min(limit / 4, MAX_IDLE_CHECK) if limit > 0 else None):
                await changed.wait()

    def _unload_idle_now(self, limit: float, unloads: TaskGroup) -> None:
        """Unload every workspace idle for `limit` seconds now (a call of its own: a loop
        variable in `_unload_idle` would keep the last workspace looked at alive while that
        loop waits, after its unload too)."""
        now = anyio.current_time()
        for workspace in list(self._workspaces.values()):
            if workspace.idle_for(now) >= limit:
                self._unload(workspace, unloads)

    def _unload(self, workspace: Workspace, unloads: TaskGroup) -> None:
        """Take `workspace` out of the registry at once (so no request can get it) and close
        it; `_load` waits for the unload to finish before loading its root again."""
        root = workspace.root
        del self._workspaces[root]
        self._spellings.forget(workspace)
        done = anyio.Event()
        self._unloading[root] = done
        workspace.close()
        unloads.start_soon(self._finish_unload, workspace, done)

    async def _finish_unload(self, workspace: Workspace, done: anyio.Event) -> None:
        try:
            # Bounded by the actors' own limits: a queued write waits at most its lock timeout.
            await workspace.stopped.wait()
            if not workspace.replaced and (handed := workspace.handovers()):
                self._handed[workspace.root] = handed
                while len(self._handed) > HANDED_ROOTS:
                    self._handed.popitem(last=False)
            self.unloaded += 1
            logger.info("unloaded idle workspace %s", workspace.root)
        finally:
            del self._unloading[workspace.root]
            done.set()

    def close(self) -> None:
        """Stop every workspace taking writes; queued writes still finish."""
        self.closed = True
        for workspace in self._workspaces.values():
            workspace.close()
        self._background_scope.cancel()


SYSTEM_TREES = ("/proc", "/sys", "/dev")
"""Kernel file systems: never a workspace, whatever a client asks."""


PATH_MAX = 4096
"""The longest workspace path accepted, in bytes (Linux's PATH_MAX): a longer one is refused
before it is resolved."""

RESOLVERS = 4
"""Worker threads that resolve workspace paths at once (`Registry.resolving`): resolving (a
`stat` a component, linear in the path's length and bounded: see `memd.fs.real_path`) never
takes the whole pool that file reads and writes share."""


def check_spelling(path: str) -> None:
    """Refuse a workspace path too long to be one, before any work is spent on it.

    Raises:
        InvalidParams: `path` is longer than PATH_MAX bytes.
    """
    check_path_length(path, "workspace path", "pass the project root's real path")


def check_path_length(path: str, what: str, advice: str) -> None:
    """Refuse a path longer than PATH_MAX bytes: no file has one, and resolving it would cost
    time growing with the square of its length.

    Raises:
        InvalidParams: `path` is too long, naming `what` it is and `advice` on what to pass.
    """
    size = len(path.encode("utf-8", "surrogatepass"))
    if size > PATH_MAX:
        raise InvalidParams(
            f"{what} is {size:,} bytes long, over the {PATH_MAX:,}-byte limit (PATH_MAX); {advice}."
        )


def resolve_root(path: str, walk: Walk[Any] | None = None) -> str:
    """Return the real path of workspace `path`, in time linear in its length
    (`memd.fs.real_path`, through `walk` if given).

    Raises:
        InvalidParams: `path` is not absolute, holds a control character, goes through more
            than 40 symbolic links (a loop) or more than 4,096 components, or resolves into
            /proc, /sys or /dev.
        WorkspaceNotFound: `path` is not an existing directory.
    """
    if not os.path.isabs(path):
        raise InvalidParams(
            f"workspace must be an absolute path, got {_shown(path)}; pass the project root's "
            "full path."
        )
    if any(ord(character) < 32 or character == "\x7f" for character in path):
        raise InvalidParams(
            f"workspace {_shown(path)} holds a control character (NUL, newline...); pass the "
            "project root's real path."
        )
    try:
        resolved = real_path.resolve(path, walk, identities=False)
    except Unresolvable as error:
        raise InvalidParams(
            f"workspace {_shown(path)} cannot be resolved: {error}; pass the project root's "
            "real path."
        ) from None
    given = os.path.normpath(path)  # /proc/self/cwd resolves to a real directory: check both
    system = next(
        (
            tree
            for tree in SYSTEM_TREES
            for checked in (given, resolved.path)
            if (checked + "/").startswith(tree + "/")
        ),
        None,
    )
    if system is not None:
        raise InvalidParams(
            f"workspace {_shown(path)} is under {system}, a kernel file system, not a project; "
            "pass a project root."
        )
    if not resolved.exists:
        raise WorkspaceNotFound(
            f"Workspace {_shown(path, quoted=False)} is not an existing directory; pass a "
            "project root that exists."
        )
    return resolved.path


SHOWN_CHARS = 120
"""The most characters of a workspace path an error message quotes."""


def _shown(path: str, *, quoted: bool = True) -> str:
    """`path` for an error message: whole when short, else its start and its length."""
    start = path[:SHOWN_CHARS]
    text = repr(start) if quoted else start
    return text if len(path) <= SHOWN_CHARS else f"{text}... ({len(path):,} characters)"


@contextlib.contextmanager
def _outside_lease() -> Iterator[None]:
    """Start the tasks of this block outside the current request's lease.

    Rule: a task that outlives the request starts outside its lease. It keeps copies of the
    context it was started from for its whole life (its own, and the one anyio made for its
    done callback before the task's first step: a `_leased.set(None)` inside the task comes
    too late for that one), and must neither hold the request's list of workspaces nor add to
    it with a `get` of its own after the request ended.
    """
    token = _leased.set(None)
    try:
        yield
    finally:
        _leased.reset(token)
