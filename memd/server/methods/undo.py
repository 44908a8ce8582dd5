"""The `undo` method: take back recorded write operations through the category actors (never
by writing a file here); `restore` is in `memd.server.methods.restore`.

Rules:
- Which operations an undo takes and the write that takes back each change:
  `memd.core.provenance.undo_plan`. Each operation is planned against the entries as they are
  (re-read first), its steps run one conditional write at a time (a delete that removes only a
  line still saying what the operation wrote, a store by slug that `replaces` it, a `Restore`
  that skips a slug or text the file holds), and each change's outcome is reported: reverted,
  unchanged, or refused with why. What an undo removes or replaces goes to the archive.
- `to` is an age ("30s", "10m", "2h", "1d", "1w" before now) or an ISO 8601 time, in the
  daemon's local time unless it names its zone (`parse_time`, here: it reads the clock and the
  time zone); every operation recorded after it is taken back.
- An undo is recorded as one operation per operation it took back (action "undo", `undoes`
  naming it), unless every change of it was refused: that operation stays the newest to undo
  (`to` goes past it). A dry run plans each older operation against what the newer ones'
  steps would leave, and writes and records nothing.
- An agent's undo (any origin but "user") never takes back a person's change (a hand edit, or
  a store or undo through the CLI: origin "user") or git's (origin "merged"): that change is
  refused, saying a person's `memd undo` can take it back. Nor does it bring back a text that
  an agent's store would have to leave for review (`memd.core.review.policy`).
"""

from __future__ import annotations

import datetime
import re
import time
from collections.abc import Callable, Mapping, Sequence

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.provenance import record, undo_plan
from memd.core.review import policy
from memd.core.writes import transitions
from memd.server.methods import provenance
from memd.server.workspaces.actor import CategoryActor
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import EntryNotFound, InvalidParams, RpcError

OTHERS = frozenset({"user", "merged"})
"""The origins of changes an agent's undo never takes back: a person's and git's."""

Clock = Callable[[], float]
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_RELATIVE = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")


def parse_time(text: str, now: float) -> float:
    """The Unix time `text` names: a relative age ("30s", "10m", "2h", "1d", "1w": that long
    before `now`) or an ISO 8601 time ("2026-11-20T14:05", local time unless it says its zone).

    Raises:
        ValueError: `text` is neither (the message says what to give).
    """
    said = text.strip().lower()
    relative = _RELATIVE.fullmatch(said)
    if relative is not None:
        return now - float(relative.group(1)) * _UNITS[relative.group(2)]
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time; give an age such as 10m, 2h or 1d, or an ISO time such "
            "as 2026-11-20T14:05."
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # local time, as a person reads their clock
    return moment.timestamp()


