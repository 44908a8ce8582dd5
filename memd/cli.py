"""The `memd` command: `serve` runs the daemon; every other verb is a thin client call.

Exit codes: 0 success, 1 the daemon answered with an error (or the request failed), 2 usage
error, 3 no daemon is reachable. Client verbs start a daemon when none runs (`--no-autostart`
turns that off; `status` never starts one). Only `serve` imports the server stack, so client
verbs start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from memd import __version__
from memd.config import LOG_LEVELS
from memd.core.format.controls import visible
from memd.core.format.render import entry_text, folded_entries
from memd_client import (
    Client,
    DaemonUnavailable,
    MemdError,
    RpcError,
    default_socket_path,
    find_workspace,
    protocol as p,
)
from memd_client._framing import DEFAULT_MAX_FRAME

if TYPE_CHECKING:
    from memd.background import Reporter

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3


def main(argv: Sequence[str] | None = None, *, stdin: bytes | None = None) -> int:
    """Run the CLI with `argv` (default: sys.argv[1:]) and return the exit code; `stdin` is
    what was already read from standard input (by the prompt hook's fast path)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verb is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.verb == "serve":
        env_level = os.environ.get("MEMD_LOG_LEVEL", "INFO").upper()
        if args.log_level is None and env_level not in LOG_LEVELS:
            parser.error(f"MEMD_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}")
        return run_serve(args)
    if args.verb == "get" and args.slug is None and (args.file is None or args.lines is None):
        parser.error(
            "get needs a SLUG, or --file and --lines (e.g. --file decisions.md --lines 3-9)"
        )
    if args.verb == "watch":
        return run_watch(args)
    if args.verb == "context" and args.hook == "claude":
        return run_context_hook(args, sys.stdin.buffer.read() if stdin is None else stdin)
    if args.verb == "service":
        from memd.service.install import run_service

        return run_service(args)
    if args.verb == "init":
        from memd.init import run_init

        return run_init(args)
    if args.verb == "mcp":
        from memd.mcp_bridge import run_mcp

        return run_mcp(args)
    return run_client_verb(args)


# ---------------------------------------------------------------------------- arguments


TAG_HELP = "only entries with this #tag, given with or without the '#' (repeatable: all must match)"


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser for every verb."""
    common = argparse.ArgumentParser(add_help=False)
    _add_common(common, suppress=True)
    socket_only = argparse.ArgumentParser(add_help=False)
    socket_only.add_argument("--socket", default=argparse.SUPPRESS, help="socket path to serve on")
    parser = argparse.ArgumentParser(
        prog="memd", description="memd: one shared memory daemon for AI coding agents."
    )
    parser.add_argument("--version", action="version", version=f"memd {__version__}")
    _add_common(parser, suppress=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    serve = verbs.add_parser(
        "serve",
        parents=[socket_only],
        help="run the daemon (in the foreground by default)",
        description=(
            "Run the memd daemon on --socket, else the default socket (here: "
            f"{default_socket_path()}); under systemd or launchd it serves the socket it is "
            "given. SIGTERM stops it gracefully, SIGHUP re-reads the config file."
        ),
    )
    serve.add_argument(
        "--background",
        action="store_true",
        help="detach; return once the daemon serves (exit 0) or failed to start (exit 1)",
    )
    serve.add_argument(
        "--ready-timeout",
        type=_positive_float,
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
        type=_positive_int,
        help=f"largest request accepted (default {DEFAULT_MAX_FRAME})",
    )
    serve.add_argument(
        "--lock-timeout",
        type=_positive_float,
        metavar="SECONDS",
        help="how long a write waits for another tool's .memory/.lock (default 10)",
    )
    serve.add_argument(
        "--idle-exit",
        type=_positive_float,
        metavar="SECONDS",
        help="socket-activated only: exit after this long with no clients",
    )
    serve.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        help="default: $MEMD_LOG_LEVEL or INFO",
    )

    store = verbs.add_parser("store", parents=[common], help="store one memory")
    store.add_argument(
        "--category",
        "-c",
        default="Instruction",
        help="Instruction (default), Quirk, Preference, Decision or Security",
    )
    store.add_argument("--slug", "-s", help="kebab-case id; an existing slug is updated")
    store.add_argument("--dry-run", action="store_true", help="report, write nothing")
    store.add_argument("content", nargs="+", help="the memory: one sentence")

    query = verbs.add_parser("query", parents=[common], help="search memories")
    query.add_argument("--category", "-c")
    query.add_argument("--limit", "-n", type=_positive_int, default=p.DEFAULT_QUERY_LIMIT)
    query.add_argument("--min-score", type=float)
    query.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)
    query.add_argument("query", nargs="*", help="words to search for (none: list entries)")

    cleanup = verbs.add_parser("cleanup", parents=[common], help="merge, prune and slug")
    cleanup.add_argument("--apply", action="store_true", help="carry out the plan")

    listing = verbs.add_parser("list", parents=[common], help="list entries")
    listing.add_argument("--category", "-c")
    listing.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)

    get = verbs.add_parser("get", parents=[common], help="show entries by slug or lines")
    get.add_argument("--category", "-c", help="default: look in every category")
    get.add_argument("--file", help="category file name, with --lines")
    get.add_argument("--lines", help="line range 'a-b', with --file")
    get.add_argument("slug", nargs="?")

    delete = verbs.add_parser("delete", parents=[common], help="delete an entry (archived)")
    delete.add_argument("--category", "-c", required=True)
    delete.add_argument("slug")

    verbs.add_parser("stats", parents=[common], help="entry counts per category")
    verbs.add_parser("status", parents=[common], help="is the daemon up, and what it serves")
    verbs.add_parser(
        "watch", parents=[common], help="print each change to the workspace's memory as it happens"
    )

    context = verbs.add_parser(
        "context",
        parents=[common],
        help="print a memory block for a prompt (Security and Instruction, then what is relevant)",
    )
    context.add_argument("--file", help="a file the prompt is about (its path words count)")
    context.add_argument(
        "--budget",
        type=_positive_int,
        default=p.DEFAULT_CONTEXT_BUDGET,
        metavar="TOKENS",
        help=f"largest block, in estimated tokens (default {p.DEFAULT_CONTEXT_BUDGET})",
    )
    context.add_argument(
        "--hook",
        choices=("claude",),
        help="read a Claude Code UserPromptSubmit hook's JSON on stdin and answer as it expects",
    )
    context.add_argument("text", nargs="*", help="what the prompt is about")

    extract = verbs.add_parser(
        "extract",
        parents=[common],
        help="find memories (preferences, corrections, constraints) in a message",
    )
    extract.add_argument("--store", action="store_true", help="store what is found")
    extract.add_argument("text", nargs="*", help="the message (default: read stdin)")

    init = verbs.add_parser(
        "init",
        help="create .memory/ files and a memd block in agent instruction files",
    )
    init.add_argument(
        "--workspace",
        "-w",
        default=argparse.SUPPRESS,
        help="project root (default: nearest .memory/.git)",
    )
    init.add_argument("--agents", action="store_true", help="update AGENTS.md")
    init.add_argument("--claude", action="store_true", help="update CLAUDE.md")
    init.add_argument(
        "--copilot", action="store_true", help="update .github/copilot-instructions.md"
    )
    init.add_argument(
        "--file", action="append", default=[], metavar="PATH", help="update another file"
    )
    init.add_argument("--dry-run", action="store_true", help="show the changes as a diff")

    mcp = verbs.add_parser("mcp", help="serve memd's tools to an agent over MCP (stdio)")
    mcp.add_argument("--socket", help="daemon socket path")
    mcp.add_argument(
        "--workspace",
        "-w",
        help="project root (default: the MCP client's first root, else the current directory)",
    )

    service = verbs.add_parser(
        "service",
        help="install, remove or inspect memd as a systemd or launchd user service",
        description=(
            "install: write the systemd units (Linux) or launchd agent (macOS) for this memd and "
            "start listening on the default socket; the daemon starts on the first request. "
            "uninstall: stop and remove them. status: show the files, the service manager's "
            "view and whether a daemon answers (exit 0 if installed and listening, else 3)."
        ),
    )
    service.add_argument("action", choices=("install", "uninstall", "status"))
    service.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run; change nothing"
    )
    service.add_argument(
        "--idle-exit",
        type=_positive_float,
        metavar="SECONDS",
        help="install: let the daemon exit after this long with no clients (restarted on demand)",
    )
    return parser


def _add_common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument("--socket", default=default, help="daemon socket path")
    parser.add_argument(
        "--workspace", "-w", default=default, help="project root (default: nearest .memory/.git)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print the result (or the error) as JSON",
    )
    parser.add_argument(
        "--no-autostart",
        dest="autostart",
        action="store_false",
        default=argparse.SUPPRESS if suppress else True,
        help="fail (exit 3) instead of starting a daemon when none is running",
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


# ---------------------------------------------------------------------------- serve


def run_serve(args: argparse.Namespace) -> int:
    """Run the daemon until SIGINT or SIGTERM (in the foreground, or detached with --background)."""
    import anyio

    from memd.background import default_log_path, detach
    from memd.config import ConfigError, load_config
    from memd.server.activation import ActivationError
    from memd.server.daemon import Config, serve
    from memd.server.instance import AlreadyRunning, SocketPathError

    overrides = {
        "log_level": args.log_level or os.environ.get("MEMD_LOG_LEVEL") or None,
        "lock_timeout": args.lock_timeout,
        "max_frame_bytes": args.max_frame_bytes,
        "idle_exit": args.idle_exit,
    }
    config_path = os.path.abspath(args.config) if args.config else None
    try:
        settings = load_config(config_path, overrides)
    except ConfigError as exc:
        print(f"memd: {exc}", file=sys.stderr)
        return EXIT_USAGE
    socket_path = os.path.abspath(default_socket_path(args.socket))
    log_file = os.path.abspath(args.log_file) if args.log_file else None
    reporter: Reporter | None = None
    if args.background:
        log_file = log_file or default_log_path()
        try:
            outcome = detach(log_file, timeout=args.ready_timeout)
        except OSError as exc:
            print(f"memd: cannot open the log file {log_file}: {exc}", file=sys.stderr)
            return EXIT_ERROR
        if isinstance(outcome, int):
            return outcome
        reporter = outcome
        log_file = None  # stderr already goes there

    def ready(path: str) -> None:
        if reporter is not None:
            log = f"; log: {args.log_file or default_log_path()}"
            reporter.ready(f"memd {__version__} serving on {path} (pid {os.getpid()}){log}")

    try:
        _configure_logging(settings.log_level, log_file)
    except OSError as exc:
        print(f"memd: cannot open the log file {log_file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    config = Config(
        socket_path=socket_path,
        settings=settings,
        reload=lambda: load_config(config_path, overrides),
        on_ready=ready,
        idle_exit_from_flag=args.idle_exit is not None,
    )
    try:
        anyio.run(serve, config)
    except ConfigError as exc:
        return _serve_failed(str(exc), reporter, EXIT_USAGE)
    except (AlreadyRunning, SocketPathError, ActivationError) as exc:
        return _serve_failed(str(exc), reporter)
    except OSError as exc:
        return _serve_failed(f"cannot serve on {config.socket_path}: {exc}", reporter)
    return EXIT_OK


def _configure_logging(level: str, log_file: str | None) -> None:
    """Log lines carry the pid, since background daemons on several sockets share one file.

    Raises:
        OSError: the log file (or its directory, created if missing) cannot be opened.
    """
    import logging

    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    if log_file:
        os.makedirs(os.path.dirname(log_file), mode=0o700, exist_ok=True)
        handler = logging.FileHandler(log_file)
    logging.basicConfig(
        level=level,
        format="%(asctime)s memd[%(process)d] %(levelname)s %(name)s: %(message)s",
        handlers=[handler],
    )
    logging.getLogger("filelock").setLevel(logging.WARNING)  # one line per lock attempt


def _serve_failed(message: str, reporter: Reporter | None, code: int = EXIT_ERROR) -> int:
    """Report a daemon that could not start: on stderr, or in the log and to the waiting
    `--background` command."""
    if reporter is None:
        print(f"memd: {message}", file=sys.stderr)
    else:
        import logging

        logging.getLogger("memd").error("%s", message)
        reporter.failed(message, code)
    return code


# ---------------------------------------------------------------------------- client verbs


def _show_client_notes() -> None:
    """Print the client library's notes (such as "started a daemon") on stderr."""
    import logging  # here, not at import: `memd context --hook` stays lean

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memd: %(message)s"))
    client_logger = logging.getLogger("memd_client")
    client_logger.addHandler(handler)
    client_logger.setLevel(logging.INFO)


def run_client_verb(args: argparse.Namespace) -> int:
    """Run one client verb against the daemon and print its result."""
    _show_client_notes()
    workspace = args.workspace or find_workspace()
    autostart = args.autostart and args.verb != "status"
    try:
        with Client(args.socket, workspace=workspace, autostart=autostart) as client:
            result, render, ok = VERBS[args.verb](client, args)
    except MemdError as exc:
        _report_error(exc, as_json=args.json)
        return EXIT_UNREACHABLE if isinstance(exc, DaemonUnavailable) else EXIT_ERROR
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(result), indent=2).decode())
    elif text := render(result):
        print(visible(text))  # a memory file's terminal escapes are shown, never obeyed
    return EXIT_OK if ok else EXIT_ERROR


