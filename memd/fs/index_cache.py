"""Search indexes kept between runs, so that a restarted daemon answers at once.

Rules:
- A category file's index is saved as `$XDG_STATE_HOME/memd/index/<digest of its path>.idx`
  (msgpack), under the digest of the exact text it indexes (`text_key`); it is used only for a
  file holding exactly that text, so a stale image is never read, only rebuilt.
- It is a cache: a missing, unreadable, corrupt or stale image costs a rebuild and nothing
  else, and saving is best effort (atomic, not fsynced; a failure is logged and ignored).
- Blocking: call these from a worker thread.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable

import msgspec

from memd.config import state_dir
from memd.core.format.mdformat import Entry
from memd.core.search.index import IndexImage, SearchIndex, from_image, to_image
from memd.fs.cache_file import write_cache_file
from memd.fs.storage import read_regular_bytes

logger = logging.getLogger(__name__)

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(IndexImage)


def image_path(path: str) -> str:
    """Return where the index of the category file `path` is kept."""
    digest = hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:24]
    return os.path.join(state_dir(), "index", f"{digest}.idx")


def text_key(text: str) -> str:
    """Return the key of an index of `text`: a digest of the text."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def load(path: str, key: str, entries: Iterable[Entry]) -> SearchIndex | None:
    """Return the kept index of `path` if it indexes `entries` under `key`, else None."""
    try:
        image = _decoder.decode(read_regular_bytes(image_path(path)))  # a FIFO never hangs
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError, ValueError) as exc:
        logger.info("ignoring the kept index of %s (%s); rebuilding it", path, exc)
        return None
    return from_image(entries, image, key)


def save(path: str, index: SearchIndex, key: str) -> None:
    """Keep `index` (of the text whose key is `key`) for the next run; never raises."""
    target = image_path(path)
    try:
        write_cache_file(target, _encoder.encode(to_image(index, key)))
    except (OSError, ValueError, RuntimeError) as exc:
        logger.info("could not keep the index of %s (%s)", path, exc)
