"""The tiles of the browser view (every pane at a glance) in a real headless Chromium
against a real ``tmux-bridge serve``: one tile per pane of the tmux server, each a live
read-only terminal of its pane with what it is (target, label, the agent in it and its
state); a line printed in a pane appears in its tile; a click focuses that pane. The
screenshot on docs/browser-view.md (``docs/browser-tiles.png``) is taken here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from ..support.agent_world import World
from ..support.pane import WAIT, MakeBridge
from ..support.serve import TOKEN, running

pytestmark = pytest.mark.tmux
CHROMIUM = os.environ.get("TMUX_BRIDGE_CHROMIUM", "/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "browser-tiles.png"


def tile(page: Page, pane: str) -> str:
    """What the tile of ``pane`` (its id) shows: its header and its terminal's rows."""
    return str(page.locator(f'.tile[data-pane="{pane}"]').inner_text())


def test_tiles_show_every_pane_live_and_focus_one(make_bridge: MakeBridge) -> None:
    world = World(make_bridge("bash"))
    world.b.start()
    world.b.tmux("set-option", "-p", "-t", "tb-test", "@tmux-bridge-label", "builder")
    world.start("alpha", "claude")
    world.wait_names({"alpha"})
    ids = dict(
        line.split()
        for line in world.b.tmux("list-panes", "-a", "-F", "#{session_name} #{pane_id}").split("\n")
        if line
    )
    errors: list[str] = []
    with running(world.b.env) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 700})
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(WAIT * 1000)
            page.goto(f"{server.base_url}/#token={TOKEN}")
            page.locator("#status").filter(has_text="connected (full)").wait_for()
            page.keyboard.press("t")  # the tiles, from the keyboard
            page.locator(
                f'.tile[data-pane="{ids["alpha"]}"]', has_text="claude stand-in ready"
            ).wait_for()
            page.locator(f'.tile[data-pane="{ids["tb-test"]}"]', has_text="builder").wait_for()
            assert page.locator(".tile").count() == 2
            agent_tile = tile(page, ids["alpha"])
            world.b.tmux("send-keys", "-t", "tb-test", "echo tile-$((6*7))", "Enter")
            page.locator(f'.tile[data-pane="{ids["tb-test"]}"]', has_text="tile-42").wait_for()
            page.screenshot(path=str(SCREENSHOT))
            page.locator(f'.tile[data-pane="{ids["alpha"]}"]').click()
            page.locator("#title", has_text="alpha:0.0").wait_for()
            page.locator("#terminal .xterm-rows", has_text="claude stand-in ready").wait_for()
            tiles_gone = page.locator(".tile").count()
        finally:
            browser.close()
    assert errors == []
    # the agent's tile says which agent and its state, as `tmux-bridge agents` does
    state = world.facade().agents()[0].state
    assert "alpha (claude)" in agent_tile and state in agent_tile, agent_tile
    assert tiles_gone == 0  # focused: the tiles' streams are closed
