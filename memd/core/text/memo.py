"""`memo`: memoisation bounded in bytes, for functions of text that a long-running daemon calls
with whatever text its files hold.

Why not `functools.lru_cache(maxsize=N)`: a count bound is no memory bound when a key can be
any length. A cache of the last 65,536 lines parsed holds 65,536 lines of 3 kB as easily as of
60 B, and keeps every old version of a rewritten file alive until that many new lines push it
out (a 5 MB file rewritten 30 times grew a daemon from 53 to 399 MB).

Rules:
- Each cached call is charged `base + per_char * len(key text)` bytes, an upper bound of what
  its key, its value and its table slot hold (the decorated function's docstring or its
  caller states why its `per_char` is enough). A cache never holds more than `budget` bytes so
  charged; a call costing more than `budget // 64` is computed and not kept.
- Full caches drop their oldest entries first (insertion order), so a stream of new keys (a
  hostile file's random words) cycles through the cache instead of growing it, while a key in
  use keeps coming back.
- Thread-safe: lookups are one C-level dict probe; inserting and evicting take a lock. Two
  threads missing the same key may both compute it (the functions are pure).
- `budget_bytes()` sums every cache's budget: the most all memo caches together can hold.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_MISSING = object()
_caches: list[_Cache] = []


class _Cache:
    """One function's table and its byte count."""

    __slots__ = ("base", "budget", "largest", "lock", "per_char", "table", "used")

    def __init__(self, budget: int, base: int, per_char: int) -> None:
        self.budget = budget
        self.base = base
        self.per_char = per_char
        self.largest = budget // 64
        self.table: OrderedDict[object, tuple[object, int]] = OrderedDict()
        self.used = 0
        self.lock = threading.Lock()

    def put(self, key: object, value: object, cost: int) -> None:
        with self.lock:
            if key in self.table:
                return
            self.table[key] = (value, cost)
            self.used += cost
            while self.used > self.budget:
                _, (_, dropped) = self.table.popitem(last=False)
                self.used -= dropped

    def clear(self) -> None:
        with self.lock:
            self.table.clear()
            self.used = 0


def memo(
    budget: int, *, base: int, per_char: int
) -> Callable[[Callable[Concatenate[str, P], T]], Callable[Concatenate[str, P], T]]:
    """Memoise a function whose first argument is text (further arguments must be hashable),
    holding at most `budget` bytes (see the module rules)."""

    def decorate(function: Callable[Concatenate[str, P], T]) -> Callable[Concatenate[str, P], T]:
        cache = _Cache(budget, base, per_char)
        _caches.append(cache)
        table = cache.table

        @functools.wraps(function)
        def memoised(text: str, /, *args: P.args, **kwargs: P.kwargs) -> T:
            key: object = (text, *args, *kwargs.items()) if args or kwargs else text
            found = table.get(key, _MISSING)
            if found is not _MISSING:
                return found[0]  # type: ignore[index, no-any-return]
            value = function(text, *args, **kwargs)
            cost = cache.base + cache.per_char * len(text)
            if cost <= cache.largest:
                cache.put(key, value, cost)
            return value

        memoised.cache_clear = cache.clear  # type: ignore[attr-defined]
        memoised.table = table  # type: ignore[attr-defined]  # lookups only: see `table_of`
        memoised.cache_bytes = lambda: cache.used  # type: ignore[attr-defined]
        return memoised

    return decorate


def table_of(memoised: Callable[..., T]) -> Mapping[object, tuple[T, int]]:
    """The table of a `memo` function, for a hot loop to probe itself (a dict lookup instead of
    a call): each key maps to (value, charged bytes). Read it only; call the function on a
    miss, which computes and keeps the value."""
    table: Mapping[object, tuple[T, int]] = memoised.table  # type: ignore[attr-defined]
    return table


def budget_bytes() -> int:
    """The most every memo cache together can hold, in charged bytes."""
    return sum(cache.budget for cache in _caches)


def used_bytes() -> int:
    """What every memo cache holds now, in charged bytes."""
    return sum(cache.used for cache in _caches)
