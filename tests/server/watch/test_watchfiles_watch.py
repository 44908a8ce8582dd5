"""The watchfiles fallback (`memd.server.watch.watchfiles_watch.ThreadedWatch`) with
`WATCHFILES_FORCE_POLLING` set, as on a network file system: a rescan of every category once the
watch is in place, the category of each file changed from outside (written in place or renamed
over), nothing for files that are not category files, no blindness once `.memory` is replaced,
a rescan once it appears, and a prompt stop. Real files, real watchfiles polling, in-process."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from memd.core.format.categories import CATEGORIES, Category
from memd.server.watch.watchfiles_watch import ThreadedWatch
from tests.polling import until

EVERY = frozenset(CATEGORIES)
OLD_MTIME = 1_000_000_000
"""The modification time (2001) the files edited in place start with. The poller compares
modification times in whole seconds, so an edit in the second the file was last written goes
unnoticed (watchfiles' polling, not memd's rule); an edit of a file from another second is seen."""


class Reports:
    """What the watcher reported, in order."""

    def __init__(self) -> None:
        self.seen: list[frozenset[Category]] = []

    async def on_change(self, categories: frozenset[Category]) -> None:
        self.seen.append(categories)

    def since(self, mark: int) -> set[Category]:
        return set().union(*self.seen[mark:])


@pytest.fixture(autouse=True)
def _force_polling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "1")


def poll_threads() -> int:
    """How many of watchfiles' polling threads this process runs (they end after their watch
    is closed, in their own time, and may hold a directory open until then); 0 without /proc."""
    tasks = Path("/proc/self/task")
    count = 0
    for task in os.listdir(tasks) if tasks.is_dir() else ():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            count += Path(f"/proc/self/task/{task}/comm").read_text().startswith("notify-rs poll")
    return count


@contextlib.asynccontextmanager
async def watching(root: Path) -> AsyncIterator[Reports]:
    """A running `ThreadedWatch` on `root`, stopped (and awaited) on exit, its polling thread
    gone before the next test (some count the process's open files)."""
    reports = Reports()
    watch = ThreadedWatch(str(root), str(root / ".memory"), reports.on_change)
    with anyio.fail_after(20):  # stopping takes about one STEP_MS; this only bounds a hang
        async with anyio.create_task_group() as group:
            await group.start(watch.run)
            try:
                yield reports
            finally:
                watch.stop()
    await until(lambda: poll_threads() == 0)


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


async def test_a_change_from_outside_reports_its_category_only(short_tmp: Path) -> None:
    memory = short_tmp / ".memory"
    memory.mkdir()
    for name in (".lock", "notes.txt", Category.DECISION.file, Category.QUIRK.file):
        (memory / name).write_text("")
        os.utime(memory / name, (OLD_MTIME, OLD_MTIME))
    async with watching(short_tmp) as reports:
        await until(lambda: EVERY in reports.seen)  # the rescan once the watch is in place
        mark = len(reports.seen)
        (memory / ".lock").write_text("{}")  # edits in place, which leave the directory as it is
        (memory / "notes.txt").write_text("not a category file")
        (memory / Category.DECISION.file).write_text("# Decisions\n\n- [a] A.\n")
        await until(lambda: Category.DECISION in reports.since(mark))
        assert reports.since(mark) == {Category.DECISION}  # the lock and the other file: nothing

        # A rename changes the directory too, which the poller reports as `.memory` itself
        # modified: the watch restarts and rescans, so more than the quirks may be reported.
        mark = len(reports.seen)
        write_atomically(memory / Category.QUIRK.file, "# Quirks\n\n- [b] B.\n")
        await until(lambda: Category.QUIRK in reports.since(mark))
        assert all(reports.seen)  # never an empty report


async def test_a_replaced_memory_directory_is_never_watched_blind(short_tmp: Path) -> None:
    memory = short_tmp / ".memory"
    memory.mkdir()
    (memory / Category.DECISION.file).write_text("# Decisions\n\n- [a] A.\n")
    async with watching(short_tmp) as reports:
        await until(lambda: EVERY in reports.seen)
        mark = len(reports.seen)
        shutil.rmtree(memory)
        memory.mkdir()  # often the same inode again, and no file to tell the two apart
        (memory / Category.SECURITY.file).write_text("# Security\n\n- [c] C.\n")
        await until(lambda: Category.SECURITY in reports.since(mark))

        # A directory prepared elsewhere and renamed over `.memory` (a checkout, a sync tool):
        # the files it brings are reported, and so are later changes inside it.
        incoming = short_tmp / "incoming"
        incoming.mkdir()
        (incoming / Category.QUIRK.file).write_text("# Quirks\n\n- [b] B.\n")
        mark = len(reports.seen)
        shutil.rmtree(memory)
        incoming.rename(memory)
        await until(lambda: {Category.QUIRK, Category.SECURITY} <= reports.since(mark))
        mark = len(reports.seen)
        (memory / Category.INSTRUCTION.file).write_text("# Instructions\n\n- [e] E.\n")
        await until(lambda: Category.INSTRUCTION in reports.since(mark))


async def test_a_memory_directory_that_appears_later_is_rescanned_and_watched(
    short_tmp: Path,
) -> None:
    async with watching(short_tmp) as reports:  # the root is watched until .memory appears
        await until(lambda: EVERY in reports.seen)
        mark = len(reports.seen)
        memory = short_tmp / ".memory"
        memory.mkdir()
        await until(lambda: EVERY in reports.seen[mark:])
        mark = len(reports.seen)
        (memory / Category.PREFERENCE.file).write_text("# Preferences\n\n- [d] D.\n")
        await until(lambda: Category.PREFERENCE in reports.since(mark))
