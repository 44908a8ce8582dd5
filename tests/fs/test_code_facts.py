"""code_facts against real git repositories made here (renames through `git mv` commits,
chains, deletions, uncommitted moves, ignored files, words at a baseline) and a workspace
without git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memd.core.citations.model import Anchor, PathFact
from memd.fs import code_facts
from tests.git_env import git_env


def _path(key: str) -> Anchor:
    return Anchor(key, "path", key, 0, len(key), True)


def _word(word: str) -> Anchor:
    return Anchor(word, "symbol", word, 0, len(word), True, (word,))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    env = git_env(tmp_path / "home")
    for name in ("HOME", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL"):
        monkeypatch.setenv(name, env[name])
    root = tmp_path / "repo"
    root.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    (root / "src" / "api").mkdir(parents=True)
    (root / "src" / "api" / "client.ts").write_text("export function withFileLock() {}\n")
    (root / "src" / "old.py").write_text("def kept(): pass\n")
    (root / "src" / "helpers.py").write_text("def removed_helper(): pass\n")
    (root / "gone.txt").write_text("x\n")
    (root / ".gitignore").write_text(".env\ndist/\n")
    (root / "Makefile").write_text("lint:\n\techo\n")
    (root / ".memory").mkdir()
    (root / ".memory" / "decisions.md").write_text("- call `onlyInMemory()`\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    git("mv", "src/old.py", "src/mid.py")
    git("commit", "-qm", "two")
    git("mv", "src/mid.py", "src/new.py")
    git("rm", "-q", "gone.txt")
    git("rm", "-q", "src/helpers.py")
    git("commit", "-qm", "three")
    git("mv", "src/api", "src/http")
    git("commit", "-qm", "four")
    git("mv", "Makefile", "GNUmakefile")  # staged, not committed
    (root / ".env").write_text("SECRET=1\n")
    (root / "dist").mkdir()
    (root / "dist" / "a.js").write_text("x\n")
    (root / "baseline").write_text(git("rev-parse", "HEAD~3"))
    return root


def test_paths_found_moved_deleted_ignored(repo: Path) -> None:
    keys = [
        "src/http/client.ts", "http/client.ts", "src/http/client", "src/http", "src/**/*.ts",
        "src/old.py", "src/mid.py", "src/api", "src/api/client.ts", "gone.txt", "Makefile",
        ".env", "dist/a.js", "dist", "never/was.py",
    ]  # fmt: skip
    facts = code_facts.gather(str(repo), [_path(k) for k in keys])
    paths = facts.paths
    assert facts.git
    assert paths["src/http/client.ts"].found == ("src/http/client.ts",)
    assert paths["http/client.ts"].found == ("src/http/client.ts",)  # under a subfolder
    assert paths["src/http/client"].found == ("src/http/client.ts",)  # without extension
    assert paths["src/http"].found == ("src/http",)
    assert paths["src/**/*.ts"].found == ("src/http/client.ts",)
    assert paths["src/old.py"] == PathFact(known=True, moved_to="src/new.py")  # a chain
    assert paths["src/mid.py"] == PathFact(known=True, moved_to="src/new.py")
    assert paths["src/api"] == PathFact(known=True, moved_to="src/http")  # a directory
    assert paths["src/api/client.ts"].moved_to == "src/http/client.ts"
    assert paths["gone.txt"] == PathFact(known=True)  # deleted: known, nowhere to go
    assert paths["Makefile"].moved_to == "GNUmakefile"  # an uncommitted git mv
    for ignored in (".env", "dist/a.js", "dist"):  # never tracked: nothing to go stale
        assert not paths[ignored].found and not paths[ignored].moved_to
        assert not paths[ignored].known or paths[ignored].ignored
    assert paths["never/was.py"] == PathFact()


def test_words_now_and_at_a_baseline(repo: Path) -> None:
    baseline = (repo / "baseline").read_text()
    words = ["withFileLock", "removed_helper", "thirdPartyThing", "onlyInMemory"]
    facts = code_facts.gather(str(repo), [_word(w) for w in words], [baseline, "", baseline])
    assert facts.words["withFileLock"].files == ("src/http/client.ts",)
    assert facts.words["removed_helper"].files == ()
    assert facts.words["onlyInMemory"].files == ()  # .memory/ itself is never searched
    assert facts.known_words[baseline] == {"removed_helper"}
    assert facts.known_words[""] == frozenset()  # HEAD no longer has it
    assert facts.targets["make"].names == {"lint"}


def test_baselines_blame_each_line(repo: Path) -> None:
    lines = code_facts.baselines(str(repo), [".memory/decisions.md"])
    commit = lines[(".memory/decisions.md", 1)]
    assert len(commit) == 40
    with (repo / ".memory" / "decisions.md").open("a") as handle:
        handle.write("- a new line\n")
    assert (
        code_facts.baselines(str(repo), [".memory/decisions.md"])[(".memory/decisions.md", 2)] == ""
    )


def test_tree_state_changes_with_a_commit(repo: Path) -> None:
    before = code_facts.tree_state(str(repo))
    env = git_env(repo.parent / "home")
    subprocess.run(["git", "commit", "-qm", "five"], cwd=repo, env=env, check=True)
    assert code_facts.tree_state(str(repo)) not in ("", before)


def test_tree_state_changes_with_an_unstaged_edit_and_a_delete(repo: Path) -> None:
    """A function removed in the working tree, staged or not, changes the fingerprint, so a
    check gathers again; reading the state twice gives the same answer."""
    before = code_facts.tree_state(str(repo))
    assert code_facts.tree_state(str(repo)) == before
    source = repo / "src" / "http" / "client.ts"
    source.write_text(source.read_text() + "// edited, not staged\n")
    edited = code_facts.tree_state(str(repo))
    assert edited != before
    source.unlink()
    assert code_facts.tree_state(str(repo)) not in (before, edited)


def test_a_broken_git_degrades_to_unverifiable(repo: Path) -> None:
    (repo / ".git" / "HEAD").write_text("garbage\n")
    (repo / ".git" / "index").write_bytes(b"not an index")
    facts = code_facts.gather(str(repo), [_path("src/old.py"), _word("removed_helper")], ["x"])
    assert not facts.paths["src/old.py"].known  # nothing known: nothing is found missing
    assert facts.known_words == {}
    assert facts.problem.startswith("git could not read this repository")  # and it says so
    assert code_facts.baselines(str(repo), [".memory/decisions.md"]) == {}


def test_without_git_a_walk_honours_gitignore(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("def run_server(): pass\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("def generated_only(): pass\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "package.json").write_text('{"scripts": {"e2e": "x"}}')
    anchors = [
        _path("src/main.py"), _path("src/gone.py"), _path("nodir/x.py"), _path("build/out.py"),
        _word("run_server"), _word("generated_only"),
    ]  # fmt: skip
    facts = code_facts.gather(str(tmp_path), anchors, [""])
    assert not facts.git
    assert facts.paths["src/main.py"].found == ("src/main.py",)
    assert facts.paths["src/gone.py"] == PathFact(known=True)  # its first directory exists
    assert facts.paths["nodir/x.py"] == PathFact()
    assert facts.paths["build/out.py"].ignored
    assert facts.words["run_server"].files == ("src/main.py",)
    assert facts.words["generated_only"].files == ()
    assert facts.known_words == {}
    assert facts.targets["npm"].names == {"e2e"}
    assert code_facts.tree_state(str(tmp_path)) == ""
    assert code_facts.baselines(str(tmp_path), ["x.md"]) == {}
