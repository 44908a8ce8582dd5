"""`memd watch`: print one line (or one JSON object) per change to the workspace's memory until
Ctrl-C.

Rule: the subscription is the client library's; this module only shows what it delivers.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading

import msgspec

from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_UNREACHABLE
from memd.cli.render import render_event
from memd.cli.verbs import report_error, show_client_notes
from memd.core.format.controls import visible
from memd_client import Client, DaemonUnavailable, MemdError, find_workspace, protocol as p


def run_watch(args: argparse.Namespace) -> int:
    """Print one line per change (or one JSON object with --json) until Ctrl-C."""
    show_client_notes()
    workspace = args.workspace or find_workspace()
    lost: list[MemdError] = []
    ended = threading.Event()

    def show(event: p.Event) -> None:
        if args.json:
            kind = "changed" if isinstance(event, p.Changed) else "resync"
            print(msgspec.json.encode({"method": kind, "params": event}).decode(), flush=True)
        else:
            print(visible(render_event(event)), flush=True)

    def on_error(exc: MemdError) -> None:
        lost.append(exc)
        ended.set()

    try:
        with Client(args.socket, workspace=workspace, autostart=args.autostart) as client:
            subscription = client.subscribe(show, on_error=on_error)
        with subscription:
            if not args.json:
                print(
                    visible(f"Watching {workspace} (Ctrl-C to stop)."), file=sys.stderr, flush=True
                )
            with contextlib.suppress(KeyboardInterrupt):
                ended.wait()
    except MemdError as exc:
        lost.append(exc)
    if lost:
        report_error(lost[0], as_json=args.json)
        return EXIT_UNREACHABLE if isinstance(lost[0], DaemonUnavailable) else EXIT_ERROR
    return EXIT_OK