class Undo:
    """One `undo` call's context: the workspace, who undoes, and the review modes."""

    def __init__(
        self,
        workspace: Workspace,
        params: p.UndoParams,
        modes: Mapping[str, policy.ReviewMode],
        max_entry_chars: int,
    ) -> None:
        self.workspace = workspace
        self.params = params
        self.modes = modes
        self.max_entry_chars = max_entry_chars
        self.writer = provenance.current_writer()
        self.categories = {c.name: c for c in workspace.actors}

    async def run(self, now: Clock = time.time) -> p.UndoResult:
        """The `undo` method (see the module rules)."""
        after = None
        if self.params.to is not None:
            try:
                after = parse_time(self.params.to, now())
            except ValueError as exc:
                raise InvalidParams(str(exc)) from None
        operations = undo_plan.operations_to_undo(list(self.workspace.provenance.changes), after)
        if len(operations) > undo_plan.MAX_OPERATIONS:
            raise InvalidParams(
                f"That would undo {len(operations)} operations, more than "
                f"{undo_plan.MAX_OPERATIONS} at once; give a later `to` time."
            )
        await self.workspace.refresh(self.workspace.categories)
        entries: dict[str, list[Entry]] = {
            c.name: list(actor.snapshot.entries) for c, actor in self.workspace.actors.items()
        }
        changes: list[p.UndoneChange] = []
        done: list[int] = []
        for operation in operations:
            if not self.params.dry_run:
                await self.workspace.refresh(self.workspace.categories)
                entries = {
                    c.name: list(a.snapshot.entries) for c, a in self.workspace.actors.items()
                }
            steps = [self._checked(step) for step in undo_plan.plan(operation, entries)]
            if self.params.dry_run:
                reported = [_undone(step, "reverted" if _writes(step) else None) for step in steps]
                entries = undo_plan.after_steps(entries, steps)
            else:
                reported = await self._carry_out(operation[0].operation, steps)
            changes += reported
            if any(change.outcome != "refused" for change in reported):
                done.append(operation[0].operation)
        return p.UndoResult(
            changes=changes,
            operations=done,
            dry_run=self.params.dry_run,
            message=_message(operations, changes, done, self.params),
            workspace=self.workspace.root,
        )

    def _checked(self, step: undo_plan.Step) -> undo_plan.Step:
        """`step`, refused if an agent would take back someone else's change or bring back a
        text that waits for review (see the module rules)."""
        origin = "agent" if self.writer is None else self.writer.origin
        if origin != "user" and step.change.origin in OTHERS and step.kind != "unchanged":
            whose = "git's" if step.change.origin == "merged" else "a person's"
            return undo_plan.Step(
                change=step.change,
                kind="refused",
                reason=f"it is {whose} change, which an agent never takes back; a person can "
                "undo it with `memd undo`",
            )
        back = step.change.replaced
        if step.kind not in ("set_back", "put_back", "reword") or back is None:
            return step
        category = self.categories.get(step.change.category)
        if category is None or category.kind != "rule":
            return step
        why = policy.pending_reason(origin, category.name, back, self.modes)
        if why is None:
            return step
        return undo_plan.Step(
            change=step.change,
            kind="refused",
            reason=f"it would bring back a text an agent's store leaves for review ({why}); a "
            "person can undo it with `memd undo`",
        )

    async def _carry_out(
        self, operation: int, steps: Sequence[undo_plan.Step]
    ) -> list[p.UndoneChange]:
        """Run `steps` in order and record what they changed as one undo of `operation`."""
        edits: list[record.Edit] = []
        reported: list[p.UndoneChange] = []
        for step in steps:
            if not _writes(step):
                reported.append(_undone(step, None))
                continue
            try:
                outcome, made, now_slug = await self._write(step, operation)
            except RpcError as exc:
                outcome, made, now_slug = f"refused: {exc.message}", [], None
            edits += made
            reported.append(_undone(step, outcome, now_slug))
        if edits or any(change.outcome != "refused" for change in reported):
            marker = record.Edit(
                action="undo",
                category=steps[0].change.category,
                slug=None,
                text=None,
                replaced=None,
            )
            self.workspace.provenance.add(edits or [marker], self.writer, undoes=operation)
        return reported

    async def _write(
        self, step: undo_plan.Step, operation: int
    ) -> tuple[str, list[record.Edit], str | None]:
        """One step's write: its outcome ("reverted", or "refused: why"), what it changed, and
        the slug a put-back entry got when it is not its old one."""
        change = step.change
        category = self.categories[change.category]
        actor = self.workspace.actor(category)
        reason = f"undone by memd undo (operation {operation})"
        text, old = change.text or "", change.replaced or ""
        edit = edit_maker(category)
        if step.kind == "remove":
            removed = await actor.delete(
                transitions.Delete(slug=step.target, content=text, reason=reason)
            )
            if not removed.deleted:
                return f"refused: {_changed_just_now(change)}", [], None
            return "reverted", [edit(step.target, None, text)], None
        if step.kind == "set_back":
            try:
                stored = await actor.store(
                    transitions.Store(
                        content=old,
                        slug=step.target,
                        replaces=text,
                        reason=reason,
                        max_length=max(self.max_entry_chars, len(old)),
                        allow_secrets=True,  # it was in the file: it comes back as it was
                    )
                )
            except EntryNotFound:
                return f"refused: {_changed_just_now(change)}", [], None
            return "reverted", [edit(step.target, stored.content, text)], None
        slug = None if step.kind == "reword" else change.slug
        back = await put_back(actor, slug, old, by_slug=True)
        if back.action != "stored":
            present = back.matched
            if present is not None and present.content == old:
                return "unchanged: the category holds its text already", [], None
            return f"refused: {_changed_just_now(change)}", [], None
        made = [edit(back.slug, old, None)]
        now_slug = back.slug if back.slug != change.slug else None
        if step.kind == "reword":
            removed = await actor.delete(transitions.Delete(slug=None, content=text, reason=reason))
            if not removed.deleted:
                return (
                    "refused: the old text is back, but the reworded line changed just now "
                    "and was kept",
                    made,
                    now_slug,
                )
            made.append(edit(None, None, text))
        return "reverted", made, now_slug


