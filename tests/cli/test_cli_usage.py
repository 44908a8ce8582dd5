"""The command line's grammar: every option says what it does, and numbers are checked against
the wire types' bounds before any daemon is asked, as usage errors (exit 2) a user can read."""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import re
from pathlib import Path

import pytest

from memd.cli.dispatch import run
from memd.cli.parser import build_parser
from memd.cli.usage_errors import leaf_parsers, long_options, parse, shared_options
from memd_client import protocol as p


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(parser.prog, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_parsers(sub))
    return found


def test_every_option_and_argument_has_help() -> None:
    missing = [
        f"{prog} {'/'.join(action.option_strings) or action.dest}"
        for prog, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction)
        and (action.help is None or action.help == argparse.SUPPRESS)
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["query", "--limit", "50", "x"], f"from 1 to {p.MAX_QUERY_LIMIT}, got 50"),
        (["query", "--limit", "0", "x"], f"from 1 to {p.MAX_QUERY_LIMIT}, got 0"),
        (["query", "--limit", "abc", "x"], "expected a whole number"),
        (["query", "--min-score", "2", "x"], "a number from 0 to 1, got 2"),
        (["query", "--min-score", "-0.5", "x"], "a number from 0 to 1, got -0.5"),
        (["query", "--min-score", "nan", "x"], "a number from 0 to 1, got nan"),
        (["query", "--min-score", "high", "x"], "expected a number from 0 to 1"),
        (["context", "--budget", "0", "x"], "a whole number from 1 to 100000"),
        (["context", "--budget", "1e9", "x"], "expected a whole number"),
        (["serve", "--ready-timeout", "soon"], "expected a number of seconds"),
    ],
)
def test_numbers_out_of_the_wire_bounds_are_usage_errors(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(argv)  # argparse stops at the bad number, before any daemon is asked
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert words in err
    assert "_positive" not in err and "convert" not in err and "Traceback" not in err


def test_numbers_inside_the_bounds_parse() -> None:
    args = build_parser().parse_args(["query", "--limit", "20", "--min-score", "0.5", "x"])
    assert (args.limit, args.min_score) == (p.MAX_QUERY_LIMIT, 0.5)
    args = build_parser().parse_args(["query", "--min-score", "1", "-n", "1", "x"])
    assert (args.limit, args.min_score) == (1, 1.0)


def test_the_wire_type_rejects_what_the_cli_rejects() -> None:
    import msgspec

    for bad in ({"min_score": 2.0}, {"limit": p.MAX_QUERY_LIMIT + 1}):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"workspace": "/w", "query": "x", **bad}, p.QueryParams)


# ---------------------------------------------------------------------------- shared options

CLI_REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md"
PARSER = build_parser()
"""One parser for the many parametrized cases (parsing never changes it; building one costs
more than a parse). Tests about the parser itself build their own."""
SHARED_FLAGS = shared_options(build_parser())

# What each verb needs besides options to get past argparse (and no further: nothing here runs).
MINIMAL: dict[tuple[str, ...], list[str]] = {
    ("serve",): [],
    ("store",): ["x"],
    ("procedure",): ["Deploy", "build"],
    ("outcome",): ["some-slug", "success"],
    ("episode",): ["The deploy timed out."],
    ("query",): [],
    ("cleanup",): [],
    ("review",): [],
    ("reflect",): [__file__],  # a non-empty transcript, so reflect gets as far as the daemon
    ("list",): [],
    ("get",): ["some-slug"],
    ("delete",): ["-c", "Quirk", "some-slug"],
    ("blame",): ["some-slug"],
    ("undo",): [],
    ("restore",): ["some-slug"],
    ("stats",): [],
    ("status",): [],
    ("watch",): [],
    ("context",): [],
    ("extract",): ["x"],
    ("check",): [],
    ("why",): ["x"],
    ("init",): [],
    ("git-setup",): [],
    ("mcp",): [],
    ("merge-file",): ["base", "ours", "theirs"],
    ("service", "install"): [],
    ("service", "uninstall"): [],
    ("service", "status"): [],
}
VALUES = {"--socket": ["/tmp/x.sock"], "--workspace": ["/tmp"], "--json": [], "--no-autostart": []}


def _reference_table() -> dict[tuple[str, ...], set[str]]:
    """The CLI reference's table of which verbs take which shared option: verb path -> flags."""
    text = CLI_REFERENCE.read_text()
    start = text.index("| Verbs | `--json`")
    rows = list(itertools.takewhile(lambda line: line.startswith("|"), text[start:].splitlines()))
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    flags = [re.findall(r"`(-[-\w]+)", cell)[0] for cell in header[1:]]
    table: dict[tuple[str, ...], set[str]] = {}
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        taken = {flag for flag, cell in zip(flags, cells[1:], strict=True) if cell == "yes"}
        assert all(cell in ("yes", "") for cell in cells[1:]), row
        for verb in re.findall(r"`([a-z][a-z -]*)`", cells[0]):
            assert tuple(verb.split()) not in table, f"{verb} is in two rows"
            table[tuple(verb.split())] = taken
    return table


def test_the_cli_reference_says_exactly_which_verb_takes_which_shared_option() -> None:
    documented = _reference_table()
    assert set(SHARED_FLAGS) == {"--json", "--socket", "--workspace", "--no-autostart"}
    parser = build_parser()
    actual = {
        path: {flag for flag in SHARED_FLAGS if flag in long_options(sub)}
        for path, sub in leaf_parsers(parser)
    }
    assert documented == actual


