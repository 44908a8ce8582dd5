"""`memd init` as a subprocess: the .memory files, the instruction files, --dry-run, refusals."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli import init as memd_init
from memd.core.format import mdformat
from memd.core.format.categories import HACKLM_CATEGORIES
from memd.core.project import gitignore
from memd.core.project.agent_files import END, START, render_block
from memd.core.project.claude_settings import CAPTURE_COMMAND, CAPTURE_TIMEOUT, HOOK_COMMAND
from memd.fs import storage
from tests.conftest import DaemonProcess, skip_inside_a_project

BLOCK = render_block()
COPILOT = Path(".github") / "copilot-instructions.md"


def init(workspace: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "init", "--workspace", str(workspace), *args],
        cwd=cwd or workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root`: its bytes and permission bits."""
    return {
        str(path.relative_to(root)): (path.read_bytes(), stat.S_IMODE(path.lstat().st_mode))
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def test_creates_the_memory_files_with_the_daemon_header_and_agents_md(tmp_path: Path) -> None:
    result = init(tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "created .memory/"
    assert lines[1:6] == [f"created .memory/{c.file}" for c in HACKLM_CATEGORIES]
    assert lines[6:] == [
        "created .gitignore (.memory/.lock added)",
        "created AGENTS.md (memd block added)",
    ]
    assert (tmp_path / ".gitignore").read_text() == f"{gitignore.COMMENT}\n.memory/.lock\n"
    assert sorted(p.name for p in (tmp_path / ".memory").iterdir()) == sorted(
        c.file for c in HACKLM_CATEGORIES
    )
    for category in HACKLM_CATEGORIES:
        path = tmp_path / ".memory" / category.file
        assert path.read_text() == mdformat.render(mdformat.new_document(category))
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert (tmp_path / "AGENTS.md").read_text() == BLOCK
    assert not (tmp_path / "CLAUDE.md").exists()
    assert not (tmp_path / ".github").exists()


def test_created_files_are_what_the_daemon_starts_a_new_file_with(
    daemon: DaemonProcess, short_tmp: Path
) -> None:
    by_init, by_daemon = short_tmp / "by-init", short_tmp / "by-daemon"
    by_init.mkdir()
    by_daemon.mkdir()
    assert init(by_init).returncode == 0
    for category in HACKLM_CATEGORIES:
        store = ["store", "--workspace", str(by_daemon), "-c", category.name, "Use tabs."]
        stored = subprocess.run(
            [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), *store],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert stored.returncode == 0, stored.stderr
        created = (by_init / ".memory" / category.file).read_text()
        written = (by_daemon / ".memory" / category.file).read_text()
        assert written.startswith(created)
        assert mdformat.entries(mdformat.parse(created)) == ()


def test_second_run_changes_nothing_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_bytes(b"# Claude\r\n\r\nBe brief.")
    assert init(tmp_path).returncode == 0
    before = snapshot(tmp_path)
    again = init(tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        ".memory/ already has all 5 category files",
        ".gitignore already up to date",
        "CLAUDE.md already up to date",
    ]
    assert snapshot(tmp_path) == before


def test_existing_category_file_and_text_outside_the_block_are_kept(tmp_path: Path) -> None:
    memory = tmp_path / ".memory"
    memory.mkdir()
    (memory / "decisions.md").write_bytes(b"# Decision\r\n\r\n- [x] Mine.")
    os.chmod(memory / "decisions.md", 0o600)
    agents = tmp_path / "AGENTS.md"
    agents.write_bytes(b"# Agents\r\n\r\nStay calm.")
    os.chmod(agents, 0o640)
    result = init(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "created .memory/decisions.md" not in result.stdout
    assert "created .memory/quirks.md" in result.stdout
    assert "updated AGENTS.md (memd block added)" in result.stdout
    assert (memory / "decisions.md").read_bytes() == b"# Decision\r\n\r\n- [x] Mine."
    assert stat.S_IMODE((memory / "decisions.md").stat().st_mode) == 0o600
    expected = "# Agents\r\n\r\nStay calm.\r\n\r\n" + render_block("\r\n").removesuffix("\r\n")
    assert agents.read_bytes() == expected.encode()
    assert stat.S_IMODE(agents.stat().st_mode) == 0o640


def test_outdated_block_is_replaced(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    agents.write_text(f"intro\n{START}\nold advice\n{END}\noutro\n")
    result = init(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "updated AGENTS.md (memd block updated)" in result.stdout
    assert agents.read_text() == f"intro\n{BLOCK}outro\n"


def test_flags_pick_the_files(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("untouched\n")
    (tmp_path / "sub").mkdir()
    result = init(
        tmp_path, "--claude", "--copilot", "--file", "docs/agent.md", cwd=tmp_path / "sub"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-5:] == [
        "created CLAUDE.md (memd block added)",
        f"created {COPILOT} (memd block added)",
        "created docs/agent.md (memd block added)",
        "created .claude/settings.json (memd's Claude Code hooks added)",
        memd_init._HOOKS_SHARED,  # who runs them, and a teammate without memd
    ]
    for name in ("CLAUDE.md", COPILOT, "docs/agent.md"):
        assert (tmp_path / name).read_text() == BLOCK
    assert (tmp_path / "AGENTS.md").read_text() == "untouched\n"


def test_absolute_file_outside_the_workspace(tmp_path: Path) -> None:
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere.md"
    workspace.mkdir()
    result = init(workspace, "--file", str(elsewhere), "--agents", "--file", "AGENTS.md")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "created AGENTS.md (memd block added)",
        f"created {elsewhere} (memd block added)",
    ]
    assert elsewhere.read_text() == BLOCK


def test_without_flags_only_existing_instruction_files_are_updated(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / COPILOT).write_text("# Copilot\n")
    (tmp_path / "CLAUDE.md").write_text("# Claude\n")
    result = init(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "updated CLAUDE.md (memd block added)",
        f"updated {COPILOT} (memd block added)",
    ]
    assert not (tmp_path / "AGENTS.md").exists()
    assert (tmp_path / COPILOT).read_text() == "# Copilot\n\n" + BLOCK


def test_dry_run_shows_a_diff_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Claude")
    (tmp_path / "AGENTS.md").write_text(BLOCK)
    before = snapshot(tmp_path)
    result = init(tmp_path, "--dry-run", "--claude", "--agents", "--copilot")
    assert result.returncode == 0, result.stderr
    assert snapshot(tmp_path) == before
    assert not (tmp_path / ".memory").exists()
    assert not (tmp_path / ".github").exists()
    out = result.stdout
    assert out.startswith("would create .memory/\n")
    for category in HACKLM_CATEGORIES:
        assert f"would create .memory/{category.file}\n" in out
    assert "AGENTS.md already up to date\n" in out
    assert "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n" in out
    assert "-# Claude\n\\ No newline at end of file\n+# Claude\n+\n+<!-- memd:start -->\n" in out
    assert f"--- /dev/null\n+++ b/{COPILOT}\n@@ -0,0 +1," in out
    assert "--- a/AGENTS.md" not in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_dry_run_output_applies_as_a_patch(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# Claude\n\nSome text.\n")
    result = init(tmp_path, "--dry-run", "--claude", "--copilot")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    applied = subprocess.run(
        ["git", "apply", "-"], input=result.stdout, cwd=tmp_path, text=True, capture_output=True
    )
    assert applied.returncode == 0, applied.stderr
    assert (tmp_path / "CLAUDE.md").read_text() == "# Claude\n\nSome text.\n\n" + BLOCK
    assert (tmp_path / COPILOT).read_text() == BLOCK


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"# Agents\n{START}\nno end\n", 2),
        (f"{START}\n{END}\n\n{START}\n{END}\n", 4),
        (f"x\ny\n{END}\n{START}\n", 3),
    ],
)
def test_malformed_block_exits_1_naming_the_line_and_keeps_the_file(
    tmp_path: Path, text: str, line: int
) -> None:
    (tmp_path / "AGENTS.md").write_text(text)
    (tmp_path / "CLAUDE.md").write_text("# Claude\n")
    result = init(tmp_path, "--agents", "--claude")
    assert result.returncode == 1
    assert result.stderr.startswith(f"memd: AGENTS.md was left unchanged: line {line} holds ")
    assert result.stderr.endswith(", then rerun memd init.\n")
    assert len(result.stderr.splitlines()) == 1
    assert (tmp_path / "AGENTS.md").read_text() == text
    assert (tmp_path / "CLAUDE.md").read_text() == "# Claude\n\n" + BLOCK  # the others are done
    assert (tmp_path / ".memory" / "security.md").exists()


def test_symlinked_memory_is_refused(tmp_path: Path) -> None:
    workspace, real = tmp_path / "ws", tmp_path / "real-memory"
    workspace.mkdir()
    real.mkdir()
    (workspace / ".memory").symlink_to(real)
    result = init(workspace)
    assert result.returncode == 1
    assert "memd: " in result.stderr
    assert ".memory is a symlink" in result.stderr
    assert list(real.iterdir()) == []
    assert not (workspace / "AGENTS.md").exists()


def test_memory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".memory").write_text("not a directory")
    result = init(tmp_path)
    assert result.returncode == 1
    assert ".memory exists but is not a directory" in result.stderr
    assert (tmp_path / ".memory").read_text() == "not a directory"


def test_symlinked_instruction_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("# Real\n")
    (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "real.md")
    result = init(tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("memd: CLAUDE.md is a symlink")
    assert (tmp_path / "real.md").read_text() == "# Real\n"
    assert (tmp_path / "CLAUDE.md").is_symlink()
    assert not (tmp_path / "AGENTS.md").exists()


def test_missing_workspace_is_an_error(tmp_path: Path) -> None:
    result = init(tmp_path / "nope", cwd=tmp_path)
    assert result.returncode == 1
    assert "is not a directory; pass an existing project root with --workspace." in result.stderr


def test_workspace_defaults_to_the_nearest_git_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    nested = tmp_path / "src" / "pkg"
    nested.mkdir(parents=True)
    result = subprocess.run(
        [sys.executable, "-m", "memd", "init"], cwd=nested, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".memory" / "quirks.md").exists()
    assert (tmp_path / "AGENTS.md").read_text() == BLOCK
    assert not (nested / ".memory").exists()


def test_hard_linked_files_are_refused_and_kept_linked(tmp_path: Path) -> None:
    agents, claude = tmp_path / "AGENTS.md", tmp_path / "CLAUDE.md"
    agents.write_text("# Shared\n")
    os.link(agents, claude)
    (tmp_path / ".github").mkdir()
    (tmp_path / COPILOT).write_text("# Copilot\n")
    for args in (("--agents", "--claude", "--copilot"), ()):
        result = init(tmp_path, *args)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            f"memd: {name} has 2 hard links, which memd init would break by replacing it, so it "
            "was left unchanged; add the memd block by hand, or keep one file and make the "
            "other names symlinks to it."
            for name in ("AGENTS.md", "CLAUDE.md")
        ]
        assert agents.read_text() == "# Shared\n"
        assert agents.stat().st_nlink == claude.stat().st_nlink == 2
        assert agents.stat().st_ino == claude.stat().st_ino
        assert (tmp_path / COPILOT).read_text() == "# Copilot\n\n" + BLOCK  # the others are done
        assert (tmp_path / ".memory" / "security.md").exists()


def test_hard_link_made_after_reading_is_not_broken(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Agents\n")
    plan = memd_init._plan_file(str(tmp_path), str(agents))  # in-process: link between the two
    os.link(agents, tmp_path / "CLAUDE.md")
    with pytest.raises(storage.ChangedOnDisk):
        memd_init._write_plan(plan)
    assert agents.read_text() == "# Agents\n"
    assert agents.stat().st_nlink == 2


def test_marker_examples_in_code_fences_are_kept(tmp_path: Path) -> None:
    text = f"# Agents\n\nPaste this:\n\n~~~markdown\n{START}\nyour notes\n{END}\n~~~\n"
    (tmp_path / "AGENTS.md").write_text(text)
    result = init(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "updated AGENTS.md (memd block added)" in result.stdout
    assert (tmp_path / "AGENTS.md").read_text() == text + "\n" + BLOCK
    assert init(tmp_path).stdout.splitlines()[-1] == "AGENTS.md already up to date"


def test_unclosed_code_fence_at_the_end_is_refused(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# Agents\n\n```sh\nmake test\n")
    result = init(tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "memd: AGENTS.md was left unchanged: line 3 opens a ``` code fence that is never closed, "
        "so a memd block added at the end of the file would be code inside it; close the fence "
        "with a ``` line, then rerun memd init.\n"
    )
    assert (tmp_path / "AGENTS.md").read_text() == "# Agents\n\n```sh\nmake test\n"


def test_claude_md_linked_to_agents_md_is_updated_through_it(tmp_path: Path) -> None:
    agents, claude = tmp_path / "AGENTS.md", tmp_path / "CLAUDE.md"
    agents.write_text("# Agents\n")
    claude.symlink_to("AGENTS.md")
    dry = init(tmp_path, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "CLAUDE.md is a link to AGENTS.md; would be updated through it\n" in dry.stdout
    assert "--- a/CLAUDE.md" not in dry.stdout
    first = init(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    assert first.stdout.splitlines()[-2:] == [
        "updated AGENTS.md (memd block added)",
        "CLAUDE.md is a link to AGENTS.md; updated through it",
    ]
    assert claude.is_symlink()
    assert os.readlink(claude) == "AGENTS.md"
    assert agents.read_text() == "# Agents\n\n" + BLOCK
    again = init(tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-2:] == [
        "AGENTS.md already up to date",
        "CLAUDE.md is a link to AGENTS.md; already up to date through it",
    ]


def test_named_link_is_skipped_only_when_its_target_is_updated_too(tmp_path: Path) -> None:
    agents, claude = tmp_path / "AGENTS.md", tmp_path / "CLAUDE.md"
    agents.write_text("# Agents\n")
    claude.symlink_to(agents)
    alone = init(tmp_path, "--claude")
    assert alone.returncode == 1
    assert alone.stderr.startswith("memd: CLAUDE.md is a symlink, which memd init does not")
    assert agents.read_text() == "# Agents\n"
    both = init(tmp_path, "--claude", "--agents")
    assert both.returncode == 0, both.stderr
    assert both.stdout.splitlines()[-3:] == [
        "updated AGENTS.md (memd block added)",
        "CLAUDE.md is a link to AGENTS.md; updated through it",
        ".claude/settings.json already up to date",  # hooked by the first run
    ]
    assert claude.is_symlink()
    assert agents.read_text() == "# Agents\n\n" + BLOCK


def test_link_to_a_file_outside_the_workspace_is_refused_even_if_updated(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "shared.md"
    workspace.mkdir()
    outside.write_text("# Shared\n")
    (workspace / "CLAUDE.md").symlink_to(outside)
    result = init(workspace, "--claude", "--file", str(outside))
    assert result.returncode == 1
    assert result.stderr.startswith("memd: CLAUDE.md is a symlink, which memd init does not")
    assert outside.read_text() == "# Shared\n\n" + BLOCK  # the file named by --file is done
    assert (workspace / "CLAUDE.md").is_symlink()


def test_link_whose_target_fails_is_not_reported_as_updated(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text(f"{START}\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    result = init(tmp_path)
    assert result.returncode == 1
    assert "CLAUDE.md" not in result.stdout + result.stderr
    assert result.stderr.startswith("memd: AGENTS.md was left unchanged: line 1 holds ")
    assert (tmp_path / "AGENTS.md").read_text() == f"{START}\n"


def test_old_mac_line_endings_get_no_doubled_ending(tmp_path: Path) -> None:
    agents = tmp_path / "AGENTS.md"
    agents.write_bytes(b"# Agents\rBe nice.\r")
    assert init(tmp_path).returncode == 0
    assert agents.read_bytes() == b"# Agents\rBe nice.\r\r" + render_block("\r").encode()
    assert init(tmp_path).stdout.splitlines()[-1] == "AGENTS.md already up to date"


# ---------------------------------------------------------------------------- .gitignore


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, f"{gitignore.COMMENT}\n.memory/.lock\n"),
        ("node_modules/", f"node_modules/\n{gitignore.COMMENT}\n.memory/.lock\n"),
        ("a\r\nb\r\n", f"a\r\nb\r\n{gitignore.COMMENT}\r\n.memory/.lock\r\n"),
        ("dist/\n/.memory/.lock\n", "dist/\n/.memory/.lock\n"),  # already ignored: kept
        (" .memory/.lock \n", " .memory/.lock \n"),
    ],
)
def test_gitignore_gets_the_lock_once_and_keeps_the_rest(
    tmp_path: Path, before: str | None, after: str
) -> None:
    ignore = tmp_path / ".gitignore"
    if before is not None:
        ignore.write_bytes(before.encode())
        ignore.chmod(0o600)
    assert init(tmp_path).returncode == 0
    assert ignore.read_bytes() == after.encode()
    assert stat.S_IMODE(ignore.stat().st_mode) == (0o644 if before is None else 0o600)
    again = init(tmp_path)
    assert ".gitignore already up to date" in again.stdout.splitlines()
    assert ignore.read_bytes() == after.encode()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_ignores_the_lock_after_init(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("*.log\n")
    assert init(tmp_path).returncode == 0
    (tmp_path / ".memory" / ".lock").write_text('{"pid":1,"ts":1}')
    ignored = subprocess.run(
        ["git", "check-ignore", ".memory/.lock", ".memory/decisions.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ignored.stdout.splitlines() == [".memory/.lock"]


def test_a_symlinked_gitignore_is_refused_and_the_rest_done(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("x\n")
    (tmp_path / ".gitignore").symlink_to(target)
    result = init(tmp_path)
    assert result.returncode == 1
    assert ".gitignore is a symlink" in result.stderr
    assert "replace the link with a file" in result.stderr
    assert target.read_text() == "x\n"
    assert (tmp_path / "AGENTS.md").exists()


def test_dry_run_shows_the_gitignore_line(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("dist/\n")
    result = init(tmp_path, "--dry-run")
    assert "--- a/.gitignore\n+++ b/.gitignore\n" in result.stdout
    assert "+.memory/.lock\n" in result.stdout
    assert (tmp_path / ".gitignore").read_text() == "dist/\n"


def test_without_workspace_in_a_bare_directory_it_names_the_directory_first(
    short_tmp: Path,
) -> None:
    bare = short_tmp / "bare"
    bare.mkdir()
    skip_inside_a_project(bare)
    result = subprocess.run(
        [sys.executable, "-m", "memd", "init"], cwd=bare, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"memd: workspace {bare} (the current directory, with no .memory/ or .git in it or above "
        "it); pass --workspace DIR to use another.\n"
    )
    assert result.stdout.splitlines()[0] == "created .memory/"
    assert (bare / ".memory").is_dir()
    again = subprocess.run(
        [sys.executable, "-m", "memd", "init"], cwd=bare, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0 and again.stderr == ""  # found by its .memory/ now


def test_json_reports_each_file_and_its_change(tmp_path: Path) -> None:
    import json

    (tmp_path / "AGENTS.md").write_text("# Agents\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    dry = init(tmp_path, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)  # one object, no progress lines
    assert (plan["workspace"], plan["dry_run"], plan["errors"]) == (str(tmp_path), True, [])
    changes = {f["path"]: (f["change"], f["link_to"]) for f in plan["files"]}
    assert changes == {
        ".memory/": ("create", None),
        **{f".memory/{c.file}": ("create", None) for c in HACKLM_CATEGORIES},
        ".gitignore": ("create", None),
        "AGENTS.md": ("update", None),
        "CLAUDE.md": ("update", "AGENTS.md"),
    }
    assert "--- a/AGENTS.md\n+++ b/AGENTS.md\n" in plan["diff"]
    assert not (tmp_path / ".memory").exists()

    done = json.loads(init(tmp_path, "--json").stdout)
    assert done["dry_run"] is False
    assert {f["path"]: f["change"] for f in done["files"]} == {
        path: change for path, (change, _) in changes.items()
    }
    assert done["diff"] == ""
    again = json.loads(init(tmp_path, "--json").stdout)
    assert {f["path"]: f["change"] for f in again["files"]} == {
        ".gitignore": "none",
        "AGENTS.md": "none",
        "CLAUDE.md": "none",
    }


def test_json_errors_are_in_the_report_and_on_stderr(tmp_path: Path) -> None:
    import json

    result = init(tmp_path / "missing", "--json", cwd=tmp_path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert len(report["errors"]) == 1 and "is not a directory" in report["errors"][0]
    assert result.stderr == f"memd: {report['errors'][0]}\n"


def test_init_refuses_the_options_it_does_not_take(tmp_path: Path) -> None:
    for flag in ("--socket", "--no-autostart"):
        given = [flag, "/tmp/x.sock"] if flag == "--socket" else [flag]
        result = init(tmp_path, *given)
        assert result.returncode == 2
        assert result.stderr.startswith("usage: memd init ")
        assert f"unrecognized arguments: {flag}" in result.stderr
    assert not (tmp_path / ".memory").exists()


def test_claude_gets_the_prompt_and_file_hooks_once_beside_its_own(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": theirs}, indent=4) + "\n")
    planned = init(tmp_path, "--claude", "--dry-run")
    assert '+        "SessionEnd": [' in planned.stdout  # the diff shows the capture hooks
    assert '+                        "command": "command -v memd' in planned.stdout
    first = init(tmp_path, "--claude")
    assert first.returncode == 0, first.stderr
    assert "updated .claude/settings.json (memd's Claude Code hooks added)" in first.stdout
    text = settings.read_text()
    assert text.startswith('{\n    "model": "opus"')  # their indentation kept
    hooks = json.loads(text)["hooks"]
    assert hooks["PreToolUse"][0] == theirs["PreToolUse"][0]
    ours = {"type": "command", "command": HOOK_COMMAND}
    assert hooks["PreToolUse"][1] == {"matcher": "Read|Edit|MultiEdit|Write", "hooks": [ours]}
    assert hooks["UserPromptSubmit"] == [{"hooks": [ours]}]
    capture = {"type": "command", "command": CAPTURE_COMMAND, "timeout": CAPTURE_TIMEOUT}
    assert hooks["SessionEnd"] == [{"hooks": [capture]}]
    assert hooks["PreCompact"] == [{"matcher": "auto|manual", "hooks": [capture]}]
    again = init(tmp_path, "--claude")
    assert ".claude/settings.json already up to date" in again.stdout
    assert settings.read_text() == text


def test_claude_settings_that_are_not_json_are_left_alone(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": [}\n')
    result = init(tmp_path, "--claude")
    assert result.returncode == 1
    assert result.stderr.startswith("memd: .claude/settings.json is not valid JSON (")
    assert settings.read_text() == '{"hooks": [}\n'
    assert (tmp_path / "CLAUDE.md").read_text() == BLOCK  # the rest is still done
