"""What `memd init` says: a line on stdout per file as it is done, or with --json one
`InitReport` at the end; errors go to stderr either way, and make the exit code 1.
"""

from __future__ import annotations

import sys
from typing import Literal

import msgspec

from memd.cli.exit_codes import EXIT_ERROR, EXIT_OK

Change = Literal["create", "update", "none"]


class InitChange(msgspec.Struct):
    """One file of `memd init --json`: what the run did to it (a dry run: would do), and for
    a symlink updated through another file of the run, that file."""

    path: str
    change: Change
    link_to: str | None = None


class InitReport(msgspec.Struct):
    """`memd init --json`: the workspace, whether it was a dry run, each file, the diff a dry
    run shows, and what could not be done (the exit code is 1 when `errors` is not empty)."""

    workspace: str
    dry_run: bool
    files: list[InitChange] = msgspec.field(default_factory=list)
    diff: str = ""
    errors: list[str] = msgspec.field(default_factory=list)


class Reporter:
    """Says what `memd init` does: each line on stdout as it happens, or with `as_json` each
    file into an `InitReport` printed by `finish`."""

    def __init__(self, workspace: str, *, dry_run: bool, as_json: bool) -> None:
        self.report = InitReport(workspace, dry_run)
        self.as_json = as_json

    def say(
        self,
        line: str,
        path: str | None = None,
        change: Change = "none",
        link_to: str | None = None,
    ) -> None:
        """Report `line`; `path` names the file it is about (`link_to`: updated through it)."""
        if path is not None:
            self.report.files.append(InitChange(path, change, link_to))
        if not self.as_json:
            sys.stdout.write(line + "\n")

    def created(self, path: str) -> None:
        """Report that the file (or directory) at `path` is created (a dry run: would be)."""
        self.say(f"{'would create' if self.report.dry_run else 'created'} {path}", path, "create")

    def diff(self, text: str, path: str, change: Change) -> None:
        """Report a dry run's diff of the file at `path`."""
        self.report.files.append(InitChange(path, change))
        self.report.diff += text
        if not self.as_json:
            sys.stdout.write(text)

    def finish(self, errors: list[str]) -> int:
        """Report `errors` (on stderr; with --json in the report too); return the exit code."""
        self.report.errors = errors
        if self.as_json:
            print(msgspec.json.format(msgspec.json.encode(self.report), indent=2).decode())
        return _fail(errors) if errors else EXIT_OK


def _fail(errors: list[str]) -> int:
    sys.stdout.flush()
    for error in errors:
        sys.stderr.write(f"memd: {error}\n")
    return EXIT_ERROR
