"""Settings: defaults, then the TOML file, then the command line; bad input names the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.config import (
    ConfigError,
    ProjectConfig,
    Settings,
    default_config_path,
    load_config,
    merge,
    parse_config,
    parse_project_config,
)


def test_defaults_file_then_flags() -> None:
    assert merge({}, {}) == Settings()
    from_file = parse_config('lock_timeout = 3\nlog_level = "debug"\n', "f.toml")
    assert from_file == {"lock_timeout": 3.0, "log_level": "DEBUG"}
    settings = merge(from_file, {"lock_timeout": 7.5, "max_frame_bytes": None})
    assert settings.lock_timeout == 7.5
    assert settings.log_level == "DEBUG"
    assert settings.max_frame_bytes == Settings().max_frame_bytes
    caps = parse_config("max_file_bytes = 65536\nmax_entry_chars = 500\n", "f.toml")
    assert caps == {"max_file_bytes": 65536, "max_entry_chars": 500}
    assert (Settings().max_file_bytes, Settings().max_entry_chars) == (8 * 1024 * 1024, 2000)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("socket = '/tmp/x'\n", "Unknown setting 'socket'"),
        ("lock_timeout = 0\n", "Bad lock_timeout in f.toml: 0; it must be a number of seconds"),
        ("lock_timeout = 'soon'\n", "Bad lock_timeout in f.toml: 'soon'"),
        ("log_level = 'LOUD'\n", "it must be one of DEBUG, INFO, WARNING, ERROR"),
        ("max_frame_bytes = 10\n", "at least 1024"),
        ("idle_exit = -5\n", "Bad idle_exit"),
        ("max_file_bytes = 100\n", "it must be a whole number of bytes from 4096 to"),
        ("max_entry_chars = 2.5\n", "it must be a whole number of characters from 10 to 100000"),
        ("lock_timeout = \n", "not valid TOML"),
    ],
)
def test_bad_settings_name_the_file_and_the_key(text: str, names: str) -> None:
    with pytest.raises(ConfigError, match=r"f\.toml") as caught:
        parse_config(text, "f.toml")
    assert names in str(caught.value)


def test_missing_default_file_means_defaults_but_a_named_one_must_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_config_path() == str(tmp_path / "memd" / "config.toml")
    assert load_config(None, {}) == Settings()
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(str(tmp_path / "nope.toml"), {})
    (tmp_path / "memd").mkdir()
    (tmp_path / "memd" / "config.toml").write_text("idle_exit = 600\n")
    assert load_config(None, {}).idle_exit == 600.0


def test_semantic_is_on_by_default_and_a_file_can_turn_it_off_or_name_a_model() -> None:
    assert (Settings().semantic, Settings().semantic_model) == (True, None)
    chosen = merge(parse_config('semantic = false\nsemantic_model = "/m"\n', "f.toml"), {})
    assert (chosen.semantic, chosen.semantic_model) == (False, "/m")
    with pytest.raises(ConfigError, match=r"Bad semantic in .* it must be true or false"):
        parse_config('semantic = "yes"\n', "f.toml")


def test_a_model_directory_is_absolute_or_under_home(monkeypatch: pytest.MonkeyPatch) -> None:
    # The daemon runs from / under systemd: a relative path would mean something else there.
    monkeypatch.setenv("HOME", "/home/ann")
    assert parse_config('semantic_model = "~/models/m"\n', "f.toml") == {
        "semantic_model": "/home/ann/models/m"
    }
    with pytest.raises(ConfigError, match=r"Bad semantic_model in f.toml: 'models/m'; .*absolute"):
        parse_config('semantic_model = "models/m"\n', "f.toml")


def test_sources_are_normalised_with_home_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ann")
    assert Settings().sources == ()
    text = (
        'sources = ["docs/adr/*.md", "./notes//x.md", "~/notes/*.md", "!~/notes/p.md", '
        '"!AGENTS.md"]\n'
    )
    chosen = parse_config(text, "f.toml")
    assert chosen == {
        "sources": (
            "docs/adr/*.md",
            "notes/x.md",
            "/home/ann/notes/*.md",
            "!/home/ann/notes/p.md",
            "!AGENTS.md",
        )
    }
    assert merge(chosen, {}).sources == chosen["sources"]  # normalising again changes nothing


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('sources = "docs/*.md"\n', "Bad sources in f.toml: 'docs/*.md'; it must be a list of"),
        ("sources = [1]\n", "Bad sources in f.toml: [1]; it must be a list of at most 64 strings"),
        ('sources = [""]\n', "Bad sources in f.toml: '' is empty."),
        ('sources = ["a\\u0000b"]\n', "'a\\x00b' holds the control character U+0000."),
        ('sources = ["../shared/*.md"]\n', "'../shared/*.md' uses .., which memd does not follow"),
        ('sources = ["docs/"]\n', "'docs/' ends with /, so it names a directory"),
        ('sources = ["!"]\n', "'!' names no file after its !."),
        ('sources = [".memory/*.md"]\n', "names .memory/, which memd never reads sources from"),
        ("sources = [" + '"a.md", ' * 65 + "]\n", "65 entries, over the limit of 64"),
    ],
)
def test_bad_sources_name_the_file_and_the_entry(text: str, names: str) -> None:
    with pytest.raises(ConfigError, match=r"f\.toml") as caught:
        parse_config(text, "f.toml")
    assert names in str(caught.value)
    assert str(caught.value).count(". ") == 0  # one sentence


def test_a_project_file_holds_only_relative_sources() -> None:
    source = "/w/.memory/memd.toml"
    assert parse_project_config("", source) == ProjectConfig()
    assert parse_project_config('sources = ["./docs/*.md", "!CLAUDE.md"]\n', source).sources == (
        "docs/*.md",
        "!CLAUDE.md",
    )
    for text, names in [
        ("log_level = 'DEBUG'\n", "Unknown setting 'log_level' in /w/.memory/memd.toml; a"),
        ("sources = [\n", "/w/.memory/memd.toml is not valid TOML"),
        ('sources = ["/etc/passwd"]\n', "'/etc/passwd' is not relative to the workspace root"),
        ('sources = ["~/.ssh/*"]\n', "'~/.ssh/*' is not relative to the workspace root"),
        ('sources = ["../x.md"]\n', "'../x.md' uses .."),
        ("sources = 3\n", "Bad sources in /w/.memory/memd.toml: 3; it must be a list"),
    ]:
        with pytest.raises(ConfigError) as caught:
            parse_project_config(text, source)
        assert names in str(caught.value), text
