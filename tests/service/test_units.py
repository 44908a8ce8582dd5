"""The rendered service files: systemd-analyze accepts the units, the plist has launchd's schema,
and the repository's example files are exactly what `memd.service.units` renders."""

from __future__ import annotations

import ast
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memd.service import units
from memd_client import _paths
from memd_client._paths import SUN_PATH_MAX

REPO = Path(__file__).resolve().parents[2]
MEMD = Path(sys.executable).parent / "memd"  # the venv's script; symlinks kept on purpose
MISSING_ANALYZE = (
    "systemd-analyze is missing: run `make test` (it installs systemd's tools) or "
    "apt-get install systemd"
)
PURE_IMPORTS = {
    "__future__",
    "plistlib",
    "collections.abc",
    "typing",
    "xml.parsers.expat",
    "memd.paths",
}
"""`memd.paths` imports nothing; the units take from it only the names the daemon shares."""


def systemd_analyze() -> str:
    """Return the path of systemd-analyze: required on Linux, skipped elsewhere."""
    found = shutil.which("systemd-analyze")
    if found is None:
        if sys.platform == "linux":
            pytest.fail(MISSING_ANALYZE)
        pytest.skip("systemd-analyze exists on Linux only")
    return found


def analyze(
    *args: str, tmp_path: Path, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `systemd-analyze --user ARGS` with an existing runtime directory (it needs one)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(exist_ok=True)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [systemd_analyze(), *args], capture_output=True, text=True, env=env, timeout=60
    )


