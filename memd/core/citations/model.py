"""The citation check's data: what an entry cites (`Anchor`), what the code says about it
(`CodeFacts`, gathered by the shell in `memd.fs.code_facts`), and the verdict (`AnchorCheck`,
`EntryCheck`).

The flow, for one workspace:
1. `anchors.anchors_of(content)` (pure) finds each entry's citations.
2. The shell gathers `CodeFacts` for all the anchors of all the entries at once, off the event
   loop, against the workspace as it is now (git's index and `git grep` in a git work tree, a
   bounded walk honouring .gitignore elsewhere).
3. `verdicts.check_entry(anchors, facts, baseline)` (pure) decides each anchor's and the
   entry's status; `verdicts.stale_note(check)` says what is wrong in one sentence.

Statuses: an anchor is `ok` (it holds), `moved` (it is gone, and git's rename detection or a
unique symbol elsewhere says where it went: `moved_to`), `missing` (gone, and the code's own
history shows it was this workspace's), or `unverifiable` (memd cannot tell: it never saw the
thing in this workspace, a manifest it cannot read, no git history for a symbol). An entry is
`stale` when any anchor is missing or moved, `ok` when one holds and none is stale, and `none`
when it cites nothing memd can check (no anchor, or only unverifiable ones). Precision comes
first: when in doubt, `unverifiable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

AnchorKind = Literal["path", "symbol", "command", "config", "env"]
"""What an anchor refers to: a file, directory or glob (`path`); a function, class, method or
other identifier (`symbol`); a script or target run through a runner (`command`: `make lint`,
`npm run build`); a configuration key (`config`); an environment variable (`env`)."""

AnchorStatus = Literal["ok", "moved", "missing", "unverifiable"]
EntryStatus = Literal["ok", "stale", "none"]


@dataclass(frozen=True, slots=True)
class Anchor:
    """One citation in an entry's content.

    `text` is the citation as written (without its backticks), at `content[start:end]`, so a
    fix can rewrite it in place. `key` is what is looked up:
    - path: the normalised relative path (no leading `./` or `/`, no trailing `/`; globs kept:
      `src/**/*.ts`), e.g. `./src/api/client.ts` -> `src/api/client.ts`;
    - symbol: the whole name as written without call parentheses (`Foo.bar`, `Foo::bar`,
      `with_file_lock`);
    - command: "<runner> <name>" (`make lint`, `npm build` for `npm run build`, `just x`);
    - config and env: the key or variable itself.
    `words` are the identifiers that must occur as words in the code for a symbol, config key
    or env anchor to hold (`Foo.bar` -> ("Foo", "bar"); `withFileLock()` -> ("withFileLock",));
    for a command, (runner, name); empty for a path. `quoted` is True inside a code span, the
    strongest signal.
    """

    text: str
    kind: AnchorKind
    key: str
    start: int
    end: int
    quoted: bool
    words: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PathFact:
    """What the workspace says about one path anchor's key.

    `found`: the tracked (or, without git, walked) files or directories it resolves to now,
    at most a few: the exact path, a path under a subfolder that ends with it, the path with an
    extension added, or a glob's matches. `ignored`: git ignores it on purpose (`.env`,
    `dist/`): never a citation that can go stale. `known`: the workspace once held it (git's
    history renamed or deleted it, or HEAD has it); without git, its first directory exists.
    `moved_to`: where git's rename detection says it went (followed to a path that exists now).
    """

    found: tuple[str, ...] = ()
    ignored: bool = False
    known: bool = False
    moved_to: str | None = None


@dataclass(frozen=True, slots=True)
class WordFact:
    """Where one identifier occurs as a word in the tracked source now: up to a few `files`
    (empty: nowhere), and `more` when there were more than those."""

    files: tuple[str, ...] = ()
    more: bool = False


@dataclass(frozen=True, slots=True)
class Targets:
    """The names a runner can run in this workspace (`make`'s targets, package.json's scripts,
    a justfile's recipes, a CLI's subcommands...). `complete` is False when some definition
    could not be read (an `include`, a generated target): a name not found is then
    unverifiable, not missing."""

    names: frozenset[str]
    complete: bool = True


@dataclass(frozen=True)
class CodeFacts:
    """What the workspace's code says about a set of anchors, gathered at one moment.

    `git`: the workspace is in a git work tree. `paths` is keyed by path anchors' keys;
    `words` by every word of symbol, config and env anchors; `targets` by runner name (a
    runner absent from it has no manifest here: its commands are unverifiable). `known_words`
    maps a baseline (an entry's commit, from `git blame` of its line; "" for HEAD) to the
    asked words that occurred in the code then: a word gone now that was there when the entry
    was written is missing, one that never was is unverifiable (a third-party name).
    """

    git: bool
    paths: Mapping[str, PathFact] = field(default_factory=dict)
    words: Mapping[str, WordFact] = field(default_factory=dict)
    targets: Mapping[str, Targets] = field(default_factory=dict)
    known_words: Mapping[str, frozenset[str]] = field(default_factory=dict)
    problem: str = ""
    """Why the facts are thinner than they should be, in one sentence ("" when nothing went
    wrong): git could not read the repository, so nothing could be known from its history."""


@dataclass(frozen=True, slots=True)
class AnchorCheck:
    """One anchor's verdict: its status, the evidence in a few words ("src/api/client.ts
    exists", "no tracked file has it; renamed in git to src/http/client.ts"), and where it went
    (`moved_to`, only with status moved)."""

    anchor: Anchor
    status: AnchorStatus
    evidence: str
    moved_to: str | None = None


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """One entry's verdict (see the module docstring) and its anchors' checks, in text order."""

    status: EntryStatus
    anchors: tuple[AnchorCheck, ...] = ()
