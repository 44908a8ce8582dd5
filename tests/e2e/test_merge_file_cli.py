"""`memd merge-file` as git runs it: a real subprocess per call, exit 0/1/2, the result in OURS,
and a real `git merge` of two branches that each added entries to decisions.md, with the
driver configured the way the docs say (no daemon anywhere)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.git_env import git_env

SOURCE = Path(__file__).resolve().parents[2]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(SOURCE), str(SOURCE / "client")]),
    "MEMD_SOCKET": "/nonexistent/memd.sock",  # a merge never asks a daemon
}
MEMD = [sys.executable, "-m", "memd"]
HEAD = "# Decisions\n\nArchitectural commitments made in this project.\n\n"
BASE = HEAD + "- [pnpm] Use pnpm for installs.\n"


def memd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMD, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=60
    )


def write(directory: Path, **texts: str) -> None:
    for name, text in texts.items():
        (directory / name).write_text(text, encoding="utf-8", newline="")


def test_a_clean_merge_writes_ours_and_exits_0(short_tmp: Path) -> None:
    write(
        short_tmp,
        base=BASE,
        ours=BASE + "\n- [a] Ours.\n",
        theirs=BASE + "\n- [b] Theirs.\n",
    )
    done = memd("merge-file", "base", "ours", "theirs", ".memory/decisions.md", cwd=short_tmp)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (short_tmp / "ours").read_text() == BASE + "\n- [a] Ours.\n\n- [b] Theirs.\n"


def test_a_conflict_leaves_markers_in_ours_and_exits_1(short_tmp: Path) -> None:
    write(
        short_tmp,
        base=BASE,
        ours=BASE.replace("pnpm for", "pnpm 9 for"),
        theirs=BASE.replace("pnpm for", "Bun for"),
    )
    done = memd("merge-file", "base", "ours", "theirs", "decisions.md", cwd=short_tmp)
    assert done.returncode == 1
    assert "decisions.md: 1 conflict left with markers (line 5)" in done.stderr
    merged = (short_tmp / "ours").read_text()
    assert merged == HEAD + (
        "<<<<<<< ours\n- [pnpm] Use pnpm 9 for installs.\n=======\n"
        "- [pnpm] Use Bun for installs.\n>>>>>>> theirs\n"
    )


def test_without_a_category_name_the_merge_is_line_by_line(short_tmp: Path) -> None:
    write(short_tmp, base=BASE, ours=BASE + "- [a] A.\n", theirs=BASE + "- [b] B.\n")
    done = memd("merge-file", "base", "ours", "theirs", cwd=short_tmp)
    assert done.returncode == 1  # both added at one place: a plain merge cannot order them
    merged = (short_tmp / "ours").read_text()
    assert "- [a] A.\n=======\n- [b] B.\n" in merged


@pytest.mark.parametrize("missing", ["base", "theirs"])
def test_an_unreadable_input_is_one_sentence_and_exit_2(short_tmp: Path, missing: str) -> None:
    write(short_tmp, base=BASE, ours=BASE, theirs=BASE)
    (short_tmp / missing).unlink()
    done = memd("merge-file", "base", "ours", "theirs", "decisions.md", cwd=short_tmp)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"memd: merge-file cannot read {missing.upper()}: ")
    assert (short_tmp / "ours").read_text() == BASE


def test_input_that_is_not_utf8_is_refused(short_tmp: Path) -> None:
    write(short_tmp, base=BASE, ours=BASE)
    (short_tmp / "theirs").write_bytes(b"- [x] \xff\n")
    done = memd("merge-file", "base", "ours", "theirs", "decisions.md", cwd=short_tmp)
    assert done.returncode == 2
    assert "cannot read THEIRS" in done.stderr and "not UTF-8" in done.stderr


def git(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=git_env(home), capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_merge_uses_the_driver_and_keeps_both_branches_entries(short_tmp: Path) -> None:
    home, repo = short_tmp / "home", short_tmp / "repo"
    home.mkdir()
    (repo / ".memory").mkdir(parents=True)

    def run(*args: str) -> str:
        done = git(*args, cwd=repo, home=home)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("init", "-q", "-b", "main")
    driver = " ".join(shlex.quote(part) for part in MEMD) + " merge-file %O %A %B %P"
    run("config", "merge.memd.driver", driver)
    (repo / ".gitattributes").write_text(".memory/*.md merge=memd\n")
    decisions = repo / ".memory" / "decisions.md"
    decisions.write_text(BASE)
    run("add", "-A")
    run("commit", "-q", "-m", "base")
    run("checkout", "-q", "-b", "theirs")
    decisions.write_text(BASE + "\n- [logs] Logs go to journald.\n")
    run("commit", "-q", "-am", "theirs")
    run("checkout", "-q", "main")
    decisions.write_text(BASE + "\n- [tz] Store times in UTC.\n")
    run("commit", "-q", "-am", "ours")

    run("merge", "-q", "--no-edit", "theirs")
    assert decisions.read_text() == BASE + (
        "\n- [tz] Store times in UTC.\n\n- [logs] Logs go to journald.\n"
    )
    assert run("status", "--porcelain") == ""


def test_output_takes_the_result_and_ours_stays(short_tmp: Path) -> None:
    ours = BASE + "\n- [a] Ours.\n"
    write(short_tmp, base=BASE, ours=ours, theirs=BASE + "\n- [b] Theirs.\n")
    done = memd(
        "merge-file", "base", "ours", "theirs", "decisions.md", "--output", "out", cwd=short_tmp
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert (short_tmp / "out").read_text() == BASE + "\n- [a] Ours.\n\n- [b] Theirs.\n"
    assert (short_tmp / "ours").read_text() == ours


def test_ours_or_the_output_as_a_symbolic_link_is_refused_and_its_target_untouched(
    short_tmp: Path,
) -> None:
    target = short_tmp / "elsewhere.md"
    target.write_text("Not a memory file.\n")
    write(short_tmp, base=BASE, theirs=BASE + "\n- [b] Theirs.\n")
    (short_tmp / "ours").symlink_to(target)
    done = memd("merge-file", "base", "ours", "theirs", "decisions.md", cwd=short_tmp)
    assert done.returncode == 2
    assert "symbolic link" in done.stderr and done.stderr.count("\n") == 1
    (short_tmp / "ours").unlink()
    write(short_tmp, ours=BASE)
    (short_tmp / "out").symlink_to(target)
    done = memd("merge-file", "base", "ours", "theirs", "decisions.md", "-o", "out", cwd=short_tmp)
    assert done.returncode == 2 and "symbolic link" in done.stderr
    assert target.read_text() == "Not a memory file.\n"
