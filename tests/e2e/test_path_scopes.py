"""Path scopes end to end, with a real daemon: `(paths: ...)` markers kept verbatim in the
Markdown, `query --file`, `context` with a file (layer A gated, layer B led by the scoped
entries) and `memd why FILE`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd_client import Client
from tests.conftest import DaemonProcess

DB_RULE = "Never run a migration without --dry-run first. (paths: src/db/**)"
API_RULE = "Every handler validates its input with pydantic. (paths: src/api/**)"
SQL_QUIRK = "The replica lags; read back writes from the primary. (paths: *.sql, src/db/)"
UI_QUIRK = "The login page caches fonts for a day. (paths: web/**)"
TYPO = "Keep imports sorted. (paths: see the style guide)"


@pytest.fixture
def project(daemon: DaemonProcess, workspace: Path) -> Path:
    (workspace / ".git").mkdir()
    with Client(daemon.socket_path, workspace=workspace) as client:
        client.store(
            origin="user", category="Security", content="Never commit .env files or API keys."
        )
        client.store(origin="user", category="Security", content=DB_RULE)
        client.store(origin="user", category="Instruction", content=API_RULE)
        client.store(origin="user", category="Instruction", content=TYPO)
        client.store(category="Quirk", content=SQL_QUIRK)
        client.store(category="Quirk", content=UI_QUIRK)
        client.store(category="Decision", content="We deploy the API with Helm to staging.")
    return workspace


def memd(*args: str, socket: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memd", "--socket", str(socket), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_markers_stay_verbatim_in_the_markdown(project: Path) -> None:
    text = (project / ".memory" / "quirks.md").read_text()
    assert SQL_QUIRK in text and UI_QUIRK in text


def test_context_gates_layer_a_and_leads_layer_b_with_the_files_entries(
    daemon: DaemonProcess, project: Path
) -> None:
    with Client(daemon.socket_path, workspace=project) as client:
        db = client.context("", file=str(project / "src" / "db" / "migrate.py"))
        api = client.context("", file="src/api/users.py")
        none = client.context("how do we deploy")
    db_contents = [(e.layer, e.content) for e in db.entries]
    assert ("always", DB_RULE) in db_contents
    assert ("always", API_RULE) not in db_contents
    assert ("always", TYPO) in db_contents  # a malformed marker never hides a rule
    assert next(e.content for e in db.entries if e.layer == "relevant") == SQL_QUIRK
    assert UI_QUIRK not in db.markdown  # scoped elsewhere: not in layer B either
    api_always = [e.content for e in api.entries if e.layer == "always"]
    assert API_RULE in api_always and DB_RULE not in api_always
    # No file named: scoped rules wait for the file they are about; the rest as before.
    none_always = [e.content for e in none.entries if e.layer == "always"]
    assert none_always == ["Never commit .env files or API keys.", TYPO]
    assert "Helm to staging" in none.markdown


def test_query_with_a_file(daemon: DaemonProcess, project: Path) -> None:
    with Client(daemon.socket_path, workspace=project) as client:
        listed = client.query("", file="migrations/0042/up.sql", limit=20)
        plain = client.query("", limit=20)
    contents = [hit.content for hit in listed.results]
    assert contents[0] == SQL_QUIRK
    assert UI_QUIRK not in contents and DB_RULE not in contents
    assert "We deploy the API with Helm to staging." in contents
    assert {SQL_QUIRK, UI_QUIRK, DB_RULE} <= {hit.content for hit in plain.results}


def test_memd_why_explains_each_entry(daemon: DaemonProcess, project: Path) -> None:
    (project / "src" / "db").mkdir(parents=True)
    result = memd(
        "why", "migrate.py", "--json", socket=daemon.socket_path, cwd=project / "src" / "db"
    )
    assert result.returncode == 0, result.stderr
    why = json.loads(result.stdout)
    assert why["file"] == "src/db/migrate.py"
    layers = [entry["layer"] for entry in why["entries"] if entry["reason"] == "given"]
    assert layers == ["always", "always", "always", "relevant"]  # the block's order
    assert all(entry["reason"] == "given" for entry in why["entries"][:4])
    by_content = {entry["content"]: entry for entry in why["entries"]}
    assert by_content[DB_RULE]["reason"] == "given"
    assert by_content[DB_RULE]["layer"] == "always"
    assert by_content[API_RULE]["reason"] == "scope"
    assert by_content[API_RULE]["paths"] == ["src/api/**"]
    assert "src/api/**" in by_content[API_RULE]["detail"]
    assert by_content[TYPO]["problem"] and by_content[TYPO]["reason"] == "given"
    assert by_content[UI_QUIRK]["reason"] == "scope"
    assert by_content["We deploy the API with Helm to staging."]["reason"] == "score"
    text = memd("why", "src/db/migrate.py", socket=daemon.socket_path, cwd=project)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Given for src/db/migrate.py (")
    assert "Not given:" in text.stdout
    assert "scope: scoped to src/api/**: not src/db/migrate.py" in text.stdout
