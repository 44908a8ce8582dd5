"""Plan and apply the cleanup of one category file: merge near-duplicates, prune, assign slugs.

Theory of operation: `plan_cleanup` looks at a category's `Document` and returns a `CleanupPlan`
(what it would merge, prune and slug); `apply_cleanup` carries a plan out on the same document
and returns the new document plus an `ArchivedEntry` for every entry it removed. Without
`apply` the daemon only reports the plan. Scoring follows HackLM (hacklm-spec.md §4.4) exactly;
merging, pruning and slugging fix the weaknesses listed in §11.3.

Rules:
- Merging uses the store's judgement (`judge.judge`): an entry is folded into another only when
  a store of it would be skipped there, because it says nothing the other does not (the same
  words reformatted, or a shorter form of it). A changed value, a reversed rule, other tags or
  anything new keep both: "Always use tabs" and "Never use tabs" contradict each other, and
  "Use Node 20" / "Use Node 22" is a change to resolve, not a duplicate to drop. A procedure
  folds only into one of the same name, an episode only into the very same one
  (`fold_kinds.may_fold`).
- Entries are ordered by specificity: most content words first (repeats counted), then most
  tags, then higher `score_entry`, then earlier line. In that order each entry joins the first
  cluster whose winner it says nothing beyond, or else starts a new cluster (only winners with
  its normal form or `dedup_index.close` to it are judged, as in a store). Unlike HackLM's
  single linkage at 0.3, nothing chains: every loser is judged against the entry it is folded
  into.
- A cluster's winner is its first member, the most specific wording. It keeps its content (no
  "(also: ...)" keyword soup), its line and its slug; a slug-less winner takes the first slug of
  its losers in file order, else a derived one. Losers are removed and archived with the reason
  "merged into [winner-slug] (<why>)"; the plan gives each loser's relation to the winner.
- Stability: no winner says nothing beyond an earlier one (it would have joined it), so a
  second plan on the result is empty.
- Prune: after merging, a category with more than `limit` entries loses its lowest-scoring
  entries beyond the limit. Among equal scores the earlier entry goes first and the later one
  stays: stores append, so the later entry is the newer knowledge, and the older one is the
  likelier to be stale (HackLM does the opposite; memd keeps the newest, and the archive keeps
  the other). File order is stable, so the choice is deterministic. A pruned entry that tied
  with one that stays names it (`Prune.tied_with`). Pruned entries are archived with the
  reason "pruned: over the <Category> limit of <n> (score <s>)". Merging and pruning repeat
  until neither changes anything (pruning an entry out of a group left alone above can make
  the rest of it mergeable).
- A contradiction keeps one side: a plan never prunes two entries one of which contradicts the
  other (`judge.judge` of the earlier against the later is a conflict: a reversed rule, a
  changed value or choice; only pairs `dedup_index.close` to each other are judged, as in a
  store). Of two such candidates the newer (further down the file) stays, even when it scores
  less, and the next candidate in score order is pruned instead; the pruned one names it
  (`Prune.contradicted_by`) and its archive reason says so. A candidate contradicting an entry
  pruned in an earlier round of the same plan stays. So "Enable X" / "Disable X" at the limit
  lose at most one side, and the topic stays in the file. If every candidate left contradicts
  a pruned entry, the category stays over its limit.
- Slugs: every remaining entry without a slug gets `slugs.derive_slug` of its content, unique
  against every slug the file has or this plan assigns. Its line is rewritten in place as
  `- [slug] content`. Existing slugs, even ones that are not kebab-case, are never changed.
- Cleanup never edits content. HackLM's `[[...]]` artifact stripping (§4.2) is not done: it
  would change keywords (and so merge decisions) behind the caller's back.
- Every non-entry line survives unchanged; removing an entry may also drop one blank separator
  line (`mdformat.remove_line`). Lines never move: rewrites are in place, removals close up.

- Stale entries (`every_citation_gone`, given its citations' statuses): an entry whose every
  citation is missing from the code (none moved, none unverifiable: `memd.core.citations`) is
  proposed for the archive; the daemon archives it only when the cleanup is applied, never
  deletes it. An entry with one citation that still holds, or that memd cannot judge, is never
  proposed.

Size: one plan (merge, prune, slug) built in passes that each read the previous one's result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import msgspec

from memd.core.format.archive import ArchivedEntry
from memd.core.format.categories import Category, Kind
from memd.core.format.mdformat import (
    Document,
    Entry,
    entries,
    format_entry,
    parse_entry_line,
    remove_line,
    replace_line,
)
from memd.core.writes.dedup_index import close
from memd.core.writes.fold_kinds import may_fold
from memd.core.writes.judge import Relation, Verdict, judge
from memd.core.writes.slugs import derive_slug
from memd.core.writes.wording import analyse, terms

MERGE_REASONS = {
    Relation.SAME: "the same words",
    Relation.SAYS_LESS: "a shorter form of it",
}
"""Why a loser was folded into its winner: every relation whose store verdict is a skip."""

# (largest UTF-16 length, points), checked in order; longer content gets _MIN_BREVITY.
_BREVITY_BANDS = ((50, 15), (100, 12), (150, 8), (200, 5))
_MIN_BREVITY = 2
_MAX_SPECIFICITY = 15

# HackLM's regexes, translated from JavaScript: JS `\w`, `\d` and `\b` are ASCII-only, JS `$`
# (no m flag) is Python's `\Z`, and JS `\s` is the explicit class below.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SPECIFICITY_RULES: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(rf"\.[A-Za-z0-9_]{{1,5}}(?:\Z|[{_JS_SPACE}]|/)|/[A-Za-z0-9_]"), 4),
    (re.compile(r"\b(?:npm|pnpm|yarn|git|docker|make|cargo|pip|go)\b", re.ASCII | re.I), 3),
    (re.compile("[\"'`]"), 2),
    (re.compile(r"[0-9]\.[0-9]"), 2),
    (re.compile(r"\b[A-Z_]{3,}\b", re.ASCII), 2),
    (re.compile(r"[a-z][A-Z]"), 2),
)


class Merge(msgspec.Struct, frozen=True, kw_only=True):
    """Near-duplicate entries folded into the most specific one.

    Attributes:
        kept: The winner as it is in the document now.
        removed: The losers, in file order; they are removed and archived.
        content: The winner's content after the merge (its own content, unchanged).
        slug: The winner's slug after the merge.
        relations: For each loser, how it relates to the winner (`MERGE_REASONS` says why
            that makes it foldable).
    """

    kept: Entry
    removed: tuple[Entry, ...]
    content: str
    slug: str
    relations: tuple[Relation, ...] = ()


class Prune(msgspec.Struct, frozen=True, kw_only=True):
    """An entry removed because its category is over its limit.

    Attributes:
        entry: The entry removed.
        score: Its `score_entry`.
        tied_with: When an entry that stays has the same score, the earliest such entry (it
            stays because it is further down the file, so newer); None when every entry that
            stays scores higher.
        contradicted_by: See below (None unless the module's contradiction rule kept it).
    """

    entry: Entry
    score: int
    tied_with: Entry | None = None
    contradicted_by: Entry | None = None
    """The newer entry that contradicts this one (`relation`), left in the file although the
    limit would have pruned it too: the plan keeps one side of a contradiction."""
    relation: Relation | None = None
    """How `contradicted_by` relates to this entry (reversed, a changed value or choice)."""


class SlugAssignment(msgspec.Struct, frozen=True, kw_only=True):
    """A slug-less entry and the slug its line gets in place."""

    entry: Entry
    slug: str


class CleanupPlan(msgspec.Struct, frozen=True, kw_only=True):
    """Everything one cleanup would do to one category file.

    Attributes:
        category: The category the document holds.
        limit: The entry limit the plan prunes to.
        merges: Merges, in the winners' file order.
        prunes: Pruned entries, in file order.
        slugs: Slug assignments for remaining slug-less entries (not merge winners), in file
            order.
        kept_sides: The entries that stay only because each is the newer side of a
            contradiction with a pruned entry (the limit alone would have pruned them), in
            file order.
    """

    category: Category
    limit: int
    merges: tuple[Merge, ...] = ()
    prunes: tuple[Prune, ...] = ()
    slugs: tuple[SlugAssignment, ...] = ()
    kept_sides: tuple[Entry, ...] = ()

    @property
    def empty(self) -> bool:
        """True if applying the plan would change nothing."""
        return not (self.merges or self.prunes or self.slugs)

    @property
    def merged_count(self) -> int:
        """How many entries the merges remove."""
        return sum(len(merge.removed) for merge in self.merges)

    @property
    def pruned_count(self) -> int:
        """How many entries are pruned."""
        return len(self.prunes)

    @property
    def slugged_count(self) -> int:
        """How many entries get a slug they did not have (assignments and slug-less winners)."""
        return len(self.slugs) + sum(1 for merge in self.merges if merge.kept.slug is None)


class _Item(msgspec.Struct, frozen=True, kw_only=True):
    """An entry with what clustering needs, computed once."""

    entry: Entry
    words: frozenset[str]
    normal: str
    score: int
    size: tuple[int, int]
    """How much it says: its content words (repeats counted), then its tags."""


class _Cluster(msgspec.Struct, kw_only=True):
    """A winner and the losers folded into it, each with its relation to the winner."""

    winner: _Item
    losers: list[tuple[_Item, Relation]]


def score_entry(category: Category, content: str) -> int:
    """Return HackLM's `scoreEntry` for `content` in `category` (hacklm-spec.md §4.4).

    Args:
        category: Gives the weight (`cleanup_weight`): Security 25, Instruction 20, Decision
            15, Quirk and Preference 10 (HackLM's); memd's kinds 10, custom ones 10 or 20.
        content: The entry's content, without its slug.

    Returns:
        Weight + brevity (15/12/8/5/2 for a UTF-16 length up to 50/100/150/200/more) +
        specificity (path-like 4, tool word 3, quote 2, version 2, ALLCAPS word 2, camelCase 2;
        capped at 15), from 12 to 55.
    """
    length = _utf16_length(content)
    brevity = next((points for top, points in _BREVITY_BANDS if length <= top), _MIN_BREVITY)
    specificity = sum(points for rule, points in _SPECIFICITY_RULES if rule.search(content))
    return category.cleanup_weight + brevity + min(specificity, _MAX_SPECIFICITY)


def plan_cleanup(category: Category, doc: Document, *, limit: int) -> CleanupPlan:
    """Return what a cleanup of `doc`, the file of `category`, would do (see the module rules).

    Args:
        category: The category `doc` holds; it weighs scores and labels archive records.
        doc: The category file as it is now; the plan must be applied to this very document.
        limit: The most entries the category may keep (HackLM defaults: `category.limit`).

    Returns:
        The plan; `plan.empty` if the file is already clean.

    Raises:
        ValueError: `limit` is negative.
    """
    if limit < 0:
        raise ValueError(f"A category limit cannot be negative, got {limit}.")
    items = [_item(category, entry) for entry in entries(doc)]
    groups, pruned, pruning = _merge_and_prune(items, limit, category.kind)
    taken = {item.entry.slug for item in items if item.entry.slug is not None}
    merges = tuple(_merge(group, taken) for group in groups)
    gone = {loser.entry.line for group in groups for loser, _ in group.losers}
    gone |= {item.entry.line for item in pruned}
    staying = [item for item in items if item.entry.line not in gone]
    winners = {merge.kept.line for merge in merges}
    slugs = _assign_slugs([i.entry for i in staying if i.entry.line not in winners], taken)
    kept = [item for item in staying if item.entry.line in pruning.kept]
    prunes = _prunes(pruned, [item for item in staying if item not in kept], pruning.sides)
    return CleanupPlan(
        category=category,
        limit=limit,
        merges=merges,
        prunes=prunes,
        slugs=slugs,
        kept_sides=tuple(item.entry for item in kept),
    )


def apply_cleanup(doc: Document, plan: CleanupPlan) -> tuple[Document, tuple[ArchivedEntry, ...]]:
    """Carry out `plan` on `doc`, the document it was planned from.

    Args:
        doc: The category file the plan was computed from.
        plan: The plan from `plan_cleanup(category, doc, ...)`.

    Returns:
        The new document, and one archive record per removed entry, in file order.

    Raises:
        ValueError: An entry of the plan is not on its line in `doc`, or the plan removes a
            line twice.
    """
    _check_matches(doc, plan)
    final_slugs = _final_slugs(plan)
    removals = _removals(plan, final_slugs)
    for number, (slug, content) in sorted(_rewrites(plan).items()):
        if number not in removals:
            doc = replace_line(doc, number, format_entry(slug, content))
    for number in sorted(removals, reverse=True):
        doc = remove_line(doc, number)
    return doc, tuple(removals[number] for number in sorted(removals))


def _utf16_length(text: str) -> int:
    """Return the length of `text` in UTF-16 code units, as JavaScript's `.length`."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _item(category: Category, entry: Entry) -> _Item:
    wording = analyse(entry.content)
    normal, words = terms(wording)
    return _Item(
        entry=entry,
        words=words,
        normal=normal,
        score=score_entry(category, entry.content),
        size=(sum(word.content for word in wording.words), len(wording.tags)),
    )


def _merge_and_prune(
    items: Sequence[_Item], limit: int, kind: Kind
) -> tuple[list[_Cluster], list[_Item], _Pruning]:
    """Return the clusters that merge something, the pruned items and the pruning (which
    contradictions it kept a side of), repeated to a fixed point."""
    alive = list(items)
    groups: list[_Cluster] = []
    pruned: list[_Item] = []
    pruning = _Pruning()
    while True:
        new_groups = _clusters(alive, kind)
        gone = {loser.entry.line for group in new_groups for loser, _ in group.losers}
        alive = [item for item in alive if item.entry.line not in gone]
        weakest = pruning.round(alive, limit)
        gone = {item.entry.line for item in weakest}
        alive = [item for item in alive if item.entry.line not in gone]
        if not new_groups and not weakest:
            break
        groups.extend(new_groups)
        pruned.extend(weakest)
    groups.sort(key=lambda group: group.winner.entry.line)
    pruned.sort(key=lambda item: item.entry.line)
    return groups, pruned, pruning


def _specificity(item: _Item) -> tuple[int, int, int, int]:
    """Sort key: most content words, then most tags, then highest score, then earliest line (an
    entry that says nothing beyond another never says more than it)."""
    return (-item.size[0], -item.size[1], -item.score, item.entry.line)


def _clusters(items: Sequence[_Item], kind: Kind) -> list[_Cluster]:
    """Return the clusters of `items` that fold at least one loser (see the module rules)."""
    clusters: list[_Cluster] = []
    by_word: dict[str, list[int]] = {}
    by_normal: dict[str, list[int]] = {}
    for item in sorted(items, key=_specificity):
        found = _home(item, clusters, by_word, by_normal, kind)
        if found is not None:
            number, relation = found
            clusters[number].losers.append((item, relation))
            continue
        number = len(clusters)
        clusters.append(_Cluster(winner=item, losers=[]))
        for word in item.words:
            by_word.setdefault(word, []).append(number)
        by_normal.setdefault(item.normal, []).append(number)
    return [cluster for cluster in clusters if cluster.losers]


def _home(
    item: _Item,
    clusters: list[_Cluster],
    by_word: dict[str, list[int]],
    by_normal: dict[str, list[int]],
    kind: Kind,
) -> tuple[int, Relation] | None:
    """The first cluster whose winner `item` says nothing beyond and that its kind lets it
    fold into (`fold_kinds.may_fold`), and how it relates."""
    shared: dict[int, int] = {}
    for word in item.words:
        for number in by_word.get(word, ()):
            shared[number] = shared.get(number, 0) + 1
    size = len(item.words)
    near = {
        number
        for number, count in shared.items()
        if close(count, size, len(clusters[number].winner.words))
    }
    near.update(by_normal.get(item.normal, ()))
    for number in sorted(near):
        if not may_fold(kind, clusters[number].winner.entry.content, item.entry.content):
            continue
        judgement = judge(clusters[number].winner.entry.content, item.entry.content)
        if judgement.verdict is Verdict.SKIP:
            return number, judgement.relation
    return None


class _Pruning:
    """The entries a plan prunes, over its rounds, no two of them contradicting each other
    (see the module rules)."""

    def __init__(self) -> None:
        self.chosen: dict[int, _Item] = {}
        """The pruned items, by line."""
        self.final: set[int] = set()
        """Lines pruned in an earlier round (they stay pruned)."""
        self.by_word: dict[str, set[int]] = {}
        """The lines of the pruned items holding each keyword."""
        self.sides: dict[int, tuple[Entry, Relation]] = {}
        """By pruned line, the newer entry contradicting it that stays, and how."""
        self.kept: set[int] = set()
        """Lines of the items left in place because they contradict a pruned one."""
        self.judged: dict[tuple[int, int], Relation | None] = {}
        """By (earlier line, later line), the conflict between two items judged, if any (a
        later round asks again)."""

    def round(self, items: Sequence[_Item], limit: int) -> list[_Item]:
        """Return the items of `items` to prune down to `limit`: lowest score first, among
        equal scores the earlier line (the later one is newer), skipping an item that
        contradicts a pruned one unless it is the older of them (then it is pruned instead of
        them, and they stay)."""
        excess = len(items) - limit
        taken: list[int] = []
        for item in sorted(items, key=lambda item: (item.score, item.entry.line)):
            if len(taken) >= excess:
                break
            related = self._contradicted(item)
            line = item.entry.line
            if related and (
                any(other.entry.line in self.final for other, _ in related)
                or any(other.entry.line < line for other, _ in related)
            ):
                for other, relation in related:
                    if other.entry.line < line:
                        self.sides.setdefault(other.entry.line, (item.entry, relation))
                self.kept.add(line)
                continue
            for other, _ in related:
                self._drop(other)
                taken.remove(other.entry.line)
                self.kept.add(other.entry.line)
            if related:
                newest, relation = max(related, key=lambda pair: pair[0].entry.line)
                self.sides[line] = (newest.entry, relation)
            self._add(item)
            taken.append(line)
        self.final.update(taken)
        return [self.chosen[line] for line in taken]

    def _contradicted(self, item: _Item) -> list[tuple[_Item, Relation]]:
        """The pruned items `item` contradicts, each with the relation of the later to the
        earlier (only those `close` to it are judged)."""
        shared: dict[int, int] = {}
        for word in item.words:
            for line in self.by_word.get(word, ()):
                shared[line] = shared.get(line, 0) + 1
        found: list[tuple[_Item, Relation]] = []
        for line, count in sorted(shared.items()):
            other = self.chosen[line]
            if not close(count, len(item.words), len(other.words)):
                continue
            old, new = sorted((other, item), key=lambda pair: pair.entry.line)
            key = (old.entry.line, new.entry.line)
            if key not in self.judged:
                judgement = judge(old.entry.content, new.entry.content)
                self.judged[key] = judgement.relation if judgement.conflict else None
            relation = self.judged[key]
            if relation is not None:
                found.append((other, relation))
        return found

    def _add(self, item: _Item) -> None:
        self.chosen[item.entry.line] = item
        self.kept.discard(item.entry.line)
        for word in item.words:
            self.by_word.setdefault(word, set()).add(item.entry.line)

    def _drop(self, item: _Item) -> None:
        del self.chosen[item.entry.line]
        self.sides.pop(item.entry.line, None)
        for word in item.words:
            self.by_word[word].discard(item.entry.line)


def _prunes(
    pruned: Sequence[_Item], staying: Sequence[_Item], sides: dict[int, tuple[Entry, Relation]]
) -> tuple[Prune, ...]:
    """Return the prunes of `pruned` (in file order), each naming the earliest entry of
    `staying` (those that stay by their score) with its score, if any, and the newer entry
    contradicting it that stays."""
    first_with: dict[int, Entry] = {}
    for item in sorted(staying, key=lambda item: item.entry.line):
        first_with.setdefault(item.score, item.entry)
    prunes = []
    for item in pruned:
        side, relation = sides.get(item.entry.line, (None, None))
        prunes.append(
            Prune(
                entry=item.entry,
                score=item.score,
                tied_with=first_with.get(item.score),
                contradicted_by=side,
                relation=relation,
            )
        )
    return tuple(prunes)


def _merge(group: _Cluster, taken: set[str]) -> Merge:
    """Return the merge of a cluster's losers into its winner, picking the winner's slug (added
    to `taken`)."""
    winner = group.winner
    losers = sorted(group.losers, key=lambda pair: pair[0].entry.line)
    slug = winner.entry.slug
    if slug is None:
        slug = next((loser.entry.slug for loser, _ in losers if loser.entry.slug), None)
    if slug is None:
        slug = _take(derive_slug(winner.entry.content, taken), taken)
    return Merge(
        kept=winner.entry,
        removed=tuple(loser.entry for loser, _ in losers),
        content=winner.entry.content,
        slug=slug,
        relations=tuple(relation for _, relation in losers),
    )


def _assign_slugs(remaining: Iterable[Entry], taken: set[str]) -> tuple[SlugAssignment, ...]:
    """Return a slug for each slug-less entry of `remaining`, each added to `taken`."""
    return tuple(
        SlugAssignment(entry=entry, slug=_take(derive_slug(entry.content, taken), taken))
        for entry in remaining
        if entry.slug is None
    )


def _take(slug: str, taken: set[str]) -> str:
    """Record `slug` as used in the file and return it."""
    taken.add(slug)
    return slug


def _check_matches(doc: Document, plan: CleanupPlan) -> None:
    """Raise ValueError unless every entry the plan names is on its line in `doc`."""
    named = [*(m.kept for m in plan.merges), *(e for m in plan.merges for e in m.removed)]
    named += [prune.entry for prune in plan.prunes] + [slug.entry for slug in plan.slugs]
    for entry in named:
        found = None
        if 1 <= entry.line <= len(doc.lines):
            found = parse_entry_line(doc.lines[entry.line - 1].text)
        if found != (entry.slug, entry.content):
            raise ValueError(
                f"The cleanup plan does not match the document: line {entry.line} is no longer "
                f"the entry {entry.content!r}; plan the cleanup again."
            )


def _final_slugs(plan: CleanupPlan) -> dict[int, str | None]:
    """Return, by line, the slug each entry the plan touches ends up with."""
    slugs: dict[int, str | None] = {m.kept.line: m.slug for m in plan.merges}
    slugs.update({s.entry.line: s.slug for s in plan.slugs})
    return slugs


def _rewrites(plan: CleanupPlan) -> dict[int, tuple[str, str]]:
    """Return, by line, the (slug, content) of every entry line whose text changes."""
    rewrites = {
        m.kept.line: (m.slug, m.content)
        for m in plan.merges
        if (m.slug, m.content) != (m.kept.slug, m.kept.content)
    }
    rewrites.update({s.entry.line: (s.slug, s.entry.content) for s in plan.slugs})
    return rewrites


def _relations(merge: Merge) -> tuple[Relation, ...]:
    """Each loser's relation to the winner (a plan built by hand may leave them out)."""
    return merge.relations or (Relation.SAME,) * len(merge.removed)


def _removals(plan: CleanupPlan, final_slugs: dict[int, str | None]) -> dict[int, ArchivedEntry]:
    """Return, by line, the archive record of every entry the plan removes."""
    reasons = [
        (loser, f"merged into [{merge.slug}] ({MERGE_REASONS.get(relation, relation.value)})")
        for merge in plan.merges
        for loser, relation in zip(merge.removed, _relations(merge), strict=True)
    ]
    reasons += [(p.entry, _prune_reason(plan, p)) for p in plan.prunes]
    removals: dict[int, ArchivedEntry] = {}
    for entry, reason in reasons:
        if entry.line in removals:
            raise ValueError(f"The cleanup plan removes line {entry.line} twice.")
        removals[entry.line] = ArchivedEntry(
            category=plan.category,
            slug=final_slugs.get(entry.line, entry.slug),
            content=entry.content,
            reason=reason,
        )
    return removals


def _prune_reason(plan: CleanupPlan, prune: Prune) -> str:
    """The archive reason of a pruned entry (no " | ": the archive line's separator)."""
    why = f"pruned: over the {plan.category.name} limit of {plan.limit} (score {prune.score}"
    side = prune.contradicted_by
    if side is None:
        return why + ")"
    named = f"[{side.slug}]" if side.slug else f"line {side.line}"
    return f"{why}; the newer {named} contradicting it stays)"


def every_citation_gone(statuses: Sequence[str]) -> bool:
    """Return True if an entry cites something and every citation's status (as
    `memd.core.citations` gives it) is "missing" (none moved, unverifiable or holding): cleanup
    proposes archiving it."""
    return bool(statuses) and all(status == "missing" for status in statuses)
