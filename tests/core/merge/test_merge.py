"""The three-way merge of `.memory/` files, rule by rule (issue 22): entries by slug or text,
additions in order, deletions, changes, conflicts around only the conflicting entries, duplicate
additions, line endings, headers and prose, the archive union and the plain line merge."""

from __future__ import annotations

from memd.core.format import mdformat
from memd.core.format.merge_markers import conflict_lines
from memd.core.merge.archive import merge_archive
from memd.core.merge.entries import merge_entries
from memd.core.merge.files import Kind, kind_of, merge_file
from memd.core.merge.lines import merge_lines
from memd.core.merge.result import MergeResult

HEAD = "# Decisions\n\nArchitectural commitments made in this project.\n\n"
BASE = HEAD + "- [pnpm] Use pnpm for installs.\n\n- [helm] Deploy with Helm.\n"


def entry_lines(text: str) -> list[str]:
    doc = mdformat.parse(text)
    return [doc.lines[entry.line - 1].text for entry in mdformat.entries(doc)]


def markers_at(result: MergeResult) -> list[str]:
    lines = result.text.split("\n")
    return [lines[number - 1] for number in result.conflicts]


def test_entries_match_by_slug_so_a_change_and_an_addition_both_land() -> None:
    ours = BASE.replace("Deploy with Helm.", "Deploy with Helm 3.")
    theirs = BASE + "\n- [logs] Logs go to journald.\n"
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert result.text == ours + "\n- [logs] Logs go to journald.\n"


def test_slugless_entries_match_by_normalised_text() -> None:
    base = HEAD + "- Use  pnpm for installs.\n\n- Deploy with Helm.\n"
    ours = base.replace("- Use  pnpm for installs.", "- use pnpm for installs.")
    theirs = base + "\n- Logs go to journald.\n"
    result = merge_entries(base, ours, theirs)
    assert not result.conflicted
    assert entry_lines(result.text) == [
        "- use pnpm for installs.",
        "- Deploy with Helm.",
        "- Logs go to journald.",
    ]


def test_additions_on_both_sides_go_ours_then_theirs_after_the_last_entry() -> None:
    ours = BASE + "\n- [sock] Sockets live in the runtime dir.\n\n- [tz] Store times in UTC.\n"
    theirs = BASE + "\n- [logs] Logs go to journald.\n"
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert result.text == ours + "\n- [logs] Logs go to journald.\n"
    swapped = merge_entries(BASE, theirs, ours)
    assert entry_lines(swapped.text)[2:] == [
        "- [logs] Logs go to journald.",
        "- [sock] Sockets live in the runtime dir.",
        "- [tz] Store times in UTC.",
    ]


def test_tight_files_get_no_blank_separator() -> None:
    base = HEAD + "- [a] One.\n- [b] Two.\n"
    result = merge_entries(base, base + "- [c] Three.\n", base + "- [d] Four.\n")
    assert result.text == base + "- [c] Three.\n- [d] Four.\n"


def test_a_deletion_against_no_change_deletes() -> None:
    ours = BASE.replace("\n- [helm] Deploy with Helm.\n", "")
    theirs = BASE + "\n- [logs] Logs go to journald.\n"
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert entry_lines(result.text) == [
        "- [pnpm] Use pnpm for installs.",
        "- [logs] Logs go to journald.",
    ]
    assert "\n\n\n" not in result.text


def test_a_change_against_no_change_takes_the_change() -> None:
    ours = BASE + "\n- [logs] Logs go to journald.\n"
    theirs = BASE.replace("Use pnpm", "Use pnpm 9")
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert entry_lines(result.text)[0] == "- [pnpm] Use pnpm 9 for installs."


def test_a_change_on_both_sides_is_a_conflict_around_that_entry_only() -> None:
    ours = BASE.replace("Deploy with Helm.", "Deploy with Kustomize.") + "\n- [x] Extra.\n"
    theirs = BASE.replace("Deploy with Helm.", "Deploy with Argo CD.")
    result = merge_entries(BASE, ours, theirs)
    assert result.conflicted
    assert markers_at(result) == ["<<<<<<< ours"]
    assert result.text == HEAD + (
        "- [pnpm] Use pnpm for installs.\n\n"
        "<<<<<<< ours\n- [helm] Deploy with Kustomize.\n=======\n"
        "- [helm] Deploy with Argo CD.\n>>>>>>> theirs\n\n- [x] Extra.\n"
    )
    assert conflict_lines(result.text)  # memd's own reader sees a file mid-merge


def test_the_same_change_on_both_sides_is_no_conflict() -> None:
    both = BASE.replace("Helm.", "Helm 3.")
    result = merge_entries(BASE, both + "\n- [a] A.\n", both + "\n- [b] B.\n")
    assert not result.conflicted
    assert entry_lines(result.text)[1] == "- [helm] Deploy with Helm 3."


