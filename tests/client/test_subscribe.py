"""Subscriptions, notification frames and the version handshake, against a scripted fake daemon
(no memd needed). The fake answers every connection's handshake (`status`) first."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import msgspec
import pytest

from memd_client import (
    Changed,
    Client,
    ConnectionLost,
    DaemonUnavailable,
    IncompatibleDaemon,
    MemdError,
    Resync,
    SyncSubscription,
    WorkspaceNotFound,
)
from memd_client._connection import Connection, Reply
from memd_client.aio import AsyncClient, Subscription
from memd_client.errors import ProtocolViolation
from tests.client.fake_daemon import (
    RESYNC,
    STATUS,
    TIMEOUT,
    UNKNOWN,
    WS,
    FakeDaemon,
    Handler,
    Message,
    Peer,
    changed,
    label,
    notification,
    result,
    subscribed,
)


@pytest.fixture
def fake(short_tmp: Path) -> Iterator[Callable[..., FakeDaemon]]:
    """Start a fake daemon with the given connection handlers; checked on teardown."""
    started: list[FakeDaemon] = []

    def start(*handlers: Handler, status: Message | None = None) -> FakeDaemon:
        daemon = FakeDaemon(short_tmp, handlers, status)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        daemon.finish()


# ---------------------------------------------------------------------------- sans-I/O core


def test_connection_classifies_frames_split_anywhere() -> None:
    connection = Connection()
    wire = b"".join(
        msgspec.json.encode(m) + b"\n"
        for m in (changed(1), UNKNOWN, {"jsonrpc": "2.0", "id": 1, "result": STATUS}, RESYNC)
    )
    messages: list[object] = []
    for byte in range(len(wire)):
        connection.receive_data(wire[byte : byte + 1])
        while (message := connection.next_message()) is not None:
            messages.append(message)
    assert [type(m) for m in messages] == [Changed, Reply, Resync]
    assert isinstance(messages[1], Reply)
    assert connection.result(messages[1], 1, dict).get("pid") == 1


def test_malformed_event_is_a_protocol_violation_but_next_reply_skips_it() -> None:
    bad = msgspec.json.encode(notification("changed", {"workspace": WS})) + b"\n"
    reply = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "result": STATUS}) + b"\n"
    events = Connection()
    events.receive_data(bad)
    with pytest.raises(ProtocolViolation):
        events.next_message()
    calls = Connection()
    calls.receive_data(bad + reply)
    assert isinstance(calls.next_reply(), Reply)


# ---------------------------------------------------------------------------- AsyncClient


async def test_async_subscription_yields_events_in_order_then_connection_lost(
    fake: Callable[..., FakeDaemon],
) -> None:
    def handler(peer: Peer) -> None:
        request = peer.request()
        peer.send(changed(1))  # before the reply: the daemon registers first
        peer.send(subscribed(request), changed(2), UNKNOWN, RESYNC)
        peer.send(changed(3))  # then the daemon closes the connection

    daemon = fake(handler)
    seen: list[str] = []

    async def read_all(events: Subscription) -> None:
        async for event in events:
            seen.append(label(event))

    with anyio.fail_after(TIMEOUT):
        async with (
            AsyncClient(daemon.path, workspace=WS) as client,
            client.subscribe() as events,
        ):
            assert isinstance(events, Subscription)
            with pytest.raises(ConnectionLost):
                await read_all(events)
            assert [e async for e in events] == []  # iteration stays ended
    assert seen == ["changed 1", "changed 2", "resync 3", "changed 3"]


async def test_async_subscription_leaves_the_client_free_and_closes_on_exit(
    fake: Callable[..., FakeDaemon],
) -> None:
    closed = threading.Event()

    def subscription(peer: Peer) -> None:
        peer.send(subscribed(peer.request()), changed(1))
        peer.wait_closed()
        closed.set()

    def calls(peer: Peer) -> None:
        request = peer.request()
        assert request["method"] == "status"
        peer.send(result(request, STATUS))

    daemon = fake(subscription, calls)
    with anyio.fail_after(TIMEOUT):
        async with AsyncClient(daemon.path, workspace=WS) as client:
            async with client.subscribe() as events:
                first = await events.__anext__()
                assert label(first) == "changed 1"
                assert (await client.status()).pid == 1
            async for _ in events:
                pytest.fail("a closed subscription yielded an event")
    assert closed.wait(TIMEOUT)


async def test_async_subscribe_error_reply_raises_its_rpc_error(
    fake: Callable[..., FakeDaemon],
) -> None:
    def handler(peer: Peer) -> None:
        request = peer.request()
        error = {"code": 1006, "message": "No such directory."}
        peer.send({"jsonrpc": "2.0", "id": request["id"], "error": error})
        peer.wait_closed()

    daemon = fake(handler)
    with anyio.fail_after(TIMEOUT):
        subscription = AsyncClient(daemon.path).subscribe(workspace=WS)
        with pytest.raises(WorkspaceNotFound, match="No such directory"):
            async with subscription:
                pytest.fail("entered a failed subscription")


async def test_async_call_skips_notifications_before_its_reply(
    fake: Callable[..., FakeDaemon],
) -> None:
    def handler(peer: Peer) -> None:
        request = peer.request()
        peer.send(changed(1), UNKNOWN, result(request, STATUS))

    daemon = fake(handler)
    with anyio.fail_after(TIMEOUT):
        async with AsyncClient(daemon.path) as client:
            assert (await client.status()).uptime_s == 0.5


async def test_async_client_without_a_daemon_raises_daemon_unavailable(short_tmp: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with AsyncClient(short_tmp / "none.sock") as client:
            with pytest.raises(DaemonUnavailable):
                await client.status()
        with pytest.raises(DaemonUnavailable):
            async with client.subscribe(workspace=WS):
                pass


# ---------------------------------------------------------------------------- Client


def test_sync_call_skips_notifications_before_its_reply(fake: Callable[..., FakeDaemon]) -> None:
    def handler(peer: Peer) -> None:
        request = peer.request()
        peer.send(RESYNC, UNKNOWN, result(request, STATUS))
        request = peer.request()
        peer.send(changed(2))
        peer.send(result(request, STATUS))

    daemon = fake(handler)
    with Client(daemon.path, timeout=TIMEOUT) as client:
        assert client.status().pid == 1
        assert client.status().pid == 1


def test_sync_callback_gets_events_in_order_and_close_is_prompt(
    fake: Callable[..., FakeDaemon],
) -> None:
    def handler(peer: Peer) -> None:
        request = peer.request()
        peer.send(changed(1))
        peer.send(subscribed(request), UNKNOWN, changed(2), RESYNC)
        peer.wait_closed()

    daemon = fake(handler)
    received: queue.Queue[str] = queue.Queue()
    errors: queue.Queue[MemdError] = queue.Queue()
    client = Client(daemon.path, workspace=WS, timeout=TIMEOUT)
    subscription = client.subscribe(lambda e: received.put(label(e)), on_error=errors.put)
    assert isinstance(subscription, SyncSubscription)
    with subscription:
        assert [received.get(timeout=TIMEOUT) for _ in range(3)] == [
            "changed 1",
            "changed 2",
            "resync 3",
        ]
        started = time.monotonic()
    assert time.monotonic() - started < TIMEOUT / 2
    assert not subscription.running
    subscription.close()  # idempotent
    assert received.empty()
    assert errors.empty()  # closing on purpose is not an error


def test_sync_callback_exception_is_logged_and_later_events_still_arrive(
    fake: Callable[..., FakeDaemon], caplog: pytest.LogCaptureFixture
) -> None:
    def handler(peer: Peer) -> None:
        peer.send(subscribed(peer.request()), changed(1), changed(2), changed(3))
        peer.wait_closed()

    def callback(event: Changed | Resync) -> None:
        received.put(label(event))
        if label(event) == "changed 1":
            raise ValueError("bad callback")

    daemon = fake(handler)
    received: queue.Queue[str] = queue.Queue()
    with (
        caplog.at_level(logging.ERROR, logger="memd_client"),
        Client(daemon.path, workspace=WS, timeout=TIMEOUT) as client,
        client.subscribe(callback) as subscription,
    ):
        assert [received.get(timeout=TIMEOUT) for _ in range(3)] == [
            "changed 1",
            "changed 2",
            "changed 3",
        ]
        assert subscription.running
    [record] = caplog.records
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], ValueError)


def test_sync_connection_closed_by_daemon_reports_connection_lost(
    fake: Callable[..., FakeDaemon],
) -> None:
    def handler(peer: Peer) -> None:
        peer.send(subscribed(peer.request()), changed(1))

    daemon = fake(handler)
    received: queue.Queue[str] = queue.Queue()
    errors: queue.Queue[MemdError] = queue.Queue()
    client = Client(daemon.path, workspace=WS, timeout=TIMEOUT)
    with client.subscribe(lambda e: received.put(label(e)), on_error=errors.put) as subscription:
        assert isinstance(errors.get(timeout=TIMEOUT), ConnectionLost)
        assert received.get_nowait() == "changed 1"  # delivered before the error
    assert not subscription.running


def test_sync_subscribe_error_reply_raises_from_subscribe(
    fake: Callable[..., FakeDaemon],
) -> None:
    def handler(peer: Peer) -> None:
        request = peer.request()
        error = {"code": 1006, "message": "No such directory."}
        peer.send(changed(1), {"jsonrpc": "2.0", "id": request["id"], "error": error})
        peer.wait_closed()

    daemon = fake(handler)
    client = Client(daemon.path, workspace=WS, timeout=TIMEOUT)
    with pytest.raises(WorkspaceNotFound):
        client.subscribe(lambda e: pytest.fail("no events after a failed subscribe"))


# ---------------------------------------------------------------------------- handshake


def test_a_daemon_of_another_protocol_major_is_refused_before_any_request(
    fake: Callable[..., FakeDaemon],
) -> None:
    def nothing_more(peer: Peer) -> None:
        assert peer.sock.recv(65536) == b"", "the client sent a request after the handshake"

    newer = dict(STATUS, version="2.0.0", protocol_version=2, pid=4242)
    daemon = fake(nothing_more, status=newer)
    with (
        Client(daemon.path, timeout=TIMEOUT) as client,
        pytest.raises(IncompatibleDaemon) as caught,
    ):
        client.store(category="Decision", content="Never sent.", workspace=WS)
    assert "protocol 2, but this client speaks 1" in caught.value.message
    assert "kill 4242" in caught.value.message
    assert "systemctl --user restart memd" in caught.value.message


def test_a_daemon_saying_major_dot_minor_is_read_by_its_major(
    fake: Callable[..., FakeDaemon],
) -> None:
    def answer_status(peer: Peer) -> None:
        peer.send(result(peer.request(), STATUS))

    daemon = fake(answer_status, status=dict(STATUS, protocol_version="1.7"))
    with Client(daemon.path, timeout=TIMEOUT) as client:
        assert client.status().pid == 1
