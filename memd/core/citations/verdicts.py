"""Whether each citation still holds, from the gathered `CodeFacts` (STUB: paths only)."""

from __future__ import annotations

from collections.abc import Sequence

from memd.core.citations.model import Anchor, AnchorCheck, CodeFacts, EntryCheck, PathFact


def check_anchor(anchor: Anchor, facts: CodeFacts, baseline: str = "") -> AnchorCheck:
    """Return one anchor's verdict against the facts (see `model` for the statuses)."""
    fact = facts.paths.get(anchor.key, PathFact())
    if fact.found:
        return AnchorCheck(anchor, "ok", f"{fact.found[0]} exists")
    if fact.ignored or not fact.known:
        return AnchorCheck(anchor, "unverifiable", f"{anchor.key} was never tracked here")
    if fact.moved_to:
        return AnchorCheck(anchor, "moved", f"renamed to {fact.moved_to}", fact.moved_to)
    return AnchorCheck(anchor, "missing", f"{anchor.key} no longer exists")


def check_entry(anchors: Sequence[Anchor], facts: CodeFacts, baseline: str = "") -> EntryCheck:
    """Return the entry's verdict: stale if any anchor is missing or moved, ok if it has
    anchors and none is, none without anchors."""
    checks = tuple(check_anchor(anchor, facts, baseline) for anchor in anchors)
    if not checks:
        return EntryCheck("none")
    stale = any(check.status in ("missing", "moved") for check in checks)
    return EntryCheck("stale" if stale else "ok", checks)


def stale_note(check: EntryCheck) -> str:
    """Return one sentence saying what is wrong with a stale entry ("" for any other):
    "cites src/old.ts, which no longer exists; moved to src/new.ts"."""
    parts = []
    for anchor_check in check.anchors:
        if anchor_check.status == "moved":
            parts.append(
                f"cites {anchor_check.anchor.text}, which no longer exists; "
                f"moved to {anchor_check.moved_to}"
            )
        elif anchor_check.status == "missing":
            parts.append(f"cites {anchor_check.anchor.text}, which no longer exists")
    return "; ".join(parts)


def fixed_content(content: str, check: EntryCheck) -> str | None:
    """Return `content` with each moved citation rewritten to where it went, or None when
    nothing moved (what `memd check --fix` stores)."""
    moved = [c for c in check.anchors if c.status == "moved" and c.moved_to]
    if not moved:
        return None
    pieces, position = [], 0
    for anchor_check in sorted(moved, key=lambda c: c.anchor.start):
        pieces.append(content[position : anchor_check.anchor.start])
        pieces.append(anchor_check.moved_to or anchor_check.anchor.text)
        position = anchor_check.anchor.end
    pieces.append(content[position:])
    return "".join(pieces)
