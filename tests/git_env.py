"""The environment tests run real git (and memd's git commands) in: the user's and the
system's git config kept out, a fixed author, no prompt, and memd importable from this checkout
(git runs the merge driver, `python -m memd merge-file`, with this environment)."""

from __future__ import annotations

import os
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent


def git_env(home: Path) -> dict[str, str]:
    """The environment for git (and memd) with `home` as HOME: only the repository's own
    config counts."""
    return {
        **os.environ,
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PYTHONPATH": os.pathsep.join([str(SOURCE), str(SOURCE / "client")]),
        "MEMD_SOCKET": "/nonexistent/memd.sock",  # no git command of memd asks a daemon
    }
