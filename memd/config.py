"""Daemon settings: built-in defaults, then the config file, then the command line.

The file is TOML, at `--config PATH` or else `$XDG_CONFIG_HOME/memd/config.toml` (default
`~/.config/memd/config.toml`); a missing default file means "all defaults". Keys:

    log_level = "INFO"          # DEBUG, INFO, WARNING or ERROR
    lock_timeout = 10.0         # seconds a write waits for another tool's .memory/.lock
    max_frame_bytes = 1048576   # largest request accepted
    idle_exit = 600             # socket-activated only: exit after this long with no clients
    frame_timeout = 30.0        # seconds a client may take to finish a request it started
    max_connections = 1024      # clients served at once; one more gets an error and is closed
    max_file_bytes = 8388608    # largest category file loaded, or grown by a store (8 MiB)
    max_entry_chars = 2000      # longest memory stored, in characters
    max_archive_bytes = 16777216  # archive.md past this moves to archive-YYYY-MM-DD.md (16 MiB)
    allow_root = false          # also serve clients running as root (not only memd's own user)
    allow_secrets = false       # store memories that carry a secret value (files get committed!)
    idle_unload_seconds = 600   # unload a workspace nothing used for this long (0: never)
    semantic = true             # semantic search, when the `semantic` extra is installed
    semantic_model = "/path"    # a directory with model.onnx and vocab.txt (default: the extra's)
    sources = ["docs/adr/*.md", "~/notes/*.md", "!AGENTS.md"]   # read-only sources (below)
    episode_half_life_days = 90  # an episode's rank halves every this many days (decay)
    episode_max_age_days = 180   # cleanup archives older episodes nobody recalled since
    chat = true                 # read coding agents' past sessions of the workspace ("chat")
    chat_max_age_days = 90      # sessions last written longer ago than this are left out

    [[categories]]              # a custom category for every workspace (repeat the table)
    name = "Runbook"            # a capitalised word
    file = "runbooks.md"        # in .memory/, created by its first store
    limit = 40                  # most entries
    layer = "relevant"          # or "always": given in every context, like Security

    [review]                    # per category: an agent's store goes "direct" (the default) or
    Security = "pending"        # waits "pending" in .memory/inbox.md for `memd review`
    Instruction = "pending"     # (these two recommended)

    [llm]                       # a model's second opinion (off by default; see below)
    command = ["ollama", "run", "llama3.2"]  # argv, no shell: reads a prompt, prints an answer
    timeout = 10                # seconds one answer may take, waiting for a turn included (1..120)
    send_security = false       # also send Security text to `command`
    gap_every = 3               # gap analysis every Nth successful store (0: off)
    sampling = false            # the MCP bridge asks its client's own model (sampling)

`sources` adds read-only Markdown sources to every workspace, besides `.memory/` and the
default instruction files (`memd.core.sources.source_globs` has the defaults and the rules): a
glob relative to the workspace root, an absolute path or glob (`~/` is expanded), or `!` and a
pattern that removes files (`!CLAUDE.md` drops that default); at most 64 entries. A project
may add its own in `.memory/memd.toml` (`sources = [...]`), relative to
its root only, since a cloned repository controls that file; it applies after this one.
A project may add custom categories there too (`[[categories]]`, the same tables; checked by
`memd.core.format.categories.custom_categories`), after these.

`[llm]` sets up "a model's second opinion" (`memd.core.llm`): with `command` unset the daemon
asks no model (stores decide as always, `reflect` says how to set one up). `command` is a list of
strings: a program found on `PATH` (a bare name), an absolute path or one under `~/`, then its
arguments; it is run without a shell, the prompt on stdin, its answer read from stdout.

Rules:
- An unknown key or a bad value is an error naming the file and the key; nothing is half-applied.
- A command-line flag beats the file (and `MEMD_LOG_LEVEL` beats the file's `log_level`).
- On SIGHUP the daemon reads the file again and applies it; flags given at start still win.
  The socket is not a setting here: clients must find it too, so it comes from `--socket` or
  `MEMD_SOCKET` (see the README).

Size: every setting's check beside the settings, read together.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec

from memd.core.format.categories import BUILTIN, MAX_CUSTOM, custom_categories
from memd.core.format.limits import (
    LOCK_TIMEOUT,
    MAX_ARCHIVE_BYTES,
    MAX_ENTRY_CHARS,
    MAX_FILE_BYTES,
)
from memd.core.search.decay import DEFAULT_HALF_LIFE_DAYS
from memd.core.sources.source_globs import MAX_SOURCE_ENTRIES, parse_entry
from memd.core.writes.consolidation import DEFAULT_MAX_AGE_DAYS
from memd_client._framing import DEFAULT_MAX_FRAME

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_LOCK_TIMEOUT = LOCK_TIMEOUT


class ConfigError(Exception):
    """Raised when the configuration cannot be used; the message names the file and the key."""


Seconds = Annotated[float, msgspec.Meta(gt=0, le=86400 * 365)]


DEFAULT_IDLE_UNLOAD = 600.0
"""Seconds a workspace with no request, subscriber or write stays loaded (its actors, watches
and caches); the next request loads it again."""
DEFAULT_FRAME_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 1024


DEFAULT_LLM_TIMEOUT = 10.0
MIN_LLM_TIMEOUT = 1.0
MAX_LLM_TIMEOUT = 120.0
DEFAULT_GAP_EVERY = 3
MAX_LLM_ARGS = 64
DEFAULT_CHAT_MAX_AGE_DAYS = 90
"""Days after which a session transcript is left out of the "chat" source."""


class LlmSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The `[llm]` table: which model gives a second opinion, and how (see the module docs)."""

    command: tuple[str, ...] | None = None
    """argv of the daemon's model (no shell); None: the daemon asks no model."""
    timeout: Annotated[float, msgspec.Meta(ge=MIN_LLM_TIMEOUT, le=MAX_LLM_TIMEOUT)] = (
        DEFAULT_LLM_TIMEOUT
    )
    """Seconds one answer may take, waiting for a free turn included; past it: no opinion."""
    send_security: bool = False
    """Whether Security text (a store into Security, Security entries) may go to `command`."""
    gap_every: Annotated[int, msgspec.Meta(ge=0, le=1000)] = DEFAULT_GAP_EVERY
    """Gap analysis after every Nth successful store of a workspace that carries a conversation
    excerpt (0: never)."""
    sampling: bool = False
    """The MCP bridge asks its client's own model (MCP sampling) when the client offers it."""


