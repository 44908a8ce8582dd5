"""Cleanup through the daemon (plan, apply, archive) and the anyio client."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core.format import mdformat
from memd_client import Client, InvalidEntry
from memd_client.aio import AsyncClient
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd

HAND_WRITTEN = (
    "# Security\n\nRules that must NEVER be broken. Always read this file.\n\n"
    + "".join(f"- [rule-{n}] Guard secret{n} with key{n} in vault{n}.\n" for n in range(33))
    + "- Review dependency updates before merging\n"
    + "- Review dependency updates before merging, including transitive ones\n"
    + "Some prose a person wrote.\n"
)


def write_the_first_hour(memory: Path) -> None:
    """A kept entry that takes its loser's slug, and 41 Decision entries scoring 30 each: one
    over the limit of 40, a tie."""
    memory.mkdir()
    (memory / "quirks.md").write_text(
        "- Indent Python code with tabs, overriding PEP8\n- [tabs] Indent Python code with tabs\n"
    )
    (memory / "decisions.md").write_text(
        "".join(f"- [rule-{n}] Guard secret{n} with key{n} in vault{n}.\n" for n in range(41))
    )


FIRST_HOUR_PLAN = [
    "Cleanup would merge 2 entries into 1, prune 1 entry over the limit and give 1 entry a slug; "
    "nothing was written.",
    'keep quirks.md:1 "Indent Python code with tabs, overriding PEP8": the most specific wording; '
    "it gets the slug [tabs] from quirks.md:2",
    'fold quirks.md:2 [tabs] "Indent Python code with tabs" into quirks.md:1: a shorter form of it',
    'prune decisions.md:1 [rule-0] "Guard secret0 with key0 in vault0.": over the Decision limit '
    'of 40; it scores 30, as does decisions.md:2 [rule-1] "Guard secret1 with key1 in vault1.", '
    "which stays as the newer entry (further down the file)",
]
"""The plan of `write_the_first_hour`, each action line without its front end's layout."""


def test_the_cli_plan_names_each_entry_once_and_says_how_to_apply_it(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    write_the_first_hour(memory)
    plan = memd("cleanup", cwd=workspace, socket=daemon.socket_path)
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    assert [" ".join(line.split(maxsplit=1)) for line in lines[:-1]] == FIRST_HOUR_PLAN
    assert lines[1].startswith("  keep   ") and lines[3].startswith("  prune  ")
    # The command to apply repeats the options that chose this daemon (and workspace).
    assert lines[-1] == f"Run `memd cleanup --apply --socket {daemon.socket_path}` to carry it out."
    assert "apply: true" not in plan.stdout and plan.stdout.lower().count("nothing") == 1

    applied = memd("cleanup", "--apply", cwd=workspace, socket=daemon.socket_path)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[0] == (
        "Cleanup merged 2 entries into 1, pruned 1 entry over the limit and gave 1 entry a slug; "
        "the removed entries are kept in .memory/archive.md."
    )
    assert "apply" not in applied.stdout
    elsewhere = workspace.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".memory").mkdir()
    (elsewhere / ".memory" / "quirks.md").write_text("- [a] Use tabs\n- [b] Use tabs\n")
    other = memd("cleanup", "--workspace", "../elsewhere", cwd=workspace, socket=daemon.socket_path)
    assert other.stdout.splitlines()[-1] == (
        f"Run `memd cleanup --apply --workspace {elsewhere} --socket {daemon.socket_path}` to "
        "carry it out."
    )
    # The newer of the tied entries stayed; the older one is in the archive.
    decisions = (memory / "decisions.md").read_text()
    assert "[rule-0]" not in decisions and "[rule-1]" in decisions and "[rule-40]" in decisions
    archive = (memory / "archive.md").read_text()
    assert "| Decision | pruned: over the Decision limit of 40 (score 30) | [rule-0] " in archive
    assert (memory / "quirks.md").read_text() == (
        "- [tabs] Indent Python code with tabs, overriding PEP8\n"
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