def test_a_deletion_against_a_change_keeps_the_change_in_a_conflict() -> None:
    ours = BASE.replace("\n- [helm] Deploy with Helm.\n", "")
    theirs = BASE.replace("Helm.", "Argo CD.") + "\n- [logs] Logs go to journald.\n"
    result = merge_entries(BASE, ours, theirs)
    assert result.conflicted
    assert "<<<<<<< ours\n=======\n- [helm] Deploy with Argo CD.\n>>>>>>> theirs\n" in result.text
    assert "- [logs] Logs go to journald." in entry_lines(result.text)


def test_new_entries_that_memds_store_rule_calls_duplicates_conflict() -> None:
    ours = BASE + "\n- [bun] Use Bun for installs in CI.\n"
    theirs = BASE + "\n- [ci-pnpm] Use pnpm for installs in CI.\n"
    result = merge_entries(BASE, ours, theirs)
    assert result.conflicted
    assert result.text.endswith(
        "<<<<<<< ours\n- [bun] Use Bun for installs in CI.\n=======\n"
        "- [ci-pnpm] Use pnpm for installs in CI.\n>>>>>>> theirs\n"
    )


def test_new_entries_on_different_subjects_are_both_kept() -> None:
    ours = BASE + "\n- [a] Strip PII from error logs.\n"
    theirs = BASE + "\n- [b] Strip PII from analytics events.\n"
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert entry_lines(result.text)[2:] == [
        "- [a] Strip PII from error logs.",
        "- [b] Strip PII from analytics events.",
    ]


def test_the_same_text_under_two_slugs_is_kept_twice_without_conflict() -> None:
    ours = BASE + "\n- [a] Cache builds in CI.\n"
    theirs = BASE + "\n- [b] Cache builds in CI.\n"
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert entry_lines(result.text)[2:] == [
        "- [a] Cache builds in CI.",
        "- [b] Cache builds in CI.",
    ]


def test_one_new_slug_with_two_texts_conflicts_and_with_one_text_is_kept_once() -> None:
    ours = BASE + "\n- [ci] Cache builds in CI.\n"
    theirs = BASE + "\n- [ci] Run CI on every push.\n"
    result = merge_entries(BASE, ours, theirs)
    assert result.conflicted
    assert "- [ci] Cache builds in CI.\n=======\n- [ci] Run CI on every push.\n" in result.text
    same = merge_entries(BASE, ours + "\n- [o] O.\n", ours + "\n- [t] T.\n")
    assert not same.conflicted
    assert entry_lines(same.text).count("- [ci] Cache builds in CI.") == 1


def test_crlf_is_kept_and_added_lines_take_it() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = base + "\r\n- [a] Ours.\r\n"
    theirs = base.replace("Helm", "Helm 3") + "\r\n- [b] Theirs.\r\n"
    result = merge_entries(base, ours, theirs)
    assert not result.conflicted
    assert "\n" not in result.text.replace("\r\n", "")
    assert (
        result.text == base.replace("Helm", "Helm 3") + "\r\n- [a] Ours.\r\n\r\n- [b] Theirs.\r\n"
    )


def test_a_missing_final_newline_stays_missing() -> None:
    base = BASE.rstrip("\n")
    ours = base.replace("Use pnpm", "Use pnpm 9")
    theirs = base.replace("# Decisions", "# Decisions (team)")
    result = merge_entries(base, ours, theirs)
    assert not result.conflicted
    assert result.text == ours.replace("# Decisions", "# Decisions (team)")
    assert not result.text.endswith("\n")


def test_headers_and_prose_merge_at_line_level() -> None:
    ours = BASE.replace("# Decisions", "# Team decisions") + "\n- [a] A.\n"
    theirs = BASE.replace("in this project.", "in this project.\nKeep each to one line.") + (
        "\n- [b] B.\n"
    )
    result = merge_entries(BASE, ours, theirs)
    assert not result.conflicted
    assert result.text.startswith(
        "# Team decisions\n\nArchitectural commitments made in this project.\n"
        "Keep each to one line.\n\n"
    )
    assert entry_lines(result.text)[2:] == ["- [a] A.", "- [b] B."]


def test_a_header_changed_on_both_sides_conflicts_and_the_entries_stay_unmarked() -> None:
    ours = BASE.replace("# Decisions", "# Team decisions")
    theirs = BASE.replace("# Decisions", "# ADRs")
    result = merge_entries(BASE, ours, theirs)
    assert result.text.startswith(
        "<<<<<<< ours\n# Team decisions\n=======\n# ADRs\n>>>>>>> theirs\n"
    )
    assert result.conflicts == (1,)
    assert result.text.endswith("- [pnpm] Use pnpm for installs.\n\n- [helm] Deploy with Helm.\n")


def test_prose_added_on_both_sides_at_one_place_conflicts_and_keeps_every_line() -> None:
    ours = BASE + "\nOurs' note.\n\n- [a] A.\n"
    theirs = BASE + "\nTheirs' note.\n\n- [b] B.\n"
    result = merge_entries(BASE, ours, theirs)
    assert result.conflicted
    for line in ("Ours' note.", "Theirs' note.", "- [a] A.", "- [b] B."):
        assert line in result.text.split("\n")


