"""The command line's grammar: every option says what it does, and numbers are checked against
the wire types' bounds before any daemon is asked, as usage errors (exit 2) a user can read."""

from __future__ import annotations

import argparse

import pytest

from memd.cli.commands import run
from memd.cli.parser import build_parser
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
