"""`memd init --claude-local`: memd's Claude Code hooks in `.claude/settings.local.json` (one
person's, ignored by git) instead of the committed `.claude/settings.json`; idempotent; and the
installed command, run through a shell as Claude Code runs it, is silent and exits 0 where
`memd` is not installed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli import init as memd_init
from memd.core.project import gitignore
from memd.core.project.claude_settings import (
    CAPTURE_COMMAND,
    CAPTURE_TIMEOUT,
    COMPACT_MATCHER,
    FILE_MATCHER,
    HOOK_COMMAND,
)
from memd_client import Client
from tests.conftest import DaemonProcess

LOCAL = Path(".claude") / "settings.local.json"
SHARED = Path(".claude") / "settings.json"
OURS = {"type": "command", "command": HOOK_COMMAND}
CAPTURE = {"type": "command", "command": CAPTURE_COMMAND, "timeout": CAPTURE_TIMEOUT}
RECORDED = Path(__file__).parent / "hook_inputs"


def init(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "init", "--workspace", str(workspace), *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), stat.S_IMODE(path.lstat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_the_hooks_go_to_the_local_settings_and_nothing_committed_is_touched_twice(
    tmp_path: Path,
) -> None:
    first = init(tmp_path, "--claude-local")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-3:] == [
        f"created .gitignore ({gitignore.LOCK_PATTERN} and {gitignore.CLAUDE_LOCAL_PATTERN} added)",
        f"created {LOCAL} (memd's Claude Code hooks added)",
        memd_init._HOOKS_LOCAL,
    ]
    hooks = json.loads((tmp_path / LOCAL).read_text())["hooks"]
    assert hooks == {
        "UserPromptSubmit": [{"hooks": [OURS]}],
        "PreToolUse": [{"matcher": FILE_MATCHER, "hooks": [OURS]}],
        "SessionEnd": [{"hooks": [CAPTURE]}],
        "PreCompact": [{"matcher": COMPACT_MATCHER, "hooks": [CAPTURE]}],
    }
    assert gitignore.ignores_claude_local((tmp_path / ".gitignore").read_text())
    for name in ("AGENTS.md", "CLAUDE.md", str(SHARED)):  # alone, it picks no other file
        assert not (tmp_path / name).exists()
    before = snapshot(tmp_path)
    again = init(tmp_path, "--claude-local")
    assert again.returncode == 0, again.stderr
    assert f"{LOCAL} already up to date" in again.stdout
    assert memd_init._HOOKS_LOCAL not in again.stdout
    assert snapshot(tmp_path) == before


def test_with_claude_md_too_the_committed_settings_stay_untouched(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n.claude/\n")
    result = init(tmp_path, "--claude", "--claude-local")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "CLAUDE.md").exists() and (tmp_path / LOCAL).exists()
    assert not (tmp_path / SHARED).exists()
    assert (tmp_path / ".gitignore").read_text().startswith("build/\n.claude/\n")
    assert (tmp_path / ".gitignore").read_text().count("settings.local.json") == 0  # covered


def test_events_the_committed_settings_hook_are_not_hooked_again(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    prompt_only = {"hooks": {"UserPromptSubmit": [{"hooks": [OURS]}]}}
    (tmp_path / SHARED).write_text(json.dumps(prompt_only))
    result = init(tmp_path, "--claude-local")
    assert result.returncode == 0, result.stderr
    hooks = json.loads((tmp_path / LOCAL).read_text())["hooks"]
    assert list(hooks) == ["PreToolUse", "SessionEnd", "PreCompact"]
    (tmp_path / LOCAL).unlink()
    file_hook = {
        "PreToolUse": [{"matcher": FILE_MATCHER, "hooks": [OURS]}],
        "SessionEnd": [{"hooks": [CAPTURE]}],
        "PreCompact": [{"matcher": COMPACT_MATCHER, "hooks": [CAPTURE]}],
    }
    (tmp_path / SHARED).write_text(json.dumps({"hooks": {**prompt_only["hooks"], **file_hook}}))
    both = init(tmp_path, "--claude-local")
    assert both.returncode == 0, both.stderr
    assert f"{SHARED} already has memd's hooks; none added locally" in both.stdout
    assert not (tmp_path / LOCAL).exists()  # no file that is not needed


def shell_hook(stdin: str, path: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed hook command as Claude Code does: through bash, hook JSON on stdin."""
    shell = shutil.which("bash") or "/bin/sh"
    environ = {**os.environ, "PATH": path}
    return subprocess.run(
        [shell, "-c", HOOK_COMMAND],
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize(
    "name", ["claude_user_prompt_submit.json", "claude_pre_tool_use_edit.json"]
)
def test_the_installed_command_is_silent_without_memd_and_answers_with_it(
    daemon: DaemonProcess, workspace: Path, short_tmp: Path, name: str
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "src" / "api").mkdir(parents=True)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Decision", content="Deploy with Helm; the values are per stage.")
    stdin = (RECORDED / name).read_text().replace("WORKSPACE", str(workspace))
    empty = short_tmp / "empty-bin"
    empty.mkdir()
    without = shell_hook(stdin, str(empty), workspace)
    assert (without.returncode, without.stdout, without.stderr) == (0, "", "")
    tools = short_tmp / "bin"  # a `memd` on the PATH, talking to the test's daemon
    tools.mkdir()
    program = tools / "memd"
    program.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m memd --socket "{daemon.socket_path}" "$@"\n'
    )
    program.chmod(0o755)
    found = shell_hook(stdin, f"{tools}{os.pathsep}{empty}", workspace)
    assert (found.returncode, found.stderr) == (0, "")
    assert "Helm" in json.loads(found.stdout)["hookSpecificOutput"]["additionalContext"]
