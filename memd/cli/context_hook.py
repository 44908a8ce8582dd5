"""The Claude Code hook's full path: `memd context --hook claude` whenever the fast path
(`memd.cli.hook`) declines, or with any other option.

Rule: a hook must never block the user: every failure exits 0 with a one-line note on stderr and
nothing on stdout. What is asked for each event is the fast path's (`memd.cli.hook.request`), so
the two answer alike.
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from memd.cli.exit_codes import EXIT_OK
from memd_client import Client, MemdError, find_workspace


def run_context_hook(args: argparse.Namespace, data: bytes) -> int:
    """Answer a Claude Code hook (UserPromptSubmit, or PreToolUse/PostToolUse of a file tool):
    read its JSON (`data`, from stdin), print the memory block as
    `hookSpecificOutput.additionalContext` (`memd.cli.hook` is the fast path for the plain
    command; this is the full one). `--budget` replaces the event's default budget, still capped
    at HOOK_MAX_TOKENS; `--file` adds a file to a prompt's.

    A hook must never block the user: every failure exits 0 with a one-line note on stderr and
    nothing on stdout, so the prompt or the tool goes on without memory.
    """
    from memd.cli import hook as fast  # the hook's own module, when hooked

    try:
        hook = fast.read_hook(msgspec.json.decode(data))
    except (msgspec.DecodeError, ValueError) as exc:  # ValueError: bytes that are not UTF-8
        print(f"memd: not a Claude Code hook input ({exc}); no memory added.", file=sys.stderr)
        return EXIT_OK
    try:
        workspace = args.workspace or find_workspace(hook.cwd)
        params = fast.request(hook, workspace, args.budget)
    except OSError:  # no cwd in the input and the current directory was deleted
        print("memd: the current directory no longer exists; no memory added.", file=sys.stderr)
        return EXIT_OK
    if params is None:
        return EXIT_OK
    try:
        with Client(args.socket, workspace=workspace, autostart=args.autostart) as client:
            result = client.context(
                params.get("text", ""),
                file=params.get("file", args.file),
                budget_tokens=params["budget_tokens"],
                session=params.get("session"),
                always=params.get("always", True),
                repeat=params.get("repeat", False),
            )
    except MemdError as exc:
        print(f"memd: {exc.message} No memory added.", file=sys.stderr)
        return EXIT_OK
    if text := fast.hook_output(result.markdown, hook.event):
        print(text)
    return EXIT_OK
