"""`memd mcp` where the MCP SDK is not installed, as a subprocess over real pipes: the MCP client
gets the reason as the error of its opening request (not just "Connection closed"), stderr gets
the same sentence, and the bridge exits 1."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

WITHOUT_MCP = """
import sys

class NoMcp:
    '''Make `mcp` absent, as where the extra was never installed.'''

    def find_spec(self, name, path=None, target=None):
        if name == "mcp" or name.startswith("mcp."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoMcp())
from memd.cli.main import main
sys.exit(main())
"""
"""`python -c WITHOUT_MCP mcp` runs `memd mcp` with the SDK unimportable."""

SENTENCE = (
    "memd mcp needs the MCP SDK; install it into the Python memd runs from: "
    f"{shlex.quote(sys.executable)} -m pip install 'memd-daemon[mcp]'"
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "inspector", "version": "0"},
    },
}


def test_an_initialize_request_gets_the_reason_as_its_error(short_tmp: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-c", WITHOUT_MCP, "mcp"],
        input=msgspec.json.encode(INITIALIZE) + b"\n",
        capture_output=True,
        cwd=short_tmp,
        timeout=60,
        check=False,
    )
    assert process.returncode == 1
    assert msgspec.json.decode(process.stdout.splitlines()[0]) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": SENTENCE},
    }
    assert process.stdout.count(b"\n") == 1
    assert process.stderr.decode() == f"memd: {SENTENCE}\n"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_mcp_sdk_client_sees_the_reason(short_tmp: Path, mode: str) -> None:
    """ "auto" (the SDK's default) probes with `server/discover`, then falls back to `initialize`:
    both are answered, so the client reports the sentence rather than a closed connection."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", WITHOUT_MCP, "mcp"],
        env=dict(os.environ),  # PYTHONPATH: the tree under test
        cwd=short_tmp,
    )
    with (short_tmp / "bridge.log").open("w") as errlog:
        client = Client(stdio_client(params, errlog=errlog), mode=mode)
        reason = pytest.RaisesExc(
            MCPError, check=lambda e: (e.code, e.message) == (-32603, SENTENCE)
        )
        # The SDK raises its error out of task groups.
        with pytest.RaisesGroup(reason, flatten_subgroups=True):
            async with client:
                pytest.fail("connected to a bridge without the MCP SDK")
    assert (short_tmp / "bridge.log").read_text() == f"memd: {SENTENCE}\n"
