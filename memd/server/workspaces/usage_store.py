"""The usage sidecar of one workspace: `$XDG_STATE_HOME/memd/usage/<id>.json`.

Rules:
- The Markdown stays the source of truth: usage lives here, never in `.memory/`.
- One file per workspace, named after a hash of its real path (the path is inside too). It is
  read once when the workspace loads; a missing file means no history; an unreadable or
  malformed one is renamed aside (`.bad`), logged, and replaced by an empty history, so bad
  state never stops the daemon.
- Changes are kept in memory and written (atomically and durably, like memory files) at most
  every SAVE_INTERVAL seconds while there are any, and once more when the workspace closes.
  Losing the last few seconds of counts in a crash is acceptable; losing a memory is not, and
  usage never touches memories.
- Only the workspace's actors and handlers call it, on the event loop; the file is written in
  a worker thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping

import anyio
import msgspec

from memd.config import state_dir
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search import usage
from memd.core.search.outcomes import Record
from memd.fs import storage
from memd_client.errors import RpcError

logger = logging.getLogger(__name__)

SAVE_INTERVAL = 10.0
NUDGE_TTL = 600.0


class UsageFile(msgspec.Struct, kw_only=True):
    """What the sidecar file holds."""

    workspace: str
    entries: dict[str, usage.Usage] = {}


_decoder = msgspec.json.Decoder(UsageFile)
_encoder = msgspec.json.Encoder()


def usage_path(root: str, env: Mapping[str, str] | None = None) -> str:
    """Return the sidecar path for workspace `root`."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(state_dir(env), "usage", f"{digest}.json")


class UsageStore:
    """One workspace's usage history, in memory, saved to its sidecar file."""

    def __init__(self, root: str, *, clock: Callable[[], float], path: str | None = None) -> None:
        self.root = root
        self.path = path or usage_path(root)
        self._clock = clock
        self.entries: dict[str, usage.Usage] = {}
        self._dirty = False
        self._nudges: dict[str, float] = {}
        self._nudged_at = -math.inf

    def load(self) -> None:
        """Read the sidecar (blocking; run it in a thread); see the module rules."""
        try:
            data = _decoder.decode(storage.read_regular_bytes(self.path))  # a FIFO never hangs
        except FileNotFoundError:
            return
        except (OSError, msgspec.DecodeError, ValueError) as exc:
            logger.warning("usage history %s is unreadable (%s); starting afresh", self.path, exc)
            with contextlib.suppress(OSError):
                os.replace(self.path, self.path + ".bad")
            return
        self.entries = dict(data.entries)
        self._nudges.clear()

    def record_recalls(self, found: Iterable[tuple[Category, Entry]]) -> None:
        """Count one recall of each entry in `found`."""
        now = self._clock()
        for category, entry in found:
            name = usage.key(category, entry)
            self.entries[name] = usage.recall(self.entries.get(name), now)
            self._nudges.pop(name, None)
            self._dirty = True

    def record_store(self, category: Category, entry: Entry, *, new: bool = False) -> None:
        """Record that `entry` was stored (`new`: a new entry, whose history starts empty, even
        where a deleted entry under the same key left one: its recalls and a procedure's
        outcomes are not the new one's) or updated (its history kept) now."""
        name = usage.key(category, entry)
        earlier = None if new else self.entries.get(name)
        self.entries[name] = usage.store(earlier, self._clock())
        self._nudges.pop(name, None)
        self._dirty = True

    def record_outcome(self, category: Category, entry: Entry, *, worked: bool) -> usage.Usage:
        """Count one reported success (`worked`) or failure of the procedure `entry`; return
        its history now."""
        name = usage.key(category, entry)
        found = self.entries[name] = usage.outcome(
            self.entries.get(name), self._clock(), worked=worked
        )
        self._nudges.pop(name, None)
        self._dirty = True
        return found

    def record(self, category: Category, entry: Entry) -> Record:
        """How often the procedure `entry` was reported to have worked and failed."""
        return usage.record_of(self.entries.get(usage.key(category, entry)))

    def make_boost(self) -> Callable[[Category, Entry], float]:
        """Return the ranking nudge per entry for one search (see `memd.core.search.usage.nudge`).

        Nudges are memoised per entry until its history changes, and all of them for at most
        NUDGE_TTL seconds (they drift by about a millionth of a score per minute); an entry
        without history costs one lookup.
        """
        now = self._clock()
        if not self._nudged_at <= now < self._nudged_at + NUDGE_TTL:
            self._nudges.clear()
            self._nudged_at = now
        entries, nudges, then = self.entries, self._nudges, self._nudged_at

        def boost(category: Category, entry: Entry) -> float:
            if not entries:
                return 1.0
            name = usage.key(category, entry)
            found = nudges.get(name)
            if found is None:
                history = entries.get(name)
                if history is None:
                    return 1.0
                found = nudges[name] = usage.nudge(history, then)
            return found

        return boost

    def unused(self, category: Category, entry: Entry) -> bool:
        """True when `entry` is an archive candidate (see `memd.core.search.usage.unused`)."""
        return usage.unused(self.entries.get(usage.key(category, entry)), self._clock())

    def last_recalled(self, category: Category, entry: Entry) -> float:
        """When `entry` was last recalled (Unix seconds; 0.0: never, or no history)."""
        history = self.entries.get(usage.key(category, entry))
        return 0.0 if history is None else history.recalled_at

    def forget_missing(self, present: Iterable[tuple[Category, Entry]]) -> int:
        """Drop the history of entries not in `present` (deleted, merged, edited away); return
        how many records were dropped."""
        keep = {usage.key(category, entry) for category, entry in present}
        gone = [name for name in self.entries if name not in keep]
        for name in gone:
            del self.entries[name]
            self._nudges.pop(name, None)
        self._dirty = self._dirty or bool(gone)
        return len(gone)

    async def keep_saving(self) -> None:
        """Save every SAVE_INTERVAL seconds while there are changes; save once more at the end."""
        try:
            while True:
                await anyio.sleep(SAVE_INTERVAL)
                await self.save()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self.save()

    async def save(self) -> None:
        """Write the history if it changed (atomic and durable; errors are logged, not raised)."""
        if not self._dirty:
            return
        self._dirty = False
        data = _encoder.encode(UsageFile(workspace=self.root, entries=self.entries))
        try:
            await anyio.to_thread.run_sync(self._write, data)
        except (OSError, RpcError) as exc:
            self._dirty = True
            message = exc.message if isinstance(exc, RpcError) else str(exc)
            logger.warning("cannot save usage history %s: %s", self.path, message)

    def _write(self, data: bytes) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        storage.write_atomic(self.path, data.decode())
