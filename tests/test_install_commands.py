"""Every install command memd prints or documents names memd's own distributions.

`memd` on the package index is another project: `pip install 'memd[mcp]'` installs someone
else's package. memd's distributions are `memd-daemon` (pyproject.toml) and `memd-client`
(client/pyproject.toml). This test reads every pip / pipx / uv install command in the docs
(inline code and code blocks), in the Makefile and in the string literals of memd's and the
client's code, and checks that each package it names is one of ours (or a path or a wheel).
"""

from __future__ import annotations

import ast
import re
import shlex
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DAEMON = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"]
CLIENT = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]["name"]
OURS = {DAEMON, CLIENT, "pip"}  # `pip install --upgrade pip` is the Makefile's own step

INSTALL = re.compile(r"\b(?:pipx|pip3?|uv(?: tool| pip)?)\s+(?:install|inject)\b(?P<args>[^`\n]*)")
OPTIONS_WITH_VALUE = {"--find-links", "-f", "--index-url", "-i", "--python", "--target", "-t"}
REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _markdown_snippets(text: str) -> Iterator[str]:
    """Inline code spans (joined across a line break) and the lines of fenced code blocks."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
    for block in fenced.finditer(text):
        for line in block.group(1).splitlines():
            yield line.split(" # ", 1)[0]
    prose = fenced.sub("", text)
    for span in re.finditer(r"`([^`]+)`", prose):
        yield " ".join(span.group(1).split())


def _python_snippets(text: str) -> Iterator[str]:
    """Every string literal, f-strings with their placeholders as `X`."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.JoinedStr):
            yield "".join(
                str(part.value) if isinstance(part, ast.Constant) else "X" for part in node.values
            )


def _snippets() -> Iterator[tuple[str, str]]:
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "SECURITY.md"]
    docs += sorted((ROOT / "docs").rglob("*.md"))
    docs += [ROOT / "systemd" / "README.md", ROOT / "launchd" / "README.md"]
    for path in docs:
        for snippet in _markdown_snippets(path.read_text(encoding="utf-8")):
            yield str(path.relative_to(ROOT)), snippet
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        yield "Makefile", line
    for package in (ROOT / "memd", ROOT / "client" / "memd_client"):
        for path in sorted(package.rglob("*.py")):
            for snippet in _python_snippets(path.read_text(encoding="utf-8")):
                yield str(path.relative_to(ROOT)), snippet


def _packages(args: str) -> list[str]:
    """The requirement names an install command's arguments name (paths and wheels are not)."""
    try:
        words = shlex.split(args.replace("$(", "").replace(")", " "))
    except ValueError:
        words = args.split()
    names: list[str] = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word in OPTIONS_WITH_VALUE or word == "-e":
            skip_next = word != "-e"
            continue
        if word.startswith("-") or word in {"&&", "||", ";", "|", "or", "and"}:
            if word in {"&&", "||", ";", "|"}:
                break
            continue
        if word.startswith((".", "/", "~", "X")) or "/" in word or word.endswith(".whl"):
            continue
        match = REQUIREMENT_NAME.match(word)
        if match:
            names.append(match.group(0).lower().replace("_", "-"))
    return names


def _install_commands() -> list[tuple[str, str, list[str]]]:
    found = []
    for where, snippet in _snippets():
        for command in INSTALL.finditer(snippet):
            found.append((where, command.group(0).strip(), _packages(command.group("args"))))
    return found


def test_the_distributions_are_ours() -> None:
    assert DAEMON == "memd-daemon"
    assert CLIENT == "memd-client"


def test_the_scan_finds_the_documented_commands() -> None:
    commands = _install_commands()
    wheres = {where for where, _, _ in commands}
    assert {"README.md", "Makefile"} <= wheres
    named = {name for _, _, names in commands for name in names}
    assert {DAEMON, CLIENT} <= named, named


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (" 'memd[mcp]'", ["memd"]),
        (" --find-links dist 'memd-daemon[mcp]'", ["memd-daemon"]),
        (" --pip-args=--find-links=dist 'memd-daemon[mcp]'", ["memd-daemon"]),
        (" -e './client[async]' -e '.[mcp]'", []),
        (" --quiet --upgrade pip || { rm -rf x; }", ["pip"]),
        (" dist/memd_daemon-0.1.0-py3-none-any.whl", []),
        (" memd", ["memd"]),
    ],
)
def test_the_scanner_reads_requirement_names(args: str, names: list[str]) -> None:
    assert _packages(args) == names


def test_every_install_command_names_our_distributions() -> None:
    wrong = [
        f"{where}: {command!r} names {sorted(set(names) - OURS)}"
        for where, command, names in _install_commands()
        if set(names) - OURS
    ]
    assert not wrong, "\n".join(wrong)