def test_foreign_lines_survive() -> None:
    base = BASE + "\n  - indented\n* star\n<!-- note -->\n"
    ours = base.replace("Use pnpm", "Use pnpm 9")
    theirs = base.replace("Helm", "Helm 3")
    result = merge_entries(base, ours, theirs)
    assert not result.conflicted
    assert result.text.endswith("\n  - indented\n* star\n<!-- note -->\n")


ARCHIVE_HEAD = "# Archive\n\nMemories removed by memd.\n\n"


def test_the_archive_is_a_union_in_date_order() -> None:
    base = ARCHIVE_HEAD + "- 2026-01-02 | Decision | deleted | [a] A.\n"
    ours = base + "- 2026-01-05 | Quirk | merged | [q] Q.\n- 2026-01-09 | Quirk | pruned | [r] R.\n"
    theirs = (
        base
        + "- 2026-01-03 | Decision | deleted | [b] B.\n- 2026-01-07 | Security | deleted | [s] S.\n"
    )
    result = merge_archive(base, ours, theirs)
    assert not result.conflicted
    assert result.text == ARCHIVE_HEAD + (
        "- 2026-01-02 | Decision | deleted | [a] A.\n"
        "- 2026-01-03 | Decision | deleted | [b] B.\n"
        "- 2026-01-05 | Quirk | merged | [q] Q.\n"
        "- 2026-01-07 | Security | deleted | [s] S.\n"
        "- 2026-01-09 | Quirk | pruned | [r] R.\n"
    )


def test_the_archive_keeps_a_record_one_side_deleted_and_a_repeat_once() -> None:
    record = "- 2026-01-02 | Decision | deleted | [a] A.\n"
    base = ARCHIVE_HEAD + record
    ours = ARCHIVE_HEAD + "- 2026-01-04 | Quirk | deleted | [q] Q.\n"
    theirs = base + record + "- 2026-01-03 | Quirk | deleted | [z] Z.\n"
    result = merge_archive(base, ours, theirs)
    assert result.text.count(record) == 2  # theirs has it twice: two removals
    assert result.text.index("[a] A.") < result.text.index("[z] Z.") < result.text.index("[q] Q.")


def test_plain_files_merge_line_by_line_with_git_markers() -> None:
    base = "one\ntwo\nthree\n"
    clean = merge_lines(base, "one!\ntwo\nthree\n", "one\ntwo\nthree!\n")
    assert clean == MergeResult(text="one!\ntwo\nthree!\n")
    clash = merge_lines(base, "one\nTWO\nthree\n", "one\n2\nthree\n")
    assert clash.text == "one\n<<<<<<< ours\nTWO\n=======\n2\n>>>>>>> theirs\nthree\n"
    assert clash.conflicts == (2,)


def test_files_are_merged_by_their_name() -> None:
    assert kind_of(".memory/decisions.md") is Kind.ENTRIES
    assert kind_of("security.md") is Kind.ENTRIES
    assert kind_of(".memory/archive.md") is Kind.ARCHIVE
    assert kind_of(".memory/archive-2026-01-02-2.md") is Kind.ARCHIVE
    assert kind_of(".memory/notes.md") is Kind.LINES
    assert kind_of("docs/Decisions.md") is Kind.LINES
    assert kind_of(None) is Kind.LINES
    # a plain merge of category-looking text conflicts where the entry merge does not
    ours, theirs = BASE + "\n- [a] A.\n", BASE + "\n- [b] B.\n"
    assert merge_file("notes.md", BASE, ours, theirs).conflicted
    assert not merge_file(".memory/decisions.md", BASE, ours, theirs).conflicted


def test_theirs_new_entry_goes_after_a_hunk_ours_left_open_not_inside_it() -> None:
    """Ours still holds an unresolved hunk at its end: theirs' new entry goes after the hunk,
    so resolving the hunk either way keeps it."""
    hunk = "<<<<<<< ours\n- [m] Use Redis 7.\n=======\n- [m] Use Valkey 8.\n>>>>>>> theirs\n"
    base = HEAD + "- [a] Keep a.\n"
    ours = base + hunk
    theirs = base + "\n- [n] New from theirs.\n"
    result = merge_entries(base, ours, theirs)
    lines = result.text.split("\n")
    closing = max(n for n, line in enumerate(lines) if line.startswith(">>>>>>>"))
    assert lines.index("- [n] New from theirs.") > closing
    assert result.text.count("New from theirs.") == 1


def test_an_append_after_a_last_line_without_newline_merges_with_a_change_to_that_line() -> None:
    """Ours' only change to the last entry is the newline its append needed; theirs changed
    its text: a clean merge, not a conflict."""
    base = HEAD + "- [a] A."
    ours = base + "\n- [b] B.\n"
    theirs = HEAD + "- [a] A changed."
    result = merge_entries(base, ours, theirs)
    assert not result.conflicted, result.text
    assert entry_lines(result.text) == ["- [a] A changed.", "- [b] B."]
