"""Which workspace a CLI verb uses, how it was found, and the line that says so.

Rules:
- `--workspace DIR` wins; else the nearest ancestor of the current directory holding `.memory`
  (quiet: the normal case) or `.git`, else the current directory itself
  (`memd_client.find_workspace_with_reason`).
- A verb names its workspace on stderr, in one line (`note`), whenever that workspace was not
  found by an existing `.memory/`: found by its `.git`, or the current directory for want of
  either, or `.memory/` was created by this call. With `--workspace`, only a `.memory/` this
  call created is worth a line. The path named is the daemon's (its real path) when the result
  carries it.
- Everything here but `choose` is pure formatting.
- A deleted current directory is a usage error in words (exit 2), never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Literal, NamedTuple

from memd.cli.exit_codes import EXIT_USAGE
from memd_client import find_workspace_with_reason
from memd_client._paths import MEMORY_DIR, WorkspaceFoundBy

Origin = WorkspaceFoundBy | Literal["--workspace"]

_PHRASES: dict[Origin, str] = {
    "memory": f"found by its {MEMORY_DIR}/",
    "git": "found by its .git",
    "start": f"the current directory, with no {MEMORY_DIR}/ or .git in it or above it",
    "--workspace": "from --workspace",
}

OTHER = "pass --workspace DIR to use another"
"""How to pick another workspace, as every line naming a found one ends."""


class Chosen(NamedTuple):
    """The workspace a verb uses (absolute) and where it came from."""

    path: str
    origin: Origin


NO_CURRENT_DIRECTORY = (
    "memd: the current directory no longer exists (it was deleted or moved); cd to your "
    "project, or pass --workspace with an absolute path."
)


def choose(explicit: str | None) -> Chosen:
    """Return `--workspace DIR` if given, else the current directory's project root.

    A current directory that was deleted under the shell is a usage error (exit 2) with a
    sentence saying what to do, never a traceback.
    """
    try:
        if explicit:
            return Chosen(os.path.abspath(explicit), "--workspace")
        found = find_workspace_with_reason()
    except FileNotFoundError:  # os.getcwd() of a deleted directory
        print(NO_CURRENT_DIRECTORY, file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    return Chosen(found.path, found.found_by)


def origin_phrase(chosen: Chosen) -> str:
    """How the workspace was found, e.g. "found by its .git"; for a found one other than by
    `.memory/`, with how to pick another."""
    phrase = _PHRASES[chosen.origin]
    return f"{phrase}; {OTHER}" if chosen.origin in ("git", "start") else phrase


def note(chosen: Chosen, root: str = "", created: bool = False) -> str | None:
    """The line naming the workspace used, or None when there is nothing to say.

    `root` is the workspace the daemon reports (empty: use `chosen.path`); `created` says the
    call created its `.memory/`. For example "workspace /tmp/x (the current directory, with no
    .memory/ or .git in it or above it; created /tmp/x/.memory/); pass --workspace DIR to use
    another."
    """
    if not created and chosen.origin in ("memory", "--workspace"):
        return None
    shown = root or chosen.path
    parts = [] if chosen.origin == "memory" else [_PHRASES[chosen.origin]]
    if created:
        parts.append(f"created {os.path.join(shown, MEMORY_DIR)}/")
    elif chosen.origin == "git":
        parts.append(f"no {MEMORY_DIR}/ yet")
    end = "." if chosen.origin == "--workspace" else f"; {OTHER}."
    return f"workspace {shown} ({'; '.join(parts)}){end}"


def reported(result: object) -> tuple[str, bool]:
    """The workspace a daemon's result names and whether the call created its `.memory/`
    (empty and False for results that do not say, or from older daemons)."""
    root = getattr(result, "workspace", "")
    created = getattr(result, "created_memory_dir", False)
    return (root if isinstance(root, str) else ""), created is True
