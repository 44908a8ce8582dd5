"""Embedding vectors kept between runs, so that a restarted daemon embeds only what changed.

Rules:
- Keyed by model and text: one file a model, `$XDG_CACHE_HOME/memd/vectors/<digest of the model
  id>.vec`, mapping the digest of an entry's text (blake2b, 16 bytes) to its vector. An edited
  entry is a new text and is embedded again; one text in several workspaces is embedded once;
  a vector of another model is never read (the file names its model, and a mismatch is empty).
- Stored as float16 (half the size; cosines move by less than 1e-3), unit rows as computed.
- Only finite unit vectors are kept or used (`usable`: every number finite, the norm within
  `UNIT_TOLERANCE` of 1). Loading drops the other rows of a file (logged once, with how many),
  so their texts are embedded again like missing ones; a row the model gives that fails the test
  (`add`) is never kept nor saved: its text is looked up as `NO_VECTOR` until the daemon
  restarts (the model gives the same row for the same text), and ranks by its words only.
- A text longer than the model's window (`beyond_window`: more than `MAX_TOKENS` words and
  marks, so surely more word pieces) is never embedded: the model would read only its start, and
  such a cosine ranked long conversational entries below the model's vague neighbours (figures
  in docs/semantic.md). `lookup` finds it as `no_vector`, so its entry ranks by its words alone.
- Bounded: at most `max_vectors`; saving keeps the most recently used and drops the rest.
- A cache: a missing, unreadable, corrupt or foreign file is an empty cache (logged), as are the
  rows of a file that are not finite unit vectors (NaN, inf, zero, another norm: see above); saving
  is best effort, atomic, never fsynced (`memd.fs.cache_file`).
- Blocking (numpy and file I/O): call `load` and `save` from a worker thread. The class itself is
  not thread-safe: one owner (the daemon's semantic task) uses it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import msgspec

from memd.config import cache_dir
from memd.fs.cache_file import write_cache_file
from memd.fs.storage import read_regular_bytes
from memd.semantic.embedder import MAX_TOKENS

logger = logging.getLogger(__name__)

MAX_VECTORS = 50_000
"""Vectors kept at most: 50,000 x 384 dimensions x 2 bytes is about 37 MiB on disk and in
memory, room for many workspaces of a few hundred memories and their sources."""
FORMAT = 1
KEY_BYTES = 16
UNIT_TOLERANCE = 0.01
"""How far from 1 a usable row's norm may be. float16 keeps 11 significant bits, so storing a
unit vector moves each number by at most 2**-11 of itself (a number too small for that, under
6.1e-5, by at most 2**-25) and the norm by at most about 5e-4 (384 or even 4,096 dimensions):
twenty times within this bound. A cosine of a row that passes is off by at most 1%."""
CHUNK = 4096

_PIECES = re.compile(r"\w+|[^\w\s]")
"""The BERT pre-tokenizer's split (words and single marks): each part is one word piece or more."""


def beyond_window(text: str, window: int = MAX_TOKENS) -> bool:
    """True when the model surely sees only part of `text`: it has more than `window` words and
    marks (each at least one word piece). A text of at most `window` characters never is."""
    if len(text) <= window:
        return False
    parts = _PIECES.finditer(text)
    return any(count > window for count, _ in enumerate(parts, 1))


"""Rows whose norms are computed at once when loading (bounds the float32 copy: 6 MiB)."""


