"""The client verbs (store, query, cleanup, list, get, delete, stats, status, context,
extract, check): one small function per verb calls the daemon and says what came of it (`Outcome`);
`run_client_verb` runs one and prints the result, as text or with --json.

Rules:
- Stdout carries results only. Every error, miss and warning goes to stderr as a `memd: `
  sentence, with --json too: an error the daemon answered (or a slug `get` or `delete` did not
  find, or a candidate `extract --store` could not store) exits 1; a file a read left out
  (`unreadable`) is a warning beside a served result, and exits 0. `check` exits
  `EXIT_STALE` (4) when any memory is stale (after --fix: still stale), so a script can tell
  it from an error.
- Every message the user sees passes through `visible` (a memory file's terminal escapes are
  shown, never obeyed); `watch` and the prompt hook share this module's notes and error report.

Size: one short function per verb, side by side, so each verb's output rules read in one place;
verbs with more to say (review, reflect, why, hooks) have modules of their own.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec

from memd import __version__
from memd.cli import git_setup
from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_STALE, EXIT_UNREACHABLE
from memd.cli.hook import FILE_HOOK_BUDGET
from memd.cli.render import (
    context_loading_note,
    render_check,
    render_cleanup,
    render_context,
    render_entries,
    render_extract,
    render_history,
    render_proposed,
    render_query,
    render_stats,
    render_status,
    render_why,
    unreadable_lines,
)
from memd.cli.where import Chosen, choose, note, origin_phrase, reported
from memd.core.format.controls import visible
from memd.core.format.render import entry_text
from memd_client import (
    Client,
    DaemonUnavailable,
    EntryNotFound,
    MemdError,
    RpcError,
    protocol as p,
)


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
        with Client(
            args.socket,
            workspace=args.chosen.path,
            autostart=autostart,
            client_name="memd",
            client_version=__version__,
            origin="user",
        ) as client:
            outcome = VERBS[args.verb](client, args)
    except MemdError as exc:
        report_error(exc, as_json=args.json)
        return EXIT_UNREACHABLE if isinstance(exc, DaemonUnavailable) else EXIT_ERROR
    if args.verb not in NAMED_IN_OUTPUT and (line := note(args.chosen, *reported(outcome.result))):
        print(f"memd: {visible(line)}", file=sys.stderr)
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(outcome.result), indent=2).decode())
    elif text := outcome.render(outcome.result):
        print(visible(text))  # a memory file's terminal escapes are shown, never obeyed
    sys.stdout.flush()  # the result first, then what went wrong beside it
    for problem in outcome.problems:
        print(f"memd: {visible(problem)}", file=sys.stderr)
    if outcome.failed:
        return EXIT_ERROR
    return EXIT_STALE if outcome.stale else EXIT_OK


def report_error(exc: MemdError, *, as_json: bool) -> None:
    """Print `exc` on stderr: one sentence, or with --json an error object on stdout too."""
    print(f"memd: {visible(exc.message)}", file=sys.stderr)
    if as_json:
        code = exc.code if isinstance(exc, RpcError) else None
        error = {"error": {"code": code, "type": type(exc).__name__, "message": exc.message}}
        print(msgspec.json.format(msgspec.json.encode(error), indent=2).decode())


class Outcome(NamedTuple):
    """What a verb's call came to: the result (printed with --json), its text for stdout, the
    sentences for stderr (misses, failures, warnings), and whether it failed (exit 1)."""

    result: Any
    render: Callable[[Any], str]
    problems: list[str]
    failed: bool = False
    stale: bool = False
    """A check found stale memories (exit `EXIT_STALE`)."""


def _store(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.store(
        category=args.category,
        content=" ".join(args.content),
        slug=args.slug,
        dry_run=args.dry_run,
        scope=_scope(args),
        origin="user",
    )
    return Outcome(result, lambda r: r.message, [])


def _procedure(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.procedure(args.name, args.steps, slug=args.slug, dry_run=args.dry_run)
    return Outcome(result, lambda r: r.message, [])


def _outcome(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.outcome(args.slug, args.outcome)
    return Outcome(result, lambda r: r.message, [])


def _absolute(file: str | None) -> str | None:
    """A file named on the command line, as an absolute path (the daemon resolves a relative
    one against the workspace root, not the shell's directory)."""
    return None if file is None else os.path.abspath(file)


def _query(client: Client, args: argparse.Namespace) -> Outcome:
    text = " ".join(args.query)
    result = client.query(
        text,
        category=args.category,
        limit=args.limit,
        min_score=args.min_score,
        tags=args.tags,
        mode=args.mode,
        sources=args.sources,
        file=_absolute(args.file),
        include_archived=args.include_archived,
    )
    return Outcome(
        result, lambda r: render_query(r, text, args.tags), unreadable_lines(result.unreadable)
    )


def _episode(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.episode(
        " ".join(args.text),
        outcome=args.outcome,
        tags=args.tags,
        dry_run=args.dry_run,
        scope=_scope(args),
    )
    return Outcome(result, lambda r: r.message, [])


def _cleanup(client: Client, args: argparse.Namespace) -> Outcome:
    apply = ["memd", "cleanup", "--apply"]  # the same command, for the same workspace and daemon
    if args.user_wide:
        apply += ["--global"]
    if args.workspace:
        apply += ["--workspace", args.chosen.path]
    if args.socket:
        apply += ["--socket", args.socket]
    command = shlex.join(apply)
    result = client.cleanup(apply=args.apply, scope=_scope(args), propose=args.propose)
    return Outcome(result, lambda r: render_cleanup(r, command) + render_proposed(r.proposed), [])


def _scope(args: argparse.Namespace) -> p.Scope:
    return "global" if args.user_wide else "project"


def _list(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.list(category=args.category, tags=args.tags, sources=args.sources)
    return Outcome(
        result, lambda r: render_entries(r, args.tags), unreadable_lines(result.unreadable)
    )


def _get(client: Client, args: argparse.Namespace) -> Outcome:
    if args.slug is None:
        result = client.get(
            file=args.file, lines=args.lines, scope=_scope(args), around=args.around
        )
    else:
        result = client.get(category=args.category, slug=args.slug, scope=_scope(args))
    if result.text:  # lines of a read-only source: as they are
        return Outcome(result, lambda r: r.text, [])
    return Outcome(result, render_entries, unreadable_lines(result.unreadable))


def _delete(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.delete(category=args.category, slug=args.slug, scope=_scope(args))
    if result.deleted:
        return Outcome(result, lambda r: r.message, [])
    return Outcome(result, lambda r: "", [result.message], failed=True)


def _blame(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.history(slug=args.slug, text=args.text, scope=_scope(args))
    return Outcome(result, render_history, [])


def _undo(client: Client, args: argparse.Namespace) -> Outcome:
    from memd.mcp_bridge.undo_tools import render_undo

    result = client.undo(to=args.to, dry_run=args.dry_run, scope=_scope(args))
    refused = [c for c in result.changes if c.outcome == "refused"]
    return Outcome(result, render_undo, [], failed=bool(refused))


def _restore(client: Client, args: argparse.Namespace) -> Outcome:
    from memd.mcp_bridge.undo_tools import render_restore

    result = client.restore(
        slug=args.slug,
        text=args.text,
        category=args.category,
        dry_run=args.dry_run,
        scope=_scope(args),
    )
    return Outcome(result, render_restore, [], failed=result.outcome == "refused")


def _stats(client: Client, args: argparse.Namespace) -> Outcome:
    chosen: Chosen = args.chosen
    origin = "your user-wide memory" if args.user_wide else origin_phrase(chosen)
    return Outcome(client.stats(scope=_scope(args)), lambda r: render_stats(r, origin), [])


def _status(client: Client, args: argparse.Namespace) -> Outcome:
    chosen: Chosen = args.chosen
    warning = git_setup.status_warning(chosen.path)
    return Outcome(
        client.status(),
        lambda r: render_status(r, chosen.path, origin_phrase(chosen)),
        [] if warning is None else [warning],
    )


def _context(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.context(
        " ".join(args.text),
        file=_absolute(args.file),
        budget_tokens=args.budget or p.DEFAULT_CONTEXT_BUDGET,
    )
    problems = unreadable_lines(result.unreadable, result.markdown)
    if (loading := result.semantic_loading) is not None:
        problems.append(context_loading_note(loading))
    return Outcome(result, render_context, problems)


def _why(client: Client, args: argparse.Namespace) -> Outcome:
    """`memd why FILE`: as `context --file FILE`; with `--session`, as that session's file hook
    (no always layer, the file hook's budget, its ledger read but never written)."""
    hooked = args.session is not None
    default = FILE_HOOK_BUDGET if hooked else p.DEFAULT_CONTEXT_BUDGET
    result = client.why(
        os.path.abspath(args.file),
        " ".join(args.text),
        budget_tokens=default if args.budget is None else args.budget,
        session=args.session,
        always=not hooked,
    )
    return Outcome(result, render_why, [])


def _check(client: Client, args: argparse.Namespace) -> Outcome:
    """Check the memories against the code; with --fix, store each moved citation's fix under
    the entry's slug (an update: the old line goes to the archive), then check again."""
    result = client.check(category=args.category, propose=args.propose)
    problems = unreadable_lines(result.unreadable)
    fixed: dict[tuple[str, int], str] = {}
    not_fixed: list[str] = []
    if args.fix:
        fixes = [e for e in result.entries if e.status == "stale" and e.fix is not None]
        slugs: Counter[tuple[str, str | None]] = Counter(
            (e.category, e.slug) for e in result.entries if e.slug is not None
        )
        for entry in fixes:
            done, problem = _fix(client, entry, shared=slugs[(entry.category, entry.slug)] > 1)
            fixed[(entry.file, entry.line)] = done
            not_fixed += [problem] if problem else []
        if fixes:
            result = client.check(category=args.category)
    problems += not_fixed
    return Outcome(
        result,
        lambda r: render_check(r, fixed) + render_proposed(r.proposed),
        problems,
        failed=bool(not_fixed),
        stale=result.counts.stale > 0,
    )


def _fix(client: Client, entry: p.CheckedEntry, *, shared: bool) -> tuple[str, str]:
    """Store one entry's fix in its place (what was done, and what went wrong, "" if nothing),
    only if the entry still says what was checked (`replaces`): an entry edited or removed
    since is left as it is. An entry without a slug is left too: a store without one could
    land beside it; so is one whose slug another entry of its category has (`shared`): a
    store by that slug could replace the other one."""
    where = f"{entry.file}:{entry.line}"
    if entry.slug is None:
        return (
            "not fixed: it has no slug",
            f"{where} was not fixed: it has no slug to update it by; run `memd cleanup "
            "--apply` to give it one, then `memd check --fix` again.",
        )
    if shared:
        return (
            f"not fixed: another entry has its slug [{entry.slug}]",
            f"{where} was not fixed: another {entry.category} entry has its slug "
            f"[{entry.slug}], so an update by slug could replace that one; give one of them "
            "a slug of its own in the file, then run `memd check --fix` again.",
        )
    assert entry.fix is not None
    try:
        stored = client.store(
            category=entry.category,
            content=entry.fix,
            slug=entry.slug,
            replaces=entry.content,
            reason=f"fixed by memd check --fix: {entry.note}",
            origin="user",
        )
    except EntryNotFound:
        return (
            "not fixed: it changed since the check",
            f"{where} was not fixed: [{entry.slug}] was edited or removed since the check; run "
            "`memd check` again to see it as it is now.",
        )
    except RpcError as exc:
        return ("not fixed", f"{where} was not fixed: {exc.message}")
    return (f"fixed: now {entry_text(entry.category, entry.slug, stored.content)}", "")


def _extract(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.extract(
        " ".join(args.text), store=args.store, propose=args.propose, transcript=args.transcript
    )
    problems = [
        f'{c.category} "{c.content}" was not stored: {c.error}'
        for c in result.candidates
        if c.error is not None
    ]
    return Outcome(
        result,
        lambda r: render_extract(r) + render_proposed(r.proposed),
        problems,
        failed=bool(problems),
    )


def _review(client: Client, args: argparse.Namespace) -> Outcome:
    from memd.cli.review import render_review, review

    return Outcome(review(client, args), render_review, [])


def _reflect(client: Client, args: argparse.Namespace) -> Outcome:
    from memd.cli.reflect import reflect, render_reflect

    try:
        result = reflect(client, args.file)
    except ValueError as exc:
        return Outcome(None, str, [str(exc)], failed=True)
    return Outcome(result, render_reflect, [], failed=result.proposed is None)


NAMED_IN_OUTPUT = frozenset({"stats", "status"})
"""Verbs whose own output names the workspace and how it was found (no stderr line)."""

VERBS: dict[str, Callable[[Client, argparse.Namespace], Outcome]] = {
    "store": _store,
    "procedure": _procedure,
    "outcome": _outcome,
    "query": _query,
    "episode": _episode,
    "cleanup": _cleanup,
    "list": _list,
    "get": _get,
    "delete": _delete,
    "blame": _blame,
    "undo": _undo,
    "restore": _restore,
    "stats": _stats,
    "status": _status,
    "context": _context,
    "extract": _extract,
    "check": _check,
    "why": _why,
    "review": _review,
    "reflect": _reflect,
}
