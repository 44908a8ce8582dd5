"""The `memd` command line's grammar: `GRAMMAR` names each verb, its help line, the shared
options it takes (`SHARED`) and the small builder that adds its own arguments
(`memd.cli.usage_errors` reads a command line with it, and words its usage errors).

Rules:
- The table's order is the order of `memd --help`; a builder only adds arguments (and the
  verb's long description), it never runs anything.
- A shared option may come before the verb (`memd --socket PATH query x`) or after it; a verb
  that does not take it refuses it either way, as a usage error naming the option (exit 2).

Size: the whole grammar, one table and a small builder a verb; read top to bottom.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from memd import __version__
from memd.cli.arg_types import bounded, positive_float, positive_int
from memd.cli.merge_file import MERGE_HELP, MERGE_MISSING, merge_file_arguments
from memd.cli.usage_errors import Check, MemdParser
from memd.config import LOG_LEVELS
from memd_client import default_socket_path, protocol as p
from memd_client._framing import DEFAULT_MAX_FRAME

CATEGORY_FILTER_HELP = (
    "only this category: Instruction, Quirk, Preference, Decision, Security, Procedure, "
    "Episode or a custom one (default: all)"
)
TAG_HELP = "only entries with this #tag, given with or without the '#' (repeatable: all must match)"


class Shared(NamedTuple):
    """A shared option: its flags, where it lands, and its help."""

    flags: tuple[str, ...]
    dest: str
    help: str
    default: Any
    store: bool | None = None  # what the flag stores (a switch); None: it takes a value


SHARED: dict[str, Shared] = {
    "--socket": Shared(("--socket",), "socket", "daemon socket path", None),
    "--workspace": Shared(
        ("--workspace", "-w"), "workspace", "project root (default: nearest .memory/.git)", None
    ),
    "--json": Shared(
        ("--json",), "json", "print the result (or the error) as JSON", False, store=True
    ),
    "--no-autostart": Shared(
        ("--no-autostart",),
        "autostart",
        "fail (exit 3) instead of starting a daemon when none is running",
        True,
        store=False,
    ),
}
"""The options several verbs share, by their first flag (docs/reference/cli.md's table lists
who takes which; a test holds it to this table)."""
CLIENT = ("--socket", "--workspace", "--json", "--no-autostart")
"""What every verb that asks the daemon takes."""


class Verb(NamedTuple):
    """One verb of the table: its help line, the `SHARED` options it takes (`shared_help`
    rewords one for this verb), its builder, its actions (a verb of verbs, such as
    `service status`), the sentence a missing argument adds (what to give, e.g. how) and the
    check of what argparse cannot require (`memd.cli.usage_errors.Check`)."""

    help: str
    takes: tuple[str, ...] = ()
    build: Callable[[argparse.ArgumentParser], None] | None = None
    actions: Mapping[str, Verb] | None = None
    missing: str | None = None
    shared_help: Mapping[str, str] = MappingProxyType({})
    check: Check | None = None


def build_parser() -> MemdParser:
    """Return the argument parser for every verb."""
    parser = MemdParser(
        prog="memd", description="memd: one shared memory daemon for AI coding agents."
    )
    parser.add_argument("--version", action="version", version=f"memd {__version__}")
    _add_shared(parser, tuple(SHARED), {}, before_verb=True)
    _add_verbs(parser, GRAMMAR, "verb", "VERB")
    return parser


def _add_verbs(
    parser: argparse.ArgumentParser,
    table: Mapping[str, Verb],
    dest: str,
    metavar: str,
    *,
    required: bool = False,
) -> None:
    verbs = parser.add_subparsers(dest=dest, metavar=metavar, required=required)
    for name, verb in table.items():
        sub = verbs.add_parser(name, help=verb.help, missing=verb.missing, check=verb.check)
        _add_shared(sub, verb.takes, verb.shared_help, before_verb=False)
        if verb.build is not None:
            verb.build(sub)
        if verb.actions is not None:  # `memd service` alone names the actions
            _add_verbs(sub, verb.actions, "action", "ACTION", required=True)


def _add_shared(
    parser: argparse.ArgumentParser,
    takes: tuple[str, ...],
    rewording: Mapping[str, str],
    *,
    before_verb: bool,
) -> None:
    """Add the shared options `takes`. Before the verb they carry the defaults; after it they
    are suppressed unless given, so a value given before the verb stands."""
    for name in takes:
        option = SHARED[name]
        default = option.default if before_verb else argparse.SUPPRESS
        text = rewording.get(name, option.help)
        if option.store is None:
            parser.add_argument(*option.flags, dest=option.dest, default=default, help=text)
        else:
            action = "store_true" if option.store else "store_false"
            parser.add_argument(
                *option.flags, dest=option.dest, action=action, default=default, help=text
            )


def _serve(serve: argparse.ArgumentParser) -> None:
    serve.description = (
        "Run the memd daemon on --socket, else the default socket (here: "
        f"{default_socket_path()}); under systemd or launchd it serves the socket it is "
        "given. SIGTERM stops it gracefully, SIGHUP re-reads the config file."
    )
    serve.add_argument(
        "--background",
        action="store_true",
        help="detach; return once the daemon serves (exit 0) or failed to start (exit 1)",
    )
    serve.add_argument(
        "--ready-timeout",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="with --background: how long to wait for the daemon to serve before stopping it "
        "(default 10)",
    )
    serve.add_argument(
        "--config",
        metavar="PATH",
        help="settings file (default: $XDG_CONFIG_HOME/memd/config.toml)",
    )
    serve.add_argument(
        "--log-file",
        metavar="PATH",
        help="append the log here (default: stderr, or ~/.local/state/memd/memd.log with "
        "--background)",
    )
    serve.add_argument(
        "--max-frame-bytes",
        type=positive_int,
        help=f"largest request accepted (default {DEFAULT_MAX_FRAME})",
    )
    serve.add_argument(
        "--lock-timeout",
        type=positive_float,
        metavar="SECONDS",
        help="how long a write waits for another tool's .memory/.lock (default 10)",
    )
    serve.add_argument(
        "--idle-exit",
        type=positive_float,
        metavar="SECONDS",
        help="socket-activated only: exit after this long with no clients",
    )
    serve.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        help="default: $MEMD_LOG_LEVEL or INFO",
    )


def _store(store: argparse.ArgumentParser) -> None:
    store.add_argument(
        "--category",
        "-c",
        default="Instruction",
        help=(
            "Instruction (default), Quirk, Preference, Decision, Security, Procedure, Episode, "
            "or a custom category from the config or .memory/memd.toml"
        ),
    )
    store.add_argument("--slug", "-s", help="kebab-case id; an existing slug is updated")
    store.add_argument("--dry-run", action="store_true", help="report, write nothing")
    _user_wide(store, "store in your user-wide memory, searched from every project")
    store.add_argument("content", nargs="+", metavar="TEXT", help="the memory: one sentence")


def _procedure(procedure: argparse.ArgumentParser) -> None:
    procedure.description = (
        "Store a named workflow and its steps as one line of .memory/procedures.md "
        "(`- [slug] Name: step; step.`); the same name (or --slug) updates it."
    )
    procedure.add_argument(
        "--slug", "-s", help="kebab-case id (default: its namesake's, else from the name)"
    )
    procedure.add_argument("--dry-run", action="store_true", help="report, write nothing")
    procedure.add_argument("name", metavar="NAME", help="what it does, e.g. 'Deploy to staging'")
    procedure.add_argument(
        "steps", nargs="+", metavar="STEP", help="each step, in order (quote one with spaces)"
    )


def _outcome(outcome: argparse.ArgumentParser) -> None:
    outcome.description = (
        "Record that a procedure worked or failed (kept beside the memory, never in "
        ".memory/); procedures that worked are offered first."
    )
    outcome.add_argument("slug", metavar="SLUG", help="the procedure's slug")
    outcome.add_argument("outcome", choices=("success", "failure"), help="how it went")


def _query(query: argparse.ArgumentParser) -> None:
    query.add_argument("--category", "-c", help=CATEGORY_FILTER_HELP)
    query.add_argument(
        "--limit",
        "-n",
        type=bounded(p.QueryParams, "limit", int),
        default=p.DEFAULT_QUERY_LIMIT,
        help=f"most results to show, up to {p.MAX_QUERY_LIMIT} (default {p.DEFAULT_QUERY_LIMIT})",
    )
    query.add_argument(
        "--min-score",
        type=bounded(p.QueryParams, "min_score", float),
        metavar="SCORE",
        help="only results scoring at least this much; scores run from 0 to 1",
    )
    query.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)
    query.add_argument(
        "--mode",
        choices=("auto", "lexical", "semantic"),
        default="auto",
        help="auto (default): by meaning too once the daemon's model is ready, else by words; "
        "lexical: by words only; semantic: by meaning too, or an error saying why not",
    )
    _sources(query, ("memory", "global", "file", "chat"))
    query.add_argument(
        "--file",
        help="a file the search is about: entries scoped to it (paths: ...) first, entries "
        "scoped to other files left out",
    )
    query.add_argument(
        "--include-archived",
        action="store_true",
        help="also search .memory/archive.md (hits say they are archived, and why)",
    )
    query.add_argument("query", nargs="*", help="words to search for (none: list entries)")


def _episode(episode: argparse.ArgumentParser) -> None:
    episode.add_argument(
        "--outcome", "-o", metavar="WORD", help="how it ended, e.g. fixed or failed (#outcome/..)"
    )
    episode.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)
    episode.add_argument("--dry-run", action="store_true", help="report, write nothing")
    _user_wide(episode, "store in your user-wide memory, searched from every project")
    episode.add_argument("text", nargs="+", metavar="TEXT", help="what happened: one sentence")


def _sources(parser: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    parser.add_argument(
        "--source",
        "-s",
        action="append",
        dest="sources",
        choices=choices,
        help="search only these (repeatable): memory (the project's), global (your user-wide "
        "memory)"
        + (", file (read-only sources such as CLAUDE.md)" if "file" in choices else "")
        + (
            ", chat (coding agents' past sessions in this project: what was said, not curated "
            "rules; only when named)"
            if "chat" in choices
            else ""
        ),
    )


def _cleanup(cleanup: argparse.ArgumentParser) -> None:
    how = cleanup.add_mutually_exclusive_group()
    how.add_argument("--apply", action="store_true", help="carry out the plan")
    how.add_argument(
        "--propose",
        action="store_true",
        help="queue the entries it would prune (and the stale ones) for `memd review` instead",
    )
    _user_wide(cleanup, "clean up your user-wide memory instead of the project's")


def _check(check: argparse.ArgumentParser) -> None:
    check.add_argument("--category", "-c", help=CATEGORY_FILTER_HELP)
    how = check.add_mutually_exclusive_group()
    how.add_argument(
        "--fix",
        action="store_true",
        help="rewrite each moved citation to where it went (an update: the old line is archived)",
    )
    how.add_argument(
        "--propose",
        action="store_true",
        help="queue each stale entry (its fix, else its removal) for `memd review` instead",
    )
    check.description = (
        "Check each memory against the code it cites (paths, symbols, commands): stale ones "
        "first, with what is wrong and the fix. Exit 4 when any memory is stale."
    )


def _stats(stats: argparse.ArgumentParser) -> None:
    _user_wide(stats, "count your user-wide memory instead of the project's")


def _user_wide(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--global", dest="user_wide", action="store_true", help=help)


def _review(review: argparse.ArgumentParser) -> None:
    _user_wide(review, "walk your user-wide memory's inbox instead of the project's")


def _list(listing: argparse.ArgumentParser) -> None:
    listing.add_argument("--category", "-c", help=CATEGORY_FILTER_HELP)
    listing.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)
    _sources(listing, ("memory", "global"))


def _get(get: argparse.ArgumentParser) -> None:
    get.add_argument("--category", "-c", help="default: look in every category")
    get.add_argument("--file", help="category file name, with --lines")
    get.add_argument("--lines", help="line range 'a-b', with --file (a chat hit's: its turns)")
    get.add_argument(
        "--around",
        type=bounded(p.GetParams, "around", int),
        default=2,
        metavar="N",
        help="for a chat hit's --file and --lines: also N turns before and after (default 2)",
    )
    _user_wide(get, "look in your user-wide memory instead of the project's")
    get.add_argument(
        "slug",
        nargs="?",
        metavar="SLUG",
        help="the entry's kebab-case id (or use --file and --lines)",
    )


def _get_needs(args: argparse.Namespace) -> str | None:
    if args.slug is not None or (args.file is not None and args.lines is not None):
        return None
    return (
        "SLUG, or --file and --lines; e.g. `memd get use-helm` or "
        "`memd get --file decisions.md --lines 3-9` (`memd list` shows both)"
    )


def _delete(delete: argparse.ArgumentParser) -> None:
    delete.add_argument(
        "--category", "-c", required=True, help="the entry's category, e.g. Quirk or Decision"
    )
    delete.add_argument("slug", metavar="SLUG", help="the entry's kebab-case id")
    _user_wide(delete, "delete from your user-wide memory")


def _blame(blame: argparse.ArgumentParser) -> None:
    blame.add_argument("slug", metavar="SLUG", nargs="?", help="the entry's kebab-case id")
    blame.add_argument("--text", help="an entry without a slug: its exact text")
    _user_wide(blame, "an entry of your user-wide memory")


def _blame_needs(args: argparse.Namespace) -> str | None:
    if (args.slug is None) != (args.text is None):
        return None
    return "SLUG or --text (not both); e.g. `memd blame use-helm` (`memd list` shows slugs)"


def _undo(undo: argparse.ArgumentParser) -> None:
    undo.add_argument(
        "--to",
        metavar="TIME",
        help="undo every write since TIME: an age (10m, 2h, 1d) or an ISO time "
        "(2026-11-20T14:05, local); default: the newest write alone",
    )
    undo.add_argument("--dry-run", action="store_true", help="show what it would take back")
    _user_wide(undo, "undo a write to your user-wide memory")


def _restore(restore: argparse.ArgumentParser) -> None:
    restore.add_argument("slug", metavar="SLUG", nargs="?", help="the archived entry's slug")
    restore.add_argument("--text", help="an archived entry without a slug: its exact text")
    restore.add_argument("--category", "-c", help="look only at this category's archive lines")
    restore.add_argument("--dry-run", action="store_true", help="show what it would do")
    _user_wide(restore, "restore into your user-wide memory")


def _restore_needs(args: argparse.Namespace) -> str | None:
    if (args.slug is None) != (args.text is None):
        return None
    return "SLUG or --text (not both); e.g. `memd restore use-helm` (`memd blame` names them)"


def _context(context: argparse.ArgumentParser) -> None:
    context.add_argument("--file", help="a file the prompt is about (its path words count)")
    context.add_argument(
        "--budget",
        type=bounded(p.ContextParams, "budget_tokens", int),
        metavar="TOKENS",
        help=f"largest block, in estimated tokens (default {p.DEFAULT_CONTEXT_BUDGET}; with "
        "--hook: 300 for a file, both at most 3000)",
    )
    context.add_argument(
        "--hook",
        choices=("claude",),
        help="read a Claude Code hook's JSON on stdin (UserPromptSubmit, or PreToolUse and "
        "PostToolUse of Read, Edit, MultiEdit, Write) and answer as it expects",
    )
    context.add_argument("text", nargs="*", help="what the prompt is about")


def _why(why: argparse.ArgumentParser) -> None:
    why.add_argument("file", metavar="FILE", help="the file an agent reads or edits")
    why.add_argument(
        "--budget",
        type=bounded(p.WhyParams, "budget_tokens", int),
        metavar="TOKENS",
        help=f"largest block, in estimated tokens (default {p.DEFAULT_CONTEXT_BUDGET}; with "
        "--session: 300, as the file hook)",
    )
    why.add_argument(
        "--session",
        metavar="ID",
        help="explain the file hook's answer in this Claude Code session (its session_id): no "
        "always layer, and what the session was already given is named as such",
    )
    why.add_argument("text", nargs="*", help="what the prompt is about (optional)")


def _extract(extract: argparse.ArgumentParser) -> None:
    how = extract.add_mutually_exclusive_group()
    how.add_argument("--store", action="store_true", help="store what is found")
    how.add_argument(
        "--propose", action="store_true", help="queue what is found for `memd review` instead"
    )
    extract.add_argument(
        "--transcript",
        metavar="FILE",
        help="read the person's turns of this coding agent session file (Claude Code's or "
        "Codex's JSON lines) instead of a message; not with a message",
    )
    extract.add_argument(
        "--hook",
        choices=("claude",),
        help="the Claude Code SessionEnd/PreCompact hook: read the hook's JSON on stdin and "
        "queue what the session's transcript says for review; silent, always exits 0",
    )
    extract.add_argument("text", nargs="*", help="the message (default: read stdin)")


def _reflect(reflect: argparse.ArgumentParser) -> None:
    reflect.add_argument(
        "file",
        nargs="?",
        default="-",
        help="a session transcript: plain text or a Claude Code .jsonl (default: stdin)",
    )


def _init(init: argparse.ArgumentParser) -> None:
    init.add_argument("--agents", action="store_true", help="update AGENTS.md")
    init.add_argument(
        "--claude",
        action="store_true",
        help="update CLAUDE.md, and add memd's hooks to .claude/settings.json (committed)",
    )
    init.add_argument(
        "--claude-local",
        action="store_true",
        help="add memd's hooks to .claude/settings.local.json instead (yours alone, ignored by "
        "git); alone, it updates no instruction file",
    )
    init.add_argument(
        "--copilot", action="store_true", help="update .github/copilot-instructions.md"
    )
    init.add_argument(
        "--file", action="append", default=[], metavar="PATH", help="update another file"
    )
    init.add_argument("--dry-run", action="store_true", help="show the changes as a diff")
    init.add_argument(
        "--git",
        action="store_true",
        help="also set up git to merge .memory/ files entry by entry (as memd git-setup)",
    )


def _git_setup(setup: argparse.ArgumentParser) -> None:
    setup.description = (
        "make git merge this project's memory files entry by entry: .gitattributes names "
        "memd's merge driver for .memory/*.md (commit it), and this clone's git config defines "
        "it (git config is never committed: run this once in every clone)."
    )
    setup.add_argument("--dry-run", action="store_true", help="show the changes, make none")


def _service(service: argparse.ArgumentParser) -> None:
    service.description = (
        "install: write the systemd units (Linux) or launchd agent (macOS) for this memd and "
        "start listening on the default socket; the daemon starts on the first request. "
        "uninstall: stop and remove them. status: show the files, the service manager's "
        "view and whether a daemon answers (exit 0 if installed and listening, else 3)."
    )


def _dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run; change nothing"
    )


def _service_install(install: argparse.ArgumentParser) -> None:
    _dry_run(install)
    install.add_argument(
        "--idle-exit",
        type=positive_float,
        metavar="SECONDS",
        help="let the daemon exit after this long with no clients (restarted on demand)",
    )


SERVICE_ACTIONS: dict[str, Verb] = {
    "install": Verb("install memd as a user service and start listening", (), _service_install),
    "uninstall": Verb("stop and remove memd's user service", (), _dry_run),
    "status": Verb(
        "show the files, the service manager's view and whether a daemon answers", ("--json",)
    ),
}
"""`memd service`'s actions."""


