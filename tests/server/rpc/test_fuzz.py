"""Fuzzing the protocol: every input gets a well-formed JSON-RPC response or nothing (a
notification), never a crash, a hang, a traceback on the wire or a change outside `.memory/`.

Inputs: arbitrary bytes, arbitrary JSON, valid envelopes with hostile params (every method,
wrong types, path tricks, control characters, bytes that are not UTF-8, huge numbers), and
batches of those; here against the dispatcher (a real registry on a temp workspace, in one
event loop), and over the socket of a real daemon in `tests/e2e/test_fuzz_daemon.py`. `make test`
runs a few hundred cases; `make fuzz` (MEMD_TEST_BUDGET=deep, `tests/budget.py`) runs 100,100 in
all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from anyio.abc import TaskGroup
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings, strategies as st

from memd.server.methods.handlers import Methods
from memd.server.rpc.dispatch import Dispatcher
from memd.server.rpc.session import Session
from memd.server.workspaces.registry import Registry
from tests.budget import examples

EXAMPLES = examples(150, deep=91000)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
METHODS = (
    "store", "query", "get", "list", "delete", "cleanup", "stats", "status", "subscribe",
    "unsubscribe", "context", "extract", "nope",
)  # fmt: skip
BAD_UTF8 = "<not-utf-8>"
"""Stands for bytes that are not UTF-8: replaced in the encoded frame (`_with_bad_utf8`)."""
HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "../../etc/passwd", "/etc/passwd", "decisions.md\x00.txt", "a\nb", "- [x] fake\n- [y]",
            "\u2028", "\x1b[31m", "%s%n", "{{7*7}}", "Instruction", "quirks.md", "1-999999999",
            "x" * 3000, "", " ", "#tag", "/proc/self/cwd", "/dev/null", ".memory", BAD_UTF8,
        ]
    ),
)  # fmt: skip
VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False),
        HOSTILE_TEXT,
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXT, inner, max_size=4),
    max_leaves=12,
)
PARAM_KEYS = st.sampled_from(
    [
        "workspace", "category", "content", "slug", "query", "limit", "min_score", "tags",
        "file", "lines", "apply", "dry_run", "text", "budget_tokens", "store", "unknown",
    ]
)  # fmt: skip


def _envelopes(workspace: str) -> st.SearchStrategy[Any]:
    params = st.dictionaries(PARAM_KEYS, st.one_of(VALUES, st.just(workspace)), max_size=6).map(
        lambda p: p if "workspace" in p or not p else {**p, "workspace": workspace}
    )
    return st.fixed_dictionaries(
        {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2]), "method": st.sampled_from(METHODS)},
        optional={"id": st.one_of(st.integers(), st.text(max_size=8), st.none()), "params": params},
    )


def _with_bad_utf8(frame: bytes) -> bytes:
    return frame.replace(BAD_UTF8.encode(), b"caf\xe9 \xc3( \xff")


def _bad_utf8_requests(workspace: str) -> st.SearchStrategy[Any]:
    """Well-formed requests but for one string of their params that is not UTF-8."""
    stores = st.builds(
        lambda slug: {"workspace": workspace, "category": "Quirk", "content": BAD_UTF8, **slug},
        st.sampled_from([{}, {"slug": BAD_UTF8}]),
    )
    params = stores.map(lambda p: ("store", p)) | st.just(
        ("query", {"workspace": workspace, "query": BAD_UTF8})
    )
    return st.builds(
        lambda call, request_id: {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": call[0],
            "params": call[1],
        },
        params,
        st.integers(0, 9),
    )


def _frames(workspace: str) -> st.SearchStrategy[bytes]:
    envelope = _envelopes(workspace) | _bad_utf8_requests(workspace)
    return st.one_of(
        st.binary(max_size=200),
        VALUES.map(msgspec.json.encode).map(_with_bad_utf8),
        envelope.map(msgspec.json.encode).map(_with_bad_utf8),
        st.lists(envelope, max_size=4).map(msgspec.json.encode).map(_with_bad_utf8),
    )


def _check_reply(frame: bytes, reply: bytes | None) -> None:
    """A reply is one response object or a non-empty array of them, without internals."""
    if reply is None:
        return  # notifications (and batches of them) are not answered
    assert b"Traceback" not in reply and b'File "' not in reply
    decoded = msgspec.json.decode(reply)
    responses = decoded if isinstance(decoded, list) else [decoded]
    assert responses, frame
    for response in responses:
        assert response["jsonrpc"] == "2.0"
        assert "id" in response
        assert ("result" in response) != ("error" in response)
        if "error" in response:
            assert isinstance(response["error"]["code"], int)
            assert response["error"]["message"]
            assert response["error"]["code"] != -32603, response  # no internal errors


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BlockingPortal, Any, Path]]:
    root = tmp_path_factory.mktemp("fuzz")
    workspace = root / "ws"
    (workspace / ".memory").mkdir(parents=True)
    (workspace / ".memory" / "quirks.md").write_text("# Quirks\n\n- [a] A quirk.\n")
    (root / "canary.txt").write_text("untouched\n")
    with start_blocking_portal() as portal:
        holder: list[TaskGroup] = []
        ready = threading.Event()

        async def hold() -> None:
            async with anyio.create_task_group() as group:
                holder.append(group)
                ready.set()
                await anyio.sleep_forever()

        portal.start_task_soon(hold)
        assert ready.wait(10)
        group = holder[0]

        def build() -> tuple[Registry, Dispatcher]:
            registry = Registry(group, clock=time.time)
            methods = Methods(registry, started=0.0, socket_path="fuzz")
            return registry, Dispatcher(methods.table, quick=methods.quick)

        registry, dispatcher = portal.call(build)
        yield portal, dispatcher, workspace
        portal.call(registry.close)
        portal.call(group.cancel_scope.cancel)
    assert (root / "canary.txt").read_text() == "untouched\n"
    assert sorted(p.name for p in root.iterdir()) == ["canary.txt", "ws"]
    assert sorted(p.name for p in workspace.iterdir()) == [".memory"]


@FUZZ
@given(data=st.data())
def test_the_dispatcher_answers_anything_well_formed(
    live: tuple[BlockingPortal, Any, Path], data: st.DataObject
) -> None:
    portal, dispatcher, workspace = live
    frame = data.draw(_frames(str(workspace)))
    reply = portal.call(dispatcher.handle_frame, frame, Session())
    _check_reply(frame, reply)