class ClaudePromptHook(msgspec.Struct):
    """The part of Claude Code's UserPromptSubmit hook input that memd reads."""

    prompt: str = ""
    cwd: str | None = None


def run_context_hook(args: argparse.Namespace, data: bytes) -> int:
    """Answer a Claude Code UserPromptSubmit hook: read its JSON (`data`, from stdin), print the
    memory block as `hookSpecificOutput.additionalContext` (`memd.hook` is the fast path for the
    plain command; this is the full one).

    A prompt hook must never block the user: every failure exits 0 with a one-line note on
    stderr and nothing on stdout, so the prompt goes on without memory.
    """
    from memd.hook import HOOK_MAX_TOKENS, hook_output  # the hook's own module, when hooked

    try:
        hook = msgspec.json.decode(data, type=ClaudePromptHook)
    except (msgspec.DecodeError, ValueError) as exc:  # ValueError: bytes that are not UTF-8
        print(f"memd: not a Claude Code hook input ({exc}); no memory added.", file=sys.stderr)
        return EXIT_OK
    workspace = args.workspace or find_workspace(hook.cwd)
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


def run_watch(args: argparse.Namespace) -> int:
    """Print one line per change (or one JSON object with --json) until Ctrl-C."""
    _show_client_notes()
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
        _report_error(lost[0], as_json=args.json)
        return EXIT_UNREACHABLE if isinstance(lost[0], DaemonUnavailable) else EXIT_ERROR
    return EXIT_OK


