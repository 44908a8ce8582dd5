"""The usage sidecar: loading (missing, bad), forgetting deleted entries, saving atomically."""

from __future__ import annotations

import json
from pathlib import Path

from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.server.workspaces.actor import Snapshot
from memd.server.workspaces.usage_store import UsageStore

KEEP = Entry(line=3, slug="keep", content="Keep this.")
GONE = Entry(line=4, slug="gone", content="Deleted since.")


async def test_missing_then_saved_then_forgotten(tmp_path: Path) -> None:
    path = tmp_path / "u.json"
    store = UsageStore("/w", clock=lambda: 1000.0, path=str(path))
    store.load()
    assert store.entries == {}
    store.record_recalls([(Category.DECISION, KEEP), (Category.DECISION, GONE)])
    await store.save()
    assert set(json.loads(path.read_text())["entries"]) == {"Decision/keep", "Decision/gone"}
    assert store.forget_missing([(Category.DECISION, KEEP)]) == 1
    await store.save()
    assert set(json.loads(path.read_text())["entries"]) == {"Decision/keep"}


def test_a_bad_file_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "u.json"
    path.write_text('{"workspace": 3}')
    store = UsageStore("/w", clock=lambda: 0.0, path=str(path))
    store.load()
    assert store.entries == {}
    assert (tmp_path / "u.json.bad").exists()
    assert not path.exists()


def test_snapshots_hand_on_an_index_but_never_keep_older_versions() -> None:
    first = Snapshot(None, 0.0)
    built = first.index
    second = Snapshot(None, 1.0, previous=first)
    third = Snapshot(None, 2.0, previous=second)  # second's index was never built
    assert third._previous_index is built
    assert not hasattr(third, "_previous")


async def test_outcomes_are_saved_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "u.json"
    store = UsageStore("/w", clock=lambda: 1000.0, path=str(path))
    store.record_outcome(Category.DECISION, KEEP, worked=True)
    store.record_outcome(Category.DECISION, KEEP, worked=True)
    store.record_outcome(Category.DECISION, KEEP, worked=False)
    await store.save()
    again = UsageStore("/w", clock=lambda: 1000.0, path=str(path))
    again.load()
    assert again.record(Category.DECISION, KEEP) == (2, 1)
    assert again.record(Category.DECISION, GONE) == (0, 0)


def test_a_sidecar_from_before_outcomes_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "u.json"
    old = {"recalls": 2, "recalled_at": 5.0, "stored_at": 1.0}
    path.write_text(json.dumps({"workspace": "/w", "entries": {"Decision/keep": old}}))
    store = UsageStore("/w", clock=lambda: 0.0, path=str(path))
    store.load()
    assert store.entries["Decision/keep"].recalls == 2
    assert store.record(Category.DECISION, KEEP) == (0, 0)
