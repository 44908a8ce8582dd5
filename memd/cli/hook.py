"""The Claude Code hook's fast path: answer `memd context --hook claude` on the standard library
alone, for a prompt (UserPromptSubmit) and at the moment of action (PreToolUse, PostToolUse).

A hook runs before every prompt, and the file hook before every read or edit of a file, so its
start-up is the user's wait. Importing msgspec, argparse and the client costs more than the
whole exchange with a warm daemon, so this path skips them.

Rules:
- Taken only for the README's hook command, `memd [--socket PATH] context --hook claude`.
- The hook's event (`hook_event_name`; none: UserPromptSubmit, as older inputs) decides what is
  asked (`read_hook`, shared with the full path):
  - UserPromptSubmit: the block for the prompt, HOOK_BUDGET tokens, with `session_id` as the
    session and `repeat`: the block is whole (its always layer on every prompt, since the
    agent's context may have been compacted since the last; and what is relevant to this
    prompt, even if an earlier one had it), and the daemon records what it gave.
  - PreToolUse and PostToolUse of Read, Edit, MultiEdit and Write (FILE_TOOLS): the entries
    about `tool_input.file_path` (relative to the workspace), FILE_HOOK_BUDGET tokens, no
    always layer (the prompt hook gives it with every prompt), and `session_id` as the session
    without `repeat`: the daemon leaves out what this session was given, by the prompt hook
    or an earlier file hook, so the file hook never repeats one. Another tool, or a file
    outside the workspace, gets nothing, without asking the daemon.
  - One ledger, one direction (`memd.core.search.given`): the file hook skips what the prompt
    hook gave, the prompt hook never skips anything.
- It speaks the protocol exactly as the clients do: one connection, the `status` handshake
  first (a daemon of another protocol major version is left to the full path, which explains
  it), then `context`. The params it sends are `ContextParams` fields, and its output is byte
  for byte the full path's (tests check both): `hookSpecificOutput` with the event's name and
  `additionalContext`, nothing at all for an empty block.
- Anything else (no daemon, an error reply, input it does not understand) returns None and
  the full path (`memd.cli.dispatch`) runs on the same stdin: it starts a daemon if needed, and
  it owns every message and exit code. So this path can only be faster, never different.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any, NamedTuple

from memd_client._constants import DEFAULT_CONTEXT_BUDGET, PROTOCOL_VERSION
from memd_client._paths import default_socket_path, find_workspace

HOOK_MAX_TOKENS = 3000
"""The hook's budget cap: 3,000 estimated tokens is at most 9,000 bytes, under the 10,000
characters above which Claude Code shows a hook's context only as a short preview."""
HOOK_BUDGET = min(DEFAULT_CONTEXT_BUDGET, HOOK_MAX_TOKENS)
TIMEOUT = 5.0
MAX_REPLY = 16 * 1024 * 1024
COMMAND = ["context", "--hook", "claude"]


class Plan(NamedTuple):
    """What the fast path needs from the command line."""

    socket: str | None


def fast_plan(argv: list[str], command: list[str] = COMMAND) -> Plan | None:
    """Return the plan if `argv` is the plain hook `command` (with at most `--socket PATH`
    before or after it; None: it is not, and the full command line parser runs)."""
    socket_path = None
    rest = list(argv)
    if rest[:1] == ["--socket"] and len(rest) >= 2:
        socket_path, rest = rest[1], rest[2:]
    if rest[: len(command)] != command:
        return None
    rest = rest[len(command) :]
    if rest[:1] == ["--socket"] and len(rest) == 2 and socket_path is None:
        socket_path, rest = rest[1], []
    return Plan(socket_path) if not rest else None


FILE_HOOK_BUDGET = 300
"""The file hook's default budget: a few entries, read before every file the agent touches."""
PROMPT_EVENT = "UserPromptSubmit"
FILE_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
FILE_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write"})
"""The tools whose `tool_input.file_path` names the file the agent reads or changes."""


class HookInput(NamedTuple):
    """What memd reads of a hook's JSON: the event, and the prompt or the file it is about."""

    event: str
    cwd: str | None
    prompt: str = ""
    file: str | None = None
    """The file a tool event touches, as the tool names it (absolute, from Claude Code); None
    for a prompt, and for a tool event memd does not answer (another tool)."""
    session: str | None = None


