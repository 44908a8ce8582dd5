"""What a workspace's code says about a set of citations (STUB: paths in the working tree; the
git-aware gatherer replaces it). Blocking: call it in a worker thread."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from memd.core.citations.model import Anchor, CodeFacts, PathFact
from memd.fs.git_state import git_dir


def tree_state(root: str) -> str:
    """Return a cheap fingerprint of the workspace's code (git's HEAD and index); "" when
    there is none to take (then the caller re-gathers by age)."""
    directory = git_dir(root)
    if directory is None:
        return ""
    parts = []
    for name in ("HEAD", "index"):
        try:
            st = os.stat(os.path.join(directory, name))
        except OSError:
            continue
        parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return ";".join(parts)


def baselines(root: str, files: Sequence[str]) -> dict[tuple[str, int], str]:
    """Return, for each line of the memory files `files` (relative to `root`), the commit that
    wrote it ("" for an uncommitted line or without git)."""
    return {}


def gather(root: str, anchors: Iterable[Anchor], baselines: Iterable[str] = ()) -> CodeFacts:
    """Return the facts about `anchors` in the workspace at `root` as it is now."""
    paths = {}
    for anchor in anchors:
        if anchor.kind == "path" and anchor.key not in paths:
            here = os.path.exists(os.path.join(root, anchor.key))
            first = anchor.key.split("/", 1)[0]
            known = os.path.isdir(os.path.join(root, first))
            paths[anchor.key] = PathFact(found=(anchor.key,) if here else (), known=known)
    return CodeFacts(git=git_dir(root) is not None, paths=paths)
