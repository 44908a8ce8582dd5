"""The Claude Code prompt hook's fast path: answer `memd context --hook claude` on the standard
library alone.

A prompt hook runs before every prompt, so its start-up is the user's wait. Importing msgspec,
argparse and the client costs more than the whole exchange with a warm daemon, so this path
skips them.

Rules:
- Taken only for the README's hook command, `memd [--socket PATH] context --hook claude`.
- It speaks the protocol exactly as the clients do: one connection, the `status` handshake
  first (a daemon of another protocol major version is left to the full path, which explains
  it), then `context` with the hook's default budget. The params it sends are `ContextParams`
  fields, and its output is byte for byte the full path's (tests check both).
- Anything else (no daemon, an error reply, input it does not understand) returns None and
  the full path (`memd.cli.dispatch`) runs on the same stdin: it starts a daemon if needed, and
  it owns every message and exit code. So this path can only be faster, never different.
"""

from __future__ import annotations

import json
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


def fast_plan(argv: list[str]) -> Plan | None:
    """Return the plan if `argv` is the plain hook command (with at most `--socket PATH`)."""
    socket_path = None
    rest = list(argv)
    if rest[:1] == ["--socket"] and len(rest) >= 2:
        socket_path, rest = rest[1], rest[2:]
    if rest[:3] != COMMAND:
        return None
    rest = rest[3:]
    if rest[:1] == ["--socket"] and len(rest) == 2 and socket_path is None:
        socket_path, rest = rest[1], []
    return Plan(socket_path) if not rest else None


def hook_output(markdown: str) -> str:
    """The JSON line Claude Code reads from a UserPromptSubmit hook (empty: add nothing)."""
    if not markdown:
        return ""
    output = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": markdown}
    }
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def answer(plan: Plan, data: bytes) -> int | None:
    """Answer the hook from `data` (its stdin); None means "let the full path answer"."""
    try:
        hook = json.loads(data)
    except ValueError:
        return None
    if not isinstance(hook, dict):
        return None
    prompt, cwd = hook.get("prompt", ""), hook.get("cwd")
    if not isinstance(prompt, str) or not (cwd is None or isinstance(cwd, str)):
        return None
    try:
        markdown = _ask(default_socket_path(plan.socket), find_workspace(cwd), prompt)
    except (OSError, ValueError):
        return None
    if markdown is None:
        return None
    text = hook_output(markdown)
    if text:
        sys.stdout.write(text + "\n")
    return 0


def context_params(workspace: str, prompt: str) -> dict[str, Any]:
    """The `context` params the hook sends (the names are `ContextParams` fields)."""
    return {"workspace": workspace, "text": prompt, "budget_tokens": HOOK_BUDGET}


def _ask(socket_path: str, workspace: str, prompt: str) -> str | None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT)
        sock.connect(socket_path)
        with sock.makefile("rb") as replies:
            status = _call(sock, replies, 1, "status", {})
            if str(status.get("protocol_version")).split(".")[0] != str(PROTOCOL_VERSION):
                return None
            result = _call(sock, replies, 2, "context", context_params(workspace, prompt))
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
