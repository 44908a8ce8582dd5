"""Who may connect: a client running as another user reaches the socket (its modes opened up
on purpose here) and is still refused, by its peer credentials."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import msgspec
import pytest

from memd_client import Client
from tests.conftest import DaemonProcess, wait_for_log

pytestmark = [
    pytest.mark.skipif(
        not hasattr(socket, "SO_PEERCRED") or os.geteuid() != 0,
        reason="needs SO_PEERCRED and root, to run a client as another user",
    ),
]

NOBODY = 65534


def exchange_as(uid: int, socket_path: Path) -> bytes:
    """Fork a child that drops to `uid`, connects and reads until the daemon closes; return
    what it read (the refusal comes unasked) or fail with what went wrong in the child."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only system calls, then _exit (no pytest machinery)
        status = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.settimeout(10)
                client.connect(str(socket_path))
                received = b""
                while chunk := client.recv(4096):
                    received += chunk
            os.write(write_end, b"ok " + received)
            status = 0
        except BaseException as exc:  # reported to the parent through the pipe
            os.write(write_end, f"failed {exc!r}".encode())
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    assert said.startswith(b"ok "), said.decode(errors="replace")
    return said[3:]


def test_a_client_of_another_user_is_refused_and_logged(
    daemon: DaemonProcess, short_tmp: Path, workspace: Path
) -> None:
    short_tmp.chmod(0o711)  # others may pass through (not write): the daemon still accepts it
    daemon.socket_path.chmod(0o666)  # so the kernel lets the connection through to memd
    reply = exchange_as(NOBODY, daemon.socket_path)
    error = msgspec.json.decode(reply)["error"]
    assert error["code"] == -32600
    assert error["message"].startswith(f"This memd serves uid 0, not uid {NOBODY};")
    wait_for_log(daemon, f"refused a connection from uid {NOBODY} (memd serves uid 0)")
    with Client(daemon.socket_path, workspace=workspace) as client:  # its own user: served
        assert client.status().pid == daemon.process.pid
