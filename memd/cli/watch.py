"""`memd watch`: print one line (or one JSON object) per change to the workspace's memory until
Ctrl-C or SIGTERM (exit 0 either way).

SIGINT gets Python's own handler back even when the parent started memd with it ignored (a
background job of a script, `nohup`): Python keeps an inherited SIG_IGN, and a watcher that
ignores Ctrl-C could be stopped only by SIGKILL.

Rule: the subscription is the client library's; this module only shows what it delivers.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading

import msgspec

from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_UNREACHABLE
from memd.cli.render import render_event
from memd.cli.verbs import report_error, show_client_notes
from memd.cli.where import choose
from memd.core.format.controls import visible
from memd_client import Client, DaemonUnavailable, MemdError, protocol as p


class _Stopped(Exception):
    """Raised in the main thread by the SIGTERM handler."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped


def run_watch(args: argparse.Namespace) -> int:
    """Print one line per change (or one JSON object with --json) until Ctrl-C or SIGTERM."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop)
    try:
        return _watch(args)
    except (KeyboardInterrupt, _Stopped):  # stopped before the subscription was in place
        return EXIT_OK


def _watch(args: argparse.Namespace) -> int:
    show_client_notes()
    workspace = choose(args.workspace).path  # a deleted current directory: a sentence, exit 2
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
            with contextlib.suppress(KeyboardInterrupt, _Stopped):
                ended.wait()
    except MemdError as exc:
        lost.append(exc)
    if lost:
        report_error(lost[0], as_json=args.json)
        return EXIT_UNREACHABLE if isinstance(lost[0], DaemonUnavailable) else EXIT_ERROR
    return EXIT_OK
