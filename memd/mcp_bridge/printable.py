"""Text the MCP bridge hands on, made safe to encode: file names that are not UTF-8 included."""

from __future__ import annotations

import os


def printable(text: str) -> str:
    """`text` with every character UTF-8 cannot carry escaped: the undecodable byte of a
    non-UTF-8 file name as `\\xe9`, any other lone surrogate as `\\udc00`."""
    try:
        text.encode()
    except UnicodeEncodeError:
        try:
            return os.fsencode(text).decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that no file name decodes to
            return text.encode("utf-8", "backslashreplace").decode()
    return text
