"""Usage errors that say what to do next, for any tree of argparse verbs (`memd.cli.parser`
builds memd's): every error prints the usage of the verb it is about, and exits 2.

Rules:
- A verb is a parser without verbs of its own; its path is the words that name it
  (`("store",)`, `("service", "status")`). What a verb takes is read from its parser alone.
- A missing argument adds the verb's `missing` sentence (what to give, for example how).
- An unknown verb, action or choice names the closest valid one ("did you mean").
- An unknown option names the closest option that verb takes, or the verbs that take it; an
  option of the top-level parser (given before the verb) that the verb does not take is refused
  the same way, never silently ignored.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

REQUIRED = "the following arguments are required: "
"""How argparse starts a missing-argument error (Python 3.11)."""
UNRECOGNIZED = "unrecognized arguments: "
SHOWN_TAKERS = 3
"""At most this many verbs are named as taking an option, then "and others"."""

Check = Callable[[argparse.Namespace], str | None]
"""A verb's own check of what it was given: the missing-argument error, or None."""


class MemdParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors say what to do next: a missing argument adds the verb's
    `missing` sentence, an invalid choice (a verb, an action, a `--hook`) the closest one, and
    `check` finds what argparse cannot require (such as "a slug, or --file and --lines")."""

    def __init__(
        self, *args: Any, missing: str | None = None, check: Check | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.missing = missing
        self.check = check

    def error(self, message: str) -> NoReturn:
        """Print this parser's usage and `message` (with the verb's hint) and exit 2."""
        if message.startswith(REQUIRED) and self.missing:
            message = f"{message}; {self.missing}"
        super().error(message)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices or not isinstance(value, str):
            return super()._check_value(action, value)
        listed = ", ".join(map(repr, choices))
        message = f"invalid choice: {value!r} (choose from {listed})"
        close = difflib.get_close_matches(value, [str(c) for c in choices], n=1)
        if close and isinstance(action, argparse._SubParsersAction):
            message += f"; did you mean `{self.prog} {close[0]}`?"
        elif close:
            message += f"; did you mean {close[0]!r}?"
        raise argparse.ArgumentError(action, message)


def parse(root: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse `argv` as `root` does, and refuse what argparse alone would let through or word
    poorly: an unknown option or word, a top-level option the verb does not take, and what the
    verb's `check` finds missing. Each is a usage error (exit 2) in the verb's own usage."""
    args, extras = root.parse_known_args(argv)
    path = verb_path(root, args)
    here = _parser_at(root, path)
    if extras:
        here.error(UNRECOGNIZED + " ".join(extras) + _option_hint(root, path, extras))
    if not path:
        return args
    own = _long_options(here)
    for action in _shared(root):
        flag = action.option_strings[0]
        if flag not in own and getattr(args, action.dest) != action.default:
            here.error(UNRECOGNIZED + flag + _not_taken(flag, path, _takers(root, flag)))
    missing = here.check(args) if here.check is not None else None
    if missing is not None:
        here.error(REQUIRED + missing)
    return args


def verb_path(root: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, ...]:
    """The words naming the verb `args` runs (empty when none was given)."""
    path: list[str] = []
    parser = root
    while (verbs := _verbs(parser)) is not None:
        name = getattr(args, verbs.dest, None)
        if name is None:
            break
        path.append(name)
        parser = verbs.choices[name]
    return tuple(path)


def verb_parser(root: argparse.ArgumentParser, args: argparse.Namespace) -> MemdParser:
    """The parser of the verb `args` runs (its `error` prints that verb's usage)."""
    return _parser_at(root, verb_path(root, args))


def leaf_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every verb a command line can run, with its path: ("store",), ("service", "status")."""
    verbs = _verbs(parser)
    if verbs is None:
        yield path, parser
        return
    for name, sub in verbs.choices.items():
        yield from leaf_parsers(sub, (*path, name))


def shared_options(root: argparse.ArgumentParser) -> list[str]:
    """The options `root` takes before a verb (each one's first flag), besides help and version."""
    return [action.option_strings[0] for action in _shared(root)]


def long_options(parser: argparse.ArgumentParser) -> list[str]:
    """Every `--flag` `parser` takes."""
    return _long_options(parser)


def _verbs(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any] | None:
    return next(
        (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)),
        None,
    )


def _parser_at(root: argparse.ArgumentParser, path: tuple[str, ...]) -> MemdParser:
    parser = root
    for name in path:
        verbs = _verbs(parser)
        assert verbs is not None
        parser = verbs.choices[name]
    assert isinstance(parser, MemdParser)
    return parser


def _shared(root: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        action
        for action in root._actions
        if action.option_strings
        and not isinstance(action, argparse._HelpAction | argparse._VersionAction)
    ]


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        flag for action in parser._actions for flag in action.option_strings if flag[:2] == "--"
    ]


def _takers(root: argparse.ArgumentParser, flag: str) -> list[tuple[str, ...]]:
    """The verbs that take `flag`."""
    return [path for path, parser in leaf_parsers(root) if flag in _long_options(parser)]


def _option_hint(root: argparse.ArgumentParser, path: tuple[str, ...], extras: list[str]) -> str:
    """What to do about the first unknown option (`--name`) of `extras`: put it after the verb,
    use the closest option the verb takes, or use a verb that takes it ("" for a plain word,
    or an option nothing resembles)."""
    unknown = next((word.partition("=")[0] for word in extras if word[:2] == "--"), None)
    if unknown is None:
        return ""
    own = _long_options(_parser_at(root, path))
    if unknown in own:  # `memd --dry-run store x`: a verb's own options follow it
        return f"; give it after the verb: `memd {' '.join(path)} {unknown} ...`"
    takers = _takers(root, unknown)
    if takers:
        return _not_taken(unknown, path, takers)
    close = difflib.get_close_matches(unknown[2:], [flag[2:] for flag in own], n=1)
    return f"; did you mean --{close[0]}?" if close else ""


def _not_taken(flag: str, path: tuple[str, ...], takers: list[tuple[str, ...]]) -> str:
    """Say that the verb at `path` does not take `flag`, and name the verbs that do."""
    names = [f"`memd {' '.join(taker)}`" for taker in takers if taker != path]
    if not names:
        return ""
    if len(names) > SHOWN_TAKERS:
        shown = f"{', '.join(names[: SHOWN_TAKERS - 1])} and others"
    else:
        shown = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    if not path:
        return f" (it goes after a verb that takes it: {shown})"
    does = "does" if len(names) == 1 else "do"
    return f" (`memd {' '.join(path)}` does not take it; {shown} {does})"
