"""The types of the command line's numbers: each says what it accepts in words, and argparse
turns a refusal into a usage error (exit 2) before any daemon is asked.

Rule: a number the wire carries is checked against its wire type's bounds (`bounded`), the one
source of them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import msgspec


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """A finite positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def wire_bounds(params: type, field: str) -> tuple[float | None, float | None]:
    """The `ge`/`le` bounds of `params.field`'s msgspec `Meta`: the wire type is the one source."""
    struct = msgspec.inspect.type_info(params)
    assert isinstance(struct, msgspec.inspect.StructType)
    for info in struct.fields:
        if info.name == field:
            kinds = info.type.types if isinstance(info.type, msgspec.inspect.UnionType) else ()
            number = next((t for t in kinds if not isinstance(t, msgspec.inspect.NoneType)), None)
            bounded = number or info.type
            return getattr(bounded, "ge", None), getattr(bounded, "le", None)
    raise LookupError(f"{params.__name__} has no field {field}")


def bounded(params: type, field: str, kind: type[int] | type[float]) -> Callable[[str], Any]:
    """An argparse `type` that accepts the numbers the wire type `params.field` accepts, and
    says the range in words otherwise (argparse turns that into a usage error, exit 2)."""
    low, high = wire_bounds(params, field)
    noun = "a whole number" if kind is int else "a number"
    span = f"{noun} from {low:g} to {high:g}" if low is not None and high is not None else noun

    def convert(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {span}, got {text!r}") from None
        if (
            value != value
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            raise argparse.ArgumentTypeError(f"must be {span}, got {text}")
        return value

    convert.__name__ = noun  # argparse's fallback message names the type's __name__
    return convert