def _report_error(exc: MemdError, *, as_json: bool) -> None:
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
    return client.stats(), render_stats, True


def _status(client: Client, args: argparse.Namespace) -> Outcome:
    return client.status(), render_status, True


def _context(client: Client, args: argparse.Namespace) -> Outcome:
    result = client.context(" ".join(args.text), file=args.file, budget_tokens=args.budget)
    return result, render_context, True


def _extract(client: Client, args: argparse.Namespace) -> Outcome:
    text = " ".join(args.text) if args.text else sys.stdin.read()
    result = client.extract(text, store=args.store)
    return result, render_extract, all(c.error is None for c in result.candidates)


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


# ---------------------------------------------------------------------------- rendering


def render_event(event: p.Event) -> str:
    """One line for a change notification: time, file, who changed it, and what it holds now."""
    now = datetime.datetime.now().strftime("%H:%M:%S")
    if isinstance(event, p.Resync):
        return f"{now} {event.message}"
    who = "memd" if event.source == "memd" else "outside memd"
    if event.error is not None:
        return f"{now} {event.file} changed ({who}) and cannot be read: {event.error}"
    if event.conflict is not None:
        return f"{now} {event.file} changed ({who}) and is mid-merge: {event.conflict}"
    count = len(event.entries)
    return f"{now} {event.file} changed ({who}): {count} {'entry' if count == 1 else 'entries'}"


