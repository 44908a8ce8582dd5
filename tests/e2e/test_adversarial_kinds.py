"""Adversarial checks of issue 33's kinds through a real daemon: what an outside tester found
and what was fixed (each test failed before its fix).

- `cleanup` must never fold one procedure into another of a different name (nor throw away its
  outcome record with it), nor fold one episode into another unless they say the very same
  thing: a new procedure or episode is never thrown away as a duplicate.
- A new entry's usage history starts empty: a procedure stored under the slug of a deleted one
  does not inherit its outcomes.
"""

from __future__ import annotations

from pathlib import Path

from memd_client import Client
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd

PROCEDURES = (
    "# Procedures\n\n"
    "- [deploy-staging] Deploy to STAGING: q.\n\n"
    "- [deploy-staging-2] Deploy staging: a.\n\n"
    "- [release] Release: tag it; push the tag.\n\n"
    "- [release-2] Release: tag it.\n"
)

EPISODES = (
    "# Episodes\n\n"
    "- [2026-11-01-deploy-failed] 2026-11-01: Deploy failed.\n\n"
    "- Deploy failed.\n\n"
    "- [2026-11-02-deploy-failed] 2026-11-02: Deploy failed.\n\n"
    "- [2026-11-02-deploy-failed-2] 2026-11-02: Deploy failed.\n"
)


def test_cleanup_never_folds_a_procedure_into_another_of_another_name(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    (memory / "procedures.md").write_text(PROCEDURES)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.outcome("deploy-staging-2", "success")
        client.cleanup(apply=True)
        text = (memory / "procedures.md").read_text()
        # Two names, two procedures: both stay, whatever their words share.
        assert "- [deploy-staging] Deploy to STAGING: q.\n" in text
        assert "- [deploy-staging-2] Deploy staging: a.\n" in text
        # The same name, a step fewer: a shorter form of it, folded (into the archive).
        assert "- [release] Release: tag it; push the tag.\n" in text
        assert "Release: tag it.\n" not in text
        assert "[release-2] Release: tag it." in (memory / "archive.md").read_text()
        listed = client.list(category="Procedure").entries
        (kept,) = [entry for entry in listed if entry.slug == "deploy-staging-2"]
        assert kept.outcomes is not None and kept.outcomes.successes == 1


def test_cleanup_folds_an_episode_only_into_the_very_same_one(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    (memory / "episodes.md").write_text(EPISODES)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.cleanup(apply=True)
    text = (memory / "episodes.md").read_text()
    # An undated "Deploy failed." may be another day's failure: it stays (it gets a slug).
    assert "] 2026-11-01: Deploy failed.\n" in text
    assert "] Deploy failed.\n" in text
    # The very same line twice is one episode written twice: one of them goes to the archive.
    assert text.count("2026-11-02: Deploy failed.\n") == 1
    assert "2026-11-02: Deploy failed." in (memory / "archive.md").read_text()


def test_why_names_a_custom_always_category_for_what_it_is(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    (memory / "memd.toml").write_text(
        '[[categories]]\nname = "Gate"\nfile = "gates.md"\nlimit = 10\nlayer = "always"\n'
    )
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Gate", content="Never merge without a green CI run.")
        client.store(origin="user", category="Security", content="Never commit .env files.")
        given = {e.category: e for e in client.why("src/app.py").entries if e.reason == "given"}
    assert given["Gate"].layer == "always"
    assert "Security or Instruction" not in given["Gate"].detail
    assert "Gate" in given["Gate"].detail
    assert "Security" in given["Security"].detail


def test_a_procedure_kept_beside_another_never_claims_a_slug_was_given(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / ".memory").mkdir(exist_ok=True)
    sock = daemon.socket_path
    first = memd(
        "procedure", "Deploy to staging", "build the image", "push it", cwd=workspace, socket=sock
    )
    assert first.returncode == 0, first.stderr
    second = memd("procedure", "Deploy staging", "build the image", cwd=workspace, socket=sock)
    assert second.returncode == 0, second.stderr
    assert "[deploy-staging-2]" in second.stdout
    assert "slug you gave" not in second.stdout
    assert "another name" in second.stdout
    same = memd(
        "procedure", "--slug", "mine", "Deploy to staging", "tag it", cwd=workspace, socket=sock
    )
    assert same.returncode == 0, same.stderr
    assert "another name" not in same.stdout


def test_a_new_procedure_under_a_deleted_ones_slug_starts_with_no_record(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        old = client.procedure("Deploy to staging", ["build the image", "push it"])
        assert old.slug is not None
        client.outcome(old.slug, "failure")
        client.delete(category="Procedure", slug=old.slug)
        new = client.procedure("Deploy to staging", ["run the pipeline"])
        assert new.slug == old.slug and new.action == "stored"
        listed = client.list(category="Procedure")
    (entry,) = listed.entries
    assert entry.outcomes is None or (entry.outcomes.successes, entry.outcomes.failures) == (0, 0)
