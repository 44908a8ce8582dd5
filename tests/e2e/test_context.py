"""`context` end to end: the RPC, `memd context`, and the Claude Code prompt hook (recorded
input on stdin, the hook's JSON on stdout, never a blocked prompt)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import DaemonProcess

RECORDED = Path(__file__).parent / "hook_inputs" / "claude_user_prompt_submit.json"


@pytest.fixture
def project(daemon: DaemonProcess, workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    (workspace / "src" / "api").mkdir(parents=True)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            origin="user", category="Security", content="Never commit .env files or API keys."
        )
        client.store(
            origin="user", category="Instruction", content="Run make test before every commit."
        )
        client.store(category="Decision", content="We deploy the API with Helm to staging.")
        client.store(category="Quirk", content="The login page caches fonts for a day.")
    return workspace


def memd(
    *args: str, socket: Path, stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(socket), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_rpc_puts_rules_first_then_what_is_relevant(daemon: DaemonProcess, project: Path) -> None:
    with Client(daemon.socket_path, workspace=project) as client:
        result = client.context("how do we deploy to staging", budget_tokens=800)
    assert [(e.layer, e.category) for e in result.entries] == [
        ("always", "Security"),
        ("always", "Instruction"),
        ("relevant", "Decision"),
    ]
    assert "- [Decision] [" in result.markdown
    assert "fonts" not in result.markdown
    assert result.tokens <= result.budget_tokens == 800
    with Client(daemon.socket_path, workspace=project) as client:
        by_file = client.context("", file="web/login/fonts.css")
    assert [e.category for e in by_file.entries][-1] == "Quirk"


def test_cli_prints_the_block(daemon: DaemonProcess, project: Path) -> None:
    result = memd("context", "deploy", "staging", socket=daemon.socket_path, cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("## Project memory (memd)\nAlways follow:\n")
    tiny = memd("context", "--budget", "5", "deploy", socket=daemon.socket_path, cwd=project)
    assert (tiny.returncode, tiny.stdout) == (0, "")


def test_claude_hook_answers_with_additional_context(daemon: DaemonProcess, project: Path) -> None:
    recorded = RECORDED.read_text().replace("WORKSPACE", str(project))
    result = memd("context", "--hook", "claude", socket=daemon.socket_path, stdin=recorded)
    assert result.returncode == 0, result.stderr
    full_path = memd(  # --budget makes the command take the full path (memd.cli.dispatch)
        "context", "--hook", "claude", "--budget", "800", socket=daemon.socket_path, stdin=recorded
    )
    assert full_path.stdout == result.stdout
    output = json.loads(result.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert "[Security]" in context
    assert "Helm to staging" in context


@pytest.mark.parametrize("stdin", ["", "not json", '{"prompt": 7}'])
def test_claude_hook_never_blocks_on_bad_input(
    daemon: DaemonProcess, project: Path, stdin: str
) -> None:
    result = memd("context", "--hook", "claude", socket=daemon.socket_path, stdin=stdin)
    assert (result.returncode, result.stdout) == (0, "")
    assert "no memory added" in result.stderr.lower()


def test_claude_hook_never_blocks_without_a_daemon(short_tmp: Path, workspace: Path) -> None:
    recorded = RECORDED.read_text().replace("WORKSPACE", str(workspace))
    result = memd(
        "context",
        "--hook",
        "claude",
        "--no-autostart",
        socket=short_tmp / "none.sock",
        stdin=recorded,
    )
    assert (result.returncode, result.stdout) == (0, "")
    assert "No memory added." in result.stderr


def test_claude_hook_never_blocks_on_bytes_that_are_not_utf8(daemon: DaemonProcess) -> None:
    hook = ["context", "--hook", "claude"]
    result = subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), *hook],
        input=b'{"prompt": "\xff\xfe"}',
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (0, b"")
    assert b"Traceback" not in result.stderr


def test_an_unreadable_security_file_is_named_not_skipped(
    daemon: DaemonProcess, project: Path
) -> None:
    security = project / ".memory" / "security.md"
    security.write_bytes(security.read_bytes() + b"- [bad] \xff\n")
    with Client(daemon.socket_path, workspace=project) as client:
        result = client.context("deploy")
    assert ".memory/security.md cannot be read" in result.markdown
    assert result.entries[0].category == "Instruction"
