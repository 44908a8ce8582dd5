"""Proposals into the review inbox end to end, with a real daemon (`propose`; `extract`,
`cleanup` and `check` with `--propose`): each proposal is dry-run through the normal store
path first, so a text the category already has is skipped and a bad one refused; the rest wait
in `.memory/inbox.md` (on disk before the reply) with a reason naming their source, and nothing
is stored until a person accepts."""

from __future__ import annotations

from pathlib import Path

from memd_client import Client, protocol as p
from tests.conftest import DaemonProcess


def _entries(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("- [")]


def test_propose_queues_skips_and_refuses(daemon: DaemonProcess, workspace: Path) -> None:
    memory = workspace / ".memory"
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Quirk", content="The CI runner has no IPv6.", origin="user")
        result = client.propose(
            "gap",
            [
                p.Proposal(
                    category="Quirk",
                    content="Tests need the fake clock.",
                    reason="the user corrected the agent",
                ),
                p.Proposal(category="Quirk", content="The CI runner has no IPv6."),
                p.Proposal(category="Nonsense", content="Anything."),
                p.Proposal(category="Quirk", content="token ghp_" + "a1B2" * 9),
            ],
        )
        queued, skipped, unknown, secret = result.outcomes
        assert queued.action == "queued" and queued.inbox_id is not None
        assert "gap analysis: the user corrected the agent" in queued.message
        assert skipped.action == "skipped" and "IPv6" in skipped.message
        assert unknown.action == "refused" and "Nonsense" in unknown.message
        assert secret.action == "refused" and secret.inbox_id is None
        assert "1 queued, 1 skipped, 2 refused" in result.message
        # On disk before the reply, and nothing stored yet.
        inbox = (memory / "inbox.md").read_text()
        assert queued.inbox_id in inbox and "gap analysis" in inbox
        assert "fake clock" not in (memory / "quirks.md").read_text()
        assert [e.id for e in client.inbox().entries] == [queued.inbox_id]
        # The same proposal again is not queued twice.
        again = client.propose(
            "gap", [p.Proposal(category="Quirk", content="Tests need the fake clock.")]
        )
        assert again.outcomes[0].inbox_id == queued.inbox_id
        assert len(_entries(memory / "inbox.md")) == 1
        accepted = client.resolve(queued.inbox_id, "accept")
        assert accepted.stored is not None and accepted.stored.action == "stored"
    assert "Tests need the fake clock." in (memory / "quirks.md").read_text()
    assert _entries(memory / "inbox.md") == []
