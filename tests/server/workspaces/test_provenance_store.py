"""The provenance sidecar (`memd.server.workspaces.provenance_store`): its bound, and its log
read back by a new load."""

from __future__ import annotations

from pathlib import Path

import anyio

from memd.core.provenance import record
from memd.server.workspaces.provenance_store import ProvenanceStore

WRITER = record.Writer(client="t", origin="user")


def _edit(slug: str) -> record.Edit:
    return record.Edit(action="store", category="Quirk", slug=slug, text="t", replaced=None)


def test_the_record_keeps_the_newest_changes(tmp_path: Path) -> None:
    async def main() -> list[str]:
        store = ProvenanceStore("/w", clock=lambda: 0.0, path=str(tmp_path / "p.jsonl"))
        for i in range(record.MAX_CHANGES + 3):
            store.add([_edit(str(i))], WRITER)
        return [c.slug or "" for c in store.changes]

    slugs = anyio.run(main)
    assert len(slugs) == record.MAX_CHANGES
    assert slugs[0] == "3" and slugs[-1] == str(record.MAX_CHANGES + 2)


def test_a_saved_log_is_read_back_by_the_next_load(tmp_path: Path) -> None:
    path = str(tmp_path / "p.jsonl")

    async def main() -> None:
        store = ProvenanceStore("/w", clock=lambda: 1.0, path=path)
        store.add([_edit("a")], WRITER)
        store.add([_edit("b"), _edit("c")], WRITER)
        await store.save()

    anyio.run(main)
    again = ProvenanceStore("/w", clock=lambda: 2.0, path=path)
    again.load()
    assert [(c.operation, c.slug) for c in again.changes] == [(1, "a"), (2, "b"), (2, "c")]
    assert again.last_operation == 2
