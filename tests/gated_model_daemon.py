"""`python -m tests.gated_model_daemon serve ...`: memd with a stand-in semantic model whose
loading waits for a gate, so a test decides when semantic search becomes ready.

The model "loads" (in the daemon's worker thread, as the real one does) once the file named by
`MEMD_TEST_MODEL_GATE` exists; until then the service stays "loading". The stand-in embeds a
text as its hashed words (64 dimensions, L2-normalised): deterministic, no ONNX Runtime, and a
question sharing no word with an entry is not similar to it. The semantic extra's packages are
not needed but numpy (the vectors' arrays).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

GATE = "MEMD_TEST_MODEL_GATE"
MODEL_ID = "gated-test-model"
DIMENSIONS = 64
GATE_DEADLINE = 120.0
"""Seconds the load waits for the gate at most (then it loads anyway: a daemon never hangs)."""


class HashedWords:
    """A stand-in `memd.semantic.embedder.Embedder`: each word adds 1 to a hashed dimension."""

    model_id = MODEL_ID
    dimensions = DIMENSIONS

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                rows[row, hashlib.sha256(word.encode()).digest()[0] % DIMENSIONS] += 1.0
            rows[row, DIMENSIONS - 1] += 0.01  # never the zero vector
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / norms


def _load_when_opened(model_dir: str | None) -> tuple[Any, Any]:
    """`memd.server.semantic._load_blocking`, once the gate exists."""
    from memd.semantic import vectors

    gate = os.environ[GATE]
    waiting = threading.Event()
    for _ in range(int(GATE_DEADLINE / 0.02)):
        if os.path.exists(gate):
            break
        waiting.wait(0.02)
    return HashedWords(), vectors.VectorCache.load(MODEL_ID, DIMENSIONS)


def main() -> int:
    from memd.cli.main import main as memd_main
    from memd.semantic import embedder
    from memd.server import semantic

    embedder.missing_extra = lambda model_dir=None: None
    semantic._load_blocking = _load_when_opened
    return memd_main()


if __name__ == "__main__":
    sys.exit(main())
