"""`Layers`: a map whose versions share almost everything, for tables that change a few names
per batch but hold one name per entry (slugs, keyword postings).

Theory of operation: a version is a base dict that is never changed plus a small dict of changes
(None marks a removed name). `edited()` copies only the changes, so a new version costs what
changed since the last fold, not the whole map; `settled()` folds the changes into a new base
once they outgrow 1/8 of it (or LAYER_MIN), so lookups stay two dict probes, a version copies at
most max(LAYER_MIN, n/8) changes, and a fold (one copy of the map) comes once per n/8 changes.
Values must not be None.
"""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

LAYER_MIN = 64
"""A `Layers` map keeps up to this many changes (or 1/8 of its base) before folding them in."""


class Layers(Generic[K, V]):
    """One version of a map; see the module docstring. Change only a copy from `edited()`."""

    __slots__ = ("base", "changes")

    def __init__(self, base: dict[K, V], changes: dict[K, V | None]) -> None:
        self.base = base
        self.changes = changes

    def get(self, name: K) -> V | None:
        """Return the value under `name`, or None."""
        changes = self.changes
        if name in changes:
            return changes[name]
        return self.base.get(name)

    def edited(self) -> Layers[K, V]:
        """Return a copy to change; this one stays as it is."""
        return Layers(self.base, dict(self.changes))

    def settled(self) -> Layers[K, V]:
        """Return this map, with its changes folded into a new base if they outgrew it."""
        if len(self.changes) <= max(LAYER_MIN, len(self.base) // 8):
            return self
        return Layers(self.as_dict(), {})

    def set(self, name: K, value: V | None) -> None:
        """Store `value` under `name` (None removes it); only on a copy from `edited()`."""
        self.changes[name] = value

    def __contains__(self, name: object) -> bool:
        """Return whether `name` has a value."""
        changes = self.changes
        if name in changes:
            return changes[name] is not None
        return name in self.base

    def as_dict(self) -> dict[K, V]:
        """Return the whole map as a new dict (O(n): for checks, not for hot paths)."""
        merged = dict(self.base)
        for name, value in self.changes.items():
            if value is None:
                merged.pop(name, None)
            else:
                merged[name] = value
        return merged

    @classmethod
    def of(cls, base: dict[K, V]) -> Layers[K, V]:
        """Return a map holding `base` (which must not be changed afterwards)."""
        return cls(base, {})
