"""Durable writes: atomic replace, mode kept, symlinks written through, nothing left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.server import storage
from memd_client.errors import StorageError


def test_a_write_replaces_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("old\n")
    path.chmod(0o640)
    fingerprint = storage.write_atomic(str(path), "new\n")
    assert path.read_text() == "new\n"
    assert path.stat().st_mode & 0o777 == 0o640
    assert fingerprint == storage.current_fingerprint(str(path))
    assert os.listdir(tmp_path) == ["quirks.md"]


def test_a_missing_memory_directory_is_created_but_never_its_parents(tmp_path: Path) -> None:
    storage.write_atomic(str(tmp_path / ".memory" / "quirks.md"), "x\n")
    assert (tmp_path / ".memory" / "quirks.md").read_text() == "x\n"
    assert (tmp_path / ".memory" / "quirks.md").stat().st_mode & 0o777 == storage.NEW_FILE_MODE
    with pytest.raises(StorageError):
        storage.write_atomic(str(tmp_path / "gone" / ".memory" / "quirks.md"), "x\n")
    assert not (tmp_path / "gone").exists()


def test_a_symlinked_file_is_written_through_to_its_target(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    target = tmp_path / "shared" / "quirks.md"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "quirks.md"
    link.symlink_to(target)
    storage.write_atomic(str(link), "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path / "shared")) == ["quirks.md"]


def test_a_file_in_a_symlinked_directory_is_replaced_in_that_directory(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    storage.write_atomic(str(tmp_path / "alias" / "quirks.md"), "one\n")
    storage.write_atomic(str(tmp_path / "alias" / "quirks.md"), "two\n")
    assert (tmp_path / "real" / "quirks.md").read_text() == "two\n"
    assert os.listdir(tmp_path / "real") == ["quirks.md"]


def test_a_failing_check_before_the_rename_leaves_the_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("old\n")

    def changed() -> None:
        raise storage.ChangedOnDisk(str(path))

    with pytest.raises(storage.ChangedOnDisk):
        storage.write_atomic(str(path), "new\n", before_replace=changed)
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["quirks.md"]
