"""The CLI names the workspace it used (issue "the first hour"), against a real daemon: one line
on stderr when the workspace was not found by an existing `.memory/`, nothing in the normal
case, and `workspace` / `created_memory_dir` in `--json` output."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import DaemonProcess, skip_inside_a_project
from tests.e2e.test_cli import memd

OTHER = "pass --workspace DIR to use another."


def test_a_store_in_a_bare_directory_names_it_and_the_memory_dir_it_created(
    daemon: DaemonProcess, workspace: Path
) -> None:
    skip_inside_a_project(workspace)
    sock, root = daemon.socket_path, str(workspace.resolve())
    why = "the current directory, with no .memory/ or .git in it or above it"

    read = memd("query", "anything", cwd=workspace, socket=sock)
    assert read.returncode == 0, read.stderr
    assert read.stderr == f"memd: workspace {root} ({why}); {OTHER}\n"
    assert not (workspace / ".memory").exists()

    stored = memd("store", "--json", "Keep the socket path short.", cwd=workspace, socket=sock)
    assert stored.returncode == 0, stored.stderr
    assert stored.stderr == (f"memd: workspace {root} ({why}; created {root}/.memory/); {OTHER}\n")
    result = json.loads(stored.stdout)
    assert result["action"] == "stored"
    assert result["workspace"] == root
    assert result["created_memory_dir"] is True
    assert (workspace / ".memory" / "instructions.md").is_file()

    # Now the directory holds .memory/: the normal, quiet case.
    again = memd("store", "--json", "Keep the log short too.", cwd=workspace, socket=sock)
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""
    assert json.loads(again.stdout)["created_memory_dir"] is False


def test_a_workspace_found_by_git_is_named_from_a_subdirectory(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    nested = workspace / "src" / "pkg"
    nested.mkdir(parents=True)
    sock, root = daemon.socket_path, str(workspace.resolve())

    listed = memd("list", "--json", cwd=nested, socket=sock)
    assert listed.returncode == 0, listed.stderr
    assert (
        listed.stderr == f"memd: workspace {root} (found by its .git; no .memory/ yet); {OTHER}\n"
    )
    assert json.loads(listed.stdout)["workspace"] == root

    stored = memd("store", "-c", "Decision", "Use Postgres 16.", cwd=nested, socket=sock)
    assert stored.returncode == 0, stored.stderr
    assert stored.stdout.startswith("Stored in decisions.md")
    assert stored.stderr == (
        f"memd: workspace {root} (found by its .git; created {root}/.memory/); {OTHER}\n"
    )
    assert (workspace / ".memory" / "decisions.md").is_file()
    assert not (nested / ".memory").exists()


def test_the_normal_case_is_quiet(daemon: DaemonProcess, workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".memory").mkdir()
    nested = workspace / "docs"
    nested.mkdir()
    sock = daemon.socket_path
    for args in [
        ("store", "-c", "Quirk", "The watcher needs a second to settle."),
        ("query", "watcher"),
        ("list",),
        ("context", "watcher"),
        ("cleanup",),
        ("extract", "--store", "Never commit .env files."),
    ]:
        result = memd(*args, cwd=nested, socket=sock)
        assert result.returncode == 0, result.stderr
        assert result.stderr == "", args
    as_json = json.loads(memd("query", "--json", "watcher", cwd=nested, socket=sock).stdout)
    assert as_json["workspace"] == str(workspace.resolve())


def test_an_explicit_workspace_is_named_only_when_memory_is_created(
    daemon: DaemonProcess, short_tmp: Path, workspace: Path
) -> None:
    sock, root = daemon.socket_path, str(workspace.resolve())
    flag = ("--workspace", str(workspace))
    read = memd("list", *flag, cwd=short_tmp, socket=sock)
    assert read.returncode == 0 and read.stderr == ""
    stored = memd("store", *flag, "Pick the workspace with a flag.", cwd=short_tmp, socket=sock)
    assert stored.returncode == 0, stored.stderr
    assert stored.stderr == f"memd: workspace {root} (from --workspace; created {root}/.memory/).\n"
    again = memd("store", *flag, "The flag stays quiet now.", cwd=short_tmp, socket=sock)
    assert again.returncode == 0 and again.stderr == ""
    extracted = memd(
        "extract",
        "--json",
        "--store",
        "We always deploy with Helm.",
        *flag,
        cwd=short_tmp,
        socket=sock,
    )
    assert json.loads(extracted.stdout)["workspace"] == root


def test_stats_and_status_name_the_workspace_and_how_it_was_found(
    daemon: DaemonProcess, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    sock, root = daemon.socket_path, str(workspace.resolve())
    stats = memd("stats", cwd=workspace, socket=sock)
    assert stats.returncode == 0, stats.stderr
    assert stats.stdout.splitlines()[0] == (
        f"Workspace {root} (found by its .git; pass --workspace DIR to use another)"
    )
    assert stats.stderr == ""  # the text says it already
    assert json.loads(memd("stats", "--json", cwd=workspace, socket=sock).stdout)["workspace"] == (
        root
    )
    status = memd("status", cwd=workspace, socket=sock)
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines()[-1] == (
        f"  current workspace: {workspace} (found by its .git; pass --workspace DIR to use another)"
    )
    (workspace / ".memory").mkdir()
    assert memd("stats", cwd=workspace, socket=sock).stdout.splitlines()[0] == (
        f"Workspace {root} (found by its .memory/)"
    )
