"""Workspaces: one per project root, each with an actor per category, a watcher, one archive
and a feed of changes for subscribers.

Rules:
- A workspace is identified by the real path of its root, so two spellings of one directory
  (symlinks, `..`) share one set of actors and can never race each other's writes.
- A workspace is loaded on first use; its actors and its watcher run in the daemon's service
  task group. Its watcher registers with the daemon's one `WatchHub` (one inotify instance for
  every workspace, see `memd.server.watch.watcher`).
- Idle unloading: a workspace with no request in flight (a lease, see `Registry.leases`), no
  subscriber and no write under way for `idle_unload` seconds (0: never) is closed: its actors
  drain their queues and stop, its watches go, its usage history is saved and every spelling of
  its path is forgotten. A request for it while it unloads waits for the unload to finish and
  then loads it again; no request ever gets a closed workspace.
- Every write to a file in `.memory/` holds the workspace's one write lock, `lock` (a
  `write_lock.WorkspaceLock`: memd's in-process mutex and HackLM's `.memory/.lock`, no write
  while git works, giving way to HackLM; its rules are there). The actors commit through it; the
  archive is only appended under it. The workspace keeps what is prepared under it
  (`prepare_under_lock`, below).
- memd's own temp files (and stale locks renamed aside) left by a crash are removed under the
  write lock, when the workspace loads (if `.memory/` holds debris, a `.lock` or lacks a file:
  `lock.prepare_now`) and before its first write; they are never read as data.
- A `.memory` that is a symbolic link is never followed: loading, reading, sweeping and locking
  create, rename and delete nothing through it, and writes are refused (1004).
- Missing category files are created (with their header, never over a file that appeared)
  under the write lock when a workspace whose `.memory/` exists loads, or at its first write if
  it has none, and no store writes into them for FIRST_USE_SETTLE seconds: HackLM creates
  missing files with an unlocked check-then-write, which would otherwise overwrite a file memd
  had just created with an acknowledged entry; this way it usually overwrites a bare header.
  (If HackLM's header still lands over acknowledged entries, however late, they are stored
  again: see `core.writes.first_use`.)
- The root is the directory that was loaded: its identity (device and inode, no link followed)
  is noted at load and checked under the lock before every write. A root replaced meanwhile (by
  another directory, or by a link, perhaps to the user-wide memory) gets nothing written
  through it: the write is refused (1006, retry), `replaced` is set, and the registry loads the
  path afresh on the next request (refused there if it now names the user-wide memory).
- Outside changes are read once git is done (`_external_change`): a checkout, merge, rebase,
  stash or reset that rewrites several files is seen as one change a file, each `changed`
  saying `git`.
- Subscribers get each change as a `changed` notification, built and encoded once per change.
- Its memories' citations are checked in the background (`code`, `code_check.CodeCheck`), which
  runs in its task group and stops when it closes.

Size: one workspace: its actors, what is prepared under its write lock (the root's identity,
the sweep, the first-use files), the reading of outside changes and its feeds.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple

import anyio
from anyio.abc import TaskStatus

from memd.config import DEFAULT_CHAT_MAX_AGE_DAYS, DEFAULT_IDLE_UNLOAD
from memd.core.format.archive import ARCHIVE_FILE, ARCHIVE_HEADER, ArchivedEntry, archive_line
from memd.core.format.categories import HACKLM_CATEGORIES, Category
from memd.core.format.limits import MAX_ARCHIVE_BYTES, MAX_ENTRY_CHARS, MAX_FILE_BYTES
from memd.core.format.mdformat import Entry
from memd.core.provenance import record
from memd.core.review.policy import ReviewMode
from memd.core.search.decay import DEFAULT_HALF_LIFE_DAYS
from memd.core.writes.consolidation import DEFAULT_MAX_AGE_DAYS
from memd.fs import git_state, project_categories, storage
from memd.fs.lock_file import (
    DEFAULT_TIMEOUT,
    LOCK_FILE,
)
from memd.paths import MEMORY_DIR
from memd.server.rpc.session import Session, notification_frame
from memd.server.rpc.wire import entry_info
from memd.server.watch.watcher import WatchHub, WorkspaceWatcher
from memd.server.workspaces.actor import CategoryActor, Handover, Snapshot
from memd.server.workspaces.chat_index import WorkspaceChats
from memd.server.workspaces.code_check import CodeCheck
from memd.server.workspaces.inbox_file import InboxFile
from memd.server.workspaces.provenance_store import ProvenanceStore
from memd.server.workspaces.source_index import WorkspaceSources
from memd.server.workspaces.usage_store import UsageStore
from memd.server.workspaces.write_lock import WorkspaceLock
from memd_client import protocol as p
from memd_client.errors import (
    CategoryNotFound,
    RpcError,
    WorkspaceNotFound,
)

logger = logging.getLogger(__name__)

FIRST_USE_SETTLE = 0.1
"""Seconds the category files memd creates exist before a store writes into them."""

GIT_WAIT_MAX = 30.0
"""The longest an outside change waits for git to finish before it is read anyway (a git that
hangs, or a lock younger than `git_state.STALE_AFTER` left by one that crashed)."""
GIT_POLL = 0.05
"""How often the index lock is looked at while git works."""
GIT_RECENT = 2.0
"""A change found within this many seconds of git writing its index is git's."""


