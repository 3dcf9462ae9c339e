"""Mission control, the browser view's first page, in a real headless Chromium against
a real ``tmux-bridge serve``: a tile per pane of the tmux server, each a live read-only
terminal with what it is (target, label, the agent in it and its state, a running job,
a person attached); the messages between agents and the jobs listed beside them; a job
that ended raised as a notice, and an agent that needs its person (a trust question);
the host of a far shell (a nested shell) on its tile; the keys (t, arrows, Enter,
Ctrl+], /, c, +); scrollback search and copy; the font size; the round trip shown.
Then a read-only viewer on a phone's width: its badge, no input, the tiles stacked with
no horizontal scroll, and the connection dropped and back by itself.

Screenshots go to ``$TMUX_BRIDGE_SCREENSHOTS`` when it is set (``docs`` to refresh the
ones on docs/browser-view.md), else to the test's own directory (tests/support/shots.py)."""

from __future__ import annotations

import getpass
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import (
    Locator,
    Page,
    WebSocketRoute,
    expect,
    sync_playwright,
)

from tmux_bridge import Bridge

from ..support.agent_world import World
from ..support.browser import launch, opened
from ..support.pane import WAIT, MakeBridge, enter_nested, target_of
from ..support.serve import TOKEN, running
from ..support.shots import screenshots

pytestmark = pytest.mark.tmux
READ_ONLY = "read-only-token-0123456789-abcdef"


def tile(page: Page, pane: str, text: str = "") -> Locator:
    """The tile of ``pane`` (its id), once it shows ``text``."""
    found = page.locator(f'.tile[data-pane="{pane}"]', has_text=text)
    found.wait_for()
    return found


def _ids(world: World) -> dict[str, str]:
    listed = world.b.tmux("list-panes", "-a", "-F", "#{session_name} #{pane_id}")
    return dict(line.split() for line in listed.split("\n") if line)


def test_mission_control_tiles_lists_notices_keys_search_copy(
    make_bridge: MakeBridge, tmp_path: Path
) -> None:
    world = World(make_bridge("bash"))
    world.b.start()
    world.b.tmux("set-option", "-p", "-t", "tb-test", "@tmux-bridge-label", "builder")
    world.start("alpha", "claude")
    world.start("beta", "claude", "STANDIN_TRUST=1")  # asks its person first
    world.wait_names({"alpha", "beta"})
    ids = _ids(world)
    go = tmp_path / "go"
    job = Bridge(target_of(world.b)).start_job(
        f"while [ ! -e {go} ]; do sleep 0.1; done; echo job-done"
    )
    sent = world.facade().send_message("alpha", "hello from boss", sender="boss")
    errors: list[str] = []
    frames: list[str] = []  # what the page sent
    out = screenshots(tmp_path)
    with running(world.b.env) as server, sync_playwright() as p:
        browser = launch(p)
        try:
            page = opened(
                browser, f"{server.base_url}/#token={TOKEN}", errors, frames,
                viewport={"width": 1280, "height": 760},
                permissions=["clipboard-read", "clipboard-write"],
            )  # fmt: skip
            # the tiles are the first page: every pane, what it is, live
            tile(page, ids["alpha"], "claude stand-in ready")
            agent = tile(page, ids["alpha"], "alpha (claude)")
            builder = tile(page, ids["tb-test"], f"job {job.job} running")
            assert "builder" in builder.inner_text()
            assert page.locator(".tile").count() == 3
            # an agent that needs its person: a notice, and its tile says so
            page.locator("#notices li", has_text="beta (claude) needs you").wait_for()
            page.locator(f'.tile.needs[data-pane="{ids["beta"]}"]').wait_for()
            assert "needs_person" in tile(page, ids["beta"]).inner_text()
            # the side lists: the message with its state, the job
            message = f'#messages li[data-message="{sent.message.id}"]'
            page.locator(message, has_text="boss").wait_for()
            page.locator(f'#jobs li[data-job="{job.job}"]', has_text="running").wait_for()
            page.locator("#lag", has_text=" ms").wait_for()  # the round trip is shown
            state = world.facade().agents()[0].state
            assert state in agent.inner_text()
            page.screenshot(path=str(out / "browser-tiles.png"))
            # a job that ends is a notice, and the tile no longer says it runs
            go.touch()
            page.locator("#notices li", has_text=f"job {job.job} ended (exit 0)").wait_for()
            page.locator(f'#jobs li[data-job="{job.job}"]', has_text="exit 0").wait_for()
            assert page.title() == "(2) tmux-bridge"
            assert "running" not in tile(page, ids["tb-test"]).inner_text()
            _far_host(page, ids, world)
            _keys_search_copy(page, ids, world)
            _flood(page, ids["tb-test"], world, frames)
        finally:
            browser.close()
    assert errors == []


