"""The `memd` command against a real daemon: output, --json, and exit codes 0/1/2/3."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import DaemonProcess


def memd(*args: str, cwd: Path, socket: Path | None = None) -> subprocess.CompletedProcess[str]:
    prefix = ["--socket", str(socket)] if socket is not None else []
    return subprocess.run(
        [sys.executable, "-m", "memd", *prefix, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_store_query_list_get_delete_round_trip(daemon: DaemonProcess, workspace: Path) -> None:
    (workspace / ".git").mkdir()
    nested = workspace / "src" / "pkg"
    nested.mkdir(parents=True)
    sock = daemon.socket_path

    stored = memd(
        "store",
        "-c",
        "quirk",
        "--slug",
        "blind-watcher",
        "Watchfiles",
        "goes blind.",
        cwd=nested,
        socket=sock,
    )
    assert stored.returncode == 0, stored.stderr
    assert (
        stored.stdout.strip() == 'Stored in quirks.md as [blind-watcher]: "Watchfiles goes blind."'
    )
    assert (workspace / ".memory" / "quirks.md").exists()

    found = memd("query", "watchfiles", cwd=nested, socket=sock)
    assert "[Quirk] [blind-watcher] Watchfiles goes blind." in found.stdout

    as_json = json.loads(memd("query", "--json", "blind", cwd=nested, socket=sock).stdout)
    assert as_json["results"][0]["slug"] == "blind-watcher"

    listed = memd("list", cwd=nested, socket=sock)
    assert "Quirk (quirks.md)" in listed.stdout

    got = memd("get", "blind-watcher", cwd=nested, socket=sock)
    assert got.returncode == 0
    assert "Watchfiles goes blind." in got.stdout

    deleted = memd("delete", "-c", "Quirk", "blind-watcher", cwd=nested, socket=sock)
    assert deleted.returncode == 0
    assert "archive.md" in deleted.stdout
    again = memd("delete", "-c", "Quirk", "blind-watcher", cwd=nested, socket=sock)
    assert again.returncode == 1


def test_dry_run_stats_status_cleanup(daemon: DaemonProcess, workspace: Path) -> None:
    sock = daemon.socket_path
    dry = memd(
        "store",
        "--dry-run",
        "-c",
        "Decision",
        "Sockets live in the runtime dir.",
        cwd=workspace,
        socket=sock,
    )
    assert dry.stdout.startswith("Dry run, nothing written; would have done this: Stored in")
    assert not (workspace / ".memory").exists()
    stats = memd("stats", cwd=workspace, socket=sock)
    assert "Decision" in stats.stdout
    assert "Total" in stats.stdout
    status = json.loads(memd("status", "--json", cwd=workspace, socket=sock).stdout)
    assert status["pid"] == daemon.process.pid
    cleanup = memd("cleanup", cwd=workspace, socket=sock)
    assert cleanup.returncode == 0
    assert "already clean" in cleanup.stdout


def test_daemon_errors_exit_1_with_a_sentence(daemon: DaemonProcess, workspace: Path) -> None:
    result = memd("store", "-c", "Nonsense", "text", cwd=workspace, socket=daemon.socket_path)
    assert result.returncode == 1
    assert result.stderr.startswith("memd: Unknown category 'Nonsense'; use one of: Instruction")
    assert "Traceback" not in result.stderr


def test_usage_errors_exit_2(workspace: Path) -> None:
    assert memd("store", cwd=workspace).returncode == 2
    assert memd("frobnicate", cwd=workspace).returncode == 2
    assert memd(cwd=workspace).returncode == 2
    get = memd("get", cwd=workspace)
    assert get.returncode == 2
    assert get.stderr.startswith("usage: memd get ")  # get's own usage, not memd's
    assert "memd get: error: the following arguments are required: SLUG" in get.stderr
    typo = memd("stroe", "x", cwd=workspace)
    assert typo.returncode == 2
    assert typo.stderr.rstrip().endswith("did you mean `memd store`?")
    assert typo.stdout == get.stdout == ""
    bad_level = memd("serve", "--log-level", "nope", cwd=workspace)
    assert bad_level.returncode == 2
    assert "Traceback" not in bad_level.stderr


def test_json_errors_are_machine_readable(daemon: DaemonProcess, workspace: Path) -> None:
    result = memd("store", "--json", "-c", "Nope", "x", cwd=workspace, socket=daemon.socket_path)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == 1001


def test_unreachable_daemon_exits_3_and_says_how_to_start_it(
    short_tmp: Path, workspace: Path
) -> None:
    result = memd("query", "--no-autostart", "x", cwd=workspace, socket=short_tmp / "nobody.sock")
    assert result.returncode == 3
    assert "memd serve" in result.stderr
    too_long = memd("status", cwd=workspace, socket=short_tmp / ("x" * 120))
    assert too_long.returncode == 3
    assert "too long" in too_long.stderr


def test_json_entries_and_hits_always_say_their_source_and_list_has_no_text(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock = daemon.socket_path
    (workspace / ".git").mkdir()
    stored = memd(
        "store",
        "-c",
        "Decision",
        "--slug",
        "pool",
        "Keep the pool at 20.",
        cwd=workspace,
        socket=sock,
    )
    assert stored.returncode == 0, stored.stderr

    def run(*args: str) -> Any:
        done = memd(*args, "--json", cwd=workspace, socket=sock)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    listed = run("list")
    assert "text" not in listed
    assert [(e["slug"], e["source"], e["tags"]) for e in listed["entries"]] == [
        ("pool", "memory", [])
    ]
    hits = run("query", "pool")["results"]
    assert [(h["slug"], h["source"], h["match"]) for h in hits] == [("pool", "memory", "keyword")]
    got = run("get", "pool")
    assert [e["source"] for e in got["entries"]] == ["memory"]
    assert got["text"] == ""  # documented for `get`: a read-only source's lines
    block = run("context", "pool")
    assert [e["source"] for e in block["entries"]] == ["memory"]
