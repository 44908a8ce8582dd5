"""Memories checked against the code they cite, end to end: a real daemon, real sockets, real
git (renames by `git mv` and deletions by `git rm`, each committed), the `memd` command and
the client library.

What is shown where: `check` gives each entry's status and its citations' verdicts; a stale
entry's `query` hit and `context` entry carry the status and the note, and the prompt block
marks it; `memd check` prints it first with the note and exits 4; `memd check --fix` stores a
moved citation's fix under the entry's slug (the old line goes to the archive). A store is
acknowledged without waiting for any check (`query` and `context` never wait either: the
background check fills the status in).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli import verbs
from memd_client import Client, protocol as p
from tests.conftest import DaemonProcess
from tests.git_env import git_env
from tests.polling_sync import wait_until


def _git(repo: Path, *args: str) -> None:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=git_env(repo.parent), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def memd(*args: str, cwd: Path, daemon: DaemonProcess) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def repo(workspace: Path) -> Path:
    """A git repository with some code, committed."""
    _git(workspace, "init", "-q", "-b", "main")
    (workspace / "src").mkdir()
    (workspace / "src" / "old.ts").write_text("export function connect() {}\n")
    (workspace / "src" / "gone.ts").write_text("export const gone = 1;\n")
    (workspace / "src" / "stays.ts").write_text("export const stays = 1;\n")
    (workspace / ".gitignore").write_text(".env\n")
    (workspace / ".env").write_text("TOKEN=x\n")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "code")
    return workspace


def _status_of(client: Client, query: str, slug: str) -> p.QueryHit:
    """The hit with `slug`, once the background check has given it a status."""
    found: list[p.QueryHit] = []

    def checked() -> bool:
        hits = [hit for hit in client.query(query).results if hit.slug == slug]
        found[:] = hits
        return bool(hits) and hits[0].status is not None

    wait_until(checked)
    return found[0]


def _by_slug(result: p.CheckResult) -> dict[str | None, p.CheckedEntry]:
    return {entry.slug: entry for entry in result.entries}


def test_a_deleted_file_makes_its_memory_stale_everywhere(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Quirk",
            content="The gone value lives in `src/gone.ts` for now.",
            slug="gone-value",
        )
        client.store(
            category="Quirk",
            content="The stays value lives in `src/stays.ts` always.",
            slug="stays",
        )
        client.store(
            category="Quirk",
            content="Retry flaky network calls twice before failing.",
            slug="retry",
        )
        client.store(
            category="Quirk",
            content="Secrets for local runs sit in `.env` at the root.",
            slug="env",
        )
        client.store(
            origin="user",
            category="Instruction",
            content="Read `src/gone.ts` before editing the config.",
            slug="rd",
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "memories")
        _git(repo, "rm", "-q", "src/gone.ts")
        _git(repo, "commit", "-q", "-m", "remove gone")

        checked = client.check()
        entries = _by_slug(checked)
        assert checked.git
        assert entries["gone-value"].status == "stale"
        [anchor] = entries["gone-value"].anchors
        assert (anchor.text, anchor.kind, anchor.status) == ("src/gone.ts", "path", "missing")
        assert "src/gone.ts" in entries["gone-value"].note
        assert entries["gone-value"].fix is None  # nothing moved: nothing to rewrite
        assert entries["stays"].status == "ok"
        assert entries["retry"].status == "none"
        assert entries["env"].status != "stale"  # ignored on purpose: never stale
        assert [e.status for e in checked.entries[:2]] == ["stale", "stale"]  # stale first
        assert checked.counts.stale == 2

        hit = _status_of(client, "gone value", "gone-value")
        assert hit.status == "stale" and "src/gone.ts" in hit.stale
        assert _status_of(client, "stays value", "stays").stale == ""

        context = client.context("where does the gone value live")
        rule = next(e for e in context.entries if e.slug == "rd")
        assert rule.layer == "always" and rule.status == "stale"  # the rule is kept, marked
        assert "[rd] Read `src/gone.ts` before editing the config. (stale: cites" in (
            context.markdown
        )
        assert "[gone-value] The gone value lives in `src/gone.ts` for now. (stale: " in (
            context.markdown
        )

        plan = client.cleanup()
        assert sorted(s.entry.slug or "" for s in plan.stale) == ["gone-value", "rd"]
        assert not any(s.archived for s in plan.stale)
        assert len(client.list().entries) == 5  # never without apply

    shown = memd("check", cwd=repo, daemon=daemon)
    assert shown.returncode == 4, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("stale  quirks.md:") or lines[0].startswith("stale  instr")
    assert "cites src/gone.ts, which no longer exists" in shown.stdout
    assert lines[-1].startswith("5 memories checked: 2 stale, ")
    as_json = json.loads(memd("check", "--json", "-c", "Quirk", cwd=repo, daemon=daemon).stdout)
    assert {e["slug"] for e in as_json["entries"]} == {"gone-value", "stays", "retry", "env"}

    applied = memd("cleanup", "--apply", cwd=repo, daemon=daemon)
    assert applied.returncode == 0, applied.stderr
    archive = (repo / ".memory" / "archive.md").read_text()
    assert "| stale: cites src/gone.ts, which no longer exists | [gone-value]" in archive
    assert memd("check", cwd=repo, daemon=daemon).returncode == 0


def test_a_renamed_file_is_moved_and_fixed_through_the_write_path(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Decision", content="The HTTP client lives in `src/old.ts` only.", slug="http"
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "memory")
        _git(repo, "mv", "src/old.ts", "src/new.ts")
        _git(repo, "commit", "-q", "-m", "rename")

        entry = _by_slug(client.check())["http"]
        assert entry.status == "stale"
        assert [(a.status, a.moved_to) for a in entry.anchors] == [("moved", "src/new.ts")]
        assert entry.fix == "The HTTP client lives in `src/new.ts` only."
        assert "src/new.ts" in _status_of(client, "HTTP client", "http").stale
        assert "(stale: " in client.context("the HTTP client").markdown

    printed = memd("check", cwd=repo, daemon=daemon)
    assert printed.returncode == 4
    assert "fix: [Decision] " not in printed.stdout  # the fix is the content, not a label
    assert "The HTTP client lives in `src/new.ts` only.  (memd check --fix)" in printed.stdout

    fixed = memd("check", "--fix", cwd=repo, daemon=daemon)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    # It says what it fixed, though the entry is current by then.
    assert fixed.stdout.splitlines()[0] == (
        "fixed  decisions.md:5  [Decision] [http] The HTTP client lives in `src/new.ts` only."
    )
    text = (repo / ".memory" / "decisions.md").read_text()
    assert "- [http] The HTTP client lives in `src/new.ts` only." in text
    assert "src/old.ts" not in text
    assert (
        "[http] The HTTP client lives in `src/old.ts` only."
        in (repo / ".memory" / "archive.md").read_text()
    )


def test_fix_leaves_an_entry_whose_slug_another_entry_has(
    daemon: DaemonProcess, repo: Path
) -> None:
    """A store by a slug two entries share could replace the other, current entry: --fix
    leaves both as they are and says why."""
    memory = repo / ".memory"
    memory.mkdir()
    current = "- [client] Prefer tabs in `src/stays.ts` only.\n"
    stale = "- [client] The HTTP client lives in `src/old.ts` only.\n"
    (memory / "quirks.md").write_text("# Quirks\n\nQuirks.\n\n" + current + stale)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "memory")
    _git(repo, "mv", "src/old.ts", "src/new.ts")
    _git(repo, "commit", "-q", "-m", "rename")
    before = (memory / "quirks.md").read_text()

    fixed = memd("check", "--fix", cwd=repo, daemon=daemon)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "quirks.md:6 was not fixed: another Quirk entry has its slug [client]" in fixed.stderr
    assert (memory / "quirks.md").read_text() == before
    assert not (memory / "archive.md").exists()


def test_without_git_a_path_gone_from_an_existing_directory_is_missing(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / "lib").mkdir()
    (workspace / "lib" / "kept.py").write_text("x = 1\n")
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            category="Quirk", content="Parsing happens in `lib/parse.py` today.", slug="parse"
        )
        client.store(
            category="Quirk", content="The kept module is `lib/kept.py` for sure.", slug="kept"
        )
        client.store(
            category="Quirk",
            content="Vendored code sits in `vendor/thing.py` upstream.",
            slug="vendor",
        )
        checked = client.check()
    entries = _by_slug(checked)
    assert not checked.git
    assert entries["parse"].status == "stale"
    assert entries["parse"].anchors[0].status == "missing"
    assert entries["kept"].status == "ok"
    assert entries["vendor"].status == "none"  # its directory never existed: unverifiable
    assert entries["vendor"].anchors[0].status == "unverifiable"


def test_fix_never_overwrites_a_line_edited_after_the_check(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Decision", content="The HTTP client lives in `src/old.ts` only.", slug="http"
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "memory")
        _git(repo, "mv", "src/old.ts", "src/new.ts")
        _git(repo, "commit", "-q", "-m", "rename")
        entry = _by_slug(client.check())["http"]
        assert entry.fix is not None
        decisions = repo / ".memory" / "decisions.md"
        edited = decisions.read_text().replace(
            "The HTTP client lives in `src/old.ts` only.", "The HTTP client is `src/net.ts` now."
        )
        decisions.write_text(edited)  # a person's edit lands between the check and the fix

        done, problem = verbs._fix(client, entry, shared=False)

    assert done == "not fixed: it changed since the check"
    assert "[http] was edited or removed since the check; run `memd check` again" in problem
    assert decisions.read_text() == edited  # the edit stands
    archive = repo / ".memory" / "archive.md"
    assert not archive.exists() or "src/net.ts" not in archive.read_text()


def test_cleanup_apply_checks_the_code_again_before_archiving(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            category="Quirk", content="The gone value lives in `src/gone.ts` for now.", slug="gone"
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "memories")
        _git(repo, "rm", "-q", "src/gone.ts")
        _git(repo, "commit", "-q", "-m", "remove gone")
        assert [s.entry.slug for s in client.cleanup().stale] == ["gone"]
        # The file comes back, untracked: nothing git's tree state sees changed.
        (repo / "src" / "gone.ts").write_text("export const gone = 2;\n")

        applied = client.cleanup(apply=True)

        assert applied.stale == []
        assert [e.slug for e in client.list().entries] == ["gone"]
