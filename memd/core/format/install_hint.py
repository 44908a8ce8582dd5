"""The command that adds the semantic extra to the memd that is running, worded for the way it
was installed (memd is not on the package index, so a bare `pip install 'memd-daemon[semantic]'`
fails in most shells).

Rules (first that applies; the routes are README's Install section, whose commands these are):
- A checkout installed editable (`make serve`'s `.venv`, or any venv with `pip install -e`):
  `make -C /path/to/checkout semantic` when memd runs from the checkout's own `.venv` and its
  Makefile has that target, else `PYTHON -m pip install -e '/path/to/checkout[semantic]'`.
- pipx (the environment is a directory of pipx's `venvs`): README's pipx command with the extra
  added and `--force` (pipx refuses an installed package without it), run in memd's checkout,
  where `make dist` put the wheels.
- uv tool (the environment is a directory of uv's tools directory): README's uv command with
  the extra added (uv replaces an installed tool whose requirements changed), in the checkout.
- Any other environment with pip: `PYTHON -m pip install 'memd-daemon[semantic]'` with the
  interpreter memd runs from (memd-daemon is installed already; pip adds the extra's packages).
- Without pip: install memd again with the extra, the way it was installed.
The `mcp` extra is kept in a reinstall when its SDK is installed (a reinstall would drop it).
Paths are compared as written (the shell passes real paths), never read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

DISTRIBUTION = "memd-daemon"


@dataclass(frozen=True)
class Installed:
    """How the running memd was installed, as the shell finds it."""

    prefix: str
    """The environment memd runs in (`sys.prefix`)."""
    executable: str
    """The interpreter memd runs from (`sys.executable`)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The process environment (HOME, XDG_DATA_HOME, PIPX_HOME, PIPX_LOCAL_VENVS, UV_TOOL_DIR)."""
    checkout: str | None = None
    """The source directory of an editable install of memd-daemon, else None."""
    make_semantic: bool = False
    """The checkout's Makefile has a `semantic` target."""
    has_mcp: bool = False
    """The MCP SDK is installed (the `mcp` extra)."""
    has_pip: bool = True
    """The environment has pip (one `uv tool install` made has none)."""


def semantic_install_hint(installed: Installed) -> str:
    """Return the command (with where to run it, when that matters) that adds the semantic
    extra to this memd (see the module's rules)."""
    if installed.checkout is not None:
        checkout = _clean(installed.checkout)
        if installed.make_semantic and _clean(installed.prefix) == f"{checkout}/.venv":
            return f"make -C {quote(checkout)} semantic"
        return f"{quote(installed.executable)} -m pip install -e {quote(checkout + '[semantic]')}"
    extras = "mcp,semantic" if installed.has_mcp else "semantic"
    wanted = quote(f"{DISTRIBUTION}[{extras}]")
    parent = _parent(installed.prefix)
    if parent in _pipx_venvs(installed.env):
        command = f"pipx install --force --pip-args=--find-links=dist {wanted}"
        return f"{command} (in memd's checkout, after make dist)"
    if parent in _uv_tools(installed.env):
        command = f"uv tool install --find-links dist {wanted}"
        return f"{command} (in memd's checkout, after make dist)"
    if installed.has_pip:
        return f"{quote(installed.executable)} -m pip install {quote(DISTRIBUTION + '[semantic]')}"
    return (
        f"install memd again with the extra, '{DISTRIBUTION}[semantic]', the way you installed "
        "it (README: Install)"
    )


def _pipx_venvs(env: Mapping[str, str]) -> set[str]:
    """Where pipx keeps its environments: PIPX_LOCAL_VENVS, PIPX_HOME/venvs, or its defaults
    (`~/.local/pipx`, the user data directory's `pipx`, macOS's)."""
    home = env.get("HOME", "")
    found = {f"{_data_home(env)}/pipx/venvs"}
    if home:
        found |= {f"{home}/.local/pipx/venvs", f"{home}/Library/Application Support/pipx/venvs"}
    if env.get("PIPX_HOME"):
        found.add(f"{env['PIPX_HOME']}/venvs")
    if env.get("PIPX_LOCAL_VENVS"):
        found.add(env["PIPX_LOCAL_VENVS"])
    return {_clean(path) for path in found if path.startswith("/")}


def _uv_tools(env: Mapping[str, str]) -> set[str]:
    """Where uv keeps its tools: UV_TOOL_DIR, or the user data directory's `uv/tools`."""
    found = {f"{_data_home(env)}/uv/tools"}
    if env.get("UV_TOOL_DIR"):
        found.add(env["UV_TOOL_DIR"])
    return {_clean(path) for path in found if path.startswith("/")}


def _data_home(env: Mapping[str, str]) -> str:
    """$XDG_DATA_HOME when absolute, else ~/.local/share (empty when HOME is unknown)."""
    data = env.get("XDG_DATA_HOME", "")
    if data.startswith("/"):
        return data
    return f"{env['HOME']}/.local/share" if env.get("HOME") else ""


def _clean(path: str) -> str:
    """`path` without repeated or trailing slashes (the root stays "/")."""
    return re.sub("/+", "/", path).rstrip("/") or "/"


def _parent(path: str) -> str:
    cleaned = _clean(path)
    return cleaned.rsplit("/", 1)[0] or "/"


_SAFE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)


def quote(word: str) -> str:
    """`word` as one shell word (as `shlex.quote` writes it)."""
    if word and _SAFE.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"
