"""The review inbox's methods: holding an agent's store for review (`hold`), listing the inbox
(`inbox`) and resolving an entry (`resolve`). Which stores wait is decided by
`memd.core.review.policy`; the file is written by the workspace's `InboxFile`.

Rules:
- A store that must wait is first run as a dry run through the normal store path, so it is
  checked exactly like a direct store (a secret, an over-long or blank text is refused the same
  way) and a text the category already has is skipped, not queued. Otherwise its normalised text
  is appended to `.memory/inbox.md` durably before the reply, whose action is "pending" and
  whose message says how to accept it.
- Accepting stores the entry (or the person's edited text) through the normal store path as
  the user, then takes it out of the inbox; a store that fails leaves it waiting. Accepting a
  "prune" deletes its entry through the normal delete path (archived). Rejecting archives the
  text with the reason, then takes it out. Nothing leaves the inbox before it is kept elsewhere.
- A proposal (`propose`: from extract, gap analysis, session review, cleanup or check) goes
  through the same dry run as a held store: one the dry run skips is left out ("skipped", its
  message says which entry already says it), one it refuses is "refused" with why; else it is
  appended durably ("queued", with its inbox id), its reason naming the source
  (`memd.core.review.proposals`); one already waiting (the same inbox id) is "skipped", its
  message and inbox id naming the entry that waits, so proposing twice queues once. One whose
  text a person rejected before (the archive's "rejected in review" records,
  `proposals.rejected_before`: the same text, never a merely similar one) is "skipped", its
  message saying when; the archive is read once per `propose`, in a worker thread, at most
  `max_archive_bytes` of it (one memd cannot read skips nothing: the proposal is queued).
  Whoever proposes, nothing is stored until a person accepts.
- A "prune" proposal (cleanup's would-prune and check's stale entries) is queued only while its
  entry is in the file under that slug saying exactly that text; accepting deletes it only if
  it still does (else it stays waiting, and the message says the entry changed).
- A "store" proposal under the slug of an entry that exists (check's fix) is guarded by that
  entry's text (`inbox_format.guard`): accepting updates the entry only while it still says it
  (a store with `replaces`), else it stays waiting, and the message says the entry changed.
- Resolutions of one inbox run one at a time (`InboxFile.resolving`): an entry accepted by two
  clients at once is stored once, and the second is told it is not waiting any more.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Literal

import anyio
import msgspec

from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category
from memd.core.review import inbox_format, policy, proposals
from memd.core.review.inbox_format import InboxItem
from memd.core.writes import transitions
from memd.server.methods import provenance
from memd.server.methods.episodes import read_archive
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p
from memd_client.errors import EntryNotFound, RpcError

log = logging.getLogger(__name__)

StoreInto = Callable[..., Awaitable[p.StoreResult]]


def modes(
    workspace: Workspace, user: Mapping[str, policy.ReviewMode]
) -> dict[str, policy.ReviewMode]:
    """Return the workspace's review modes: its `.memory/memd.toml`'s `[review]` over memd's
    config file's (`user`), per category."""
    return policy.merged(user, workspace.category_set.review)


def entry_info(item: InboxItem) -> p.InboxEntry:
    """Return the wire form of an inbox entry."""
    return p.InboxEntry(
        id=item.id,
        kind=item.kind,
        category=item.category,
        slug=item.slug,
        reason=item.reason,
        content=item.content,
    )


async def hold(
    workspace: Workspace,
    category: Category,
    params: p.StoreParams,
    modes: Mapping[str, policy.ReviewMode],
    store_into: StoreInto,
) -> p.StoreResult | None:
    """Put `params`' store into the inbox if it must wait (see the module rules) and return its
    "pending" result; None if it goes direct."""
    if category.kind != "rule":
        return None
    origin = "agent" if params.writer is None else params.writer.origin
    reason = policy.pending_reason(origin, category.name, params.content, modes)
    if reason is None:
        return None
    checked = await store_into(workspace, category, params.content, slug=params.slug, dry_run=True)
    if checked.action == "skipped":
        return msgspec.structs.replace(checked, dry_run=params.dry_run)
    item = inbox_format.new_item("store", category.name, params.slug, checked.content, reason)
    added = True if params.dry_run else await workspace.inbox.add(item)
    waits = "would wait" if params.dry_run else "waits" if added else "already waits"
    message = (
        f"Not stored yet: it {waits} for a person's review in {inbox_format.INBOX_FILE} "
        f"({item.id}, {item.reason}); they accept it with `memd review`."
    )
    return p.StoreResult(
        action="pending",
        category=category.name,
        file=inbox_format.INBOX_FILE,
        line=0,
        slug=params.slug,
        content=item.content,
        similarity=checked.similarity,
        matched=checked.matched,
        message=message,
        dry_run=params.dry_run,
        workspace=workspace.root,
        inbox_id=item.id,
        pending_reason=item.reason,
    )