def _far_host(page: Page, ids: dict[str, str], world: World) -> None:
    """A call in a far shell (dash started in the pane's bash: a shell inside a shell)
    puts its user and host on the pane's tile; the person leaving it takes them off."""
    enter_nested(world.b, "dash")
    assert world.b.send_text("--", "echo far-$((6*7))")[:2] == (0, "far-42\n")
    where = f"@{getpass.getuser()}@{socket.gethostname()}"
    tile(page, ids["tb-test"], where)
    world.b.tmux("send-keys", "-t", world.b.target, "exit", "Enter")
    world.b.wait_for(lambda: world.b.foreground() == "bash", "the person back in bash")
    expect(page.locator(f'.tile[data-pane="{ids["tb-test"]}"]')).not_to_contain_text(where)


def _flood(page: Page, pane: str, world: World, frames: list[str]) -> None:
    """A pane that floods its tile: the tile stops streaming and is redrawn from
    snapshots (``stream: false``) while it floods, shows the last line exactly, then
    streams again once the screen holds still."""

    def asked(f: str) -> bool:
        return '"subscribe-output"' in f and f'"agent":"{pane}"' in f

    before = len(frames)
    # the page's scripts paused (the debugger's pause) until the pane has flooded: what
    # came meanwhile is taken in one go, a flood on any machine (a loaded one may pass
    # less than 1 MiB/s through as it comes)
    debugger = page.context.new_cdp_session(page)
    debugger.send("Debugger.enable")
    debugger.send("Debugger.pause")
    world.b.tmux("send-keys", "-t", world.b.target, "seq 1 500000; echo flood-$((6*7))", "Enter")
    world.b.wait_for(lambda: "flood-42" in world.b.screen().split("\n"), "the flood's end")
    debugger.send("Debugger.resume")
    debugger.detach()
    tile(page, pane, "flood-42")
    assert "500000" in tile(page, pane).inner_text().split("flood-42")[0]
    assert any('"stream":false' in f for f in frames[before:] if asked(f)), frames[before:][:9]
    # the pane opened at full size earlier streams only while it is shown
    assert not [f for f in frames[before:] if f.startswith("<< tb-test")], "a hidden stream"
    deadline = time.monotonic() + WAIT
    while '"stream":false' in [f for f in frames if asked(f)][-1]:  # streaming again
        assert time.monotonic() < deadline, "the tile did not stream again"
        page.wait_for_timeout(50)  # the page's own clock: frames come from its events
    world.b.tmux("send-keys", "-t", world.b.target, "echo calm-$((6*7))", "Enter")
    tile(page, pane, "calm-42")


