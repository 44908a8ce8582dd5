"""`query` with `include_archived`: an archive memd cannot use (too big, not text) is named in
`unreadable`, and the live hits are still served."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import msgspec
import pytest

from memd.core.format.categories import HACKLM_CATEGORIES
from memd.core.format.mdformat import new_document, render
from memd.server.methods.handlers import Methods
from memd.server.rpc.session import Session
from memd.server.workspaces.registry import Registry
from memd.server.workspaces.workspace import WorkspaceSettings
from memd_client import protocol as p

ARCHIVE_HEAD = "# Archive\n\n"
RECORD = "- 2026-01-01 | Quirk | old-widgets | archived | Widgets once spun three times.\n"


@pytest.mark.parametrize(
    "archive",
    [
        (ARCHIVE_HEAD + RECORD * 400).encode(),  # over max_archive_bytes below
        ARCHIVE_HEAD.encode() + b"\xff\xfe not text\n",
    ],
    ids=["too-big", "not-utf8"],
)
async def test_an_unusable_archive_is_named_and_the_live_hits_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, archive: bytes
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    memory = tmp_path / "ws" / ".memory"
    memory.mkdir(parents=True)
    for category in HACKLM_CATEGORIES:
        (memory / category.file).write_text(render(new_document(category)))
    quirks = memory / "quirks.md"
    quirks.write_text(quirks.read_text() + "\n- [widgets] Widgets spin twice.\n")
    (memory / "archive.md").write_bytes(archive)
    limits = WorkspaceSettings(max_archive_bytes=4096)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time, limits=limits)
            _, query = Methods(registry, started=0.0, socket_path="unused").table["query"]
            params = p.QueryParams(
                workspace=str(memory.parent), query="widgets spin", include_archived=True
            )
            result = await query(params, Session())
            registry.close()
    assert isinstance(result, p.QueryResult)
    assert [hit.slug for hit in result.results] == ["widgets"]
    assert [problem.file for problem in result.unreadable] == ["archive.md"]


FILTERED = (
    ARCHIVE_HEAD
    + "- 2026-01-01 | Quirk | pruned | [old-widgets] Widgets once spun three times. #ops\n"
    + "- 2026-01-02 | Episode | consolidated | [old-spin] 2025-01-02: Widgets spun loose.\n"
)


@pytest.mark.parametrize(
    ("filters", "archived"),
    [
        ({}, {"old-widgets", "old-spin"}),
        ({"category": "Quirk"}, {"old-widgets"}),
        ({"tags": ["ops"]}, {"old-widgets"}),
        ({"min_score": 0.99}, set()),
        ({"sources": ["global"]}, set()),
    ],
    ids=["none", "category", "tags", "min-score", "no-memory-source"],
)
async def test_a_querys_filters_apply_to_archived_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filters: dict[str, object], archived: set[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    memory = tmp_path / "ws" / ".memory"
    memory.mkdir(parents=True)
    for category in HACKLM_CATEGORIES:
        (memory / category.file).write_text(render(new_document(category)))
    (memory / "archive.md").write_text(FILTERED)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time)
            _, query = Methods(registry, started=0.0, socket_path="unused").table["query"]
            params = msgspec.convert(
                {"workspace": str(memory.parent), "query": "widgets", "include_archived": True}
                | filters,
                p.QueryParams,
            )
            result = await query(params, Session())
            registry.close()
    assert isinstance(result, p.QueryResult)
    assert {hit.slug for hit in result.results if hit.archived} == archived
