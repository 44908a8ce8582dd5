"""The wire protocol over a real socket: framing limits, domain errors, pipelining."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from memd_client.errors import ServerBusy
from tests.conftest import DaemonProcess, start_daemon, store_frames


def connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(str(path))
    return sock


def read_lines(sock: socket.socket, count: int) -> list[Any]:
    buffer = b""
    while buffer.count(b"\n") < count:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer += chunk
    return [msgspec.json.decode(line) for line in buffer.split(b"\n") if line.strip()]


def rpc(path: Path, method: str, params: dict[str, Any], request_id: Any = 1) -> Any:
    """Send one request on a fresh connection and return the decoded reply."""
    request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    with connect(path) as sock:
        sock.sendall(msgspec.json.encode(request) + b"\n")
        (reply,) = read_lines(sock, 1)
    return reply


def test_oversize_frame_gets_32600_and_the_connection_closes(daemon: DaemonProcess) -> None:
    with connect(daemon.socket_path) as sock:
        sock.sendall(
            b'{"jsonrpc":"2.0","method":"status","id":1,"pad":"' + b"x" * (1024 * 1024 + 10)
        )
        replies = read_lines(sock, 1)
        assert replies[0]["error"]["code"] == -32600
        assert "1048576" in replies[0]["error"]["message"]
        assert sock.recv(10) == b""


def test_pipelined_requests_all_get_answers(daemon: DaemonProcess, workspace: Path) -> None:
    with connect(daemon.socket_path) as sock:
        frames = store_frames(workspace, "Quirk", 20, prefix="Pipelined")
        sock.sendall(frames)
        replies = read_lines(sock, 20)
    assert sorted(r["id"] for r in replies) == list(range(20))
    assert all(r["result"]["action"] == "stored" for r in replies)


@pytest.mark.parametrize(
    ("params", "code", "needle"),
    [
        ({"category": "Nope", "content": "x"}, 1001, "Unknown category"),
        ({"category": "Quirk", "content": ""}, 1003, "empty"),
        ({"category": "Quirk", "content": "x", "slug": "Bad Slug"}, 1003, "kebab"),
        ({"category": "Quirk", "content": "x", "colour": "red"}, -32602, "colour"),
        ({"category": "Quirk"}, -32602, "content"),
    ],
)
def test_domain_errors_have_positive_codes(
    daemon: DaemonProcess, workspace: Path, params: dict[str, Any], code: int, needle: str
) -> None:
    reply = rpc(daemon.socket_path, "store", {"workspace": str(workspace), **params}, "r")
    assert reply["id"] == "r"
    assert reply["error"]["code"] == code
    assert needle in reply["error"]["message"]


def test_unreadable_category_file_is_reported_and_left_alone(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "quirks.md").write_bytes(b"# Quirk\n\n- [bad] caf\xe9\n")
    params = {"workspace": str(workspace), "category": "Quirk", "content": "New one."}
    reply = rpc(daemon.socket_path, "store", params)
    assert reply["error"]["code"] == 1004
    assert "UTF-8" in reply["error"]["message"]
    assert (memory / "quirks.md").read_bytes() == b"# Quirk\n\n- [bad] caf\xe9\n"


def test_cleanup_with_an_unreadable_file_reports_1004(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "quirks.md").write_bytes(b"- [bad] caf\xe9\n")
    reply = rpc(daemon.socket_path, "cleanup", {"workspace": str(workspace)})
    assert reply["error"]["code"] == 1004


def test_replies_larger_than_the_socket_buffer_arrive_whole_and_in_order(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    lines = "".join(f"- [rule-{n}] Rule number {n} says {'x' * 200}\n" for n in range(3000))
    (memory / "quirks.md").write_text("# Quirks\n\n" + lines)
    listing = {"workspace": str(workspace)}
    requests = b"".join(
        msgspec.json.encode(
            {"jsonrpc": "2.0", "id": n, "method": "list" if n % 2 else "status", "params": p}
        )
        + b"\n"
        for n, p in enumerate([{}, listing, {}, listing, {}])
    )
    with connect(daemon.socket_path) as sock:
        sock.sendall(requests)
        replies = read_lines(sock, 5)  # reads slowly: each list reply is about 700 KB
    assert [reply["id"] for reply in replies] == [0, 1, 2, 3, 4]  # quick reads: in order
    assert [len(reply["result"]["entries"]) for reply in replies if reply["id"] % 2] == [3000] * 2


def test_a_request_left_half_sent_is_closed_after_the_frame_timeout(short_tmp: Path) -> None:
    config = short_tmp / "config.toml"
    config.write_text("frame_timeout = 0.5\n")
    server = start_daemon(short_tmp, "--config", str(config))
    try:
        with connect(server.socket_path) as stalled:
            stalled.sendall(b'{"jsonrpc":"2.0","id":1,"method":"sta')
            (reply,) = read_lines(stalled, 1)
            assert reply["error"]["code"] == -32600
            assert "incomplete" in reply["error"]["message"]
            assert stalled.recv(10) == b""
        # An idle connection between requests is fine, and others are served meanwhile.
        assert rpc(server.socket_path, "status", {})["result"]["pid"] == server.process.pid
    finally:
        assert server.stop() == 0


def test_a_client_over_the_connection_limit_is_told_and_closed(short_tmp: Path) -> None:
    config = short_tmp / "config.toml"
    config.write_text("max_connections = 2\n")
    server = start_daemon(short_tmp, "--config", str(config))
    try:
        first, second = connect(server.socket_path), connect(server.socket_path)
        for sock in (first, second):  # both are being served
            sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"status"}\n')
            assert read_lines(sock, 1)[0]["result"]["pid"] == server.process.pid
        with connect(server.socket_path) as third:
            (reply,) = read_lines(third, 1)
            assert reply["error"]["code"] == ServerBusy.code
            assert "2 connections" in reply["error"]["message"]
        first.close()
        deadline = time.monotonic() + 10
        while True:  # the slot frees once the daemon has seen the close
            reply = rpc(server.socket_path, "status", {})
            if "result" in reply or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert reply["result"]["pid"] == server.process.pid
        second.close()
    finally:
        assert server.stop() == 0


def test_invalid_utf8_inside_params_is_answered_and_the_connection_goes_on(
    daemon: DaemonProcess, workspace: Path
) -> None:
    bad = (
        b'{"jsonrpc":"2.0","id":"bad","method":"store","params":{"workspace":"'
        + str(workspace).encode()
        + b'","category":"Quirk","content":"caf\xe9 \xff"}}\n'
    )
    with connect(daemon.socket_path) as sock:
        sock.sendall(bad + store_frames(workspace, "Quirk", 30, prefix="After"))
        replies = read_lines(sock, 31)
    by_id = {reply["id"]: reply for reply in replies}
    assert by_id["bad"]["error"]["code"] == -32700
    assert "UTF-8" in by_id["bad"]["error"]["message"]
    assert sorted(k for k in by_id if k != "bad") == list(range(30))
    assert all(by_id[n]["result"]["action"] == "stored" for n in range(30))


def _big_category(workspace: Path, entries: int) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    lines = "".join(f"- [rule-{n}] Rule number {n} says {'x' * 100}.\n" for n in range(entries))
    (memory / "quirks.md").write_text("# Quirks\n\n" + lines)


def _list_batch(workspace: Path, count: int) -> bytes:
    params = {"workspace": str(workspace), "category": "Quirk"}
    items = [{"jsonrpc": "2.0", "id": n, "method": "list", "params": params} for n in range(count)]
    return msgspec.json.encode(items) + b"\n"


def _read_frame(sock: socket.socket) -> bytes:
    buffer = bytearray()
    while not buffer.endswith(b"\n"):
        chunk = sock.recv(1 << 20)
        assert chunk, "the daemon closed the connection"
        buffer += chunk
    return bytes(buffer)


def test_a_megabyte_batch_of_lists_gets_one_short_error_not_a_huge_reply(
    daemon: DaemonProcess, workspace: Path
) -> None:
    _big_category(workspace, 120)  # each listing is about 18 KB: ~10,000 of them made 230 MB
    batch = _list_batch(workspace, 9_000)
    assert len(batch) > 900_000
    with connect(daemon.socket_path) as sock:
        sock.sendall(batch)
        reply = _read_frame(sock)
        assert len(reply) < 1000
        error = msgspec.json.decode(reply)["error"]
        assert error["code"] == -32600
        assert "at most 64 requests" in error["message"]
        sock.sendall(_list_batch(workspace, 2))  # the connection goes on
        assert [r["id"] for r in msgspec.json.decode(_read_frame(sock))] == [0, 1]
    assert rpc(daemon.socket_path, "status", {})["result"]["pid"] == daemon.process.pid


def test_a_full_batch_of_big_lists_gets_a_bounded_reply_while_others_are_served(
    daemon: DaemonProcess, workspace: Path
) -> None:
    from memd.server.rpc.dispatch import ALWAYS_KEPT_BYTES, MAX_BATCH_REPLY_BYTES

    _big_category(workspace, 8_000)  # about 1 MB; each listing about 1.2 MB
    with connect(daemon.socket_path) as big, connect(daemon.socket_path) as other:
        big.sendall(_list_batch(workspace, 64))
        other.sendall(b'{"jsonrpc":"2.0","id":"s","method":"status"}\n')
        assert msgspec.json.decode(_read_frame(other))["result"]["pid"] == daemon.process.pid
        reply = _read_frame(big)
    assert len(reply) <= MAX_BATCH_REPLY_BYTES + 64 * ALWAYS_KEPT_BYTES
    responses = msgspec.json.decode(reply)
    assert sorted(r["id"] for r in responses) == list(range(64))
    listed = [r for r in responses if "result" in r]
    left_out = [r["error"] for r in responses if "error" in r]
    assert listed and all(len(r["result"]["entries"]) == 8_000 for r in listed)
    assert left_out and all(e["code"] == -32600 for e in left_out)
    assert all("smaller batch" in e["message"] for e in left_out)


def test_results_name_their_workspace_and_a_store_says_when_it_created_memory(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock, root = daemon.socket_path, str(workspace.resolve())
    spelled = workspace.parent / "link"
    spelled.symlink_to(workspace)  # the daemon answers with the real path, however it is spelled
    base = {"workspace": str(spelled), "category": "Quirk"}

    dry = rpc(sock, "store", {**base, "content": "Dry runs write nothing.", "dry_run": True})
    assert dry["result"]["workspace"] == root
    assert dry["result"]["created_memory_dir"] is False
    assert not (workspace / ".memory").exists()
    listed = rpc(sock, "list", {"workspace": str(workspace)})["result"]
    assert listed["workspace"] == root and listed["entries"] == []
    assert not (workspace / ".memory").exists()  # reads never create it

    first = rpc(sock, "store", {**base, "content": "The first store makes the directory."})
    assert first["result"]["action"] == "stored"
    assert first["result"]["workspace"] == root
    assert first["result"]["created_memory_dir"] is True
    assert (workspace / ".memory" / "quirks.md").is_file()
    second = rpc(sock, "store", {**base, "content": "A second store finds it there."})
    assert second["result"]["created_memory_dir"] is False

    for method, params in [
        ("query", {"query": "store"}),
        ("get", {"slug": "no-such-slug-here", "category": "Quirk"}),
        ("get", {"file": "quirks.md", "lines": "1-9"}),
        ("delete", {"category": "Quirk", "slug": "no-such-slug"}),
        ("cleanup", {}),
        ("context", {"text": "store"}),
        ("stats", {}),
    ]:
        reply = rpc(sock, method, {"workspace": str(spelled), **params})
        if method == "get" and "slug" in params:
            assert reply["error"]["code"] == 1002  # not found: no result to carry it
            continue
        assert reply["result"]["workspace"] == root, method

    other = workspace.parent / "other"
    other.mkdir()
    text = "Never commit .env files. We always deploy with Helm."
    found = rpc(sock, "extract", {"workspace": str(other), "text": text, "store": True})
    result = found["result"]
    assert result["workspace"] == str(other.resolve())
    assert result["created_memory_dir"] is True
    assert [c["stored"]["created_memory_dir"] for c in result["candidates"]] == [True, False]
    assert (other / ".memory").is_dir()
