"""Whether each citation still holds, from the gathered `CodeFacts`; what to say about a stale
entry; and the rewrite `memd check --fix` stores.

Rules (precision first: when the facts cannot tell, `unverifiable`, which never makes an entry
stale):
- path: a file or directory it resolves to exists -> ok; git ignores it on purpose (`.env`,
  `dist/`) -> unverifiable; git's rename detection says where it went -> moved (`moved_to`);
  the workspace once held it (`PathFact.known`) -> missing; else unverifiable (never this
  workspace's). A path the facts say nothing about is unverifiable.
- symbol, config, env: every word occurs in the tracked source -> ok. A word that occurs
  nowhere is missing only when the code held it at the entry's baseline
  (`CodeFacts.known_words[baseline]`, from `git blame`; "" is HEAD); without git, or when the
  word was never this workspace's (a third-party name), unverifiable. A symbol is moved when
  all its words still occur, its last word now occurs in exactly one file, and the entry
  cites, right next to it ("`Foo.bar` in `src/a.ts`", "`src/a.ts`: `foo()`", at most
  `NEXT_TO` characters apart), exactly one existing file that is not that one: `moved_to` is
  the file it is in now (`--fix` rewrites the cited path, not the symbol).
- command: a runner without a manifest here (absent from `CodeFacts.targets`) ->
  unverifiable; the name among the runner's targets -> ok; not among them and the manifest
  read whole (`Targets.complete`) -> missing for make, npm (package.json scripts), just and
  cargo; a repository's own CLI (any other runner in `targets`) is judged like a word: its
  subcommand occurs as a word in the code -> ok, gone but known at the baseline -> missing,
  else unverifiable.
- entry: stale when any citation is missing or moved, ok when it has citations and none is,
  none without citations, or when memd can verify none of them (all unverifiable).
"""

from __future__ import annotations

from collections.abc import Sequence

from memd.core.citations.model import (
    Anchor,
    AnchorCheck,
    CodeFacts,
    EntryCheck,
    PathFact,
    Targets,
    WordFact,
)

__all__ = ["NEXT_TO", "check_anchor", "check_entry", "fixed_content", "stale_note"]

NEXT_TO = 12
"""Characters at most between a symbol and the path it is said to be in (for `moved`)."""

MANIFESTS = {
    "make": ("the Makefile", "target"),
    "npm": ("package.json", "script"),
    "just": ("the justfile", "recipe"),
    "cargo": ("the cargo config", "alias"),
}
"""The runners whose targets come from a manifest, and how a note names it."""


def check_anchor(anchor: Anchor, facts: CodeFacts, baseline: str = "") -> AnchorCheck:
    """Return one anchor's verdict against the facts (see the module rules)."""
    if anchor.kind == "path":
        return _check_path(anchor, facts.paths.get(anchor.key), facts.problem)
    if anchor.kind == "command":
        return _check_command(anchor, facts, baseline)
    return _check_words(anchor, anchor.words, facts, baseline)


def _check_path(anchor: Anchor, fact: PathFact | None, problem: str = "") -> AnchorCheck:
    if fact is None:
        return AnchorCheck(anchor, "unverifiable", f"{anchor.key} was not looked up")
    if fact.found:
        return AnchorCheck(anchor, "ok", f"{fact.found[0]} exists")
    if fact.ignored:
        return AnchorCheck(anchor, "unverifiable", f"git ignores {anchor.key} on purpose")
    if fact.moved_to:
        evidence = f"no tracked file has it; renamed in git to {fact.moved_to}"
        return AnchorCheck(anchor, "moved", evidence, fact.moved_to)
    if fact.known:
        return AnchorCheck(anchor, "missing", f"{anchor.key} no longer exists")
    if problem:
        return AnchorCheck(anchor, "unverifiable", f"{anchor.key} is not here; {problem}")
    return AnchorCheck(anchor, "unverifiable", f"{anchor.key} was never tracked here")


