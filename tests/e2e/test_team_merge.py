"""Team memory over real git: two clones set up with `memd git-setup` add and edit entries on
their own, and `git pull --rebase`, `git merge` and `git rebase` combine disjoint changes with no
conflict and put markers around only an entry both changed; a clone merged without the driver
gets git's line conflict, which `memd git-setup` and `git checkout -m` then merge entry by
entry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memd.core.format import mdformat
from tests.git_env import git_env

BASE = (
    "# Decisions\n\n"
    "- [pnpm] Use pnpm for installs.\n\n"
    "- [ports] The API listens on port 8080.\n\n"
    "- [db] Postgres 15 is the only database.\n"
)
DECISIONS = Path(".memory/decisions.md")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, env=git_env(cwd.parent), capture_output=True, text=True, timeout=60
    )


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = run(cwd, "git", *args)
    return done


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def setup(clone: Path) -> None:
    ok(run(clone, sys.executable, "-m", "memd", "git-setup"))


def edit(clone: Path, old: str, new: str) -> None:
    path = clone / DECISIONS
    path.write_text(path.read_text().replace(old, new))


def add(clone: Path, line: str) -> None:
    path = clone / DECISIONS
    path.write_text(path.read_text() + f"\n{line}\n")


def commit(clone: Path, message: str) -> None:
    ok(git(clone, "commit", "-qam", message))


def slugs(clone: Path) -> dict[str, str]:
    doc = mdformat.parse((clone / DECISIONS).read_text())
    return {e.slug: e.content for e in mdformat.entries(doc) if e.slug}


@pytest.fixture
def clones(short_tmp: Path) -> tuple[Path, Path]:
    origin, one, two = short_tmp / "origin.git", short_tmp / "one", short_tmp / "two"
    ok(git(short_tmp, "init", "-q", "--bare", "-b", "main", str(origin)))
    ok(git(short_tmp, "clone", "-q", str(origin), str(one)))
    (one / ".memory").mkdir()
    (one / DECISIONS).write_text(BASE)
    setup(one)  # writes .gitattributes, committed with the file
    ok(git(one, "add", "-A"))
    commit(one, "base")
    ok(git(one, "push", "-q", "origin", "HEAD:main"))
    ok(git(short_tmp, "clone", "-q", str(origin), str(two)))
    setup(two)  # the config is per clone: every clone runs it once
    return one, two


def test_pull_rebase_and_merge_combine_disjoint_changes(clones: tuple[Path, Path]) -> None:
    one, two = clones
    add(one, "- [lint] Run ruff before every commit.")
    edit(one, "port 8080", "port 9090")
    commit(one, "one")
    ok(git(one, "push", "-q", "origin", "HEAD:main"))
    add(two, "- [tests] Tests run under pytest -x.")
    edit(two, "Postgres 15", "Postgres 16")
    commit(two, "two")
    ok(git(two, "pull", "-q", "--rebase", "origin", "main"))
    assert slugs(two) == {
        "pnpm": "Use pnpm for installs.",
        "ports": "The API listens on port 9090.",
        "db": "Postgres 16 is the only database.",
        "lint": "Run ruff before every commit.",
        "tests": "Tests run under pytest -x.",
    }
    ok(git(two, "push", "-q", "origin", "HEAD:main"))
    # The other way round, with a merge commit this time.
    add(one, "- [deploy] Deploys go through staging first.")
    commit(one, "one again")
    ok(git(one, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main"))
    assert set(slugs(one)) == {"pnpm", "ports", "db", "lint", "tests", "deploy"}
    assert "<<<<<<<" not in (one / DECISIONS).read_text()


def test_a_local_rebase_combines_disjoint_changes(clones: tuple[Path, Path]) -> None:
    one, _ = clones
    ok(git(one, "checkout", "-q", "-b", "feature"))
    add(one, "- [feature] The feature flag is named beta.")
    commit(one, "feature")
    ok(git(one, "checkout", "-q", "main"))
    add(one, "- [hotfix] Hotfixes branch from main.")
    commit(one, "hotfix")
    ok(git(one, "checkout", "-q", "feature"))
    ok(git(one, "rebase", "-q", "main"))
    assert {"feature", "hotfix"} <= set(slugs(one))


def test_an_entry_changed_on_both_sides_is_the_only_conflict(clones: tuple[Path, Path]) -> None:
    one, two = clones
    edit(one, "Use pnpm for installs.", "Use pnpm 9 for installs.")
    add(one, "- [lint] Run ruff before every commit.")
    commit(one, "one")
    ok(git(one, "push", "-q", "origin", "HEAD:main"))
    edit(two, "Use pnpm for installs.", "Use Bun for installs.")
    add(two, "- [tests] Tests run under pytest -x.")
    commit(two, "two")
    merged = git(two, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert merged.returncode != 0  # a real conflict: git stops for a person
    text = (two / DECISIONS).read_text()
    assert text.count("<<<<<<<") == 1
    hunk = text[text.index("<<<<<<<") : text.index(">>>>>>>")]
    assert "pnpm 9" in hunk and "Bun" in hunk
    assert "lint" not in hunk and "tests" not in hunk  # the other changes merged around it
    assert "[lint]" in text and "[tests]" in text


def test_without_the_driver_git_conflicts_and_memd_merges_it_after(
    short_tmp: Path, clones: tuple[Path, Path]
) -> None:
    one, _ = clones
    plain = short_tmp / "plain"
    ok(git(short_tmp, "clone", "-q", str(short_tmp / "origin.git"), str(plain)))
    assert "merge.memd.driver" not in git(plain, "config", "--list").stdout  # per clone
    add(one, "- [lint] Run ruff before every commit.")
    commit(one, "one")
    ok(git(one, "push", "-q", "origin", "HEAD:main"))
    add(plain, "- [tests] Tests run under pytest -x.")
    commit(plain, "plain")
    merged = git(plain, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert merged.returncode != 0  # git's line merge: both appended at the end
    assert "<<<<<<<" in (plain / DECISIONS).read_text()
    setup(plain)
    ok(git(plain, "checkout", "-m", "--", str(DECISIONS)))  # merged again, by memd
    assert "<<<<<<<" not in (plain / DECISIONS).read_text()
    assert {"lint", "tests"} <= set(slugs(plain))
    ok(git(plain, "commit", "-qam", "merged"))
