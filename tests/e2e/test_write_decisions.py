"""Write decisions through a real daemon: what a store reports (action, relation, conflict, the
old and new value, a sentence saying why), what reaches the file and the archive, slugs in every
script, and cleanup's reasons, in the client and on the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench._text import word
from memd.core.format import mdformat
from memd_client import Client
from tests.conftest import DaemonProcess


def test_a_changed_value_replaces_the_entry_and_names_the_old_value(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        first = client.store(category="Decision", content="CI runs on Node 20.")
        changed = client.store(category="Decision", content="CI runs on Node 22.")
    assert first.action == "stored"
    assert (changed.action, changed.conflict, changed.relation) == (
        "updated",
        True,
        "changed_value",
    )
    assert (changed.old_value, changed.new_value, changed.slug) == ("20", "22", first.slug)
    assert changed.message == (
        f"Updated [{first.slug}] in decisions.md, replacing a contradicting entry (conflict: the "
        'value changed from "20" to "22"): "CI runs on Node 22." (was: "CI runs on Node 20.", '
        "now in .memory/archive.md)"
    )
    text = (workspace / ".memory" / "decisions.md").read_text()
    assert [e.content for e in mdformat.entries(mdformat.parse(text))] == ["CI runs on Node 22."]
    archive = (workspace / ".memory" / "archive.md").read_text()
    assert f"replaced by a contradicting entry as [{first.slug}] (a new value)" in archive
    assert f"[{first.slug}] CI runs on Node 20." in archive


def test_a_repeat_is_skipped_and_another_subject_is_kept_beside(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            origin="user", category="Security", content="Rotate the Stripe key every 90 days."
        )
        again = client.store(
            origin="user", category="Security", content="rotate the `Stripe` key every 90 days"
        )
        other = client.store(
            origin="user", category="Security", content="Rotate the Twilio key every 90 days."
        )
        reversed_ = client.store(
            origin="user", category="Security", content="Never rotate the Twilio key."
        )
    assert (again.action, again.relation, again.conflict) == ("skipped", "same", False)
    assert again.message.endswith(
        "(the same rule, worded the same way); nothing written. To keep it anyway, store it "
        "again with a slug of its own."
    )
    assert (other.action, other.relation) == ("stored", "other_subject")
    assert (other.old_value, other.new_value) == ("Stripe", "Twilio")
    assert "(kept beside [" in other.message and '"Twilio" instead of "Stripe"' in other.message
    assert reversed_.action == "updated" and reversed_.relation == "reversed"
    assert "(conflict: it reverses the old rule)" in reversed_.message


def test_a_rule_without_the_entrys_limit_is_stored_as_a_wider_rule(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        narrow = client.store(
            category="Preference", content="Use tabs for indentation in Go files."
        )
        wide = client.store(category="Preference", content="Use tabs for indentation.")
    assert (wide.action, wide.relation) == ("stored", "other_subject")
    assert (wide.old_value, wide.new_value) == ("in Go files", None)
    assert wide.message.endswith(
        f'(kept beside [{narrow.slug}] "Use tabs for indentation in Go files.": a wider rule, '
        'without "in Go files")'
    )
    with Client(daemon.socket_path, workspace=workspace) as client:
        narrower = client.store(category="Preference", content="Use pnpm for the web app.")
        wider = client.store(category="Preference", content="Use pnpm.")
        again = client.store(category="Preference", content="Use pnpm for the web app.")
    assert (narrower.action, wider.action) == ("stored", "stored")
    assert again.action == "skipped"  # the narrower rule is still there, beside the wider one
    text = (workspace / ".memory" / "preferences.md").read_text()
    assert [e.content for e in mdformat.entries(mdformat.parse(text))] == [
        narrow.content,
        wide.content,
        narrower.content,
        wider.content,
    ]


def test_a_new_slug_is_never_skipped_and_a_narrowed_ban_is_kept(
    daemon: DaemonProcess, workspace: Path
) -> None:
    with Client(daemon.socket_path, workspace=workspace) as client:
        first = client.store(
            origin="user", category="Instruction", content="Never force-push to main."
        )
        named = client.store(
            origin="user",
            category="Instruction",
            content="never force-push to `main`",
            slug="no-force-push",
        )
        narrowed = client.store(
            origin="user",
            category="Instruction",
            content="Never force-push to main during a release freeze.",
        )
        fetched = client.get(slug="no-force-push")
    assert (named.action, named.relation, named.slug) == ("stored", "same", "no-force-push")
    assert "stored under the slug you gave" in named.message
    assert [entry.content for entry in fetched.entries] == ["never force-push to `main`"]
    assert (narrowed.action, narrowed.relation) == ("stored", "narrows")
    assert "a narrower ban; the wider one still holds" in narrowed.message
    text = (workspace / ".memory" / "instructions.md").read_text()
    contents = [e.content for e in mdformat.entries(mdformat.parse(text))]
    assert first.content in contents and narrowed.content in contents


def test_non_latin_memories_are_told_apart_and_slugged(
    daemon: DaemonProcess, workspace: Path
) -> None:
    texts = ["所有持久化数据放在 Postgres。", "缓存只放在 Redis。", "Логи храним 14 дней."]
    with Client(daemon.socket_path, workspace=workspace) as client:
        results = [client.store(category="Decision", content=text) for text in texts]
    assert [r.action for r in results] == ["stored", "stored", "stored"]
    slugs = [r.slug for r in results]
    assert len(set(slugs)) == 3 and "memory" not in slugs
    assert slugs[2] == "логи-храним-дней"


def test_the_command_line_says_why(daemon: DaemonProcess, workspace: Path) -> None:
    def memd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), *args],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert memd("store", "-c", "Preference", "Format Python with black.").returncode == 0
    changed = memd("store", "--json", "-c", "Preference", "Format Python with ruff format.")
    result = json.loads(changed.stdout)
    assert (result["relation"], result["old_value"], result["new_value"]) == (
        "changed_choice",
        "black",
        "ruff format",
    )
    shown = memd("store", "--dry-run", "-c", "Preference", "Format Python with yapf.")
    assert 'the choice changed from "ruff format" to "yapf"' in shown.stdout
    assert shown.stdout.startswith("Dry run, nothing written")

    (workspace / ".memory" / "quirks.md").write_text(
        "- [a] Avoid eval in templates\n- [b] Never use eval in templates\n"
    )
    plan = memd("cleanup")
    assert (
        '  fold   quirks.md:2 [b] "Never use eval in templates" into quirks.md:1: the same words'
        in (plan.stdout.splitlines())
    )
    with Client(daemon.socket_path, workspace=workspace) as client:
        (merge,) = client.cleanup().merged
    assert merge.why == ["the same words"]


def test_a_new_slug_that_contradicts_another_keeps_both_on_the_command_line(
    daemon: DaemonProcess, workspace: Path
) -> None:
    def memd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), *args],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=60,
        )

    web = memd("store", "-c", "Decision", "--slug", "node-version-web", "Use Node 20.")
    worker = memd("store", "-c", "Decision", "--slug", "node-version-worker", "Use Node 22.")
    assert (web.returncode, worker.returncode) == (0, 0), worker.stderr
    assert worker.stdout.splitlines()[0] == (
        'Stored in decisions.md as [node-version-worker]: "Use Node 22." (conflict: '
        '[node-version-web] says "Use Node 20."; the value changed from "20" to "22"; both '
        "kept, delete the one that is wrong)"
    )
    for slug, content in (("node-version-web", "Use Node 20."), ("node-version-worker", "22.")):
        got = memd("get", slug)
        assert got.returncode == 0, got.stderr
        assert content in got.stdout
    shown = json.loads(
        memd("store", "--json", "-c", "Decision", "--slug", "node", "Use Node 24.").stdout
    )
    assert (shown["action"], shown["conflict"], shown["relation"]) == (
        "stored",
        True,
        "changed_value",
    )
    assert shown["matched"]["slug"] in {"node-version-web", "node-version-worker"}
    assert not (workspace / ".memory" / "archive.md").exists()


def test_concurrent_slugged_stores_of_numbered_texts_all_stay(
    daemon: DaemonProcess, workspace: Path
) -> None:
    clients, each = 16, 50

    def store_all(number: int) -> list[str]:
        actions: list[str] = []
        with Client(daemon.socket_path, workspace=workspace) as client:
            for item in range(each):
                n = number * each + item
                result = client.store(
                    category="Decision",
                    content=f"Use nginx{n} for the nginx{n} layer; decided in sprint {n}.",
                    slug=f"rule-{n}",
                )
                actions.append(result.action)
        return actions

    with ThreadPoolExecutor(max_workers=clients) as pool:
        actions = [a for batch in pool.map(store_all, range(clients)) for a in batch]
    assert Counter(actions) == {"stored": clients * each}
    text = (workspace / ".memory" / "decisions.md").read_text()
    slugs = Counter(e.slug for e in mdformat.entries(mdformat.parse(text)))
    assert set(slugs) == {f"rule-{n}" for n in range(clients * each)}
    assert set(slugs.values()) == {1}


def test_cleanup_at_the_limit_keeps_one_side_of_each_contradiction(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir()
    others = [f"Keep {word(n, 1)} {word(n, 2)} in src/{word(n, 3)}.py with git." for n in range(40)]
    sides = [
        "Enable source maps in production builds.",
        "Retry outgoing HTTP calls 3 times with exponential backoff before failing.",
        "Disable source maps in production builds.",
        "Retry outgoing HTTP calls 5 times with exponential backoff before failing.",
    ]
    lines = [*others[:20], *sides[:2], *others[20:], *sides[2:]]
    (memory / "decisions.md").write_text("".join(f"- [d{n}] {c}\n" for n, c in enumerate(lines)))
    applied = subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), "cleanup", "--apply"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[0] == (
        "Cleanup pruned 4 entries over the limit (keeping the newer side of 2 contradictions); "
        "the removed entries are kept in .memory/archive.md."
    )
    assert "[d42]" in applied.stdout and "reverses it and stays" in applied.stdout
    kept = [
        e.content for e in mdformat.entries(mdformat.parse((memory / "decisions.md").read_text()))
    ]
    assert len(kept) == 40 and sides[2] in kept and sides[3] in kept
    assert sides[0] not in kept and sides[1] not in kept
    archive = (memory / "archive.md").read_text()
    assert "(score 30; the newer [d42] contradicting it stays) | [d20] Enable source" in archive