def usable(matrix: Any) -> Any:
    """Which rows of `matrix` (a 2-D float array, any precision) are finite unit vectors: a
    boolean array, one value a row. A row holding NaN or inf, a zero row and a row whose norm
    is more than `UNIT_TOLERANCE` from 1 are not."""
    import numpy as np

    result = np.zeros(len(matrix), dtype=bool)
    for start in range(0, len(matrix), CHUNK):
        chunk = np.asarray(matrix[start : start + CHUNK], dtype=np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            squares = np.einsum("ij,ij->i", chunk, chunk)
            norms = np.sqrt(squares)
            result[start : start + len(chunk)] = np.isfinite(squares) & (
                np.abs(norms - 1.0) <= UNIT_TOLERANCE
            )
    return result


def no_vector(dimensions: int) -> Any:
    """The row `lookup` gives for a text the model gave no usable vector: NaN, so its cosine
    with any question is NaN, which fusion reads as "the model has nothing to say" (the entry
    ranks by its words; `memd.core.search.fusion`)."""
    import numpy as np

    return np.full(dimensions, np.nan, dtype=np.float32)


class _Image(msgspec.Struct, array_like=True):
    format: int
    model: str
    dimensions: int
    keys: bytes
    """`KEY_BYTES` per vector, in the order of `vectors`."""
    vectors: bytes
    """float16, `dimensions` per vector, little-endian."""


@functools.lru_cache(maxsize=MAX_VECTORS)
def text_key(text: str) -> bytes:
    """The digest a text's vector is kept under (memoised, bounded: a query looks up every
    entry's text, and the same texts come back query after query)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=KEY_BYTES).digest()


def cache_path(model_id: str) -> str:
    """Where the vectors of `model_id` are kept."""
    digest = hashlib.sha256(model_id.encode("utf-8")).hexdigest()[:24]
    return os.path.join(cache_dir(), "vectors", f"{digest}.vec")


class VectorCache:
    """The vectors of one model, by text, in recently-used order (most recent last)."""

    def __init__(self, model_id: str, dimensions: int, *, max_vectors: int = MAX_VECTORS) -> None:
        self.model_id = model_id
        self.dimensions = dimensions
        self.max_vectors = max_vectors
        self._rows: OrderedDict[bytes, Any] = OrderedDict()
        self._unusable: OrderedDict[bytes, None] = OrderedDict()
        """Texts the model gave no usable vector (in memory only, at most `max_vectors`)."""

    def __len__(self) -> int:
        return len(self._rows)

    def lookup(self, texts: Sequence[str]) -> tuple[dict[int, Any], list[int]]:
        """Return the known vectors of `texts` (by position) and the positions still to embed;
        every text found counts as used. A text the model gave no usable vector, or one
        `beyond_window`, is found, as `no_vector` (it is not embedded, or not again)."""
        found: dict[int, Any] = {}
        missing: list[int] = []
        for position, text in enumerate(texts):
            key = text_key(text)
            row = self._rows.get(key)
            if row is None and (key in self._unusable or beyond_window(text)):
                found[position] = self._no_vector
            elif row is None:
                missing.append(position)
            else:
                self._rows.move_to_end(key)
                found[position] = row
        return found, missing

    @functools.cached_property
    def _no_vector(self) -> Any:
        return no_vector(self.dimensions)

    def add(self, texts: Sequence[str], vectors: Any) -> int:
        """Keep `vectors` (one row per text, float32) as the most recently used, except the rows
        that are not finite unit vectors (`usable`): those texts are remembered as having no
        vector, and not kept. Returns how many were not kept (logged when any)."""
        import numpy as np

        matrix = np.asarray(vectors, dtype=np.float32)
        if len(matrix) != len(texts):
            raise ValueError(f"{len(texts)} texts and {len(matrix)} vectors")
        fit = usable(matrix) if len(matrix) else np.zeros(0, dtype=bool)
        for text, row, ok in zip(texts, matrix, fit.tolist(), strict=True):
            key = text_key(text)
            if ok:
                self._rows[key] = row.copy()
                self._rows.move_to_end(key)
                self._unusable.pop(key, None)
            else:
                self._rows.pop(key, None)
                self._unusable[key] = None
        while len(self._rows) > self.max_vectors:
            self._rows.popitem(last=False)
        while len(self._unusable) > self.max_vectors:
            self._unusable.popitem(last=False)
        dropped = len(fit) - int(np.count_nonzero(fit))
        if dropped:
            logger.warning(
                "the model %s gave %d of %d texts no finite unit vector; they rank by their "
                "words only until memd restarts",
                self.model_id,
                dropped,
                len(fit),
            )
        return dropped

    def copy(self) -> VectorCache:
        """A copy to save in a worker thread while the owner goes on using this one (the rows
        themselves are never changed, only replaced, so they are shared)."""
        twin = VectorCache(self.model_id, self.dimensions, max_vectors=self.max_vectors)
        twin._rows = OrderedDict(self._rows)
        twin._unusable = OrderedDict(self._unusable)
        return twin

    def save(self, path: str | None = None) -> None:
        """Keep the cache on disk (best effort; a failure is logged)."""
        import numpy as np

        target = path or cache_path(self.model_id)
        keys = b"".join(self._rows)
        if self._rows:
            matrix = np.stack(list(self._rows.values())).astype("<f2")
        else:
            matrix = np.zeros((0, self.dimensions), dtype="<f2")
        image = _Image(FORMAT, self.model_id, self.dimensions, keys, matrix.tobytes())
        try:
            write_cache_file(target, msgspec.msgpack.encode(image))
        except OSError as exc:
            logger.info("could not keep the vectors of %s (%s)", self.model_id, exc)

    @classmethod
    def load(
        cls,
        model_id: str,
        dimensions: int,
        path: str | None = None,
        *,
        max_vectors: int = MAX_VECTORS,
    ) -> VectorCache:
        """The kept vectors of `model_id`, or an empty cache when there are none fit to use."""
        import numpy as np

        cache = cls(model_id, dimensions, max_vectors=max_vectors)
        source = path or cache_path(model_id)
        try:
            image = msgspec.msgpack.decode(read_regular_bytes(source), type=_Image)
        except FileNotFoundError:
            return cache
        except (OSError, msgspec.DecodeError, ValueError) as exc:
            logger.info("ignoring the kept vectors at %s (%s); embedding again", source, exc)
            return cache
        count = len(image.keys) // KEY_BYTES
        fits = (
            image.format == FORMAT
            and image.model == model_id
            and image.dimensions == dimensions
            and len(image.keys) == count * KEY_BYTES
            and len(image.vectors) == count * dimensions * 2
        )
        if not fits:
            logger.info("ignoring the kept vectors at %s (another model or format)", source)
            return cache
        matrix = np.frombuffer(image.vectors, dtype="<f2").reshape(count, dimensions)
        first = max(0, count - max_vectors)
        fit = usable(matrix[first:])
        for number in range(first, count):
            if fit[number - first]:
                key = image.keys[number * KEY_BYTES : (number + 1) * KEY_BYTES]
                cache._rows[key] = matrix[number].astype(np.float32)
        if dropped := len(fit) - int(np.count_nonzero(fit)):
            logger.warning(
                "dropped %d of the %d vectors kept at %s: they are not finite unit vectors (a "
                "damaged file); their texts are embedded again",
                dropped,
                len(fit),
                source,
            )
        return cache
