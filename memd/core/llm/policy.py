"""When memd asks a model for a second opinion, and what its answer may change (pure rules).

The model is a second opinion, fail-open: it can turn a store into the update the write decision
makes for a reworded entry, never throw away a new rule or value, never make a store fail.
Anything it does not say clearly is "no opinion", and the store is then
exactly what it would be without a model.

Rules:
- A store is worth asking about (`worth_asking`) when it has no slug (a slug names an entry of
  its own, never merged), is not a dry run, goes into a category that is not an episode log,
  and the write decision stored it as a new entry with a `matched` candidate that it does not
  contradict (`conflict`: a reversed rule, a changed value or choice is never a restatement).
- A "restates X" verdict turns the store into an update of X, as the write decision updates a
  reworded entry: X's line takes the new text and keeps its slug, X's old text goes to the
  archive (`memd undo` brings it back). Never a skip: the write decision already skips, on its
  own, every text that says nothing new, and a model is asked only where it did not; there a
  skip on a wrong "yes" would throw away a reversed or wider rule (bench/redundancy: a model
  called "prefer B to A" a restatement of "prefer A to B").
- The verdict applies only to the entry it names, as it stands when the store is written: if X
  was edited or removed since, or the write decision has changed its mind (now a skip, an
  update or a conflict on its own), the write decision stands.
- Gap analysis is due (`gap_due`) on every `every`th successful store of a workspace (0: never).
"""

from __future__ import annotations


def worth_asking(
    *,
    slug: str | None,
    dry_run: bool,
    episode_category: bool,
    action: str,
    matched: bool,
    conflict: bool,
) -> bool:
    """Whether a store whose write decision (a dry run of it) came out as `action` is one a model
    is asked about (see the module rules)."""
    return (
        slug is None
        and not dry_run
        and not episode_category
        and action == "stored"
        and matched
        and not conflict
    )


def gap_due(successful_stores: int, every: int) -> bool:
    """Whether the `successful_stores`th successful store of a workspace (counted from 1) is one
    after which gap analysis runs, with `gap_every` = `every` (0: never)."""
    return every > 0 and successful_stores > 0 and successful_stores % every == 0


def verdict_message(restated: str) -> str:
    """The sentence a store result adds when a model's verdict turned it into an update of the
    entry that said `restated`."""
    shown = restated if len(restated) <= 80 else restated[:79].rstrip() + "…"
    return (
        f'A model judged it a restatement of "{shown}", so that entry was updated to the new '
        "wording (the old text is in the archive)."
    )