def render_query(result: p.QueryResult, text: str, tags: list[str] | None = None) -> str:
    """Return query results as readable lines."""
    if not result.results:
        tagged = f" tagged {tag_words(tags)}" if tags else ""
        if text.strip():
            return f'No memories{tagged} match "{text}".'
        return f"No memories{tagged}." if tags else "No memories stored yet."
    lines = [
        f"{hit.score:7.3f}  {entry_text(hit.category, hit.slug, hit.content)}"
        f"  ({hit.file}:{hit.line})"
        for hit in result.results
    ]
    shown = len(result.results)
    if result.total > shown:
        lines.append(f"({shown} of {result.total} matches; raise --limit to see more)")
    return "\n".join(lines)


def tag_words(tags: list[str]) -> str:
    """Return tags as the user would write them: "#security and #db"."""
    words = [tag if tag.startswith("#") else f"#{tag}" for tag in tags]
    return " and ".join(words)


def render_entries(result: p.EntriesResult, tags: list[str] | None = None) -> str:
    """Return entries grouped by file."""
    if not result.entries:
        return f"No entries tagged {tag_words(tags)}." if tags else "No entries."
    lines: list[str] = []
    current = ""
    for entry in result.entries:
        if entry.file != current:
            current = entry.file
            lines.append(f"{entry.category} ({entry.file})")
        slug = f"[{entry.slug}] " if entry.slug else ""
        lines.append(f"  {entry.line:>4}  {slug}{entry.content}")
    return "\n".join(lines)


