"""`memd serve`: load the settings, optionally detach (`memd.cli.background`), set up logging and
run the daemon until SIGINT or SIGTERM.

Rule: the only CLI module that imports the server stack, and only inside `run_serve`, so client
verbs start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from memd import __version__
from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from memd_client import default_socket_path

if TYPE_CHECKING:
    from memd.cli.background import Reporter


def run_serve(args: argparse.Namespace) -> int:
    """Run the daemon until SIGINT or SIGTERM (in the foreground, or detached with --background).
    (Long: settings, logging, the background fork and the start failures are one startup story.)"""
    import anyio

    from memd.cli.background import detach
    from memd.config import ConfigError, default_log_path, load_config
    from memd.server.daemon.activation import ActivationError
    from memd.server.daemon.instance import AlreadyRunning, SocketPathError
    from memd.server.daemon.lifecycle import Config, serve

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
