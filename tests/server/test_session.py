"""A session's outbox: in order, never blocking the publisher, and never dropping silently."""

from __future__ import annotations

import anyio
import msgspec

from memd.server.session import Session, notification_frame
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


async def test_a_full_outbox_drops_and_then_sends_one_resync_per_workspace() -> None:
    session = Session(capacity=3)
    for n in range(3):
        session.offer("/a", _frame(n))  # fills the outbox
    for n in range(3, 7):
        session.offer("/a", _frame(n))  # dropped: 4
    session.offer("/b", _frame(99))  # dropped: 1 (the outbox is still full)
    sent = await _pump(session, 5)
    assert sent[:3] == [_frame(n) for n in range(3)]
    resyncs = [msgspec.json.decode(frame) for frame in sent[3:]]
    assert [(r["method"], r["params"]["workspace"], r["params"]["dropped"]) for r in resyncs] == [
        ("resync", "/a", 4),
        ("resync", "/b", 1),
    ]
    assert "call `list`" in resyncs[0]["params"]["message"]


async def test_after_a_resync_new_changes_flow_again() -> None:
    session = Session(capacity=1)
    session.offer("/a", _frame(0))
    session.offer("/a", _frame(1))  # dropped
    sent: list[bytes] = []
    got_two = anyio.Event()

    async def send(frame: bytes) -> None:
        sent.append(frame)
        if len(sent) == 2:
            got_two.set()
        if len(sent) == 3:
            tg.cancel_scope.cancel()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.pump, send)
            await got_two.wait()
            session.offer("/a", _frame(2))
    assert sent[0] == _frame(0)
    assert msgspec.json.decode(sent[1])["method"] == "resync"
    assert sent[2] == _frame(2)


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
