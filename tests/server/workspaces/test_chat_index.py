"""The "chat" source's index (`memd.server.workspaces.chat_index`): read from a cursor, grown by
appends, read again from the start when a file shrinks or is replaced, bounded."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from memd.core.search import ranking
from memd.core.search.shelves import Shelf
from memd.fs.transcript_files import find_transcripts
from memd.server.workspaces import chat_index
from memd.server.workspaces.chat_index import (
    ChatLook,
    Cursor,
    WorkspaceChats,
    look_at,
    read_objects,
    turns_between,
)
from tests.claude_sessions import Session, session_path
from tests.polling import until

ASKED = (True, 90)


def _look(home: Path, root: Path, previous: ChatLook = chat_index.NOTHING) -> ChatLook:
    return look_at(os.path.realpath(root), {"CLAUDE_CONFIG_DIR": str(home)}, ASKED, previous)


def _texts(look: ChatLook) -> list[str]:
    return [part.text for session in look.sessions.values() for part in session.chunks]


def _found(look: ChatLook, query: str) -> list[str]:
    indexes = [(Shelf("chat", path), session.index) for path, session in look.sessions.items()]
    result = ranking.search(indexes, query, limit=10)
    return [hit.entry.content for hit in result.hits]


def test_a_session_is_read_into_chunks_and_found(tmp_path: Path) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(
        talk.user("why does the flaky walrus test fail")
        + talk.tool_use("pytest -k walrus")
        + talk.tool_result("stdout of pelican tool")
        + talk.assistant("The walrus test races the watcher; wait on the event.")
        + talk.meta("meta caveat gazelle")
        + talk.command("/clear")
        + talk.summary("summary of the ocelot")
        + "{broken line\n"
    )
    look = _look(home, root)
    (session,) = look.sessions.values()
    assert session.session == talk.session
    assert session.turns == 2
    assert _texts(look) == [
        "user: why does the flaky walrus test fail\n"
        "assistant: The walrus test races the watcher; wait on the event."
    ]
    assert _found(look, "walrus")
    for noise in ("pelican", "gazelle", "ocelot", "quokka", "clear"):
        assert not _found(look, noise), noise
    assert look.skipped == 1


def test_an_append_is_read_from_the_cursor_and_a_half_line_waits(tmp_path: Path) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(talk.user("first question about herons"))
    first = _look(home, root)
    (before,) = first.sessions.values()
    answer = talk.assistant("Herons nest near water.")
    with path.open("a") as handle:
        handle.write(answer[:20])  # a half-written line
    second = _look(home, root, first)
    (during,) = second.sessions.values()
    assert during.cursor == before.cursor
    assert _texts(second) == ["user: first question about herons"]
    with path.open("a") as handle:
        handle.write(answer[20:] + talk.user("and cormorants?"))
    third = _look(home, root, second)
    assert _texts(third) == [
        "user: first question about herons\nassistant: Herons nest near water.",
        "user: and cormorants?",
    ]
    assert _found(third, "cormorants") and _found(third, "nest")
    assert _texts(first) == ["user: first question about herons"]  # a look never changes


def test_a_shrunk_or_replaced_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(talk.user("about the albatross") + talk.assistant("It glides."))
    first = _look(home, root)
    path.write_text(talk.user("about the puffin"))  # shorter: rewritten
    second = _look(home, root, first)
    assert _texts(second) == ["user: about the puffin"]
    replacement = path.with_suffix(".new")
    replacement.write_text(talk.user("about the kestrel, a longer question than before"))
    os.replace(replacement, path)  # another inode under the same name
    third = _look(home, root, second)
    assert _texts(third) == ["user: about the kestrel, a longer question than before"]
    assert not _found(third, "puffin")


def test_old_sessions_and_other_directories_are_left_out(tmp_path: Path) -> None:
    home, root, other = tmp_path / "claude", tmp_path / "ws", tmp_path / "ws_other"
    root.mkdir()
    other.mkdir()
    old = Session(root)
    old_path = session_path(home, root, old.session)
    old_path.write_text(old.user("ancient lemur question"))
    os.utime(old_path, (1, 1))
    elsewhere = Session(other)
    session_path(home, other, elsewhere.session).write_text(elsewhere.user("marmot question"))
    look = _look(home, root)
    assert look.sessions == {}


def test_a_line_past_the_limit_is_skipped_without_holding_it(tmp_path: Path) -> None:
    talk = Session(tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_text(talk.user("before") + talk.user("x" * 5000) + talk.user("after"))
    seen: list[str] = []

    def take(objects: list[tuple[int, dict[str, object]]]) -> None:
        seen.extend(str(line["message"]["content"])[:6] for _, line in objects)  # type: ignore[index]

    cursor, skipped, ended = read_objects(
        str(path), Cursor(), take, block_bytes=64, max_line_bytes=1000
    )
    assert seen == ["before", "after"] and ended
    assert skipped == 1
    assert cursor == Cursor(path.stat().st_size, False)


def test_turns_between_numbers_turns_as_the_chunks_do(tmp_path: Path) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(
        talk.user("one") + talk.tool_result("noise") + talk.assistant("two") + talk.user("three")
    )
    (session,) = _look(home, root).sessions.values()
    turns = turns_between(session, 2, 3)
    assert [(t.number, t.text) for t in turns] == [(2, "two"), (3, "three")]


@pytest.mark.anyio
async def test_a_search_is_served_the_last_look_while_the_next_is_taken(tmp_path: Path) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(talk.user("the ibis question"))
    chats = WorkspaceChats(str(root), env=lambda: {"CLAUDE_CONFIG_DIR": str(home)})
    async with anyio.create_task_group() as tg:
        tg.start_soon(chats.run)
        assert await chats.refresh(True, 90, wait=False) is chat_index.NOTHING  # asked only
        await until(lambda: chats.looks == 1)
        first = await chats.refresh(True, 90)
        assert _texts(first) == ["user: the ibis question"]
        with path.open("a") as handle:
            handle.write(talk.assistant("Ibises probe mud."))
        assert await chats.refresh(True, 90) is first or chats.looks > 1  # never waits
        with anyio.fail_after(20):
            # Each search asks for the next look once the last is a second old: nothing to wait on.
            while not any("mud" in text for text in _texts(await chats.refresh(True, 90))):  # noqa: ASYNC110
                await anyio.sleep(0.01)
        assert _texts(first) == ["user: the ibis question"]  # a served look never changes
        off = await chats.refresh(False, 90)
        assert off.sessions == {}  # off: nothing held, nothing read
        looks = chats.looks
        await chats.refresh(False, 90)
        assert chats.looks == looks
        chats.stop()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["user", "assistant", "tool"]), max_size=8), st.data())
def test_a_file_read_in_two_looks_at_any_byte_gives_the_whole_files_chunks(
    roles: list[str], data: st.DataObject
) -> None:
    """However the writer's bytes are split between two looks (mid-line too), the chunks are
    those of one look at the whole file."""
    with tempfile.TemporaryDirectory() as temporary:
        home, root = Path(temporary) / "claude", Path(temporary) / "ws"
        root.mkdir()
        talk = Session(root)
        said = {"user": talk.user, "assistant": talk.assistant, "tool": talk.tool_result}
        whole = "".join(said[role](f"{role} words {n}") for n, role in enumerate(roles)).encode()
        split = data.draw(st.integers(0, len(whole)))
        path = session_path(home, root, talk.session)
        path.write_bytes(whole[:split])
        first = _look(home, root)
        with path.open("ab") as handle:
            handle.write(whole[split:])
        assert _texts(_look(home, root, first)) == _texts(_look(home, root))


def _codex_line(kind: str, payload: Mapping[str, object], second: int) -> str:
    import json

    stamp = f"2026-11-20T10:00:{second:02d}Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"


def test_a_codex_rollout_growing_keeps_its_session_and_never_doubles_a_turn(
    tmp_path: Path,
) -> None:
    home, codex, root = tmp_path / "claude", tmp_path / "codex", tmp_path / "ws"
    root.mkdir()
    day = codex / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    path = day / "rollout-2026-11-20T10-00-00-0a1b.jsonl"
    real = os.path.realpath(root)
    meta = {"id": "codex-session-1", "cwd": real, "source": "cli"}
    path.write_text(
        _codex_line("session_meta", meta, 0)
        + _codex_line("event_msg", {"type": "user_message", "message": "why is the yak slow"}, 1)
        + _codex_line("response_item", {"type": "message", "role": "user", "content": []}, 1)
    )
    env = {"CLAUDE_CONFIG_DIR": str(home), "CODEX_HOME": str(codex)}
    first = look_at(real, env, ASKED)
    with path.open("a") as handle:
        handle.write(
            _codex_line("event_msg", {"type": "agent_message", "message": "The yak waits."}, 2)
        )
    os.utime(path, (os.path.getmtime(path) + 5, os.path.getmtime(path) + 5))
    grown = look_at(real, env, ASKED, first)
    (session,) = grown.sessions.values()
    assert session.agent == "codex" and session.session == "codex-session-1"
    assert [part.text for part in session.chunks] == [
        "user: why is the yak slow\nassistant: The yak waits."
    ]
    assert [t.text for t in turns_between(session, 1, 2)] == [
        "why is the yak slow",
        "The yak waits.",
    ]


def test_a_first_look_out_of_time_serves_what_it_read_and_says_the_rest_is_coming(
    tmp_path: Path,
) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    for n in range(3):
        talk = Session(root)
        session_path(home, root, talk.session).write_text(talk.user(f"question {n} about otters"))
    env = {"CLAUDE_CONFIG_DIR": str(home)}
    real = os.path.realpath(root)
    partial = look_at(real, env, ASKED, deadline=0.0)  # long past: nothing read in time
    assert partial.partial and partial.sessions == {}
    assert "3 older session(s) are still being read" in partial.left_out[0]
    whole = look_at(real, env, ASKED, partial)
    assert not whole.partial and len(whole.sessions) == 3


def test_a_huge_session_is_read_from_its_newest_end_and_get_agrees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_index, "MAX_SESSION_BYTES", 2000)
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text("".join(talk.user(f"old question {n} about herons") for n in range(40)))
    with path.open("a") as handle:
        handle.write(talk.user("the newest question about cranes"))
    (session,) = _look(home, root).sessions.values()
    assert 0 < session.origin < path.stat().st_size
    texts = [part.text for part in session.chunks]
    assert texts[-1] == "user: the newest question about cranes"
    assert "old question 0 " not in " ".join(texts)  # before the window: never read
    last = session.chunks[-1]
    assert [t.text for t in turns_between(session, last.first, last.last)] == [
        "the newest question about cranes"
    ]


def test_a_read_out_of_time_inside_a_session_goes_on_from_its_cursor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text("".join(talk.user(f"turn {n} " + "word " * 300) for n in range(20)))
    real, env = os.path.realpath(root), {"CLAUDE_CONFIG_DIR": str(home)}
    (found,) = find_transcripts(real, env, max_age_days=90, now=time.time())
    monkeypatch.setattr(chat_index, "BLOCK_BYTES", 4096)
    cut, _, ended = chat_index.read_session(found, None, deadline=0.0)  # one block, then stops
    assert not ended and 0 < cut.turns < 20
    rest, _, ended = chat_index.read_session(found, cut)
    whole, _, _ = chat_index.read_session(found, None)
    assert ended and [c.text for c in rest.chunks] == [c.text for c in whole.chunks]
    assert rest.turns == whole.turns == 20


def test_a_fifo_in_a_transcripts_place_is_left_out_not_waited_on(tmp_path: Path) -> None:
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(talk.user("a real question about moles"))
    (session,) = _look(home, root).sessions.values()
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(OSError, match="not a regular file"):
        turns_between(session, 1, 1)
    assert _look(home, root).sessions == {}


def _rollout(codex: Path, real: str, *lines: str) -> Path:
    day = codex / "sessions" / "2026" / "11" / "21"
    day.mkdir(parents=True, exist_ok=True)
    path = day / "rollout-2026-11-21T09-00-00-old.jsonl"
    meta = _codex_line("session_meta", {"id": "old-rollout", "cwd": real}, 0)
    path.write_text(meta + "".join(lines))
    return path


def _message(role: str, text: str, second: int) -> str:
    kind = "input_text" if role == "user" else "output_text"
    payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    return _codex_line("response_item", payload, second)


def test_an_old_rollout_first_seen_fresh_gives_its_turns_once_quiet_and_never_doubles(
    tmp_path: Path,
) -> None:
    home, codex, root = tmp_path / "claude", tmp_path / "codex", tmp_path / "ws"
    root.mkdir()
    real = os.path.realpath(root)
    path = _rollout(
        codex, real, _message("user", "why walrus", 1), _message("assistant", "walrus ok", 2)
    )
    env = {"CLAUDE_CONFIG_DIR": str(home), "CODEX_HOME": str(codex)}
    fresh = look_at(real, env, ASKED)
    assert _texts(fresh) == []  # held: the file may still show message events
    old = time.time() - chat_index.QUIET_SECONDS - 60
    os.utime(path, (old, old))
    quiet = look_at(real, env, ASKED, fresh)
    assert _texts(quiet) == ["user: why walrus\nassistant: walrus ok"]
    with path.open("a") as handle:
        handle.write(_message("user", "and the heron", 3))
        event = {"type": "user_message", "message": "and the heron"}
        handle.write(_codex_line("event_msg", event, 3))
    os.utime(path, (old + 10, old + 10))
    grown = look_at(real, env, ASKED, quiet)
    assert _texts(grown) == ["user: why walrus\nassistant: walrus ok", "user: and the heron"]
    (session,) = grown.sessions.values()
    assert [t.text for t in turns_between(session, 1, 3)] == [
        "why walrus",
        "walrus ok",
        "and the heron",
    ]


@pytest.mark.anyio
async def test_a_search_after_the_last_look_aged_waits_for_the_next_and_sees_a_new_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_index, "FRESH_SECONDS", 0.0)  # every look is already old
    monkeypatch.setattr(chat_index, "FRESH_WAIT_SECONDS", 30.0)  # a slow machine still waits
    home, root = tmp_path / "claude", tmp_path / "ws"
    root.mkdir()
    talk = Session(root)
    path = session_path(home, root, talk.session)
    path.write_text(talk.user("what did we decide about the lynx cache"))
    chats = WorkspaceChats(str(root), env=lambda: {"CLAUDE_CONFIG_DIR": str(home)})
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(chats.run)
            await chats.refresh(True, 90)
            with path.open("a") as handle:
                handle.write(talk.assistant("We decided to drop the lynx cache."))
            seen = await chats.refresh(True, 90)  # the very next search
            assert any("drop the lynx cache" in text for text in _texts(seen))
            chats.stop()
