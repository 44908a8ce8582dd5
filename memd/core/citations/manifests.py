"""What a workspace's runners can run, read from its manifests: make targets, package.json
scripts, justfile recipes, cargo aliases, and the command-line tools the repository defines.
Pure: the shell (`memd.fs.code_facts`) lists and reads the files; every parser takes text and
never raises.

Rules (`targets_of`, keyed by runner, as `CodeFacts.targets` wants):
- "make": the targets of every `Makefile`, `GNUmakefile` or `makefile` (any directory: `make
  -C sub x` runs a subfolder's). A rule line `a b: deps` (or `a::`, `a &: x`) defines each
  name before the colon that is a plain name; a variable assignment (`X = a:b`, `X := y`), a
  recipe line (tab), a `define` block and a comment define none. `complete` is False when a
  Makefile `include`s another, names a target through `$(...)`/`${...}`, has a pattern rule
  (`%: ...`) or cannot be read: a name not found may then still exist.
- "npm" (and "pnpm", "yarn", "bun", which run the same scripts): the `scripts` keys of every
  package.json (a monorepo's too; never under node_modules). One that is no JSON object, or
  whose `scripts` is no object: `complete` False.
- "just": the recipes and aliases of every `justfile`/`Justfile`/`.justfile`; an `import` or
  `mod` makes it incomplete.
- "cargo": the `[alias]` keys of `.cargo/config.toml` (or `.cargo/config`) and cargo's
  built-in subcommands, when a Cargo.toml or a cargo config exists. Always incomplete: any
  installed `cargo-<name>` program is a subcommand too.
- A CLI the repository defines (pyproject `[project.scripts]` or `[tool.poetry.scripts]`,
  package.json `bin`): its name maps to an empty, incomplete `Targets`: its subcommands are
  judged as words in the code, never by these names.
- A runner with no manifest is absent: its commands are unverifiable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import msgspec

from memd.core.citations.model import Targets

MAKEFILES = frozenset({"Makefile", "GNUmakefile", "makefile"})
JUSTFILES = frozenset({"justfile", "Justfile", ".justfile"})
PACKAGE_JSON = "package.json"
PYPROJECT = "pyproject.toml"
CARGO_TOML = "Cargo.toml"
CARGO_CONFIGS = frozenset({".cargo/config.toml", ".cargo/config"})
_MANIFEST_NAMES = (
    MAKEFILES | JUSTFILES | {PACKAGE_JSON, PYPROJECT, CARGO_TOML, "config.toml", "config"}
)
NPM_RUNNERS = ("npm", "pnpm", "yarn", "bun")

CARGO_BUILTINS = frozenset(
    {
        *("add", "b", "bench", "build", "c", "check", "clean", "clippy", "config", "d", "doc"),
        *("fetch", "fix", "fmt", "generate-lockfile", "help", "info", "init", "install"),
        *("locate-project", "login", "logout", "metadata", "miri", "new", "owner", "package"),
        *("pkgid", "publish", "r", "remove", "report", "rm", "run", "rustc", "rustdoc"),
        *("search", "t", "test", "tree", "uninstall", "update", "vendor", "verify-project"),
        *("version", "yank"),
    }
)
"""cargo's own subcommands (and their one-letter aliases), as `cargo --list` shows them."""

_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.+/-]*\Z")
_MAKE_ASSIGNMENT = re.compile(r"^\s*(?:export\s+|override\s+)?[^\s:#=]+\s*(?:[:+?!]*=)")
_MAKE_DIRECTIVE = re.compile(
    r"^\s*(?:-?include|sinclude|ifeq|ifneq|ifdef|ifndef|else|endif|export|unexport|override|"
    r"vpath|undefine|define|endef)\b"
)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_-]*)(?![A-Za-z0-9_-])[^:]*:(?!=)")
_JUST_ALIAS = re.compile(r"^alias\s+([A-Za-z_][A-Za-z0-9_-]*)\s*:=")


def is_manifest(path: str) -> bool:
    """Whether the file at `path` (relative, `/`-separated) is a manifest `targets_of` reads."""
    name = path.rpartition("/")[2]
    if name not in _MANIFEST_NAMES:
        return False
    if path.startswith("node_modules/") or "/node_modules/" in path:
        return False
    if name in ("config.toml", "config"):
        return any(path == config or path.endswith("/" + config) for config in CARGO_CONFIGS)
    return True


def _logical_lines(text: str) -> list[str]:
    """The lines of a Makefile with `\\`-continued lines joined."""
    out: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def make_targets(text: str) -> Targets:
    """The targets one Makefile's text defines (see the rules)."""
    names: set[str] = set()
    complete = True
    in_define = False
    for line in _logical_lines(text):
        if in_define:
            in_define = not re.match(r"^\s*endef\b", line)
            continue
        if line.startswith("\t") or not line.strip() or line.lstrip().startswith("#"):
            continue
        if _MAKE_DIRECTIVE.match(line):
            word = line.split()[0].lstrip("-")
            if word in ("include", "sinclude"):
                complete = False
            in_define = word == "define" or (word in ("override", "export") and " define " in line)
            continue
        if _MAKE_ASSIGNMENT.match(line):
            continue
        head, colon, _ = line.split("#", 1)[0].partition(":")
        if not colon:
            continue
        for name in head.replace("&", " ").split():
            if "$" in name or "%" in name:
                complete = False
            elif _NAME.match(name) and not name.startswith("."):
                names.add(name)
    return Targets(frozenset(names), complete)


