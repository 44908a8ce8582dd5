"""`memd init`: create the `.memory/` files and the memd block in agent instruction files.

Decide, then do: every file is read and its new text computed first
(`memd.core.project.agent_files`); `--dry-run` prints that plan as a diff, a normal run carries it
out.

Rules:
- Category files are created with O_EXCL and the header the daemon gives a new file; an existing
  file (or one that appears meanwhile) is never touched. A symlinked `.memory` is refused.
- Instruction files are replaced atomically and keep their mode (`storage.write_atomic`); one that
  changed since it was read is not overwritten.
- A hard-linked instruction file (more than one link) is refused: replacing it would split it
  from its other names. So is a symlinked one, except a symlink whose target is another file of
  the same run, inside the workspace (CLAUDE.md -> AGENTS.md): that one is skipped with a line
  saying it was updated through its target.
- With `--claude`, `.claude/settings.json` gets memd's Claude Code hooks, the prompt hook and the
  file hook (`memd.core.project.claude_settings`: added once, every other setting kept; settings
  that are not well-formed JSON are reported and left alone), written like an instruction file.
- The workspace's `.gitignore` gets a `.memory/.lock` line (`memd.core.project.gitignore`;
  created if missing, never duplicated, the rest kept byte for byte), written like an
  instruction file (atomic, refused if it is a symlink or hard-linked), so a lock is never
  committed.
- A file that cannot be done (malformed markers, not UTF-8, ...) is reported and left unchanged,
  the others are still done, and the exit code is 1.
- A workspace found other than by its `.memory/` (by `.git`, or the current directory for want
  of either) is named first, on stderr (`memd.cli.where`); the lines after it are relative to it.
- Progress goes to stdout as it happens, errors to stderr; with --json, stdout gets one
  `InitReport` at the end instead (`memd.cli.init_report`; errors are still on stderr too).

Size: over the ~400-line guide: one command's plan, diff and writes for four kinds of file
(memory files, instruction files, `.gitignore`, Claude Code's settings), read top to bottom.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import stat
import sys
from collections.abc import Callable
from typing import NamedTuple

from memd.cli import git_setup
from memd.cli.init_report import Change, Reporter
from memd.cli.where import choose, note
from memd.core.format import mdformat
from memd.core.format.categories import HACKLM_CATEGORIES, Category
from memd.core.project import agent_files, claude_settings, gitattributes, gitignore
from memd.fs import storage
from memd.paths import MEMORY_DIR
from memd_client import MemdError

AGENTS, CLAUDE, COPILOT = "AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md"
GITIGNORE = ".gitignore"
CLAUDE_SETTINGS = ".claude/settings.json"


class InitError(Exception):
    """Raised when one step of `memd init` cannot be done; the message says what to do."""


class FilePlan(NamedTuple):
    """An instruction file: where it is, how it is shown, its text now (None: absent) and next.

    `links` are the shown names of the symlinks to it that are updated through it. `added`
    names what a file other than an instruction file gets (the `.gitignore` line).
    """

    path: str
    shown: str
    old: str | None
    new: str
    fingerprint: storage.Fingerprint | None
    links: tuple[str, ...] = ()
    added: str | None = None


def run_init(args: argparse.Namespace) -> int:
    """Carry out `memd init` as parsed by `memd.cli.parser`; return the exit code."""
    chosen = choose(args.workspace)
    workspace = chosen.path
    if line := note(chosen):
        sys.stderr.write(f"memd: {line}\n")
    report = Reporter(workspace, dry_run=args.dry_run, as_json=args.json)
    try:
        missing = _missing_memory_files(workspace)
    except InitError as exc:
        return report.finish([str(exc)])
    targets = _targets(workspace, args)
    links = _links_to_targets(workspace, targets)
    plans, errors = [], []
    for path in targets:
        if path in links:
            continue
        try:
            plan = _plan_file(workspace, path)
        except InitError as exc:
            errors.append(str(exc))
            continue
        shown = tuple(_shown(workspace, link) for link, to in links.items() if to == path)
        plans.append(plan._replace(links=shown))
    try:  # first: it is about .memory/, like the lines before it
        ignore = _plan_file(
            workspace,
            _join(workspace, GITIGNORE),
            transform=gitignore.with_lock_ignored,
            added=f"{gitignore.LOCK_PATTERN} added",
        )
    except InitError as exc:
        errors.append(str(exc))
    else:
        plans.insert(0, ignore)
    if args.claude:  # the prompt and file hooks, beside CLAUDE.md
        try:
            plans.append(_plan_claude_settings(workspace))
        except (InitError, claude_settings.SettingsError) as exc:
            errors.append(str(exc))
    if getattr(args, "git", False):
        return _with_git(report, workspace, missing, plans, errors, dry_run=args.dry_run)
    if args.dry_run:
        _show_plan(report, missing, plans)
    else:
        errors.extend(_carry_out(report, workspace, missing, plans))
    return report.finish(errors)


def run_git_setup(args: argparse.Namespace) -> int:
    """Carry out `memd git-setup`: `.gitattributes` names memd's merge driver for
    `.memory/*.md`, and this clone's git config defines it (`memd.cli.git_setup`); return the
    exit code."""
    chosen = choose(args.workspace)
    if line := note(chosen):
        sys.stderr.write(f"memd: {line}\n")
    report = Reporter(chosen.path, dry_run=args.dry_run, as_json=args.json)
    return _with_git(report, chosen.path, None, [], [], dry_run=args.dry_run, memory=False)


def _with_git(
    report: Reporter,
    workspace: str,
    missing: list[Category] | None,
    plans: list[FilePlan],
    errors: list[str],
    *,
    dry_run: bool,
    memory: bool = True,
) -> int:
    """Do `plans` (and, with `memory`, create `missing`) with the git merge driver set up
    too: nothing at all outside a git repository (the error says why)."""
    if (problem := git_setup.check_repository(workspace)) is not None:
        return report.finish([*errors, problem])
    try:
        plans.append(
            _plan_file(
                workspace,
                _join(workspace, git_setup.GITATTRIBUTES),
                transform=gitattributes.with_merge_driver,
                added=f"{gitattributes.MERGE_LINE} added",
            )
        )
    except InitError as exc:
        errors.append(str(exc))
    if dry_run:
        _show_plan(report, missing, plans, memory=memory)
    else:
        errors.extend(_carry_out(report, workspace, missing, plans, memory=memory))
    said, failed = git_setup.configure(workspace, dry_run=dry_run)
    for line in said:
        report.say(line)
    return report.finish([*errors, *failed])


# ---------------------------------------------------------------------------- deciding


def _missing_memory_files(workspace: str) -> list[Category] | None:
    """Return the categories whose file is missing, or None if `.memory/` itself is missing.

    Raises:
        InitError: the workspace is not a directory, or `.memory` is a symlink or not a directory.
    """
    if not os.path.isdir(workspace):
        raise InitError(
            f"{workspace} is not a directory; pass an existing project root with --workspace."
        )
    directory = os.path.join(workspace, MEMORY_DIR)
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InitError(storage.storage_error("check", directory, exc).message) from None
    if stat.S_ISLNK(st.st_mode):
        raise InitError(
            f"{directory} is a symlink, which memd init does not follow; run it where the "
            "directory really is, or replace the link with a directory."
        )
    if not stat.S_ISDIR(st.st_mode):
        raise InitError(
            f"{directory} exists but is not a directory; move it away and rerun memd init."
        )
    return [c for c in HACKLM_CATEGORIES if not os.path.lexists(os.path.join(directory, c.file))]


def _targets(workspace: str, args: argparse.Namespace) -> list[str]:
    """Return the absolute paths of the instruction files to update, without duplicates."""
    names = [
        *([AGENTS] if args.agents else []),
        *([CLAUDE] if args.claude else []),
        *([COPILOT] if args.copilot else []),
        *args.file,
    ]
    if not names:
        found = [n for n in (AGENTS, CLAUDE, COPILOT) if os.path.lexists(_join(workspace, n))]
        names = found or [AGENTS]
    return list(dict.fromkeys(_join(workspace, name) for name in names))


def _links_to_targets(workspace: str, targets: list[str]) -> dict[str, str]:
    """Return the symlinks among `targets` whose target is another of them, inside `workspace`.

    Each maps to that other target (a path of `targets` that is not a symlink).
    """
    plain: dict[str, str] = {}
    for path in targets:
        if not os.path.islink(path):
            plain.setdefault(os.path.realpath(path), path)
    root = os.path.realpath(workspace)
    links = {}
    for path in targets:
        real = os.path.realpath(path)
        if os.path.islink(path) and real in plain and os.path.commonpath([root, real]) == root:
            links[path] = plain[real]
    return links


def _plan_file(
    workspace: str,
    path: str,
    *,
    transform: Callable[[str | None], str] | None = None,
    added: str | None = None,
) -> FilePlan:
    """Read the instruction file at `path` and return what it would become (with `transform`:
    what that makes of the file's text, for a file other than an instruction file).

    Raises:
        InitError: it is a symlink, hard-linked, or not a readable UTF-8 file, or its memd
            markers are malformed or would fall in an unclosed code fence.
    """
    shown = _shown(workspace, path)
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InitError(storage.storage_error("check", shown, exc).message) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise InitError(
            f"{shown} is a symlink, which memd init does not write through; "
            + (
                "replace the link with a file."
                if transform
                else "pass the file it points to with --file, or replace the link with a file."
            )
        )
    if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise InitError(
            f"{shown} has {st.st_nlink} hard links, which memd init would break by replacing "
            "it, so it was left unchanged; add the memd block by hand, or keep one file and "
            "make the other names symlinks to it."
        )
    try:
        read = storage.read_text(path)
    except MemdError as exc:
        raise InitError(exc.message) from None
    old, fingerprint = read if read is not None else (None, None)
    if transform is not None:
        return FilePlan(path, shown, old, transform(old), fingerprint, added=added)
    try:
        new = agent_files.upsert_block(old or "")
    except agent_files.BlockError as exc:
        raise InitError(f"{shown} was left unchanged: {exc}, then rerun memd init.") from None
    return FilePlan(path, shown, old, new, fingerprint)


def _plan_claude_settings(workspace: str) -> FilePlan:
    """Plan `.claude/settings.json` with memd's Claude Code hooks (`claude_settings`).

    Raises:
        InitError: as `_plan_file`.
        claude_settings.SettingsError: the settings are not JSON memd can add hooks to.
    """
    path = _join(workspace, CLAUDE_SETTINGS)
    shown = _shown(workspace, path)

    def add_hooks(text: str | None) -> str:
        return claude_settings.with_memd_hooks(text, shown)

    return _plan_file(workspace, path, transform=add_hooks, added="memd's Claude Code hooks added")


# ---------------------------------------------------------------------------- doing


def _show_plan(
    report: Reporter, missing: list[Category] | None, plans: list[FilePlan], *, memory: bool = True
) -> None:
    """Print what a run would do: files to create (with `memory`), then a unified diff per
    changed file."""
    if memory and missing is None:
        report.created(f"{MEMORY_DIR}/")
    for category in (HACKLM_CATEGORIES if missing is None else missing) if memory else ():
        report.created(f"{MEMORY_DIR}/{category.file}")
    for plan in plans:
        if plan.old == plan.new:
            report.say(f"{plan.shown} already up to date", plan.shown)
        _say_links(
            report, plan, "already up to date" if plan.old == plan.new else "would be updated"
        )
    for plan in plans:
        if plan.old != plan.new:
            report.diff(_diff(plan), plan.shown, _change(plan))


def _diff(plan: FilePlan) -> str:
    """Return a unified diff from the file's text to its new text (git's a/ b/ prefixes)."""
    old = _lines(plan.old or "")
    new = _lines(plan.new)
    before = "/dev/null" if plan.old is None else f"a/{plan.shown}"
    parts = []
    for line in difflib.unified_diff(old, new, before, f"b/{plan.shown}", lineterm="\n"):
        parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)


def _carry_out(
    report: Reporter,
    workspace: str,
    missing: list[Category] | None,
    plans: list[FilePlan],
    *,
    memory: bool = True,
) -> list[str]:
    """Create the memory files (with `memory`) and write the other files; return the errors."""
    errors: list[str] = []
    try:
        if memory:
            _create_memory_files(report, workspace, missing)
    except OSError as exc:
        directory = os.path.join(workspace, MEMORY_DIR)
        errors.append(storage.storage_error("create files in", directory, exc).message)
    for plan in plans:
        try:
            report.say(_write_plan(plan), plan.shown, _change(plan))
        except (OSError, MemdError, storage.ChangedOnDisk) as exc:
            errors.append(_write_error(plan, exc))
        else:
            _say_links(report, plan, "already up to date" if plan.old == plan.new else "updated")
    return errors


def _change(plan: FilePlan) -> Change:
    return "none" if plan.old == plan.new else "create" if plan.old is None else "update"


def _create_memory_files(report: Reporter, workspace: str, missing: list[Category] | None) -> None:
    """Create `.memory/` if `missing` is None, and each missing category file with its header."""
    directory = os.path.join(workspace, MEMORY_DIR)
    if missing is None:
        try:
            os.mkdir(directory)
        except FileExistsError:
            pass  # made meanwhile: the O_NOFOLLOW open below refuses it if it is a symlink
        else:
            _fsync_dir(workspace)
            report.created(f"{MEMORY_DIR}/")
    if missing == []:
        report.say(f"{MEMORY_DIR}/ already has all {len(HACKLM_CATEGORIES)} category files")
        return
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for category in HACKLM_CATEGORIES if missing is None else missing:
            header = mdformat.render(mdformat.new_document(category))
            if _create_exclusive(dir_fd, category.file, header):
                report.created(f"{MEMORY_DIR}/{category.file}")
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _create_exclusive(dir_fd: int, name: str, text: str) -> bool:
    """Create `name` in `dir_fd` holding `text` (mode 0644, fsynced); False if it exists."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, storage.NEW_FILE_MODE, dir_fd=dir_fd)
    except FileExistsError:
        return False  # appeared meanwhile: someone else's file, left alone
    try:
        with open(fd, "wb", closefd=False) as handle:
            handle.write(text.encode("utf-8"))
        os.fchmod(fd, storage.NEW_FILE_MODE)  # exactly 0644 whatever the umask, as the daemon
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)  # no half-written file: a rerun creates it again
        raise
    finally:
        os.close(fd)
    return True