def read_hook(hook: Any) -> HookInput:
    """Read a hook's parsed JSON (the module's rules say which events and tools).

    Raises:
        ValueError: it is not a hook input memd understands (the message says why).
    """
    if not isinstance(hook, dict):
        raise ValueError("expected a JSON object")
    event, cwd = hook.get("hook_event_name", PROMPT_EVENT), hook.get("cwd")
    if not (cwd is None or isinstance(cwd, str)):
        raise ValueError("`cwd` is not a string")
    session = hook.get("session_id")
    session = session if isinstance(session, str) and 0 < len(session) <= 200 else None
    if event == PROMPT_EVENT:
        prompt = hook.get("prompt", "")
        if not isinstance(prompt, str):
            raise ValueError("`prompt` is not a string")
        return HookInput(event, cwd, prompt=prompt, session=session)
    if event not in FILE_EVENTS:
        raise ValueError(
            f"memd answers UserPromptSubmit, PreToolUse and PostToolUse, not {event!r}"
        )
    if hook.get("tool_name") not in FILE_TOOLS:
        return HookInput(event, cwd, session=session)
    tool_input = hook.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path:
        raise ValueError("`tool_input.file_path` is missing")
    return HookInput(event, cwd, file=path, session=session)


def file_in_workspace(workspace: str, cwd: str | None, path: str) -> str | None:
    """`path` (absolute, or relative to `cwd`) relative to `workspace`, both with symlinks
    resolved; None when it lies outside (its memory is another project's)."""
    base = cwd if cwd is not None else os.getcwd()
    real = os.path.realpath(os.path.join(base, path))
    root = os.path.realpath(workspace)
    relative = os.path.relpath(real, root)
    if relative == os.curdir or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def hook_output(markdown: str, event: str = PROMPT_EVENT) -> str:
    """The JSON line Claude Code reads from a hook of `event` (empty: add nothing)."""
    if not markdown:
        return ""
    output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": markdown}}
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def answer(plan: Plan, data: bytes) -> int | None:
    """Answer the hook from `data` (its stdin); None means "let the full path answer"."""
    try:
        hook = read_hook(json.loads(data))
        workspace = find_workspace(hook.cwd)
        params = request(hook, workspace)
    except (OSError, ValueError):
        return None
    if params is None:
        return 0  # a tool or a file the hook has nothing to say about
    try:
        markdown = _ask(default_socket_path(plan.socket), params)
    except (OSError, ValueError):
        return None
    if markdown is None:
        return None
    text = hook_output(markdown, hook.event)
    if text:
        sys.stdout.write(text + "\n")
    return 0


def request(hook: HookInput, workspace: str, budget: int | None = None) -> dict[str, Any] | None:
    """The `context` params for `hook` (the names are `ContextParams` fields), at most
    HOOK_MAX_TOKENS (`budget`: the caller's, else the event's default); None: nothing to ask."""
    if hook.event == PROMPT_EVENT:
        prompt = context_params(workspace, hook.prompt, budget)
        if hook.session is not None:
            prompt.update(session=hook.session, repeat=True)  # whole, but recorded
        return prompt
    if hook.file is None:
        return None
    relative = file_in_workspace(workspace, hook.cwd, hook.file)
    if relative is None:
        return None
    tokens = min(budget or FILE_HOOK_BUDGET, HOOK_MAX_TOKENS)
    params: dict[str, Any] = {"workspace": workspace, "file": relative, "budget_tokens": tokens}
    params["always"] = False
    if hook.session is not None:
        params["session"] = hook.session
    return params


def context_params(workspace: str, prompt: str, budget: int | None = None) -> dict[str, Any]:
    """The `context` params the prompt hook sends (the names are `ContextParams` fields)."""
    tokens = HOOK_BUDGET if budget is None else min(budget, HOOK_MAX_TOKENS)
    return {"workspace": workspace, "text": prompt, "budget_tokens": tokens}


def _ask(socket_path: str, params: dict[str, Any]) -> str | None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT)
        sock.connect(socket_path)
        with sock.makefile("rb") as replies:
            status = _call(sock, replies, 1, "status", {})
            if str(status.get("protocol_version")).split(".")[0] != str(PROTOCOL_VERSION):
                return None
            result = _call(sock, replies, 2, "context", params)
    markdown = result.get("markdown")
    return markdown if isinstance(markdown, str) else None


def _call(sock: socket.socket, replies: Any, request_id: int, method: str, params: Any) -> Any:
    """Send one request and return its result; raise ValueError for anything but a result."""
    request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    sock.sendall(json.dumps(request, ensure_ascii=False).encode() + b"\n")
    while True:
        line = replies.readline(MAX_REPLY)
        if not line.endswith(b"\n"):
            raise ValueError("the daemon closed the connection or sent too much")
        message = json.loads(line)
        if not isinstance(message, dict) or "id" not in message:
            continue  # a notification
        if message.get("id") != request_id or not isinstance(message.get("result"), dict):
            raise ValueError("not a result for this request")
        return message["result"]
