"""The `memd` command's entry point.

The Claude Code prompt hook (`memd context --hook claude`) first tries `memd.cli.hook`'s fast path,
which needs only the standard library; everything else, and the hook whenever the fast path
declines, runs `memd.cli.dispatch`. The capture hook (`memd extract --hook claude`) runs
`memd.cli.capture_hook` at once, before any of the command line parser is imported.

Ctrl-C anywhere (say, while a verb waits on stdin) exits 130, as a shell reports SIGINT, without a
traceback. A reader that goes away (`memd list | head -3`) ends the command quietly with 141, as
a shell reports SIGPIPE: what the daemon did is done either way.

Rule: standard library only at import; the full CLI is imported only when the fast path declines.
"""

from __future__ import annotations

import contextlib
import os
import sys

EXIT_INTERRUPTED = 130
"""128 + SIGINT: what a shell reports for a command stopped by Ctrl-C."""
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell reports for a command whose reader went away."""


def main() -> int:
    """Run `memd` with `sys.argv` and return the exit code (130 after Ctrl-C)."""
    try:
        return _main()
    except KeyboardInterrupt:
        print(file=sys.stderr)  # end the line the terminal's ^C started
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Python would print another error flushing stdout at exit: point it at nothing.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main() -> int:
    argv = sys.argv[1:]
    stdin = None
    if "--hook" in argv:  # only a hook can take a fast path
        from memd.cli import capture_hook, hook

        capture = capture_hook.fast_plan(argv)
        if capture is not None:
            return capture_hook.run_capture_hook(capture.socket)
        from memd.cli.stdin_text import read_stdin

        plan = hook.fast_plan(argv)
        if plan is not None:
            stdin = read_stdin("the hook's JSON input")
            answered = hook.answer(plan, stdin)
            if answered is not None:
                return answered
    from memd.cli.dispatch import run

    return run(argv, stdin=stdin)
