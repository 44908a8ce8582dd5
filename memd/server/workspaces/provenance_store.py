"""The provenance sidecar of one workspace: `$XDG_STATE_HOME/memd/provenance/<id>.json`.

Rules:
- Never in `.memory/`: the Markdown (HackLM, git diffs) stays clean.
- One file per workspace, named like the usage sidecar (a hash of the real path, which is inside
  too). Read once when the workspace loads; a missing file means no record; an unreadable or
  malformed one is renamed aside (`.bad`), logged, and replaced by an empty record.
- Each recorded operation marks the record changed and wakes the saver, which writes it at once
  (atomically and durably, in a worker thread; writes that arrive meanwhile share the next
  save), and once more when the workspace closes. The memory itself is acknowledged by its own
  commit: a crash between the commit and the save loses that operation's record, never a memory.
- Bounded: the newest `record.MAX_CHANGES` changes (`memd.core.provenance.record`).
- Only the workspace's handlers and its change listener call it, on the event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Mapping

import anyio
import msgspec

from memd.config import state_dir
from memd.core.provenance import record
from memd.fs import storage
from memd_client import protocol as p
from memd_client.errors import RpcError

logger = logging.getLogger(__name__)

_decoder = msgspec.json.Decoder(record.Record)
_encoder = msgspec.json.Encoder()


def provenance_path(root: str, env: Mapping[str, str] | None = None) -> str:
    """Return the sidecar path for workspace `root`."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(state_dir(env), "provenance", f"{digest}.json")


class ProvenanceStore:
    """One workspace's provenance record, in memory, saved to its sidecar file."""

    def __init__(self, root: str, *, clock: Callable[[], float], path: str | None = None) -> None:
        self.root = root
        self.path = path or provenance_path(root)
        self._clock = clock
        self.changes: list[record.Change] = []
        self.last_operation = 0
        self._dirty = False
        self._wake = anyio.Event()

    def load(self) -> None:
        """Read the sidecar (blocking; run it in a thread); see the module rules."""
        try:
            data = _decoder.decode(storage.read_regular_bytes(self.path))
        except FileNotFoundError:
            return
        except (OSError, msgspec.DecodeError, ValueError) as exc:
            logger.warning("provenance %s is unreadable (%s); starting afresh", self.path, exc)
            with contextlib.suppress(OSError):
                os.replace(self.path, self.path + ".bad")
            return
        self.changes = record.trimmed(list(data.changes))
        self.last_operation = data.last_operation

    def add(self, edits: Iterable[record.Edit], writer: p.Writer | record.Writer | None) -> int:
        """Record `edits` as one operation by `writer` (None: `record.UNKNOWN`) now; return the
        operation's number (0: there was nothing to record)."""
        edits = list(edits)
        if not edits:
            return 0
        self.last_operation += 1
        stamped = record.stamp(
            edits,
            operation=self.last_operation,
            at=self._clock(),
            writer=_author(writer),
        )
        self.changes = record.trimmed([*self.changes, *stamped])
        self._dirty = True
        self._wake.set()
        return self.last_operation

    async def keep_saving(self) -> None:
        """Save whenever there are changes; save once more at the end."""
        try:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                await self.save()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self.save()

    async def save(self) -> None:
        """Write the record if it changed (atomic and durable; errors are logged, not raised)."""
        if not self._dirty:
            return
        self._dirty = False
        data = _encoder.encode(
            record.Record(
                workspace=self.root, changes=self.changes, last_operation=self.last_operation
            )
        )
        try:
            await anyio.to_thread.run_sync(self._write, data)
        except (OSError, RpcError) as exc:
            self._dirty = True
            message = exc.message if isinstance(exc, RpcError) else str(exc)
            logger.warning("cannot save provenance %s: %s", self.path, message)

    def _write(self, data: bytes) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        storage.write_atomic(self.path, data.decode())


def _author(writer: p.Writer | record.Writer | None) -> record.Writer:
    if writer is None:
        return record.UNKNOWN
    if isinstance(writer, record.Writer):
        return writer
    return record.Writer(
        client=writer.client, version=writer.version, origin=writer.origin, session=writer.session
    )
