"""Which workspace the CLI names, and when: quiet for a workspace found by its `.memory/`, one
line otherwise (found by `.git`, the current directory for want of either, or `.memory/`
created by the call), and with `--workspace` only when the call created `.memory/`."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli.render import render_stats, render_status
from memd.cli.where import NO_CURRENT_DIRECTORY, Chosen, choose, note, origin_phrase, reported
from memd_client import protocol as p

OTHER = "pass --workspace DIR to use another."


def test_a_workspace_found_by_its_memory_dir_is_not_named() -> None:
    assert note(Chosen("/p", "memory")) is None
    assert note(Chosen("/p", "memory"), "/real/p") is None


def test_a_workspace_found_by_git_is_named_with_and_without_a_new_memory_dir() -> None:
    assert note(Chosen("/repo", "git")) == (
        f"workspace /repo (found by its .git; no .memory/ yet); {OTHER}"
    )
    assert note(Chosen("/repo", "git"), "/repo", created=True) == (
        f"workspace /repo (found by its .git; created /repo/.memory/); {OTHER}"
    )


def test_the_current_directory_fallback_is_named_and_says_why() -> None:
    why = "the current directory, with no .memory/ or .git in it or above it"
    assert note(Chosen("/tmp/x", "start")) == f"workspace /tmp/x ({why}); {OTHER}"
    assert note(Chosen("/tmp/x", "start"), "/tmp/x", True) == (
        f"workspace /tmp/x ({why}; created /tmp/x/.memory/); {OTHER}"
    )


def test_an_explicit_workspace_is_named_only_when_memory_was_created() -> None:
    assert note(Chosen("/w", "--workspace")) is None
    assert note(Chosen("/w", "--workspace"), "/w", created=True) == (
        "workspace /w (from --workspace; created /w/.memory/)."
    )


def test_the_daemons_real_path_is_named_when_it_gives_one() -> None:
    line = note(Chosen("/link/x", "start"), "/real/x", created=True)
    assert (
        line is not None and line.startswith("workspace /real/x (") and "/real/x/.memory/" in line
    )
    assert note(Chosen("/x", "memory"), "/x", created=True) == (
        f"workspace /x (created /x/.memory/); {OTHER}"
    )


def test_reported_reads_new_fields_and_tolerates_results_without_them() -> None:
    stored = p.StoreResult(
        action="stored",
        category="Quirk",
        file="quirks.md",
        line=5,
        slug="s",
        content="c",
        similarity=0.0,
        matched=None,
        message="m",
        workspace="/r",
        created_memory_dir=True,
    )
    assert reported(stored) == ("/r", True)
    assert reported(p.QueryResult(results=[], total=0, workspace="/q")) == ("/q", False)
    assert reported(p.QueryResult(results=[], total=0)) == ("", False)  # an older daemon
    assert reported(object()) == ("", False)


def test_choose_prefers_the_flag_then_the_nearest_root(
    short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (short_tmp / "repo" / ".git").mkdir(parents=True)
    (short_tmp / "repo" / "src").mkdir()
    monkeypatch.chdir(short_tmp / "repo" / "src")
    assert choose(None) == Chosen(str(short_tmp / "repo"), "git")
    assert choose("..") == Chosen(str(short_tmp / "repo"), "--workspace")


def test_stats_and_status_text_name_the_workspace_and_how_it_was_found() -> None:
    chosen = Chosen("/repo", "git")
    stats = p.StatsResult(workspace="/repo", categories=[], total=0, loaded_at="")
    assert render_stats(stats, origin_phrase(chosen)).splitlines()[0] == (
        "Workspace /repo (found by its .git; pass --workspace DIR to use another)"
    )
    assert render_stats(stats, origin_phrase(Chosen("/repo", "memory"))).splitlines()[0] == (
        "Workspace /repo (found by its .memory/)"
    )
    status = p.StatusResult(version="0", protocol_version=1, pid=1, uptime_s=0, workspaces=[])
    assert render_status(status, "/w", origin_phrase(Chosen("/w", "--workspace"))).endswith(
        "\n  current workspace: /w (from --workspace)"
    )


@pytest.mark.parametrize("verb", [["query", "x"], ["store", "x"], ["init"], ["stats"], ["watch"]])
def test_a_deleted_current_directory_is_a_sentence_not_a_traceback(
    short_tmp: Path, verb: list[str]
) -> None:
    gone = short_tmp / "gone"
    gone.mkdir()
    memd = shlex.join([sys.executable, "-m", "memd", "--no-autostart", *verb])
    memd = memd.replace("--no-autostart init", "init")  # init never talks to a daemon
    done = subprocess.run(
        ["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec {memd}'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == NO_CURRENT_DIRECTORY + "\n"
    assert done.stdout == ""


def test_the_prompt_hook_in_a_deleted_directory_still_exits_0(short_tmp: Path) -> None:
    gone = short_tmp / "gone"
    gone.mkdir()
    memd = shlex.join([sys.executable, "-m", "memd", "context", "--hook", "claude"])
    done = subprocess.run(
        ["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec {memd}'],
        input='{"prompt": "deploy", "hook_event_name": "UserPromptSubmit"}',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "memd: the current directory no longer exists; no memory added.\n"


def test_status_says_what_semantic_search_is_doing() -> None:
    from memd_client import protocol as proto

    def line(info: proto.SemanticInfo | None) -> str:
        status = proto.StatusResult(
            version="0", protocol_version=1, pid=1, uptime_s=0.0, workspaces=[], semantic=info
        )
        return render_status(status)

    ready = proto.SemanticInfo(state="ready", model="all-MiniLM-L6-v2-int8", vectors=12)
    assert "semantic search: ready (all-MiniLM-L6-v2-int8, 12 vectors)" in line(ready)
    off = proto.SemanticInfo(state="off", reason="semantic = false in the settings")
    assert "semantic search: off (semantic = false in the settings)" in line(off)
    assert "semantic search" not in line(None)  # an older daemon says nothing


def test_stats_say_how_a_query_ranks_this_workspace_now() -> None:
    def mode(info: p.SemanticInfo | None, ready: int = 0, entries: int = 0) -> str:
        stats = p.StatsResult(
            workspace="/repo",
            categories=[],
            total=entries,
            loaded_at="",
            semantic_vectors_ready=ready,
            semantic_entries=entries,
            semantic=info,
        )
        return render_stats(stats).splitlines()[-1]

    assert mode(None) == f"  {'Total':<28} {0:>4}"  # an older daemon says nothing
    off = p.SemanticInfo(state="off", reason="semantic = false in the settings")
    assert (
        mode(off)
        == "  Search: by words; semantic search is off (semantic = false in the settings)."
    )
    assert mode(p.SemanticInfo(state="unloaded")) == (
        "  Search: by words; the semantic model loads on the first query."
    )
    ready = p.SemanticInfo(state="ready", model="m", vectors=9)
    assert mode(ready, 3, 4) == "  Search: by words until every entry is embedded (3 of 4 done)."
    assert mode(ready, 4, 4) == "  Search: by words and meaning (4 of 4 entries embedded)."
