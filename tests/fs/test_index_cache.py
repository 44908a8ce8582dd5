"""Kept indexes: used only for exactly the text they index; anything else costs a rebuild."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from memd.core.format import mdformat
from memd.core.format.categories import Category
from memd.core.format.mdformat import Entry
from memd.core.search.index import IMAGE_VERSION, build_index, from_image, to_image
from memd.core.search.ranking import search
from memd.fs import index_cache
from memd.server.workspaces.actor import _load_kept

TEXT = (
    "# Quirks\n\nThings that surprise.\n\n"
    "- [lock-first] Take the lock before writing the file\n"
    "- [cache-key] The CI cache is keyed by the lockfile hash\n"
    "- Run the tests with pytest before pushing\n"
)
QUERIES = ("lock", "cache hash", "pytest", "loc", "nothing here")


def _entries(text: str) -> tuple[Entry, ...]:
    return mdformat.entries(mdformat.parse(text))


def _answers(index: object) -> list[object]:
    return [search([(Category.QUIRK, index)], query, limit=5) for query in QUERIES]  # type: ignore[list-item]


def test_a_kept_index_answers_like_a_fresh_one(tmp_path: Path) -> None:
    path = str(tmp_path / "quirks.md")
    key = index_cache.text_key(TEXT)
    index_cache.save(path, build_index(_entries(TEXT)), key)
    kept = index_cache.load(path, key, _entries(TEXT))
    assert kept is not None
    assert _answers(kept) == _answers(build_index(_entries(TEXT)))
    assert kept.length_moments() == build_index(_entries(TEXT)).length_moments()


def test_an_image_of_another_format_version_is_not_used(tmp_path: Path) -> None:
    path = str(tmp_path / "quirks.md")
    key = index_cache.text_key(TEXT)
    image = to_image(build_index(_entries(TEXT)), key)
    older = (IMAGE_VERSION - 1, *msgspec.structs.astuple(image)[1:-1])  # no length counts
    Path(index_cache.image_path(path)).parent.mkdir(parents=True)
    Path(index_cache.image_path(path)).write_bytes(msgspec.msgpack.encode(older))
    assert index_cache.load(path, key, _entries(TEXT)) is None
    assert from_image(_entries(TEXT), msgspec.structs.replace(image, lengths=[]), key) is None


def test_an_updated_index_is_kept_renumbered(tmp_path: Path) -> None:
    path = str(tmp_path / "quirks.md")
    edited = TEXT.replace("- [lock-first] Take the lock before writing the file\n", "")
    edited += "- Deploy through staging first\n"
    updated = build_index(_entries(edited), build_index(_entries(TEXT)))
    key = index_cache.text_key(edited)
    index_cache.save(path, updated, key)
    kept = index_cache.load(path, key, _entries(edited))
    assert kept is not None
    assert _answers(kept) == _answers(build_index(_entries(edited)))


def test_an_image_of_other_text_is_not_used(tmp_path: Path) -> None:
    path = str(tmp_path / "quirks.md")
    index_cache.save(path, build_index(_entries(TEXT)), index_cache.text_key(TEXT))
    other = TEXT + "- One more rule\n"
    assert index_cache.load(path, index_cache.text_key(other), _entries(other)) is None


@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_a_corrupt_or_missing_image_is_not_used(tmp_path: Path, damage: str) -> None:
    path = str(tmp_path / "quirks.md")
    index_cache.save(path, build_index(_entries(TEXT)), index_cache.text_key(TEXT))
    image = Path(index_cache.image_path(path))
    if damage == "garbage":
        image.write_bytes(b"\x93not an index")
    else:
        image.unlink()
    assert index_cache.load(path, index_cache.text_key(TEXT), _entries(TEXT)) is None


def test_the_first_load_keeps_the_index_and_the_next_takes_it(tmp_path: Path) -> None:
    path = str(tmp_path / "quirks.md")
    catalog, kept, key = _load_kept(path, TEXT, None)
    assert kept is None  # nothing kept yet: the actor builds it (a unit at a time) and saves it
    first = build_index(catalog.entries)
    index_cache.save(path, first, key)
    assert Path(index_cache.image_path(path)).exists()
    again, second, _ = _load_kept(path, TEXT, None)
    assert second is not None
    assert again.entries == catalog.entries
    assert _answers(second) == _answers(first)


def test_an_unwritable_state_directory_only_costs_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the state directory should be")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocked))
    path = str(tmp_path / "quirks.md")
    index_cache.save(path, build_index(_entries(TEXT)), index_cache.text_key(TEXT))  # no raise
    assert index_cache.load(path, index_cache.text_key(TEXT), _entries(TEXT)) is None