def _write_plan(plan: FilePlan) -> str:
    """Write `plan.new` to its file unless unchanged; return the line that reports it."""
    if plan.old == plan.new:
        return f"{plan.shown} already up to date"
    _make_parents(os.path.dirname(plan.path))

    def unchanged_since_read() -> None:
        # lstat: a file replaced by a symlink meanwhile has another inode, so it counts as changed.
        try:
            st = os.lstat(plan.path)
        except FileNotFoundError:
            if plan.fingerprint is not None:
                raise storage.ChangedOnDisk from None
            return
        if storage.fingerprint_of(st) != plan.fingerprint or st.st_nlink > 1:
            raise storage.ChangedOnDisk  # a rerun reads it again (and refuses a new hard link)

    storage.write_atomic(plan.path, plan.new, before_replace=unchanged_since_read)
    if plan.added is not None:
        return f"{'created' if plan.old is None else 'updated'} {plan.shown} ({plan.added})"
    if plan.old is None:
        return f"created {plan.shown} (memd block added)"
    had_block = agent_files.find_block(plan.old) is not None
    return f"updated {plan.shown} (memd block {'updated' if had_block else 'added'})"


def _write_error(plan: FilePlan, exc: OSError | MemdError | storage.ChangedOnDisk) -> str:
    if isinstance(exc, storage.ChangedOnDisk):
        return f"{plan.shown} changed while memd init ran and was left alone; rerun memd init."
    if isinstance(exc, OSError):
        return storage.storage_error("write", plan.shown, exc).message
    return exc.message


def _make_parents(directory: str) -> None:
    """Create `directory` and its missing parents, each made durable in its parent."""
    missing = []
    while not os.path.isdir(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
        _fsync_dir(os.path.dirname(path))


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- helpers


def _join(workspace: str, name: str) -> str:
    return os.path.normpath(os.path.join(workspace, name))


def _shown(workspace: str, path: str) -> str:
    """Return `path` relative to the workspace, or absolute if it lies outside."""
    relative = os.path.relpath(path, workspace)
    return path if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def _lines(text: str) -> list[str]:
    return [line.text + line.eol for line in mdformat.parse(text).lines]


def _say_links(report: Reporter, plan: FilePlan, done: str) -> None:
    """Report the symlinks updated through `plan`'s file: `done` says how it went."""
    for link in plan.links:
        line = f"{link} is a link to {plan.shown}; {done} through it"
        report.say(line, link, "none" if plan.old == plan.new else "update", plan.shown)
