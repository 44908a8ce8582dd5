"""`CategoryActor`: the one task that owns one category file of one workspace.

Theory of operation: writers send commands to the actor's bounded mailbox and wait for the
reply. The actor takes the first command plus everything queued behind it (group commit). If
any of them may write, it takes the workspace's write lock (memd's own writers and HackLM's
`.memory/.lock`) for the whole read-modify-write. It re-reads the file if it changed on disk
since the actor last read or wrote it, applies the commands in order with the pure
`transitions.apply`, archives removed entries, writes the file once (atomic and durable),
publishes the new snapshot, and only then replies to each command. So a reply means the change
is on disk, and any read that starts after a reply sees it.

Every time the snapshot's content changes, `on_change` is told, with the source: "memd" for the
actor's own commit, "external" for a change found on disk. Re-reading a file whose fingerprint
is the one the actor wrote is skipped, so memd's own writes never echo back as external.

Reads never go through the mailbox: they use `snapshot`, which is replaced (never mutated) after
each commit. A reader (or the watcher) that finds the file changed on disk (`is_stale`) calls
`sync()`, which re-reads it at once. Re-reading and committing take the actor's file mutex, so a
read waits at most for a commit's critical section, never for a commit that is still waiting for
HackLM's lock.

Never overwrite a change that was not read: the write lock keeps HackLM and other memd writers
out, and right before the rename the file's fingerprint is compared once more with what the
commit read (a hand edit can land at any moment). If it changed, the commit starts over on the
new content (up to MAX_ATTEMPTS times); entries it archived on an abandoned attempt may then
appear twice in the archive, which loses nothing.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from anyio.abc import TaskStatus

from memd.core import mdformat, ranking, tags as tagging, transitions
from memd.core.archive import ArchivedEntry
from memd.core.categories import Category
from memd.core.mdformat import Document, Entry
from memd.server import index_cache, storage
from memd_client.errors import RpcError, ServerBusy, ShuttingDown, StorageError
from memd_client.protocol import Source

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
MAILBOX_SIZE = 256
MAX_BATCH = 512
SUBMIT_TIMEOUT = 30.0
REPLY_TIMEOUT = 120.0
KEEP_INDEX_TIMEOUT = 5.0


class Snapshot:
    """One immutable version of a category file as the actor last read or wrote it.

    `error` is set when the file could not be read; the entries are then empty.
    """

    def __init__(
        self,
        doc: Document | None,
        loaded_at: float,
        *,
        error: RpcError | None = None,
        previous: Snapshot | None = None,
        indexed: tuple[tuple[Entry, ...], ranking.CategoryIndex] | None = None,
    ) -> None:
        self.doc = doc
        self.loaded_at = loaded_at
        self.error = error
        if indexed is not None:  # the entries of `doc` and their index, made in a worker thread
            self.entries, self.__dict__["index"] = indexed
        else:
            self.entries = mdformat.entries(doc) if doc is not None else ()
        # Only an index is handed on (the last one built), never the older snapshots. The
        # index moves: the previous snapshot no longer has it (it would build its own).
        self._previous_index: ranking.CategoryIndex | None = None
        if previous is not None:
            built = previous.__dict__.pop("index", None)
            self._previous_index = built if built is not None else previous._previous_index
            previous._previous_index = None

    @functools.cached_property
    def index(self) -> ranking.CategoryIndex:
        """The search index, built on first use by updating the previous version's index when
        there is one (so only changed entries are indexed again)."""
        previous, self._previous_index = self._previous_index, None
        return ranking.build_index(self.entries, previous)

    @property
    def has_index(self) -> bool:
        """True when this snapshot has its index built, or one to update."""
        return "index" in self.__dict__ or self._previous_index is not None

    @functools.cached_property
    def tags(self) -> dict[int, frozenset[str]]:
        """The inline #tags of each entry that has any, by line number; built on first use."""
        found = {entry.line: tagging.tags_of(entry.content) for entry in self.entries}
        return {line: tags for line, tags in found.items() if tags}


LockCheck = Callable[[], None]
"""Blocking; raises if the write lock was lost (so nothing may be written)."""
WriteLock = Callable[[], AbstractAsyncContextManager[LockCheck]]
ChangeListener = Callable[[Category, Snapshot, Source], None]


def _lock_still_held() -> None:
    """The check for writes that need no lock."""


def _no_lock() -> AbstractAsyncContextManager[LockCheck]:
    return contextlib.nullcontext(_lock_still_held)


