"""The provenance sidecar of one workspace: `$XDG_STATE_HOME/memd/provenance/<id>.jsonl`.

Rules:
- Never in `.memory/`: the Markdown (HackLM, git diffs) stays clean.
- One file per workspace, named like the usage sidecar (a hash of the real path, which is inside
  too). Read once when the workspace loads; a missing file means no record; an unreadable or
  malformed one is renamed aside (`.bad`), logged, and replaced by an empty record.
- The file is a log: a first line naming the workspace, then one JSON change a line. Each
  recorded operation wakes the saver, which waits SAVE_WINDOW seconds for more (a burst of
  stores shares one append) and then appends the changes not yet saved at once (in a worker
  thread, without an fsync of its own), and once more when the workspace closes: a save costs
  what changed, not the whole record, and one thread hop serves many writes. The memory itself is
  acknowledged by its own commit: a crash between the commit and the save loses that
  operation's record, never a memory. A line a crash tore, or any line that does not decode,
  is skipped when the log is read.
- Bounded: the newest `record.MAX_CHANGES` changes (`memd.core.provenance.record`) in memory
  (a bounded deque, so recording one costs the same however full it is);
  once the log holds twice that many lines it is rewritten (atomically) with those alone.
- Only the workspace's handlers and its change listener call it, on the event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping

import anyio
import msgspec

from memd.config import state_dir
from memd.core.provenance import record
from memd.fs import storage
from memd_client import protocol as p
from memd_client.errors import RpcError

logger = logging.getLogger(__name__)

_change = msgspec.json.Decoder(record.Change)
_encoder = msgspec.json.Encoder()

SAVE_WINDOW = 0.05
"""Seconds the saver waits after a write for others to share its append."""


def provenance_path(root: str, env: Mapping[str, str] | None = None) -> str:
    """Return the sidecar path for workspace `root`."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(state_dir(env), "provenance", f"{digest}.jsonl")


class ProvenanceStore:
    """One workspace's provenance record, in memory, saved to its sidecar file."""

    def __init__(self, root: str, *, clock: Callable[[], float], path: str | None = None) -> None:
        self.root = root
        self.path = path or provenance_path(root)
        self._clock = clock
        self.changes: deque[record.Change] = deque(maxlen=record.MAX_CHANGES)
        self.last_operation = 0
        self._unsaved: list[record.Change] = []
        self._logged = 0  # change lines in the log file
        self._wake = anyio.Event()

    def load(self) -> None:
        """Read the sidecar (blocking; run it in a thread); see the module rules."""
        try:
            data = storage.read_regular_bytes(self.path)
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            logger.warning("provenance %s is unreadable (%s); starting afresh", self.path, exc)
            with contextlib.suppress(OSError):
                os.replace(self.path, self.path + ".bad")
            return
        found = []
        for line in data.split(b"\n")[1:]:
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                found.append(_change.decode(line))
        self._logged = len(found)
        self.changes.extend(found)
        self.last_operation = max((change.operation for change in found), default=0)

    def add(
        self,
        edits: Iterable[record.Edit],
        writer: p.Writer | record.Writer | None,
        *,
        undoes: int | None = None,
    ) -> int:
        """Record `edits` as one operation by `writer` (None: `record.UNKNOWN`) now (an undo's:
        naming the operation it `undoes`); return the operation's number (0: there was nothing
        to record)."""
        edits = list(edits)
        if not edits:
            return 0
        self.last_operation += 1
        stamped = record.stamp(
            edits,
            operation=self.last_operation,
            at=self._clock(),
            writer=_author(writer),
            undoes=undoes,
        )
        self.changes.extend(stamped)
        self._unsaved += stamped
        self._wake.set()
        return self.last_operation

    async def keep_saving(self) -> None:
        """Save whenever there are changes; save once more at the end."""
        try:
            while True:
                await self._wake.wait()
                await anyio.sleep(SAVE_WINDOW)
                self._wake = anyio.Event()
                await self.save()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self.save()

    async def save(self) -> None:
        """Append the changes not saved yet (durably; once the log is twice the bound, rewrite
        it with the bound's; errors are logged, not raised, and the changes kept for the next
        save)."""
        if not self._unsaved:
            return
        unsaved, self._unsaved = self._unsaved, []
        compact = self._logged + len(unsaved) > 2 * record.MAX_CHANGES
        lines = [_encoder.encode(c).decode() for c in (self.changes if compact else unsaved)]
        try:
            await anyio.to_thread.run_sync(self._write, lines, compact)
        except (OSError, RpcError) as exc:
            self._unsaved = [*unsaved, *self._unsaved]
            message = exc.message if isinstance(exc, RpcError) else str(exc)
            logger.warning("cannot save provenance %s: %s", self.path, message)
            return
        self._logged = len(lines) if compact else self._logged + len(lines)

    def _write(self, lines: list[str], rewrite: bool) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        header = _encoder.encode({"workspace": self.root}).decode() + "\n"
        if rewrite:
            storage.write_atomic(self.path, header + "".join(f"{line}\n" for line in lines))
            return
        # No fsync: a record may be lost in a crash anyway (see the module rules); the memory's
        # own commit is what is durable. O_APPEND keeps lines whole; a torn last one is skipped.
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(self.path, flags, 0o600)
        try:
            first = header if os.fstat(fd).st_size == 0 else ""
            os.write(fd, (first + "".join(f"{line}\n" for line in lines)).encode())
        finally:
            os.close(fd)


def _author(writer: p.Writer | record.Writer | None) -> record.Writer:
    if writer is None:
        return record.UNKNOWN
    if isinstance(writer, record.Writer):
        return writer
    return record.Writer(
        client=writer.client, version=writer.version, origin=writer.origin, session=writer.session
    )
