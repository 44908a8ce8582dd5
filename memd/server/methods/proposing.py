"""What `extract`, `cleanup` and `check` queue into the review inbox with `propose`: each
finding becomes a proposal (`memd.server.methods.review.propose` and `queue_prune`), so a
person accepts or rejects it in `memd review` instead of the tool storing or deleting it.

Rules:
- `extract`: each candidate is a "store" proposal into its category, its reason the kind of
  sentence it came from ("extract: correction").
- `cleanup`: each entry the plan would prune (over its category's limit) and each stale entry
  (every citation gone) is a "prune" proposal, its reason the plan's why. Merges and slug
  assignments are not proposed: they keep every entry's meaning, and `--apply` makes them.
- `check`: each stale entry with a fix (its moved citations rewritten) is a "store" of that fix
  under the entry's slug (accepting updates the entry, its old text archived); one without a
  fix is a "prune", its reason the check's note.
- An entry without a slug cannot be pruned or updated from the inbox (both name it by slug):
  it is "refused", and the message says to give it one with `memd cleanup --apply`.
"""

from __future__ import annotations

from collections.abc import Sequence

from memd.core.review.proposals import ProposalSource
from memd.server.methods import review
from memd.server.workspaces.workspace import Workspace
from memd_client import protocol as p


def _no_slug(category: str, content: str) -> p.ProposalOutcome:
    return p.ProposalOutcome(
        action="refused",
        category=category,
        content=content,
        message=(
            "This entry has no slug, so the inbox cannot name it; give it one with "
            "`memd cleanup --apply`, then propose again."
        ),
    )


async def extracted(
    workspace: Workspace, candidates: Sequence[p.Candidate], store_into: review.StoreInto
) -> p.ProposeResult:
    """Queue each candidate of `extract` as a "store" proposal."""
    proposals = [
        p.Proposal(category=c.category, content=c.content, reason=c.kind) for c in candidates
    ]
    params = p.ProposeParams(workspace=workspace.root, source="extract", proposals=proposals)
    return await review.propose(workspace, params, store_into)


async def prunes(
    workspace: Workspace,
    source: ProposalSource,
    found: Sequence[tuple[p.EntryInfo, str]],
) -> list[p.ProposalOutcome]:
    """Queue a "prune" of each entry of `found` (with why), in order."""
    outcomes = []
    for entry, why in found:
        if entry.slug is None:
            outcomes.append(_no_slug(entry.category, entry.content))
            continue
        category = workspace.category(entry.category)
        outcomes.append(
            await review.queue_prune(workspace, category, entry.slug, entry.content, source, why)
        )
    return outcomes


async def cleanup_plan(workspace: Workspace, result: p.CleanupResult) -> p.ProposeResult:
    """Queue what a cleanup plan would prune, and its stale entries, as "prune" proposals."""
    found = [(pruned.entry, pruned.why or "over the category's limit") for pruned in result.pruned]
    found += [(stale.entry, f"stale: {stale.why}") for stale in result.stale]
    outcomes = await prunes(workspace, "cleanup", found)
    message = review.propose_message(outcomes)
    return p.ProposeResult(outcomes=outcomes, message=message, workspace=workspace.root)


async def stale_entries(
    workspace: Workspace, entries: Sequence[p.CheckedEntry], store_into: review.StoreInto
) -> p.ProposeResult:
    """Queue each stale entry of a check: its fix as a "store", else a "prune"."""
    outcomes = []
    for entry in entries:
        if entry.status != "stale":
            continue
        if entry.slug is None:
            outcomes.append(_no_slug(entry.category, entry.content))
        elif entry.fix is not None:
            fix = p.Proposal(
                category=entry.category, content=entry.fix, slug=entry.slug, reason=entry.note
            )
            params = p.ProposeParams(workspace=workspace.root, source="check", proposals=[fix])
            outcomes += (await review.propose(workspace, params, store_into)).outcomes
        else:
            info = p.EntryInfo(
                category=entry.category,
                file=entry.file,
                line=entry.line,
                slug=entry.slug,
                content=entry.content,
            )
            outcomes += await prunes(workspace, "check", [(info, entry.note)])
    message = review.propose_message(outcomes)
    return p.ProposeResult(outcomes=outcomes, message=message, workspace=workspace.root)
