"""JSON-RPC 2.0 dispatch, bytes in and bytes out: the spec's examples and memd's error mapping."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest

from memd.server.rpc.dispatch import Dispatcher, Handler
from memd.server.rpc.session import Session


class SubtractParams(msgspec.Struct, forbid_unknown_fields=True):
    minuend: int
    subtrahend: int


class NoParams(msgspec.Struct, forbid_unknown_fields=True):
    pass


async def subtract(params: SubtractParams, session: Session) -> int:
    return params.minuend - params.subtrahend


async def get_data(params: NoParams, session: Session) -> list[Any]:
    return ["hello", 5]


async def notify_hello(params: NoParams, session: Session) -> None:
    return None


async def boom(params: NoParams, session: Session) -> None:
    raise RuntimeError("secret internals at /home/user/.ssh")


class SizeParams(msgspec.Struct, forbid_unknown_fields=True):
    size: int


CALLS: list[int] = []


async def blob(params: SizeParams, session: Session) -> str:
    CALLS.append(params.size)
    return "x" * params.size


async def exhaust(params: NoParams, session: Session) -> None:
    raise MemoryError


class EchoParams(msgspec.Struct, forbid_unknown_fields=True):
    text: str


async def echo(params: EchoParams, session: Session) -> str:
    return params.text


METHODS: dict[str, tuple[type[msgspec.Struct], Handler]] = {
    "subtract": (SubtractParams, subtract),
    "get_data": (NoParams, get_data),
    "notify_hello": (NoParams, notify_hello),
    "boom": (NoParams, boom),
    "blob": (SizeParams, blob),
    "exhaust": (NoParams, exhaust),
    "echo": (EchoParams, echo),
}


async def call(frame: str) -> Any:
    reply = await Dispatcher(METHODS).handle_frame(frame.encode(), Session())
    return None if reply is None else msgspec.json.decode(reply)


def error(code: int, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code}, "id": request_id}


def without_messages(reply: Any) -> Any:
    if isinstance(reply, list):
        return [without_messages(r) for r in reply]
    if "error" in reply:
        reply["error"] = {"code": reply["error"]["code"]}
    return reply


async def test_named_params_in_any_order() -> None:
    for params in ('{"subtrahend": 23, "minuend": 42}', '{"minuend": 42, "subtrahend": 23}'):
        reply = await call(
            f'{{"jsonrpc": "2.0", "method": "subtract", "params": {params}, "id": 3}}'
        )
        assert reply == {"jsonrpc": "2.0", "result": 19, "id": 3}


async def test_notifications_get_no_reply_even_when_they_fail() -> None:
    assert await call('{"jsonrpc": "2.0", "method": "notify_hello"}') is None
    assert await call('{"jsonrpc": "2.0", "method": "foobar"}') is None
    assert await call('{"jsonrpc": "2.0", "method": "subtract", "params": {"x": 1}}') is None


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ('{"jsonrpc": "2.0", "method": "foobar", "id": "1"}', error(-32601, "1")),
        ('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]', error(-32700)),
        ('{"jsonrpc": "2.0", "method": 1, "params": "bar"}', error(-32600)),
        ('{"jsonrpc": "1.0", "method": "get_data", "id": 7}', error(-32600, 7)),
        ('{"jsonrpc": "2.0", "method": "get_data", "id": 1.5}', error(-32600)),
        ("42", error(-32600)),
        ('"just a string"', error(-32600)),
        ("not json at all", error(-32700)),
        (
            '[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method" ]',
            error(-32700),
        ),
        ("[]", error(-32600)),
        ('{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}', error(-32602, 1)),
        ('{"jsonrpc": "2.0", "method": "subtract", "params": null, "id": 2}', error(-32602, 2)),
        (
            '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1}, "id": 4}',
            error(-32602, 4),
        ),
    ],
)
async def test_error_codes(frame: str, expected: dict[str, Any]) -> None:
    assert without_messages(await call(frame)) == expected


async def test_invalid_params_message_names_the_field() -> None:
    reply = await call(
        '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1}, "id": 4}'
    )
    assert "subtrahend" in reply["error"]["message"]
    reply = await call(
        '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1, "subtrahend": 2, "x": 0}, "id": 5}'
    )
    assert "`x`" in reply["error"]["message"]
    reply = await call(
        '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": "1", "subtrahend": 2}, "id": 6}'
    )
    assert "$.minuend" in reply["error"]["message"]


async def test_invalid_utf8_and_deep_nesting_are_parse_errors() -> None:
    reply = await Dispatcher(METHODS).handle_frame(
        b'{"jsonrpc": "2.0", "method": "\xff", "id": 1}', Session()
    )
    assert reply is not None
    assert msgspec.json.decode(reply)["error"]["code"] == -32700
    deep = "[" * 5000 + "]" * 5000
    assert without_messages(await call(deep)) == error(-32700)


async def test_internal_errors_are_logged_but_never_leak(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        reply = await call('{"jsonrpc": "2.0", "method": "boom", "id": 9}')
    assert reply["error"]["code"] == -32603
    assert "secret" not in reply["error"]["message"]
    assert "data" not in reply["error"]
    assert "secret internals" in caplog.text


async def test_batches_follow_the_spec() -> None:
    assert without_messages(await call("[1]")) == [error(-32600)]
    assert without_messages(await call("[1,2,3]")) == [error(-32600)] * 3
    mixed = await call(
        '[{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1, "subtrahend": 2}, "id": "1"},'
        ' {"jsonrpc": "2.0", "method": "notify_hello"},'
        ' {"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": "2"},'
        ' {"foo": "boo"},'
        ' {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},'
        ' {"jsonrpc": "2.0", "method": "get_data", "id": "9"}]'
    )
    assert without_messages(mixed) == [
        {"jsonrpc": "2.0", "result": -1, "id": "1"},
        {"jsonrpc": "2.0", "result": 19, "id": "2"},
        error(-32600),
        error(-32601, "5"),
        {"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"},
    ]
    all_notifications = (
        '[{"jsonrpc": "2.0", "method": "notify_hello"}, {"jsonrpc": "2.0", "method": "x"}]'
    )
    assert await call(all_notifications) is None


async def test_null_result_is_sent_as_null() -> None:
    reply = await Dispatcher(METHODS).handle_frame(
        b'{"jsonrpc": "2.0", "method": "notify_hello", "id": null}', Session()
    )
    assert reply == b'{"id":null,"jsonrpc":"2.0","result":null}'


@pytest.mark.parametrize(
    ("frame", "quick"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"query","params":{}}', True),
        (b'  {"method":"status","jsonrpc":"2.0","id":2}', True),
        (b'{"jsonrpc":"2.0","id":1,"method":"store","params":{}}', False),
        (b'[{"jsonrpc":"2.0","id":1,"method":"query","params":{}}]', False),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', False),
        (b"{not json", False),
        (b'"query"', False),
    ],
)
def test_only_single_requests_for_quick_methods_are_quick(frame: bytes, quick: bool) -> None:
    dispatcher = Dispatcher({}, quick=frozenset({"query", "status"}))
    assert dispatcher.is_quick(frame) is quick


async def test_invalid_utf8_inside_params_is_a_parse_error_for_that_request() -> None:
    frame = b'{"jsonrpc": "2.0", "method": "echo", "params": {"text": "caf\xe9 \xff"}, "id": 3}'
    reply = await Dispatcher(METHODS).handle_frame(frame, Session())
    assert reply is not None
    assert without_messages(msgspec.json.decode(reply)) == error(-32700, 3)
    batch = b"[" + frame + b', {"jsonrpc": "2.0", "method": "get_data", "id": 4}]'
    replies = await Dispatcher(METHODS).handle_frame(batch, Session())
    assert replies is not None
    assert without_messages(msgspec.json.decode(replies)) == [
        error(-32700, 3),
        {"jsonrpc": "2.0", "result": ["hello", 5], "id": 4},
    ]


def _blobs(*sizes: int) -> bytes:
    return msgspec.json.encode(
        [
            {"jsonrpc": "2.0", "method": "blob", "params": {"size": size}, "id": n}
            for n, size in enumerate(sizes)
        ]
    )


async def test_a_batch_over_the_cap_is_one_error_and_runs_nothing() -> None:
    CALLS.clear()
    dispatcher = Dispatcher(METHODS, max_batch=4)
    reply = await dispatcher.handle_frame(_blobs(1, 1, 1, 1, 1), Session())
    assert reply is not None
    decoded = msgspec.json.decode(reply)
    assert "at most 4 requests" in decoded["error"]["message"]
    assert without_messages(decoded) == error(-32600)
    assert CALLS == []
    reply = await dispatcher.handle_frame(_blobs(1, 1, 1, 1), Session())
    assert reply is not None
    assert len(msgspec.json.decode(reply)) == 4
    assert CALLS == [1, 1, 1, 1]


def test_a_batch_weighs_one_slot_per_request_it_will_run() -> None:
    dispatcher = Dispatcher(METHODS, max_batch=4)
    assert dispatcher.weight(b'{"jsonrpc": "2.0", "method": "get_data", "id": 1}') == 1
    assert dispatcher.weight(_blobs(1, 2, 3)) == 3
    assert dispatcher.weight(b"  " + _blobs(1, 2, 3, 4)) == 4
    assert dispatcher.weight(_blobs(1, 2, 3, 4, 5)) == 1  # refused whole: runs nothing
    assert dispatcher.weight(b"[]") == 1
    assert dispatcher.weight(b"[1, 2") == 1


async def test_a_batch_reply_is_bounded_in_bytes_and_small_replies_always_go_out() -> None:
    dispatcher = Dispatcher(METHODS, max_batch_reply=300_000)
    big = 100_000
    sizes = [big] * 10 + [10] * 5
    reply = await dispatcher.handle_frame(_blobs(*sizes), Session())
    assert reply is not None
    assert len(reply) < 300_000 + 15 * 1000
    decoded = msgspec.json.decode(reply)
    assert sorted(r["id"] for r in decoded) == list(range(15))
    results = {r["id"]: r for r in decoded}
    assert all(results[n]["result"] == "x" * 10 for n in range(10, 15))
    sent = [n for n in range(10) if "result" in results[n]]
    left_out = [results[n]["error"] for n in range(10) if "error" in results[n]]
    assert len(sent) == 2
    assert len(left_out) == 8
    assert all(e["code"] == -32600 and "carried out" in e["message"] for e in left_out)
    assert all("300000 bytes" in e["message"] for e in left_out)


async def test_running_out_of_memory_is_an_error_for_that_request_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        reply = await call('{"jsonrpc": "2.0", "method": "exhaust", "id": 1}')
    assert reply["error"]["code"] == -32603
    assert "out of memory" in reply["error"]["message"]
    assert "out of memory in exhaust" in caplog.text
    batch = await call(
        '[{"jsonrpc": "2.0", "method": "exhaust", "id": 1},'
        ' {"jsonrpc": "2.0", "method": "get_data", "id": 2}]'
    )
    assert without_messages(batch) == [
        error(-32603, 1),
        {"jsonrpc": "2.0", "result": ["hello", 5], "id": 2},
    ]
