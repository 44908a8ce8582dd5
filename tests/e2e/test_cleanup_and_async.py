"""Cleanup through the daemon (plan, apply, archive) and the anyio client."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core.format import mdformat
from memd_client import Client, InvalidEntry
from memd_client.aio import AsyncClient
from tests.conftest import DaemonProcess

pytestmark = pytest.mark.e2e

HAND_WRITTEN = (
    "# Security\n\nRules that must NEVER be broken. Always read this file.\n\n"
    + "".join(f"- [rule-{n}] Guard secret{n} with key{n} in vault{n}.\n" for n in range(33))
    + "- Review dependency updates before merging\n"
    + "- Review dependency updates before merging, including transitive ones\n"
    + "Some prose a person wrote.\n"
)


def test_cleanup_plans_then_applies_and_archives_everything_it_removes(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    path = memory / "security.md"
    path.write_text(HAND_WRITTEN)
    with Client(daemon.socket_path, workspace=workspace) as client:
        plan = client.cleanup()
        assert not plan.applied
        assert path.read_text() == HAND_WRITTEN
        assert len(plan.merged) == 1
        assert [e.content for e in plan.merged[0].removed] == [
            "Review dependency updates before merging"
        ]
        assert plan.merged[0].why == ["a shorter form of it"]
        assert len(plan.pruned) == 35 - 1 - 30
        assert plan.slugged or plan.merged[0].slug

        applied = client.cleanup(apply=True)
        assert applied.applied
        assert client.stats().categories[4].entries == 30
        assert client.cleanup().message.startswith("Memory is already clean")

    text = path.read_text()
    entries = mdformat.entries(mdformat.parse(text))
    assert len(entries) == 30
    assert all(e.slug for e in entries)
    assert "Some prose a person wrote.\n" in text
    assert text.startswith("# Security\n\nRules that must NEVER be broken.")
    archive = (memory / "archive.md").read_text()
    assert archive.count(" | Security | ") == 1 + len(plan.pruned)
    assert "merged into [" in archive and "(a shorter form of it)" in archive
    assert "pruned: over the Security limit of 30" in archive


async def test_async_client_speaks_the_same_protocol(
    daemon: DaemonProcess, workspace: Path
) -> None:
    async with AsyncClient(daemon.socket_path, workspace=workspace) as client:
        stored = await client.store(category="preference", content="Prefer anyio over asyncio.")
        assert stored.category == "Preference"
        assert stored.action == "stored"
        assert (await client.query("anyio")).results[0].slug == stored.slug
        assert (await client.get(category="Preference", slug=stored.slug or "")).entries
        assert (await client.list()).entries[0].content == "Prefer anyio over asyncio."
        assert (await client.stats()).total == 1
        assert (await client.status()).pid == daemon.process.pid
        assert (await client.cleanup()).applied is False
        with pytest.raises(InvalidEntry):
            await client.store(category="Preference", content="a bell\x07 rings")
        deleted = await client.delete(category="Preference", slug=stored.slug or "")
        assert deleted.deleted
