"""A session's outbox: in order, never blocking the publisher, and never dropping silently."""

from __future__ import annotations

import anyio
import msgspec

from memd.server.rpc.session import Session, notification_frame
from memd_client import protocol as p


def _frame(n: int) -> bytes:
    return notification_frame("changed", p.Resync(workspace="/w", dropped=n, message="x"))


async def _pump(session: Session, count: int) -> list[bytes]:
    """Run the session's pump until it has sent `count` frames; return them."""
    sent: list[bytes] = []

    async def send(frame: bytes) -> None:
        sent.append(frame)
        if len(sent) == count:
            tg.cancel_scope.cancel()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.pump, send)
    return sent


async def test_pump_sends_queued_frames_in_order() -> None:
    session = Session(capacity=10)
    for n in range(5):
        session.offer("/w", _frame(n))
    assert await _pump(session, 5) == [_frame(n) for n in range(5)]


def _resyncs(frames: list[bytes]) -> list[tuple[str, str, int]]:
    decoded = [msgspec.json.decode(frame) for frame in frames]
    return [(d["method"], d["params"]["workspace"], d["params"]["dropped"]) for d in decoded]


async def test_a_full_outbox_drops_what_it_holds_and_sends_one_resync_per_workspace() -> None:
    session = Session(capacity=3)
    session.offer("/a", _frame(0))
    session.offer("/b", _frame(1))
    session.offer("/a", _frame(2))  # the outbox is full
    for n in range(3, 7):
        session.offer("/a", _frame(n))  # the first drops all three queued frames
    session.offer("/b", _frame(99))  # /b is resyncing: dropped too (1 + 1)
    sent = await _pump(session, 2)
    assert _resyncs(sent) == [("resync", "/a", 6), ("resync", "/b", 2)]
    assert "call `list`" in msgspec.json.decode(sent[0])["params"]["message"]


async def test_the_outbox_is_bounded_in_bytes_too() -> None:
    frame = _frame(0)
    session = Session(capacity=1000, capacity_bytes=3 * len(frame))
    for _ in range(3):
        session.offer("/a", frame)
    assert session.queued_bytes == 3 * len(frame)
    session.offer("/a", frame)  # one byte over: the queue goes, and a resync is owed
    assert session.queued_bytes == 0
    assert _resyncs(await _pump(session, 1)) == [("resync", "/a", 4)]


async def test_one_notification_larger_than_the_byte_bound_still_goes_out() -> None:
    big = notification_frame("changed", p.Resync(workspace="/w", dropped=0, message="x" * 5000))
    session = Session(capacity_bytes=1000)
    session.offer("/w", big)
    assert await _pump(session, 1) == [big]


async def test_after_a_resync_new_changes_flow_again() -> None:
    session = Session(capacity=2)
    for n in range(3):
        session.offer("/a", _frame(n))  # the third overflows: all three are dropped
    sent: list[bytes] = []
    got_one = anyio.Event()

    async def send(frame: bytes) -> None:
        sent.append(frame)
        if len(sent) == 1:
            got_one.set()
        if len(sent) == 3:
            tg.cancel_scope.cancel()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.pump, send)
            await got_one.wait()
            session.offer("/a", _frame(2))
            session.offer("/a", _frame(3))
    assert _resyncs(sent[:1]) == [("resync", "/a", 3)]
    assert sent[1:] == [_frame(2), _frame(3)]


def test_close_unsubscribes_from_every_feed() -> None:
    class FakeFeed:
        def __init__(self, root: str) -> None:
            self.root = root
            self.unsubscribed: list[Session] = []

        def unsubscribe(self, session: Session) -> bool:
            self.unsubscribed.append(session)
            return True

    session = Session()
    feeds = [FakeFeed("/a"), FakeFeed("/b")]
    for feed in feeds:
        session.feeds[feed.root] = feed
    session.close()
    assert all(feed.unsubscribed == [session] for feed in feeds)
    assert session.feeds == {}
