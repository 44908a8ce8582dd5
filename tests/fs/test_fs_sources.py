"""Finding and reading read-only sources on a real file system: the defaults, globs, removals
and absolute paths; links that leave the workspace refused and their targets untouched; .git,
node_modules and .memory never entered; the size, file and directory bounds; FIFOs never
opened; and a project's .memory/memd.toml."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from memd.config import ConfigError, ProjectConfig
from memd.core.sources.source_globs import resolve_sources
from memd.fs import storage
from memd.fs.source_files import (
    MAX_PROJECT_CONFIG_BYTES,
    MAX_SOURCE_FILES,
    Refusal,
    SourceScan,
    find_sources,
    read_project_config,
    read_source,
)
from memd_client.errors import FileFormatError

CAP = 8 * 1024 * 1024
T = TypeVar("T")


def _write(path: Path, text: str = "- a rule\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _scan(
    root: Path,
    global_entries: tuple[str, ...] = (),
    project: tuple[str, ...] = (),
    **bounds: int,
) -> SourceScan:
    selection = resolve_sources(global_entries, project)
    return find_sources(str(root), selection, max_bytes=bounds.pop("max_bytes", CAP), **bounds)


def _paths(scan: SourceScan) -> list[str]:
    return [source.path for source in scan.files]


def _within(seconds: float, call: Callable[[], T]) -> T:
    """Run `call` in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked: a FIFO was opened"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's outside the workspace, with its atime older than its mtime (so
    a read would update it even under relatime)."""
    path = _write(tmp_path / "home" / ".bashrc", "export SECRET=1\n")
    mtime = path.stat().st_mtime_ns
    os.utime(path, ns=(mtime - 10**12, mtime))
    return path


def _untouched(path: Path) -> tuple[int, int, int, int]:
    """What a read or write would change (read the content itself only at the end: that
    read moves the atime)."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_atime_ns


def test_the_default_files_are_found_where_agents_keep_them(workspace: Path) -> None:
    for name in (
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/rules/style.md",
        ".claude/rules/team/db/migrations.md",
        ".cursor/rules/python.mdc",
        ".cursor/rules/go/go.mdc",
        ".github/copilot-instructions.md",
        "MEMORY.md",
        "memory/2024-05-01.md",
        # not sources:
        "README.md",
        "docs/CLAUDE.md",
        "memory/deep/x.md",
        ".cursor/rules/notes.md",
        ".claude/rules/.drafts/x.md",
        ".memory/decisions.md",
    ):
        _write(workspace / name)
    scan = _scan(workspace)
    assert _paths(scan) == [
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/rules/style.md",
        ".claude/rules/team/db/migrations.md",
        ".cursor/rules/python.mdc",  # a level's files, then its directories
        ".cursor/rules/go/go.mdc",
        ".github/copilot-instructions.md",
        "MEMORY.md",
        "memory/2024-05-01.md",
    ]
    assert scan.refused == []
    first = scan.files[0]
    assert first.real_path == str(workspace / "CLAUDE.md")
    assert first.size == len("- a rule\n")
    assert first.fingerprint == storage.current_fingerprint(str(workspace / "CLAUDE.md"))
    assert first.rule == "CLAUDE.md"
    assert str(workspace) in scan.directories
    assert str(workspace / ".claude" / "rules" / "team") in scan.directories


def test_an_empty_workspace_has_no_sources(workspace: Path, tmp_path: Path) -> None:
    assert _scan(workspace) == SourceScan([], [], [str(workspace)])
    assert _scan(tmp_path / "gone").files == []


def test_globs_removals_and_absolute_paths(workspace: Path, tmp_path: Path) -> None:
    _write(workspace / "CLAUDE.md")
    _write(workspace / "AGENTS.md")
    for name in ("0001-postgres.md", "0002-drop-redis.md", "template.txt"):
        _write(workspace / "docs" / "adr" / name)
    notes = tmp_path / "notes"
    _write(notes / "uv.md", "- I use uv, never pip.\n")
    _write(notes / "private.md")
    scan = _scan(
        workspace,
        ("docs/adr/*.md", "!CLAUDE.md", f"{notes}/*.md", f"!{notes}/private.md"),
        ("!docs/adr/0002-*.md",),
    )
    assert _paths(scan) == ["AGENTS.md", "docs/adr/0001-postgres.md", str(notes / "uv.md")]
    assert scan.files[-1].real_path == str(notes / "uv.md")
    assert scan.files[-1].rule == f"{notes}/*.md"
    # An absolute path that names a file in the workspace shows it relative to the root, once.
    both = _scan(workspace, (f"{workspace}/AGENTS.md", f"{workspace}/docs/adr/0001-*.md"))
    assert _paths(both) == ["CLAUDE.md", "AGENTS.md", "docs/adr/0001-postgres.md"]


