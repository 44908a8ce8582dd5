"""The full `memd` command: parse the command line (`memd.cli.parser`) and hand it to its verb:
`serve` runs the daemon; every other verb is a thin client call.

Exit codes are `memd.cli.exit_codes`. Client verbs start a daemon when none runs
(`--no-autostart` turns that off; `status` never starts one). Only `serve` imports the server
stack, so client verbs start fast; `service`, `init`, `merge-file` and `mcp` are imported only
when run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from memd.cli.context_hook import run_context_hook
from memd.cli.exit_codes import EXIT_USAGE
from memd.cli.parser import build_parser
from memd.cli.serve import run_serve
from memd.cli.stdin_text import read_stdin
from memd.cli.usage_errors import parse, verb_parser
from memd.cli.verbs import run_client_verb
from memd.cli.watch import run_watch
from memd.config import LOG_LEVELS


def run(argv: Sequence[str] | None = None, *, stdin: bytes | None = None) -> int:
    """Run the CLI with `argv` (default: sys.argv[1:]) and return the exit code; `stdin` is
    what was already read from standard input (by the prompt hook's fast path)."""
    parser = build_parser()
    args = parse(parser, None if argv is None else list(argv))
    if args.verb is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.verb == "serve":
        env_level = os.environ.get("MEMD_LOG_LEVEL", "INFO").upper()
        if args.log_level is None and env_level not in LOG_LEVELS:
            verb_parser(parser, args).error(
                f"MEMD_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}; fix or unset it"
            )
        return run_serve(args)
    if args.verb == "watch":
        return run_watch(args)
    if args.verb == "context" and args.hook == "claude":
        data = read_stdin("the hook's JSON input") if stdin is None else stdin
        return run_context_hook(args, data)
    if args.verb == "service":
        from memd.service.install import run_service

        return run_service(args)
    if args.verb == "init":
        from memd.cli.init import run_init

        return run_init(args)
    if args.verb == "git-setup":
        from memd.cli.init import run_git_setup

        return run_git_setup(args)
    if args.verb == "merge-file":
        from memd.cli.merge_file import run_merge_file

        return run_merge_file(args)
    if args.verb == "mcp":
        from memd.mcp_bridge import run_mcp

        return run_mcp(args)
    if args.verb == "extract":
        return _extract(parser, args)
    return run_client_verb(args)


def _extract(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """`extract`: the capture hook (`--hook claude`), or the verb once its input is read,
    before a daemon is asked (or started): `--transcript` made absolute (not with a message),
    else the message, from stdin when not on the command line."""
    if args.hook == "claude":
        from memd.cli.capture_hook import run_capture_hook

        return run_capture_hook(args.socket, args.workspace, autostart=args.autostart)
    if args.transcript is not None:
        if args.text:
            verb_parser(parser, args).error(
                "extract takes a message or --transcript FILE, not both; drop one"
            )
        args.transcript = os.path.abspath(args.transcript)
    elif not args.text:
        args.text = [read_stdin("the message").decode("utf-8", errors="replace")]
    return run_client_verb(args)