def render_cleanup(result: p.CleanupResult) -> str:
    """Return the cleanup plan as readable lines."""
    lines = [result.message]
    for merge in result.merged:
        folded = folded_entries(((e.slug, e.content) for e in merge.removed), merge.why)
        lines.append(f"  merge  {merge.file}: keep [{merge.slug}], fold in {folded}")
    for prune in result.pruned:
        lines.append(
            f"  prune  {prune.file}: [{prune.entry.slug}] {prune.entry.content} "
            f"(score {prune.score})"
        )
    for slugged in result.slugged:
        lines.append(f"  slug   {slugged.file}:{slugged.entry.line} -> [{slugged.slug}]")
    if result.unused:
        lines.append("Not recalled for 180 days (archive candidates; cleanup leaves them):")
    for entry in result.unused:
        text = entry_text(entry.category, entry.slug, entry.content)
        lines.append(f"  unused {entry.file}:{entry.line} {text}")
    return "\n".join(lines)


def render_stats(result: p.StatsResult) -> str:
    """Return per-category counts as a small table."""
    lines = [f"Workspace {result.workspace}"]
    for row in result.categories:
        flag = "  OVER LIMIT" if row.entries > row.limit else ""
        missing = f"  ERROR: {row.error}" if row.error else "" if row.exists else "  (no file yet)"
        if row.conflict:
            missing = f"  MERGE CONFLICT: {row.conflict}"
        lines.append(
            f"  {row.category:<11} {row.file:<16} {row.entries:>4} / {row.limit}{flag}{missing}"
        )
    lines.append(f"  {'Total':<28} {result.total:>4}")
    return "\n".join(lines)


def render_context(result: p.ContextResult) -> str:
    """Return the block itself (nothing when no memory applies)."""
    return result.markdown.rstrip("\n")


def render_extract(result: p.ExtractResult) -> str:
    """Return one line per candidate, with what storing it did."""
    if not result.candidates:
        return "No memories found in that message."
    lines = []
    for candidate in result.candidates:
        lines.append(f"{candidate.category}: {candidate.content}  ({candidate.kind})")
        if candidate.stored is not None:
            lines.append(f"  {candidate.stored.message}")
        if candidate.error is not None:
            lines.append(f"  not stored: {candidate.error}")
    return "\n".join(lines)


def render_status(result: p.StatusResult) -> str:
    """Return the daemon's status as readable lines."""
    workspaces = "\n".join(f"    {root}" for root in result.workspaces) or "    (none loaded yet)"
    conflicts = "\n".join(f"    {path}" for path in result.conflicts)
    if conflicts:
        conflicts = f"\n  git conflict markers (writes refused until resolved):\n{conflicts}"
    return (
        f"memd {result.version} (protocol {result.protocol_version}) pid {result.pid}, "
        f"up {result.uptime_s:.0f} s, socket {result.socket}\n  workspaces:\n{workspaces}"
        + _watching_line(result)
        + conflicts
    )


def _watching_line(result: p.StatusResult) -> str:
    """Return how outside changes are noticed (empty from a daemon too old to say)."""
    if not result.watch_mode:
        return ""
    loaded = len(result.workspaces)
    return (
        f"\n  watching: {result.watch_mode}, {result.workspaces_watched} of {loaded} "
        f"workspace{'s' * (loaded != 1)} watched (the rest are checked when read), "
        f"{result.workspaces_unloaded} unloaded while idle"
    )
