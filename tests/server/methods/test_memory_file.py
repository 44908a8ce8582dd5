"""`get`'s `file`: which category file a path names, and hostile paths refused before any
work is spent on them."""

from __future__ import annotations

import pytest

from memd.core.format.categories import Category
from memd.server.methods.handlers import memory_file
from memd.server.workspaces.registry import PATH_MAX
from memd_client.errors import InvalidParams


def test_a_category_file_is_named_by_its_name_its_listed_path_or_its_absolute_path() -> None:
    assert memory_file("decisions.md", "/p/.memory") is Category.DECISION
    assert memory_file(".memory/decisions.md", "/p/.memory") is Category.DECISION
    assert memory_file("/tmp/decisions.md", "/nonexistent/.memory") is None
    assert memory_file("CLAUDE.md", "/p/.memory") is None


@pytest.mark.parametrize("repeat", ["/.", "/a/.."])
def test_a_path_longer_than_path_max_is_refused_with_its_length(repeat: str) -> None:
    file = "/tmp" + repeat * (PATH_MAX // len(repeat) + 1) + "/decisions.md"
    with pytest.raises(InvalidParams, match=r"file path is [\d,]+ bytes long, over the 4,096"):
        memory_file(file, "/tmp/.memory")
    near = "/tmp" + "/." * ((PATH_MAX - 30) // 2) + "/decisions.md"
    assert memory_file(near, "/nonexistent/.memory") is None  # the longest accepted still served
