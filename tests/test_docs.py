"""The docs hold together: every relative link resolves, every anchor names a heading, the README
stays short.

Rules:
- The pages checked are README.md, CONTRIBUTING.md, SECURITY.md and every `.md` under docs/.
- A relative link (not `http:`, `https:` or `mailto:`) names a file or directory that exists,
  relative to the page that holds it.
- A `#anchor` (on its own, or after a Markdown file) is the slug GitHub gives one of that file's
  headings (lower case; punctuation but `-` and `_` dropped; spaces made `-`; a repeated heading
  gets `-1`, `-2`, ...), or an explicit `<a id="...">` / `<a name="...">`.
- Links inside code (fenced blocks, inline spans) are examples, not links.
- README.md is at most 300 lines: the rest lives under docs/ (issue 31).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 300

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
EXPLICIT = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']", re.IGNORECASE)
EXTERNAL = ("http://", "https://", "mailto:")


def pages() -> list[Path]:
    """The Markdown pages whose links are checked."""
    top = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "SECURITY.md"]
    return [*top, *sorted((ROOT / "docs").rglob("*.md"))]


def without_code(text: str) -> str:
    """The text with fenced blocks and inline code spans blanked out."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before duplicates are numbered)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page offers: its headings' slugs, numbered as GitHub does, and `<a id>`s."""
    found: set[str] = set()
    seen: Counter[str] = Counter()
    for match in HEADING.finditer(FENCE.sub("", text)):
        base = slug(match.group(1))
        found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    return found | set(EXPLICIT.findall(text))


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of `page` whose file or anchor does not exist, as `page: target (why)`."""
    text = page.read_text(encoding="utf-8")
    problems: list[str] = []
    for target in LINK.findall(without_code(text)):
        if target.startswith(EXTERNAL):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        where = f"{page.relative_to(root)}: {target}"
        if not dest.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text("utf-8")):
            problems.append(f"{where} (no heading or <a id> gives #{anchor})")
    return problems


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_is_at_most_300_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move reference text to docs/"


def test_the_pages_include_the_readme_and_the_docs_tree() -> None:
    names = {str(page.relative_to(ROOT)) for page in pages()}
    assert {"README.md", "CONTRIBUTING.md", "SECURITY.md", "docs/README.md"} <= names
    assert any(name.startswith("docs/reference/") for name in names)


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Quick start", "quick-start"),
        ("How `query` ranks", "how-query-ranks"),
        ("Store and query from a second terminal", "store-and-query-from-a-second-terminal"),
        (
            "A read-only source that keeps changing (`bench/sources.py --churn`, issue 30)",
            "a-read-only-source-that-keeps-changing-benchsourcespy---churn-issue-30",
        ),
        ("Agents: MCP, prompt hooks, and files", "agents-mcp-prompt-hooks-and-files"),
        ("The [archive](x.md) file", "the-archive-file"),
        ("Écrire en français", "écrire-en-français"),
    ],
)
def test_a_heading_gets_githubs_slug(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_repeated_headings_are_numbered_and_explicit_anchors_count() -> None:
    text = '# A\n\n## Notes\n\n## Notes\n\n<a id="here"></a>text\n\n```\n# not a heading\n```\n'
    assert anchors(text) == {"a", "notes", "notes-1", "here"}


def test_a_broken_file_or_anchor_is_reported_and_code_is_not_a_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Real heading\n", encoding="utf-8")
    page.write_text(
        "# Page\n\n[ok](other.md#real-heading) [self](#page) [web](https://example.com/x)\n"
        "[gone](missing.md) [bad](other.md#nope) `[code](missing.md)`\n\n"
        "```\n[fenced](missing.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, root=tmp_path) == [
        "page.md: missing.md (no such file)",
        "page.md: other.md#nope (no heading or <a id> gives #nope)",
    ]
