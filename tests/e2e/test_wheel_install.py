"""memd installed from its wheels, outside this checkout, works: README's Install.

The two wheels are built from this checkout (as `make dist` does, without the network) and
installed into a new virtual environment under /tmp. Their third-party dependencies come from
this test's environment through a `.pth` line placed after the new environment's own
site-packages, so the memd and memd_client that run are the installed ones, never this
checkout's: the test checks that, and that nothing the daemon needs was left out of the wheel.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, start_daemon

TIMEOUT = 120


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two wheels, built with this environment's build backend (no download)."""
    out = tmp_path_factory.mktemp("dist")
    options = [
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--wheel-dir",
        str(out),
    ]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", *options, str(REPO / "client"), str(REPO)],
        check=True,
        timeout=TIMEOUT,
        cwd=out,
    )
    built = {path.name.split("-")[0]: path for path in out.glob("*.whl")}
    assert set(built) == {"memd_daemon", "memd_client"}, built
    return built


@pytest.fixture(scope="module")
def venv(wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with both wheels installed (and no pip of its own)."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    options = ["--quiet", "--no-deps", "--no-index"]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            *options,
            *wheels.values(),
        ],
        check=True,
        timeout=TIMEOUT,
    )
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "zz_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return root


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MEMD_"))}
    return dict(env, HOME=str(home), XDG_STATE_HOME=str(home / "state"))


def test_the_wheel_carries_every_module_and_names_our_distribution(
    wheels: dict[str, Path],
) -> None:
    with zipfile.ZipFile(wheels["memd_daemon"]) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read("memd_daemon-0.1.0.dist-info/METADATA").decode()
        entry_points = wheel.read("memd_daemon-0.1.0.dist-info/entry_points.txt").decode()
    sources = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "memd").rglob("*")
        if path.suffix in {".py", ".typed"} and "__pycache__" not in path.parts
    }
    assert sources <= names, sorted(sources - names)
    assert "memd/semantic/data/minilm-vocab.txt" in names  # package data: the model's vocabulary
    assert "Name: memd-daemon" in metadata
    assert "Requires-Dist: memd-client==0.1.0" in metadata
    assert "memd = memd.cli.main:main" in entry_points


def test_the_installed_memd_serves_stores_and_queries_outside_the_checkout(
    venv: Path, short_tmp: Path
) -> None:
    env = _env(short_tmp)
    memd = str(venv / "bin" / "memd")
    where = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import memd, memd_client; print(memd.__file__, memd_client.__file__)",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=short_tmp,
    ).stdout.split()
    assert len(where) == 2 and all(path.startswith(str(venv)) for path in where), where

    workspace = short_tmp / "proj"
    workspace.mkdir()
    daemon = start_daemon(short_tmp, memd=[memd], env=env)
    try:
        common = ["--socket", str(daemon.socket_path), "--workspace", str(workspace)]

        def run(verb: str, *args: str) -> subprocess.CompletedProcess[str]:
            command = [memd, verb, *common, *args]
            done = subprocess.run(
                command, capture_output=True, text=True, env=env, cwd=short_tmp, timeout=TIMEOUT
            )
            assert done.returncode == 0, done.stderr
            return done

        run("store", "-c", "Decision", "Deploy with Helm, never by hand.")
        assert "Deploy with Helm" in (workspace / ".memory" / "decisions.md").read_text()
        assert "Deploy with Helm" in run("query", "helm").stdout
    finally:
        assert daemon.stop() == 0, daemon.stderr()
