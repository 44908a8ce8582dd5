"""The semantic extra's model loads offline from what the extra installs, and its vectors say
what a sentence means: a paraphrase is nearer than an unrelated rule, in any batch."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.semantic.embedder import (
    DIMENSIONS,
    MODEL_ID,
    VOCABULARY,
    Embedder,
    SemanticUnavailable,
    install_hint,
    load,
    model_threads,
)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    """The installed model, loaded with HOME in a temp directory (ONNX Runtime writes a file
    under ~/.cache when it is first imported)."""
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(tmp_path_factory.mktemp("home"))
    try:
        yield load()
    finally:
        if home is not None:
            os.environ["HOME"] = home


def test_vectors_are_unit_rows_of_the_models_size(embedder: Embedder) -> None:
    vectors = embedder.embed(["Run the tests with make test.", "ok", ""])
    assert vectors.shape == (3, DIMENSIONS)
    assert all(abs(float(row @ row) - 1.0) < 1e-4 for row in vectors)
    assert embedder.model_id == MODEL_ID
    assert embedder.embed([]).shape == (0, DIMENSIONS)


def test_a_paraphrase_is_nearer_than_an_unrelated_rule(embedder: Embedder) -> None:
    question, answer, unrelated = embedder.embed(
        [
            "how do API calls get authenticated?",
            "Bearer JWTs expire after 15 minutes.",
            "Use tabs for indentation in Go files.",
        ]
    )
    assert float(question @ answer) > float(question @ unrelated) + 0.15


def test_a_text_embeds_the_same_alone_or_in_a_batch(embedder: Embedder) -> None:
    texts = [f"Entry number {n} says something about deploys." for n in range(40)]
    together = embedder.embed(texts)
    alone = embedder.embed([texts[33]])[0]
    assert float(together[33] @ alone) > 0.9999


def test_a_model_directory_without_its_files_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(SemanticUnavailable, match=r"has no model\.onnx; point it at a directory"):
        load(str(tmp_path))


def test_a_model_directory_whose_model_is_broken_is_one_sentence_saying_what_to_do(
    tmp_path: Path,
) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a model\x00\xff" * 64)
    (tmp_path / "vocab.txt").write_bytes(VOCABULARY.read_bytes())
    with pytest.raises(SemanticUnavailable) as caught:
        load(str(tmp_path))
    message = caught.value.message
    assert message.startswith(f"semantic_model {tmp_path} could not be loaded (")
    assert "INVALID_PROTOBUF" in message and "\n" not in message  # the runtime's reason
    assert message.endswith(
        "; point it at a directory holding a working model.onnx and vocab.txt, or remove it to "
        "use the installed model"
    )


def test_without_the_extra_it_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "from memd.semantic.embedder import SemanticUnavailable, load\n"
        "try:\n    load()\nexcept SemanticUnavailable as exc:\n    print(exc.message)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    # This checkout's own .venv (an editable install, whose Makefile has `semantic`).
    checkout = Path(__file__).resolve().parents[2]
    assert done.stdout.strip() == (
        f"semantic search needs the semantic extra (onnxruntime is missing): {install_hint()}"
    )
    if Path(sys.prefix).resolve() == checkout / ".venv":
        assert install_hint() == f"make -C {checkout} semantic"


@pytest.mark.parametrize(("cores", "threads"), [(1, 1), (2, 1), (3, 1), (4, 2), (64, 2)])
def test_the_model_leaves_a_core_to_the_event_loop(cores: int, threads: int) -> None:
    assert model_threads(cores) == threads
