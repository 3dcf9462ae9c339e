"""Exact text in the browser view, in a real headless Chromium at device-pixel-ratio 1
and 2: every underscore of ``echo my_file_name.txt __init__.py`` is drawn (also with a
row of block elements right under it, and a row of fallback glyphs), each row is taller
than the font's glyphs, and each glyph agent CLIs draw (``⎿ ⏸ ⏺ ✻``, box drawing,
braille spinners), CJK, Hangul and emoji is drawn, not as the missing-glyph box, and
differs from the others. The pixels are read from Chromium's own screenshot; the
screenshots are kept in ``docs/`` (shown on docs/browser-view.md), refreshed with
``TMUX_BRIDGE_SCREENSHOTS=docs`` (tests/support/shots.py)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ..support.browser import launch
from ..support.pane import WAIT, TestPane
from ..support.png import Image
from ..support.serve import TOKEN, Server
from ..support.shots import screenshots

pytestmark = pytest.mark.tmux
UNDERSCORES = "echo my_file_name.txt __init__.py"
GLYPHS = [
    "⎿", "⏸", "⏺", "⏵", "✻", "✶", "●", "⧉", "╭", "╯", "│", "─", "▛", "⠋", "⠹",
    "中", "日", "か", "한", "🚀", "✅", "🎉",
]  # fmt: skip
MISSING = "\ue000"  # a private-use character no font here has: the missing-glyph box
LINES = [
    UNDERSCORES,
    "▛███▜▌" + "█" * 40,  # blocks right under the underscores
    "TMUXSEND_END x_y __init__",
    "中文字符 日本語 かな 한국어 🚀✅ ⎿⏸⏺✻ ⠋⠙",  # fallback fonts right under them
    *GLYPHS,
    MISSING,
]
LIT = 96  # brightness (0-255) from which a pixel counts as drawn (white text on black)
Cells = tuple[tuple[bool, ...], ...]  # a cell's pixels, drawn or not, row by row


class Box(NamedTuple):
    """A character's place on the screenshot, in device pixels."""

    char: str
    left: int
    right: int
    top: int
    bottom: int


def shown_rows(page: Page) -> list[dict[str, Any]]:
    """The terminal's first rows as the page lays them out: each row's top and height
    (CSS pixels) and every character's horizontal extent (a Range over its text)."""
    rows: list[dict[str, Any]] = page.evaluate(
        """(count) => [...document.querySelectorAll('#terminal .xterm-rows > div')]
        .slice(0, count).map((row) => {
          const box = row.getBoundingClientRect();
          const chars = [];
          const walk = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
          for (let node = walk.nextNode(); node; node = walk.nextNode()) {
            for (let at = 0; at < node.data.length;) {
              const ch = String.fromCodePoint(node.data.codePointAt(at));
              const range = document.createRange();
              range.setStart(node, at);
              range.setEnd(node, at + ch.length);
              const r = range.getBoundingClientRect();
              chars.push([ch, r.left, r.right]);
              at += ch.length;
            }
          }
          return {top: box.top, height: box.height, text: row.textContent, chars};
        })""",
        len(LINES),
    )
    return rows


def boxes(row: dict[str, Any], dpr: int) -> list[Box]:
    top, bottom = round(row["top"] * dpr), round((row["top"] + row["height"]) * dpr)
    return [
        Box(ch, round(left * dpr), round(right * dpr), top, bottom)
        for ch, left, right in row["chars"]
        if ch.strip()
    ]


