"""The README is the front door, docs/ the house (issue 32): every relative link of README.md and
docs/*.md leads to a file that exists (and to a heading of it, when it names one), every page of
docs/ is linked from the README and the docs index, and the command list names every command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.factories import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)\)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code (a link there is an example)."""
    text = re.sub(r"(?ms)^```.*?^```", "", text)
    return re.sub(r"`[^`\n]*`", "``", text)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces → '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a page's headings (a repeated one numbered -1, -2 … as GitHub does)."""
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*#*$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    return LINK.findall(_prose(page.read_text(encoding="utf-8")))


def test_the_slug_is_githubs():
    assert slug("A loop without a terminal waits for a person: `--wait`, `scars requests`, `scars answer`") == (
        "a-loop-without-a-terminal-waits-for-a-person---wait-scars-requests-scars-answer"
    )
    assert slug("Parse failures — nothing is dropped silently") == "parse-failures--nothing-is-dropped-silently"
    assert (
        slug("`iteration_budget_context` (`scars budget-context`)") == "iteration_budget_context-scars-budget-context"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_to_a_file_and_its_heading(page):
    broken = []
    for href in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", href):  # https:, mailto: …
            continue
        path, _, anchor = href.partition("#")
        target = (page.parent / path).resolve() if path else page
        missing = not target.exists() or ROOT.resolve() not in target.parents
        if missing or (anchor and (target.suffix != ".md" or anchor not in anchors(target))):
            broken.append(href)
    assert broken == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    """The checker itself: a missing file and a missing heading are both caught."""
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A `code` heading\n\n[a](page.md#a-code-heading) [b](#nope) [c](gone.md)\n")
    assert anchors(page) == {"title", "a-code-heading"}
    assert links(page) == ["page.md#a-code-heading", "#nope", "gone.md"]


def test_every_docs_page_is_linked_from_the_readme_and_the_index():
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert len(pages) >= 12
    readme = {Path(h.partition("#")[0]).name for h in links(ROOT / "README.md") if h.startswith("docs/")}
    index = {Path(h.partition("#")[0]).name for h in links(DOCS / "README.md")}
    assert pages - readme == set()
    assert pages - index == set()
    assert "README.md" in readme  # the index itself


def test_the_readme_fits_on_a_couple_of_screens():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)


def test_the_command_list_is_the_command_table_of_the_cli():
    """docs/commands.md's "Every command" table: every command of `scars --help`, in its order,
    with its summary as `scars --help` prints it, each pointing at the page that describes it."""
    from scars.tui.cli.main import COMMANDS

    text = (DOCS / "commands.md").read_text(encoding="utf-8")
    table = text.split("\n## Every command\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `scars ([\w-]+)` \| (.+?) \| (.+?) \|$", table, re.M)
    assert [(name, summary) for name, summary, _where in rows] == [(n, s) for n, _m, s in COMMANDS]
    for _name, _summary, where in rows:
        assert LINK.fullmatch(where), where
