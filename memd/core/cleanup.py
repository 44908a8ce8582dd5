"""Plan and apply the cleanup of one category file: merge near-duplicates, prune, assign slugs.

Theory of operation: `plan_cleanup` looks at a category's `Document` and returns a `CleanupPlan`
(what it would merge, prune and slug); `apply_cleanup` carries a plan out on the same document
and returns the new document plus an `ArchivedEntry` for every entry it removed. Without
`apply` the daemon only reports the plan. Scoring follows HackLM (hacklm-spec.md §4.4) exactly;
merging, pruning and slugging fix the weaknesses listed in §11.3.

Rules:
- Similarity is `dedup.similarity`: 1.0 for normalised-equal text, else the Jaccard index of
  the stemmed keyword sets. Two entries are *mergeable* when their similarity is at least
  MERGE_THRESHOLD and neither is a negation flip of the other (`dedup.is_negation_flip`):
  "Always use tabs" and "Never use tabs" contradict each other, they are not duplicates.
- Entries are ordered by specificity: most keywords first, then higher `score_entry`, then
  earlier line. In that order each entry joins the first cluster whose every member it is
  mergeable with (complete linkage, unlike HackLM's single linkage at 0.3, which chains loosely
  related entries together), or else starts a new cluster.
- A cluster's winner is its first member, the most specific wording. It keeps its content (no
  "(also: ...)" keyword soup), its line and its slug; a slug-less winner takes the first slug of
  its losers in file order, else a derived one. Losers are removed and archived with the reason
  "merged into [winner-slug]".
- Stability: if, in one connected group of mutually reachable mergeable entries, two cluster
  winners are still mergeable (a chain A~B~C with A!~C whose middle B is the most specific), the
  whole group is left alone. Merging part of it would not be stable (the next cleanup would
  merge again) and merging all of it would break complete linkage. So cleanup is idempotent: a
  second plan on the result is empty.
- Prune: after merging, a category with more than `limit` entries loses its lowest-scoring
  entries beyond the limit; among equal scores the later entry goes first (as in HackLM).
  Pruned entries are archived with the reason "pruned: over the <Category> limit of <n> (score
  <s>)". Merging and pruning repeat until neither changes anything (pruning an entry out of a
  group left alone above can make the rest of it mergeable).
- Slugs: every remaining entry without a slug gets `slugs.derive_slug` of its content, unique
  against every slug the file has or this plan assigns. Its line is rewritten in place as
  `- [slug] content`. Existing slugs, even ones that are not kebab-case, are never changed.
- Cleanup never edits content. HackLM's `[[...]]` artifact stripping (§4.2) is not done: it
  would change keywords (and so merge decisions) behind the caller's back.
- Every non-entry line survives unchanged; removing an entry may also drop one blank separator
  line (`mdformat.remove_line`). Lines never move: rewrites are in place, removals close up.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

import msgspec

from memd.core.archive import ArchivedEntry
from memd.core.categories import Category
from memd.core.dedup import is_negation_flip, jaccard, keywords, normalise
from memd.core.mdformat import (
    Document,
    Entry,
    entries,
    format_entry,
    parse_entry_line,
    remove_line,
    replace_line,
)
from memd.core.slugs import derive_slug

MERGE_THRESHOLD = 0.5
"""Minimum pairwise similarity for a merge: between the store-time UPDATE_THRESHOLD (0.6) and
HackLM's cleanup 0.3, so cleanup catches rewordings a store let through without folding merely
related rules together."""

_CATEGORY_WEIGHT = {
    Category.SECURITY: 25,
    Category.INSTRUCTION: 20,
    Category.DECISION: 15,
    Category.QUIRK: 10,
    Category.PREFERENCE: 10,
}

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
    """

    kept: Entry
    removed: tuple[Entry, ...]
    content: str
    slug: str


