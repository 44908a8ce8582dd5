"""`cleanup --apply` promotes a recurring lesson into a new Quirk: never over a Quirk someone
wrote, however alike the two read."""

from __future__ import annotations

import datetime
import time
from pathlib import Path

import anyio
import pytest

from memd.core.format.categories import HACKLM_CATEGORIES
from memd.core.format.mdformat import new_document, render
from memd.server.methods.handlers import Methods
from memd.server.rpc.session import Session
from memd.server.workspaces.registry import Registry
from memd_client import protocol as p

HAND_WRITTEN = "Migrations time out on the prod replica; batching the backfill fixes them."


def _episode(days_ago: int) -> str:
    day = (datetime.date.today() - datetime.timedelta(days=days_ago)).isoformat()
    event = "Migration timed out on the prod replica; batching the backfill fixed it."
    return f"- [{day}-migration] {day}: {event}"


async def test_a_promoted_lesson_is_a_new_quirk_and_the_hand_written_one_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    memory = tmp_path / "ws" / ".memory"
    memory.mkdir(parents=True)
    for category in HACKLM_CATEGORIES:
        (memory / category.file).write_text(render(new_document(category)))
    quirks = memory / "quirks.md"
    quirks.write_text(quirks.read_text() + f"\n- [prod-backfill] {HAND_WRITTEN}\n")
    episodes = [_episode(days) for days in (30, 20, 10)]
    (memory / "episodes.md").write_text("# Episodes\n\n" + "\n".join(episodes) + "\n")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as services:
            registry = Registry(services, clock=time.time)
            _, cleanup = Methods(registry, started=0.0, socket_path="unused").table["cleanup"]
            params = p.CleanupParams(workspace=str(memory.parent), apply=True)
            result = await cleanup(params, Session())
            registry.close()
    assert isinstance(result, p.CleanupResult)
    [promoted] = result.promoted
    assert promoted.stored is not None and promoted.stored.action == "stored"
    assert promoted.stored.slug != "prod-backfill"
    text = quirks.read_text()
    assert f"- [prod-backfill] {HAND_WRITTEN}\n" in text
    assert f"[{promoted.stored.slug}] {promoted.content}" in text
