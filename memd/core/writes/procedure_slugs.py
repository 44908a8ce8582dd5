"""Which slug a procedure is stored under (`procedure`, issue 33).

Rules:
- A given slug is used as given (validated by the store): the caller names the entry, so the
  store upserts it, whatever it held.
- Else the first entry of the procedure file with the same name (`procedures.same_name`:
  case and spacing aside) gives its slug, so storing a procedure again by name updates it in
  place (its old text goes to the archive).
- Else a new slug is derived from the name (`slugs.derive_slug`, made unique within the file):
  a procedure with a different name never takes over another's slug, even when their names
  derive the same one ("deploy-staging", then "deploy-staging-2").
"""

from __future__ import annotations

from collections.abc import Sequence

from memd.core.format.mdformat import Entry
from memd.core.format.procedures import read_procedure, same_name
from memd.core.writes.slugs import derive_slug


def procedure_slug(name: str, entries: Sequence[Entry], given: str | None = None) -> str:
    """The slug to store the procedure `name` under, given the file's `entries` (see the
    module rules)."""
    if given is not None:
        return given
    for entry in entries:
        read = read_procedure(entry.content)
        if entry.slug and read.name is not None and same_name(read.name, name):
            return entry.slug
    return derive_slug(name, {entry.slug for entry in entries if entry.slug})
