"""The archive append: all or nothing, never glued to a torn line, never into a FIFO, and
archive.md moved aside to a dated file once it would pass its cap (never deleted)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from memd.fs import storage
from memd_client.errors import FileFormatError, StorageError

HEADER = "# Archive\n\n"
FIRST = "- 2025-01-01 | Decision | deleted | [a] First."
SECOND = "- 2025-01-02 | Decision | deleted | [b] Two."
THIRD = "- 2025-01-03 | Decision | deleted | [c] Three."


def archive_in(tmp_path: Path) -> Path:
    memory = tmp_path / ".memory"
    memory.mkdir(exist_ok=True)
    return memory / "archive.md"


def test_a_new_archive_starts_with_the_header(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    storage.append_lines(str(path), ["- a", "- b"], header=HEADER)
    storage.append_lines(str(path), ["- c"], header=HEADER)
    assert path.read_text() == HEADER + "- a\n- b\n- c\n"


def test_disk_full_midway_leaves_the_archive_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = archive_in(tmp_path)
    storage.append_lines(str(path), [FIRST], header=HEADER)
    before = path.read_bytes()
    real_write = os.write
    calls = 0

    def disk_fills(fd: int, data: bytes | memoryview) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data)[:7])  # part of the record lands...
        raise OSError(errno.ENOSPC, "No space left on device")  # ...then the disk is full

    monkeypatch.setattr(os, "write", disk_fills)
    with pytest.raises(StorageError, match="free some disk space"):
        storage.append_lines(str(path), [SECOND], header=HEADER)
    monkeypatch.setattr(os, "write", real_write)
    assert path.read_bytes() == before  # no torn line
    storage.append_lines(str(path), [THIRD], header=HEADER)
    assert path.read_text().splitlines()[-2:] == [FIRST, THIRD]


def test_a_failed_fsync_takes_the_record_back_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = archive_in(tmp_path)
    storage.append_lines(str(path), ["- one"], header=HEADER)
    before = path.read_bytes()

    def fsync_fails(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync_fails)
    with pytest.raises(StorageError):
        storage.append_lines(str(path), ["- two"], header=HEADER)
    monkeypatch.undo()
    assert path.read_bytes() == before


@pytest.mark.parametrize("torn", ["- 2025-01-01 | Quirk | deleted | [x] Half a rec", "hand edit"])
def test_a_record_never_glues_onto_a_line_without_its_newline(tmp_path: Path, torn: str) -> None:
    path = archive_in(tmp_path)
    path.write_text(HEADER + torn)  # a torn line from before, or a hand edit without a newline
    storage.append_lines(str(path), [SECOND], header=HEADER)
    assert path.read_text().splitlines()[-2:] == [torn, SECOND]


def test_a_fifo_is_refused_at_once_naming_it(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    os.mkfifo(path)
    with pytest.raises(FileFormatError, match=r"archive\.md is not a regular file") as caught:
        storage.append_lines(str(path), ["- x"], header=HEADER)
    assert caught.value.data["path"] == str(path)


def test_a_fifo_with_a_reader_is_refused_too_and_gets_nothing(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    os.mkfifo(path)
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(FileFormatError, match="not a regular file"):
            storage.append_lines(str(path), ["- x"], header=HEADER)
        assert os.read(reader, 100) == b""  # nothing was written into it
    finally:
        os.close(reader)


def test_a_directory_or_socket_is_refused(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    path.mkdir()
    with pytest.raises(FileFormatError, match="not a regular file"):
        storage.append_lines(str(path), ["- x"], header=HEADER)


def test_reading_side_files_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "usage.json"
    os.mkfifo(fifo)
    done = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            storage.read_regular_bytes(str(fifo))
        except BaseException as exc:  # reported below
            errors.append(exc)
        done.set()

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    assert done.wait(10), "reading a FIFO blocked"
    assert isinstance(errors[0], OSError) and errors[0].errno == errno.EINVAL


# ---------------------------------------------------------------------------- the size cap


def test_a_full_archive_moves_to_a_dated_file_and_a_new_one_starts(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    storage.append_lines(str(path), ["- " + "a" * 60] * 10, header=HEADER)
    old = path.read_text()
    line = "- " + "b" * 60
    assert storage.move_aside_if_full(str(path), [line], 200, header=HEADER, date="2026-01-02") == (
        str(path.parent / "archive-2026-01-02.md")
    )
    storage.append_lines(str(path), [line], header=HEADER)
    assert (path.parent / "archive-2026-01-02.md").read_text() == old
    assert path.read_text() == HEADER + line + "\n"


def test_a_dated_name_taken_gets_a_number_and_nothing_is_overwritten(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    taken = path.parent / "archive-2026-01-02.md"
    taken.write_text("kept\n")
    (path.parent / "archive-2026-01-02-2.md").write_text("kept too\n")
    path.write_text(HEADER + "- old\n" * 50)
    moved = storage.move_aside_if_full(str(path), ["- new"], 100, header=HEADER, date="2026-01-02")
    assert moved == str(path.parent / "archive-2026-01-02-3.md")
    assert taken.read_text() == "kept\n"
    assert (path.parent / "archive-2026-01-02-2.md").read_text() == "kept too\n"
    assert not path.exists()


def test_under_the_cap_or_only_a_header_stays_put(tmp_path: Path) -> None:
    path = archive_in(tmp_path)
    assert storage.move_aside_if_full(str(path), ["- x"], 100, header=HEADER, date="d") is None
    path.write_text(HEADER)
    huge = ["- " + "x" * 500]  # one batch over the cap: written, never split or refused
    assert storage.move_aside_if_full(str(path), huge, 100, header=HEADER, date="d") is None
    path.write_text(HEADER + "- small\n")
    assert storage.move_aside_if_full(str(path), ["- x"], 100, header=HEADER, date="d") is None
    assert os.listdir(path.parent) == ["archive.md"]


def test_the_cap_is_a_setting_with_a_sane_floor() -> None:
    from memd.config import ConfigError, Settings, parse_config

    assert Settings().max_archive_bytes == 16 * 1024 * 1024
    assert parse_config("max_archive_bytes = 65536\n", "f.toml") == {"max_archive_bytes": 65536}
    with pytest.raises(ConfigError, match=r"max_archive_bytes .* at least 4096"):
        parse_config("max_archive_bytes = 10\n", "f.toml")
