"""Proposals into the review inbox end to end, with a real daemon (`propose`; `extract`,
`cleanup` and `check` with `--propose`): each proposal is dry-run through the normal store
path first, so a text the category already has is skipped and a bad one refused; the rest wait
in `.memory/inbox.md` (on disk before the reply) with a reason naming their source, and nothing
is stored until a person accepts."""

from __future__ import annotations

from pathlib import Path

from memd_client import Client, protocol as p
from tests.conftest import DaemonProcess
from tests.e2e.test_citations import _git, memd, repo
from tests.polling_sync import wait_until

__all__ = ["repo"]  # the fixture: a git repository with some code


def _commit_then(repo: Path, *change: str) -> None:
    """Commit the memories as they are, then make and commit `change` to the code (git args)."""
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "memories")
    _git(repo, *change)
    _git(repo, "commit", "-q", "-m", "the code changed")


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


def test_extract_propose_queues_candidates_and_stores_nothing(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    message = "Actually, we deploy with Helm, not kubectl. I prefer pnpm over npm."
    done = memd("extract", "--propose", message, cwd=workspace, daemon=daemon)
    assert done.returncode == 0, done.stderr
    assert "2 queued" in done.stdout and "memd review" in done.stdout
    entries = _entries(memory / "inbox.md")
    assert len(entries) == 2 and all("[store · " in line for line in entries)
    assert any("extract: correction" in line and "Helm" in line for line in entries)
    assert (
        not any(memory.glob("decisions.md")) or "Helm" not in (memory / "decisions.md").read_text()
    )
    both = memd("extract", "--propose", "--store", message, cwd=workspace, daemon=daemon)
    assert both.returncode != 0 and "not allowed with" in both.stderr


def test_cleanup_propose_queues_prunes_that_accepting_deletes(
    daemon: DaemonProcess, repo: Path
) -> None:
    memory = repo / ".memory"
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Quirk", content="The gone value lives in `src/gone.ts` for now.", slug="gone"
        )
        client.store(category="Quirk", content="Retry flaky calls twice.", slug="retry")
        _commit_then(repo, "rm", "-q", "src/gone.ts")
        done = memd("cleanup", "--propose", cwd=repo, daemon=daemon)
        assert done.returncode == 0, done.stderr
        assert "queued: Quirk: The gone value" in done.stdout
        # Nothing is deleted until a person accepts.
        assert "[gone]" in (memory / "quirks.md").read_text()
        (waiting,) = client.inbox().entries
        assert waiting.kind == "prune" and waiting.slug == "gone"
        assert waiting.reason.startswith("cleanup: stale")
        accepted = client.resolve(waiting.id, "accept")
        assert accepted.deleted
    assert "[gone]" not in (memory / "quirks.md").read_text()
    assert "The gone value" in (memory / "archive.md").read_text()
    assert "[retry]" in (memory / "quirks.md").read_text()


def test_an_accepted_prune_of_an_entry_changed_since_keeps_it_and_waits(
    daemon: DaemonProcess, repo: Path
) -> None:
    memory = repo / ".memory"
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Quirk", content="The gone value lives in `src/gone.ts` for now.", slug="gone"
        )
        _commit_then(repo, "rm", "-q", "src/gone.ts")
        proposed = client.check(propose=True).proposed
        assert proposed is not None
        (queued,) = proposed.outcomes
        assert queued.action == "queued" and queued.inbox_id is not None
        # Someone rewrites the entry before the review.
        client.store(
            category="Quirk",
            content="The gone value moved to a service.",
            slug="gone",
            origin="user",
        )
        kept = client.resolve(queued.inbox_id, "accept")
        assert not kept.deleted and "still waits" in kept.message
        assert [e.id for e in client.inbox().entries] == [queued.inbox_id]
    assert "- [gone] The gone value moved to a service." in (memory / "quirks.md").read_text()


def test_check_propose_queues_a_moved_citations_fix_as_a_store(
    daemon: DaemonProcess, repo: Path
) -> None:
    memory = repo / ".memory"
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Quirk", content="Connect lives in `src/old.ts` with retries.", slug="connect"
        )
        _commit_then(repo, "mv", "src/old.ts", "src/new.ts")
        done = memd("check", "--propose", cwd=repo, daemon=daemon)
        assert "1 queued" in done.stdout, done.stdout + done.stderr
        (waiting,) = client.inbox().entries
        assert waiting.kind == "store" and waiting.slug == "connect"
        assert "src/new.ts" in waiting.content and waiting.reason.startswith("check: ")
        assert "src/old.ts" in (memory / "quirks.md").read_text()
        accepted = client.resolve(waiting.id, "accept")
        assert accepted.stored is not None and accepted.stored.action == "updated"
    assert (
        "- [connect] Connect lives in `src/new.ts` with retries."
        in (memory / "quirks.md").read_text()
    )


def test_an_accepted_fix_of_an_entry_edited_since_keeps_the_edit_and_waits(
    daemon: DaemonProcess, repo: Path
) -> None:
    memory = repo / ".memory"
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Quirk", content="Connect lives in `src/old.ts` with retries.", slug="connect"
        )
        _commit_then(repo, "mv", "src/old.ts", "src/new.ts")
        proposed = client.check(propose=True).proposed
        assert proposed is not None and proposed.outcomes[0].action == "queued"
        (waiting,) = client.inbox().entries
        # A person edits the entry by hand before the review.
        quirks = memory / "quirks.md"
        edited = "- [connect] Connect lives in `src/old.ts`; retries were removed."
        quirks.write_text(
            quirks.read_text().replace(
                "- [connect] Connect lives in `src/old.ts` with retries.", edited
            )
        )
        wait_until(lambda: "retries were removed" in client.get(slug="connect").entries[0].content)
        kept = client.resolve(waiting.id, "accept")
        assert kept.stored is None and "still waits" in kept.message
        assert [e.id for e in client.inbox().entries] == [waiting.id]
    assert edited in quirks.read_text()
