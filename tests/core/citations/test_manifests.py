"""Manifests: what each runner can run, from the manifests' text; never raises."""

from __future__ import annotations

from hypothesis import given, strategies as st

from memd.core.citations import manifests
from memd.core.citations.model import Targets


def test_make_targets_and_what_makes_them_incomplete() -> None:
    text = "X = a:b\nY := c\n.PHONY: lint\nlint test: deps\n\techo x: y\nbuild::\nt: V = 1\n"
    assert manifests.make_targets(text) == Targets(frozenset({"lint", "test", "build", "t"}))
    assert not manifests.make_targets("include x.mk\na:\n").complete
    assert not manifests.make_targets("$(OUT): x\n").complete
    assert not manifests.make_targets("%.o: %.c\n").complete
    assert manifests.make_targets("define f\ninner: x\nendef\n").names == frozenset()


def test_package_json_scripts_and_bins() -> None:
    text = '{"name": "@s/tool", "bin": "cli.js", "scripts": {"e2e": "x", "build": "y"}}'
    assert manifests.package_scripts(text) == Targets(frozenset({"e2e", "build"}))
    assert manifests.package_bins(text) == frozenset({"tool"})
    assert manifests.package_bins('{"bin": {"a": "x", "b": "y"}}') == frozenset({"a", "b"})
    assert not manifests.package_scripts("[1, 2]").complete
    assert not manifests.package_scripts('{"scripts": 3}').complete


def test_justfile_recipes_aliases_and_modules() -> None:
    text = 'set shell := ["bash"]\nx := "1"\nalias b := build\nbuild t="a": dep\n  echo\n@test:\n'
    assert manifests.just_recipes(text) == Targets(frozenset({"b", "build", "test"}))
    assert not manifests.just_recipes("mod foo\n").complete


def test_cargo_is_never_complete_and_pyproject_names_a_cli() -> None:
    cargo = manifests.cargo_aliases('[alias]\nxtask = "run -p xtask --"\n')
    assert {"xtask", "build", "test"} <= cargo.names
    assert not cargo.complete
    assert manifests.pyproject_scripts('[project.scripts]\nmemd = "m:main"\n') == {"memd"}


def test_targets_of_merges_a_monorepo_and_skips_node_modules() -> None:
    found = manifests.targets_of(
        {
            "Makefile": "a:\n",
            "sub/Makefile": "b:\n",
            "web/package.json": '{"scripts": {"e2e": ""}}',
            "node_modules/x/package.json": '{"scripts": {"evil": ""}}',
            "pyproject.toml": '[project.scripts]\nmemd = "a:b"\n',
            "Justfile": None,
        }
    )
    assert found["make"] == Targets(frozenset({"a", "b"}))
    assert found["npm"] == found["pnpm"] == Targets(frozenset({"e2e"}))
    assert found["memd"] == Targets(frozenset(), complete=False)
    assert found["just"] == Targets(frozenset(), complete=False)
    capped = manifests.targets_of({"Makefile": "a:\n"}, complete=False)
    assert not capped["make"].complete


NAMES = sorted(
    manifests.MAKEFILES
    | manifests.JUSTFILES
    | {"package.json", "pyproject.toml", "Cargo.toml", ".cargo/config.toml"}
)


@given(st.text(max_size=300), st.sampled_from(NAMES))
def test_manifests_never_raise(text: str, name: str) -> None:
    found = manifests.targets_of({name: text})
    assert all(isinstance(t, Targets) for t in found.values())
    manifests.package_bins(text)
