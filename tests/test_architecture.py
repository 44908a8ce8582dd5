"""The functional core stays pure: `memd.core` imports no I/O, clock, socket or task library."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "memd" / "core"
ALLOWED = {
    "array",
    "bisect",
    "__future__",
    "collections",
    "contextlib",
    "dataclasses",
    "difflib",
    "enum",
    "functools",
    "heapq",
    "itertools",
    "math",
    "operator",
    "re",
    "typing",
    "unicodedata",
    "msgspec",
    "Stemmer",  # PyStemmer: Snowball's stemmers, pure computation in C
    "memd",
    "memd_client",
}
ALLOWED_FROM_CLIENT = {"memd_client.errors"}
ALLOWED_IN = {"stemmer.py": {"threading", "sys"}, "memo.py": {"threading"}}
"""One stemmer per thread (`threading.local`): PyStemmer objects are not thread-safe; stems are
interned (`sys.intern`). The memo caches are shared by the event loop and worker threads, so
inserting takes a `threading.Lock`. Nothing here starts a thread or waits on one."""


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_core_imports_only_pure_modules() -> None:
    offenders = {}
    for path in sorted(CORE.glob("*.py")):
        bad = [
            name
            for name in _imports(path)
            if name.split(".")[0] not in ALLOWED | ALLOWED_IN.get(path.name, set())
            or (name.startswith("memd_client") and name not in ALLOWED_FROM_CLIENT)
            or (name.startswith("memd.") and not name.startswith("memd.core"))
        ]
        if bad:
            offenders[path.name] = bad
    assert offenders == {}