def test_every_verb_is_covered_here() -> None:
    assert set(MINIMAL) == {path for path, _ in leaf_parsers(build_parser())}


@pytest.mark.parametrize(
    ("path", "flag"),
    [
        (path, flag)
        for path, sub in leaf_parsers(build_parser())
        for flag in SHARED_FLAGS
        if flag not in long_options(sub)
    ],
)
@pytest.mark.parametrize("before", [False, True], ids=["after-verb", "before-verb"])
def test_a_shared_option_a_verb_does_not_take_is_a_usage_error_naming_it(
    path: tuple[str, ...], flag: str, before: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    given = [flag, *VALUES[flag]]
    argv = [*given, *path, *MINIMAL[path]] if before else [*path, *MINIMAL[path], *given]
    with pytest.raises(SystemExit) as exited:
        parse(PARSER, argv)  # parsing only: a verb that got through would not run
    assert exited.value.code == 2
    err = capsys.readouterr().err
    verb = " ".join(path)
    assert err.startswith(f"usage: memd {verb} ")
    assert f"memd {verb}: error: unrecognized arguments: {flag}" in err
    assert f"(`memd {verb}` does not take it; `memd " in err


@pytest.mark.parametrize(
    ("path", "flag"),
    [
        (path, flag)
        for path, sub in leaf_parsers(build_parser())
        for flag in SHARED_FLAGS
        if flag in long_options(sub)
    ],
)
@pytest.mark.parametrize("before", [False, True], ids=["after-verb", "before-verb"])
def test_a_shared_option_a_verb_takes_is_taken_before_or_after_it(
    path: tuple[str, ...], flag: str, before: bool
) -> None:
    given = [flag, *VALUES[flag]]
    argv = [*given, *path, *MINIMAL[path]] if before else [*path, *MINIMAL[path], *given]
    args = parse(PARSER, argv)
    option = next(a for a in PARSER._actions if flag in a.option_strings)
    assert getattr(args, option.dest) != option.default


def test_init_and_service_status_take_json() -> None:
    assert parse(build_parser(), ["init", "--json", "-w", "/tmp"]).json is True
    assert parse(build_parser(), ["service", "status", "--json"]).json is True


# ---------------------------------------------------------------------------- usage errors


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        parse(PARSER, argv)  # parsing only: a verb that got through would not run
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    return err


def _needs_arguments(path: tuple[str, ...]) -> bool:
    """Whether the verb at `path`, given nothing, is refused (it is parsed, never run)."""
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            parse(build_parser(), list(path))
        except SystemExit:
            return True
    return False


VERBS_NEEDING_ARGUMENTS = [
    path for path, _ in leaf_parsers(build_parser()) if _needs_arguments(path)
]


@pytest.mark.parametrize("path", [*VERBS_NEEDING_ARGUMENTS, ("service",)])
def test_a_missing_argument_shows_the_verbs_usage_and_what_to_give(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _usage_error(list(path), capsys)
    verb = " ".join(path)
    assert err.startswith(f"usage: memd {verb} ")
    message = err.splitlines()[-1]
    assert message.startswith(f"memd {verb}: error: the following arguments are required: ")
    assert "e.g. `memd " in message  # what to give, and how


def test_the_verbs_that_need_arguments_are_the_ones_expected() -> None:
    assert set(VERBS_NEEDING_ARGUMENTS) == {
        ("store",),
        ("procedure",),
        ("outcome",),
        ("episode",),
        ("get",),
        ("delete",),
        ("blame",),
        ("restore",),
        ("merge-file",),
        ("why",),
    }


def test_get_needs_a_slug_or_both_file_and_lines(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["get"], ["get", "--file", "quirks.md"], ["get", "-c", "Quirk"]):
        err = _usage_error(argv, capsys)
        assert err.startswith("usage: memd get ")
        assert "memd get: error: the following arguments are required: SLUG, or --file and" in err
    args = parse(build_parser(), ["get", "--file", "quirks.md", "--lines", "1-3"])
    assert (args.slug, args.file, args.lines) == (None, "quirks.md", "1-3")


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (["stroe", "x"], "usage: memd ", "; did you mean `memd store`?"),
        (["qurey", "x"], "usage: memd ", "; did you mean `memd query`?"),
        (["--json", "lst"], "usage: memd ", "; did you mean `memd list`?"),
        (["service", "stauts"], "usage: memd service ", "; did you mean `memd service status`?"),
        (["context", "--hook", "claud", "x"], "usage: memd context ", "did you mean 'claude'?"),
        (["store", "--jsno", "x"], "usage: memd store ", "--jsno; did you mean --json?"),
        (["query", "--tga", "db", "x"], "usage: memd query ", "--tga; did you mean --tag?"),
        (["serve", "--log-levle", "INFO"], "usage: memd serve ", "did you mean --log-level?"),
        (["--jsno", "stats"], "usage: memd stats ", "did you mean --json?"),
        (["--dry-run", "store", "x"], "usage: memd store ", "give it after the verb"),
    ],
)
def test_a_mistyped_verb_or_option_names_the_closest_one(
    argv: list[str], usage: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _usage_error(argv, capsys)
    assert err.startswith(usage)
    assert hint in err.splitlines()[-1]


def test_nothing_close_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["frobnicate"], capsys)
    assert "invalid choice: 'frobnicate'" in err and "did you mean" not in err
    err = _usage_error(["stats", "--zzzzzz"], capsys)
    assert err.rstrip().endswith("unrecognized arguments: --zzzzzz")