LLM_EXPECTED = {
    "command": (
        f"a list of 1 to {MAX_LLM_ARGS} non-empty strings, the program (a name on PATH, an "
        'absolute path or ~/path) then its arguments, like ["ollama", "run", "llama3.2"]'
    ),
    "timeout": f"a number of seconds from {MIN_LLM_TIMEOUT:g} to {MAX_LLM_TIMEOUT:g}",
    "send_security": "true or false",
    "gap_every": "a whole number from 0 (off) to 1000",
    "sampling": "true or false",
}
"""What each `[llm]` key accepts, in words, for error messages."""


class Settings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The daemon settings that a config file or the command line can change."""

    log_level: LogLevel = "INFO"
    lock_timeout: Seconds = DEFAULT_LOCK_TIMEOUT
    max_frame_bytes: Annotated[int, msgspec.Meta(ge=1024)] = DEFAULT_MAX_FRAME
    idle_exit: Seconds | None = None
    frame_timeout: Seconds = DEFAULT_FRAME_TIMEOUT
    max_connections: Annotated[int, msgspec.Meta(ge=1)] = DEFAULT_MAX_CONNECTIONS
    max_file_bytes: Annotated[int, msgspec.Meta(ge=4096, le=1 << 30)] = MAX_FILE_BYTES
    max_entry_chars: Annotated[int, msgspec.Meta(ge=10, le=100_000)] = MAX_ENTRY_CHARS
    max_archive_bytes: Annotated[int, msgspec.Meta(ge=4096, le=1 << 40)] = MAX_ARCHIVE_BYTES
    allow_root: bool = False
    allow_secrets: bool = False
    idle_unload_seconds: Annotated[float, msgspec.Meta(ge=0, le=86400 * 365)] = DEFAULT_IDLE_UNLOAD
    semantic: bool = True
    """Semantic search (the `semantic` extra's model) for queries in mode auto or semantic;
    false turns it off. The model loads on the first query that asks for it."""
    semantic_model: Annotated[str, msgspec.Meta(min_length=1)] | None = None
    """A directory holding `model.onnx` and `vocab.txt`; None: the model the extra installs."""
    sources: tuple[str, ...] = ()
    """Read-only source patterns for every workspace, normalised, `~/` expanded (see above)."""
    categories: tuple[dict[str, Any], ...] = ()
    """Custom categories for every workspace, as checked tables (`custom_categories`)."""
    episode_half_life_days: Annotated[float, msgspec.Meta(gt=0, le=36500)] = DEFAULT_HALF_LIFE_DAYS
    """Days after which an episode ranks at half its score (`memd.core.search.decay`)."""
    episode_max_age_days: Annotated[int, msgspec.Meta(ge=0, le=36500)] = DEFAULT_MAX_AGE_DAYS
    review: dict[str, Literal["direct", "pending"]] = msgspec.field(default_factory=dict)
    """Episodes older than this that nobody recalled within it are proposed for the archive by
    `cleanup` (`memd.core.writes.consolidation`)."""
    llm: LlmSettings = LlmSettings()
    """The `[llm]` table: the daemon's model for a second opinion (off by default)."""
    chat: bool = True
    """The "chat" source: the current user's own coding agents' session transcripts of the
    workspace (Claude Code's, Codex's), read in place and never sent anywhere; false: never
    read, not even by `extract` with a `transcript`."""
    chat_max_age_days: Annotated[int, msgspec.Meta(ge=1, le=36500)] = DEFAULT_CHAT_MAX_AGE_DAYS
    """Session files last written longer ago than this are left out of the "chat" source."""


PROJECT_CONFIG_NAME = "memd.toml"
"""A project's own memd settings, in its `.memory/` (HackLM ignores the file)."""


class ProjectConfig(msgspec.Struct, frozen=True, kw_only=True):
    """What a project's `.memory/memd.toml` sets."""

    sources: tuple[str, ...] = ()
    """Read-only source patterns relative to the workspace root, normalised; they apply after
    the config file's."""
    categories: tuple[dict[str, Any], ...] = ()
    """Custom categories, as tables; checked against the workspace's others when it loads."""
    review: object = None
    """The `[review]` table as written (None: none); checked entry by entry when the workspace
    loads (`memd.core.review.policy.modes_and_problems`), a bad entry left out."""


def state_dir(env: Mapping[str, str] | None = None) -> str:
    """Return memd's state directory: `$XDG_STATE_HOME/memd` (default `~/.local/state/memd`)."""
    environ = os.environ if env is None else env
    home = environ.get("HOME") or os.path.expanduser("~")
    state = environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state")
    return os.path.join(state, "memd")


def default_log_path(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> str:
    """Return where a background daemon logs: `~/Library/Logs/memd.log` on macOS, else
    `$XDG_STATE_HOME/memd/memd.log` (default `~/.local/state/memd/memd.log`)."""
    if platform == "darwin":
        environ = os.environ if env is None else env
        home = environ.get("HOME") or os.path.expanduser("~")
        return os.path.join(home, "Library", "Logs", "memd.log")
    return os.path.join(state_dir(env), "memd.log")


def global_root(env: Mapping[str, str] | None = None) -> str:
    """Return the user-wide memory's workspace root: `$XDG_DATA_HOME/memd/global` (default
    `~/.local/share/memd/global`); its memories are in `.memory/` there, as in any project."""
    environ = os.environ if env is None else env
    home = environ.get("HOME") or os.path.expanduser("~")
    data = environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    return os.path.join(data, "memd", "global")


def cache_dir(env: Mapping[str, str] | None = None) -> str:
    """Return memd's cache directory: `$XDG_CACHE_HOME/memd` (default `~/.cache/memd`)."""
    environ = os.environ if env is None else env
    home = environ.get("HOME") or os.path.expanduser("~")
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return os.path.join(cache, "memd")


def default_config_path(env: Mapping[str, str] | None = None) -> str:
    """Return `$XDG_CONFIG_HOME/memd/config.toml`, or `~/.config/memd/config.toml`."""
    environ = os.environ if env is None else env
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "memd", "config.toml")


def parse_config(text: str, source: str) -> dict[str, Any]:
    """Return the settings a config file's `text` sets (validated, not yet merged).

    Raises:
        ConfigError: the text is not TOML, or a key is unknown or has a bad value.
    """
    import tomllib  # here: `memd` client verbs import this module for LOG_LEVELS only

    try:
        values = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:  # nesting too deep: no crash
        raise ConfigError(f"{source} is not valid TOML ({exc}); fix it or remove it.") from None
    settings = _convert(values, source)
    return {name: getattr(settings, name) for name in values}


def merge(file_values: Mapping[str, Any], overrides: Mapping[str, Any]) -> Settings:
    """Return the settings from defaults, then `file_values`, then `overrides` (non-None only).

    Raises:
        ConfigError: an override has a bad value.
    """
    chosen = dict(file_values)
    chosen.update({name: value for name, value in overrides.items() if value is not None})
    return _convert(chosen, "the command line")


def load_config(path: str | None, overrides: Mapping[str, Any]) -> Settings:
    """Read the config file (`path`, or the default path if it exists) and merge `overrides`.

    Raises:
        ConfigError: the file cannot be read or holds a bad setting.
    """
    source = path or default_config_path()
    try:
        with open(source, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        if path is not None:
            raise ConfigError(
                f"Config file {path} does not exist; create it or drop --config."
            ) from None
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {source} ({exc}); fix or remove it.") from None
    return merge(parse_config(text, source), overrides)


EXPECTED = {
    "log_level": f"one of {', '.join(LOG_LEVELS)}",
    "lock_timeout": "a number of seconds above 0",
    "max_frame_bytes": "a whole number of bytes, at least 1024",
    "idle_exit": "a number of seconds above 0",
    "frame_timeout": "a number of seconds above 0",
    "max_connections": "a whole number, at least 1",
    "max_file_bytes": "a whole number of bytes from 4096 to 1073741824 (1 GiB)",
    "max_entry_chars": "a whole number of characters from 10 to 100000",
    "max_archive_bytes": "a whole number of bytes, at least 4096",
    "allow_root": "true or false",
    "allow_secrets": "true or false",
    "idle_unload_seconds": "a number of seconds, 0 (never unload) or more",
    "semantic": "true or false",
    "semantic_model": "the path of a directory holding model.onnx and vocab.txt",
    "episode_half_life_days": "a number of days above 0, at most 36500",
    "episode_max_age_days": "a whole number of days from 0 to 36500",
    "chat": "true or false",
    "chat_max_age_days": "a whole number of days from 1 to 36500",
    "sources": (
        f"a list of at most {MAX_SOURCE_ENTRIES} strings, each a glob relative to the workspace "
        "root (docs/*.md), an absolute path or glob, or ! and a pattern to remove (!CLAUDE.md)"
    ),
    "categories": "[[categories]] tables, each with name, file and limit",
    "review": 'a [review] table of category names to "pending" or "direct"',
    "llm": "an [llm] table with command, timeout, send_security, gap_every and sampling",
}
"""What each setting accepts, in words, for error messages."""


def _convert(values: Mapping[str, Any], source: str) -> Settings:
    unknown = sorted(set(values) - set(EXPECTED))
    if unknown:
        raise ConfigError(
            f"Unknown setting {unknown[0]!r} in {source}; the settings are {', '.join(EXPECTED)}."
        )
    if isinstance(values.get("log_level"), str):
        values = dict(values, log_level=values["log_level"].upper())
    if isinstance(model := values.get("semantic_model"), str) and model:
        # The daemon's working directory is / under a service manager: only ~ or an absolute
        # path means the same wherever it runs.
        model = os.path.expanduser(model)
        if not os.path.isabs(model):
            raise ConfigError(
                f"Bad semantic_model in {source}: {values['semantic_model']!r}; it must be an "
                "absolute path (or start with ~/) of a directory holding model.onnx and vocab.txt."
            )
        values = dict(values, semantic_model=model)
    if "sources" in values:
        values = dict(values, sources=check_sources(values["sources"], source, in_project=False))
    if "categories" in values:
        values = dict(values, categories=check_categories(values["categories"], source))
    if "llm" in values:
        values = dict(values, llm=check_llm(values["llm"], source))
    try:
        return msgspec.convert(values, Settings)
    except msgspec.ValidationError as exc:
        name = str(exc).rpartition("$.")[2].rstrip("`")
        if name not in EXPECTED:
            raise ConfigError(f"Bad setting in {source}: {exc}.") from None
        raise ConfigError(
            f"Bad {name} in {source}: {values[name]!r}; it must be {EXPECTED[name]}."
        ) from None


def check_sources(raw: object, source: str, *, in_project: bool) -> tuple[str, ...]:
    """Return the `sources` entries of `source` normalised (`~/` expanded in memd's own config
    file; see `memd.core.sources.source_globs.parse_entry`).

    Raises:
        ConfigError: `raw` is not a list of at most MAX_SOURCE_ENTRIES strings, or an entry is
            refused; the message names the file and the entry.
    """
    where = f"sources in {source}"
    if not isinstance(raw, list | tuple) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(f"Bad {where}: {raw!r}; it must be {EXPECTED['sources']}.")
    if len(raw) > MAX_SOURCE_ENTRIES:
        raise ConfigError(
            f"Bad {where}: {len(raw)} entries, over the limit of {MAX_SOURCE_ENTRIES}; "
            "use globs (docs/**/*.md) to name many files at once."
        )
    entries = []
    for entry in raw:
        expanded = entry
        if not in_project:
            body = entry.removeprefix("!")
            expanded = entry[: len(entry) - len(body)] + os.path.expanduser(body)
        try:
            entries.append(parse_entry(expanded, allow_absolute=not in_project))
        except ValueError as exc:
            raise ConfigError(f"Bad {where}: {entry!r} {exc.args[0]}.") from None
    return tuple(entries)


def check_llm(raw: object, source: str) -> LlmSettings:
    """Return the `[llm]` table of `source` checked (`command`'s `~/` expanded).

    Raises:
        ConfigError: `raw` is not a table, holds another key, or a key has a bad value; the
            message names the file and the key.
    """
    if isinstance(raw, LlmSettings):
        return raw
    if not isinstance(raw, dict):
        raise ConfigError(f"Bad llm in {source}: it must be {EXPECTED['llm']}.")
    unknown = sorted(set(raw) - set(LLM_EXPECTED))
    if unknown:
        raise ConfigError(
            f"Unknown setting llm.{unknown[0]} in {source}; the [llm] settings are "
            f"{', '.join(LLM_EXPECTED)}."
        )
    table = dict(raw)
    if "command" in table:
        table["command"] = _llm_command(table["command"], source)
    try:
        return msgspec.convert(table, LlmSettings)
    except msgspec.ValidationError as exc:
        name = str(exc).rpartition("$.")[2].rstrip("`")
        if name not in LLM_EXPECTED:  # pragma: no cover - every key is named above
            raise ConfigError(f"Bad [llm] setting in {source}: {exc}.") from None
        raise ConfigError(
            f"Bad llm.{name} in {source}: {table[name]!r}; it must be {LLM_EXPECTED[name]}."
        ) from None


def _llm_command(raw: object, source: str) -> tuple[str, ...]:
    bad = ConfigError(
        f"Bad llm.command in {source}: {raw!r}; it must be {LLM_EXPECTED['command']}."
    )
    if not isinstance(raw, list | tuple) or not 1 <= len(raw) <= MAX_LLM_ARGS:
        raise bad
    if not all(isinstance(arg, str) and arg and "\0" not in arg for arg in raw):
        raise bad
    program = os.path.expanduser(raw[0])
    # The daemon's working directory is / under a service manager: a relative path with a
    # slash would mean something else there.
    if "/" in program and not os.path.isabs(program):
        raise bad
    return (program, *raw[1:])


def check_categories(raw: object, source: str, *, each: bool = True) -> tuple[dict[str, Any], ...]:
    """Return the `categories` tables of `source`: a list of at most MAX_CUSTOM tables, each
    checked against the built-ins and the others (`custom_categories`) when `each` (memd's
    own config file, which is applied whole or not at all); a project's tables are checked one
    by one when its workspace loads (`memd.fs.project_categories`).

    Raises:
        ConfigError: the value or (with `each`) a table is bad; the message names the file, the
            table and the key.
    """
    if not isinstance(raw, list | tuple) or not all(isinstance(t, dict) for t in raw):
        raise ConfigError(f"Bad categories in {source}: it must be {EXPECTED['categories']}.")
    if len(raw) > MAX_CUSTOM:
        raise ConfigError(
            f"Bad categories in {source}: {len(raw)} tables, over the limit of {MAX_CUSTOM}."
        )
    if each:
        try:
            custom_categories(raw, BUILTIN)
        except ValueError as exc:
            raise ConfigError(f"Bad {exc.args[0]} in {source}.") from None
    return tuple(dict(table) for table in raw)


def parse_project_config(text: str, source: str) -> ProjectConfig:
    """Return what a project's `.memory/memd.toml` (`text`, read from `source`) sets: `sources`,
    relative to the workspace root, custom `categories` and `review` (unchecked).

    Raises:
        ConfigError: the text is not TOML, holds another key, or `sources` is bad.
    """
    import tomllib

    try:
        values = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:  # nesting too deep: no crash
        raise ConfigError(f"{source} is not valid TOML ({exc}); fix it or remove it.") from None
    unknown = sorted(set(values) - {"sources", "categories", "review"})
    if unknown:
        raise ConfigError(
            f"Unknown setting {unknown[0]!r} in {source}; a project's {PROJECT_CONFIG_NAME} "
            "holds only sources, categories and review (the other settings belong in memd's own "
            "config file)."
        )
    sources = values.get("sources")
    categories = values.get("categories")
    return ProjectConfig(
        sources=() if sources is None else check_sources(sources, source, in_project=True),
        categories=() if categories is None else check_categories(categories, source, each=False),
        review=values.get("review"),
    )
