"""One connection's in-flight cap (`memd.server.rpc.connection`): at most MAX_IN_FLIGHT requests
run at once, each request of a batch counted; the next frame is read only when a slot frees, and
every request held back still gets its reply. Real sockets, a real dispatcher, handlers that
wait until the test lets them go."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import msgspec
from anyio.abc import SocketStream

from memd.config import Settings
from memd.server.rpc.connection import MAX_IN_FLIGHT, Connection
from memd.server.rpc.dispatch import Dispatcher
from memd.server.rpc.session import Session
from tests.polling import until


class HoldParams(msgspec.Struct, forbid_unknown_fields=True):
    n: int


class Held:
    """A method that records each call as it starts and returns only once released."""

    def __init__(self, count: int) -> None:
        self.started: list[int] = []
        self.gates = [anyio.Event() for _ in range(count)]

    async def hold(self, params: HoldParams, session: Session) -> int:
        self.started.append(params.n)
        await self.gates[params.n].wait()
        return params.n

    def release_all(self) -> None:
        for gate in self.gates:
            gate.set()


class Host:
    """The daemon as a connection sees it: default settings, reading until told otherwise."""

    def __init__(self) -> None:
        self.settings = Settings()
        self.requests_waiting = 0

    def reading(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def shielded(self) -> contextlib.AbstractContextManager[anyio.CancelScope]:
        return anyio.CancelScope(shield=True)


def request(n: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"hold","params":{"n":%d}}' % (n, n)


def batch(*ns: int) -> bytes:
    return b"[" + b",".join(request(n) for n in ns) + b"]"


@contextlib.asynccontextmanager
async def serving(
    directory: Path, held: Held, host: Host
) -> AsyncIterator[tuple[Connection, SocketStream]]:
    """One `Connection` serving one client over a real Unix socket; yields it and the client."""
    path = directory / "c.sock"
    dispatcher = Dispatcher({"hold": (HoldParams, held.hold)})
    accepted: list[Connection] = []
    async with (
        await anyio.create_unix_listener(path) as listener,
        anyio.create_task_group() as group,
    ):

        async def serve_one() -> None:
            async with await listener.accept() as stream:
                connection = Connection(stream, dispatcher, host)
                accepted.append(connection)
                await connection.serve()

        group.start_soon(serve_one)
        client = await anyio.connect_unix(path)
        await until(lambda: accepted)
        try:
            yield accepted[0], client
        finally:
            held.release_all()
            await client.aclose()


async def replies(client: SocketStream, count: int) -> list[int]:
    """Read `count` reply lines and return their ids."""
    buffer = b""
    with anyio.fail_after(20):
        while buffer.count(b"\n") < count:
            buffer += await client.receive()
    lines = buffer.split(b"\n")[:count]
    return [msgspec.json.decode(line)["id"] for line in lines]


def reader_waits_for_a_slot(connection: Connection) -> bool:
    return connection.slots.statistics().tasks_waiting == 1


async def test_at_most_max_in_flight_requests_run_and_a_freed_slot_lets_the_next_one_in(
    short_tmp: Path,
) -> None:
    total = MAX_IN_FLIGHT + 3
    held, host = Held(total), Host()
    async with serving(short_tmp, held, host) as (connection, client):
        await client.send(b"".join(request(n) + b"\n" for n in range(total)))
        await until(lambda: len(held.started) == MAX_IN_FLIGHT)
        await until(lambda: reader_waits_for_a_slot(connection))
        # The reader is parked on the semaphore: nothing more can start until a slot frees.
        assert held.started == list(range(MAX_IN_FLIGHT))
        assert host.requests_waiting == MAX_IN_FLIGHT

        held.gates[5].set()
        assert await replies(client, 1) == [5]
        await until(lambda: len(held.started) == MAX_IN_FLIGHT + 1)
        await until(lambda: reader_waits_for_a_slot(connection))
        assert held.started[-1] == MAX_IN_FLIGHT
        assert host.requests_waiting == MAX_IN_FLIGHT

        held.release_all()
        assert sorted(await replies(client, total - 1)) == [n for n in range(total) if n != 5]
    assert host.requests_waiting == 0


async def test_a_batch_takes_a_slot_for_each_of_its_requests(short_tmp: Path) -> None:
    singles = MAX_IN_FLIGHT - 2  # two slots left, and the batch needs three
    batched = (singles, singles + 1, singles + 2)
    after = singles + 3
    held, host = Held(after + 1), Host()
    async with serving(short_tmp, held, host) as (connection, client):
        frames = [request(n) for n in range(singles)] + [batch(*batched), request(after)]
        await client.send(b"".join(frame + b"\n" for frame in frames))
        await until(lambda: len(held.started) == singles)
        await until(lambda: reader_waits_for_a_slot(connection))
        assert sorted(held.started) == list(range(singles))  # the batch waits for its third

        held.gates[0].set()
        await until(lambda: len(held.started) == singles + len(batched))
        await until(lambda: reader_waits_for_a_slot(connection))
        assert sorted(held.started[singles:]) == list(batched)  # and the single after it waits

        held.release_all()
        with anyio.fail_after(20):
            buffer = b""
            while buffer.count(b"\n") < singles + 2:  # the batch answers in one line
                buffer += await client.receive()
        answered = [msgspec.json.decode(line) for line in buffer.split(b"\n")[:-1]]
        ids = [
            item["id"]
            for reply in answered
            for item in (reply if isinstance(reply, list) else [reply])
        ]
        assert sorted(ids) == list(range(after + 1))
    assert host.requests_waiting == 0
