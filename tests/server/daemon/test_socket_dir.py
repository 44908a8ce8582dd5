"""The socket's directory: memd starts only in one that no other user can write to or own."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from memd.server.daemon.instance import SocketPathError, check_socket_dir, prepare_socket_dir
from memd.server.rpc.peer import peer_allowed, uid_from_xucred


def test_a_missing_directory_is_created_private(tmp_path: Path) -> None:
    prepare_socket_dir(str(tmp_path / "run" / "memd.sock"))
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o1777])
def test_a_directory_others_may_write_to_is_refused(tmp_path: Path, mode: int) -> None:
    directory = tmp_path / "shared"
    directory.mkdir()
    directory.chmod(mode)
    with pytest.raises(SocketPathError, match="writable by other users"):
        prepare_socket_dir(str(directory / "memd.sock"))


def test_a_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SocketPathError, match="belongs to uid"):
        check_socket_dir(str(tmp_path), euid=os.geteuid() + 1)


def test_a_linked_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(SocketPathError, match="symbolic link"):
        prepare_socket_dir(str(tmp_path / "link" / "memd.sock"))


def _refusals(tmp_path: Path) -> list[str]:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    attempts: list[Callable[[], None]] = [
        lambda: prepare_socket_dir(str(shared / "x.sock")),
        lambda: check_socket_dir(str(tmp_path), euid=os.geteuid() + 1),
        lambda: prepare_socket_dir(str(tmp_path / "link" / "x.sock")),
    ]
    messages = []
    for attempt in attempts:
        with pytest.raises(SocketPathError) as refused:
            attempt()
        messages.append(str(refused.value))
    return messages


def test_a_refusal_never_proposes_changing_the_directory_only_another_one(tmp_path: Path) -> None:
    for message in _refusals(tmp_path):
        assert not any(word in message for word in ("chmod", "chown", "rm ", "remove it", "`")), (
            message
        )
        assert "--socket" in message and "directory of your own" in message, message


def test_a_private_directory_of_ones_own_is_fine(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir(mode=0o700)
    (tmp_path / "mine").chmod(0o755)  # readable by others is fine: they cannot swap the socket
    prepare_socket_dir(str(tmp_path / "mine" / "memd.sock"))


@pytest.mark.parametrize(
    ("peer", "own", "allow_root", "served"),
    [
        (1000, 1000, False, True),  # the daemon's own user
        (1001, 1000, False, False),  # another user
        (1001, 1000, True, False),  # allow_root lets root in, no one else
        (0, 1000, False, False),  # root, not configured
        (0, 1000, True, True),  # root, configured
        (0, 0, False, True),  # a root daemon serves root
        (1000, 0, True, False),  # and no one else
        (None, 1000, False, True),  # the OS cannot tell: the socket's modes keep others out
    ],
)
def test_who_is_served(peer: int | None, own: int, allow_root: bool, served: bool) -> None:
    assert peer_allowed(peer, own, allow_root=allow_root) is served


def test_the_uid_is_read_from_a_macos_xucred() -> None:
    groups = struct.pack("=h2x16I", 2, *range(16))
    assert uid_from_xucred(struct.pack("=II", 0, 501) + groups) == 501
    assert uid_from_xucred(struct.pack("=II", 1, 501) + groups) is None  # another layout
    assert uid_from_xucred(b"\0\0\0") is None
