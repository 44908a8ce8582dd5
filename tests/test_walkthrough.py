"""docs/walkthrough.md is what docs/walkthrough.py makes: the same prose and commands, and (for
the second terminal's commands, rerun here against a real daemon) the same outputs. The full
run (a fresh clone, `make serve`, pip, npx) takes minutes: `make walkthrough` does it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import assume, given, strategies as st

from tests.conftest import start_daemon

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("walkthrough", ROOT / "docs" / "walkthrough.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["walkthrough"] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


walkthrough = _load()
TEXT = (ROOT / "docs" / "walkthrough.md").read_text(encoding="utf-8")


def test_walkthrough_md_holds_the_scripts_prose_and_commands_around_its_outputs() -> None:
    outputs = walkthrough.parse(TEXT)
    assert len(outputs) == len(walkthrough.commands(walkthrough.DOCUMENT))
    assert walkthrough.render(walkthrough.DOCUMENT, outputs) == TEXT


def test_every_command_in_walkthrough_md_is_one_the_script_runs_in_that_order() -> None:
    shown = [line[2:] for line in TEXT.splitlines() if line.startswith("$ ")]
    runs = [c.text for c in walkthrough.commands(walkthrough.DOCUMENT) if c.text]
    assert shown == runs


def test_normalise_replaces_only_what_varies_between_runs() -> None:
    root = Path("/tmp/mw-abc123")
    varying = walkthrough.Shown(root, "31337", ("2031-02-03",))
    raw = (
        "WARNING: Location 'file:///opt/pypi/simple/x/' is ignored: it is neither a file nor a"
        " directory.\n"
        "2031-02-03 23:44:03,457 memd[31337] INFO memd.server.daemon: memd 0.1.0 serving on"
        " /tmp/mw-abc123/run/memd/memd.sock (own socket)\n"
        "npm warn exec The following package was not found and will be installed: x@1\n"
        "memd 0.1.0 (protocol 1) pid 31337, up 12 s, socket /tmp/mw-abc123/run/memd/memd.sock   \n"
        "- 2031-02-03 | Decision | [take-lock] Take the lock at 5, pid 313370.\n"
        "/tmp/mw-abc123/shop\n\n\n"
    )
    assert walkthrough.normalise(raw, varying) == (
        "2026-11-24 12:00:00,000 memd[4242] INFO memd.server.daemon: memd 0.1.0 serving on"
        " /run/user/1000/memd/memd.sock (own socket)\n"
        "memd 0.1.0 (protocol 1) pid 4242, up 1 s, socket /run/user/1000/memd/memd.sock\n"
        "- 2026-11-24 | Decision | [take-lock] Take the lock at 5, pid 313370.\n"
        "/home/me/shop"
    )


def test_normalise_keeps_pips_installed_lines_and_replaces_its_progress_by_one_line() -> None:
    raw = (
        "Looking in indexes: https://pypi.org/simple\n"
        "Requirement already satisfied: memd-daemon in ./memd\n"
        "Installing collected packages: mcp\n"
        "Successfully installed mcp-2.3.0\n"
    )
    varying = walkthrough.Shown(Path("/tmp/mw-x"), None, ())
    assert walkthrough.normalise(raw, varying, pip_progress=True).splitlines() == [
        walkthrough.PIP_PROGRESS,
        "Installing collected packages: mcp",
        "",
        "Successfully installed mcp-2.3.0",
    ]


@given(st.text(alphabet="abc xyz.:[]-\n\t", max_size=200))
def test_output_without_anything_varying_is_kept_but_for_trailing_blanks(raw: str) -> None:
    varying = walkthrough.Shown(Path("/tmp/mw-x"), "99", ("2031-02-03",))
    lines = [line.rstrip() for line in raw.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    assert walkthrough.normalise(raw, varying) == "\n".join(lines)


@given(st.lists(st.text(alphabet="ab $`\n", max_size=30), min_size=1, max_size=4))
def test_parse_reads_back_the_outputs_render_wrote(texts: list[str]) -> None:
    outputs = ["\n".join(t.splitlines()).strip("\n") for t in texts]
    document = (
        walkthrough.Prose("# T"),
        walkthrough.Console(tuple(walkthrough.Command(f"c{i}") for i in range(len(outputs)))),
    )
    # An output line that reads as a command or a closing fence cannot be told apart.
    assume(
        not any(line.startswith("$ ") or line == "```" for o in outputs for line in o.split("\n"))
    )
    assert walkthrough.parse(walkthrough.render(document, outputs)) == outputs


def test_the_private_environment_keeps_none_of_the_callers_memd_or_xdg_settings(
    tmp_path: Path,
) -> None:
    caller = {
        "PATH": "/usr/bin",
        "HOME": str(tmp_path / "home"),
        "MEMD_SOCKET": "/run/user/1000/memd/memd.sock",
        "MEMD_LOG_LEVEL": "DEBUG",
        "XDG_CONFIG_HOME": "/elsewhere/config",
        "XDG_RUNTIME_DIR": "/run/user/1000",
        "MAKEFLAGS": "-j2",
        "MAKELEVEL": "1",
        "PYTHONPATH": "/work/tree",
    }
    environ = walkthrough.private_environment(tmp_path, caller, memd_bin=tmp_path / "bin")
    assert not {"MEMD_SOCKET", "MEMD_LOG_LEVEL", "MAKEFLAGS", "MAKELEVEL", "PYTHONPATH"} & {
        *environ
    }
    xdg = {name: value for name, value in environ.items() if name.startswith("XDG_")}
    assert len(xdg) == 5 and all(value.startswith(str(tmp_path)) for value in xdg.values())
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o700
    assert environ["PATH"] == f"{tmp_path / 'bin'}:/usr/bin"
    assert environ["PIP_CACHE_DIR"] == str(tmp_path / "home" / ".cache" / "pip")


@pytest.fixture
def walk_root() -> Iterator[Path]:
    """A short temp root under /tmp, as the script makes (socket paths must stay short)."""
    path = Path(tempfile.mkdtemp(prefix="mw-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("git") is None, reason="the project is a git repository")
def test_the_second_terminals_commands_print_what_walkthrough_md_shows(walk_root: Path) -> None:
    """Sections 2-6 rerun with this tree's memd (semantic search off, as in a checkout without
    the extra); the outputs that name the installed extras (`stats`, `status`) are left out."""
    environ = walkthrough.private_environment(
        walk_root, os.environ, memd_bin=Path(sys.executable).parent
    )
    (walk_root / ".config" / "memd").mkdir(parents=True)
    (walk_root / ".config" / "memd" / "config.toml").write_text("semantic = false\n")
    (walk_root / "run" / "memd").mkdir(mode=0o700)
    daemon = start_daemon(
        walk_root, socket_path=walk_root / "run" / "memd" / "memd.sock", env=environ
    )
    session = walkthrough.Session(walk_root, environ)
    first_day = date.today().isoformat()
    try:
        ran = [
            (position, command, session.run(command))
            for position, command in walkthrough.second_terminal(walkthrough.DOCUMENT)
        ]
    finally:
        assert daemon.stop() == 0, daemon.stderr()
    expected = walkthrough.parse(TEXT)
    days = (first_day, date.today().isoformat())
    varying = walkthrough.Shown(walk_root, str(daemon.process.pid), days)
    for position, command, output in ran:
        if not command.install_dependent:
            got = walkthrough.normalise(output, varying)
            assert got == expected[position], f"$ {command.text}"