def _check_words(
    anchor: Anchor, words: Sequence[str], facts: CodeFacts, baseline: str
) -> AnchorCheck:
    """Every word found -> ok; a word gone that the code held at the baseline -> missing."""
    if not words:
        return AnchorCheck(anchor, "unverifiable", "nothing to look up")
    gone = []
    for word in words:
        fact = facts.words.get(word)
        if fact is None:
            return AnchorCheck(anchor, "unverifiable", f"{word} was not looked up")
        if not fact.files:
            gone.append(word)
    if not gone:
        last = facts.words[words[-1]]
        return AnchorCheck(anchor, "ok", f"{words[-1]} occurs in {_files(last)}")
    if not facts.git:
        return AnchorCheck(
            anchor, "unverifiable", f"no tracked file has {gone[0]}; no git history to tell"
        )
    if facts.problem:
        return AnchorCheck(anchor, "unverifiable", f"no file has {gone[0]}; {facts.problem}")
    known = facts.known_words.get(baseline, frozenset())
    if any(word in known for word in gone):
        word = next(word for word in gone if word in known)
        return AnchorCheck(
            anchor, "missing", f"no tracked file has {word}; the code had it when this was written"
        )
    return AnchorCheck(
        anchor, "unverifiable", f"no tracked file has {gone[0]}; it was never this workspace's"
    )


def _files(fact: WordFact) -> str:
    return ", ".join(fact.files[:2]) + (" and more" if fact.more or len(fact.files) > 2 else "")


def _check_command(anchor: Anchor, facts: CodeFacts, baseline: str) -> AnchorCheck:
    runner, name = (*anchor.words, "", "")[:2]
    targets: Targets | None = facts.targets.get(runner)
    if targets is None or not name:
        return AnchorCheck(anchor, "unverifiable", f"no {runner} manifest here")
    if name in targets.names:
        return AnchorCheck(anchor, "ok", f"{runner} defines {name}")
    if runner in MANIFESTS:
        manifest, thing = MANIFESTS[runner]
        if targets.complete:
            return AnchorCheck(anchor, "missing", f"{manifest} has no {thing} {name}")
        return AnchorCheck(anchor, "unverifiable", f"{manifest} could not be read whole")
    return _check_words(anchor, (name,), facts, baseline)


def check_entry(anchors: Sequence[Anchor], facts: CodeFacts, baseline: str = "") -> EntryCheck:
    """Return the entry's verdict: stale if any anchor is missing or moved, ok if one holds
    and none is stale, none without anchors or when every one is unverifiable (see the
    module rules); the anchors' checks are kept either way."""
    checks = [check_anchor(anchor, facts, baseline) for anchor in anchors]
    if not checks:
        return EntryCheck("none")
    checks = _symbols_moved(checks, facts)
    if any(check.status in ("missing", "moved") for check in checks):
        return EntryCheck("stale", tuple(checks))
    verified = any(check.status == "ok" for check in checks)
    return EntryCheck("ok" if verified else "none", tuple(checks))


def _symbols_moved(checks: list[AnchorCheck], facts: CodeFacts) -> list[AnchorCheck]:
    """Mark a symbol moved when it is now in one file and the entry says, right next to it,
    that it is in another existing one (see the module rules)."""
    cited = [c for c in checks if c.anchor.kind == "path" and c.status == "ok"]
    if len(cited) != 1:
        return checks
    path = cited[0].anchor
    found = facts.paths[path.key].found if path.key in facts.paths else ()
    if len(found) != 1:
        return checks
    result = []
    for check in checks:
        anchor = check.anchor
        fact = facts.words.get(anchor.words[-1]) if anchor.words else None
        near = min(abs(path.start - anchor.end), abs(anchor.start - path.end)) <= NEXT_TO
        if (
            anchor.kind == "symbol"
            and check.status == "ok"
            and near
            and fact is not None
            and len(fact.files) == 1
            and not fact.more
            and fact.files[0] != found[0]
        ):
            evidence = f"{found[0]} no longer has {anchor.words[-1]}; only {fact.files[0]} does"
            check = AnchorCheck(anchor, "moved", evidence, fact.files[0])
        result.append(check)
    return result


