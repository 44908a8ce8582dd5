"""What `memd mcp` without the SDK answers, and that its wait on stdin is always bounded: over
real pipes and a real terminal, in process."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from memd.mcp_bridge.missing_sdk import MAX_ANSWERS, missing_sdk_message, refusal, refuse_requests

MESSAGE = "memd mcp needs the MCP SDK; install it"
LONG = 60.0
"""A wait no test may sit through: finishing well inside it shows the wait was not needed."""


def request(id_: object, method: str = "server/discover") -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", "id": id_, "method": method}) + b"\n"


def error(id_: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": -32603, "message": MESSAGE}}


class Pipes:
    """A bridge's stdin and stdout as real pipes; the test holds the other ends."""

    def __init__(self) -> None:
        self.stdin, self.client_writes = os.pipe()
        self.client_reads, self.stdout = os.pipe()

    def send(self, data: bytes) -> None:
        os.write(self.client_writes, data)

    def end_input(self) -> None:
        os.close(self.client_writes)
        self.client_writes = -1

    def answers(self) -> list[object]:
        """The JSON lines written to stdout so far."""
        os.set_blocking(self.client_reads, False)
        try:
            data = os.read(self.client_reads, 1 << 20)
        except BlockingIOError:
            return []
        return [msgspec.json.decode(line) for line in data.splitlines()]

    def refuse(self, wait: float = LONG) -> int:
        return refuse_requests(MESSAGE, stdin=self.stdin, stdout=self.stdout, wait=wait)

    def close(self) -> None:
        for fd in (self.stdin, self.client_writes, self.client_reads, self.stdout):
            if fd != -1:
                os.close(fd)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    made = Pipes()
    yield made
    made.close()


def test_the_sentence_names_the_distribution_and_quotes_the_interpreter() -> None:
    python = "/opt/my tools/bin/python3"
    assert missing_sdk_message(python) == (
        "memd mcp needs the MCP SDK; install it into the Python memd runs from: "
        f"{shlex.quote(python)} -m pip install 'memd-daemon[mcp]'"
    )
    assert "'/opt/my tools/bin/python3' -m pip" in missing_sdk_message(python)
    assert missing_sdk_message("/usr/bin/python3", "No module named 'pydantic_core'").startswith(
        "memd mcp needs the MCP SDK (No module named 'pydantic_core'); install it"
    )


def test_without_pip_the_sentence_says_to_install_memd_again_with_the_extra() -> None:
    message = missing_sdk_message(
        "/home/me/.local/share/uv/tools/memd-daemon/bin/python", has_pip=False
    )
    assert "-m pip" not in message  # an environment `uv tool install` made has no pip
    assert "install memd again with the extra, 'memd-daemon[mcp]'" in message


def test_requests_are_refused_with_their_own_ids_and_the_rest_is_ignored() -> None:
    reply, initialize = refusal(request("a b"), MESSAGE)
    assert reply is not None and reply.endswith(b"\n")
    assert msgspec.json.decode(reply) == error("a b")
    assert not initialize
    assert refusal(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', MESSAGE) == (
        None,
        False,
    )
    assert refusal(b'{"jsonrpc": "2.0", "id": 7, "result": {}}', MESSAGE) == (None, False)
    assert refusal(b"not json", MESSAGE) == (None, False)
    batch = b'[{"jsonrpc": "2.0", "id": 1, "method": "initialize"}, {"method": "n"}]'
    reply, initialize = refusal(batch, MESSAGE)
    assert reply is not None and msgspec.json.decode(reply) == [error(1)]
    assert initialize


def test_answering_initialize_ends_the_wait_though_stdin_stays_open(pipes: Pipes) -> None:
    pipes.send(request(1) + b'{"method": "note"}\n' + request(2, "initialize"))
    began = time.monotonic()
    assert pipes.refuse() == 2
    assert time.monotonic() - began < LONG / 2
    assert pipes.answers() == [error(1), error(2)]


def test_end_of_input_ends_the_wait(pipes: Pipes) -> None:
    pipes.send(request(1))
    pipes.end_input()
    began = time.monotonic()
    assert pipes.refuse() == 1
    assert time.monotonic() - began < LONG / 2
    assert pipes.answers() == [error(1)]


def test_a_silent_client_is_waited_for_only_so_long(pipes: Pipes) -> None:
    assert pipes.refuse(wait=0.2) == 0
    assert pipes.answers() == []


def test_a_line_too_long_ends_the_wait(pipes: Pipes, tmp_path: Path) -> None:
    flood = tmp_path / "flood"
    flood.write_bytes(b"[" * (2 << 20) + b"\n" + request(1))  # more than a pipe holds
    fd = os.open(flood, os.O_RDONLY)
    try:
        assert refuse_requests(MESSAGE, stdin=fd, stdout=pipes.stdout, wait=LONG) == 0
    finally:
        os.close(fd)
    assert pipes.answers() == []


def test_answers_are_capped(pipes: Pipes) -> None:
    pipes.send(b"".join(request(n) for n in range(10)))
    assert pipes.refuse() == MAX_ANSWERS
    assert pipes.answers() == [error(n) for n in range(MAX_ANSWERS)]


def test_a_client_that_stopped_reading_ends_the_answers(pipes: Pipes) -> None:
    pipes.send(request(1) + request(2, "initialize"))
    os.close(pipes.client_reads)
    pipes.client_reads = -1
    assert pipes.refuse() == 0


def test_a_terminal_is_not_read() -> None:
    main, terminal = os.openpty()
    try:
        began = time.monotonic()
        assert refuse_requests(MESSAGE, stdin=terminal, stdout=terminal, wait=LONG) == 0
        assert time.monotonic() - began < LONG / 2
    finally:
        os.close(main)
        os.close(terminal)
