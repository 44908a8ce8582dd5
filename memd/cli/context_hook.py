"""The prompt hook's full path: `memd context --hook claude` whenever the fast path
(`memd.cli.hook`) declines, or with any other option.

Rule: a prompt hook must never block the user: every failure exits 0 with a one-line note on
stderr and nothing on stdout.
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from memd.cli.exit_codes import EXIT_OK
from memd_client import Client, MemdError, find_workspace


class ClaudePromptHook(msgspec.Struct):
    """The part of Claude Code's UserPromptSubmit hook input that memd reads."""

    prompt: str = ""
    cwd: str | None = None


def run_context_hook(args: argparse.Namespace, data: bytes) -> int:
    """Answer a Claude Code UserPromptSubmit hook: read its JSON (`data`, from stdin), print the
    memory block as `hookSpecificOutput.additionalContext` (`memd.cli.hook` is the fast path for the
    plain command; this is the full one).

    A prompt hook must never block the user: every failure exits 0 with a one-line note on
    stderr and nothing on stdout, so the prompt goes on without memory.
    """
    from memd.cli.hook import HOOK_MAX_TOKENS, hook_output  # the hook's own module, when hooked

    try:
        hook = msgspec.json.decode(data, type=ClaudePromptHook)
    except (msgspec.DecodeError, ValueError) as exc:  # ValueError: bytes that are not UTF-8
        print(f"memd: not a Claude Code hook input ({exc}); no memory added.", file=sys.stderr)
        return EXIT_OK
    try:
        workspace = args.workspace or find_workspace(hook.cwd)
    except OSError:  # no cwd in the input and the current directory was deleted
        print("memd: the current directory no longer exists; no memory added.", file=sys.stderr)
        return EXIT_OK
    try:
        with Client(args.socket, workspace=workspace, autostart=args.autostart) as client:
            budget = min(args.budget, HOOK_MAX_TOKENS)
            result = client.context(hook.prompt, file=args.file, budget_tokens=budget)
    except MemdError as exc:
        print(f"memd: {exc.message} No memory added.", file=sys.stderr)
        return EXIT_OK
    if text := hook_output(result.markdown):
        print(text)
    return EXIT_OK