def _decode_json(text: str) -> object:
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return None


def package_scripts(text: str) -> Targets:
    """The `scripts` names of one package.json's text (see the rules)."""
    data = _decode_json(text)
    if not isinstance(data, dict):
        return Targets(frozenset(), complete=False)
    scripts = data.get("scripts", {})
    if not isinstance(scripts, dict):
        return Targets(frozenset(), complete=False)
    return Targets(frozenset(name for name in scripts if isinstance(name, str)))


def package_bins(text: str) -> frozenset[str]:
    """The command names one package.json's `bin` defines (a string: the package's own name,
    without its `@scope/`)."""
    data = _decode_json(text)
    if not isinstance(data, dict):
        return frozenset()
    bins = data.get("bin")
    if isinstance(bins, dict):
        return frozenset(name for name in bins if isinstance(name, str) and _NAME.match(name))
    name = data.get("name")
    if isinstance(bins, str) and isinstance(name, str):
        short = name.rsplit("/", 1)[-1]
        return frozenset({short}) if _NAME.match(short) else frozenset()
    return frozenset()


def just_recipes(text: str) -> Targets:
    """The recipes and aliases one justfile's text defines (see the rules)."""
    names: set[str] = set()
    complete = True
    for line in text.splitlines():
        if not line or line[0] in " \t#[":
            continue
        if re.match(r"^(?:import|mod)\b", line):
            complete = False
            continue
        alias = _JUST_ALIAS.match(line)
        if alias:
            names.add(alias.group(1))
            continue
        if line.startswith(("set ", "export ")):
            continue
        recipe = _JUST_RECIPE.match(line)  # `x := y` is an assignment: no recipe
        if recipe:
            names.add(recipe.group(1))
    return Targets(frozenset(names), complete)


def _decode_toml(text: str) -> dict[str, object] | None:
    try:
        data = msgspec.toml.decode(text)
    except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _table(data: Mapping[str, object], *keys: str) -> Mapping[str, object]:
    current: object = data
    for key in keys:
        current = current.get(key) if isinstance(current, dict) else None
    return current if isinstance(current, dict) else {}


def cargo_aliases(text: str) -> Targets:
    """The `[alias]` names of one cargo config's text, with cargo's built-ins (see the rules)."""
    data = _decode_toml(text)
    aliases = frozenset(_table(data, "alias")) if data is not None else frozenset()
    return Targets(CARGO_BUILTINS | aliases, complete=False)


def pyproject_scripts(text: str) -> frozenset[str]:
    """The command names one pyproject.toml's `[project.scripts]` (or poetry's) defines."""
    data = _decode_toml(text)
    if data is None:
        return frozenset()
    names = {*_table(data, "project", "scripts"), *_table(data, "tool", "poetry", "scripts")}
    return frozenset(name for name in names if _NAME.match(name))


def _merged(found: Iterable[Targets]) -> Targets:
    names: set[str] = set()
    complete = True
    for targets in found:
        names |= targets.names
        complete = complete and targets.complete
    return Targets(frozenset(names), complete)


def targets_of(files: Mapping[str, str | None], *, complete: bool = True) -> dict[str, Targets]:
    """The runners' targets from the manifests in `files` (relative path -> text; None: it
    could not be read). `complete` False says some manifests were left unread (a cap): every
    runner's targets are then incomplete. Never raises."""
    by_runner: dict[str, list[Targets]] = {}
    clis: set[str] = set()
    unread = Targets(frozenset(), complete=False)
    for path, text in sorted(files.items()):
        if not is_manifest(path):
            continue
        name = path.rsplit("/", 1)[-1]
        if name in MAKEFILES:
            by_runner.setdefault("make", []).append(unread if text is None else make_targets(text))
        elif name in JUSTFILES:
            by_runner.setdefault("just", []).append(unread if text is None else just_recipes(text))
        elif name == PACKAGE_JSON:
            scripts = unread if text is None else package_scripts(text)
            by_runner.setdefault("npm", []).append(scripts)
            clis |= package_bins(text or "")
        elif name == PYPROJECT:
            clis |= pyproject_scripts(text or "")
        elif name == CARGO_TOML:
            by_runner.setdefault("cargo", []).append(Targets(CARGO_BUILTINS, complete=False))
        else:
            by_runner.setdefault("cargo", []).append(cargo_aliases(text or ""))
    out = {runner: _merged(found) for runner, found in by_runner.items()}
    if not complete:
        out = {runner: Targets(targets.names, False) for runner, targets in out.items()}
    if "npm" in out:
        for alias in NPM_RUNNERS[1:]:
            out[alias] = out["npm"]
    for cli in sorted(clis):
        out.setdefault(cli, Targets(frozenset(), complete=False))
    return out