def underscore_drawn(image: Image, box: Box) -> bool:
    """Whether a horizontal stroke is drawn in the lower half of the cell (a pixel row
    lit over most of the cell's width, its edge pixels aside) with a dark pixel row
    under it still inside the cell: else it would run into what the next row draws (a
    block, a box line) and be lost to the eye."""
    xs = range(box.left + 1, box.right - 1)

    def lit(y: int) -> int:
        return sum(image.light(x, y) >= LIT for x in xs)

    strokes = [y for y in range((box.top + box.bottom) // 2, box.bottom) if lit(y) >= 0.6 * len(xs)]
    return bool(strokes) and any(lit(y) == 0 for y in range(strokes[-1] + 1, box.bottom))


def signature(image: Image, box: Box) -> Cells:
    return tuple(
        tuple(image.light(x, y) >= LIT for x in range(box.left, box.right))
        for y in range(box.top, box.bottom)
    )


def cropped(cells: Cells) -> Cells:
    """The drawn pixels' bounding box (empty for a blank cell)."""
    rows = [y for y, row in enumerate(cells) if any(row)]
    cols = [x for x in range(len(cells[0]) if cells else 0) if any(row[x] for row in cells)]
    if not rows:
        return ()
    return tuple(row[cols[0] : cols[-1] + 1] for row in cells[rows[0] : rows[-1] + 1])


def looks_missing(cells: Cells, reference: Cells) -> bool:
    """Whether a glyph is drawn as the missing-glyph box: the reference's very pixels,
    or a hollow rectangle as tall (each side drawn, nothing inside)."""
    shape, box = cropped(cells), cropped(reference)
    if shape == box:
        return True
    if len(shape) < 0.8 * len(box) or len(shape[0]) < 5:
        return False
    sides = [shape[0], shape[-1], [row[0] for row in shape], [row[-1] for row in shape]]
    inside = [on for row in shape[2:-2] for on in row[2:-2]]
    hollow = not inside or sum(inside) < 0.1 * len(inside)
    return hollow and all(sum(side) >= 0.8 * len(side) for side in sides)


def font_height(page: Page) -> float:
    """The height of the terminal font's glyph area at its size (CSS pixels)."""
    return float(
        page.evaluate(
            """() => { const probe = document.createElement('span');
            probe.style.font = '14px "tmux-bridge DejaVu Sans Mono"';
            probe.style.lineHeight = 'normal';
            probe.textContent = 'W_';
            document.body.append(probe);
            const height = probe.getBoundingClientRect().height;
            probe.remove();
            return height; }"""
        )
    )


def show_corpus(
    page: Page, server: Server, dpr: int, out: Path, pane: TestPane
) -> tuple[list[dict[str, Any]], Image]:
    """Open the page on the pane, wait for its rows and fonts, take the screenshot."""
    page.goto(f"{server.base_url}/#token={TOKEN}")
    page.locator("#panes button", has_text="tb-test").first.click()
    try:
        page.locator("#terminal .xterm-rows", has_text="TMUXSEND_END").wait_for()
    except PlaywrightTimeout as exc:
        size = pane.pane("#{window_width}x#{window_height}")
        raise AssertionError(
            f"the page never showed the corpus; the pane ({size}) shows:\n{pane.screen()}\n"
            f"the page: {page.locator('#terminal .xterm-rows').inner_text()}"
        ) from exc
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    page.evaluate("document.fonts.ready.then(() => true)")
    path = out / f"browser-text-dpr{dpr}.png"
    page.locator("#terminal").screenshot(path=str(path))
    origin = page.locator("#terminal").bounding_box()
    assert origin is not None
    rows = shown_rows(page)
    for row in rows:  # in the screenshot's own coordinates
        row["top"] -= origin["y"]
        row["chars"] = [
            [ch, left - origin["x"], right - origin["x"]] for ch, left, right in row["chars"]
        ]
    return rows, Image.read(path)


@pytest.mark.parametrize("dpr", [1, 2])
def test_every_character_is_drawn_and_distinct(
    pane: TestPane, server: Server, dpr: int, tmp_path: Path
) -> None:
    quoted = " ".join("'" + line + "'" for line in LINES)
    # room for the corpus and the prompt (the page then fits the window to itself)
    pane.tmux("resize-window", "-t", "tb-test", "-x", "100", "-y", "40")
    pane.tmux("set-option", "-w", "-u", "-t", "tb-test", "window-size")
    pane.tmux("send-keys", "-t", "tb-test", f"clear; printf '%s\\n' {quoted}", "Enter")
    pane.wait_for(
        lambda: pane.screen().startswith(UNDERSCORES + "\n"), "the corpus on a clear screen"
    )
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(
                viewport={"width": 1200, "height": 720}, device_scale_factor=dpr
            )
            page.set_default_timeout(WAIT * 1000)
            rows, image = show_corpus(page, server, dpr, screenshots(tmp_path), pane)
            glyph_height = font_height(page)
        finally:
            browser.close()
    # the page's size is given back once its connection is gone (nobody attached: the
    # session's default-size): waited for, or it could shrink the window under the next
    # test's corpus once printed, and its top rows would go to the history
    pane.wait_for_own_size()
    assert [row["text"].rstrip() for row in rows] == LINES
    # every underscore drawn
    for line in (0, 2):
        missing = [
            b for b in boxes(rows[line], dpr) if b.char == "_" and not underscore_drawn(image, b)
        ]
        assert missing == [], f"underscores not drawn in {LINES[line]!r} at DPR {dpr}: {missing}"
    # the rows: one height, back to back, taller than the font's glyphs
    heights = {row["height"] for row in rows}
    assert len(heights) == 1, heights
    height = heights.pop()
    assert height > glyph_height, (height, glyph_height)
    assert all(abs(b["top"] - a["top"] - height) < 0.01 for a, b in itertools.pairwise(rows))
    # the missing-glyph box is recognised; no glyph of the corpus is drawn as it
    reference = signature(image, boxes(rows[-1], dpr)[0])
    assert looks_missing(reference, ()), "the missing-glyph box is a hollow rectangle"
    drawn = {}
    for row in rows[4:-1]:
        (box,) = boxes(row, dpr)
        cells = signature(image, box)
        assert any(any(line) for line in cells), f"{box.char!r} is blank at DPR {dpr}"
        assert not looks_missing(cells, reference), f"{box.char!r} is drawn as the missing box"
        drawn[box.char] = cells
    assert len(set(drawn.values())) == len(GLYPHS), "two glyphs are drawn alike"