async def inbox(workspace: Workspace) -> p.InboxResult:
    """List the inbox's entries."""
    items = await workspace.inbox.items()
    return p.InboxResult(
        entries=[entry_info(item) for item in items],
        file=os.path.join(workspace.memory_dir, inbox_format.INBOX_FILE),
        workspace=workspace.root,
    )


async def resolve(
    workspace: Workspace, params: p.ResolveParams, store_into: StoreInto
) -> p.ResolveResult:
    """Accept or reject one inbox entry (see the module rules).

    Raises:
        EntryNotFound: no inbox entry has that id.
        CategoryNotFound: the entry's category is not one of the workspace's.
    """
    async with workspace.inbox.resolving:
        return await _resolve(workspace, params, store_into)


async def _resolve(
    workspace: Workspace, params: p.ResolveParams, store_into: StoreInto
) -> p.ResolveResult:
    """`resolve` once the inbox's resolving lock is held."""
    items = {item.id: item for item in await workspace.inbox.items()}
    item = items.get(params.id)
    if item is None:
        await workspace.inbox.take(params.id)  # raises EntryNotFound, saying what to do
        raise AssertionError("unreachable")
    category = workspace.category(item.category)
    if params.action == "reject":
        why = " ".join((params.reason or "rejected").split())
        record = ArchivedEntry(
            category=category,
            slug=item.slug,
            content=item.content,
            reason=f"{proposals.REJECTED} ({item.reason}): {why}",
        )
        await workspace.inbox.take(item.id, archive=record)
        return p.ResolveResult(
            id=item.id,
            action="reject",
            entry=entry_info(item),
            message=f"Rejected {item.id}; its text is in the archive.",
            workspace=workspace.root,
        )
    if item.kind == "prune":
        return await _accept_prune(workspace, category, item)
    guarded = inbox_format.guarded_hash(item.reason)
    replaces = None
    if guarded is not None:
        replaces = _entry_text(workspace, category, item.slug)
        if replaces is None or inbox_format.text_hash(replaces) != guarded:
            return _changed_since(workspace, category, item, "updated")
    content = params.content or item.content
    try:
        stored = await store_into(workspace, category, content, slug=item.slug, replaces=replaces)
    except EntryNotFound:
        if replaces is None:
            raise
        return await _resolve(workspace, params, store_into)  # changed since the look above
    await workspace.inbox.take(item.id)
    return p.ResolveResult(
        id=item.id,
        action="accept",
        entry=entry_info(item),
        stored=stored,
        message=f"Accepted {item.id}: {stored.message}",
        workspace=workspace.root,
    )


def _changed_since(
    workspace: Workspace, category: Category, item: InboxItem, done: str
) -> p.ResolveResult:
    """The answer to accepting `item` whose entry changed since it was proposed: nothing done,
    and it still waits."""
    return p.ResolveResult(
        id=item.id,
        action="accept",
        entry=entry_info(item),
        message=(
            f"Not {done}: [{item.slug}] in {category.file} changed or is gone since "
            f"{item.id} was proposed; it still waits: reject it, or edit the file."
        ),
        workspace=workspace.root,
    )


async def _accept_prune(
    workspace: Workspace, category: Category, item: InboxItem
) -> p.ResolveResult:
    """Delete a "prune" entry's target if it still says the proposed text (see the rules)."""
    assert item.slug is not None
    command = transitions.Delete(
        slug=item.slug, content=item.content, reason=f"pruned in review: {item.reason}"
    )
    deleted = await workspace.actor(category).delete(command)
    provenance.record_delete(workspace, category, deleted.entry if deleted.deleted else None)
    if not deleted.deleted:
        return _changed_since(workspace, category, item, "pruned")
    await workspace.inbox.take(item.id)
    return p.ResolveResult(
        id=item.id,
        action="accept",
        entry=entry_info(item),
        deleted=True,
        message=f"Pruned [{item.slug}] from {category.file} (it is in the archive).",
        workspace=workspace.root,
    )


