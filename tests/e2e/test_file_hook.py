"""The Claude Code file hook end to end: recorded PreToolUse and PostToolUse inputs of Read, Edit,
MultiEdit and Write on stdin, the file's entries as the hook's JSON on stdout, never the same
entry twice in one session, and never a blocked tool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from memd_client import Client
from memd_client.aio import AsyncClient
from tests.conftest import DaemonProcess

RECORDED = Path(__file__).parent / "hook_inputs"
SESSION = "8f1c2a4e-5b7d-4e0f-9a1b-3c2d4e5f6a7b"
FILE_EVENTS = {
    # recorded input: (event, what the file's memory block must hold)
    "claude_pre_tool_use_read.json": ("PreToolUse", "caches fonts"),
    "claude_pre_tool_use_edit.json": ("PreToolUse", "Helm"),
    "claude_pre_tool_use_multi_edit.json": ("PreToolUse", "Helm"),
    "claude_pre_tool_use_write.json": ("PreToolUse", "caches fonts"),
    "claude_post_tool_use_read.json": ("PostToolUse", "caches fonts"),
    "claude_post_tool_use_edit.json": ("PostToolUse", "Helm"),
}


@pytest.fixture
def project(daemon: DaemonProcess, workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    (workspace / "deploy").mkdir()
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            origin="user", category="Security", content="Never commit .env files or API keys."
        )
        client.store(
            origin="user", category="Instruction", content="Run make test before every commit."
        )
        client.store(category="Decision", content="Deploy with Helm; the values are per stage.")
        client.store(category="Quirk", content="The login page caches fonts for a day.")
    return workspace


def recorded(name: str, project: Path, session: str = SESSION) -> str:
    return (
        (RECORDED / name).read_text().replace("WORKSPACE", str(project)).replace(SESSION, session)
    )


def hook(socket: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "memd",
            "--socket",
            str(socket),
            "context",
            "--hook",
            "claude",
            *extra,
        ],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", sorted(FILE_EVENTS))
def test_each_file_event_gets_the_files_entries_alike_on_both_paths(
    daemon: DaemonProcess, project: Path, name: str
) -> None:
    event, expected = FILE_EVENTS[name]
    fast = hook(daemon.socket_path, recorded(name, project))
    assert (fast.returncode, fast.stderr) == (0, "")
    # --budget makes the command take the full path (memd.cli.dispatch); another session, so
    # the first call's entries are not withheld from it
    full = hook(daemon.socket_path, recorded(name, project, "other-session"), "--budget", "300")
    assert full.stdout == fast.stdout
    output = json.loads(fast.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == event
    context = output["additionalContext"]
    assert expected in context
    assert "Relevant to " in context.splitlines()[1]
    assert "Always follow:" not in context  # the prompt hook gives layer A with every prompt
    assert "Run make test" not in context


def test_a_session_is_never_given_the_same_entry_twice(
    daemon: DaemonProcess, project: Path
) -> None:
    before = hook(daemon.socket_path, recorded("claude_pre_tool_use_read.json", project))
    assert "caches fonts" in before.stdout
    for name in ("claude_pre_tool_use_read.json", "claude_post_tool_use_read.json"):
        again = hook(daemon.socket_path, recorded(name, project))
        assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    edit = hook(daemon.socket_path, recorded("claude_pre_tool_use_edit.json", project))
    assert "Helm" in edit.stdout and "caches fonts" not in edit.stdout
    other = hook(daemon.socket_path, recorded("claude_pre_tool_use_read.json", project, "new"))
    assert "caches fonts" in other.stdout  # another session is told again


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("claude_pre_tool_use_bash.json", {}),  # not a file tool
        ("claude_pre_tool_use_read.json", {"file_path": "/etc/hosts"}),  # outside the project
    ],
)
def test_tools_and_files_it_has_nothing_for_get_nothing_quietly(
    daemon: DaemonProcess, project: Path, name: str, change: dict[str, str]
) -> None:
    data = json.loads(recorded(name, project))
    data["tool_input"].update(change)
    for extra in ((), ("--budget", "300")):  # both paths
        result = hook(daemon.socket_path, json.dumps(data), *extra)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_file_hook_never_blocks_without_a_daemon(short_tmp: Path, workspace: Path) -> None:
    stdin = recorded("claude_pre_tool_use_edit.json", workspace)
    result = hook(short_tmp / "none.sock", stdin, "--no-autostart")
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.count("\n") == 1 and "No memory added." in result.stderr


@pytest.mark.parametrize(
    "stdin",
    [
        '{"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {}}',
        '{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": "x"}',
        '{"hook_event_name": "SessionStart"}',
    ],
)
def test_a_file_hook_input_it_does_not_understand_is_one_line(
    daemon: DaemonProcess, stdin: str
) -> None:
    result = hook(daemon.socket_path, stdin)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr.count("\n") == 1 and "no memory added" in result.stderr


def test_without_layer_a_a_rule_about_the_file_still_comes(
    daemon: DaemonProcess, project: Path
) -> None:
    with Client(daemon.socket_path, workspace=project) as client:
        client.store(
            origin="user", category="Security", content="The deploy values never hold secrets."
        )
        result = client.context(file="deploy/values.yaml", always=False, budget_tokens=300)
    assert {e.layer for e in result.entries} == {"relevant"}
    assert "deploy values never hold secrets" in result.markdown
    assert "make test" not in result.markdown


async def test_concurrent_calls_of_one_session_share_no_entry(
    daemon: DaemonProcess, project: Path
) -> None:
    given: list[list[str]] = []

    async def ask(client: AsyncClient) -> None:
        result = await client.context("fonts Helm deploy login", session="s", always=False)
        given.append([e.content for e in result.entries])

    async with (
        AsyncClient(daemon.socket_path, workspace=project) as one,
        AsyncClient(daemon.socket_path, workspace=project) as two,
        anyio.create_task_group() as group,
    ):
        for client in (one, two, one, two):
            group.start_soon(ask, client)
    everything = [content for contents in given for content in contents]
    assert len(everything) == len(set(everything)) >= 2
    async with AsyncClient(daemon.socket_path, workspace=project) as client:
        last = await client.context("fonts Helm deploy login", session="s", always=False)
    assert last.entries == [] and last.already_given == len(everything)
