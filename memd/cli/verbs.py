"""The client verbs (store, query, cleanup, list, get, delete, stats, status, context,
extract): one small function per verb calls the daemon and names its renderer (`VERBS`);
`run_client_verb` runs one and prints the result, as text or with --json.

Rule: every message the user sees passes through `visible` (a memory file's terminal escapes are
shown, never obeyed); `watch` and the prompt hook share this module's notes and error report.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import msgspec

from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_UNREACHABLE
from memd.cli.render import (
    render_cleanup,
    render_context,
    render_entries,
    render_extract,
    render_query,
    render_stats,
    render_status,
)
from memd.cli.where import Chosen, choose, note, origin_phrase, reported
from memd.core.format.controls import visible
from memd_client import Client, DaemonUnavailable, MemdError, RpcError


def show_client_notes() -> None:
    """Print the client library's notes (such as "started a daemon") on stderr."""
    import logging  # here, not at import: `memd context --hook` stays lean

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memd: %(message)s"))
    client_logger = logging.getLogger("memd_client")
    client_logger.addHandler(handler)
    client_logger.setLevel(logging.INFO)


def run_client_verb(args: argparse.Namespace) -> int:
    """Run one client verb against the daemon and print its result, after a line on stderr
    naming the workspace when it was not found by its `.memory/` (`memd.cli.where`)."""
    show_client_notes()
    args.chosen = choose(args.workspace)
    autostart = args.autostart and args.verb != "status"
    try:
        with Client(args.socket, workspace=args.chosen.path, autostart=autostart) as client:
            result, render, ok = VERBS[args.verb](client, args)
    except MemdError as exc:
        report_error(exc, as_json=args.json)
        return EXIT_UNREACHABLE if isinstance(exc, DaemonUnavailable) else EXIT_ERROR
    if args.verb not in NAMED_IN_OUTPUT and (line := note(args.chosen, *reported(result))):
        print(f"memd: {visible(line)}", file=sys.stderr)
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(result), indent=2).decode())
    elif text := render(result):
        print(visible(text))  # a memory file's terminal escapes are shown, never obeyed
    return EXIT_OK if ok else EXIT_ERROR


def report_error(exc: MemdError, *, as_json: bool) -> None:
    """Print `exc` on stderr: one sentence, or with --json an error object on stdout too."""
    print(f"memd: {visible(exc.message)}", file=sys.stderr)
    if as_json:
        code = exc.code if isinstance(exc, RpcError) else None
        error = {"error": {"code": code, "type": type(exc).__name__, "message": exc.message}}
        print(msgspec.json.format(msgspec.json.encode(error), indent=2).decode())


Outcome = tuple[Any, Callable[[Any], str], bool]


def _store(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.store(
        category=args.category, content=" ".join(args.content), slug=args.slug, dry_run=args.dry_run
    )
    return result, lambda r: r.message, True


def _query(client: Client, args: argparse.Namespace) -> Outcome:
    text = " ".join(args.query)
    result = client.query(
        text, category=args.category, limit=args.limit, min_score=args.min_score, tags=args.tags
    )
    return result, lambda r: render_query(r, text, args.tags), True


def _cleanup(client: Client, args: argparse.Namespace) -> Outcome:
    return client.cleanup(apply=args.apply), render_cleanup, True


def _list(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.list(category=args.category, tags=args.tags)
    return result, lambda r: render_entries(r, args.tags), True


def _get(client: Client, args: argparse.Namespace) -> Outcome:
    if args.slug is None:
        return client.get(file=args.file, lines=args.lines), render_entries, True
    return client.get(category=args.category, slug=args.slug), render_entries, True


def _delete(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.delete(category=args.category, slug=args.slug)
    return result, lambda r: r.message, result.deleted


def _stats(client: Client, args: argparse.Namespace) -> Outcome:
    chosen: Chosen = args.chosen
    return client.stats(), lambda r: render_stats(r, origin_phrase(chosen)), True


def _status(client: Client, args: argparse.Namespace) -> Outcome:
    chosen: Chosen = args.chosen
    return client.status(), lambda r: render_status(r, chosen.path, origin_phrase(chosen)), True


def _context(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.context(" ".join(args.text), file=args.file, budget_tokens=args.budget)
    return result, render_context, True


def _extract(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.extract(" ".join(args.text), store=args.store)
    return result, render_extract, all(c.error is None for c in result.candidates)


NAMED_IN_OUTPUT = frozenset({"stats", "status"})
"""Verbs whose own output names the workspace and how it was found (no stderr line)."""

VERBS: dict[str, Callable[[Client, argparse.Namespace], Outcome]] = {
    "store": _store,
    "query": _query,
    "cleanup": _cleanup,
    "list": _list,
    "get": _get,
    "delete": _delete,
    "stats": _stats,
    "status": _status,
    "context": _context,
    "extract": _extract,
}