def _ignore_change(category: Category, snapshot: Snapshot, source: Source) -> None:
    pass


class _Reply:
    """A one-shot reply slot: the actor sets a value or an error, the sender waits for it."""

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._value: Any = None
        self._error: RpcError | None = None

    def set(self, value: Any) -> None:
        self._value = value
        self._event.set()

    def fail(self, error: RpcError) -> None:
        self._error = error
        self._event.set()

    async def wait(self) -> None:
        """Wait for the reply (TimeoutError after REPLY_TIMEOUT seconds)."""
        with anyio.fail_after(REPLY_TIMEOUT):
            await self._event.wait()

    def result(self) -> Any:
        """Return the value, or raise the error, that was set."""
        if self._error is not None:
            raise self._error
        return self._value


class _Envelope:
    def __init__(self, command: transitions.Command) -> None:
        self.command = command
        self.reply = _Reply()
        self.abandoned = False
        """Set when the requester stopped waiting (cancelled at shutdown): never applied late."""


class CategoryActor:
    """Owns `<workspace>/.memory/<category file>`: the only code that reads or writes it."""

    def __init__(
        self,
        memory_dir: str,
        category: Category,
        *,
        archive: Callable[[list[ArchivedEntry]], Any],
        clock: Callable[[], float],
        write_lock: WriteLock = _no_lock,
        on_change: ChangeListener = _ignore_change,
    ) -> None:
        self.category = category
        self.path = os.path.join(memory_dir, category.file)
        self._archive = archive
        self._clock = clock
        self._write_lock = write_lock
        self._on_change = on_change
        self._send, self._receive = anyio.create_memory_object_stream[_Envelope](MAILBOX_SIZE)
        self._fingerprint: storage.Fingerprint | None = None
        self._file_mutex = anyio.Lock()
        self._kept_key = ""  # the key of the text whose index is kept on disk, if known
        self.snapshot = Snapshot(None, clock())
        self.commits = 0

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Load the file, report ready, then serve the mailbox until it is closed and drained.

        A file that cannot be read does not stop the actor: every request for it gets the error
        until the file is fixed, and it is never overwritten in the meantime.
        """
        try:
            await self._reload()
        except RpcError as error:
            logger.warning("cannot load %s: %s", self.path, error.message)
        task_status.started()
        try:
            async with self._receive:
                async for first in self._receive:
                    batch = [first]
                    while len(batch) < MAX_BATCH:
                        try:
                            batch.append(self._receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    await self._commit(batch)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(KEEP_INDEX_TIMEOUT):
                await self._keep_index()

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
        envelope = _Envelope(command)
        try:
            with anyio.fail_after(SUBMIT_TIMEOUT):
                await self._send.send(envelope)
        except TimeoutError:
            raise ServerBusy(
                f"The write queue for {self.category.file} stayed full for {SUBMIT_TIMEOUT:g} s; "
                "retry shortly."
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ShuttingDown("memd is shutting down; retry once it is back.") from None
        try:
            await envelope.reply.wait()
        except anyio.get_cancelled_exc_class():
            envelope.abandoned = True
            raise
        except TimeoutError:
            raise ServerBusy(
                f"The write to {self.category.file} did not finish within {REPLY_TIMEOUT:g} s and "
                "may still be applied; check with `list` before retrying."
            ) from None
        outcome: transitions.Outcome = envelope.reply.result()  # or the command's error
        return outcome

    async def _keep_index(self) -> None:
        """Save the index for the next run if it changed since it was loaded or kept."""
        snapshot = self.snapshot
        index = snapshot.__dict__.get("index")
        if index is None or snapshot.doc is None or snapshot.error is not None:
            return
        text = mdformat.render(snapshot.doc)
        key = index_cache.text_key(text)
        if key != self._kept_key:
            await anyio.to_thread.run_sync(
                index_cache.save, self.path, index, key, abandon_on_cancel=True
            )
            self._kept_key = key

    async def _reload(self) -> None:
        try:
            loaded = await anyio.to_thread.run_sync(storage.read_text, self.path)
        except RpcError as error:
            self._fingerprint = None
            self.snapshot = Snapshot(None, self._clock(), error=error)
            raise
        if loaded is None:
            self._fingerprint = None
            self.snapshot = Snapshot(None, self._clock(), previous=self.snapshot)
        elif self.snapshot.has_index:
            text, self._fingerprint = loaded  # the index follows the change when next searched
            self.snapshot = Snapshot(mdformat.parse(text), self._clock(), previous=self.snapshot)
        else:  # the first load: parse and index off the event loop (or take the kept index)
            text, self._fingerprint = loaded
            doc, indexed, self._kept_key = await anyio.to_thread.run_sync(
                _load_indexed, self.path, text
            )
            self.snapshot = Snapshot(doc, self._clock(), indexed=indexed)

    async def _commit(self, batch: list[_Envelope]) -> None:
        writes = any(transitions.may_write(envelope.command) for envelope in batch)
        try:
            lock = self._write_lock() if writes else _no_lock()
            async with lock as lock_check, self._file_mutex:
                # A requester that gave up while this batch waited (the daemon stopping) was
                # told nothing was done; applying its command now would contradict that.
                batch = [envelope for envelope in batch if not envelope.abandoned]
                results = await self._apply_and_write(batch, lock_check) if batch else []
        except RpcError as error:
            # The lock could not be taken, or the file could not be read or written: nothing
            # in this batch took effect.
            for envelope in batch:
                envelope.reply.fail(error)
            return
        for envelope, result in zip(batch, results, strict=True):
            if isinstance(result, RpcError):
                envelope.reply.fail(result)
            else:
                envelope.reply.set(result)

    async def _apply_and_write(
        self, batch: list[_Envelope], lock_check: LockCheck
    ) -> list[transitions.Outcome | RpcError]:
        """Apply the batch to the current file and write it once; start over on fresh content
        if the file changes under the write (see the module docstring)."""
        for _ in range(MAX_ATTEMPTS):
            await self._refresh_if_changed()
            old = self.snapshot.doc
            doc, results, archived = _apply_all(self.category, old, batch)
            if doc is old or doc is None or (old is not None and doc == old):
                return results
            try:
                await self._write(doc, archived, lock_check)
            except storage.ChangedOnDisk:
                logger.info("%s changed while memd was writing it; applying again", self.path)
                continue
            return results
        raise StorageError(
            f"{self.path} kept changing while memd tried to write it; nothing was written, retry.",
            data={"path": self.path},
        )

    async def _refresh_if_changed(self) -> None:
        now = await anyio.to_thread.run_sync(storage.current_fingerprint, self.path)
        if not self.is_stale(now):
            return
        logger.info("%s changed on disk; re-reading it", self.path)
        before = self.snapshot
        try:
            await self._reload()
        finally:
            if _differs(before, self.snapshot):
                self._on_change(self.category, self.snapshot, "external")

    async def _write(
        self, doc: Document, archived: list[ArchivedEntry], lock_check: LockCheck
    ) -> None:
        if archived:
            await self._archive(archived)
        text = mdformat.render(doc)
        read = self._fingerprint

        def still_safe() -> None:
            lock_check()
            if storage.current_fingerprint(self.path) != read:
                raise storage.ChangedOnDisk(self.path)

        self._fingerprint = await anyio.to_thread.run_sync(
            functools.partial(storage.write_atomic, self.path, text, before_replace=still_safe)
        )
        self.snapshot = Snapshot(doc, self._clock(), previous=self.snapshot)
        self.commits += 1
        self._on_change(self.category, self.snapshot, "memd")


def _load_indexed(
    path: str, text: str
) -> tuple[Document, tuple[tuple[Entry, ...], ranking.CategoryIndex], str]:
    """Parse a category file's text and index it, or take its kept index (blocking)."""
    doc = mdformat.parse(text)
    entries = mdformat.entries(doc)
    key = index_cache.text_key(text)
    index = index_cache.load(path, key, entries)
    if index is None:
        index = ranking.build_index(entries)
        index_cache.save(path, index, key)
    return doc, (entries, index), key


def _differs(before: Snapshot, after: Snapshot) -> bool:
    """Return True if two snapshots hold different content or a different error."""
    before_error = None if before.error is None else before.error.message
    after_error = None if after.error is None else after.error.message
    return before_error != after_error or before.doc != after.doc


def _apply_all(
    category: Category, doc: Document | None, batch: list[_Envelope]
) -> tuple[Document | None, list[transitions.Outcome | RpcError], list[ArchivedEntry]]:
    """Apply each queued command in order; a failing command leaves the document as it was."""
    results: list[transitions.Outcome | RpcError] = []
    archived: list[ArchivedEntry] = []
    for envelope in batch:
        try:
            transition = transitions.apply(category, doc, envelope.command)
        except RpcError as error:
            results.append(error)
            continue
        doc = transition.doc
        archived.extend(transition.archived)
        results.append(transition.outcome)
    return doc, results, archived