def stale_note(check: EntryCheck) -> str:
    """Return one sentence saying what is wrong with a stale entry and the fix ("" for any
    other): "cites src/old.ts, which no longer exists; moved to src/new.ts". A citation the
    entry repeats is said once."""
    if check.status != "stale":
        return ""
    cited = next((c.anchor for c in check.anchors if c.anchor.kind == "path"), None)
    parts = [_note(c, cited) for c in check.anchors if c.status in ("missing", "moved")]
    return "; ".join(dict.fromkeys(parts))


def _note(check: AnchorCheck, cited: Anchor | None) -> str:
    anchor = check.anchor
    if anchor.kind == "path":
        text = f"cites {anchor.text}, which no longer exists"
        return f"{text}; moved to {check.moved_to}" if check.status == "moved" else text
    if anchor.kind == "symbol" and check.status == "moved":
        where = f" in {cited.text}" if cited is not None else ""
        return f"cites `{anchor.text}`{where}, which is now in {check.moved_to}"
    if anchor.kind == "command":
        runner, name = (*anchor.words, "", "")[:2]
        if runner in MANIFESTS:
            manifest, thing = MANIFESTS[runner]
            return f"cites `{anchor.text}`, but {manifest} has no {thing} {name} any more"
        return f"cites `{anchor.text}`, but {runner} has no {name} any more"
    if anchor.kind == "symbol":
        return f"cites `{anchor.text}`, which no tracked file mentions any more"
    return f"cites `{anchor.text}`, which no tracked file has any more"


def fixed_content(content: str, check: EntryCheck) -> str | None:
    """Return `content` with each moved citation rewritten to where it went, in its own style
    (a leading `./` or `/`, a trailing `/`, no extension when it had none, `pkg.mod` for a
    module), or None when nothing moved. A moved symbol rewrites the path cited next to it,
    never the symbol. Nothing else changes; an anchor whose text is no longer at its offsets
    is left alone."""
    rewrites: dict[int, tuple[Anchor, str]] = {}
    for anchor_check in check.anchors:
        if anchor_check.status != "moved" or not anchor_check.moved_to:
            continue
        anchor = anchor_check.anchor
        if anchor.kind == "symbol":
            paths = [c.anchor for c in check.anchors if c.anchor.kind == "path"]
            if len(paths) != 1:
                continue
            anchor = paths[0]
        if anchor.kind == "path" and content[anchor.start : anchor.end] == anchor.text:
            rewrites[anchor.start] = (anchor, _styled(anchor, anchor_check.moved_to))
    if not rewrites:
        return None
    pieces: list[str] = []
    position = 0
    for start in sorted(rewrites):
        anchor, new = rewrites[start]
        if start < position:
            continue
        pieces.extend((content[position:start], new))
        position = anchor.end
    pieces.append(content[position:])
    return "".join(pieces)


def _styled(anchor: Anchor, new: str) -> str:
    """`new` written the way the anchor was: `./` or `/` first, a trailing `/`, without the
    extension when it had none, dotted for a module (`python -m pkg.mod`)."""
    old = anchor.text
    if "/" not in old and "." in old and anchor.key == old.replace(".", "/"):
        stem = new.removesuffix(".py").removesuffix("/__main__").removesuffix("/__init__")
        return stem.replace("/", ".")
    last_old = old.rstrip("/").rsplit("/", 1)[-1]
    last_new = new.rsplit("/", 1)[-1]
    if "." not in last_old[1:] and "." in last_new[1:]:
        new = new[: len(new) - len(last_new)] + last_new.rsplit(".", 1)[0]
    prefix = "./" if old.startswith("./") else "/" if old.startswith("/") else ""
    suffix = "/" if old.endswith("/") and not new.endswith("/") else ""
    return prefix + new + suffix
