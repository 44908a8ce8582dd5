"""`import memd_client` stays light: stdlib and msgspec only, never anyio."""

from __future__ import annotations

import subprocess
import sys

import memd_client


def test_import_memd_client_does_not_import_anyio_or_the_daemon() -> None:
    code = (
        "import sys, memd_client; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'anyio', 'watchfiles', 'filelock', 'memd', 'sniffio'}); print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_client_verbs_of_the_cli_do_not_import_the_server_stack() -> None:
    code = (
        "import sys, memd.cli.dispatch; "
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'anyio', 'watchfiles', 'filelock'} or m.startswith('memd.server'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_all_is_sorted_and_complete() -> None:
    public = {n for n in dir(memd_client) if not n.startswith("_")} - {
        "errors",
        "protocol",
        "aio",
        "__version__",
    }
    assert memd_client.__all__ == sorted(memd_client.__all__, key=lambda n: (not n.isupper(), n))
    assert set(memd_client.__all__) == public


def test_the_async_client_without_anyio_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['anyio'] = None\n"
        "try:\n"
        "    import memd_client.aio\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc.name, exc, sep='|')\n"
        "import memd_client.aio\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    message = "memd_client.aio needs anyio: pip install 'memd-client[async]'"
    assert out.stdout == f"ModuleNotFoundError|anyio|{message}\n"
    assert out.returncode == 1
    # Uncaught, the traceback ends in that sentence and carries no second one about anyio.
    assert out.stderr.splitlines()[-1] == f"ModuleNotFoundError: {message}"
    assert "During handling" not in out.stderr and "halted" not in out.stderr
