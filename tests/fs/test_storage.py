"""Durable writes: atomic replace, mode kept, symlinks written through, nothing left behind."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from memd.fs import storage
from memd_client.errors import FileFormatError, StorageError


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


# A workspace's memory files: a cloned repository controls them, so links are never followed.


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text("export PATH=/usr/bin\n")
    return victim


def test_a_linked_memory_file_is_neither_read_nor_written(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    memory = tmp_path / "ws" / ".memory"
    memory.mkdir(parents=True)
    (memory / "decisions.md").symlink_to(victim)
    path = str(memory / "decisions.md")
    with pytest.raises(FileFormatError, match="symbolic link"):
        storage.read_text(path, follow_links=False)
    with pytest.raises(FileFormatError, match="symbolic link"):
        storage.write_atomic(path, "- [x] Pwned.\n", follow_links=False)
    assert victim.read_text() == "export PATH=/usr/bin\n"
    assert sorted(os.listdir(memory)) == ["decisions.md"]
    assert (memory / "decisions.md").is_symlink()


def test_a_linked_memory_directory_is_neither_read_nor_written(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".memory").symlink_to(victim.parent)
    (victim.parent / "decisions.md").write_text("- [a] Kept.\n")
    path = str(tmp_path / "ws" / ".memory" / "decisions.md")
    with pytest.raises(FileFormatError, match="symbolic link"):
        storage.read_text(path, follow_links=False)
    with pytest.raises(FileFormatError, match="symbolic link"):
        storage.write_atomic(path, "- [x] Pwned.\n", follow_links=False)
    with pytest.raises(FileFormatError, match="symbolic link"):
        storage.append_lines(path.replace("decisions.md", "archive.md"), ["x"], header="# A\n")
    assert sorted(os.listdir(victim.parent)) == [".bashrc", "decisions.md"]
    assert (victim.parent / "decisions.md").read_text() == "- [a] Kept.\n"
    assert storage.remove_debris(str(tmp_path / "ws" / ".memory")) == []


def test_a_linked_archive_is_not_appended_to(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    memory = tmp_path / "ws" / ".memory"
    memory.mkdir(parents=True)
    (memory / "archive.md").symlink_to(victim)
    with pytest.raises(FileFormatError, match="symbolic link"):
        storage.append_lines(str(memory / "archive.md"), ["- [x] Pwned."], header="# Archive\n")
    assert victim.read_text() == "export PATH=/usr/bin\n"


def test_a_file_over_its_size_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "quirks.md"
    path.write_text("- [a] " + "x" * 200 + "\n")
    with pytest.raises(FileFormatError, match="207 bytes, over the 100-byte cap") as raised:
        storage.read_text(str(path), follow_links=False, max_bytes=100)
    assert raised.value.data == {"path": str(path), "size": 207, "limit": 100}
    assert storage.read_text(str(path), max_bytes=207) is not None  # the cap itself is allowed
    assert storage.read_text(str(path)) is not None  # without a cap (not a workspace's file)


# --- a write staged before the lock ---------------------------------------------------------


def _memory_file(tmp_path: Path, text: str | None) -> tuple[Path, storage.Fingerprint | None]:
    memory = tmp_path / ".memory"
    memory.mkdir()
    path = memory / "decisions.md"
    if text is None:
        return path, None
    path.write_text(text)
    return path, storage.current_fingerprint(str(path))


def test_a_staged_write_lands_only_when_put_in_place(tmp_path: Path) -> None:
    path, read = _memory_file(tmp_path, "# Decisions\n")
    staged = storage.stage(str(path), "# Decisions\n\n- [a] New.\n", follow_links=False)
    assert path.read_text() == "# Decisions\n"  # staged: durable beside it, not yet in place
    fingerprint = staged.put_in_place(expected=read)
    staged.sync()
    staged.close()
    assert path.read_text() == "# Decisions\n\n- [a] New.\n"
    assert fingerprint == storage.current_fingerprint(str(path))
    assert os.listdir(path.parent) == ["decisions.md"]


def test_a_staged_write_never_replaces_a_version_it_was_not_made_from(tmp_path: Path) -> None:
    path, read = _memory_file(tmp_path, "# Decisions\n")
    staged = storage.stage(str(path), "# Decisions\n\n- [a] Mine.\n", follow_links=False)
    path.write_text("# Decisions\n\n- [b] Written by hand meanwhile.\n")
    with pytest.raises(storage.ChangedOnDisk):
        staged.put_in_place(expected=read)
    staged.close()  # not placed: the temp file goes, the hand edit stays
    assert path.read_text() == "# Decisions\n\n- [b] Written by hand meanwhile.\n"
    assert os.listdir(path.parent) == ["decisions.md"]


def _directory_fsyncs(monkeypatch: pytest.MonkeyPatch, *, fail: bool = False) -> list[int]:
    """Count (or fail) the fsyncs of directories; files are fsynced as usual."""
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            synced.append(fd)
            if fail:
                raise OSError(errno.EIO, "I/O error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def _staged_pair(tmp_path: Path) -> tuple[Path, Path, list[storage.Staged]]:
    memory = tmp_path / ".memory"
    memory.mkdir()
    first, second = memory / "decisions.md", memory / "quirks.md"
    group = [
        storage.stage(str(first), "# Decisions\n\n- [a] One.\n", follow_links=False),
        storage.stage(str(second), "# Quirks\n\n- [b] Two.\n", follow_links=False),
    ]
    for staged in group:
        staged.put_in_place(expected=None)
    return first, second, group


def test_renames_of_one_directory_are_made_durable_by_one_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes renamed before any of them syncs share one directory fsync (`synced`); without a
    shared record each write fsyncs the directory itself."""
    first, second, group = _staged_pair(tmp_path)
    synced = _directory_fsyncs(monkeypatch)
    shared: storage.DirectorySyncs = {}
    for staged in group:
        staged.sync(shared)
    assert len(synced) == 1
    for staged in group:
        staged.sync()
        staged.close()
    assert len(synced) == 3
    assert first.read_text() == "# Decisions\n\n- [a] One.\n"
    assert second.read_text() == "# Quirks\n\n- [b] Two.\n"


def test_a_failed_shared_directory_fsync_fails_every_write_it_covered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one fsync failing is every sharing write's failure: none is told it is durable."""
    _, _, group = _staged_pair(tmp_path)
    synced = _directory_fsyncs(monkeypatch, fail=True)
    shared: storage.DirectorySyncs = {}
    for staged in group:
        with pytest.raises(StorageError):
            staged.sync(shared)
        staged.close()
    assert len(synced) == 1


def test_a_staged_write_given_up_leaves_nothing(tmp_path: Path) -> None:
    path, _ = _memory_file(tmp_path, None)
    staged = storage.stage(str(path), "# Decisions\n", follow_links=False)
    staged.close()
    staged.close()  # idempotent
    assert os.listdir(path.parent) == []