def test_a_link_out_of_the_workspace_is_refused_and_its_target_untouched(
    workspace: Path, victim: Path
) -> None:
    before = _untouched(victim)
    (workspace / "CLAUDE.md").symlink_to(victim)
    _write(workspace / "AGENTS.md")
    scan = _scan(workspace)
    assert _paths(scan) == ["AGENTS.md"]
    assert [(r.path, r.kind) for r in scan.refused] == [("CLAUDE.md", "outside")]
    assert scan.refused[0].message == (
        f"refused: CLAUDE.md links outside the workspace (to {victim}); name the target in "
        "sources in memd's config file to include it."
    )
    for source in scan.files:
        read_source(source.real_path, CAP, shown=source.path)
    assert _untouched(victim) == before
    assert victim.read_text() == "export SECRET=1\n"


def test_a_link_out_is_followed_when_the_user_named_its_target(
    workspace: Path, victim: Path
) -> None:
    (workspace / "CLAUDE.md").symlink_to(victim)
    scan = _scan(workspace, (str(victim),))
    # Found twice (the link, then the named path): one source, shown by the first path.
    assert [(s.path, s.real_path) for s in scan.files] == [("CLAUDE.md", str(victim))]
    assert scan.refused == []
    # A project cannot name it (absolute paths are refused there): the link stays refused.
    with pytest.raises(ValueError, match="not relative"):
        resolve_sources((), (str(victim),))


def test_a_named_absolute_path_is_followed_through_its_own_links(
    workspace: Path, tmp_path: Path, victim: Path
) -> None:
    (tmp_path / "dotfiles").mkdir()
    (tmp_path / "dotfiles" / "rules.md").symlink_to(victim)
    scan = _scan(workspace, (str(tmp_path / "dotfiles" / "rules.md"),))
    assert [(s.path, s.real_path) for s in scan.files] == [
        (str(tmp_path / "dotfiles" / "rules.md"), str(victim))
    ]
    # Under an absolute glob a link must stay in the glob's directory.
    scan = _scan(workspace, (f"{tmp_path}/dotfiles/*.md",))
    assert scan.files == []
    assert scan.refused[0].message == (
        f"refused: {tmp_path}/dotfiles/rules.md links outside {tmp_path}/dotfiles (to {victim}); "
        "name the target in sources in memd's config file to include it."
    )


def test_links_that_stay_inside_the_workspace_are_followed(workspace: Path) -> None:
    _write(workspace / "docs" / "agents.md", "- shared\n")
    (workspace / "AGENTS.md").symlink_to("docs/agents.md")
    (workspace / "CLAUDE.md").symlink_to(workspace / "docs" / "agents.md")  # the same file
    _write(workspace / "shared-rules" / "a.md")
    _write(workspace / "shared-rules" / "deep" / "b.md")
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "rules").symlink_to("../shared-rules")
    (workspace / "shared-rules" / "loop").symlink_to("..")  # a loop: each listing once
    scan = _scan(workspace)
    assert [(s.path, s.real_path) for s in scan.files] == [
        ("CLAUDE.md", str(workspace / "docs" / "agents.md")),
        (".claude/rules/a.md", str(workspace / "shared-rules" / "a.md")),
        (".claude/rules/deep/b.md", str(workspace / "shared-rules" / "deep" / "b.md")),
    ]
    assert scan.refused == []


def test_a_directory_link_out_is_refused_unless_an_absolute_entry_reaches_into_it(
    workspace: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-rules"
    _write(shared / "a.md")
    _write(shared / "other" / "b.md")
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "rules").symlink_to(shared)
    scan = _scan(workspace)
    assert scan.files == []
    assert [(r.path, r.kind) for r in scan.refused] == [(".claude/rules", "outside")]
    assert f"(to {shared})" in scan.refused[0].message
    named = _scan(workspace, (f"{shared}/**/*.md",))
    assert _paths(named) == [".claude/rules/a.md", ".claude/rules/other/b.md"]
    assert named.refused == []
    # Naming one file there lets the walk in, and takes only that file.
    one = _scan(workspace, (f"{shared}/a.md",))
    assert _paths(one) == [".claude/rules/a.md"]
    assert [(r.path, r.kind) for r in one.refused] == [(".claude/rules/other", "outside")]


