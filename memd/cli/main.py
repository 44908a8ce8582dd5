"""The `memd` command's entry point.

The Claude Code prompt hook (`memd context --hook claude`) first tries `memd.cli.hook`'s fast path,
which needs only the standard library; everything else, and the hook whenever the fast path
declines, runs `memd.cli.commands`.

Rule: standard library only at import; the full CLI is imported only when the fast path declines.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run `memd` with `sys.argv` and return the exit code."""
    argv = sys.argv[1:]
    stdin = None
    if "--hook" in argv:  # only a prompt hook can take the fast path
        from memd.cli import hook

        plan = hook.fast_plan(argv)
        if plan is not None:
            stdin = sys.stdin.buffer.read()
            answered = hook.answer(plan, stdin)
            if answered is not None:
                return answered
    from memd.cli.commands import run

    return run(argv, stdin=stdin)
