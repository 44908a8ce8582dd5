"""The line format of `.memory/inbox.md`, the review inbox: what waits for a person to accept
before it becomes a memory.

Rules:
- An inbox entry is one line in the category files' own shape, `- [ID] [LABEL] CONTENT`, so
  HackLM (which never reads this file: it is not one of its five) and a pull-request diff see an
  ordinary `- [slug] content` line whose content starts with a bracketed label.
- `ID` is the entry's inbox id (`p-` and 8 hex digits, from its kind, target and content): the
  handle `memd review`, the RPC `resolve` and the MCP tools use.
- `LABEL` is `KIND · CATEGORY · REASON` or `KIND · CATEGORY/SLUG · REASON`: the kind (`store`:
  accepting stores CONTENT into CATEGORY, under SLUG if given; `prune`: accepting deletes SLUG
  from CATEGORY, the change `cleanup` proposes), the target, and why it waits, in words.
  A reason never holds "]" or a line break (`clean_reason` makes it so).
- A "store" proposal that updates an entry carries a guard at the end of its reason,
  `(replaces text #HASH)` (`guard`: 8 hex digits of the entry's text then): accepting it updates
  the entry only while it still says that text (`guarded_hash` reads it back), so a person's
  edit made after the proposal is never overwritten by accepting it.
- Round trip: `parse_line(render_line(item)) == item` for every item `clean` would allow, and
  `render_line(parse_line(text)) == text` for every line `parse_line` accepts. Lines that are
  not inbox entries (the header, prose, a hand-edited bullet) are kept by the writer untouched
  and never offered for review.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

import msgspec

INBOX_FILE = "inbox.md"
INBOX_HEADER = (
    "# Inbox\n\n"
    "Memories waiting for a person's review (memd). Accept, edit or reject them with"
    " `memd review`; nothing here is a memory until accepted. HackLM does not read this file.\n\n"
)
SEPARATOR = " · "
ItemKind = Literal["store", "prune"]
KINDS: tuple[ItemKind, ...] = ("store", "prune")

_LINE = re.compile(
    r"- \[(p-[0-9a-f]{8})\] \[(store|prune) · ([A-Z][A-Za-z0-9]{1,31})(?:/([^\s\]/·]+))? · "
    r"([^\]\n\r]+)\] (\S(?:[^\n\r]*\S)?)"
)


class InboxItem(msgspec.Struct, frozen=True, kw_only=True):
    """One entry waiting for review: see the module rules."""

    id: str
    kind: ItemKind
    category: str
    slug: str | None
    reason: str
    content: str


def clean_reason(reason: str) -> str:
    """Return `reason` fit for a label: one line, no "]" (it would end the label), no " · "."""
    text = " ".join(reason.replace("]", ")").replace("·", "-").split())
    return text or "waiting for review"


_GUARD = re.compile(r" \(replaces text #([0-9a-f]{8})\)$")


def text_hash(text: str) -> str:
    """Return the 8 hex digits that stand for an entry's `text` in a guard."""
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def guard(reason: str, replaced: str) -> str:
    """Return `reason` ending with the guard for the entry text `replaced` (see the rules)."""
    return f"{reason} (replaces text #{text_hash(replaced)})"


def guarded_hash(reason: str) -> str | None:
    """Return the text hash a reason's guard names, or None if it has none."""
    found = _GUARD.search(reason)
    return found.group(1) if found else None


def item_id(kind: ItemKind, category: str, slug: str | None, content: str) -> str:
    """Return the inbox id of an entry: a hash of what accepting it would do."""
    digest = hashlib.sha256(f"{kind}\0{category}\0{slug or ''}\0{content}".encode()).hexdigest()
    return "p-" + digest[:8]


def new_item(
    kind: ItemKind, category: str, slug: str | None, content: str, reason: str
) -> InboxItem:
    """Return the inbox entry for a proposal (its id computed, its reason cleaned)."""
    return InboxItem(
        id=item_id(kind, category, slug, content),
        kind=kind,
        category=category,
        slug=slug,
        reason=clean_reason(reason),
        content=content,
    )


def render_line(item: InboxItem) -> str:
    """Return the line (without line ending) for `item`."""
    target = f"{item.category}/{item.slug}" if item.slug else item.category
    return f"- [{item.id}] [{item.kind}{SEPARATOR}{target}{SEPARATOR}{item.reason}] {item.content}"


def parse_line(text: str) -> InboxItem | None:
    """Return the inbox entry `text` (one line, without its ending) holds, or None."""
    match = _LINE.fullmatch(text)
    if match is None:
        return None
    ident, kind, category, slug, reason, content = match.groups()
    if reason != clean_reason(reason):
        return None
    return InboxItem(
        id=ident,
        kind="store" if kind == "store" else "prune",
        category=category,
        slug=slug,
        reason=reason,
        content=content,
    )


def parse(text: str) -> tuple[InboxItem, ...]:
    """Return every inbox entry of a file's `text`, in file order (the first of a repeated id)."""
    seen: set[str] = set()
    found = []
    for line in text.split("\n"):
        item = parse_line(line.removesuffix("\r"))
        if item is not None and item.id not in seen:
            seen.add(item.id)
            found.append(item)
    return tuple(found)


def without(text: str, ident: str) -> str:
    """Return `text` with the entry lines of inbox id `ident` removed, every other byte kept."""
    kept = []
    for line in text.splitlines(keepends=True):
        item = parse_line(line.rstrip("\r\n"))
        if item is None or item.id != ident:
            kept.append(line)
    return "".join(kept)
