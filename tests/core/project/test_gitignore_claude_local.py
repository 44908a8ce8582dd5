"""The `.gitignore` line for `.claude/settings.local.json` (`memd init --claude-local`): added
once, seen when another line already ignores it, everything else kept byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.core.project.gitignore import (
    CLAUDE_LOCAL_COMMENT,
    CLAUDE_LOCAL_PATTERN,
    ignores_claude_local,
    with_claude_local_ignored,
    with_lock_ignored,
)


def test_a_missing_file_gets_the_comment_and_the_line() -> None:
    expected = f"{CLAUDE_LOCAL_COMMENT}\n{CLAUDE_LOCAL_PATTERN}\n"
    assert with_claude_local_ignored(None) == expected


@pytest.mark.parametrize(
    "line",
    [".claude/settings.local.json", "/.claude/", ".claude", "**/.claude/*", "  *.local.json  "],
)
def test_a_line_that_already_ignores_it_is_enough(line: str) -> None:
    text = f"node_modules/\n{line}\n"
    assert ignores_claude_local(text)
    assert with_claude_local_ignored(text) == text


@pytest.mark.parametrize("line", ["# .claude/settings.local.json", ".claude/settings.json", "x"])
def test_other_lines_do_not_count(line: str) -> None:
    assert not ignores_claude_local(line + "\n")


@given(st.text(alphabet="ab#/.\r\n *", max_size=40))
def test_added_once_after_everything_byte_for_byte(text: str) -> None:
    once = with_claude_local_ignored(with_lock_ignored(text))
    assert once.startswith(text)
    assert ignores_claude_local(once)
    assert with_claude_local_ignored(with_lock_ignored(once)) == once