def _keys_search_copy(page: Page, ids: dict[str, str], world: World) -> None:
    """The keyboard through the page, then search, copy and the font size on a pane."""
    # arrows between tiles, Enter opens one at full size
    order = page.eval_on_selector_all(".tile", "tiles => tiles.map(t => t.dataset.pane)")
    at = order.index(ids["tb-test"])  # from its neighbour in the page's order, one arrow
    page.locator(f'.tile[data-pane="{order[at - 1 if at else 1]}"]').focus()
    page.keyboard.press("ArrowRight" if at else "ArrowLeft")
    page.keyboard.press("Enter")
    page.locator("#title", has_text="tb-test:0.0").wait_for()
    assert page.locator(".tile:visible").count() == 0  # focused: the tiles are away
    page.locator("#terminal .xterm-rows", has_text="$").wait_for()
    page.keyboard.type("seq 1 400 | sed s/^/row-/")  # the keyboard went to the terminal
    page.keyboard.press("Enter")
    page.locator("#terminal .xterm-rows", has_text="row-400").wait_for()
    page.keyboard.press("Control+BracketRight")  # out of the terminal
    page.keyboard.press("/")
    page.keyboard.type("ROW-123")
    page.keyboard.press("Enter")
    page.locator("#search-found", has_text="1 of 1").wait_for()
    page.keyboard.press("Escape")  # back to the terminal ...
    page.keyboard.press("Control+BracketRight")  # ... and out of it
    page.keyboard.press("c")
    page.locator("#notice", has_text="copied 7 characters").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == "row-123"
    row = "document.querySelector('#terminal .xterm-rows > div').getBoundingClientRect().height"
    before = page.evaluate(row)
    page.keyboard.press("+")
    page.wait_for_function(f"{row} > {before}")
    assert page.evaluate("localStorage.getItem('tmux-bridge-font-size')") == "16"
    page.keyboard.press("t")  # the tiles again
    tile(page, ids["tb-test"], "row-400")
    assert world.screen("alpha").count("hello from boss") == 1  # delivered once, by send


def _dropped(
    routes: list[WebSocketRoute], sent: list[str | bytes]
) -> Callable[[WebSocketRoute], None]:
    """A route for the page's WebSockets that passes everything, keeps each in
    ``routes`` (to be closed by the test) and what the page sent in ``sent``."""

    def handle(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            sent.append(message)
            server.send(message)

        ws.on_message(from_page)
        server.on_message(ws.send)
        routes.append(ws)

    return handle


def test_a_read_only_viewer_on_a_phone_and_a_dropped_connection(
    make_bridge: MakeBridge, tmp_path: Path
) -> None:
    world = World(make_bridge("bash"))
    world.b.start()
    world.start("alpha", "claude")
    world.wait_names({"alpha"})
    ids = _ids(world)
    token = world.b.root / "read-only-token"
    token.write_text(READ_ONLY + "\n")
    token.chmod(0o600)
    errors: list[str] = []
    routes: list[WebSocketRoute] = []
    sent: list[str | bytes] = []
    out = screenshots(tmp_path)
    with (
        running(world.b.env, "--read-only-token-file", str(token)) as server,
        sync_playwright() as p,
    ):
        browser = launch(p)
        try:
            page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(WAIT * 1000)
            page.route_web_socket("**/ws", _dropped(routes, sent))
            page.goto(f"{server.base_url}/#token={READ_ONLY}")
            page.locator("#status", has_text="connected (read-only)").wait_for()
            assert page.locator("#role").is_visible()
            assert not page.locator("#prompt").is_visible()  # no input for a watcher
            tile(page, ids["alpha"], "claude stand-in ready")
            tile(page, ids["tb-test"], "$")
            # a phone's width: the tiles stacked, nothing wider than the screen
            width = page.evaluate("document.documentElement.scrollWidth")
            lefts = page.eval_on_selector_all(
                ".tile", "ts => ts.map(t => Math.round(t.getBoundingClientRect().left))"
            )
            page.screenshot(path=str(out / "browser-phone.png"), full_page=True)
            # the connection drops: the page says so, comes back, and the tiles go on
            routes[-1].close()
            page.locator("#status", has_text="reconnecting").wait_for()
            page.locator("#status", has_text="connected (read-only)").wait_for()
            world.b.tmux("send-keys", "-t", "tb-test", "echo back-$((6*7))", "Enter")
            tile(page, ids["tb-test"], "back-42")
            # typing is refused by the page itself: nothing reaches the pane
            tile(page, ids["tb-test"]).click()
            page.locator("#title", has_text="tb-test:0.0").wait_for()
            page.locator("#terminal .xterm-rows", has_text="back-42").wait_for()
            page.locator("#terminal").click()
            page.keyboard.type("echo typed-by-a-watcher")
            page.keyboard.press("Enter")
            page.locator("#status", has_text="connected").wait_for()
        finally:
            browser.close()
    assert errors == []
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    assert len(set(lefts)) == 1 and len(lefts) == 2, lefts
    assert len(routes) == 2  # the page connected again by itself
    assert not [m for m in sent if isinstance(m, bytes)]  # no key, size or file frame
    assert "typed-by-a-watcher" not in world.screen("tb-test")