def write_units(directory: Path, rendered: dict[str, str]) -> list[str]:
    """Write the units under their own names (Requires=memd.socket must resolve); return paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in rendered.items():
        (directory / name).write_text(text)
        paths.append(str(directory / name))
    return paths


def assert_verified(result: subprocess.CompletedProcess[str]) -> None:
    # verify exits 0 on unknown keys and bad values, so any output at all is a failure.
    assert (result.returncode, result.stderr) == (0, ""), result.stdout + result.stderr


# ---------------------------------------------------------------------------- systemd


@pytest.mark.parametrize("extra", [(), ("--idle-exit", "600")])
def test_rendered_units_pass_systemd_analyze_verify(tmp_path: Path, extra: tuple[str, ...]) -> None:
    assert MEMD.is_file(), f"{MEMD} is missing: install memd into the venv (`make test`)"
    paths = write_units(tmp_path / "units", units.render_systemd([str(MEMD), "serve", *extra]))
    assert_verified(analyze("verify", "--user", *paths, tmp_path=tmp_path))


def test_repo_example_units_pass_verify_with_their_home_specifier(tmp_path: Path) -> None:
    home = tmp_path / "home"
    program = home / ".local" / "bin" / "memd"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    paths = [
        str(REPO / "systemd" / units.SYSTEMD_SOCKET_UNIT),
        str(REPO / "systemd" / units.SYSTEMD_SERVICE_UNIT),
    ]
    assert_verified(analyze("verify", "--user", *paths, tmp_path=tmp_path, home=home))


def test_exec_start_keeps_a_path_with_space_and_percent_as_one_word(tmp_path: Path) -> None:
    program = tmp_path / "my tools%1" / "memd"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    rendered = units.render_systemd([str(program), "serve"])
    assert f'ExecStart="{tmp_path}/my tools%%1/memd" serve\n' in rendered["memd.service"]
    assert_verified(
        analyze("verify", "--user", *write_units(tmp_path / "ok", rendered), tmp_path=tmp_path)
    )
    # The check has teeth: written unquoted, systemd splits the path at the space.
    naive = {
        name: text.replace(f'"{tmp_path}/my tools%%1/memd"', f"{tmp_path}/my tools%%1/memd")
        for name, text in rendered.items()
    }
    result = analyze("verify", "--user", *write_units(tmp_path / "naive", naive), tmp_path=tmp_path)
    assert "is not executable" in result.stderr


def test_offline_security_report_accepts_the_service(tmp_path: Path) -> None:
    paths = write_units(tmp_path / "units", units.render_systemd([str(MEMD), "serve"]))
    result = analyze("security", "--user", "--offline=true", paths[1], tmp_path=tmp_path)
    if "--offline" in result.stderr and "unrecognized" in result.stderr.lower():
        pytest.skip("this systemd-analyze has no --offline")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Overall exposure level for memd.service" in result.stdout


@pytest.mark.parametrize(
    ("arg", "quoted"),
    [
        ("/opt/memd/bin/memd", "/opt/memd/bin/memd"),
        ("/home/me/my tools/memd", '"/home/me/my tools/memd"'),
        ("100%", "100%%"),
        ("$HOME", "$$HOME"),
        ("a\\b", "a\\\\b"),
        ('say "hi"', '"say \\"hi\\""'),
        ("it's", '"it\'s"'),
        ("", '""'),
        (";", "\\;"),
    ],
)
def test_systemd_quote(arg: str, quoted: str) -> None:
    assert units.systemd_quote(arg) == quoted


@pytest.mark.parametrize(
    "argv", [[], ["memd", "serve"], ["%h/memd", "serve"], ["/bin/memd", "a\nb"]]
)
def test_render_systemd_rejects_what_a_unit_cannot_run(argv: list[str]) -> None:
    with pytest.raises(ValueError, match=r"\S"):
        units.render_systemd(argv)


def test_service_unit_has_the_decided_settings_and_no_ignored_hardening() -> None:
    rendered = units.render_systemd(["/opt/memd/bin/memd", "serve", "--idle-exit", "600"])
    socket_unit, service_unit = rendered["memd.socket"], rendered["memd.service"]
    settings = {
        line.partition("=")[0]: line.partition("=")[2]
        for line in service_unit.splitlines()
        if "=" in line and not line.startswith("#")
    }
    assert settings["Type"] == "notify"
    assert settings["ExecStart"] == "/opt/memd/bin/memd serve --idle-exit 600"
    assert settings["ExecReload"] == "/bin/kill -HUP $MAINPID"
    assert settings["TimeoutStopSec"] == "20"
    assert settings["RestrictAddressFamilies"] == "AF_UNIX"
    for ignored in (
        "ProtectSystem",
        "ProtectHome",
        "PrivateTmp",
        "ProtectControlGroups",
        "ProtectProc",
        "MemoryDenyWriteExecute",
    ):
        assert ignored not in settings
    assert "\n[Install]" not in service_unit
    assert "[Install]\nWantedBy=sockets.target\n" in socket_unit
    assert "ListenStream=%t/memd/memd.sock\nSocketMode=0600\nDirectoryMode=0700\n" in socket_unit
    assert all(
        text.startswith("# Generated by `memd service install`") for text in rendered.values()
    )


# ---------------------------------------------------------------------------- launchd

GOOD_JOB = {
    "Label": units.LAUNCHD_LABEL,
    "ProgramArguments": ["/Users/u/bin/memd", "serve"],
    "Sockets": {"Listener": {"SockPathName": "/Users/u/memd.sock", "SockPathMode": 384}},
    "RunAtLoad": False,
    "StandardOutPath": "/Users/u/memd.log",
    "StandardErrorPath": "/Users/u/memd.log",
}


def test_repo_files_equal_the_rendered_examples() -> None:
    for relative, content in units.example_files().items():
        assert (REPO / relative).read_bytes() == content, (
            f"{relative} drifted from memd.service.units.example_files(); regenerate it"
        )


def test_repo_plist_passes_the_schema_checks() -> None:
    data = (REPO / "launchd" / f"{units.LAUNCHD_LABEL}.plist").read_bytes()
    assert units.check_launchd_plist(data) == []
    job = plistlib.loads(data)
    assert job["Sockets"][units.LAUNCHD_SOCKET_NAME]["SockPathMode"] == 384 == 0o600
    assert job["Label"] == units.LAUNCHD_LABEL
    assert job["RunAtLoad"] is False
    assert "KeepAlive" not in job


def test_rendered_plist_round_trips_and_passes_the_schema_checks() -> None:
    data = units.render_launchd(
        ["/Users/u/bin/memd", "serve", "--idle-exit", "600"],
        socket_path="/Users/u/Library/Application Support/memd/memd.sock",
        log_path="/Users/u/Library/Logs/memd.log",
    )
    assert units.check_launchd_plist(data) == []
    job = plistlib.loads(data)
    assert job["ProgramArguments"] == ["/Users/u/bin/memd", "serve", "--idle-exit", "600"]
    assert job["Sockets"] == {
        "Listener": {
            "SockPathName": "/Users/u/Library/Application Support/memd/memd.sock",
            "SockPathMode": 0o600,
        }
    }
    assert job["StandardOutPath"] == job["StandardErrorPath"] == "/Users/u/Library/Logs/memd.log"
    assert b"Generated by `memd service install`" in data


def test_octal_looking_sock_path_mode_is_flagged() -> None:
    data = plistlib.dumps(GOOD_JOB).replace(b"<integer>384</integer>", b"<integer>0600</integer>")
    assert plistlib.loads(data)["Sockets"]["Listener"]["SockPathMode"] == 600  # not 0o600
    problems = units.check_launchd_plist(data)
    assert len(problems) == 1
    assert "SockPathMode" in problems[0]


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"Label": 7}, "Label"),
        ({"ProgramArguments": []}, "ProgramArguments"),
        ({"ProgramArguments": ["memd", "serve"]}, "absolute"),
        ({"ProgramArguments": ["/bin/memd", 3]}, "string"),
        ({"RunAtLoad": "false"}, "RunAtLoad"),
        ({"RunAtLoad": True}, "on demand"),
        ({"KeepAlive": {"SuccessfulExit": False}}, "KeepAlive"),
        ({"StandardErrorPath": "memd.log"}, "StandardErrorPath"),
        ({"Sockets": {"Other": {}}}, "Listener"),
        ({"Sockets": {"Listener": {"SockPathName": "memd.sock", "SockPathMode": 384}}}, "absolute"),
        ({"Sockets": {"Listener": {"SockPathName": "/" + "s" * 103, "SockPathMode": 384}}}, "104"),
        ({"Sockets": {"Listener": {"SockPathName": "/s", "SockPathMode": True}}}, "SockPathMode"),
        (
            {
                "Sockets": {
                    "Listener": {"SockPathName": "/s", "SockPathMode": 384, "SockPassive": 1}
                }
            },
            "SockPassive",
        ),
    ],
)
def test_schema_check_flags(change: dict[str, object], complaint: str) -> None:
    problems = units.check_launchd_plist(plistlib.dumps({**GOOD_JOB, **change}))
    assert len(problems) == 1, problems
    assert complaint in problems[0]


def test_schema_check_reports_malformed_xml() -> None:
    assert units.check_launchd_plist(b"<plist><dict><key>a</key></dict></plist>")[0].startswith(
        "not a valid plist"
    )
    assert units.check_launchd_plist(b"<<<")[0].startswith("not a valid plist")


@pytest.mark.parametrize(
    ("argv", "socket_path", "log_path", "match"),
    [
        (["bin/memd", "serve"], "/s/memd.sock", "/s/memd.log", "program"),
        (["/bin/memd", "serve"], "s/memd.sock", "/s/memd.log", "socket path"),
        (["/bin/memd", "serve"], "/s/memd.sock", "~/memd.log", "log path"),
        ([], "/s/memd.sock", "/s/memd.log", "command"),
        (["/bin/memd", "serve"], "/" + "s" * 103, "/s/memd.log", "104 bytes"),
    ],
)
def test_render_launchd_rejects(
    argv: list[str], socket_path: str, log_path: str, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        units.render_launchd(argv, socket_path=socket_path, log_path=log_path)


def test_render_launchd_accepts_a_103_byte_socket_path() -> None:
    data = units.render_launchd(["/bin/memd"], socket_path="/" + "s" * 102, log_path="/l")
    assert units.check_launchd_plist(data) == []


def test_units_module_is_pure() -> None:
    tree = ast.parse((REPO / "memd" / "service" / "units.py").read_text())
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert imported <= PURE_IMPORTS


def test_the_socket_path_limit_is_the_one_daemon_and_clients_use() -> None:
    assert units.SUN_PATH_MAX == SUN_PATH_MAX


def test_the_service_names_are_the_ones_clients_check() -> None:
    assert units.LAUNCHD_LABEL == _paths.LAUNCHD_LABEL
    assert units.SYSTEMD_SOCKET_UNIT == _paths.SYSTEMD_SOCKET_UNIT