async def put_back(
    actor: CategoryActor, slug: str | None, content: str, *, by_slug: bool = False
) -> transitions.StoreOutcome:
    """Insert `content` word for word under `slug` (None: a derived one) unless the file holds
    that slug or (unless `by_slug`) that text by now (`transitions.Restore`)."""
    command = transitions.Restore(slug=slug, content=content, kept_elsewhere=True, by_slug=by_slug)
    outcome = await actor.submit(command)
    if not isinstance(outcome, transitions.StoreOutcome):
        raise TypeError(f"a {type(outcome).__name__} came back for a restore")
    return outcome


def edit_maker(
    category: Category, action: record.VersionAction = "undo"
) -> Callable[[str | None, str | None, str | None], record.Edit]:
    def edit(slug: str | None, text: str | None, replaced: str | None) -> record.Edit:
        return record.Edit(
            action=action, category=category.name, slug=slug, text=text, replaced=replaced
        )

    return edit


def _writes(step: undo_plan.Step) -> bool:
    return step.kind not in ("unchanged", "refused")


def _changed_just_now(change: record.Change) -> str:
    look = f"`memd blame {change.slug}`" if change.slug else "`memd list`"
    return f"it changed while the undo ran; see {look}, then run `memd undo` again"


def _undone(
    step: undo_plan.Step, outcome: str | None, now_slug: str | None = None
) -> p.UndoneChange:
    """The wire form of one change's outcome ("reverted", "unchanged: why", "refused: why";
    None: the step's own kind and reason)."""
    change = step.change
    if outcome is None:
        said: p.UndoOutcome = "refused" if step.kind == "refused" else "unchanged"
        reason = step.reason
    else:
        head, _, reason = outcome.partition(": ")
        said = (
            "refused" if head == "refused" else "unchanged" if head == "unchanged" else "reverted"
        )
    return p.UndoneChange(
        operation=change.operation,
        action=change.action,
        at=change.at,
        category=change.category,
        slug=change.slug,
        text=change.text,
        replaced=change.replaced,
        outcome=said,
        reason=reason,
        now_slug=now_slug,
    )


def _message(
    operations: Sequence[Sequence[record.Change]],
    changes: Sequence[p.UndoneChange],
    done: Sequence[int],
    params: p.UndoParams,
) -> str:
    """One line for a person: what was (or would be) taken back, and what was refused."""
    if not operations:
        since = "" if params.to is None else f" after {params.to}"
        return (
            f"Nothing to undo: no write is recorded{since} that was not undone already "
            "(`memd blame SLUG` shows an entry's history)."
        )
    counts = {
        outcome: sum(1 for c in changes if c.outcome == outcome)
        for outcome in ("reverted", "unchanged", "refused")
    }
    verb = "Would undo" if params.dry_run else "Undid"
    first = operations[0][0]
    what = (
        f"operation {first.operation} ({first.action} by {first.client})"
        if len(operations) == 1
        else f"{len(done)} of {len(operations)} operations"
    )
    message = (
        f"{verb} {what}: {counts['reverted']} reverted, {counts['unchanged']} unchanged, "
        f"{counts['refused']} refused."
    )
    if counts["refused"]:
        message += (
            " A refused change's line changed since; its reason says how to look. An operation "
            "all of whose changes were refused stays the newest to undo (`--to` goes past it)."
        )
    return message
