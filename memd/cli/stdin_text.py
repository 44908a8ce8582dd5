"""Reading a message from standard input for `memd extract` and `memd context --hook`.

Rule: standard library only (the prompt hook's fast path imports it).
"""

from __future__ import annotations

import sys


def read_stdin(what: str) -> bytes:
    """Return all of standard input; when it is a terminal, first say on stderr that `what` is
    read from it and how to end it (a silent wait looks like a hang)."""
    if sys.stdin.isatty():
        print(
            f"memd: reading {what} from stdin; end it with Ctrl-D on a new line (Ctrl-C cancels).",
            file=sys.stderr,
            flush=True,
        )
    return sys.stdin.buffer.read()
