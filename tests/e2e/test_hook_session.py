"""One Claude Code session, one ledger: the prompt hook (UserPromptSubmit) sends its `session_id`
too, so the file hook (PreToolUse, PostToolUse) never repeats what the prompt hook gave; the
prompt hook's block stays whole on every prompt (its always layer above all); and `memd why
FILE --session ID` names what the session already had. Real hook JSON on stdin, a real daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import DaemonProcess

RECORDED = Path(__file__).parent / "hook_inputs"
SESSION = "8f1c2a4e-5b7d-4e0f-9a1b-3c2d4e5f6a7b"
SECURITY = "Never commit .env files or API keys."
INSTRUCTION = "Run make test before every commit."
HELM = "Deploy with Helm; the values are per stage."
FONTS = "The login page caches fonts for a day."


@pytest.fixture
def project(daemon: DaemonProcess, workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    (workspace / "deploy").mkdir()
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(origin="user", category="Security", content=SECURITY)
        client.store(origin="user", category="Instruction", content=INSTRUCTION)
        client.store(category="Decision", content=HELM)
        client.store(category="Quirk", content=FONTS)
    return workspace


def recorded(name: str, project: Path, session: str = SESSION) -> str:
    text = (RECORDED / name).read_text().replace("WORKSPACE", str(project))
    return text.replace(SESSION, session)


def memd(socket: Path, *args: str, stdin: str = "", cwd: Path | None = None) -> str:
    """Run `memd` (the prompt and file hooks with `context --hook claude`); it must exit 0
    with nothing on stderr. Returns its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(socket), *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return result.stdout


def given(stdout: str) -> str:
    """The hook's `additionalContext` ("" for no output)."""
    if not stdout:
        return ""
    output: str = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    return output


def prompt_hook(socket: Path, project: Path, session: str = SESSION, *extra: str) -> str:
    stdin = recorded("claude_user_prompt_submit.json", project, session)
    return given(memd(socket, "context", "--hook", "claude", *extra, stdin=stdin))


def file_hook(socket: Path, project: Path, name: str, session: str = SESSION) -> str:
    stdin = recorded(name, project, session)
    return given(memd(socket, "context", "--hook", "claude", stdin=stdin))


def test_the_file_hook_skips_what_the_prompt_hook_gave_and_never_the_reverse(
    daemon: DaemonProcess, project: Path
) -> None:
    socket = daemon.socket_path
    prompt = prompt_hook(socket, project)  # "How do we deploy the API to staging?"
    assert SECURITY in prompt and INSTRUCTION in prompt and HELM in prompt
    # Editing the Helm values: the Helm decision came with the prompt, so it is not repeated.
    edit = file_hook(socket, project, "claude_pre_tool_use_edit.json")
    assert HELM not in edit and SECURITY not in edit
    # Another session was given nothing yet: its file hook has the decision.
    assert HELM in file_hook(socket, project, "claude_pre_tool_use_edit.json", "other")
    # Reading the login page: what the prompt did not give still comes, once.
    assert FONTS in file_hook(socket, project, "claude_pre_tool_use_read.json")
    assert file_hook(socket, project, "claude_post_tool_use_read.json") == ""
    # The next prompt is whole again: its rules (the agent's context may have been compacted)
    # and what is relevant to it, although the session had them all.
    assert prompt_hook(socket, project) == prompt


def test_both_paths_of_the_prompt_hook_send_the_session(
    daemon: DaemonProcess, project: Path
) -> None:
    socket = daemon.socket_path
    # --budget makes the command take the full path (memd.cli.dispatch).
    full = prompt_hook(socket, project, SESSION, "--budget", "800")
    assert HELM in full
    assert HELM not in file_hook(socket, project, "claude_pre_tool_use_edit.json")
    fast = prompt_hook(socket, project, "fast")
    assert fast == full  # the same block: the session changes nothing in a prompt's
    assert HELM not in file_hook(socket, project, "claude_pre_tool_use_edit.json", "fast")


def test_a_prompt_without_a_session_id_is_answered_as_before(
    daemon: DaemonProcess, project: Path
) -> None:
    data = json.loads(recorded("claude_user_prompt_submit.json", project))
    del data["session_id"]
    stdout = memd(daemon.socket_path, "context", "--hook", "claude", stdin=json.dumps(data))
    assert HELM in given(stdout)
    assert HELM in file_hook(daemon.socket_path, project, "claude_pre_tool_use_edit.json")


def test_why_with_a_session_names_what_it_already_had_and_records_nothing(
    daemon: DaemonProcess, project: Path
) -> None:
    socket = daemon.socket_path
    prompt_hook(socket, project)
    values = "deploy/helm/values.yaml"
    why = json.loads(memd(socket, "why", values, "--session", SESSION, "--json", cwd=project))
    by_content = {entry["content"]: entry for entry in why["entries"]}
    assert by_content[HELM]["reason"] == "session"
    assert "already given in this session" in by_content[HELM]["detail"]
    assert why["budget_tokens"] == 300  # the file hook's
    assert all(entry["layer"] != "always" for entry in why["entries"])  # no always layer
    text = memd(socket, "why", values, "--session", SESSION, cwd=project)
    assert "session: already given in this session" in text
    # Without --session: as `context --file`, the session's ledger is not consulted.
    plain = json.loads(memd(socket, "why", values, "--json", cwd=project))
    assert {e["content"]: e["reason"] for e in plain["entries"]}[HELM] == "given"
    # `why` only reads the ledger: a session it explained still gets the entry from its hook.
    memd(socket, "why", values, "--session", "fresh", cwd=project)
    assert HELM in file_hook(socket, project, "claude_pre_tool_use_edit.json", "fresh")
