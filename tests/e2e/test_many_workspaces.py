"""A real daemon serving many workspaces: one inotify instance, no thread per workspace, idle
workspaces unloaded (watches removed) and loaded again on the next request."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from memd_client import Client, protocol as p
from tests.conftest import start_daemon

MANY = 300
"""More than the 128 inotify instances a user commonly may have."""
DEADLINE = 20.0


def inotify_instances(pid: int) -> list[str]:
    """Return the fd numbers of process `pid` that are inotify instances."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify":
                found.append(fd)
        except OSError:
            continue
    return found


def inotify_watches(pid: int) -> int:
    """Return how many inotify watches process `pid` holds (one fdinfo line per watch)."""
    total = 0
    for fd in inotify_instances(pid):
        with open(f"/proc/{pid}/fdinfo/{fd}") as info:
            total += sum(1 for line in info if line.startswith("inotify wd:"))
    return total


def threads(pid: int) -> int:
    """Return the number of threads of process `pid`."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads: line")


def until(check: object, what: str) -> None:
    """Poll `check()` until it is true, failing after DEADLINE seconds."""
    assert callable(check)
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {DEADLINE} s"
        time.sleep(0.05)


def test_hundreds_of_workspaces_share_one_inotify_instance_and_no_threads(
    short_tmp: Path,
) -> None:
    roots = [short_tmp / f"w{n}" for n in range(MANY)]
    for root in roots:
        (root / ".memory").mkdir(parents=True)
    daemon = start_daemon(short_tmp)
    try:
        pid = daemon.process.pid
        with Client(daemon.socket_path, timeout=60) as client:
            for root in roots[:10]:
                client.stats(workspace=root)
            threads_at_ten = threads(pid)
            for root in roots[10:]:
                client.stats(workspace=root)
            status = client.status()
            assert len(status.workspaces) == MANY
            assert (status.watch_mode, status.workspaces_watched) == ("inotify", MANY)
            assert len(inotify_instances(pid)) == 1
            assert inotify_watches(pid) == 2 * MANY  # `.memory` and the root of each
            # No thread per workspace: 290 more workspaces add at most the worker threads
            # anyio may start anyway (its default limit is 40).
            assert threads(pid) <= threads_at_ten + 40 < MANY
            # And the last one loaded is really watched: an outside edit reaches a subscriber.
            seen: list[p.Event] = []
            arrived = threading.Event()

            def on_event(event: p.Event) -> None:
                seen.append(event)
                if isinstance(event, p.Changed) and event.source == "external":
                    arrived.set()

            with client.subscribe(on_event, workspace=roots[-1]):
                (roots[-1] / ".memory" / "quirks.md").write_text("- [edit] Made by hand.\n")
                assert arrived.wait(DEADLINE), seen
    finally:
        assert daemon.stop() == 0, daemon.stderr()


def test_an_idle_workspace_unloads_and_comes_back_on_the_next_request(
    short_tmp: Path,
) -> None:
    (short_tmp / "config.toml").write_text("idle_unload_seconds = 0.3\n")
    root, busy = short_tmp / "project", short_tmp / "subscribed"
    root.mkdir()
    (busy / ".memory").mkdir(parents=True)
    daemon = start_daemon(short_tmp, "--config", str(short_tmp / "config.toml"))
    try:
        pid = daemon.process.pid
        with Client(daemon.socket_path, workspace=root, timeout=30) as client:
            client.store(category="Decision", content="Keep the release notes short.")
            with client.subscribe(lambda event: None, workspace=busy):
                assert inotify_watches(pid) == 4
                until(lambda: client.status().workspaces == [str(busy)], "the unload")
                # Out of the registry at once; counted once it has stopped (its actors and
                # builders end a moment later).
                until(lambda: client.status().workspaces_unloaded == 1, "the unload's end")
                status = client.status()
                assert status.workspaces_unloaded == 1
                assert inotify_watches(pid) == 2  # the subscribed one keeps its two
                assert "unloaded idle workspace" in daemon.stderr()
                # The next request loads it again, with everything it held.
                listed = client.list()
                assert [e.content for e in listed.entries] == ["Keep the release notes short."]
                assert sorted(client.status().workspaces) == sorted([str(root), str(busy)])
                stored = client.store(category="Decision", content="Tag every release.")
                assert stored.action == "stored"
            # Unsubscribed (the connection closed): now both go.
            until(lambda: client.status().workspaces == [], "the second unload")
            assert inotify_watches(pid) == 0
            decisions = (root / ".memory" / "decisions.md").read_text()
            assert (
                "Keep the release notes short." in decisions and "Tag every release." in decisions
            )
    finally:
        assert daemon.stop() == 0, daemon.stderr()
