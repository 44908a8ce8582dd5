"""The prompt hook's fast path: which commands take it, and that it speaks the protocol's own
field names and output format."""

from __future__ import annotations

import json

import msgspec
import pytest

from memd.cli.hook import Plan, context_params, fast_plan, hook_output
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
