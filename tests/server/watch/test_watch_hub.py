"""The daemon's one watcher: inotify events parsed, a lost queue rescanned, and watches running
out handled with one warning and checks on access."""

from __future__ import annotations

import errno
import logging
import struct
import time
from pathlib import Path

import anyio
import pytest
from hypothesis import given, strategies as st

from memd.core.format.categories import Category
from memd.server.watch import inotify
from memd.server.watch.inotify import Event, Inotify, parse_events
from memd.server.workspaces.registry import Registry
from tests.polling import until

pytestmark = pytest.mark.skipif(not inotify.available(), reason="inotify is Linux only")


def _encode(event: Event) -> bytes:
    padded = event.name + b"\0" * (-len(event.name) % 16 or (16 if event.name else 0))
    return struct.pack("=iIII", event.wd, event.mask, 0, len(padded)) + padded


@given(
    st.lists(
        st.builds(
            Event,
            st.integers(-1, 2**31 - 1),
            st.integers(0, 2**32 - 1),
            st.binary(max_size=40).map(lambda name: name.replace(b"\0", b"")),
        ),
        max_size=20,
    )
)
def test_events_parse_back_as_the_kernel_packs_them(events: list[Event]) -> None:
    data = b"".join(_encode(event) for event in events)
    assert parse_events(data) == events
    assert parse_events(data[:-1]) == events[:-1]  # a cut tail is dropped, never misread


async def test_running_out_of_watches_warns_once_and_reads_still_see_outside_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    roots = [tmp_path / f"w{n}" for n in range(5)]
    for root in roots:
        (root / ".memory").mkdir(parents=True)
    real_add = Inotify.add_watch

    def add_watch(self: Inotify, path: str, mask: int = inotify.DIRECTORY_MASK) -> int:
        if "/w0" not in path:  # the first workspace gets its watches, then there are none left
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return real_add(self, path, mask)

    monkeypatch.setattr(Inotify, "add_watch", add_watch)
    caplog.set_level(logging.WARNING)
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        loaded = [await registry.get(str(root)) for root in roots]
        assert registry.watches.mode == "inotify"
        assert registry.watches.watched == 1
        assert [w.watcher.placement for w in loaded] == ["watched"] + ["full"] * 4
        warnings = [r for r in caplog.records if "out of inotify watches" in r.getMessage()]
        assert len(warnings) == 1
        # An unwatched workspace is checked on access: a read sees a hand edit at once.
        (roots[3] / ".memory" / "quirks.md").write_text("- [by-hand] Edited by hand.\n")
        await loaded[3].refresh([Category.QUIRK])
        assert [e.slug for e in loaded[3].actor(Category.QUIRK).snapshot.entries] == ["by-hand"]
        # The watched one notices edits by itself.
        (roots[0] / ".memory" / "quirks.md").write_text("- [noticed] Seen by the watch.\n")
        actor = loaded[0].actor(Category.QUIRK)
        await until(lambda: [e.slug for e in actor.snapshot.entries] == ["noticed"])
        registry.close()


async def test_a_lost_event_queue_rewatches_and_rescans_every_workspace(tmp_path: Path) -> None:
    roots = [tmp_path / f"w{n}" for n in range(4)]
    for root in roots:
        (root / ".memory").mkdir(parents=True)
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        *loaded, probe = [await registry.get(str(root)) for root in roots]
        hub = registry.watches
        for root, workspace in zip(roots, [*loaded, probe], strict=True):  # each one following
            (root / ".memory" / "security.md").write_text("- [ready] Watched.\n")
            actor = workspace.actor(Category.SECURITY)
            await until(lambda a=actor: len(a.snapshot.entries) == 1)
        # Lose the events of the first three (as when the kernel's queue overflows): their
        # watches are unknown to the hub while they are written to.
        lost = {wd for w in loaded for wd in w.watcher.wds.values()}
        hidden = {wd: hub._by_wd.pop(wd) for wd in lost}
        for root in roots[:3]:
            (root / ".memory" / "decisions.md").write_text("- [lost] Its event was lost.\n")
        # Events arrive in order: once the probe's is seen, the others were read and dropped.
        (roots[3] / ".memory" / "decisions.md").write_text("- [probe] Seen.\n")
        probed = probe.actor(Category.DECISION)
        await until(lambda: [e.slug for e in probed.snapshot.entries] == ["probe"])
        assert all(not w.actor(Category.DECISION).snapshot.entries for w in loaded)
        hub._by_wd.update(hidden)
        hub._dispatch(Event(-1, inotify.IN_Q_OVERFLOW, b""))  # what the kernel sends instead
        for workspace in loaded:
            actor = workspace.actor(Category.DECISION)
            await until(lambda a=actor: [e.slug for e in a.snapshot.entries] == ["lost"])
        # And the watches still work: a later edit is noticed without a read.
        (roots[1] / ".memory" / "decisions.md").write_text("- [later] After the rescan.\n")
        actor = loaded[1].actor(Category.DECISION)
        await until(lambda: [e.slug for e in actor.snapshot.entries] == ["later"])
        registry.close()


async def test_a_replaced_memory_directory_is_watched_again(tmp_path: Path) -> None:
    """`.memory` swapped for another directory by rename (a `git checkout`, a restore): the
    new one is watched, the old one's watch is gone."""
    (tmp_path / ".memory").mkdir()
    async with anyio.create_task_group() as services:
        registry = Registry(services, clock=time.time)
        workspace = await registry.get(str(tmp_path))
        first = dict(workspace.watcher.wds)
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        (fresh / "quirks.md").write_text("- [restored] From the restore.\n")
        (tmp_path / ".memory").rename(tmp_path / "old")
        fresh.rename(tmp_path / ".memory")
        actor = workspace.actor(Category.QUIRK)
        await until(lambda: [e.slug for e in actor.snapshot.entries] == ["restored"])
        await until(lambda: workspace.watcher.wds.get("memory") not in (None, first["memory"]))
        (tmp_path / ".memory" / "quirks.md").write_text("- [edited] Edited after the swap.\n")
        await until(lambda: [e.slug for e in actor.snapshot.entries] == ["edited"])
        assert first["memory"] not in registry.watches._by_wd  # the old one is let go
        registry.close()


def test_a_symlinked_memory_directory_is_never_watched_through(tmp_path: Path) -> None:
    """A cloned repository's `.memory` may point at any directory of yours: memd watches
    neither it nor its target (the root's watch sees the name come and go)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    link = tmp_path / ".memory"
    link.symlink_to(victim)
    watches = Inotify.open()
    try:
        with pytest.raises(NotADirectoryError):
            watches.add_watch(str(link))
    finally:
        watches.close()
