"""memd's own kinds (procedures.md, episodes.md) and a custom category beside HackLM's writer
(a real Node process, `hacklm_writer.js`) and a person's hand edits: every acknowledged entry
stays, every line someone else wrote stays byte for byte, and HackLM's file is untouched by
them."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from bench._text import word
from memd.core.format import mdformat
from memd_client import Client
from tests.conftest import DaemonProcess
from tests.e2e.test_hacklm_node import WAIT, Writer, writers

__all__ = ["writers"]  # the Node writers started here, a fixture

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

HAND_PROCEDURE = "- [restore-db] Restore the database: see the wiki, it changes too often"
HAND_EPISODE = "- An outage nobody dated; the CDN was at fault."
RUNBOOK_TOML = '[[categories]]\nname = "Runbook"\nfile = "runbooks.md"\nlimit = 100\n'


def _memd_writes(socket_path: Path, workspace: Path, stored: list[str]) -> None:
    with Client(socket_path, workspace=workspace) as client:
        for n in range(12):
            name = f"Release train {chr(ord('a') + n)}"
            result = client.procedure(name, [f"tag build {n}", "push the image", "notify #ops"])
            assert result.action == "stored", result.message
            stored.append(result.content)
            result = client.episode(
                f"Deploy {chr(ord('a') + n)} rolled back after the health check failed.",
                outcome="fixed",
            )
            assert result.action == "stored", result.message
            stored.append(result.content)
            result = client.store(
                category="Runbook", content=f"Rotate the {word(n, 3)} logs weekly."
            )
            assert result.action == "stored", result.message
            stored.append(result.content)


def test_memds_kinds_and_hacklms_writer_keep_every_line(
    daemon: DaemonProcess, workspace: Path, writers: list[Writer]
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    (memory / "memd.toml").write_text(RUNBOOK_TOML)
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.procedure("Deploy to staging", ["build the image", "push it"])
        client.episode("The first episode, before anyone edited the file.")
    # A person's own lines, in shapes memd would not write.
    for name, line in (("procedures.md", HAND_PROCEDURE), ("episodes.md", HAND_EPISODE)):
        with (memory / name).open("a") as handle:
            handle.write(line + "\n")
    writers.append(node := Writer("append", str(memory / "quirks.md"), "30", "node", "5"))
    stored: list[str] = []
    thread = threading.Thread(target=_memd_writes, args=(daemon.socket_path, workspace, stored))
    thread.start()
    thread.join(timeout=WAIT * 4)
    assert not thread.is_alive()
    assert node.finish(timeout=WAIT * 4) == 0, node.stderr()
    assert len(stored) == 36

    texts = {name: (memory / name).read_text() for name in ("procedures.md", "episodes.md")}
    assert HAND_PROCEDURE + "\n" in texts["procedures.md"]
    assert HAND_EPISODE + "\n" in texts["episodes.md"]
    on_disk = {
        entry.content
        for name in ("procedures.md", "episodes.md", "runbooks.md")
        for entry in mdformat.entries(mdformat.parse((memory / name).read_text()))
    }
    assert set(stored) <= on_disk
    quirks = mdformat.entries(mdformat.parse((memory / "quirks.md").read_text()))
    assert sorted(e.content for e in quirks) == sorted(
        f"node entry {n} unique-word-node{n}." for n in range(30)
    )
    # Re-reading what memd wrote gives the same bytes: the files round-trip.
    for name in ("procedures.md", "episodes.md", "runbooks.md"):
        text = (memory / name).read_text()
        assert mdformat.render(mdformat.parse(text)) == text
    with Client(daemon.socket_path, workspace=workspace) as client:
        listed = {e.content for e in client.list().entries}
    assert set(stored) <= listed
    assert "Restore the database: see the wiki, it changes too often" in listed
