"""The user-wide memory through a real daemon: a rule stored with scope global in one project
is recalled in another, saying where it lives; a project entry wins a tie; `sources` narrows a
query; the user-wide directory is never a project, by any spelling; nothing global lands in a
project file, nor the other way round."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd_client import Client
from memd_client.errors import FileFormatError, InvalidParams
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd

RULE = "Use uv to manage Python packages, never pip."


def _user_wide() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "memd" / "global"


def _project(parent: Path, name: str) -> Path:
    project = parent / name
    (project / ".git").mkdir(parents=True)
    return project


def test_a_global_rule_stored_in_one_project_is_recalled_in_another(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    first, second = _project(short_tmp, "first"), _project(short_tmp, "second")
    with Client(daemon.socket_path, workspace=first) as client:
        stored = client.store(origin="user", category="Instruction", content=RULE, scope="global")
    assert stored.action == "stored"
    memory = _user_wide() / ".memory"
    assert RULE in (memory / "instructions.md").read_text()
    assert oct((_user_wide()).stat().st_mode & 0o777) == "0o700"
    assert not (first / ".memory").exists()  # nothing global lands in the project

    with Client(daemon.socket_path, workspace=second) as client:
        found = client.query("python packages")
    assert [(hit.content, hit.source) for hit in found.results] == [(RULE, "global")]
    assert found.results[0].path == str(memory.resolve() / "instructions.md")
    assert found.workspace == str(second.resolve())


def test_a_project_entry_wins_a_tie_and_sources_narrow_the_search(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = _project(short_tmp, "app")
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
        client.store(origin="user", category="Instruction", content=RULE)
        both = client.query("python packages")
        assert [(hit.source, hit.path) for hit in both.results] == [
            ("memory", ".memory/instructions.md"),
            ("global", str(_user_wide().resolve() / ".memory" / "instructions.md")),
        ]
        assert both.results[0].score == both.results[1].score
        assert [hit.source for hit in client.query("uv", sources=["memory"]).results] == ["memory"]
        assert [hit.source for hit in client.query("uv", sources=["global"]).results] == ["global"]
    # The project's file holds only the project's entry, the user-wide file only its own.
    assert (project / ".memory" / "instructions.md").read_text().count(RULE) == 1
    assert (_user_wide() / ".memory" / "instructions.md").read_text().count(RULE) == 1


def test_the_user_wide_directory_is_never_a_project(daemon: DaemonProcess, short_tmp: Path) -> None:
    project = _project(short_tmp, "app")
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
    link = short_tmp / "sneaky"
    link.symlink_to(_user_wide())
    spellings = [_user_wide(), _user_wide() / ".memory", link, project / ".." / "sneaky"]
    for spelling in spellings:
        with Client(daemon.socket_path, workspace=str(spelling)) as client:
            with pytest.raises(InvalidParams) as refused:
                client.store(category="Quirk", content="Never land here as a project entry.")
            assert "user-wide memory" in refused.value.message
            with pytest.raises(InvalidParams):
                client.query("uv")
    quirks = _user_wide() / ".memory" / "quirks.md"
    assert not quirks.exists() or "Never land here" not in quirks.read_text()


def test_the_cli_stores_globally_and_shows_where_a_hit_lives(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    first, second = _project(short_tmp, "first"), _project(short_tmp, "second")
    sock = daemon.socket_path
    stored = memd("store", "--global", RULE, cwd=first, socket=sock)
    assert stored.returncode == 0, stored.stderr
    found = memd("query", "python", "packages", cwd=second, socket=sock)
    assert found.returncode == 0, found.stderr
    assert "(global:instructions.md:" in found.stdout


def test_the_user_wide_memory_is_managed_like_a_project(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = _project(short_tmp, "app")
    sock = daemon.socket_path
    stored = memd("store", "--global", "--slug", "use-uv", RULE, cwd=project, socket=sock)
    assert stored.returncode == 0, stored.stderr
    stats = memd("stats", "--global", cwd=project, socket=sock)
    assert stats.returncode == 0, stats.stderr
    assert stats.stdout.splitlines()[0] == (
        f"Workspace {_user_wide().resolve()} (your user-wide memory)"
    )
    assert "  Instruction instructions.md     1 / 30" in stats.stdout
    project_stats = memd("stats", cwd=project, socket=sock)
    assert f"  {'Total':<28} {0:>4}" in project_stats.stdout  # the project holds none of it
    cleanup = memd("cleanup", "--global", cwd=project, socket=sock)
    assert cleanup.returncode == 0, cleanup.stderr
    deleted = memd("delete", "--global", "-c", "Instruction", "use-uv", cwd=project, socket=sock)
    assert deleted.returncode == 0, deleted.stderr
    archive = (_user_wide() / ".memory" / "archive.md").read_text()
    assert RULE in archive  # removed from the user-wide memory, kept in its archive
    assert "use-uv" not in (_user_wide() / ".memory" / "instructions.md").read_text()


def test_list_shows_the_projects_entries_then_the_user_wide_ones(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = _project(short_tmp, "app")
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
        client.store(
            origin="user", category="Instruction", content="Run make lint before committing."
        )
        listed = client.list(category="Instruction")
        assert [(e.content, e.source) for e in listed.entries] == [
            ("Run make lint before committing.", "memory"),
            (RULE, "global"),
        ]
        assert [e.source for e in client.list(sources=["memory"]).entries] == ["memory"]
    shown = memd("list", cwd=project, socket=daemon.socket_path)
    assert "Instruction (instructions.md, your user-wide memory)" in shown.stdout


def test_the_prompt_block_carries_the_user_wide_rules_after_the_projects(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = _project(short_tmp, "app")
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
        client.store(
            origin="user", category="Instruction", content="Run make lint before committing."
        )
        block = client.context("set up the dev environment")
    always = [(e.content, e.source) for e in block.entries if e.layer == "always"]
    assert always == [("Run make lint before committing.", "memory"), (RULE, "global")]
    assert block.markdown.index("make lint") < block.markdown.index("Use uv")


def test_a_user_wide_hit_is_read_back_by_its_lines(daemon: DaemonProcess, short_tmp: Path) -> None:
    project = _project(short_tmp, "app")
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(
            origin="user", category="Instruction", content="Run make lint before committing."
        )
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
        hit = client.query("python packages", sources=["global"]).results[0]
        for name in (hit.file, hit.path):  # its bare name, or its path as results give it
            got = client.get(file=name, lines=hit.lines, scope="global")
            assert [(entry.content, entry.source) for entry in got.entries] == [(RULE, "global")], (
                name
            )
        with pytest.raises(InvalidParams) as refused:
            client.query("uv", category="Instruction", sources=["file"])
        assert "leave out one of the two" in refused.value.message


def test_a_user_wide_directory_made_beforehand_is_made_private_by_a_store(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = _project(short_tmp, "app")
    _user_wide().mkdir(parents=True)
    _user_wide().chmod(0o777)
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
    assert _user_wide().stat().st_mode & 0o777 == 0o700


def test_a_user_wide_directory_that_is_a_link_is_never_followed(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    project = _project(short_tmp, "app")
    target = short_tmp / "elsewhere"
    target.mkdir()
    _user_wide().parent.mkdir(parents=True)
    _user_wide().symlink_to(target)
    with (
        Client(daemon.socket_path, workspace=project) as client,
        pytest.raises(FileFormatError) as refused,
    ):
        client.store(origin="user", category="Instruction", content=RULE, scope="global")
    assert "symbolic link" in refused.value.message
    assert list(target.iterdir()) == []


def test_the_cli_gets_searches_and_lists_the_user_wide_memory_alone(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    """`memd list` showed a user-wide entry that `memd get` could not fetch, and `memd query`
    could not search the user-wide memory alone."""
    project = _project(short_tmp, "app")
    sock = daemon.socket_path
    user_wide = memd("store", "--global", "--slug", "pip", RULE, cwd=project, socket=sock)
    assert user_wide.returncode == 0, user_wide.stderr
    stored = memd("store", "Use uv in CI too.", "--slug", "ci-uv", cwd=project, socket=sock)
    assert stored.returncode == 0, stored.stderr
    got = memd("get", "--global", "pip", cwd=project, socket=sock)
    assert got.returncode == 0, got.stderr
    assert RULE in got.stdout and "your user-wide memory" in got.stdout
    as_json = json.loads(memd("get", "--global", "--json", "pip", cwd=project, socket=sock).stdout)
    assert [entry["source"] for entry in as_json["entries"]] == ["global"]
    found = memd("query", "--source", "global", "uv", cwd=project, socket=sock)
    assert found.returncode == 0, found.stderr
    assert "(global:instructions.md:" in found.stdout and "Use uv in CI too." not in found.stdout
    listed = memd("list", "--source", "memory", cwd=project, socket=sock)
    assert "Use uv in CI too." in listed.stdout and RULE not in listed.stdout
