"""memd's Claude Code hooks in `.claude/settings.json`: added once, everything else kept, odd
shapes refused."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from memd.core.project.claude_settings import (
    CAPTURE_COMMAND,
    CAPTURE_HOOK,
    CAPTURE_TIMEOUT,
    COMPACT_MATCHER,
    FILE_MATCHER,
    HOOK_COMMAND,
    LOCAL_SETTINGS,
    MEMD_HOOK,
    SettingsError,
    hooked_events,
    with_memd_hooks,
)

OURS = {"type": "command", "command": HOOK_COMMAND}
CAPTURE = {"type": "command", "command": CAPTURE_COMMAND, "timeout": CAPTURE_TIMEOUT}
EVERY_EVENT = {"UserPromptSubmit", "PreToolUse", "SessionEnd", "PreCompact"}


def test_a_new_file_gets_the_context_and_capture_hooks() -> None:
    assert json.loads(with_memd_hooks(None)) == {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [OURS]}],
            "PreToolUse": [{"matcher": FILE_MATCHER, "hooks": [OURS]}],
            "SessionEnd": [{"hooks": [CAPTURE]}],
            "PreCompact": [{"matcher": COMPACT_MATCHER, "hooks": [CAPTURE]}],
        }
    }


def test_the_capture_hook_is_added_beside_a_users_own_session_end_hook() -> None:
    theirs = {"matcher": "clear", "hooks": [{"type": "command", "command": "./save.sh"}]}
    text = json.dumps({"hooks": {"SessionEnd": [theirs]}})
    hooks = json.loads(with_memd_hooks(text))["hooks"]
    assert hooks["SessionEnd"] == [theirs, {"hooks": [CAPTURE]}]
    assert with_memd_hooks(with_memd_hooks(text)) == with_memd_hooks(text)  # added once
    context_only = json.dumps({"hooks": {"SessionEnd": [{"hooks": [OURS]}]}})
    assert json.loads(with_memd_hooks(context_only))["hooks"]["SessionEnd"][1] == {
        "hooks": [CAPTURE]
    }  # the context hook there is not the capture hook


def test_a_hook_someone_changed_stays_theirs_and_the_text_byte_for_byte() -> None:
    changed = {
        "type": "command",
        "command": "/opt/memd/bin/memd context --hook claude --budget 500",
    }
    text = json.dumps(
        {
            "hooks": {
                "UserPromptSubmit": [{"hooks": [OURS]}],
                "PostToolUse": [{"matcher": "Read", "hooks": [changed]}],
                "PreToolUse": [{"matcher": "Edit|Write", "hooks": [changed]}],
                "SessionEnd": [{"hooks": [{"command": "memd extract --hook claude"}]}],
                "PreCompact": [{"matcher": "manual", "hooks": [CAPTURE]}],
            }
        },
        separators=(",", ":"),
    )
    assert with_memd_hooks(text) == text


def test_only_the_missing_event_is_added() -> None:
    prompt = '[{"hooks": [{"command": "memd context --hook=claude"}]}]'
    text = '{\n\t"hooks": {"UserPromptSubmit": ' + prompt + "}\n}"
    result = with_memd_hooks(text)
    assert result.startswith('{\n\t"hooks"')  # tab indentation kept
    hooks = json.loads(result)["hooks"]
    assert len(hooks["UserPromptSubmit"]) == 1
    assert hooks["PreToolUse"] == [{"matcher": FILE_MATCHER, "hooks": [OURS]}]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "is not a JSON object"),
        ("{", "is not valid JSON"),
        ('{"hooks": []}', "`hooks` is not an object"),
        ('{"hooks": {"PreToolUse": {}}}', "`hooks.PreToolUse` is not a list"),
    ],
)
def test_odd_shapes_are_refused_with_what_to_fix(text: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        with_memd_hooks(text)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), JSON, max_size=5))
def test_every_other_setting_is_kept_in_order(settings: dict[str, object]) -> None:
    result = json.loads(with_memd_hooks(json.dumps(settings)))
    assert list(result)[: len(settings)] == list(settings)
    assert {k: result[k] for k in settings} == settings
    assert with_memd_hooks(with_memd_hooks(json.dumps(settings))) == with_memd_hooks(
        json.dumps(settings)
    )


def test_an_event_hooked_in_the_other_file_is_not_hooked_again() -> None:
    shared = with_memd_hooks(None)
    assert hooked_events(shared) == EVERY_EVENT
    assert with_memd_hooks(None, LOCAL_SETTINGS, hooked_events(shared)) == ""  # no file needed
    mine = '{"permissions": {"allow": ["Bash(ls)"]}}'
    assert with_memd_hooks(mine, LOCAL_SETTINGS, hooked_events(shared)) == mine
    only_prompt = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [OURS]}]}})
    hooks = json.loads(with_memd_hooks(None, LOCAL_SETTINGS, hooked_events(only_prompt)))
    assert set(hooks["hooks"]) == EVERY_EVENT - {"UserPromptSubmit"}


@pytest.mark.parametrize("text", [None, "", "{", "[1]", '{"hooks": []}', '{"hooks": {"X": 1}}'])
def test_settings_of_another_shape_hook_no_event(text: str | None) -> None:
    assert hooked_events(text) == frozenset()


def test_the_installed_command_runs_memds_hook_only_where_memd_is() -> None:
    assert HOOK_COMMAND.startswith("command -v memd ")
    assert f"&& {MEMD_HOOK} ||" in HOOK_COMMAND and HOOK_COMMAND.endswith("|| true")
    assert hooked_events(with_memd_hooks(None)) == EVERY_EVENT
    assert CAPTURE_COMMAND.startswith("command -v memd ")
    assert f"&& {CAPTURE_HOOK} ||" in CAPTURE_COMMAND and CAPTURE_COMMAND.endswith("|| true")
