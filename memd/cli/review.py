"""`memd review`: walk the review inbox (`.memory/inbox.md`) one entry at a time.

Rules:
- Each entry is shown with its target category and why it waits; the answer is read from
  stdin, one line: `a` accept, `e` edit in `$EDITOR` (then accept the edited text), `r` reject
  (archived, with an optional reason asked next), `s` skip (it keeps waiting), `q` quit. An
  empty or unknown answer asks again; end of input quits.
- Every action goes through the daemon's `resolve`, so an accept is a store by the user through
  the normal write path (its dedup included), a reject is archived: nothing is written here.
- `$EDITOR` (else `$VISUAL`, else `vi`) runs without a shell, on a temporary file holding the
  text; its first non-blank line, whitespace runs joined, is the new text. An editor that fails
  or leaves no text changes nothing: the entry keeps waiting.
- `--json` lists the inbox (`inbox`'s result) and changes nothing.
- `--global` walks the user-wide memory's inbox instead (where an agent's `scope="global"`
  store into a reviewed category waits); the project's review never lists it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import TextIO

import msgspec

from memd_client import Client, protocol as p

PROMPT = "[a]ccept  [e]dit  [r]eject  [s]kip  [q]uit? "


class Walked(p.InboxResult, kw_only=True):
    """What a review did: the inbox as it was, and each resolution, in order."""

    resolved: list[p.ResolveResult] = msgspec.field(default_factory=list)
    skipped: int = 0


def review(
    client: Client,
    args: argparse.Namespace,
    *,
    answers: TextIO | None = None,
    edit: Callable[[str], str | None] | None = None,
) -> Walked:
    """Walk the inbox (or, with `args.json`, only list it); return what was done."""
    scope: p.Scope = "global" if getattr(args, "user_wide", False) else "project"
    listed = client.inbox(scope=scope)
    walked = Walked(entries=listed.entries, file=listed.file, workspace=listed.workspace)
    if args.json:
        return walked
    source = answers or sys.stdin
    editor = edit or edit_in_editor
    for number, entry in enumerate(listed.entries, start=1):
        target = f"{entry.category}/{entry.slug}" if entry.slug else entry.category
        verb = "delete" if entry.kind == "prune" else "store into"
        print(f"\n({number}/{len(listed.entries)}) {entry.id}: {verb} {target}")
        print(f"  why: {entry.reason}")
        print(f"  {entry.content}")
        answer = _ask(source)
        if answer == "q":
            break
        if answer == "s":
            walked.skipped += 1
            continue
        if answer == "r":
            print("Reason (optional): ", end="", flush=True)
            reason = source.readline().strip() or None
            walked.resolved.append(client.resolve(entry.id, "reject", reason=reason, scope=scope))
        elif answer == "e":
            text = editor(entry.content)
            if text is None:
                print("  No text came back from the editor; it keeps waiting.")
                walked.skipped += 1
                continue
            walked.resolved.append(client.resolve(entry.id, "accept", content=text, scope=scope))
        else:
            walked.resolved.append(client.resolve(entry.id, "accept", scope=scope))
        print(f"  {walked.resolved[-1].message}")
    return walked


def _ask(source: TextIO) -> str:
    """Read one answer: a, e, r, s or q (end of input: q)."""
    while True:
        print(PROMPT, end="", flush=True)
        line = source.readline()
        if not line:
            return "q"
        answer = line.strip().lower()[:1]
        if answer in ("a", "e", "r", "s", "q"):
            return answer


def edit_in_editor(text: str) -> str | None:
    """Return `text` as edited in `$EDITOR` (see the module rules), or None."""
    command = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    with tempfile.TemporaryDirectory(prefix="memd-review-") as directory:
        path = os.path.join(directory, "entry.md")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
        try:
            done = subprocess.run([*shlex.split(command), path], check=False)
        except OSError:
            return None
        if done.returncode != 0:
            return None
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    return " ".join(line.split())
    return None


def render_review(walked: Walked) -> str:
    """A summary line: how many were accepted, rejected, skipped, and what still waits."""
    if not walked.entries:
        return "The review inbox is empty."
    accepted = sum(1 for r in walked.resolved if r.action == "accept")
    rejected = len(walked.resolved) - accepted
    left = len(walked.entries) - len(walked.resolved)
    return f"\nAccepted {accepted}, rejected {rejected}; {left} still waiting."
