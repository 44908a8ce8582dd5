"""The semantic extra's install hint names the command that works for how memd was installed:
README's pipx and uv tool commands (with the extra), `make semantic` in a `make serve` checkout,
an editable pip install elsewhere, else the running interpreter's pip."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, strategies as st

from memd.core.format.install_hint import Installed, quote, semantic_install_hint

HOME = "/home/me"
ENV = {"HOME": HOME}
WHERE = " (in memd's checkout, after make dist)"
PIPX = "pipx install --force --pip-args=--find-links=dist 'memd-daemon[{}]'" + WHERE
UV = "uv tool install --find-links dist 'memd-daemon[{}]'" + WHERE


@pytest.mark.parametrize(
    ("installed", "hint"),
    [
        # pipx: its venvs under ~/.local/pipx (older pipx) or the data directory (newer).
        (
            Installed(f"{HOME}/.local/pipx/venvs/memd-daemon", "/x/bin/python", ENV, has_mcp=True),
            PIPX.format("mcp,semantic"),
        ),
        (
            Installed(f"{HOME}/.local/share/pipx/venvs/memd-daemon/", "/x/bin/python", ENV),
            PIPX.format("semantic"),
        ),
        (
            Installed(
                "/opt/px/venvs/memd-daemon", "/x/bin/python", {**ENV, "PIPX_HOME": "/opt/px"}
            ),
            PIPX.format("semantic"),
        ),
        (
            Installed("/v/memd-daemon", "/x/python", {**ENV, "PIPX_LOCAL_VENVS": "/v"}),
            PIPX.format("semantic"),
        ),
        # uv tool: ~/.local/share/uv/tools, $XDG_DATA_HOME/uv/tools or $UV_TOOL_DIR.
        (
            Installed(f"{HOME}/.local/share/uv/tools/memd-daemon", "/x/python", ENV, has_pip=False),
            UV.format("semantic"),
        ),
        (
            Installed("/d/uv/tools/memd-daemon", "/x/python", {**ENV, "XDG_DATA_HOME": "/d"}),
            UV.format("semantic"),
        ),
        (
            Installed("/t/memd-daemon", "/x/python", {"UV_TOOL_DIR": "/t"}, has_mcp=True),
            UV.format("mcp,semantic"),
        ),
        # A checkout: `make serve`'s .venv, or another environment installing it editable.
        (
            Installed(
                "/src/memd/.venv",
                "/src/memd/.venv/bin/python",
                ENV,
                checkout="/src/memd",
                make_semantic=True,
            ),
            "make -C /src/memd semantic",
        ),
        (
            Installed(
                "/envs/dev", "/envs/dev/bin/python", ENV, checkout="/src/memd", make_semantic=True
            ),
            "/envs/dev/bin/python -m pip install -e '/src/memd[semantic]'",
        ),
        (
            Installed(
                "/src/my memd/.venv", "/src/my memd/.venv/bin/python", ENV, checkout="/src/my memd"
            ),
            "'/src/my memd/.venv/bin/python' -m pip install -e '/src/my memd[semantic]'",
        ),
        # Anything else: the interpreter memd runs from, or without pip a reinstall.
        (
            Installed("/venv", "/venv/bin/python", ENV),
            "/venv/bin/python -m pip install 'memd-daemon[semantic]'",
        ),
        (
            Installed(f"{HOME}/.local/share/pipx/venvs", "/x/python", ENV),  # pipx's venvs itself
            "/x/python -m pip install 'memd-daemon[semantic]'",
        ),
        (
            Installed("/venv", "/venv/bin/python", ENV, has_pip=False),
            "install memd again with the extra, 'memd-daemon[semantic]', the way you installed it "
            "(README: Install)",
        ),
    ],
)
def test_the_hint_fits_the_install(installed: Installed, hint: str) -> None:
    assert semantic_install_hint(installed) == hint


def test_the_pipx_and_uv_hints_are_readmes_commands_with_the_extra() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    assert "pipx install --pip-args=--find-links=dist 'memd-daemon[mcp]'" in readme
    assert "uv tool install --find-links dist 'memd-daemon[mcp]'" in readme
    assert "`make semantic`" in readme


@given(
    st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=30)
)
def test_quote_is_one_shell_word(word: str) -> None:
    assert shlex.split(quote(word)) == [word]
    assert quote(word) == shlex.quote(word)


@given(
    prefix=st.from_regex(r"(/[a-z .]{1,6}){1,4}", fullmatch=True),
    executable=st.from_regex(r"(/[a-z .]{1,6}){1,3}", fullmatch=True),
    has_mcp=st.booleans(),
    has_pip=st.booleans(),
)
def test_every_hint_is_one_runnable_command_naming_our_distribution_or_the_checkout(
    prefix: str, executable: str, has_mcp: bool, has_pip: bool
) -> None:
    hint = semantic_install_hint(
        Installed(prefix, executable, ENV, has_mcp=has_mcp, has_pip=has_pip)
    )
    assert "memd-daemon[" in hint
    if has_pip:
        assert shlex.split(hint)[:4] == [executable, "-m", "pip", "install"]
