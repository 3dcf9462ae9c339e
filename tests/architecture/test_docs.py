"""The documentation holds together (pure, no tmux): every relative link in the top-level
pages and docs/ names a file of the repository (and an anchor, a heading), README stays
short, and the docs index links every page of docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / name for name in ("README.md", "AGENTS.md", "SECURITY.md", "VISION.md")]
PAGES += sorted(DOCS.glob("*.md")) + sorted(DOCS.glob("specs/*.md"))

# [text](target) and ![alt](target), outside code: the target up to a space or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")


def _links(page: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", page.read_text()))
    return LINK.findall(text)


def _relative(target: str) -> bool:
    return not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_names_a_file(page: Path) -> None:
    missing = [
        target
        for target in _links(page)
        if _relative(target) and not (page.parent / target.partition("#")[0]).exists()
    ]
    assert missing == []


# A path of the repository written as code: `tests/x/test_y.py`, `tmux_bridge/pane/info.py`,
# `tests/seams/test_seam_*.py` (a glob); DIR in a path is a placeholder.
REPO_PATH = re.compile(r"`((?:tests|tmux_bridge|bench|docs|scripts)/[\w./*-]+)`")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_path_written_as_code_exists(page: Path) -> None:
    """Files named in the text (not only links) follow the tree when it moves."""
    missing = [
        path
        for path in REPO_PATH.findall(page.read_text())
        if "DIR" not in path and not any(ROOT.glob(path.rstrip("/")))
    ]
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_anchor_names_a_heading(page: Path) -> None:
    """``page.md#some-heading`` (or ``#some-heading``) names a heading of that page, as
    GitHub makes anchors: lower case, punctuation but ``-`` and ``_`` dropped, spaces as
    ``-``."""
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        if not anchor or not _relative(target):
            continue
        linked = page.parent / path if path else page
        headings = re.findall(r"^#+ (.+)$", FENCE.sub("", linked.read_text()), re.M)
        anchors = {
            re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings
        }
        if anchor not in anchors:
            broken.append(target)
    assert broken == []


def test_the_readme_is_at_most_300_lines() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


def test_the_index_links_every_page() -> None:
    linked = {target.partition("#")[0] for target in _links(DOCS / "README.md")}
    pages = {page.name for page in DOCS.glob("*.md")} - {"README.md"}
    assert sorted(pages - linked) == []


def test_the_readme_links_the_index_and_the_index_links_back() -> None:
    assert "docs/README.md" in _links(ROOT / "README.md")
    assert "../README.md" in _links(DOCS / "README.md")


def test_the_screenshot_is_on_the_browser_page() -> None:
    assert "browser-view.png" in _links(DOCS / "browser-view.md")
