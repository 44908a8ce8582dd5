"""What each agent session was already given, so a file hook never gives it the same entry twice.

A Claude Code file hook (`memd context --hook claude` on PreToolUse/PostToolUse) asks for the
memories about a file every time the agent reads or edits one. Without a memory of what it
already said, the agent would read the same three entries on every edit. `context` with a
`session` leaves out what that session was given and records what it gives now.

Rules:
- What a session's ledger leaves out (`not_given`): only ranked material, layer B's entries and
  the sources' chunks. Layer A (the workspace's and the user-wide Security and Instruction
  rules a block with the always layer gives) is never left out, only recorded: those rules must
  be in every prompt's block, since the agent's context may have been compacted since the last.
- A call with `repeat` (the prompt hook's) leaves nothing out and records what it gives: a
  prompt's block stands on its own, as without a session. So the prompt hook and the file hook
  of one Claude Code session share one ledger: the file hook skips what the prompt hook gave
  (its rules, and the entries relevant to the prompt), never the reverse.
- A session is named by the caller (Claude Code's `session_id`) within one workspace: the same
  id in another workspace is another session.
- An entry is known by what it says, not where it sits: its category (or a source's file) and
  its text, hashed. An entry whose text changed is a new entry and may be given again; one that
  only moved to another line is not.
- Bounded: at most MAX_SESSIONS sessions (the one used longest ago is forgotten first) and
  MAX_GIVEN entries a session (the oldest forgotten first), each a 64-bit hash: about 15 MB
  in the worst case. Forgetting only means an entry may be given once more, never that one is
  withheld.
- It lives in the daemon's memory: a daemon restart forgets every session (the agent may then
  read an entry once more). Nothing about sessions is written to disk.
- Pure data: no clock, no I/O; the caller filters before packing a block and records after.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.prompt_block import ChatHit, Placed, SourceChunk

MAX_SESSIONS = 128
MAX_GIVEN = 1024
MAX_SESSION_CHARS = 200
"""The longest session id `context` takes (Claude Code's are 36-character UUIDs)."""


def entry_key(kind: str, text: str) -> int:
    """The key of one given item: `kind` is its category ("Quirk") or, for a read-only source's
    chunk, "file:" and its path; `text` what it says. Python's own string hash: 64 bits, stable
    for the daemon's life, which is as long as the ledger lives."""
    return hash((kind, text))


def placed_key(placed: Placed) -> int:
    """The key of an entry or chunk that went into a block."""
    if placed.category is None:
        return entry_key(f"file:{placed.path}", placed.entry.content)
    return _memory_key(placed.category, placed.entry, placed.source)


def _memory_key(category: Category, entry: Entry, source: str) -> int:
    kind = category.name if source == "memory" else f"{source}:{category.name}"
    return entry_key(kind, entry.content)


def was_given(category: Category, entry: Entry, given: frozenset[int]) -> bool:
    """Whether the workspace's `entry` of `category` is among the keys `given`."""
    return _memory_key(category, entry, "memory") in given


class Candidates(NamedTuple):
    """What a block may hold: layer A's rules, the user-wide rules, layer B's ranked entries
    and the sources' chunks (`prompt_block.build`'s inputs)."""

    always: Sequence[tuple[Category, Entry]]
    user_wide: Sequence[tuple[Category, Entry]]
    relevant: Sequence[tuple[Category, Entry, float]]
    chunks: Sequence[SourceChunk]
    chats: Sequence[ChatHit] = ()


def not_given(candidates: Candidates, given: frozenset[int]) -> tuple[Candidates, int]:
    """Return the candidates without the ranked ones in `given` (layer A is kept whole: see
    the module's rules), and how many were left out."""
    if not given:
        return candidates, 0
    relevant = [(c, e, s) for c, e, s in candidates.relevant if not was_given(c, e, given)]
    chunks = [k for k in candidates.chunks if entry_key(f"file:{k.path}", k.text) not in given]
    chats = [k for k in candidates.chats if entry_key(f"file:{k.path}", k.text) not in given]
    kept = candidates._replace(relevant=relevant, chunks=chunks, chats=chats)
    left_out = sum(map(len, candidates)) - sum(map(len, kept))
    return kept, left_out


class GivenLedger:
    """The entries given to each recent session (see the module's rules)."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, max_given: int = MAX_GIVEN) -> None:
        self._sessions: OrderedDict[tuple[str, str], OrderedDict[int, None]] = OrderedDict()
        self._max_sessions = max_sessions
        self._max_given = max_given

    def given(self, workspace: str, session: str) -> frozenset[int]:
        """The keys `session` in `workspace` was given (and still remembered)."""
        found = self._sessions.get((workspace, session))
        return frozenset(found) if found is not None else frozenset()

    def record(self, workspace: str, session: str, keys: Iterable[int]) -> None:
        """Remember that `session` in `workspace` was given `keys`; forget the session used
        longest ago, and a session's oldest keys, past the bounds."""
        name = (workspace, session)
        known = self._sessions.pop(name, None)
        if known is None:
            known = OrderedDict()
        self._sessions[name] = known  # the most recently used goes last
        for key in keys:
            known[key] = None
            known.move_to_end(key)
        while len(known) > self._max_given:
            known.popitem(last=False)
        while len(self._sessions) > self._max_sessions:
            self._sessions.popitem(last=False)

    def __len__(self) -> int:
        """How many sessions are remembered."""
        return len(self._sessions)