def test_git_node_modules_and_memory_are_never_entered(workspace: Path) -> None:
    for name in (
        ".git/notes.md",
        ".memory/decisions.md",
        "node_modules/pkg/README.md",
        "web/node_modules/pkg/README.md",
        "docs/guide.md",
        ".claude/rules/a.md",
    ):
        _write(workspace / name)
    (workspace / "CLAUDE.md").symlink_to(".memory/decisions.md")  # a category file
    (workspace / "memory").symlink_to(".memory")
    scan = _scan(workspace, ("**/*.md", ".*/**"))
    assert _paths(scan) == [".claude/rules/a.md", "docs/guide.md"]
    assert scan.refused == []


def test_a_file_over_the_cap_is_refused_not_read(workspace: Path) -> None:
    _write(workspace / "CLAUDE.md", "x" * 5000)
    _write(workspace / "AGENTS.md", "x" * 4096)
    scan = _scan(workspace, max_bytes=4096)
    assert _paths(scan) == ["AGENTS.md"]
    assert scan.refused[0].kind == "too_big"
    assert scan.refused[0].message.startswith(
        "refused: CLAUDE.md holds 5,000 bytes, over the 4,096-byte cap for a source file"
    )
    with pytest.raises(FileFormatError, match="5,000 bytes, over the 4,096-byte cap"):
        read_source(str(workspace / "CLAUDE.md"), 4096, shown="CLAUDE.md")


def test_a_fifo_is_never_opened(workspace: Path) -> None:
    os.mkfifo(workspace / "CLAUDE.md")
    _write(workspace / "AGENTS.md")
    scan = _within(5, lambda: _scan(workspace))
    assert _paths(scan) == ["AGENTS.md"]
    assert [(r.path, r.kind) for r in scan.refused] == [("CLAUDE.md", "not_regular")]
    with pytest.raises(FileFormatError, match="not a regular file"):
        _within(5, lambda: read_source(str(workspace / "CLAUDE.md"), CAP))
    with pytest.raises(FileFormatError, match="not a regular file"):
        read_source(str(workspace), CAP)


def test_reading_a_source(workspace: Path) -> None:
    _write(workspace / "CLAUDE.md", "# Rules\n\n- Use uv.\n")
    source = _scan(workspace).files[0]
    before = (workspace / "CLAUDE.md").stat().st_mtime_ns
    assert read_source(source.real_path, CAP, shown=source.path) == (
        "# Rules\n\n- Use uv.\n",
        source.fingerprint,
    )
    assert (workspace / "CLAUDE.md").stat().st_mtime_ns == before
    (workspace / "CLAUDE.md").unlink()
    assert read_source(source.real_path, CAP) is None