GRAMMAR: dict[str, Verb] = {
    "serve": Verb(
        "run the daemon (in the foreground by default)",
        ("--socket",),
        _serve,
        shared_help={"--socket": "socket path to serve on"},
    ),
    "store": Verb(
        "store one memory",
        CLIENT,
        _store,
        missing='give the memory, e.g. `memd store -c Decision "Deploy with Helm."`',
    ),
    "query": Verb("search memories", CLIENT, _query),
    "cleanup": Verb("merge, prune and slug", CLIENT, _cleanup),
    "review": Verb(
        "walk the review inbox: accept, edit, reject or skip what agents proposed",
        CLIENT,
        _review,
    ),
    "list": Verb("list entries", CLIENT, _list),
    "get": Verb("show entries by slug or lines", CLIENT, _get, check=_get_needs),
    "delete": Verb(
        "delete an entry (archived)",
        CLIENT,
        _delete,
        missing="give the entry's category and slug, e.g. `memd delete -c Decision use-helm` "
        "(`memd list` shows both)",
    ),
    "blame": Verb(
        "who wrote each version of an entry, when, and what it replaced",
        CLIENT,
        _blame,
        check=_blame_needs,
    ),
    "undo": Verb(
        "take back the newest write to memory (or every one since --to TIME)", CLIENT, _undo
    ),
    "restore": Verb(
        "bring an archived entry back under its slug", CLIENT, _restore, check=_restore_needs
    ),
    "stats": Verb("entry counts per category", CLIENT, _stats),
    "status": Verb("is the daemon up, and what it serves", CLIENT),
    "watch": Verb("print each change to the workspace's memory as it happens", CLIENT),
    "context": Verb(
        "print a memory block for a prompt (Security and Instruction, then what is relevant)",
        CLIENT,
        _context,
    ),
    "extract": Verb(
        "find memories (preferences, corrections, constraints) in a message", CLIENT, _extract
    ),
    "check": Verb("check memories against the code they cite", CLIENT, _check),
    "reflect": Verb(
        "ask the daemon's model which memories a session implies; they wait in the inbox",
        CLIENT,
        _reflect,
    ),
    "why": Verb(
        "show which memories a file gets, and why each other one does not",
        CLIENT,
        _why,
        missing="give a file, e.g. `memd why src/db/migrate.py`",
    ),
    "procedure": Verb(
        "store a procedure: a name and its steps",
        CLIENT,
        _procedure,
        missing='give a name and its steps, e.g. `memd procedure "Deploy to staging" '
        '"build the image" "push it"`',
    ),
    "outcome": Verb(
        "record that a procedure worked or failed",
        CLIENT,
        _outcome,
        missing="give the procedure's slug and how it went, e.g. `memd outcome "
        "deploy-staging success`",
    ),
    "episode": Verb(
        "store an episode: a dated event and its outcome (episodes.md)",
        CLIENT,
        _episode,
        missing='give what happened, e.g. `memd episode --outcome fixed "The deploy timed out."`',
    ),
    "init": Verb(
        "create .memory/ files and a memd block in agent instruction files",
        ("--workspace", "--json"),
        _init,
    ),
    "git-setup": Verb(
        "make git merge .memory/ files entry by entry in this clone",
        ("--workspace", "--json"),
        _git_setup,
    ),
    "mcp": Verb(
        "serve memd's tools to an agent over MCP (stdio)",
        ("--socket", "--workspace"),
        shared_help={
            "--workspace": "project root (default: the MCP client's first root, else the "
            "current directory)"
        },
    ),
    "merge-file": Verb(MERGE_HELP, build=merge_file_arguments, missing=MERGE_MISSING),
    "service": Verb(
        "install, remove or inspect memd as a systemd or launchd user service",
        build=_service,
        actions=SERVICE_ACTIONS,
        missing="choose one, e.g. `memd service status`",
    ),
}
"""Every verb, in the order `memd --help` lists them (as h11 dispatches by its READERS table)."""
