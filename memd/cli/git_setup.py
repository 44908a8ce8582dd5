"""The git side of `memd git-setup` and `memd init --git`, and the warning `memd status`
gives when it is missing: the memd merge driver in the clone's own git config.

Rules:
- The config (`merge.memd.driver`, `merge.memd.name`: `memd.fs.git_config`) is per clone and
  never committed, so every clone needs `memd git-setup` once; `.gitattributes` (written by
  `memd.cli.init`) is committed and names the driver for everyone.
- The driver runs `<memd> merge-file %O %A %B %P`: `<memd>` is `memd` when the `memd` on PATH
  is this program, else this program by its absolute path (git runs drivers through a shell,
  with the PATH of whoever merges), quoted for that shell.
- A driver already set to another command is replaced, and the run says what it was.
- `memd status` warns when `.gitattributes` names the driver and this clone's config does
  not define it: git then merges memory files line by line without a word.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

from memd.core.project import gitattributes
from memd.fs import git_config, storage
from memd.fs.git_config import GitConfigError
from memd_client import MemdError

ARGUMENTS = "merge-file %O %A %B %P"
GITATTRIBUTES = ".gitattributes"


def driver_command() -> str:
    """The command line git runs as the memd merge driver (see the rules)."""
    program = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    on_path = shutil.which("memd")
    if on_path is not None and os.path.realpath(on_path) == program:
        return f"memd {ARGUMENTS}"
    if program and os.path.basename(program) == "memd" and os.access(program, os.X_OK):
        return f"{shlex.quote(program)} {ARGUMENTS}"
    return f"{shlex.quote(sys.executable)} -m memd {ARGUMENTS}"


def check_repository(workspace: str) -> str | None:
    """None when `workspace` is in a git repository, else the sentence saying why not."""
    try:
        if git_config.is_repository(workspace):
            return None
    except GitConfigError as exc:
        return str(exc)
    return (
        f"{workspace} is not in a git repository, so there is no git config to set; run "
        "`git init` (or clone the repository) first, then `memd git-setup`."
    )


def configure(workspace: str, *, dry_run: bool) -> tuple[list[str], list[str]]:
    """Set the merge driver in the workspace's repository (a dry run: say what would be set);
    return the lines that say what was done and the errors."""
    command = driver_command()
    try:
        current = git_config.merge_driver(workspace)
    except GitConfigError as exc:
        return [], [str(exc)]
    if current == command:
        return [f"git config {git_config.DRIVER_KEY} already set ({command})"], []
    verb = "would set" if dry_run else "set"
    said = f"{verb} git config {git_config.DRIVER_KEY} to {command}"
    if current is not None:
        said += f" (it was {current})"
    if dry_run:
        return [said], []
    try:
        git_config.set_merge_driver(workspace, command)
    except GitConfigError as exc:
        return [], [str(exc)]
    return [said], []


def status_warning(workspace: str) -> str | None:
    """The warning `memd status` gives for `workspace`, or None (see the rules). Never fails:
    what cannot be read gives no warning."""
    try:
        read = storage.read_text(os.path.join(workspace, GITATTRIBUTES), max_bytes=1 << 20)
    except MemdError:
        return None
    if read is None or not gitattributes.names_merge_driver(read[0]):
        return None
    try:
        if git_config.merge_driver(workspace) is not None:
            return None
    except GitConfigError:
        return None
    return (
        ".gitattributes asks git to merge memory files with memd, but this clone's git config "
        f"does not define {git_config.DRIVER_KEY}, so git merges them line by line; run "
        "`memd git-setup` here once."
    )