def test_a_source_that_is_not_utf8_is_refused_in_one_sentence(workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_bytes(b"- caf\xe9\n")
    with pytest.raises(FileFormatError) as caught:
        read_source(str(workspace / "CLAUDE.md"), CAP, shown="CLAUDE.md")
    assert caught.value.message == (
        "CLAUDE.md is not UTF-8 text (bad byte at offset 5); memd leaves this source out until "
        "it is re-saved as UTF-8."
    )


def test_a_link_planted_after_the_scan_is_not_followed_by_the_read(
    workspace: Path, victim: Path
) -> None:
    _write(workspace / "docs" / "CLAUDE.md")
    source = _scan(workspace, ("docs/CLAUDE.md",)).files[-1]
    before = _untouched(victim)
    (workspace / "docs" / "CLAUDE.md").unlink()
    (workspace / "docs" / "CLAUDE.md").symlink_to(victim)
    with pytest.raises(FileFormatError, match="symbolic link"):
        read_source(source.real_path, CAP)
    (workspace / "docs" / "CLAUDE.md").unlink()
    (workspace / "docs").rmdir()
    (workspace / "docs").symlink_to(victim.parent)  # a directory on the way
    (victim.parent / "CLAUDE.md").write_text("outside\n")
    with pytest.raises(FileFormatError, match="symbolic link"):
        read_source(source.real_path, CAP)
    assert _untouched(victim) == before
    assert victim.read_text() == "export SECRET=1\n"


def test_the_file_count_is_bounded(workspace: Path) -> None:
    assert MAX_SOURCE_FILES == 500
    for number in range(8):
        _write(workspace / "memory" / f"{number}.md")
    scan = _scan(workspace, max_files=5)
    assert _paths(scan) == [f"memory/{number}.md" for number in range(5)]
    assert [(r.path, r.kind) for r in scan.refused] == [("memory/5.md", "too_many")]
    assert "at most 5 source files" in scan.refused[0].message


def test_the_directories_listed_are_bounded(workspace: Path) -> None:
    for number in range(6):
        _write(workspace / "docs" / f"d{number}" / "x.md")
    scan = _scan(workspace, ("docs/**/*.md",), max_dirs=4)
    assert len(scan.files) < 6
    assert scan.refused[-1].kind == "too_many"
    assert "after listing 4 directories" in scan.refused[-1].message


def test_a_directory_that_cannot_be_listed_is_reported(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = workspace / "memory"
    _write(locked / "a.md")
    _write(workspace / "CLAUDE.md")
    scandir = os.scandir

    def refusing(path: str) -> object:  # as a chmod 0 directory does (root reads any)
        if path == str(locked):
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    scan = _scan(workspace)
    assert _paths(scan) == ["CLAUDE.md"]
    assert scan.refused == [
        Refusal(
            "memory",
            "unreadable",
            "refused: memd cannot list memory (Permission denied); check its permissions.",
        )
    ]


# A project's .memory/memd.toml


def _project_file(root: Path) -> Path:
    return root / ".memory" / "memd.toml"


def test_a_project_file_adds_sources(workspace: Path) -> None:
    assert read_project_config(str(workspace)) == ProjectConfig()
    _write(_project_file(workspace), 'sources = ["docs/*.md", "!CLAUDE.md"]\n')
    config = read_project_config(str(workspace))
    assert config.sources == ("docs/*.md", "!CLAUDE.md")
    _write(workspace / "docs" / "a.md")
    _write(workspace / "CLAUDE.md")
    assert _paths(_scan(workspace, (), config.sources)) == ["docs/a.md"]


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (lambda p: p.write_text("sources = [\n"), "is not valid TOML"),
        (lambda p: p.write_text("idle_exit = 5\n"), "Unknown setting 'idle_exit'"),
        (lambda p: p.write_text('sources = ["/etc/*"]\n'), "not relative to the workspace root"),
        (lambda p: p.write_bytes(b'sources = ["caf\xe9"]\n'), "is not UTF-8 text"),
        (lambda p: p.write_text("#" * (MAX_PROJECT_CONFIG_BYTES + 1)), "the cap for memd.toml"),
        (lambda p: p.mkdir(), "is not a regular file"),
        (lambda p: os.mkfifo(p), "is not a regular file"),
    ],
)
def test_a_bad_project_file_is_a_config_error_naming_it(
    workspace: Path, make: Callable[[Path], object], names: str
) -> None:
    path = _project_file(workspace)
    path.parent.mkdir()
    make(path)
    with pytest.raises(ConfigError) as caught:
        _within(5, lambda: read_project_config(str(workspace)))
    assert str(path) in str(caught.value)
    assert names in str(caught.value)


def test_a_linked_project_file_or_memory_directory_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    elsewhere = _write(tmp_path / "elsewhere" / "memd.toml", 'sources = ["x.md"]\n')
    (workspace / ".memory").mkdir()
    _project_file(workspace).symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        read_project_config(str(workspace))
    _project_file(workspace).unlink()
    (workspace / ".memory").rmdir()
    (workspace / ".memory").symlink_to(elsewhere.parent)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        read_project_config(str(workspace))


def test_a_tree_deeper_than_the_depth_bound_keeps_the_rest_of_the_scan(workspace: Path) -> None:
    """A 600-level directory under a `**` rule raised RecursionError and dropped the whole
    look (CLAUDE.md too): the walk stops at MAX_SOURCE_DEPTH and says so."""
    _write(workspace / "CLAUDE.md")
    _write(workspace / "docs" / "guide.md")
    deep = workspace / "docs"
    for _ in range(600):
        deep = deep / "d"
    _write(deep / "bottom.md")
    scan = _scan(workspace, ("docs/**/*.md",))
    assert "CLAUDE.md" in _paths(scan) and "docs/guide.md" in _paths(scan)
    assert not any(path.endswith("bottom.md") for path in _paths(scan))
    assert [r.kind for r in scan.refused] == ["too_deep"]
    assert scan.refused[0].message.startswith("refused: docs/")
