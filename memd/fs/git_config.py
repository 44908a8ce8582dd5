"""Reading and setting the memd merge driver in a repository's own git config (`git config
--local`), by running git.

Rules:
- git runs from the workspace root (`git -C`), with the user's environment: it finds the
  repository (a worktree or submodule too) as the user's own git would.
- Every run is bounded (`TIMEOUT` seconds) and its failure is one sentence (`GitConfigError`)
  that says what to do: git missing, not a repository, git refusing.
- Blocking: call it from the command line, or in a worker thread.
"""

from __future__ import annotations

import subprocess

TIMEOUT = 10.0
DRIVER_KEY = "merge.memd.driver"
NAME_KEY = "merge.memd.name"
NAME = "memd: merge memory files entry by entry"


class GitConfigError(Exception):
    """git could not read or set the config; the message says why and what to do."""


def _git(root: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", root, *arguments],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise GitConfigError("git is not installed (or not on PATH); install git first.") from None
    except subprocess.TimeoutExpired:
        raise GitConfigError(
            f"git did not answer within {TIMEOUT:.0f} s in {root}; check the repository."
        ) from None


def is_repository(root: str) -> bool:
    """True when `root` is inside a git working tree.

    Raises:
        GitConfigError: git is missing or hangs.
    """
    done = _git(root, "rev-parse", "--is-inside-work-tree")
    return done.returncode == 0 and done.stdout.strip() == "true"


def merge_driver(root: str) -> str | None:
    """The command git runs as the memd merge driver in `root`'s repository, or None when no
    config defines it.

    Raises:
        GitConfigError: git is missing or hangs.
    """
    done = _git(root, "config", "--get", DRIVER_KEY)
    command = done.stdout.strip()
    return command if done.returncode == 0 and command else None


def set_merge_driver(root: str, command: str) -> None:
    """Define the memd merge driver (`command`, with git's %O %A %B %P) in `root`'s
    repository's own config.

    Raises:
        GitConfigError: git is missing, hangs, or refuses (not a repository, a read-only
            config).
    """
    for key, value in ((NAME_KEY, NAME), (DRIVER_KEY, command)):
        done = _git(root, "config", "--local", key, value)
        if done.returncode != 0:
            reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no reason"
            raise GitConfigError(f"git config --local {key} failed in {root} ({reason}).")
