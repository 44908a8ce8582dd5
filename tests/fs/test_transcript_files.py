"""Finding a workspace's session transcripts: both agents' homes, built in a temporary
directory (never the user's own), counted by the directory each session started in."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from memd.fs import transcript_files
from memd.fs.transcript_files import (
    CLAUDE_NAME_MAX,
    HEAD_BYTES,
    codex_home,
    encode_claude,
    find_transcripts,
    within,
)

ROOT = "/home/dev/shop"
NOW = 1_800_000_000.0
DAY = 86400.0


@pytest.fixture
def homes(tmp_path: Path) -> dict[str, str]:
    """An environment whose user home, Claude Code and Codex homes are all under tmp."""
    (tmp_path / "claude").mkdir()
    (tmp_path / "codex").mkdir()
    return {
        "HOME": str(tmp_path / "user"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
    }


def write(path: Path, lines: list[dict[str, Any]], age_days: float = 1.0) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (NOW - age_days * DAY, NOW - age_days * DAY))
    return str(path)


def claude_session(env: dict[str, str], cwd: str, name: str, age_days: float = 1.0) -> str:
    folder = Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / encode_claude(cwd)
    lines: list[dict[str, Any]] = [
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": name,
            "cwd": cwd,
            "timestamp": "2026-11-20T10:00:00Z",
            "message": {"role": "user", "content": "hi"},
        },
    ]
    return write(folder / f"{name}.jsonl", lines, age_days)


def codex_session(
    home: str, cwd: str, name: str, age_days: float = 1.0, instructions: str = ""
) -> str:
    meta: dict[str, Any] = {
        "id": name,
        "cwd": cwd,
        "originator": "codex_cli_rs",
        "cli_version": "0.63.0",
    }
    if instructions:
        meta["base_instructions"] = {"text": instructions}
    lines = [
        {"timestamp": "2026-11-20T10:00:00Z", "type": "session_meta", "payload": meta},
        {
            "timestamp": "2026-11-20T10:00:01Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "hi"},
        },
    ]
    path = (
        Path(home) / "sessions" / "2026" / "11" / "20" / f"rollout-2026-11-20T10-00-00-{name}.jsonl"
    )
    return write(path, lines, age_days)


def found(env: dict[str, str], root: str = ROOT, max_age_days: int = 90) -> list[tuple[str, str]]:
    return [
        (f.agent, os.path.basename(f.path))
        for f in find_transcripts(root, env, max_age_days=max_age_days, now=NOW)
    ]


def test_both_agents_sessions_of_the_workspace_are_found_newest_first(
    homes: dict[str, str],
) -> None:
    claude_session(homes, ROOT, "c-new", age_days=1)
    claude_session(homes, ROOT + "/api", "c-sub", age_days=3)
    codex_session(homes["CODEX_HOME"], ROOT, "x-new", age_days=2)
    codex_session(homes["CODEX_HOME"], ROOT + "/web", "x-sub", age_days=4)
    codex_session(homes["CODEX_HOME"], "/home/dev/other", "x-other")
    claude_session(homes, "/home/dev/other", "c-other")
    assert found(homes) == [
        ("claude", "c-new.jsonl"),
        ("codex", "rollout-2026-11-20T10-00-00-x-new.jsonl"),
        ("claude", "c-sub.jsonl"),
        ("codex", "rollout-2026-11-20T10-00-00-x-sub.jsonl"),
    ]


def test_files_older_than_the_age_limit_are_left_out(homes: dict[str, str]) -> None:
    claude_session(homes, ROOT, "c-old", age_days=40)
    codex_session(homes["CODEX_HOME"], ROOT, "x-old", age_days=40)
    claude_session(homes, ROOT, "c-recent", age_days=10)
    assert found(homes, max_age_days=30) == [("claude", "c-recent.jsonl")]


def test_a_sibling_whose_name_extends_the_workspaces_does_not_count(
    homes: dict[str, str],
) -> None:
    root = "/a/b"
    claude_session(homes, "/a/b-c", "c-sibling")  # folder -a-b-c starts like -a-b-
    claude_session(homes, "/a/b_c", "c-underscore")  # folder -a-b-c too
    codex_session(homes["CODEX_HOME"], "/a/b-c", "x-sibling")
    codex_session(homes["CODEX_HOME"], "/a/bc", "x-longer")
    claude_session(homes, "/a/b/c", "c-child")  # folder -a-b-c as well: its cwd says
    assert found(homes, root) == [("claude", "c-child.jsonl")]


def test_missing_homes_find_nothing(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "nobody"), "CLAUDE_CONFIG_DIR": str(tmp_path / "none")}
    assert found(env) == []


def test_a_codex_home_that_is_not_a_directory_means_no_codex_sessions(
    homes: dict[str, str], tmp_path: Path
) -> None:
    codex_session(str(Path(homes["HOME"]) / ".codex"), ROOT, "x-default")
    assert codex_home({"HOME": homes["HOME"]}) == str(Path(homes["HOME"]) / ".codex")
    assert found({**homes, "CODEX_HOME": ""}) == [
        ("codex", "rollout-2026-11-20T10-00-00-x-default.jsonl")
    ]
    not_a_folder = tmp_path / "codex-file"
    not_a_folder.write_text("")
    assert found({**homes, "CODEX_HOME": str(not_a_folder)}) == []
    assert found({**homes, "CODEX_HOME": str(tmp_path / "missing")}) == []


def test_archived_codex_sessions_are_not_read(homes: dict[str, str]) -> None:
    archived = (
        Path(homes["CODEX_HOME"]) / "archived_sessions" / "rollout-2026-11-01T10-00-00-a.jsonl"
    )
    write(archived, [{"type": "session_meta", "payload": {"id": "a", "cwd": ROOT}}])
    assert found(homes) == []


def test_an_old_codex_file_is_placed_by_its_environment_context(homes: dict[str, str]) -> None:
    path = Path(homes["CODEX_HOME"]) / "sessions" / "2025" / "08" / "01" / "rollout-old.jsonl"
    write(
        path,
        [
            {"id": "old", "timestamp": "2025-08-01T10:00:00Z", "instructions": None},
            {"record_type": "state"},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": f"<environment_context><cwd>{ROOT}/lib</cwd></environment_context>",
                    }
                ],
            },
        ],
    )
    assert found(homes) == [("codex", "rollout-old.jsonl")]


def test_a_session_meta_line_longer_than_the_head_is_still_read(homes: dict[str, str]) -> None:
    codex_session(homes["CODEX_HOME"], ROOT, "x-long", instructions="x" * (2 * HEAD_BYTES))
    assert found(homes) == [("codex", "rollout-2026-11-20T10-00-00-x-long.jsonl")]


def test_a_long_workspace_path_is_matched_by_its_cut_folder_name(
    homes: dict[str, str],
) -> None:
    root = "/home/dev/" + "/".join(["a-very-long-folder-name"] * 10)
    name = encode_claude(root)
    assert len(name) > CLAUDE_NAME_MAX
    for cwd, session, hashed in [(root, "c-long", "-1x2y3z"), (root + "/sub", "c-sub", "-q9")]:
        folder = Path(homes["CLAUDE_CONFIG_DIR"]) / "projects" / (name[:CLAUDE_NAME_MAX] + hashed)
        write(folder / f"{session}.jsonl", [{"type": "user", "sessionId": session, "cwd": cwd}])
    assert sorted(found(homes, root)) == [("claude", "c-long.jsonl"), ("claude", "c-sub.jsonl")]


def test_paths_compare_in_one_unicode_form(homes: dict[str, str]) -> None:
    root = unicodedata.normalize("NFC", "/home/dev/café")
    decomposed = unicodedata.normalize("NFD", root)
    assert encode_claude(decomposed) == encode_claude(root) == "-home-dev-caf-"
    assert within(decomposed + "/x", root)
    claude_session(homes, decomposed, "c-nfd")
    codex_session(homes["CODEX_HOME"], decomposed, "x-nfd")
    assert sorted(found(homes, root)) == [
        ("claude", "c-nfd.jsonl"),
        ("codex", "rollout-2026-11-20T10-00-00-x-nfd.jsonl"),
    ]


def test_heads_are_read_once_and_an_undecided_one_again_when_it_grows(
    homes: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = transcript_files._head_cwd

    def counted(path: str, cwd_of: Any) -> str | None:
        reads.append(os.path.basename(path))
        return real(path, cwd_of)

    monkeypatch.setattr(transcript_files, "_head_cwd", counted)
    codex_session(homes["CODEX_HOME"], ROOT, "x-known")
    starting = Path(homes["CODEX_HOME"]) / "sessions" / "2026" / "11" / "21" / "rollout-new.jsonl"
    write(starting, [])  # created, nothing written yet
    assert found(homes) == [("codex", "rollout-2026-11-20T10-00-00-x-known.jsonl")]
    assert found(homes) == [("codex", "rollout-2026-11-20T10-00-00-x-known.jsonl")]
    assert sorted(reads) == ["rollout-2026-11-20T10-00-00-x-known.jsonl", "rollout-new.jsonl"]
    write(
        starting, [{"timestamp": "t", "type": "session_meta", "payload": {"id": "n", "cwd": ROOT}}]
    )
    assert ("codex", "rollout-new.jsonl") in found(homes)
    assert reads.count("rollout-new.jsonl") == 2