class Prune(msgspec.Struct, frozen=True, kw_only=True):
    """An entry removed because its category is over its limit, and its `score_entry`."""

    entry: Entry
    score: int


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
    """

    category: Category
    limit: int
    merges: tuple[Merge, ...] = ()
    prunes: tuple[Prune, ...] = ()
    slugs: tuple[SlugAssignment, ...] = ()

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


def score_entry(category: Category, content: str) -> int:
    """Return HackLM's `scoreEntry` for `content` in `category` (hacklm-spec.md §4.4).

    Args:
        category: Gives the weight: Security 25, Instruction 20, Decision 15, Quirk and
            Preference 10.
        content: The entry's content, without its slug.

    Returns:
        Weight + brevity (15/12/8/5/2 for a UTF-16 length up to 50/100/150/200/more) +
        specificity (path-like 4, tool word 3, quote 2, version 2, ALLCAPS word 2, camelCase 2;
        capped at 15), from 12 to 55.
    """
    length = _utf16_length(content)
    brevity = next((points for top, points in _BREVITY_BANDS if length <= top), _MIN_BREVITY)
    specificity = sum(points for rule, points in _SPECIFICITY_RULES if rule.search(content))
    return _CATEGORY_WEIGHT[category] + brevity + min(specificity, _MAX_SPECIFICITY)


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
    groups, pruned = _merge_and_prune(items, limit)
    taken = {item.entry.slug for item in items if item.entry.slug is not None}
    merges = tuple(_merge(winner, losers, taken) for winner, losers in groups)
    done = {loser.entry.line for _, losers in groups for loser in losers}
    done |= {item.entry.line for item in pruned} | {merge.kept.line for merge in merges}
    slugs = _assign_slugs([item.entry for item in items if item.entry.line not in done], taken)
    prunes = tuple(Prune(entry=item.entry, score=item.score) for item in pruned)
    return CleanupPlan(category=category, limit=limit, merges=merges, prunes=prunes, slugs=slugs)


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
    return _Item(
        entry=entry,
        words=keywords(entry.content),
        normal=normalise(entry.content),
        score=score_entry(category, entry.content),
    )


def _mergeable(a: _Item, b: _Item) -> bool:
    """Return True if `a` and `b` may share a cluster: similar enough and not contradictory."""
    similarity = 1.0 if a.normal == b.normal else jaccard(a.words, b.words)
    if similarity < MERGE_THRESHOLD:
        return False
    return not is_negation_flip(a.entry.content, b.entry.content)


def _merge_and_prune(
    items: Sequence[_Item], limit: int
) -> tuple[list[tuple[_Item, tuple[_Item, ...]]], list[_Item]]:
    """Return the (winner, losers) groups and the pruned items, repeated to a fixed point."""
    alive = list(items)
    groups: list[tuple[_Item, tuple[_Item, ...]]] = []
    pruned: list[_Item] = []
    while True:
        new_groups = _clusters(alive)
        gone = {loser.entry.line for _, losers in new_groups for loser in losers}
        alive = [item for item in alive if item.entry.line not in gone]
        weakest = _weakest(alive, limit)
        gone = {item.entry.line for item in weakest}
        alive = [item for item in alive if item.entry.line not in gone]
        if not new_groups and not weakest:
            break
        groups.extend(new_groups)
        pruned.extend(weakest)
    groups.sort(key=lambda group: group[0].entry.line)
    pruned.sort(key=lambda item: item.entry.line)
    return groups, pruned


def _specificity(item: _Item) -> tuple[int, int, int]:
    """Sort key: most keywords, then highest score, then earliest line."""
    return (-len(item.words), -item.score, item.entry.line)


def _clusters(items: Sequence[_Item]) -> list[tuple[_Item, tuple[_Item, ...]]]:
    """Return the stable complete-linkage clusters of `items` with at least two members."""
    links = _links(items)
    clusters: list[list[_Item]] = []
    for item in sorted(items, key=_specificity):
        mates = links[item.entry.line]
        home = next((c for c in clusters if all(m.entry.line in mates for m in c)), None)
        if home is None:
            clusters.append([item])
        else:
            home.append(item)
    unstable = _unstable_lines(links, {cluster[0].entry.line for cluster in clusters})
    return [
        (cluster[0], tuple(sorted(cluster[1:], key=lambda item: item.entry.line)))
        for cluster in clusters
        if len(cluster) > 1 and cluster[0].entry.line not in unstable
    ]


def _links(items: Sequence[_Item]) -> dict[int, set[int]]:
    """Return, by line, the lines of the items each item is mergeable with."""
    links: dict[int, set[int]] = {item.entry.line: set() for item in items}
    for a, b in itertools.combinations(items, 2):
        if _mergeable(a, b):
            links[a.entry.line].add(b.entry.line)
            links[b.entry.line].add(a.entry.line)
    return links


def _unstable_lines(links: dict[int, set[int]], winners: set[int]) -> set[int]:
    """Return the lines of every connected group in which two winners are still mergeable."""
    unstable: set[int] = set()
    for winner in sorted(winners):
        if winner not in unstable and links[winner] & winners:
            unstable |= _connected(links, winner)
    return unstable


def _connected(links: dict[int, set[int]], start: int) -> set[int]:
    """Return the lines reachable from `start` through `links`, `start` included."""
    seen = {start}
    todo = [start]
    while todo:
        for line in links[todo.pop()] - seen:
            seen.add(line)
            todo.append(line)
    return seen


def _weakest(items: Sequence[_Item], limit: int) -> list[_Item]:
    """Return the items beyond `limit` by score, later lines first among equal scores."""
    if len(items) <= limit:
        return []
    ranked = sorted(items, key=lambda item: (-item.score, item.entry.line))
    return ranked[limit:]


def _merge(winner: _Item, losers: Sequence[_Item], taken: set[str]) -> Merge:
    """Return the merge of `losers` into `winner`, picking the winner's slug (added to taken)."""
    slug = winner.entry.slug
    if slug is None:
        slug = next((loser.entry.slug for loser in losers if loser.entry.slug), None)
    if slug is None:
        slug = _take(derive_slug(winner.entry.content, taken), taken)
    return Merge(
        kept=winner.entry,
        removed=tuple(loser.entry for loser in losers),
        content=winner.entry.content,
        slug=slug,
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


def _removals(plan: CleanupPlan, final_slugs: dict[int, str | None]) -> dict[int, ArchivedEntry]:
    """Return, by line, the archive record of every entry the plan removes."""
    reasons = [
        (loser, f"merged into [{merge.slug}]") for merge in plan.merges for loser in merge.removed
    ]
    reasons += [
        (p.entry, f"pruned: over the {plan.category.value} limit of {plan.limit} (score {p.score})")
        for p in plan.prunes
    ]
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
