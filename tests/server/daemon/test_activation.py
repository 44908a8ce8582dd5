"""Adopting a socket from systemd (LISTEN_FDS) or launchd (launch_activate_socket, faked at the
ctypes boundary with C-callable functions of the real signatures)."""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.server.daemon.activation import (
    ActivationError,
    inherited_socket,
    launchd_fds,
    systemd_fds,
)

ACTIVATE = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.POINTER(ctypes.POINTER(ctypes.c_int)),
    ctypes.POINTER(ctypes.c_size_t),
)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class FakeLibSystem:
    """Stands in for libSystem: `launch_activate_socket` and `free`, called through ctypes."""

    def __init__(self, fds: list[int], error: int = 0) -> None:
        self.names: list[bytes] = []
        self.freed: list[int | None] = []
        self._array = (ctypes.c_int * max(len(fds), 1))(*fds)

        def activate(name: bytes, fds_out: Any, count_out: Any) -> int:
            self.names.append(name)
            if error:
                return error
            fds_out[0] = ctypes.cast(self._array, ctypes.POINTER(ctypes.c_int))
            count_out[0] = len(fds)
            return 0

        def free(pointer: int | None) -> None:
            self.freed.append(pointer)

        self.launch_activate_socket = ACTIVATE(activate)
        self.free = FREE(free)

    @property
    def array_address(self) -> int:
        return ctypes.addressof(self._array)


@pytest.fixture
def listening(short_tmp: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(short_tmp / "l.sock"))
    sock.listen()
    yield sock
    sock.close()


def test_systemd_fds_are_taken_only_for_this_pid_and_the_variables_are_cleared() -> None:
    environ = {"LISTEN_PID": "41", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "memd.socket", "X": "y"}
    assert systemd_fds(environ, 41) == [3, 4]
    assert environ == {"X": "y"}
    other = {"LISTEN_PID": "41", "LISTEN_FDS": "1"}
    assert systemd_fds(other, 42) == []
    assert other == {}
    assert systemd_fds({}, 42) == []


@pytest.mark.parametrize("value", ["0", "-1", "three"])
def test_a_bad_listen_fds_says_which_setting_to_check(value: str) -> None:
    with pytest.raises(ActivationError, match="ListenStream="):
        systemd_fds({"LISTEN_PID": "7", "LISTEN_FDS": value}, 7)


def test_launchd_fds_come_through_the_c_call_and_the_array_is_freed() -> None:
    lib = FakeLibSystem([7, 9])
    assert launchd_fds("Listener", lib) == [7, 9]
    assert lib.names == [b"Listener"]
    assert lib.freed == [lib.array_address]


@pytest.mark.parametrize("error", [errno.ESRCH, errno.ENOENT])
def test_not_a_launchd_job_means_no_socket(error: int) -> None:
    lib = FakeLibSystem([], error=error)
    assert launchd_fds("Listener", lib) == []
    assert lib.freed == []


def test_other_launchd_errors_are_reported() -> None:
    with pytest.raises(ActivationError, match="Sockets key"):
        launchd_fds("Listener", FakeLibSystem([], error=errno.EALREADY))


def test_launchd_socket_is_adopted_on_macos(listening: socket.socket) -> None:
    fd = os.dup(listening.fileno())
    lib = FakeLibSystem([fd])
    adopted = inherited_socket({}, platform="darwin", libsystem=lib)
    assert adopted is not None
    try:
        assert adopted.manager == "launchd"
        assert adopted.path == listening.getsockname()
        assert adopted.sock.fileno() == fd
        assert not os.get_inheritable(fd)
    finally:
        adopted.sock.close()


def test_launchd_is_not_asked_on_linux() -> None:
    lib = FakeLibSystem([], error=errno.EALREADY)
    assert inherited_socket({}, platform="linux", libsystem=lib) is None
    assert lib.names == []


def test_a_socket_that_does_not_listen_is_refused(short_tmp: Path) -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    right.close()
    fd = left.detach()
    with pytest.raises(ActivationError, match="not a listening Unix stream socket"):
        inherited_socket({}, platform="darwin", libsystem=FakeLibSystem([fd]))
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)  # closed by the refusal


def test_extra_sockets_are_closed(listening: socket.socket, short_tmp: Path) -> None:
    first = os.dup(listening.fileno())
    extra = os.dup(listening.fileno())
    adopted = inherited_socket({}, platform="darwin", libsystem=FakeLibSystem([first, extra]))
    assert adopted is not None
    adopted.sock.close()
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(extra)
