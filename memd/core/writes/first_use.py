"""What HackLM's first use of a category file wrote over, decided without a clock.

HackLM creates a missing category file with an unlocked exists-check and, later, a plain write
of its first-use header (`ensureMemoryDir`, hacklm-spec.md §1.3 (2)): `# Decision`, a blank
line, `Memories stored by HackLM Memory.`, a blank line. If memd creates that file between the
two and acknowledges stores into it, the header write truncates them away, however late it
lands (an extension host stalled for seconds).

Rule: a new version of a category file is that overwrite when
- its header (every non-blank line that is not an entry) is exactly HackLM's first-use header,
  and the version before it had memd's own header (`Category.header`, the one memd writes when
  it creates a file: HackLM's activation form, `# Decisions` and a description line), or that
  header after HackLM's cleanup turned its description line into an entry (hacklm-spec.md
  §4.1: `# Decisions` alone, and `- Architectural commitments made in this project.`), and
- it is the same file (device and inode: HackLM's `writeFile` truncates in place, while git,
  `mv` and editors that save through a temp file make a new one).
Every other rewrite keeps the header as it was: HackLM's delete, upsert, append, cleanup and
migration keep every `#` line and its `Memories stored by` line, and memd keeps every line it
does not change. So a delete, an update or a hand edit by anyone is never taken for it, however
soon after memd's write it lands.

What comes back: only entries this daemon acknowledged (`Acknowledged`), present in the version
before, whose slug and text the new version both lack (HackLM's own entry written behind its
header stays as it is, beside them).

A workspace unloaded for being idle hands its acknowledged entries (and the file's identity)
on to its next load (`stand_in`), so a header that lands meanwhile is still caught; a daemon
restart forgets them.

Not recognised (said in the README): HackLM's activation (`ensureMemoryFiles`) writing its
header over a file memd created a moment before, since that header is memd's own; and a
first-use header written over a file that already had one.
"""

from __future__ import annotations

from collections.abc import Iterable

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.writes.catalog import Catalog

FIRST_USE_DESCRIPTION = "Memories stored by HackLM Memory."

Key = tuple[str | None, str]
"""An entry as acknowledged: its slug and its text."""


def key_of(entry: Entry) -> Key:
    """The acknowledgement key of `entry`."""
    return entry.slug, entry.content


def first_use_header(category: Category) -> str:
    """The header HackLM's `ensureMemoryDir` writes into a missing file, exact."""
    return f"# {category.name}\n\n{FIRST_USE_DESCRIPTION}\n\n"


def header_lines(catalog: Catalog) -> tuple[str, ...]:
    """The non-blank lines of `catalog` that are not entries, stripped, in file order."""
    entry_lines = {entry.line for entry in catalog.entries}
    return tuple(
        raw.strip()
        for number, raw in enumerate(catalog.raws, start=1)
        if number not in entry_lines and raw.strip()
    )


def _lines(header: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in header.splitlines() if line.strip())


def is_first_use_overwrite(category: Category, before: Catalog, after: Catalog) -> bool:
    """Return True if `after`'s header is HackLM's first-use header and `before`'s was memd's
    (the caller checks that both are the same file: see the module rule)."""
    return header_lines(after) == _lines(first_use_header(category)) and has_memds_header(
        category, before
    )


def has_memds_header(category: Category, catalog: Catalog) -> bool:
    """Return True if `catalog`'s header is memd's, as memd wrote it or with its description
    line made an entry by HackLM's cleanup (§4.1)."""
    header, memds = header_lines(catalog), _lines(category.header)
    if header == memds:
        return True
    title, described = memds[:1], memds[1:]
    return header == title and all(
        any(entry.content == line for entry in catalog.entries) for line in described
    )


def stand_in(category: Category, entries: Iterable[Key]) -> Catalog:
    """A version of a file with memd's header and just `entries` (slugged): what a file memd
    let go of is compared with when it is loaded again (its acknowledged entries are all that
    matters of it here)."""
    lines = "".join(f"- [{slug}] {content}\n" for slug, content in entries if slug is not None)
    return Catalog.from_text(category.header + lines)


def lost_to_first_use(
    category: Category,
    before: Catalog | None,
    after: Catalog | None,
    acknowledged: Iterable[Key],
) -> list[Entry]:
    """Return the entries of `before` that this daemon acknowledged (`acknowledged`) and that
    HackLM's first-use header wrote over in `after`, in file order; empty unless `after` is
    that overwrite of `before` (see the module rule).

    `before` and `after` must be versions of the same file (device and inode); None (no
    file) is never an overwrite.
    """
    if before is None or after is None or not is_first_use_overwrite(category, before, after):
        return []
    ours = set(acknowledged)
    slugs = {entry.slug for entry in after.entries if entry.slug is not None}
    texts = {entry.content for entry in after.entries}
    return [
        entry
        for entry in before.entries
        if key_of(entry) in ours and entry.slug not in slugs and entry.content not in texts
    ]
