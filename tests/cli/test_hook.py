"""The hook's fast path: which commands take it, what it reads of each recorded hook input, and
that it speaks the protocol's own field names and output format."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from memd.cli.hook import (
    FILE_HOOK_BUDGET,
    HOOK_MAX_TOKENS,
    HookInput,
    Plan,
    context_params,
    fast_plan,
    file_in_workspace,
    hook_output,
    read_hook,
    request,
)
from memd_client import protocol as p


@pytest.mark.parametrize(
    ("argv", "plan"),
    [
        (["context", "--hook", "claude"], Plan(None)),
        (["--socket", "/s", "context", "--hook", "claude"], Plan("/s")),
        (["context", "--hook", "claude", "--socket", "/s"], Plan("/s")),
        (["context", "--hook", "claude", "--budget", "50"], None),
        (["context", "--hook", "claude", "--no-autostart"], None),
        (["-w", "/x", "context", "--hook", "claude"], None),
        (["context", "deploy"], None),
        (["stats"], None),
        ([], None),
    ],
)
def test_only_the_plain_hook_command_takes_the_fast_path(
    argv: list[str], plan: Plan | None
) -> None:
    assert fast_plan(argv) == plan


def test_params_are_context_params_fields() -> None:
    params = context_params("/w", "hello")
    decoded = msgspec.convert(params, p.ContextParams)  # unknown fields are an error
    assert decoded.workspace == "/w"
    assert decoded.text == "hello"
    assert decoded.budget_tokens <= 3000


def test_output_is_the_hook_json_and_nothing_for_an_empty_block() -> None:
    assert hook_output("") == ""
    line = hook_output("## Project memory (memd)\n- [Security] Ünïcode stays.\n")
    assert json.loads(line) == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "## Project memory (memd)\n- [Security] Ünïcode stays.\n",
        }
    }
    full_path = msgspec.json.encode(json.loads(line)).decode()
    assert line == full_path  # byte for byte what `memd.cli.dispatch` prints


RECORDED = Path(__file__).parent.parent / "e2e" / "hook_inputs"


@pytest.mark.parametrize(
    ("name", "event", "file"),
    [
        ("claude_user_prompt_submit.json", "UserPromptSubmit", None),
        ("claude_pre_tool_use_read.json", "PreToolUse", "web/login/fonts.css"),
        ("claude_pre_tool_use_edit.json", "PreToolUse", "deploy/helm/values.yaml"),
        ("claude_pre_tool_use_multi_edit.json", "PreToolUse", "deploy/helm/values.yaml"),
        ("claude_pre_tool_use_write.json", "PreToolUse", "web/login/fonts.css"),
        ("claude_post_tool_use_read.json", "PostToolUse", "web/login/fonts.css"),
        ("claude_post_tool_use_edit.json", "PostToolUse", "deploy/helm/values.yaml"),
        ("claude_pre_tool_use_bash.json", "PreToolUse", None),
    ],
)
def test_each_recorded_input_asks_for_its_file_with_context_params_fields(
    tmp_path: Path, name: str, event: str, file: str | None
) -> None:
    data = json.loads((RECORDED / name).read_text().replace("WORKSPACE", str(tmp_path)))
    hook = read_hook(data)
    assert hook.event == event
    params = request(hook, str(tmp_path))
    if event == "UserPromptSubmit":  # whole (`repeat`), and recorded for the file hook
        expected = context_params(str(tmp_path), data["prompt"])
        assert params == {**expected, "session": data["session_id"], "repeat": True}
        decoded = msgspec.convert(params, p.ContextParams)  # unknown fields are an error
        assert (decoded.session, decoded.repeat, decoded.always) == (data["session_id"], True, True)
        return
    if file is None:  # Bash: nothing to ask
        assert params is None
        return
    assert params is not None
    decoded = msgspec.convert(params, p.ContextParams)  # unknown fields are an error
    assert (decoded.file, decoded.session) == (file, data["session_id"])
    assert decoded.always is False
    assert decoded.budget_tokens == FILE_HOOK_BUDGET
    assert decoded.text == ""


@pytest.mark.parametrize(
    ("path", "relative"),
    [
        ("src/a.py", "src/a.py"),  # relative to cwd, here the workspace
        ("/elsewhere/a.py", None),
        ("../a.py", None),
        (".", None),  # the workspace itself is not a file in it
        ("src/../src/b.py", "src/b.py"),
    ],
)
def test_a_file_is_taken_relative_to_the_workspace_or_not_at_all(
    tmp_path: Path, path: str, relative: str | None
) -> None:
    assert file_in_workspace(str(tmp_path), str(tmp_path), path) == relative


def test_a_symlinked_workspace_still_holds_its_files(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    path = str(tmp_path / "real" / "x.py")
    assert file_in_workspace(str(tmp_path / "link"), None, path) == "x.py"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "a JSON object"),
        ({"cwd": 3}, "`cwd` is not a string"),
        ({"prompt": 7}, "`prompt` is not a string"),
        ({"hook_event_name": "Stop"}, "not 'Stop'"),
        (
            {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": ""}},
            "file_path` is missing",
        ),
    ],
)
def test_input_it_does_not_understand_says_why(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_hook(data)


def test_a_budget_given_replaces_the_events_default_up_to_the_cap(tmp_path: Path) -> None:
    hook = HookInput("PreToolUse", str(tmp_path), file=str(tmp_path / "a.py"))
    assert request(hook, str(tmp_path), 500) == {
        "workspace": str(tmp_path),
        "file": "a.py",
        "budget_tokens": 500,
        "always": False,
    }
    capped = request(hook, str(tmp_path), 50_000)
    assert capped is not None and capped["budget_tokens"] == HOOK_MAX_TOKENS
    prompt = HookInput("UserPromptSubmit", None, prompt="hi")
    assert request(prompt, "/w", 50_000) == context_params("/w", "hi", HOOK_MAX_TOKENS)
