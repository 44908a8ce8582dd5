"""The layout's rules, checked on the source: the functional core stays pure (no I/O, clock,
socket or task library, in any of its packages), its features stay apart, and no two modules of
memd import each other, however indirectly."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
CORE = SOURCE / "memd" / "core"
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
ALLOWED_IN = {
    "stemmer.py": {"threading", "sys"},
    "memo.py": {"threading"},
    "claude_settings.py": {"json"},
    "episodes.py": {"datetime"},
    "decay.py": {"datetime"},
    "consolidation.py": {"datetime"},
    "inbox_format.py": {"hashlib"},
}
"""One stemmer per thread (`threading.local`): PyStemmer objects are not thread-safe; stems are
interned (`sys.intern`). The memo caches are shared by the event loop and worker threads, so
inserting takes a `threading.Lock`. Nothing here starts a thread or waits on one. Claude Code's
settings are JSON text in, JSON text out (`json.loads`/`dumps`: no I/O). Episodes are dated:
their modules do calendar arithmetic on `datetime.date` values and are given today by the
shell (none reads a clock: `test_episode_modules_read_no_clock`). An inbox entry's id is a
hash of what accepting it does (`hashlib`: pure computation)."""

MAY_USE = {
    "text": set(),
    "format": {"text"},
    "writes": {"format", "text"},
    "search": {"format", "text"},
    "extract": {"format", "text"},
    "project": {"format", "text"},
    "sources": {"format", "text"},
    "merge": {"format", "text", "writes"},
    "citations": {"format", "text"},
    "provenance": {"format"},
    "review": set(),
    "llm": {"format", "text", "writes"},
    "transcripts": {"format"},
}
"""Which core packages each core package may import (besides itself)."""


def _imports(path: Path, *, top_level_only: bool = False) -> list[str]:
    """The modules `path` imports (with `top_level_only`, not those imported inside functions:
    a lazy import cannot make a cycle at import time)."""
    tree = ast.parse(path.read_text())
    nodes = list(ast.walk(tree))
    if top_level_only:  # and under `if TYPE_CHECKING:`: a cycle for the type checker too
        nodes = [*tree.body]
        nodes += [n for node in tree.body if isinstance(node, ast.If) for n in node.body]
    names: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_core_imports_only_pure_modules() -> None:
    offenders = {}
    for path in sorted(CORE.rglob("*.py")):
        bad = [
            name
            for name in _imports(path)
            if name.split(".")[0] not in ALLOWED | ALLOWED_IN.get(path.name, set())
            or (name.startswith("memd_client") and not name.startswith(tuple(ALLOWED_FROM_CLIENT)))
            or (name.startswith("memd.") and not name.startswith("memd.core"))
        ]
        if bad:
            offenders[str(path.relative_to(CORE))] = bad
    assert offenders == {}


def test_every_core_module_lives_in_a_feature_package() -> None:
    loose = [p.name for p in CORE.glob("*.py") if p.name != "__init__.py"]
    assert loose == []
    assert {p.name for p in CORE.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(
        MAY_USE
    )


def test_core_features_stay_apart() -> None:
    """`writes`, `search` and `extract` never import each other; all may use `format` and
    `text`; `format` uses only `text`."""
    offenders = {}
    for package, allowed in MAY_USE.items():
        for path in sorted((CORE / package).rglob("*.py")):
            used = {
                name.split(".")[2]
                for name in _imports(path)
                if name.startswith("memd.core.") and len(name.split(".")) > 2
            }
            bad = used - allowed - {package}
            if bad:
                offenders[f"{package}/{path.name}"] = sorted(bad)
    assert offenders == {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[0] == "client":
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def test_no_import_cycles() -> None:
    """Module-level imports between memd's own modules form no cycle (a cycle makes the import
    order matter and the layers meaningless)."""
    paths = [*SOURCE.joinpath("memd").rglob("*.py"), *SOURCE.joinpath("client").rglob("*.py")]
    modules = {_module_name(path): path for path in paths if "__pycache__" not in path.parts}
    graph = {
        name: {
            imported
            for imported in _imports(path, top_level_only=True)
            if imported in modules and imported != name and not name.startswith(imported + ".")
        }  # a module's own parent packages are imported with it: no edge
        for name, path in modules.items()
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for imported in sorted(graph[name]):
            if state.get(imported) == 1:
                cycles.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_fs_blocks_and_never_imports_the_event_loop() -> None:
    """`memd.fs` is blocking I/O the server calls in worker threads: no anyio, no asyncio, and
    nothing from the server or the CLI."""
    offenders = {}
    for path in sorted((SOURCE / "memd" / "fs").rglob("*.py")):
        bad = [
            name
            for name in _imports(path)
            if name.split(".")[0] in {"anyio", "asyncio", "trio"}
            or name.startswith(("memd.server", "memd.cli", "memd.mcp_bridge"))
        ]
        if bad:
            offenders[path.name] = bad
    assert offenders == {}


MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def test_long_modules_and_functions_say_why() -> None:
    """A module over MAX_MODULE_LINES states why in its docstring ("Size: ..."), and a function
    over MAX_FUNCTION_LINES in its own ("Long: ..."): length is a choice, made in the open."""
    paths = [*SOURCE.joinpath("memd").rglob("*.py"), *SOURCE.joinpath("client").rglob("*.py")]
    unexplained = []
    for path in sorted(p for p in paths if "__pycache__" not in p.parts):
        text = path.read_text()
        tree = ast.parse(text)
        if text.count("\n") > MAX_MODULE_LINES and "Size:" not in (ast.get_docstring(tree) or ""):
            unexplained.append(f"{path.relative_to(SOURCE)}: {text.count(chr(10))} lines")
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES and "Long:" not in (ast.get_docstring(node) or ""):
                unexplained.append(f"{path.relative_to(SOURCE)}:{node.name}: {length} lines")
    assert unexplained == []


SHELL_MAY_USE = {
    "cli": {"service", "mcp_bridge", "server", "semantic", "fs", "config", "paths", "core"},
    "service": {"fs", "config", "paths", "core"},
    "mcp_bridge": {"fs", "config", "paths", "core"},
    "server": {"semantic", "fs", "config", "paths", "core"},
    "semantic": {"fs", "config", "paths", "core"},
    "fs": {"config", "paths", "core"},
    "config": {"core"},
    "paths": set(),
    "core": set(),
}
"""Which of memd's top-level packages and modules each may import (besides itself and the
client package): `cli` above `service`, `mcp_bridge` and `server` (which never import each
other), above `semantic`, above `fs`, above the shared `config` and `paths`, above `core`."""


def test_shell_packages_import_only_downward() -> None:
    paths = sorted(p for p in SOURCE.joinpath("memd").rglob("*.py") if "__pycache__" not in p.parts)
    offenders = {}
    for path in paths:
        parts = path.relative_to(SOURCE / "memd").with_suffix("").parts
        if parts[0] in {"__init__", "__main__"}:
            continue
        used = {
            name.split(".")[1]
            for name in _imports(path)
            if name.startswith("memd.") and not name.startswith("memd.__")  # memd.__version__
        }
        bad = used - SHELL_MAY_USE[parts[0]] - {parts[0]}
        if bad:
            offenders[str(path.relative_to(SOURCE))] = sorted(bad)
    assert offenders == {}
    tops = {p.stem for p in SOURCE.joinpath("memd").iterdir() if p.suffix == ".py" or p.is_dir()}
    assert tops - {"__init__", "__main__", "__pycache__"} == set(SHELL_MAY_USE)


def test_every_protocol_method_has_a_handler_of_its_params_type() -> None:
    """Each params type of the protocol (`StoreParams` ...) is served: the method table maps
    its method name to it, and the handler takes exactly that type."""
    import typing

    import msgspec

    from memd.server.methods.handlers import Methods
    from memd_client import protocol

    params_types = {
        value
        for value in vars(protocol).values()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__name__.endswith("Params")
        and not value.__name__.startswith("_")
    }
    table = Methods(None, started=0.0, socket_path="unused").table  # type: ignore[arg-type]
    assert {params for params, _ in table.values()} == params_types
    for name, (params, _) in table.items():
        assert params.__name__ == name.capitalize() + "Params"
        handler = getattr(Methods, name)
        assert typing.get_type_hints(handler)["params"] is params


SERVER = SOURCE / "memd" / "server"
SERVER_MAY_USE = {
    "daemon": {"rpc", "methods", "workspaces", "watch", "semantic", "llm"},
    "methods": {"rpc.dispatch", "rpc.session", "rpc.wire", "workspaces", "semantic", "llm"},
    "workspaces": {"rpc.session", "rpc.wire", "watch"},
    "semantic": set(),
    "llm": set(),
    "watch": set(),
    "rpc": set(),
}
"""Which parts of the server each part may import (besides itself): `daemon` (the lifecycle)
above `methods` (the method table and the one search), above `workspaces` (their state), above
`watch`. `rpc` is the plumbing beneath them all: of it, only `dispatch` (the Handler type),
`session` and `wire` (conversions, importing only the core and the client) are used above the
daemon. `semantic` (the model service) imports nothing of the server. An entry `package` allows
all of it, `package.module` that module."""


def _server_part(name: str) -> str | None:
    """The part of the server an imported name belongs to (`rpc.wire`, `semantic`), or None for
    a bare sub-package (its `__init__` holds only a docstring) or a name outside the server."""
    parts = name.split(".")
    if parts[:2] != ["memd", "server"] or len(parts) < 3:
        return None
    if len(parts) == 3:
        return parts[2] if (SERVER / f"{parts[2]}.py").exists() else None
    return f"{parts[2]}.{parts[3]}"


def test_server_parts_import_only_downward() -> None:
    offenders = {}
    for path in sorted(p for p in SERVER.rglob("*.py") if "__pycache__" not in p.parts):
        parts = path.relative_to(SERVER).with_suffix("").parts
        if parts == ("__init__",):
            continue
        part = parts[0]
        allowed = SERVER_MAY_USE[part]
        bad = sorted(
            used
            for name in _imports(path)
            if (used := _server_part(name)) is not None
            and used.split(".")[0] != part
            and used not in allowed
            and used.split(".")[0] not in allowed
        )
        if bad:
            offenders[str(path.relative_to(SOURCE))] = bad
    assert offenders == {}
    tops = {p.stem for p in SERVER.iterdir() if p.suffix == ".py" or p.is_dir()}
    assert tops - {"__init__", "__pycache__"} == set(SERVER_MAY_USE)


def test_wire_imports_only_the_core_and_the_client() -> None:
    """Every part of the server may convert a result (`rpc.wire`): it stays a leaf."""
    used = {name for name in _imports(SERVER / "rpc" / "wire.py") if name.startswith("memd")}
    assert {name for name in used if not name.startswith(("memd.core", "memd_client"))} == set()


def test_episode_modules_read_no_clock() -> None:
    """The modules allowed `datetime` use it for calendar arithmetic only: today is given."""
    for name in ("format/episodes.py", "search/decay.py", "writes/consolidation.py"):
        text = (CORE / name).read_text()
        assert ".today(" not in text and ".now(" not in text, name
