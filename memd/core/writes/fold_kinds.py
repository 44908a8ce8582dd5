"""Which entries of a kind `cleanup` may fold one into another (issue 33's kinds).

Cleanup folds an entry into another when a store of it there would be skipped
(`memd.core.writes.cleanup`). The procedure and episode kinds keep more than rules do, as
their stores do, so a cleanup never throws away what a store would have kept:
- A rule (HackLM's categories and custom ones): no further limit; the store's judgement decides.
- A procedure folds only into one of the same name (`procedures.same_name`: case and spacing
  aside; two lines without a name count as the same name): two names are two workflows,
  whatever words their steps share, and each keeps its slug and its outcome record
  (`memd.core.writes.procedure_slugs`).
- An episode folds only into one that says the very same thing (its whitespace runs aside):
  "Deploy failed." and "2026-11-01: Deploy failed." may be two days' failures
  (`memd.core.writes.episode_store`).
"""

from __future__ import annotations

from memd.core.format.categories import Kind
from memd.core.format.procedures import read_procedure, same_name


def may_fold(kind: Kind, winner: str, loser: str) -> bool:
    """True when cleanup may fold the entry saying `loser` into the one saying `winner`, both
    of `kind` (see the module rules); the store's judgement must still agree."""
    if kind == "procedure":
        kept, folded = read_procedure(winner).name, read_procedure(loser).name
        if kept is None or folded is None:
            return kept is None and folded is None
        return same_name(kept, folded)
    if kind == "episode":
        return winner.split() == loser.split()
    return True
