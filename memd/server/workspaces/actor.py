"""`CategoryActor`: the one task that owns one category file of one workspace.

Theory of operation: writers send commands to the actor's bounded mailbox and wait for the
reply. The actor takes the first command plus everything queued behind it (group commit),
applies them in order to its current version of the file with the pure
`transitions.apply_batch` (a `Catalog`: the change costs what it touches), and, if the file
changed, writes it once: in one worker-thread call that writes and fsyncs the new file at a
temp name, takes the workspace's write lock (memd's own writers and HackLM's `.memory/.lock`),
checks that the file on disk is still the version the batch was applied to, archives removed
entries, renames the new file into place, releases the lock and fsyncs the directory (so the
hold is the checks and the rename: `_Staging`). It then publishes the new snapshot, and only
then replies to each command.
So a reply means the change is on disk, and any read that starts after a reply sees it. A batch
that changes nothing still checks that its version is the file on disk before it replies.

Every time the snapshot's content changes, `on_change` is told, with the source: "memd" for the
actor's own commit, "external" for a change found on disk. Re-reading a file whose fingerprint
is the one the actor wrote is skipped, so memd's own writes never echo back as external.

Reads never go through the mailbox: they use `snapshot`, which is replaced (never mutated) after
each commit. A reader (or the watcher) that finds the file changed on disk (`is_stale`) calls
`sync()`, which re-reads it at once. Re-reading and committing take the actor's file mutex, so a
read waits at most for one commit attempt (an apply and one write), never for a commit that is
waiting for HackLM's lock: while the lock is held elsewhere the actor backs off without the
mutex, and tries again (re-applying the batch if the file changed) until the lock timeout.

Never overwrite a change that was not read: the write lock keeps HackLM and other memd writers
out, and under it the file's fingerprint is compared with the version the batch was applied to,
once before writing and once more right before the rename (a hand edit can land at any moment).
If it changed, the actor re-reads the file and applies the batch again (up to MAX_ATTEMPTS
times); entries it archived on an abandoned attempt may then appear twice in the archive, which
loses nothing. A command whose requester gave up (the daemon stopping) is dropped from its batch
before each attempt and never applied later.

Size cap: a file over `max_file_bytes` is not loaded (every request for it gets the error), and
no batch makes a file grow past it. If a batch would, the file is first checked on disk (a hand
edit may have shrunk it); then the latest stores that add or lengthen an entry are refused, each
with its own error, until the rest fits, and the rest is applied again. A batch that still
would not fit (a cleanup adding slugs) writes nothing. A dry run does not check the cap.

Size: one actor; its commit path (apply, cap, write under the lock, re-read) is one story told in
order.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

import anyio
from anyio.abc import TaskStatus

from memd.core.format import merge_markers
from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.format.limits import MAX_FILE_BYTES
from memd.core.format.mdformat import Entry
from memd.core.search import ranking
from memd.core.writes import first_use, size_cap, transitions
from memd.core.writes.catalog import Catalog
from memd.fs import git_state, index_cache, storage
from memd.fs.lock_file import BUSY, Busy, LockCheck
from memd.server.workspaces.envelope import Envelope
from memd.server.workspaces.lock_wait import Backoff
from memd.server.workspaces.snapshot import Snapshot as Snapshot
from memd.server.workspaces.write_lock import (  # re-exported: handlers import it here
    Unlocked,
    WriteLock,
)
from memd_client.errors import (
    MergeConflict,
    RpcError,
    ServerBusy,
    ShuttingDown,
)
from memd_client.protocol import Source

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
MAILBOX_SIZE = 256
MAX_BATCH = 512
SUBMIT_TIMEOUT = 30.0
REPLY_TIMEOUT = 120.0
KEEP_INDEX_TIMEOUT = 5.0
WATCHDOG_INTERVAL = 1.0
VANISH_SETTLE = 1.0
"""A file that vanished is not written until it has stayed away this long (seconds)."""
T = TypeVar("T")
Archive = Callable[[list[ArchivedEntry]], None]
"""Blocking: append removed entries to the archive durably (called under the write lock)."""
ChangeListener = Callable[[Category, Snapshot, Source], None]


def _ignore_change(category: Category, snapshot: Snapshot, source: Source) -> None:
    pass


class _Retry(Exception):
    """Raised by a write that must not go ahead: the file changed, or a requester gave up."""


class CategoryActor:
    """Owns `<workspace>/.memory/<category file>`: the only code that reads or writes it."""

    def __init__(
        self,
        memory_dir: str,
        category: Category,
        *,
        archive: Archive,
        clock: Callable[[], float],
        write_lock: WriteLock | None = None,
        on_change: ChangeListener = _ignore_change,
        handed: Handover | None = None,
    ) -> None:
        """`handed`: what this file's actor in an earlier load of the workspace acknowledged
        (see `handover`)."""
        self._handed = handed
        self.category = category
        self.path = os.path.join(memory_dir, category.file)
        self._archive = archive
        self._clock = clock
        self._write_lock: WriteLock = write_lock or Unlocked()
        self._on_change = on_change
        self._send, self._receive = anyio.create_memory_object_stream[Envelope](MAILBOX_SIZE)
        self._fingerprint: storage.Fingerprint | None = None
        self._file_mutex = anyio.Lock()
        self._kept_key = ""  # the key of the text whose index is kept on disk, if known
        self._decides = False  # a write came: versions read get their dedup index built
        self._waiting: set[Envelope] = set()
        # time.monotonic() when the file was seen gone, or emptied in place (an in-place writer,
        # HackLM's `writeFile`, between its truncate and its write)
        self._vanished_at: float | None = None
        # The version (catalog, fingerprint) seen before the file was emptied in place: what
        # the version after the empty moment is compared with (`_restore_overwritten`).
        self._before_empty: tuple[Catalog | None, storage.Fingerprint | None] | None = None
        # The entries this daemon acknowledged into the file, as long as the file holds them
        # (bounded by the file): what a re-store after HackLM's first use may write.
        self._acknowledged: set[first_use.Key] = set()
        self._pending_restores: list[Envelope] = []  # re-stores the mailbox had no room for
        self.snapshot = Snapshot(None, clock())
        self.commits = 0
        self.units = 0
        """Worker-thread calls made building indexes (`in_units`)."""
        self.max_file_bytes = MAX_FILE_BYTES
        """The file's size cap: a bigger file is not loaded, and no store makes it bigger."""

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load the file, report ready, then serve the mailbox until it is closed and drained.

        A file that cannot be read does not stop the actor: every request for it gets the error
        until the file is fixed, and it is never overwritten in the meantime.
        """
        try:
            await self._reload()
        except RpcError as error:
            logger.warning("cannot load %s: %s", self.path, error.message)
        await self._take_over()
        task_status.started()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_replies)
                async with self._receive:
                    async for first in self._receive:
                        await self._write_lock.wait_turn()  # HackLM waiting: its turn first
                        batch = [*self._pending_restores, first]
                        self._pending_restores.clear()
                        while len(batch) < MAX_BATCH:
                            try:
                                batch.append(self._receive.receive_nowait())
                            except (anyio.WouldBlock, anyio.EndOfStream):
                                break
                        await self._prepare_decisions()
                        await self._commit(batch)
                while self._pending_restores:  # found while the last batches were written
                    batch = self._pending_restores[:MAX_BATCH]
                    del self._pending_restores[:MAX_BATCH]
                    await self._commit(batch)
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(KEEP_INDEX_TIMEOUT):
                await self._keep_index()

    def handover(self) -> Handover | None:
        """What the next load of this file needs from this one (the workspace is unloaded):
        the entries this daemon acknowledged that the file holds, and the file's identity, so a
        HackLM first-use header that lands in between is still caught. None when nothing could
        be lost that way (or the set is over HANDOVER_MAX entries: bounded memory)."""
        catalog, known = self.snapshot.catalog, self._fingerprint
        if catalog is None or known is None or not self._acknowledged:
            return None
        if not first_use.has_memds_header(self.category, catalog):
            return None  # only a file with memd's header can be taken for HackLM's first use
        held = {first_use.key_of(entry) for entry in catalog.entries} & self._acknowledged
        if not held or len(held) > HANDOVER_MAX:
            return None
        return Handover(known, frozenset(held))

    async def _take_over(self) -> None:
        """Take what an earlier load of this file handed over: its acknowledged entries, and
        if the file was written over in place meanwhile, compare it with what that load saw."""
        handed, self._handed = self._handed, None
        if handed is None:
            return
        self._acknowledged = set(handed.acknowledged)
        now = self._fingerprint
        if now is not None and now != handed.fingerprint:
            before = first_use.stand_in(self.category, handed.acknowledged)
            await self._restore_overwritten(before, handed.fingerprint)

    async def _watch_replies(self) -> None:
        """Fail every command whose sender has waited REPLY_TIMEOUT seconds (checked every
        WATCHDOG_INTERVAL): one timer for the actor instead of one per command."""
        while True:
            await anyio.sleep(WATCHDOG_INTERVAL)
            now = anyio.current_time()
            for envelope in [e for e in self._waiting if e.due <= now]:
                envelope.fail(
                    ServerBusy(
                        f"The write to {self.category.file} did not finish within "
                        f"{REPLY_TIMEOUT:g} s and may still be applied; check with `list` before "
                        "retrying."
                    )
                )

    def close(self) -> None:
        """Stop taking commands; queued ones are still carried out."""
        self._send.close()

    def is_stale(self, fingerprint: storage.Fingerprint | None) -> bool:
        """Return True if the file on disk (`fingerprint`) is not what the snapshot holds."""
        return self.snapshot.error is not None or fingerprint != self._fingerprint

    async def sync(self) -> None:
        """Make the snapshot hold the file as it is on disk now.

        A file that cannot be read leaves its error in `snapshot.error` instead of raising.
        """
        async with self._file_mutex:
            with contextlib.suppress(RpcError):
                await self._refresh_if_changed()

    async def submit(self, command: transitions.Command) -> transitions.Outcome:
        """Queue `command`, wait until it is durable, and return its outcome.

        Raises:
            ServerBusy: the mailbox stayed full for SUBMIT_TIMEOUT seconds.
            ShuttingDown: the actor no longer takes commands.
            RpcError: the command failed (invalid content, storage error, ...).
        """
        envelope = Envelope(command, anyio.current_time() + REPLY_TIMEOUT)
        try:
            try:
                self._send.send_nowait(envelope)  # the usual case: no timer, no extra wake-up
            except anyio.WouldBlock:
                with anyio.fail_after(SUBMIT_TIMEOUT):
                    await self._send.send(envelope)
        except TimeoutError:
            raise ServerBusy(
                f"The write queue for {self.category.file} stayed full for {SUBMIT_TIMEOUT:g} s; "
                "retry shortly."
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ShuttingDown("memd is shutting down; retry once it is back.") from None
        self._waiting.add(envelope)
        try:
            await envelope.wait()
        except anyio.get_cancelled_exc_class():
            envelope.abandoned = True
            raise
        finally:
            self._waiting.discard(envelope)
        outcome: transitions.Outcome = envelope.result()  # or the command's error
        return outcome

    async def store(self, command: transitions.Store) -> transitions.StoreOutcome:
        """`submit` a store and return its outcome (raises as `submit` does)."""
        return _outcome_of(await self.submit(command), transitions.StoreOutcome)

    async def delete(self, command: transitions.Delete) -> transitions.DeleteOutcome:
        """`submit` a delete and return its outcome (raises as `submit` does)."""
        return _outcome_of(await self.submit(command), transitions.DeleteOutcome)

    async def cleanup(self, command: transitions.Cleanup) -> transitions.CleanupOutcome:
        """`submit` a cleanup and return its outcome (raises as `submit` does)."""
        return _outcome_of(await self.submit(command), transitions.CleanupOutcome)

    async def _keep_index(self) -> None:
        """Save the index for the next run if it changed since it was loaded or kept."""
        snapshot = self.snapshot
        index = snapshot.__dict__.get("index")
        if index is None or snapshot.catalog is None or snapshot.error is not None:
            return
        text = snapshot.catalog.render()
        key = index_cache.text_key(text)
        if key != self._kept_key:
            await anyio.to_thread.run_sync(
                index_cache.save, self.path, index, key, abandon_on_cancel=True
            )
            self._kept_key = key

    async def _reload(self) -> None:
        try:
            loaded = await anyio.to_thread.run_sync(
                functools.partial(
                    storage.read_text, self.path, follow_links=False, max_bytes=self.max_file_bytes
                )
            )
        except RpcError as error:
            self._fingerprint = None
            self.snapshot = Snapshot(None, self._clock(), error=error)
            raise
        if loaded is None:
            if self._fingerprint is not None and self._vanished_at is None:
                self._vanished_at = time.monotonic()  # it was there: git may be recreating it
            self._fingerprint = None
            self.snapshot = Snapshot(None, self._clock(), previous=self.snapshot)
            return
        self._vanished_at = None
        # Parsing and indexing run in worker threads, never on the event loop, indexing a unit
        # at a time (`in_units`); the fingerprint is taken only with the snapshot, so a reader
        # that finds the file changed meanwhile waits for this re-read (`sync`).
        text, fingerprint = loaded
        previous = self.snapshot
        markers = merge_markers.conflict_lines(text)
        if markers:
            # Mid-merge: serve the last good entries (both sides' if there were none).
            good = previous.catalog
            if good is None:
                unmarked = merge_markers.without_markers(text, markers)
                good = await anyio.to_thread.run_sync(Catalog.from_text, unmarked)
            conflict = _conflict_error(self.path, markers)
            self.snapshot = Snapshot(good, self._clock(), conflict=conflict, previous=previous)
        elif previous.has_index:
            catalog, changed = await anyio.to_thread.run_sync(
                _reparse, text, previous.catalog, previous.entries
            )
            if self._decides:
                await self.in_units(catalog.index_in_units(BUILD_UNIT))
            if changed <= REINDEX_OFF_LOOP:
                # a small change: the index follows it when next searched
                self.snapshot = Snapshot(catalog, self._clock(), previous=previous)
            else:  # a new index, never touching the one searches may be reading
                index = await self.in_units(ranking.IndexBuild(catalog.entries, BUILD_UNIT).step)
                self.snapshot = Snapshot(catalog, self._clock(), index=index)
        else:  # the first load: parse and index (or take the kept index)
            catalog, kept, key = await anyio.to_thread.run_sync(
                _load_kept, self.path, text, previous.catalog
            )
            if self._decides:
                await self.in_units(catalog.index_in_units(BUILD_UNIT))
            if kept is None:
                kept = await self.in_units(ranking.IndexBuild(catalog.entries, BUILD_UNIT).step)
                await anyio.to_thread.run_sync(index_cache.save, self.path, kept, key)
            self._kept_key = key
            self.snapshot = Snapshot(catalog, self._clock(), index=kept)
        self._fingerprint = fingerprint

    async def in_units(self, step: Callable[[], T | None]) -> T:
        """Run `step` in worker threads, one call per unit of work, until it returns a result:
        between units the limiter's token and the event loop are free for others (a
        near-`max_file_bytes` file is minutes of work on a busy machine). `units` counts them."""
        while True:
            self.units += 1
            done = await anyio.to_thread.run_sync(step)
            if done is not None:
                return done

    async def _prepare_decisions(self) -> None:
        """Before the first write: build the duplicate index of the current version in worker
        threads, a unit at a time (0.3-1 ms an entry, 30-90 s for a hostile file near
        `max_file_bytes`), and
        have every version read from now on built with it (`_reload`), so that no write
        decision builds one on the event loop."""
        self._decides = True
        catalog = self.snapshot.catalog
        if catalog is not None and not catalog.has_index:
            await self.in_units(catalog.index_in_units(BUILD_UNIT))

    async def _commit(self, batch: list[Envelope]) -> None:
        try:
            results = await self._apply_and_write(batch)
        except RpcError as error:
            # The lock could not be taken, or the file could not be read or written: nothing
            # in this batch took effect.
            results = [(envelope, error) for envelope in batch]
        for envelope, result in results:
            if isinstance(result, RpcError):
                envelope.fail(result)
            else:
                envelope.set(result)
        unrestored = [
            envelope.command
            for envelope, result in results
            if isinstance(result, RpcError)
            and isinstance(envelope.command, transitions.Restore)
            and not envelope.command.kept_elsewhere
        ]
        if unrestored:
            await self._archive_unrestored(unrestored)

    async def _archive_unrestored(self, commands: list[transitions.Restore]) -> None:
        """Keep in the archive each re-store that could not be written back (the file at its
        size cap, the lock held for too long): nobody waits for its reply, and the entry must
        not be lost. If even the archive cannot take it, its text goes to the log."""
        records = [
            ArchivedEntry(
                category=self.category,
                slug=command.slug,
                content=command.content,
                reason="written over by HackLM's first-use header; memd could not put it back",
            )
            for command in commands
        ]
        backoff = Backoff(anyio.current_time() + self._write_lock.lock_timeout)
        try:
            while isinstance(
                await self._write_lock.try_write(
                    lambda check: self._archive(records), deadline=backoff.deadline
                ),
                Busy,
            ):
                await backoff.pause(self._write_lock.lock_timeout_error)
        except RpcError as error:
            logger.error(
                "could not put back or archive %d entries of %s that HackLM's first-use header "
                "wrote over (%s); their text: %s",
                len(records),
                self.path,
                error.message,
                " / ".join(f"[{r.slug}] {r.content}" for r in records),
            )
            return
        logger.warning(
            "%d entries of %s that HackLM's first-use header wrote over could not be put back; "
            "they are in the archive",
            len(records),
            self.path,
        )

    async def _apply_and_write(self, batch: list[Envelope]) -> _Results:
        """Apply the batch to the current file and write it once; back off while another
        process holds the lock (or git is working, or the file vanished), and start over on
        fresh content if the file changed (see the module docstring)."""
        backoff = Backoff(anyio.current_time() + self._write_lock.lock_timeout)
        attempts = 0
        while True:
            await _take(self._file_mutex)
            try:
                # A requester that gave up while this batch waited (the daemon stopping) was
                # told nothing was done; applying its command now would contradict that.
                live = [envelope for envelope in batch if not envelope.abandoned]
                if not live:
                    return []
                # After the file changed under us once, read it again under the lock, where
                # HackLM cannot change it, instead of racing it.
                done = await self._attempt(live, backoff.deadline, reread=attempts > 0)
            finally:
                self._file_mutex.release()
            if isinstance(done, list):
                return done
            if isinstance(done, Busy):
                await backoff.pause(self._write_lock.lock_timeout_error)
                continue
            attempts += 1
            if attempts >= MAX_ATTEMPTS:
                raise ServerBusy(
                    f"{self.path} kept changing while memd tried to write it (a program that "
                    "writes it without taking .memory/.lock?); nothing was written, so it is "
                    "safe to retry.",
                    data={"path": self.path},
                )

    async def _attempt(
        self, live: list[Envelope], deadline: float, *, reread: bool = False
    ) -> _Results | Busy | None:
        """One try (holding the file mutex): apply, then write under the lock. Returns the
        results, BUSY (the lock is held elsewhere, git is working, or the file vanished and has
        not settled) or None (the file changed: re-read, retry). With `reread`, a file that
        changed is read again and the batch applied again under the lock. (Long: the attempt's
        steps, apply, cap and write, are one sequence whose early exits must be read in order.)"""
        if await self._must_wait():
            return BUSY
        base, read = self.snapshot, self._fingerprint
        batch = transitions.apply_batch(
            self.category, base.catalog, [envelope.command for envelope in live]
        )
        results = list(zip(live, batch.results, strict=True))
        if not batch.changed or batch.catalog is None:
            if not self.is_stale(storage.current_fingerprint(self.path)):
                return results
            await self._reread()
            return None
        text = batch.catalog.render()
        size = self._size_past_cap(text, read)
        if size is not None:
            # Judge the size against the file as it is now: a hand edit may have shrunk it.
            now = await anyio.to_thread.run_sync(storage.current_fingerprint, self.path)
            if self.is_stale(now):
                await self._reread()
                return None
            refused = [
                (live[index], would_be)
                for index, would_be in size_cap.stores_past_cap(
                    self.category,
                    base.catalog,
                    [envelope.command for envelope in live],
                    batch.results,
                    size=size,
                    limit=self.max_file_bytes,
                    read_size=None if read is None else read.size,
                )
            ]
            if not refused:  # no store to leave out (a cleanup adding slugs): write nothing
                raise storage.too_big_error(self.path, size, self.max_file_bytes, refused="write")
            for envelope, would_be in refused:
                envelope.refuse(
                    storage.too_big_error(self.path, would_be, self.max_file_bytes, refused="store")
                )
            rest = [envelope for envelope in live if not envelope.abandoned]
            return await self._attempt(rest, deadline, reread=reread) if rest else []
        planned = _Planned(text, batch.catalog, batch.archived, read, reread=reread)
        staging = _Staging(self.path, text)  # written and fsynced before the lock is taken
        work = functools.partial(self._write_file, planned, live, staging)
        try:
            written = await self._write_lock.try_write(work, deadline=deadline, staging=staging)
        except (storage.ChangedOnDisk, _Retry) as exc:
            if isinstance(exc, storage.ChangedOnDisk):
                logger.info("%s changed while memd was writing it; applying again", self.path)
                await self._reread()
            return None
        if isinstance(written, Busy):
            return written
        if written.results is not None:  # applied again to a version read under the lock
            results = list(zip(live, written.results, strict=True))
        self._publish(written, base)
        self._note_acknowledged(results)
        return results

    def _publish(self, written: _Written, base: Snapshot) -> None:
        """Make what a write left on disk the snapshot, and tell the listener."""
        self._fingerprint = written.fingerprint
        self.snapshot = Snapshot(written.catalog, self._clock(), previous=base)
        if written.wrote:
            self.commits += 1
            self._before_empty = None  # memd replaced the emptied file: nothing to compare
        self._on_change(self.category, self.snapshot, "memd" if written.wrote else "external")

    async def _must_wait(self) -> bool:
        """Return True while the file vanished and has not settled: git (or an editor) may be
        about to create it again, so it is not an empty base yet.

        Raises:
            RpcError: the file cannot be read, or it holds conflict markers.
        """
        if self.snapshot.error is not None or self.snapshot.conflict is not None:
            await self._refresh_if_changed()  # raises the error while the file stays unreadable
            if self.snapshot.conflict is not None:
                raise self.snapshot.conflict
        if self._vanished_at is not None:
            await self._refresh_if_changed()
        vanished_at = self._vanished_at
        if vanished_at is None:
            return False  # never gone, or back
        if time.monotonic() - vanished_at < VANISH_SETTLE:
            return True
        self._vanished_at = None  # deleted for good: a store may create it
        return False

    def _size_past_cap(self, text: str, read: storage.Fingerprint | None) -> int | None:
        """Return the size of `text` in bytes if writing it would grow the file (last read as
        `read`) past `max_file_bytes`, else None (see `core.writes.size_cap`)."""
        return size_cap.size_past_cap(
            text, limit=self.max_file_bytes, read_size=None if read is None else read.size
        )

    def _write_file(
        self, planned: _Planned, live: list[Envelope], staging: _Staging, check: LockCheck
    ) -> _Written:
        """Write the planned text (blocking, under the write lock) if the file is still the
        version it was made from; with `planned.reread`, a file that changed is read and the
        batch applied to it again right here, under the lock. The planned text, staged before
        the lock, is only renamed into place here (`staging` makes it durable after).

        Raises:
            ChangedOnDisk: the file is no longer the version the batch was applied to.
            _Retry: a requester gave up meanwhile; the batch must be applied again without it.
            LockTimeout: the lock was lost (`check`); StorageError: the write failed.
        """
        if any(envelope.abandoned for envelope in live):
            raise _Retry
        text, catalog, archived, read_as = (
            planned.text,
            planned.catalog,
            planned.archived,
            planned.read,
        )
        redone: list[transitions.Outcome | RpcError] | None = None
        if storage.current_fingerprint(self.path) != read_as:
            if not planned.reread:
                raise storage.ChangedOnDisk(self.path)
            again = self._apply_again(live)
            if again.text is None:  # nothing to write on the version read now
                return _Written(again.read, again.catalog, again.results, wrote=False)
            text, catalog, archived, read_as = again.text, again.catalog, again.archived, again.read
            redone = again.results
        if archived:
            self._archive(archived)

        def still_safe() -> None:
            check()
            if storage.current_fingerprint(self.path) != read_as:
                raise storage.ChangedOnDisk(self.path)

        staged = staging.staged if redone is None else None
        if staged is not None:
            fingerprint = staged.put_in_place(before_replace=still_safe, expected=read_as)
        else:  # applied again here (or not staged): the whole write under the lock
            fingerprint = storage.write_atomic(
                self.path, text, before_replace=still_safe, follow_links=False, expected=read_as
            )
        return _Written(fingerprint, catalog, redone, wrote=True)

    def _apply_again(self, live: list[Envelope]) -> _Again:
        """Read the file and apply `live` to it (blocking, under the write lock).

        Raises:
            ChangedOnDisk: the file vanished, was emptied in place, holds conflict markers,
                HackLM's first-use header wrote over acknowledged entries or the batch would
                pass the size cap: the event loop's path deals with those.
        """
        loaded = storage.read_text(self.path, follow_links=False, max_bytes=self.max_file_bytes)
        if loaded is None or merge_markers.conflict_lines(loaded[0]):
            raise storage.ChangedOnDisk(self.path)
        text, read = loaded
        catalog = Catalog.from_text(text)
        before, known = self._base()
        if _emptied_in_place(known, read):
            raise storage.ChangedOnDisk(self.path)  # the event loop's re-read waits for the rest
        if self._lost_to_first_use(before, known, catalog, read):
            raise storage.ChangedOnDisk(self.path)  # the event loop's re-read stores them again
        batch = transitions.apply_batch(
            self.category, catalog, [envelope.command for envelope in live]
        )
        if not batch.changed or batch.catalog is None:
            return _Again(None, catalog, [], read, batch.results)
        new_text = batch.catalog.render()
        if self._size_past_cap(new_text, read) is not None:
            raise storage.ChangedOnDisk(self.path)
        return _Again(new_text, batch.catalog, batch.archived, read, batch.results)

    async def _refresh_if_changed(self) -> None:
        # A stat on the event loop (microseconds, as `Workspace.refresh` does): no thread hop.
        if self.is_stale(storage.current_fingerprint(self.path)):
            await self._reread()

    async def _reread(self) -> None:
        logger.info("%s changed on disk; re-reading it", self.path)
        shown = self.snapshot
        before, known = self._base()
        self._before_empty = None
        try:
            await self._reload()
        finally:
            if _differs(shown, self.snapshot):
                self._on_change(self.category, self.snapshot, "external")
        await self._restore_overwritten(before, known)

    def _base(self) -> tuple[Catalog | None, storage.Fingerprint | None]:
        """The version a new one is compared with for HackLM's first use: the last one read,
        or the one before the file was emptied in place if that is the last one read."""
        return self._before_empty or (self.snapshot.catalog, self._fingerprint)

    def _note_acknowledged(self, results: _Results) -> None:
        """Remember the entries a commit acknowledged (stored, updated or put back)."""
        for envelope, result in results:
            if (
                isinstance(result, transitions.StoreOutcome)
                and result.action != "skipped"
                and not result.dry_run
                and not envelope.abandoned
            ):
                self._acknowledged.add((result.slug, result.content))

    def _lost_to_first_use(
        self,
        before: Catalog | None,
        known: storage.Fingerprint | None,
        after: Catalog | None,
        now: storage.Fingerprint | None,
    ) -> list[Entry]:
        """The acknowledged entries of `before` (the file as `known`) that HackLM's first-use
        header wrote over in `after` (the file as `now`): see `core.writes.first_use`."""
        if known is None or now is None or (known.dev, known.ino) != (now.dev, now.ino):
            return []  # another file: a rename (git, an editor), never HackLM's header write
        return first_use.lost_to_first_use(self.category, before, after, self._acknowledged)

    async def _restore_overwritten(
        self, before: Catalog | None, known: storage.Fingerprint | None
    ) -> None:
        """Store again, word for word, the entries this daemon acknowledged that HackLM's
        first-use header wrote over (see `core.writes.first_use`: no time window; a delete,
        update or hand edit by anyone is never undone). The re-store goes through the mailbox
        like any write, so it checks the workspace root's identity under the lock first and
        only ever lands in this file. A version that is exactly what git's index holds for the
        file is git's (a checkout, stash or reset may reuse the inode just freed), never
        HackLM's: it is left alone.

        A file emptied in place is the moment between an in-place writer's truncate and its
        write (HackLM's `writeFile`): the next version is compared with the one before it, and
        no store writes into it for VANISH_SETTLE seconds, as for a file that vanished."""
        after = self.snapshot
        if _emptied_in_place(known, self._fingerprint):
            self._before_empty = (before, known)
            if self._vanished_at is None:
                self._vanished_at = time.monotonic()
            return
        lost = (
            []
            if after.conflict is not None
            else self._lost_to_first_use(before, known, after.catalog, self._fingerprint)
        )
        if lost and after.catalog is not None:
            root = os.path.dirname(os.path.dirname(self.path))
            text = after.catalog.render().encode("utf-8")
            if await anyio.to_thread.run_sync(git_state.staged_as, root, self.path, text):
                logger.info(
                    "%s is the version git's index holds; leaving it as git wrote it", self.path
                )
                lost = []
        if self._acknowledged:  # else nothing to keep: no pass over a file memd never wrote
            # Bounded by the file: forget what it no longer holds (deleted: never back).
            held = {first_use.key_of(entry) for entry in after.entries}
            self._acknowledged &= held | {first_use.key_of(entry) for entry in lost}
        if not lost:
            return
        logger.warning(
            "%s was written over by HackLM's first-use header; storing the %d entries memd had "
            "acknowledged in it again",
            self.path,
            len(lost),
        )
        for entry in lost:
            if entry.slug is None:
                continue  # never acknowledged by memd, which gives every entry a slug
            command = transitions.Restore(slug=entry.slug, content=entry.content)
            # Nobody waits for this reply: the actor applies it like any queued store (with the
            # next batch if the mailbox is full or closing).
            envelope = Envelope(command, anyio.current_time() + REPLY_TIMEOUT)
            try:
                self._send.send_nowait(envelope)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._pending_restores.append(envelope)


_Results = list[tuple[Envelope, transitions.Outcome | RpcError]]

HANDOVER_MAX = 4096
"""The most acknowledged entries of one file handed from one load of a workspace to the next."""


class Handover(NamedTuple):
    """What one load of a file hands the next (`CategoryActor.handover`)."""

    fingerprint: storage.Fingerprint
    """The file as the earlier load last saw it."""
    acknowledged: frozenset[first_use.Key]
    """The entries it acknowledged that the file held then."""


class _Planned(NamedTuple):
    """A batch applied on the event loop, ready to be written: the file's new text and
    catalog, the entries to archive, and the version of the file it was applied to."""

    text: str
    catalog: Catalog
    archived: list[ArchivedEntry]
    read: storage.Fingerprint | None
    reread: bool
    """Apply the batch again under the lock if the file is no longer `read`."""


class _Staging:
    """A commit's text written and fsynced at a temp name before the lock is taken, renamed
    under it by `_write_file`, the rename made durable (or the temp file removed) once the lock
    is released: the hold HackLM waits for is the checks and the rename (`write_lock.Staging`)."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.staged: storage.Staged | None = None

    def before(self) -> None:
        self.staged = storage.stage(self.path, self.text, follow_links=False)

    def after(self, synced: storage.DirectorySyncs) -> None:
        staged, self.staged = self.staged, None
        if staged is None:
            return
        try:
            if staged.placed:
                staged.sync(synced)  # the reply waits for this: a store is durable when answered
        finally:
            staged.close()


class _Again(NamedTuple):
    """A batch applied again, under the lock, to the file as read there (`text` None: it
    changes nothing)."""

    text: str | None
    catalog: Catalog
    archived: list[ArchivedEntry]
    read: storage.Fingerprint
    results: list[transitions.Outcome | RpcError]


class _Written(NamedTuple):
    """What a write left on disk: the file's version and catalog; `results` when the batch was
    applied again under the lock; `wrote` False if that left nothing to write."""

    fingerprint: storage.Fingerprint
    catalog: Catalog
    results: list[transitions.Outcome | RpcError] | None
    wrote: bool


def _emptied_in_place(known: storage.Fingerprint | None, now: storage.Fingerprint | None) -> bool:
    """Return True if the file `known` (with content) is now the same file, empty."""
    return (
        known is not None
        and now is not None
        and known.size > 0
        and now.size == 0
        and (known.dev, known.ino) == (now.dev, now.ino)
    )


def _conflict_error(path: str, markers: tuple[int, ...]) -> MergeConflict:
    """The error for a write to a file with git conflict markers on lines `markers`."""
    shown = ", ".join(str(number) for number in markers[:6]) + (", ..." if len(markers) > 6 else "")
    return MergeConflict(
        f"{path} holds git conflict markers (lines {shown}): a merge is not finished, so memd "
        "writes nothing to it and serves its last good entries; resolve the merge (keep both "
        "sides' entries, delete the marker lines), save the file and retry.",
        data={"path": path, "lines": list(markers)},
    )


async def _take(lock: anyio.Lock) -> None:
    """Acquire `lock`, without a scheduling round trip when it is free."""
    try:
        lock.acquire_nowait()
    except anyio.WouldBlock:
        await lock.acquire()


REINDEX_OFF_LOOP = 256
"""A re-read that changes more entries than this gets a new search index in its worker thread;
a smaller change is indexed when next searched (updating the last index costs what changed)."""


def _reparse(text: str, previous: Catalog | None, searched: Sequence[Entry]) -> tuple[Catalog, int]:
    """Parse a changed category file's text (blocking): its catalog (the dedup index carried
    over from `previous`) and how many entries of `searched` (the version searched until now)
    it changed."""
    catalog = Catalog.from_text(text, previous=previous)
    return catalog, ranking.changed_entries(searched, catalog.entries)


BUILD_UNIT = 2000
"""Entries indexed in one worker-thread call (`CategoryActor.in_units`): tens of ms each."""


def _load_kept(
    path: str, text: str, previous: Catalog | None
) -> tuple[Catalog, ranking.SearchIndex | None, str]:
    """Parse a category file's text, and take its kept search index if it is the text's
    (blocking): the catalog, the index or None, and the text's key."""
    catalog = Catalog.from_text(text, previous=previous)
    key = index_cache.text_key(text)
    return catalog, index_cache.load(path, key, catalog.entries), key


def _differs(before: Snapshot, after: Snapshot) -> bool:
    """Return True if two snapshots hold different content, error or conflict. A file that
    appears or goes without entries (a bare header) changes nothing a subscriber sees."""
    if _problem(before) != _problem(after):
        return True
    if before.catalog is None or after.catalog is None:
        return bool(before.entries or after.entries)
    return before.catalog.raws != after.catalog.raws


def _problem(snapshot: Snapshot) -> tuple[str | None, str | None]:
    """The messages of a snapshot's error and conflict."""
    error, conflict = snapshot.error, snapshot.conflict
    return (
        None if error is None else error.message,
        None if conflict is None else conflict.message,
    )


OutcomeT = TypeVar(
    "OutcomeT", transitions.StoreOutcome, transitions.DeleteOutcome, transitions.CleanupOutcome
)


def _outcome_of(outcome: transitions.Outcome, kind: type[OutcomeT]) -> OutcomeT:
    """`outcome`, which `transitions.apply` gives of the command's own kind.

    Raises:
        TypeError: it is of another kind (a broken invariant: the request fails as internal).
    """
    if not isinstance(outcome, kind):
        raise TypeError(f"a {type(outcome).__name__} came back where {kind.__name__} was due")
    return outcome
