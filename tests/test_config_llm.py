"""The `[llm]` table: off by default, bounded values, bad ones named with the file and key."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from memd.config import ConfigError, LlmSettings, Settings, merge, parse_config


def test_no_model_by_default() -> None:
    llm = Settings().llm
    assert llm == LlmSettings()
    assert (llm.command, llm.timeout, llm.send_security, llm.gap_every, llm.sampling) == (
        None,
        10.0,
        False,
        3,
        False,
    )


def test_a_table_sets_the_model_and_survives_a_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    text = '[llm]\ncommand = ["~/bin/model", "--json"]\ntimeout = 2\ngap_every = 0\n'
    values = parse_config(text, "f.toml")
    settings = merge(values, {"lock_timeout": 3.0})
    assert settings.llm.command == ("/home/someone/bin/model", "--json")
    assert (settings.llm.timeout, settings.llm.gap_every) == (2.0, 0)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("llm = 3\n", "Bad llm in f.toml"),
        ("[llm]\nshell = true\n", "Unknown setting llm.shell in f.toml"),
        ('[llm]\ncommand = "ollama run x"\n', "Bad llm.command in f.toml"),
        ("[llm]\ncommand = []\n", "Bad llm.command"),
        ('[llm]\ncommand = ["bin/model"]\n', "Bad llm.command"),
        ('[llm]\ncommand = ["model", ""]\n', "Bad llm.command"),
        ("[llm]\ntimeout = 0.5\n", "Bad llm.timeout in f.toml: 0.5; it must be a number"),
        ("[llm]\ntimeout = 121\n", "from 1 to 120"),
        ("[llm]\ngap_every = -1\n", "Bad llm.gap_every"),
        ('[llm]\nsend_security = "yes"\n', "Bad llm.send_security"),
        ("[llm]\nsampling = 1\n", "Bad llm.sampling"),
    ],
)
def test_bad_llm_values_name_the_file_and_the_key(text: str, names: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "f.toml")
    assert names in str(caught.value)


@given(st.floats(min_value=1, max_value=120), st.integers(min_value=0, max_value=1000))
def test_any_bounded_timeout_and_period_is_accepted(timeout: float, every: int) -> None:
    values = parse_config(f"[llm]\ntimeout = {timeout!r}\ngap_every = {every}\n", "f.toml")
    assert values["llm"].timeout == timeout
    assert values["llm"].gap_every == every