async def propose(
    workspace: Workspace, params: p.ProposeParams, store_into: StoreInto
) -> p.ProposeResult:
    """Queue each proposal into the inbox after its dry run (see the module rules)."""
    rejected = await _rejected_before(workspace) if params.proposals else {}
    outcomes = [
        await _propose_one(workspace, params.source, proposal, store_into, rejected)
        for proposal in params.proposals
    ]
    return p.ProposeResult(
        outcomes=outcomes, message=propose_message(outcomes), workspace=workspace.root
    )


def propose_message(outcomes: list[p.ProposalOutcome]) -> str:
    """Return one sentence counting what became of the proposals."""
    counts = dict.fromkeys(("queued", "skipped", "refused"), 0)
    for outcome in outcomes:
        counts[outcome.action] += 1
    told = ", ".join(f"{n} {action}" for action, n in counts.items() if n)
    if not told:
        return "Nothing was proposed."
    after = " Accept or reject them with `memd review`." if counts["queued"] else ""
    return f"Proposals: {told}.{after}"


async def _rejected_before(workspace: Workspace) -> dict[str, str]:
    """The texts rejected in review in the workspace's archive, with when (see the rules)."""

    def read() -> dict[str, str]:
        records = read_archive(workspace.archive_path, workspace.max_archive_bytes)
        return proposals.rejected_before((r.date, r.reason, r.content) for r in records)

    try:
        return await anyio.to_thread.run_sync(read)
    except (RpcError, OSError) as exc:
        log.warning("%s: rejected texts not read (%s); proposals are queued", workspace.root, exc)
        return {}


async def _propose_one(
    workspace: Workspace,
    source: proposals.ProposalSource,
    proposal: p.Proposal,
    store_into: StoreInto,
    rejected: Mapping[str, str],
) -> p.ProposalOutcome:
    def outcome(action: Literal["skipped", "refused"], message: str) -> p.ProposalOutcome:
        return p.ProposalOutcome(
            action=action, category=proposal.category, content=proposal.content, message=message
        )

    try:
        category = workspace.category(proposal.category)
        if category.kind != "rule":
            return outcome(
                "refused",
                f"{category.name} is not a category of rules; propose into one such as "
                "Instruction or Quirk (episodes and procedures are stored directly).",
            )
        checked = await store_into(
            workspace, category, proposal.content, slug=proposal.slug, dry_run=True
        )
    except RpcError as exc:
        return outcome("refused", exc.message)
    if checked.action == "skipped":
        return outcome("skipped", checked.message)
    when = rejected.get(proposals.same_text_key(checked.content))
    if when is not None:
        return outcome("skipped", f"rejected before on {when}; not queued again.")
    reason = proposals.proposal_reason(source, proposal.reason)
    current = _entry_text(workspace, category, proposal.slug)
    if current is not None:
        reason = inbox_format.guard(reason, current)
    item = inbox_format.new_item("store", category.name, proposal.slug, checked.content, reason)
    return await _queue(workspace, item)


def _entry_text(workspace: Workspace, category: Category, slug: str | None) -> str | None:
    """The text of `category`'s entry `slug` as it stands (None: no slug, or no such entry)."""
    if slug is None:
        return None
    entries = workspace.actor(category).snapshot.entries
    return next((entry.content for entry in entries if entry.slug == slug), None)


async def queue_prune(
    workspace: Workspace,
    category: Category,
    slug: str,
    content: str,
    source: proposals.ProposalSource,
    reason: str,
) -> p.ProposalOutcome:
    """Queue a "prune" of the entry `slug` (which says `content`) into the inbox (see the
    module rules); "skipped" if that entry is not in the file as it was."""
    item = inbox_format.new_item(
        "prune", category.name, slug, content, proposals.proposal_reason(source, reason)
    )
    present = any(
        entry.slug == slug and entry.content == content
        for entry in workspace.actor(category).snapshot.entries
    )
    if not present:
        return p.ProposalOutcome(
            action="skipped",
            category=category.name,
            content=content,
            message=f"[{slug}] is no longer in {category.file} as it was; nothing to prune.",
        )
    return await _queue(workspace, item)


async def _queue(workspace: Workspace, item: InboxItem) -> p.ProposalOutcome:
    added = await workspace.inbox.add(item)
    where = f"for review in {inbox_format.INBOX_FILE} ({item.id}, {item.reason})"
    return p.ProposalOutcome(
        action="queued" if added else "skipped",
        category=item.category,
        content=item.content,
        inbox_id=item.id,
        message=f"Waits {where}." if added else f"Already waits {where}; not queued again.",
    )
