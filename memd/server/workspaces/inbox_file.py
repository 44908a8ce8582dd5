"""A workspace's review inbox file, `.memory/inbox.md` (format: `memd.core.review.inbox_format`).

Rules:
- One owner writes it: the workspace's `InboxFile`, one write at a time (an in-process mutex),
  each under the workspace's write lock (memd's mutex and HackLM's `.memory/.lock`, like the
  category files and the archive), so it never races HackLM or git.
- Adding appends one line durably (fsync) before it returns: a pending store is on disk before
  its reply says "pending". An entry already there (same id) is not added twice.
- Taking an entry out rewrites the file atomically with every other byte kept; a rejected
  entry's text goes to the archive (under the same hold, before it leaves the inbox), an
  accepted one is stored by the caller before it is taken out: an entry is never lost between.
- The file is read without following links, like every file in `.memory/`.
- `resolving` is held by whoever resolves an entry (looks it up, stores or archives it, takes
  it out), so two clients accepting one entry at once store it once: the second finds it gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import anyio

from memd.core.format.archive import ArchivedEntry
from memd.core.review import inbox_format
from memd.core.review.inbox_format import InboxItem
from memd.fs import storage
from memd.fs.lock_file import Busy, LockCheck
from memd.server.workspaces.lock_wait import Backoff
from memd.server.workspaces.write_lock import WriteLock
from memd_client.errors import EntryNotFound

T = TypeVar("T")


class InboxFile:
    """The inbox of one workspace: see the module rules."""

    def __init__(
        self,
        memory_dir: str,
        lock: WriteLock,
        archive: Callable[[list[ArchivedEntry]], None],
    ) -> None:
        self.path = os.path.join(memory_dir, inbox_format.INBOX_FILE)
        self._lock = lock
        self._archive = archive
        self._mutex = anyio.Lock()
        self.resolving = anyio.Lock()
        """Held across one entry's resolution (`memd.server.methods.review.resolve`)."""

    def _read(self) -> str:
        found = storage.read_text(self.path, follow_links=False)
        return "" if found is None else found[0]

    async def items(self) -> tuple[InboxItem, ...]:
        """Return the entries waiting for review, in file order."""
        return inbox_format.parse(await anyio.to_thread.run_sync(self._read))

    async def add(self, item: InboxItem) -> bool:
        """Append `item` durably; return False if an entry with its id was already there."""

        def work(check: LockCheck) -> bool:
            if any(found.id == item.id for found in inbox_format.parse(self._read())):
                return False
            check()
            storage.append_lines(
                self.path, [inbox_format.render_line(item)], header=inbox_format.INBOX_HEADER
            )
            return True

        return await self._under_lock(work)

    async def take(self, ident: str, *, archive: ArchivedEntry | None = None) -> InboxItem:
        """Remove the entry `ident` and return it; with `archive`, that record is appended to
        the archive first, under the same hold.

        Raises:
            EntryNotFound: no entry has that id (resolved already, or edited away by hand).
        """

        def work(check: LockCheck) -> InboxItem:
            found = storage.read_text(self.path, follow_links=False)
            text, fingerprint = found if found is not None else ("", None)
            item = next((i for i in inbox_format.parse(text) if i.id == ident), None)
            if item is None:
                raise EntryNotFound(
                    f"No inbox entry {ident}; run `memd review --json` to list what is waiting.",
                    data={"id": ident},
                )
            if archive is not None:
                self._archive([archive])
            storage.write_atomic(
                self.path,
                inbox_format.without(text, ident),
                before_replace=check,
                follow_links=False,
                expected=fingerprint,
            )
            return item

        return await self._under_lock(work)

    async def _under_lock(self, work: Callable[[LockCheck], T]) -> T:
        async with self._mutex:
            backoff = Backoff(anyio.current_time() + self._lock.lock_timeout)
            while True:
                result = await self._lock.try_write(work, deadline=backoff.deadline)
                if not isinstance(result, Busy):
                    return result
                await backoff.pause(self._lock.lock_timeout_error)
