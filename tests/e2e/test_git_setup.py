"""`memd git-setup` and `memd init --git` with real git: `.gitattributes` names memd's merge
driver for `.memory/*.md` and the clone's own config defines it; outside a repository nothing is
written; `memd status` warns when a clone has the attribute but not the config (git then merges
memory files line by line without a word)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memd.core.project.gitattributes import MERGE_LINE
from tests.conftest import DaemonProcess
from tests.git_env import git_env


def _memd(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", *args],
        cwd=cwd,
        env=git_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _git(*args: str, cwd: Path, home: Path) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(home), capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip()


@pytest.fixture
def clone(short_tmp: Path) -> Path:
    root = short_tmp / "repo"
    root.mkdir()
    _git("init", "-q", cwd=root, home=short_tmp)
    return root


def test_git_setup_writes_the_attribute_and_the_clones_config(clone: Path, short_tmp: Path) -> None:
    (clone / ".gitattributes").write_text("*.png binary")  # no final newline: kept, then one
    done = _memd("git-setup", cwd=clone, home=short_tmp)
    assert done.returncode == 0, done.stderr
    assert (clone / ".gitattributes").read_text().startswith("*.png binary\n# memd:")
    assert (clone / ".gitattributes").read_text().endswith(f"\n{MERGE_LINE}\n")
    driver = _git("config", "--get", "merge.memd.driver", cwd=clone, home=short_tmp)
    assert driver.endswith("merge-file %O %A %B %P")
    assert "set git config merge.memd.driver" in done.stdout
    assert not (clone / ".memory").exists()  # git-setup makes no memory files

    again = _memd("git-setup", cwd=clone, home=short_tmp)
    assert again.returncode == 0, again.stderr
    assert (clone / ".gitattributes").read_text().count(MERGE_LINE) == 1
    assert "already set" in again.stdout


def test_a_dry_run_changes_nothing(clone: Path, short_tmp: Path) -> None:
    done = _memd("git-setup", "--dry-run", cwd=clone, home=short_tmp)
    assert done.returncode == 0, done.stderr
    assert f"+{MERGE_LINE}" in done.stdout
    assert "would set git config merge.memd.driver" in done.stdout
    assert not (clone / ".gitattributes").exists()
    assert _git("config", "--get", "merge.memd.driver", cwd=clone, home=short_tmp) == ""


def test_outside_a_repository_nothing_is_written(short_tmp: Path) -> None:
    plain = short_tmp / "plain"
    plain.mkdir()
    done = _memd("git-setup", cwd=plain, home=short_tmp)
    assert done.returncode == 1
    assert "not in a git repository" in done.stderr and "git init" in done.stderr
    assert list(plain.iterdir()) == []


def test_init_with_git_does_both(clone: Path, short_tmp: Path) -> None:
    done = _memd("init", "--git", cwd=clone, home=short_tmp)
    assert done.returncode == 0, done.stderr
    assert (clone / ".memory" / "decisions.md").is_file()
    assert MERGE_LINE in (clone / ".gitattributes").read_text()
    assert ".memory/.lock" in (clone / ".gitignore").read_text()
    assert _git("config", "--get", "merge.memd.driver", cwd=clone, home=short_tmp)


def test_status_warns_when_the_clone_lacks_the_config(
    clone: Path, short_tmp: Path, daemon: DaemonProcess
) -> None:
    (clone / ".gitattributes").write_text(f"{MERGE_LINE}\n")  # as a fresh clone has it
    socket = ("--socket", str(daemon.socket_path))
    warned = _memd(*socket, "status", cwd=clone, home=short_tmp)
    assert warned.returncode == 0, warned.stderr
    assert "does not define merge.memd.driver" in warned.stderr
    assert "memd git-setup" in warned.stderr
    assert _memd("git-setup", cwd=clone, home=short_tmp).returncode == 0
    quiet = _memd(*socket, "status", cwd=clone, home=short_tmp)
    assert quiet.returncode == 0, quiet.stderr
    assert "merge.memd.driver" not in quiet.stderr