class Workspace:
    """One project root: its `.memory/` directory, an actor per category, a watcher and the
    archive."""

    episode_half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    """How fast its episodes' rank decays (`memd.core.search.decay`; `apply` sets it)."""
    episode_max_age_days: int = DEFAULT_MAX_AGE_DAYS
    """The age past which `cleanup` archives an unrecalled episode (`apply` sets it)."""

    def __init__(
        self,
        root: str,
        *,
        clock: Callable[[], float],
        lock_timeout: float = DEFAULT_TIMEOUT,
        watches: WatchHub | None = None,
        handed: Mapping[str, Handover] | None = None,
        categories: project_categories.CategorySet = project_categories.BUILTIN_SET,
    ) -> None:
        """`watches` is the daemon's hub; without one the workspace runs a hub of its own.
        `handed`: what an earlier load of this root's files acknowledged (`handovers`), by file.
        `categories`: its categories as its files say (`memd.fs.project_categories`).
        Long: one attribute per part of the workspace, each with its note."""
        self.root = root
        self.category_set = categories
        """Its categories as read (the registry reads them again when its memd.toml changes)."""
        self.categories = categories.categories  # the built-ins, then custom ones
        self.categories_stale = False
        """The config's categories changed: the registry reads them again before its next use."""
        self.memory_dir = os.path.join(root, MEMORY_DIR)
        self.archive_path = os.path.join(self.memory_dir, ARCHIVE_FILE)
        self.max_archive_bytes = MAX_ARCHIVE_BYTES
        self._swept = False
        self._created = True  # False: a category file was missing at load
        self._settled_at = 0.0  # time.monotonic() from which files memd created may be written
        self._memory_at_load = False  # `.memory/` was a real directory when the workspace loaded
        self._root_id: tuple[int, int] | None = None  # the root's (device, inode) at load
        self._loaded_ns = time.time_ns()  # debris older than this is a crash's, not in flight
        self.replaced = False  # a write found the root replaced: the registry loads it afresh
        self._git_changes = 0  # outside changes being read after git worked: they say `git`
        self._closed = anyio.Event()  # set by `close`: a wait for git ends there
        self._sweep_scope = anyio.CancelScope()
        self._subscribers: set[Session] = set()
        self._own_hub = WatchHub() if watches is None else None
        self._hub = watches or self._own_hub or WatchHub()
        self.lock = WorkspaceLock(
            root, self.memory_dir, preparation=self, hub=self._hub, timeout=lock_timeout
        )
        """The write lock every actor commits under (`write_lock.WorkspaceLock`)."""
        self.inbox = InboxFile(self.memory_dir, self.lock, self.archive)
        """The review inbox, `.memory/inbox.md` (`inbox_file`)."""
        self.sources = WorkspaceSources(root)  # as searches see them (the watcher reports)
        self.chats = WorkspaceChats(root)
        """Its coding agents' past sessions, as searches naming "chat" see them."""
        self.watcher = WorkspaceWatcher(
            root,
            self.memory_dir,
            self._external_change,
            self._hub,
            on_lock=self.lock.lock_event,
            categories=self.categories,
        )
        self.sources.watch = self.watcher.serve_sources(self.sources.changed)
        self.code = CodeCheck(root, self.memory_entries)
        """Its memories checked against the code they cite (`code_check`)."""
        self.in_use = 0
        """Requests holding this workspace now (`Registry.leases`)."""
        self.last_used = anyio.current_time()
        """When a request last let go of it (anyio's clock)."""
        self.stopped = anyio.Event()
        """Set once `run` has returned: every actor drained and stopped."""
        self.usage = UsageStore(root, clock=clock)
        self.provenance = ProvenanceStore(root, clock=clock)  # who wrote each entry
        self._usage_scope = anyio.CancelScope()
        self.actors = self._actors(clock, handed or {})

    _seen: dict[Category, tuple[Entry, ...]] = {}  # noqa: RUF012 (replaced by `_run`)

    def _actors(
        self, clock: Callable[[], float], handed: Mapping[str, Handover]
    ) -> dict[Category, CategoryActor]:
        """One actor per category, each told what an earlier load of its file acknowledged."""
        return {
            category: CategoryActor(
                self.memory_dir,
                category,
                archive=self.archive,
                clock=clock,
                write_lock=self.lock,
                on_change=self._publish,
                handed=handed.get(category.file),
            )
            for category in self.categories
        }

    @property
    def max_file_bytes(self) -> int:
        """The size cap of each category file (see `CategoryActor.max_file_bytes`)."""
        return self.actors[Category.INSTRUCTION].max_file_bytes

    @max_file_bytes.setter
    def max_file_bytes(self, limit: int) -> None:
        for actor in self.actors.values():
            actor.max_file_bytes = limit

    def apply(self, limits: WorkspaceSettings) -> None:
        """Make every write and load from now on keep to `limits`."""
        self.lock.lock_timeout = limits.lock_timeout
        self.max_file_bytes = limits.max_file_bytes
        self.max_archive_bytes = limits.max_archive_bytes
        self.episode_half_life_days = limits.episode_half_life_days
        self.episode_max_age_days = limits.episode_max_age_days

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load every category file, start watching, report ready, and serve until closed."""
        try:
            await self._run(task_status)
        finally:
            self.stopped.set()

    async def _run(self, task_status: TaskStatus[None]) -> None:
        async with anyio.create_task_group() as tg:
            if self._own_hub is not None:
                await tg.start(self._own_hub.run)
            # The usage history and the category files load at once (each is a few worker-thread
            # hops, and under load every hop waits for a turn of the event loop); the watcher
            # starts once they are loaded, since the changes it finds are synced into them.
            async with anyio.create_task_group() as loading:
                loading.start_soon(anyio.to_thread.run_sync, self.usage.load)
                loading.start_soon(anyio.to_thread.run_sync, self.provenance.load)
                loading.start_soon(anyio.to_thread.run_sync, self._check_at_load)
                # A `.lock` memd cannot judge by its pid ages from here, before any write waits.
                loading.start_soon(anyio.to_thread.run_sync, self.lock.note_lock)
                for actor in self.actors.values():
                    loading.start_soon(tg.start, actor.run)
            # Each file's entries as last seen, to tell what an outside change changed.
            self._seen = {c: tuple(a.snapshot.entries) for c, a in self.actors.items()}
            await tg.start(self.watcher.run)
            tg.start_soon(self.sources.run)
            tg.start_soon(self.chats.run)
            tg.start_soon(self.code.run)
            tg.start_soon(self._sweep_at_load)
            tg.start_soon(self._keep_usage)
            tg.start_soon(self.lock.keep_fresh)
            task_status.started()

    async def _keep_usage(self) -> None:
        with self._usage_scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.usage.keep_saving)
                tg.start_soon(self.provenance.keep_saving)

    def close(self) -> None:
        """Stop taking writes and stop watching; queued writes still finish."""
        self._closed.set()
        self.watcher.stop()
        if self._own_hub is not None:
            self._own_hub.stop()
        self._sweep_scope.cancel()
        self._usage_scope.cancel()  # saves the usage history once more
        self.lock.close()  # writes in progress are short; a stuck one is not refreshed
        self.sources.stop()  # a look in progress is left to its worker thread
        self.chats.stop()  # likewise
        self.code.stop()  # a gather in progress likewise
        for actor in self.actors.values():
            actor.close()

    def handovers(self) -> dict[str, Handover]:
        """What each file's next load needs from this one (`CategoryActor.handover`), by file
        name (a reload may bring other category objects); call it once the workspace has
        stopped."""
        handed = {category.file: actor.handover() for category, actor in self.actors.items()}
        return {file: handover for file, handover in handed.items() if handover}

    def idle_for(self, now: float) -> float:
        """Return how long the workspace has been idle at `now` (anyio's clock): 0 while a
        request holds it, a session subscribes to it or a write holds its lock."""
        if self.in_use or self._subscribers or self.lock.is_held:
            return 0.0
        return max(0.0, now - self.last_used)

    def prepare_under_lock(self, *, sweeping: bool) -> None:
        """Under the lock, before each hold's work (`write_lock.Preparation`): check the root;
        first (once) remove debris and create the missing category files. A store waits until
        files memd created have existed FIRST_USE_SETTLE seconds (raises NotNow before that);
        a hold for this alone (`sweeping`) does not."""
        self._check_root()
        if not self._swept:
            for name in storage.remove_debris(self.memory_dir, before_ns=self._loaded_ns):
                logger.warning("removed %s left behind by a crash", name)
            self._swept = True
        if not self._created:
            if self._create_missing_files():
                self._settled_at = time.monotonic() + FIRST_USE_SETTLE
            self._created = True
        if not sweeping and time.monotonic() < self._settled_at:
            raise storage.NotNow(None)  # HackLM may be between its check and its header

    def nothing_to_prepare(self) -> bool:
        """Return True if a sweep has nothing left to do, or `.memory/` went away (a sweep never
        makes it: only a write does)."""
        return (self._swept and self._created) or not self.has_memory_dir()

    def _check_root(self) -> None:
        """Refuse to write through a root that is no longer the directory loaded (blocking).

        Raises:
            WorkspaceNotFound: the root is gone, a link, or another directory now.
        """
        if self.root_is_replaced():
            self.replaced = True
            raise WorkspaceNotFound(
                f"The workspace directory {self.root} was replaced (removed, moved, or made a "
                "link) while memd had it loaded, so nothing was written; retry, and memd loads "
                "the directory that is there now.",
                data={"path": self.root},
            )

    def root_is_replaced(self) -> bool:
        """Return True if the root is not the directory noted at load (one `lstat`: cheap
        enough for the event loop)."""
        try:
            st = os.lstat(self.root)
        except OSError:
            return True
        return stat.S_ISLNK(st.st_mode) or (st.st_dev, st.st_ino) != self._root_id

    def _create_missing_files(self) -> bool:
        """Create each missing file of HackLM's five with its header, never over one that
        appears meanwhile (blocking, under the write lock); return whether any was created.
        The other categories' files are made by their first store."""
        created = False
        for category in HACKLM_CATEGORIES:
            path = os.path.join(self.memory_dir, category.file)
            if os.path.lexists(path):
                continue
            try:
                storage.write_atomic(path, category.header, follow_links=False, expected=None)
                created = True
            except storage.ChangedOnDisk:
                pass  # created meanwhile: it is someone's file now
            except RpcError as error:
                logger.warning("cannot create %s: %s", path, error.message)
                break
        return created

    def _check_at_load(self) -> None:
        """Note the root's identity, and whether all category files exist (blocking); if not,
        the first hold of the lock creates them: at load if `.memory/` exists, else at the
        first write."""
        with contextlib.suppress(OSError):  # gone already: every write is refused
            st = os.lstat(self.root)
            self._root_id = (st.st_dev, st.st_ino)
        self._memory_at_load = os.path.isdir(self.memory_dir) and not os.path.islink(
            self.memory_dir
        )
        self._created = os.path.islink(self.memory_dir) or all(
            os.path.lexists(os.path.join(self.memory_dir, category.file))
            for category in HACKLM_CATEGORIES
        )

    def _needs_preparing(self) -> bool:
        """Return True if `.memory/` holds debris or a lock file, or existed at load and lacks
        a category file (blocking): never create `.memory/` on a read."""
        if storage.has_debris(self.memory_dir, lock_file=LOCK_FILE):
            return True
        return not self._created and self._memory_at_load

    async def _sweep_at_load(self) -> None:
        with self._sweep_scope:
            if not await anyio.to_thread.run_sync(self._needs_preparing):
                return
            try:
                await self.lock.prepare_now()
            except RpcError as error:
                logger.warning("left debris in %s for now: %s", self.memory_dir, error.message)

    async def refresh(self, categories: Iterable[Category]) -> None:
        """Make the snapshots of `categories` current with their files on disk.

        The files are stat'ed right here, on the event loop: a stat of a local file takes a few
        microseconds, a worker-thread hop about a hundred, and every read pays this. Only actors
        whose file changed re-read it (in a worker thread).

        Raises:
            StorageError: a file could not even be checked.
        """
        actors = [self.actors[c] for c in categories]
        stale = [a for a in actors if a.is_stale(storage.current_fingerprint(a.path))]
        if len(stale) == 1:
            await stale[0].sync()
        elif stale:
            async with anyio.create_task_group() as tg:
                for actor in stale:
                    tg.start_soon(actor.sync)

    async def _external_change(self, categories: frozenset[Category]) -> None:
        """Re-read the files a batch of outside changes touched; while git works in the
        repository (its index lock exists), first wait for it to finish (at most
        `GIT_WAIT_MAX` seconds), then look at every file: a checkout, merge, rebase, stash or
        reset is then seen as one change a file, never as a file half-written or missing, and
        its notifications say `git`."""
        if not self._any_stale(categories):
            return  # the echo of memd's own commits: nothing to read, no git to wait for
        by_git = await self._wait_for_git()
        if by_git:
            categories = frozenset(self.categories)
        self._git_changes += by_git
        try:
            await self.refresh(categories)
        except RpcError as error:
            logger.warning("cannot check %s after a change: %s", self.memory_dir, error.message)
        finally:
            self._git_changes -= by_git

    def _any_stale(self, categories: Iterable[Category]) -> bool:
        """Return True if any of `categories`' files differs from its snapshot, or cannot be
        checked (stat'ed on the event loop, as `refresh` does)."""
        try:
            return any(
                actor.is_stale(storage.current_fingerprint(actor.path))
                for actor in (self.actors[category] for category in categories)
            )
        except RpcError:
            return True

    async def _wait_for_git(self) -> bool:
        """Wait while git holds the repository's index lock (until the workspace closes); True
        when it did, or when git wrote its index within the last `GIT_RECENT` seconds (the
        change is git's)."""
        began_ns = time.time_ns()
        waited = False
        with anyio.move_on_after(GIT_WAIT_MAX):
            while await anyio.to_thread.run_sync(git_state.index_lock_held, self.root):
                waited = True
                with anyio.move_on_after(GIT_POLL):
                    await self._closed.wait()
                if self._closed.is_set():
                    return False
        if waited:
            return True
        since = began_ns - int(GIT_RECENT * 1e9)
        return await anyio.to_thread.run_sync(git_state.index_changed_since, self.root, since)

    def has_memory_dir(self) -> bool:
        """Return True if anything is at `.memory` (one `lstat`: cheap enough for the loop);
        a store compares this before and after its write to tell whether it created it."""
        return os.path.lexists(self.memory_dir)

    def memory_entries(self) -> list[tuple[Category, Entry]]:
        """Every entry of its category files as last read (the snapshots), in category order."""
        return [(c, entry) for c, actor in self.actors.items() for entry in actor.snapshot.entries]

    def category(self, name: str) -> Category:
        """Return its category called `name`, ignoring case.

        Raises:
            CategoryNotFound: it has none of that name; the message names the valid ones, and
                why the project's own categories were left out if they were.
        """
        try:
            return self.categories.parse(name)
        except CategoryNotFound as exc:
            if (problem := self.category_set.problem) is None:
                raise
            raise CategoryNotFound(
                f"{exc} This project's own categories were left out: {problem}"
            ) from None

    def actor(self, category: Category) -> CategoryActor:
        """Return the actor that owns `category`'s file."""
        return self.actors[category]

    def archive(self, records: list[ArchivedEntry]) -> None:
        """Append `records` to the archive durably, all or nothing. Blocks: called in a
        `lock.try_write` (under the write lock), before the entries leave their file. An archive
        that would pass `max_archive_bytes` is first moved aside to `archive-<today>.md` (never
        deleted; logged) and a new one is started.

        Raises:
            FileFormatError: the archive is a symbolic link or not a regular file (a FIFO).
            StorageError: the archive could not be written; it is as it was.
        """
        today = datetime.date.today().isoformat()
        lines = [archive_line(record, date=today) for record in records]
        moved = storage.move_aside_if_full(
            self.archive_path, lines, self.max_archive_bytes, header=ARCHIVE_HEADER, date=today
        )
        if moved is not None:
            logger.warning(
                "%s reached max_archive_bytes (%d); its records are now in %s",
                self.archive_path,
                self.max_archive_bytes,
                moved,
            )
        storage.append_lines(self.archive_path, lines, header=ARCHIVE_HEADER)

    # ------------------------------------------------------------------ subscriptions

    def subscribe(self, session: Session) -> None:
        """Send this workspace's changes to `session` from now on."""
        self._subscribers.add(session)
        session.feeds[self.root] = self

    def take_subscribers(self, earlier: Workspace) -> None:
        """Subscribe the sessions still subscribed to `earlier` (this root's last load, unloaded
        because its categories changed), and send each a `resync`: what changed between the two
        loads was not sent. A session that closed meanwhile (its feed is gone) is left out."""
        message = (
            f"The categories of {self.root} changed, so memd loaded it afresh; changes may "
            "have been missed: call `list` to catch up."
        )
        frame = notification_frame(
            "resync", p.Resync(workspace=self.root, dropped=0, message=message)
        )
        for session in list(earlier._subscribers):
            if session.feeds.get(self.root) is earlier:
                self.subscribe(session)
                session.offer(self.root, frame)

    def unsubscribe(self, session: Session) -> bool:
        """Stop sending changes to `session`; return whether it was subscribed."""
        session.feeds.pop(self.root, None)
        subscribed = session in self._subscribers
        self._subscribers.discard(session)
        return subscribed

    def _publish(self, category: Category, snapshot: Snapshot, source: p.Source) -> None:
        self._note_change(category, snapshot, source)
        if not self._subscribers:
            return
        changed = p.Changed(
            workspace=self.root,
            category=category.name,
            file=category.file,
            source=source,
            entries=[
                entry_info(category, entry, snapshot.tags.get(entry.line, frozenset()))
                for entry in snapshot.entries
            ],
            error=None if snapshot.error is None else snapshot.error.message,
            conflict=None if snapshot.conflict is None else snapshot.conflict.message,
            git=source == "external" and self._git_changes > 0,
        )
        frame = notification_frame("changed", changed)
        for session in list(self._subscribers):
            session.offer(self.root, frame)

    def _note_change(self, category: Category, snapshot: Snapshot, source: p.Source) -> None:
        """Record what an outside change did to `category`'s entries in the provenance (a hand
        edit, or a merge while git works); memd's own commits are recorded by the handler that
        knows who wrote them."""
        now = tuple(snapshot.entries)
        before = self._seen.get(category)
        if snapshot.catalog is None or snapshot.error is not None or snapshot.conflict is not None:
            return  # vanished, unreadable or mid-merge: compared again once it is back
        self._seen[category] = now
        if source != "external" or before is None:
            return
        by_git = self._git_changes > 0
        edits = record.diff(category.name, before, now, action="merge" if by_git else "edit")
        self.provenance.add(edits, record.GIT_MERGE if by_git else record.HAND_EDIT)


class WorkspaceSettings(NamedTuple):
    """The daemon's settings a workspace uses (see `memd.config`): limits on writes and loads,
    whether a secret may be stored, and the configured read-only sources."""

    lock_timeout: float = DEFAULT_TIMEOUT
    """How long a write waits for another tool's `.memory/.lock`, in seconds."""
    max_file_bytes: int = MAX_FILE_BYTES
    """The largest category file loaded or grown by a store."""
    max_entry_chars: int = MAX_ENTRY_CHARS
    """The longest memory stored, in characters."""
    idle_unload: float = DEFAULT_IDLE_UNLOAD
    """Seconds a workspace stays loaded with nothing using it (0: for ever)."""
    max_archive_bytes: int = MAX_ARCHIVE_BYTES
    """The size past which `.memory/archive.md` is moved aside to a dated file."""
    allow_secrets: bool = False
    """Store memories that carry a secret value (refused by default: files get committed)."""
    sources: tuple[str, ...] = ()
    """memd's config `sources`: read-only sources besides the defaults
    (`memd.server.workspaces.source_index`)."""
    categories: tuple[Category, ...] = ()
    """memd's config's custom categories, checked (`memd.fs.project_categories`)."""
    episode_half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    """Days after which an episode ranks at half its score."""
    episode_max_age_days: int = DEFAULT_MAX_AGE_DAYS
    """The age past which `cleanup` archives an episode nobody recalled."""
    chat: bool = True
    """memd's config `chat`: search coding agents' past sessions (`chat_index`)."""
    chat_max_age_days: int = DEFAULT_CHAT_MAX_AGE_DAYS
    """Sessions last written longer ago than this are left out of the "chat" source."""
    review: Mapping[str, ReviewMode] = MappingProxyType({})
    """memd's config `[review]`: per category, whether an agent's store goes "direct" or waits
    as "pending" in the review inbox (over `memd.core.review.policy.DEFAULT_MODES`)."""


DEFAULT_LIMITS = WorkspaceSettings()
