"""The "chat" source through a real daemon: Claude Code's past sessions of the workspace are
searched when a query names "chat" (client library, CLI, MCP), followed as they grow, their
noise and secrets never found, their turns read back with `get`, offered by `context` only when
they score well, and never read when `chat = false`, too old, or of another directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd_client import Client, protocol as p
from memd_client.errors import MemdError
from tests.claude_sessions import Session, session_path
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_cli import memd
from tests.e2e.test_mcp import bridge, call
from tests.polling_sync import wait_until

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _home() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"])


def _write_session(workspace: Path) -> tuple[Session, Path]:
    talk = Session(workspace)
    path = session_path(_home(), workspace, talk.session)
    path.write_text(
        talk.summary("summary about the ocelot")
        + talk.command("/clear")
        + talk.meta("Caveat: meta text about the gazelle")
        + talk.user("Why does the walrus importer drop rows after midnight?")
        + talk.tool_use("grep -rn walrus src")
        + talk.tool_result("pelican output of the tool")
        + talk.assistant(
            "The walrus importer converts timestamps to local time before the cutoff check, "
            "so rows after midnight UTC fall into the next day."
        )
        + "{this line is broken\n"
        + talk.user(f"Use the token {SECRET} for the staging registry", blocks=True)
        + talk.assistant("Noted; I will read the registry token from the environment instead.")
        + talk.user("Now about the heron dashboard colours")
        + talk.assistant("The heron dashboard uses the brand palette.")
        + talk.user("half written")[:30]  # an unterminated last line
    )
    return talk, path


def test_a_past_session_is_found_by_rpc_cli_and_get(daemon: DaemonProcess, workspace: Path) -> None:
    talk, path = _write_session(workspace)
    with Client(daemon.socket_path, workspace=workspace) as client:
        found = client.query("walrus importer midnight", sources=["chat"]).results
        assert found, "the chat turn was not found"
        best = found[0]
        assert (best.source, best.path, best.session, best.agent) == (
            "chat",
            str(path),
            talk.session,
            "claude",
        )
        assert best.lines == "1-2" and best.at.startswith("2026-11-20T10:")
        assert best.category == "" and "rows after midnight" in best.content
        # Not without naming it: a past conversation is not curated memory.
        assert client.query("walrus importer midnight").results == []
        for noise in ("ocelot", "gazelle", "pelican", "clear", "quokka", "broken"):
            assert client.query(noise, sources=["chat"]).results == [], noise
        # A secret is masked, and its value is not findable.
        token = client.query("staging registry token", sources=["chat"]).results[0]
        assert SECRET not in token.content and "[secret]" in token.content
        assert client.query(SECRET, sources=["chat"]).results == []
        # get: the hit's turns and `around` more either side, masked.
        got = client.get(file=best.path, lines="3-3", around=1)
        assert got.entries == []
        assert "turn 2" in got.text and "turn 3" in got.text and "turn 4" in got.text
        assert "turn 1" not in got.text and "turn 5" not in got.text
        assert SECRET not in got.text and "[secret]" in got.text
        with pytest.raises(MemdError):
            client.get(file=str(workspace / "elsewhere.jsonl"), lines="1-1")
        with pytest.raises(MemdError):
            client.query("walrus", sources=["chat"], category="Quirk")
        stats = client.stats()
        assert (stats.chat_sessions, stats.chat_chunks) == (1, 3)
    shown = memd(
        "query", "--source", "chat", "--json", "heron", "dashboard",
        cwd=workspace, socket=daemon.socket_path,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    hits = json.loads(shown.stdout)["results"]
    assert hits[0]["source"] == "chat" and hits[0]["session"] == talk.session
    plain = memd("query", "-s", "chat", "heron", cwd=workspace, socket=daemon.socket_path)
    assert f"session {talk.session}" in plain.stdout and "turns 5-6" in plain.stdout
    turns = memd(
        "get", "--file", str(path), "--lines", "5-6", "--around", "0",
        cwd=workspace, socket=daemon.socket_path,
    )  # fmt: skip
    assert turns.returncode == 0, turns.stderr
    assert turns.stdout.startswith("user (turn 5") and "turn 4" not in turns.stdout
    counts = memd("stats", cwd=workspace, socket=daemon.socket_path)
    assert "1 past session(s), 3 chunks" in counts.stdout


def test_a_growing_session_is_followed(daemon: DaemonProcess, workspace: Path) -> None:
    talk = Session(workspace)
    path = session_path(_home(), workspace, talk.session)
    path.write_text(talk.user("How do we rotate the albatross keys?"))
    with Client(daemon.socket_path, workspace=workspace) as client:
        assert client.query("albatross keys", sources=["chat"]).results
        answer = talk.assistant("Rotate the albatross keys with the kestrel script weekly.")
        with path.open("a") as handle:
            handle.write(answer[:25])  # half a line: not read yet
        assert client.query("kestrel script", sources=["chat"]).results == []
        with path.open("a") as handle:
            handle.write(answer[25:] + talk.user("And the puffin certificates?"))

        def grown() -> bool:
            kestrel = client.query("kestrel script", sources=["chat"]).results
            puffin = client.query("puffin certificates", sources=["chat"]).results
            return bool(kestrel and puffin) and kestrel[0].lines == "1-2"

        wait_until(grown)


def test_context_adds_a_past_session_only_when_it_scores_well(
    daemon: DaemonProcess, workspace: Path
) -> None:
    _write_session(workspace)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(category="Instruction", content="Run the linter before committing.")
        prompt = "walrus importer drops rows after midnight"

        def chats_of(text: str) -> list[p.ContextEntry]:
            return [e for e in client.context(text=text).entries if e.layer == "chat"]

        wait_until(lambda: chats_of(prompt))  # the first look is taken in the background
        related = client.context(text=prompt)
        chats = chats_of(prompt)
        assert len(chats) == 1
        assert chats[0].source == "chat" and chats[0].lines == "1-2" and chats[0].session
        assert "From past sessions" in related.markdown
        assert not chats_of("configure the printer queue for invoices")


def test_old_sessions_and_other_directories_are_never_shown(
    daemon: DaemonProcess, workspace: Path, short_tmp: Path
) -> None:
    old = Session(workspace)
    old_path = session_path(_home(), workspace, old.session)
    old_path.write_text(old.user("The lemur migration plan for the archive"))
    os.utime(old_path, (1_000_000, 1_000_000))
    other = short_tmp / "other"
    other.mkdir()
    theirs = Session(other)
    session_path(_home(), other, theirs.session).write_text(theirs.user("lemur plans elsewhere"))
    with Client(daemon.socket_path, workspace=workspace) as client:
        assert client.query("lemur", sources=["chat"]).results == []
        assert client.stats().chat_sessions == 0


def test_chat_off_reads_nothing(short_tmp: Path, workspace: Path) -> None:
    _write_session(workspace)
    config = short_tmp / "memd.toml"
    config.write_text("semantic = false\nchat = false\n")
    process = start_daemon(short_tmp, "--config", str(config), name="off.sock")
    try:
        with Client(process.socket_path, workspace=workspace) as client:
            assert client.query("walrus importer", sources=["chat"]).results == []
            assert client.stats().chat_sessions == 0
            client.query("walrus", sources=["chat"])  # the look (of nothing) is taken
            related = client.context(text="walrus importer drops rows after midnight")
            assert not [entry for entry in related.entries if entry.layer == "chat"]
    finally:
        assert process.stop() == 0, process.stderr()


async def test_query_memory_finds_a_past_session_over_mcp(
    daemon: DaemonProcess, short_tmp: Path, workspace: Path
) -> None:
    talk, path = _write_session(workspace)
    env = {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        "CLAUDE_CONFIG_DIR": os.environ["CLAUDE_CONFIG_DIR"],
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }
    args = ("--socket", str(daemon.socket_path), "--workspace", str(workspace))
    async with bridge(short_tmp, env, *args) as c:
        shown, found = await call(c, "queryMemory", query="walrus importer", sources=["chat"])
        hit = found["results"][0]
        assert (hit["source"], hit["session"], hit["path"]) == ("chat", talk.session, str(path))
        assert f"past session {talk.session}" in shown
        turns, _ = await call(c, "getMemory", file=hit["path"], lines=hit["lines"], around=0)
        assert turns.startswith("user (turn 1") and "assistant (turn 2" in turns
