"""The `memd` command line's grammar: `VERBS` names each verb, its help line, the options it
shares with the others and the small builder that adds its own arguments.

Rule: the table's order is the order of `memd --help`; a builder only adds arguments (and the
verb's long description), it never runs anything.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import msgspec

from memd import __version__
from memd.config import LOG_LEVELS
from memd_client import default_socket_path, protocol as p
from memd_client._framing import DEFAULT_MAX_FRAME

CATEGORY_FILTER_HELP = (
    "only this category: Instruction, Quirk, Preference, Decision or Security (default: all)"
)
TAG_HELP = "only entries with this #tag, given with or without the '#' (repeatable: all must match)"


class Verb(NamedTuple):
    """One verb of the table: its help line, which shared options it takes (the client verbs'
    `common` ones, serve's `socket` alone, or none) and its builder."""

    help: str
    shares: Literal["common", "socket", "none"]
    build: Callable[[argparse.ArgumentParser], None] | None = None


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser for every verb."""
    common = argparse.ArgumentParser(add_help=False)
    _add_common(common, suppress=True)
    socket_only = argparse.ArgumentParser(add_help=False)
    socket_only.add_argument("--socket", default=argparse.SUPPRESS, help="socket path to serve on")
    parents = {"common": [common], "socket": [socket_only], "none": []}
    parser = argparse.ArgumentParser(
        prog="memd", description="memd: one shared memory daemon for AI coding agents."
    )
    parser.add_argument("--version", action="version", version=f"memd {__version__}")
    _add_common(parser, suppress=False)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    for name, verb in VERBS.items():
        sub = verbs.add_parser(name, parents=parents[verb.shares], help=verb.help)
        if verb.build is not None:
            verb.build(sub)
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
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _wire_bounds(params: type, field: str) -> tuple[float | None, float | None]:
    """The `ge`/`le` bounds of `params.field`'s msgspec `Meta`: the wire type is the one source."""
    struct = msgspec.inspect.type_info(params)
    assert isinstance(struct, msgspec.inspect.StructType)
    for info in struct.fields:
        if info.name == field:
            kinds = info.type.types if isinstance(info.type, msgspec.inspect.UnionType) else ()
            number = next((t for t in kinds if not isinstance(t, msgspec.inspect.NoneType)), None)
            bounded = number or info.type
            return getattr(bounded, "ge", None), getattr(bounded, "le", None)
    raise LookupError(f"{params.__name__} has no field {field}")


def _bounded(params: type, field: str, kind: type[int] | type[float]) -> Callable[[str], Any]:
    """An argparse `type` that accepts the numbers the wire type `params.field` accepts, and
    says the range in words otherwise (argparse turns that into a usage error, exit 2)."""
    low, high = _wire_bounds(params, field)
    noun = "a whole number" if kind is int else "a number"
    span = f"{noun} from {low:g} to {high:g}" if low is not None and high is not None else noun

    def convert(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {span}, got {text!r}") from None
        if (
            value != value
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            raise argparse.ArgumentTypeError(f"must be {span}, got {text}")
        return value

    convert.__name__ = noun  # argparse's fallback message names the type's __name__
    return convert


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


def _store(store: argparse.ArgumentParser) -> None:
    store.add_argument(
        "--category",
        "-c",
        default="Instruction",
        help="Instruction (default), Quirk, Preference, Decision or Security",
    )
    store.add_argument("--slug", "-s", help="kebab-case id; an existing slug is updated")
    store.add_argument("--dry-run", action="store_true", help="report, write nothing")
    store.add_argument("content", nargs="+", help="the memory: one sentence")


def _query(query: argparse.ArgumentParser) -> None:
    query.add_argument("--category", "-c", help=CATEGORY_FILTER_HELP)
    query.add_argument(
        "--limit",
        "-n",
        type=_bounded(p.QueryParams, "limit", int),
        default=p.DEFAULT_QUERY_LIMIT,
        help=f"most results to show, up to {p.MAX_QUERY_LIMIT} (default {p.DEFAULT_QUERY_LIMIT})",
    )
    query.add_argument(
        "--min-score",
        type=_bounded(p.QueryParams, "min_score", float),
        metavar="SCORE",
        help="only results scoring at least this much; scores run from 0 to 1",
    )
    query.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)
    query.add_argument("query", nargs="*", help="words to search for (none: list entries)")


def _cleanup(cleanup: argparse.ArgumentParser) -> None:
    cleanup.add_argument("--apply", action="store_true", help="carry out the plan")


def _list(listing: argparse.ArgumentParser) -> None:
    listing.add_argument("--category", "-c", help=CATEGORY_FILTER_HELP)
    listing.add_argument("--tag", "-t", action="append", dest="tags", metavar="TAG", help=TAG_HELP)


def _get(get: argparse.ArgumentParser) -> None:
    get.add_argument("--category", "-c", help="default: look in every category")
    get.add_argument("--file", help="category file name, with --lines")
    get.add_argument("--lines", help="line range 'a-b', with --file")
    get.add_argument(
        "slug", nargs="?", help="the entry's kebab-case id (or use --file and --lines)"
    )


def _delete(delete: argparse.ArgumentParser) -> None:
    delete.add_argument(
        "--category", "-c", required=True, help="the entry's category, e.g. Quirk or Decision"
    )
    delete.add_argument("slug", help="the entry's kebab-case id")


def _context(context: argparse.ArgumentParser) -> None:
    context.add_argument("--file", help="a file the prompt is about (its path words count)")
    context.add_argument(
        "--budget",
        type=_bounded(p.ContextParams, "budget_tokens", int),
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


def _extract(extract: argparse.ArgumentParser) -> None:
    extract.add_argument("--store", action="store_true", help="store what is found")
    extract.add_argument("text", nargs="*", help="the message (default: read stdin)")


def _init(init: argparse.ArgumentParser) -> None:
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


def _mcp(mcp: argparse.ArgumentParser) -> None:
    mcp.add_argument("--socket", help="daemon socket path")
    mcp.add_argument(
        "--workspace",
        "-w",
        help="project root (default: the MCP client's first root, else the current directory)",
    )


def _service(service: argparse.ArgumentParser) -> None:
    service.description = (
        "install: write the systemd units (Linux) or launchd agent (macOS) for this memd and "
        "start listening on the default socket; the daemon starts on the first request. "
        "uninstall: stop and remove them. status: show the files, the service manager's "
        "view and whether a daemon answers (exit 0 if installed and listening, else 3)."
    )
    service.add_argument(
        "action",
        choices=("install", "uninstall", "status"),
        help="install, uninstall or status (see above)",
    )
    service.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run; change nothing"
    )
    service.add_argument(
        "--idle-exit",
        type=_positive_float,
        metavar="SECONDS",
        help="install: let the daemon exit after this long with no clients (restarted on demand)",
    )


VERBS: dict[str, Verb] = {
    "serve": Verb("run the daemon (in the foreground by default)", "socket", _serve),
    "store": Verb("store one memory", "common", _store),
    "query": Verb("search memories", "common", _query),
    "cleanup": Verb("merge, prune and slug", "common", _cleanup),
    "list": Verb("list entries", "common", _list),
    "get": Verb("show entries by slug or lines", "common", _get),
    "delete": Verb("delete an entry (archived)", "common", _delete),
    "stats": Verb("entry counts per category", "common"),
    "status": Verb("is the daemon up, and what it serves", "common"),
    "watch": Verb("print each change to the workspace's memory as it happens", "common"),
    "context": Verb(
        "print a memory block for a prompt (Security and Instruction, then what is relevant)",
        "common",
        _context,
    ),
    "extract": Verb(
        "find memories (preferences, corrections, constraints) in a message", "common", _extract
    ),
    "init": Verb(
        "create .memory/ files and a memd block in agent instruction files", "none", _init
    ),
    "mcp": Verb("serve memd's tools to an agent over MCP (stdio)", "none", _mcp),
    "service": Verb(
        "install, remove or inspect memd as a systemd or launchd user service", "none", _service
    ),
}
"""Every verb, in the order `memd --help` lists them (as h11 dispatches by its READERS table)."""
