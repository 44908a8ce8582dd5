"""Where the `memd` command writes, verb by verb, against a real daemon: stdout carries results
only; every error and miss is one `memd: ` sentence on stderr (with --json too, where stdout
gets the error object), exit 1 when the daemon answered with an error, 3 when none answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli.parser import build_parser
from memd.cli.usage_errors import leaf_parsers, long_options
from tests.cli.test_cli_usage import MINIMAL
from tests.conftest import DaemonProcess
from tests.e2e.test_cli import memd

CLIENT_VERBS = [
    path for path, sub in leaf_parsers(build_parser()) if "--no-autostart" in long_options(sub)
]


def _one_sentence(stderr: str, *words: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("memd: "), stderr
    for word in words:
        assert word in lines[0], stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize("path", CLIENT_VERBS, ids=" ".join)
def test_every_client_verb_says_on_stderr_that_no_daemon_answers(
    path: tuple[str, ...], short_tmp: Path, workspace: Path
) -> None:
    argv = [*path, "--no-autostart", *MINIMAL[path]]
    result = memd(*argv, cwd=workspace, socket=short_tmp / "nobody.sock")
    assert result.returncode == 3
    assert result.stdout == ""
    _one_sentence(result.stderr, "memd serve")
    as_json = memd(*argv, "--json", cwd=workspace, socket=short_tmp / "nobody.sock")
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout)["error"]["type"] == "DaemonUnavailable"
    _one_sentence(as_json.stderr, "memd serve")


@pytest.fixture
def linked(short_tmp: Path, workspace: Path) -> Path:
    """A workspace whose `.memory` is a symbolic link: memd refuses every file in it (1004)."""
    real = short_tmp / "elsewhere"
    real.mkdir()
    os.symlink(real, workspace / ".memory")
    return workspace


@pytest.mark.parametrize(
    "argv",
    [
        ["store", "Deploy with Helm."],
        ["query", "helm"],
        ["cleanup"],
        ["list"],
        ["get", "use-helm"],
        ["get", "--file", "quirks.md", "--lines", "1-3"],
        ["delete", "-c", "Quirk", "use-helm"],
    ],
    ids=" ".join,
)
def test_an_error_the_daemon_answers_goes_to_stderr_and_exits_1(
    argv: list[str], daemon: DaemonProcess, linked: Path
) -> None:
    result = memd(*argv, cwd=linked, socket=daemon.socket_path)
    assert result.returncode == 1
    assert result.stdout == ""
    _one_sentence(result.stderr, "symbolic link")
    as_json = memd(*argv, "--json", cwd=linked, socket=daemon.socket_path)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"]["code"] == 1004
    _one_sentence(as_json.stderr, "symbolic link")


def test_a_candidate_extract_could_not_store_goes_to_stderr(
    daemon: DaemonProcess, linked: Path
) -> None:
    result = memd(
        "extract", "--store", "Never commit .env files.", cwd=linked, socket=daemon.socket_path
    )
    assert result.returncode == 1
    assert result.stdout == "Security: Never commit .env files.  (constraint)\n"
    _one_sentence(result.stderr, 'Security "Never commit .env files." was not stored:', "link")


def test_files_a_read_left_out_are_warnings_on_stderr_beside_the_result(
    daemon: DaemonProcess, linked: Path
) -> None:
    result = memd("context", "deploy", cwd=linked, socket=daemon.socket_path)
    assert result.returncode == 0  # the block was served
    assert result.stdout.startswith("## Project memory (memd)")
    assert "so it was left out" not in result.stdout
    warnings = result.stderr.splitlines()
    assert [line.split(" cannot be read")[0] for line in warnings] == [
        "memd: quirks.md",
        "memd: preferences.md",
        "memd: decisions.md",
        "memd: procedures.md",
        "memd: episodes.md",
    ]  # the block itself names the two whose rules every prompt carries


def test_a_slug_get_or_delete_does_not_find_is_a_miss_on_stderr(
    daemon: DaemonProcess, workspace: Path
) -> None:
    sock = daemon.socket_path
    assert (
        memd(
            "store",
            "-c",
            "Quirk",
            "-s",
            "clock",
            "The CI clock drifts.",
            cwd=workspace,
            socket=sock,
        ).returncode
        == 0
    )
    for argv in (
        ["get", "nope"],
        ["get", "-c", "Quirk", "nope"],
        ["delete", "-c", "Quirk", "nope"],
    ):
        result = memd(*argv, cwd=workspace, socket=sock)
        assert result.returncode == 1, argv
        assert result.stdout == "", argv
        _one_sentence(result.stderr, "nope")
    deleted = memd("delete", "--json", "-c", "Quirk", "nope", cwd=workspace, socket=sock)
    assert deleted.returncode == 1
    assert json.loads(deleted.stdout)["deleted"] is False  # the result, as --json promises
    _one_sentence(deleted.stderr, "nope")
    got = memd("get", "--json", "nope", cwd=workspace, socket=sock)
    assert got.returncode == 1
    assert "error" in json.loads(got.stdout)
    _one_sentence(got.stderr, "nope")
    # Found, it is a result on stdout and nothing else.
    found = memd("delete", "-c", "Quirk", "clock", cwd=workspace, socket=sock)
    assert (found.returncode, found.stderr) == (0, "")
    assert "archive.md" in found.stdout


def test_a_reader_that_goes_away_ends_the_command_quietly(
    daemon: DaemonProcess, workspace: Path
) -> None:
    memory = workspace / ".memory"
    memory.mkdir(exist_ok=True)
    lines = [f"- [e{n}] Entry {n} keeps the {n}th widget list in order." for n in range(3000)]
    (memory / "quirks.md").write_text("# Quirks\n\n" + "\n".join(lines) + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "memd", "--socket", str(daemon.socket_path), "list"],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    with process.stdout, process.stderr:
        assert process.stdout.readline()  # `| head -1`: one line, then the reader is gone
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=60) == 141  # as a shell reports SIGPIPE
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
