"""`memd merge-file BASE OURS THEIRS [PATH]`: git's merge driver for `.memory/` files
(`%O %A %B %P`), a local command that never asks or starts a daemon.

Set it up with `memd git-setup` in each clone (`memd.cli.git_setup`): `.gitattributes` gets
`.memory/*.md merge=memd` and the clone's git config `merge.memd.driver`.

Rules:
- The merge is `memd.core.merge.files.merge_file`: by PATH's name, the entry-aware merge of a
  category file, the archive's union, or (any other file, or no PATH) the plain line merge.
- The result replaces OURS atomically (`memd.fs.storage.write_atomic`), as git expects; with
  `--output FILE` it goes to FILE instead and OURS is left as it is (Jujutsu's `$output`).
  Either is refused if it is a symbolic link (exit 2): memd writes through no link.
- Exit 0: merged cleanly. Exit 1: merged with conflict markers, and one line on stderr says
  where. Exit 2: an input could not be read (missing, not UTF-8, not a file) or OURS could not
  be written; one sentence on stderr says which, and OURS is unchanged.
"""

from __future__ import annotations

import argparse
import os
import sys

from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from memd.core.format.controls import visible
from memd_client.errors import MemdError

MERGE_HELP = "git's merge driver: merge three versions of a .memory/ file (no daemon)"
MERGE_MISSING = "give BASE OURS THEIRS [PATH], as git does, e.g. `memd merge-file %O %A %B %P`"


def merge_file_arguments(merge: argparse.ArgumentParser) -> None:
    """Add `memd merge-file`'s arguments and long description (`memd.cli.parser`'s builder)."""
    merge.description = (
        "git's merge driver: a three-way merge of a .memory/ file into OURS (by entry, a union "
        "for the archive, by line otherwise); exit 0 merged, 1 conflicts left, 2 unreadable "
        "input. Set it up with `memd git-setup` in each clone."
    )
    merge.add_argument("base", metavar="BASE", help="the common ancestor (%%O)")
    merge.add_argument("ours", metavar="OURS", help="ours, replaced by the result (%%A)")
    merge.add_argument("theirs", metavar="THEIRS", help="theirs (%%B)")
    merge.add_argument("path", nargs="?", metavar="PATH", help="its path, picks the merge (%%P)")
    merge.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the result here instead of into OURS (Jujutsu's $output, a merge tool's "
        "MERGED)",
    )


class _Unreadable(Exception):
    """Raised when an input of the merge cannot be read; the message is the sentence shown."""


def _read(role: str, path: str) -> str:
    from memd.fs.storage import read_text

    try:
        found = read_text(path)
    except MemdError as exc:
        raise _Unreadable(f"cannot read {role} ({exc.message})") from None
    if found is None:
        raise _Unreadable(f"cannot read {role}: {path} does not exist.")
    return found[0]


def run_merge_file(args: argparse.Namespace) -> int:
    """Merge BASE, OURS and THEIRS into OURS; return 0 (clean), 1 (conflicts) or 2 (error)."""
    from memd.core.merge.files import merge_file  # here: the parser imports this module
    from memd.fs.storage import write_atomic

    try:
        base = _read("BASE", args.base)
        ours = _read("OURS", args.ours)
        theirs = _read("THEIRS", args.theirs)
    except _Unreadable as exc:
        print(f"memd: merge-file {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    result = merge_file(args.path, base, ours, theirs)
    target, role = (args.ours, "OURS") if args.output is None else (args.output, "the output")
    if os.path.islink(target):
        print(
            f"memd: merge-file will not write {role} through a symbolic link ({visible(target)}); "
            "pass the file itself (git never passes a link).",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        write_atomic(target, result.text)
    except MemdError as exc:
        print(f"memd: merge-file cannot write {role} ({visible(exc.message)})", file=sys.stderr)
        return EXIT_USAGE
    if not result.conflicted:
        return EXIT_OK
    name = args.path or args.ours
    lines = ", ".join(str(number) for number in result.conflicts)
    count = len(result.conflicts)
    print(
        f"memd: {visible(name)}: {count} conflict{'s' if count > 1 else ''} left with markers"
        f" (line {lines}); resolve, then `git add` it.",
        file=sys.stderr,
    )
    return EXIT_ERROR
