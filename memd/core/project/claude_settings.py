"""The Claude Code hooks `memd init --claude` adds to `.claude/settings.json` (`--claude-local`:
to `.claude/settings.local.json`, which is yours alone; Claude Code reads both): the prompt hook
and the file hook, one command for both (`memd context --hook claude` reads the event from its
input), and the capture hook at the end of a session and before a compaction
(`memd extract --hook claude`).

Pure functions; `memd.cli.init` does the I/O.

Rules:
- UserPromptSubmit gets HOOK_COMMAND; PreToolUse gets it with the matcher
  `Read|Edit|MultiEdit|Write`, so it runs before the agent reads or changes a file.
- SessionEnd (every reason: no matcher) and PreCompact (matcher `auto|manual`) get
  CAPTURE_COMMAND with a `timeout` of CAPTURE_TIMEOUT seconds: Claude Code gives SessionEnd
  hooks 1.5 s unless a hook's timeout raises that budget (up to 60 s), and the capture hook
  may start a daemon. It prints nothing and exits 0, so it never blocks a compaction.
- HOOK_COMMAND and CAPTURE_COMMAND run memd only where `memd` is on the PATH, and always exit
  0: Claude Code runs a hook's command through a shell (bash), so a teammate without memd gets
  no hook error on every prompt and every file, just no memory (as memd's own hook gives on
  any failure). The cost: a memd user whose PATH lacks memd is not told either; `memd why
  FILE` and running `memd context --hook claude` by hand show what the hook would give.
- An event already hooked in the other settings file (`hooked_events`) is not hooked again.
- An event that already has a hook running its memd command (`context --hook claude`, or
  `extract --hook claude` for the capture events; any matcher, any path to memd, any options)
  is left as it is: a second run adds nothing, and a hook a person changed
  (a budget, PostToolUse instead of PreToolUse) stays theirs. Every other hook, setting and
  value is kept, in its order.
- Nothing to add: the text comes back byte for byte ("" when there was no file, so none is
  made). Otherwise the file is written back as JSON with the indentation its first indented
  line used (2 spaces by default) and a final newline.
- Settings that are not a JSON object, or whose `hooks` (or an event's list) has another shape,
  are refused with SettingsError (the file is left alone), never guessed at.
"""

from __future__ import annotations

import json
import re
from typing import Any

MEMD_HOOK = "memd context --hook claude"
"""The hook command itself (what `memd.cli.hook` answers)."""
HOOK_COMMAND = f"command -v memd >/dev/null 2>&1 && {MEMD_HOOK} || true"
"""What `memd init` installs: MEMD_HOOK where `memd` is on the PATH, else nothing, exit 0."""
SETTINGS = ".claude/settings.json"
LOCAL_SETTINGS = ".claude/settings.local.json"
FILE_MATCHER = "Read|Edit|MultiEdit|Write"
"""The tools whose calls name a file (`tool_input.file_path`) the file hook answers for."""
CAPTURE_HOOK = "memd extract --hook claude"
"""The capture hook command (what `memd.cli.capture_hook` answers)."""
CAPTURE_COMMAND = f"command -v memd >/dev/null 2>&1 && {CAPTURE_HOOK} || true"
"""What `memd init` installs for SessionEnd and PreCompact (exit 0 without memd, too)."""
CAPTURE_TIMEOUT = 15
"""Seconds Claude Code lets the capture hook run (it raises SessionEnd's 1.5 s budget)."""
COMPACT_MATCHER = "auto|manual"
_OURS = re.compile(r"\bcontext\b.*--hook[ =]claude\b")
_CAPTURE = re.compile(r"\bextract\b.*--hook[ =]claude\b")
CAPTURE_EVENTS = frozenset({"SessionEnd", "PreCompact"})


class SettingsError(ValueError):
    """The settings file cannot take the hooks as it is; the message says what to fix."""


def hooked_events(text: str | None) -> frozenset[str]:
    """The events the settings `text` already runs memd's hook for (none when it is not
    well-formed settings: only the file being written is refused for its shape)."""
    try:
        settings = json.loads(text or "{}")
    except ValueError:
        return frozenset()
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    if not isinstance(hooks, dict):
        return frozenset()
    return frozenset(
        event
        for event, groups in hooks.items()
        if isinstance(groups, list) and any(_runs_memd(group, event) for group in groups)
    )


def with_memd_hooks(
    text: str | None, shown: str = SETTINGS, elsewhere: frozenset[str] = frozenset()
) -> str:
    """Return `text` (None: no file yet) with memd's hooks added for the events not hooked
    `elsewhere` (in the other settings file; see the module's rules).

    Raises:
        SettingsError: `text` is not a JSON object with a well-formed `hooks`.
    """
    if text is None or not text.strip():
        settings: dict[str, Any] = {}
    else:
        try:
            settings = json.loads(text)
        except ValueError as exc:
            raise SettingsError(f"{shown} is not valid JSON ({exc}); fix it, then rerun") from None
        if not isinstance(settings, dict):
            raise SettingsError(f"{shown} is not a JSON object; fix it, then rerun")
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f"{shown}'s `hooks` is not an object; fix it, then rerun")
    wanted = {
        "UserPromptSubmit": {"hooks": [{"type": "command", "command": HOOK_COMMAND}]},
        "PreToolUse": {
            "matcher": FILE_MATCHER,
            "hooks": [{"type": "command", "command": HOOK_COMMAND}],
        },
        "SessionEnd": {"hooks": [_capture_handler()]},
        "PreCompact": {"matcher": COMPACT_MATCHER, "hooks": [_capture_handler()]},
    }
    added = False
    for event, group in wanted.items():
        if event in elsewhere:
            continue
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SettingsError(f"{shown}'s `hooks.{event}` is not a list; fix it, then rerun")
        if not any(_runs_memd(found, event) for found in groups):
            groups.append(group)
            added = True
    if not added:
        return "" if text is None else text  # "": no file, and none is needed
    return json.dumps(settings, indent=_indent(text or ""), ensure_ascii=False) + "\n"


def _capture_handler() -> dict[str, Any]:
    return {"type": "command", "command": CAPTURE_COMMAND, "timeout": CAPTURE_TIMEOUT}


def _runs_memd(group: Any, event: str) -> bool:
    """Whether a matcher group holds a command hook running memd's Claude hook for `event`
    (the capture hook for CAPTURE_EVENTS, else the context hook)."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return False
    ours = _CAPTURE if event in CAPTURE_EVENTS else _OURS
    return any(
        isinstance(hook, dict)
        and isinstance(hook.get("command"), str)
        and ours.search(hook["command"]) is not None
        for hook in group["hooks"]
    )


def _indent(text: str) -> str | int:
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else 2
