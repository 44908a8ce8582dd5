"""The Makefile picks a Python new enough for memd (3.11+), says which to pass when there is
none, and never keeps a .venv made by an older one. A fake `python3` on PATH plays Python 3.10."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import CALLERS_MEMD_ENV

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")


def _fake_python(path: Path, *, new_enough: bool) -> None:
    """A `python` whose version check (`sys.version_info < (3, 11)`) fails or passes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\nexit {0 if new_enough else 1}\n")
    path.chmod(0o755)


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    tree, fake_bin = tmp_path / "memd", tmp_path / "bin"
    (tree / "client").mkdir(parents=True)
    shutil.copy(ROOT / "Makefile", tree / "Makefile")
    (tree / "pyproject.toml").touch()
    (tree / "client" / "pyproject.toml").touch()
    fake_bin.mkdir()
    (fake_bin / "rm").symlink_to(shutil.which("rm") or "/bin/rm")
    _fake_python(fake_bin / "python3", new_enough=False)  # as Ubuntu 22.04's 3.10
    return tree, fake_bin


def _make(tree: Path, fake_bin: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "MAKEFLAGS", "MAKELEVEL")}
    env["PATH"] = str(fake_bin)
    make = shutil.which("make")
    assert make is not None
    return subprocess.run(
        [make, "--no-print-directory", *args], cwd=tree, env=env, capture_output=True, text=True
    )


def test_only_an_old_python3_stops_before_a_venv_and_names_the_python_to_pass(
    tmp_path: Path,
) -> None:
    tree, fake_bin = _checkout(tmp_path)
    done = _make(tree, fake_bin, "serve")
    assert done.returncode != 0
    assert "PYTHON=python3.11" in done.stderr and "3.11 or newer" in done.stderr
    assert not (tree / ".venv").exists()


def test_an_old_python_passed_by_name_is_refused_with_the_same_advice(tmp_path: Path) -> None:
    tree, fake_bin = _checkout(tmp_path)
    done = _make(tree, fake_bin, "serve", "PYTHON=python3")
    assert done.returncode != 0
    assert "python3 is older than the Python 3.11" in done.stderr
    assert "PYTHON=python3.11" in done.stderr
    assert not (tree / ".venv").exists()


def test_a_newer_python_on_path_is_found(tmp_path: Path) -> None:
    tree, fake_bin = _checkout(tmp_path)
    _fake_python(fake_bin / "python3.12", new_enough=True)
    done = _make(tree, fake_bin, "-n", "serve")
    assert done.returncode == 0, done.stderr
    assert "python3.12 -m venv .venv" in done.stdout


def test_a_venv_of_an_old_python_is_removed_not_reused(tmp_path: Path) -> None:
    tree, fake_bin = _checkout(tmp_path)
    _fake_python(tree / ".venv" / "bin" / "python", new_enough=False)
    _fake_python(fake_bin / "python3.11", new_enough=True)
    done = _make(tree, fake_bin, "-n", "serve")
    assert "Removing .venv" in done.stdout
    assert not (tree / ".venv").exists()
    assert "python3.11 -m venv .venv" in done.stdout


def test_a_venv_of_a_new_enough_python_is_kept(tmp_path: Path) -> None:
    tree, fake_bin = _checkout(tmp_path)
    _fake_python(tree / ".venv" / "bin" / "python", new_enough=True)
    done = _make(tree, fake_bin, "-n", "serve")
    assert "Removing" not in done.stdout
    assert (tree / ".venv" / "bin" / "python").exists()


def test_make_serve_says_how_to_reach_the_daemon_from_a_second_terminal(tmp_path: Path) -> None:
    tree, fake_bin = _checkout(tmp_path)
    venv_bin = tree / ".venv" / "bin"
    _fake_python(venv_bin / "python", new_enough=True)
    (venv_bin / "memd").write_text('#!/bin/sh\necho "memd $*"\n')
    (venv_bin / "memd").chmod(0o755)
    (tree / ".venv" / ".installed").touch()  # newer than both pyproject.toml files
    (fake_bin / "echo").symlink_to(shutil.which("echo") or "/bin/echo")
    done = _make(tree, fake_bin, "serve")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "memd serve"  # the daemon runs after the advice
    advice = "\n".join(lines[:-1])
    assert "Ctrl-C stops it" in advice
    assert f"  {venv_bin / 'memd'} store " in advice  # the very program to run, by its full path
    elsewhere = _make(tree, fake_bin, "serve", "MEMD_SOCKET=/tmp/m/s.sock")
    assert f"  MEMD_SOCKET=/tmp/m/s.sock {venv_bin / 'memd'} store " in elsewhere.stdout


def test_the_callers_memd_environment_never_reaches_a_test() -> None:
    """`MEMD_SOCKET=/path make test` (the README has users export it) runs every test as if
    it were unset: no test's daemon, client or command sees the caller's socket."""
    assert not any(name in os.environ for name in CALLERS_MEMD_ENV)
    for name in ("XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        assert os.environ[name].startswith(tempfile.gettempdir())  # a private directory
