"""The browser view in a real headless Chromium (Debian's ``/usr/bin/chromium``, driven
by Playwright's Python package; Playwright's own browsers are never downloaded) against
a real ``tmux-bridge serve`` and a real tmux server: the page loads with no network
(every request it makes goes to the server, none elsewhere), a pane is chosen, a
command is typed into the xterm.js terminal and its output shows in the page; a prompt
sent from the page to a stand-in agent shows its receipt. The screenshot on the browser page
(``docs/browser-view.png``, shown in docs/browser-view.md) is taken here, into
``$TMUX_BRIDGE_SCREENSHOTS`` (tests/support/shots.py)."""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, WebSocketRoute, sync_playwright

from ..support.agent_world import World
from ..support.browser import CHROMIUM, launch, opened
from ..support.pane import WAIT, MakeBridge, TestPane
from ..support.serve import TOKEN, Server, running
from ..support.shots import screenshots

pytestmark = pytest.mark.tmux


class HeldAnswers:
    """The page's WebSocket through Playwright, the server's messages held back from the
    page's first text message that ``starts`` accepts until :meth:`release`."""

    def __init__(self, starts: Callable[[str], bool]) -> None:
        self.starts = starts
        self.route: WebSocketRoute | None = None
        self.held: list[str | bytes] = []
        self.holding = False

    def handle(self, ws: WebSocketRoute) -> None:
        self.route = ws
        to_server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if isinstance(message, str) and self.starts(message):
                self.holding = True
            to_server.send(message)

        def from_server(message: str | bytes) -> None:
            (self.held.append if self.holding else ws.send)(message)

        ws.on_message(from_page)
        to_server.on_message(from_server)

    def release(self) -> None:
        """Hand the held messages to the page, in order; pass the next ones on at once."""
        assert self.route is not None
        self.holding = False
        for message in self.held:
            self.route.send(message)


def _terminal_text(page: Page) -> str:
    """What xterm.js shows: its accessibility-free DOM renderer's rows."""
    return str(page.locator("#terminal .xterm-rows").inner_text())


def test_the_page_types_a_command_and_shows_its_output(
    pane: TestPane, server: Server, tmp_path: Path
) -> None:
    # typed by tmux, the screen cleared: the same screenshot on every run (no temp paths)
    pane.tmux("send-keys", "-t", "tb-test", "clear; echo typed-before-the-page", "Enter")
    pane.wait_for(lambda: pane.screen().startswith("typed-before-the-page\n$"), "a clear screen")
    requests: list[str] = []
    failed: list[str] = []
    errors: list[str] = []
    assert shutil.which(CHROMIUM), f"no Chromium at {CHROMIUM} (.ci/deps installs it)"
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 640})
            page.on("request", lambda r: requests.append(r.url))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(WAIT * 1000)
            page.goto(f"{server.base_url}/#token={TOKEN}")
            # the token left the address bar at once
            assert "token" not in page.url
            page.locator("#status").filter(has_text="connected (full)").wait_for()
            page.locator("#panes button", has_text="tb-test").first.click()
            page.locator("#terminal .xterm-rows", has_text="typed-before-the-page").wait_for()
            page.locator("#terminal").click()
            page.keyboard.type("echo from-the-browser-$((6*7))")
            page.keyboard.press("Enter")
            page.locator("#terminal .xterm-rows", has_text="from-the-browser-42").wait_for()
            pane.wait_for(lambda: "from-the-browser-42" in pane.screen(), "the shell's output")
            page.wait_for_function(  # the next prompt, so the screenshot is always the same
                "document.querySelector('#terminal .xterm-rows').innerText"
                ".includes('from-the-browser-42\\n$')"
            )
            shown = _terminal_text(page)
            page.screenshot(path=str(screenshots(tmp_path) / "browser-view.png"))
        finally:
            browser.close()
    # typed, run by the shell (the expansion happened), and shown by the page
    assert "echo from-the-browser-$((6*7))" in shown
    assert "\nfrom-the-browser-42" in shown or shown.startswith("from-the-browser-42")
    assert errors == []
    assert failed == []
    # nothing from the network: every request went to the server itself
    assert requests and all(url.startswith(server.base_url + "/") for url in requests)
    assert any(url.endswith("/vendor/xterm/xterm/xterm.js") for url in requests)


def test_a_prompt_sent_from_the_page_shows_its_receipt(make_bridge: MakeBridge) -> None:
    world = World(make_bridge("bash"))
    world.start("alpha", "claude")
    world.wait_names({"alpha"})
    errors: list[str] = []
    with running(world.b.env) as server, sync_playwright() as p:
        browser = launch(p)
        try:
            page = opened(browser, f"{server.base_url}/#token={TOKEN}", errors)
            page.locator("#agents button", has_text="alpha (claude)").click()
            page.locator("#prompt-text").fill("review the page")
            page.locator("#prompt button").click()
            page.locator("#receipt", has_text="delivered to alpha").wait_for()
            receipt = page.locator("#receipt").inner_text()
        finally:
            browser.close()
    assert errors == []
    assert receipt.startswith("delivered to alpha (confirmed by ")
    assert world.prompts("alpha") == ["review the page"]  # the stand-in's own log


def test_a_late_subscription_reply_does_not_take_the_persons_typing(
    pane: TestPane, server: Server
) -> None:
    """The person clicks a pane, then types in the prompt box before the page's
    subscription is answered: when the answer comes, their keys stay in the box and never
    reach the pane. (Playwright holds the server's messages back to make it so.)"""
    answers = HeldAnswers(lambda message: '"subscribe-output"' in message)

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 640})
            page.set_default_timeout(WAIT * 1000)
            page.route_web_socket("**/ws", answers.handle)
            page.goto(f"{server.base_url}/#token={TOKEN}")
            page.locator("#status").filter(has_text="connected (full)").wait_for()
            page.locator("#panes button", has_text="tb-test").first.click()
            page.wait_for_function("true")  # the click's handler ran
            assert answers.holding, "the page asked for the pane's output"
            page.locator("#prompt-text").click()
            page.keyboard.type("keep ")
            answers.release()  # the answer arrives now
            page.locator("#terminal .xterm-rows", has_text="$").wait_for()
            page.keyboard.type("quokka")
            typed = page.locator("#prompt-text").input_value()
        finally:
            browser.close()
    assert typed == "keep quokka"
    assert "quokka" not in pane.screen()


def test_a_resize_waits_for_the_output_before_it(pane: TestPane, server: Server) -> None:
    """The page's first picture of a pane is a snapshot drawn at the pane's size, and the
    page then fits the pane to itself: the new size must take effect after the snapshot
    is drawn, however late xterm.js gets to it (it parses on a timer), or the snapshot's
    rows are laid out in the new size, its top rows scrolled out of sight (seen once
    under load). Here Playwright's clock holds the page's timers from the click until the
    new size has come, and the server's answers are held until the snapshot is there."""
    pane.tmux("resize-window", "-t", "tb-test", "-x", "100", "-y", "40")
    pane.tmux("set-option", "-w", "-u", "-t", "tb-test", "window-size")
    pane.tmux("send-keys", "-t", "tb-test", "clear; seq 1 20", "Enter")
    pane.wait_for(lambda: pane.screen().startswith("1\n2\n"), "seq's rows on a clear screen")
    # the focused view's subscription (a tile's names the pane by its id)
    answers = HeldAnswers(lambda message: '"agent":"tb-test:' in message.replace(" ", ""))

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 640})
            page.set_default_timeout(WAIT * 1000)
            page.clock.install()
            page.route_web_socket("**/ws", answers.handle)
            page.goto(f"{server.base_url}/#token={TOKEN}")
            # the page settled: no pane chosen, every pane at a glance
            page.wait_for_function("() => window.tmuxBridgeView.mode() === 'tiles'")
            page.locator("#panes button", has_text="tb-test").first.wait_for()
            page.evaluate(
                """() => { window.sized = 0; window.tmuxBridgeView.onEvent((m) => {
                if (m.type === 'resize' || m.type === 'size') window.sized += 1; }); }"""
            )
            page.clock.pause_at(datetime.datetime.now() + datetime.timedelta(seconds=1))
            # from here on, no Playwright wait that needs the page's timers
            page.evaluate(
                """() => [...document.querySelectorAll('#panes button')]
                .find((b) => b.textContent.includes('tb-test')).click()"""
            )
            # (a call into Playwright lets it hand the messages to the route's handlers)
            pane.wait_for(
                lambda: (
                    page.evaluate("() => 0") == 0
                    and any(isinstance(m, bytes) for m in answers.held)
                ),
                "the snapshot",
            )
            answers.release()  # the answer and the snapshot, at the pane's size
            pane.wait_for(lambda: page.evaluate("window.sized") > 0, "the page's size, told")
            fitted = pane.pane("#{window_width}x#{window_height}")
            assert fitted != "100x40", "the page fitted the pane to itself"
            page.clock.resume()
            page.locator("#terminal .xterm-rows", has_text="20").wait_for()
            shown = _terminal_text(page)
        finally:
            browser.close()
    pane.wait_for_own_size()
    rows = [row.rstrip() for row in shown.split("\n")]
    assert rows[:20] == [str(n) for n in range(1, 21)], f"the page ({fitted}) shows:\n{shown}"


# Counts the page's WebSockets (run before the page's own scripts).
_COUNT_SOCKETS = """(() => {
  const Real = window.WebSocket;
  window.__sockets = 0;
  window.WebSocket = class extends Real {
    constructor(...args) { super(...args); window.__sockets += 1; }
  };
})()"""


def test_the_tiles_come_when_the_last_script_arrives_after_the_connection(
    pane: TestPane, server: Server
) -> None:
    """The page's scripts come one by one (view.js, tiles.js, mission.js): one that is
    slow to arrive (a loaded machine, a slow link) must not miss the connection's
    ``auth`` event, or mission control never looks at the server and the page shows no
    tile at all (seen in the benchmark). Here mission.js is held back until the page
    has connected, if it connects before its last script."""
    held: list[Route] = []
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 640})
            page.set_default_timeout(WAIT * 1000)
            page.add_init_script(_COUNT_SOCKETS)
            page.route("**/mission.js", lambda route: held.append(route))
            page.goto(f"{server.base_url}/#token={TOKEN}", wait_until="commit")
            # tiles.js ran: everything before mission.js did (Playwright hands the route
            # to its handler during a call of ours: the page is asked first)
            pane.wait_for(
                lambda: page.evaluate("() => Boolean(window.tmuxBridgeTiles)") and bool(held),
                "the scripts before mission.js",
            )
            if page.evaluate("() => window.__sockets") > 0:  # it connected already
                page.wait_for_function(
                    "() => document.getElementById('status').textContent.startsWith('connected')"
                )
            held[0].continue_()
            page.locator(".tile .target", has_text="tb-test").first.wait_for()
        finally:
            browser.close()


# Watches the focused view while a pane floods it (run in the page, given the flooding
# pane's id): the most bytes its terminal held unparsed as a frame came, and the largest
# frame. Its terminal's parser stops at the private OSC 7777 (an xterm.js handler that
# returns a promise: ``stalls`` counts them) until ``window.flood.release()``: the flood's
# frames then wait to be parsed however fast the machine is. Once the terminal holds
# ``window.flood.switchBehind`` bytes unparsed as a frame comes, the view switches to
# ``window.flood.other`` and notes any flood line drawn in the terminal from then on.
_WATCH_FLOOD = """(pane) => {
  const view = window.tmuxBridgeView;
  const held = [];
  const state = window.flood = { most: 0, largest: 0, bytes: 0, stalls: 0,
    switchBehind: Infinity, other: null, switched: false, drawnAfter: [],
    release: () => { for (const go of held.splice(0)) go(true); } };
  view.terminal().parser.registerOscHandler(7777, () => {
    state.stalls += 1;
    return new Promise((go) => held.push(go));
  });
  view.onFrame((name, bytes) => {
    if (name !== pane || state.switched) return;
    state.most = Math.max(state.most, view.backlog());
    state.largest = Math.max(state.largest, bytes.length);
    state.bytes += bytes.length;
    if (view.backlog() < state.switchBehind) return;
    state.switched = true;
    setTimeout(() => {
      view.choose(state.other);
      const terminal = document.getElementById("terminal");
      const look = () => {
        const text = terminal.textContent, at = text.indexOf("flood");
        if (at >= 0) state.drawnAfter.push(text.slice(at, at + 60));
      };
      const all = { childList: true, subtree: true, characterData: true };
      new MutationObserver(look).observe(terminal, all);
      look();
    });
  });
}"""
_STALL = r"printf '\033]7777;\007'; "  # the parser stops here until release()
_FLOOD = "seq -f flood-%g 1 300000"  # 4 MB


def _in_pane(pane: TestPane, target: str, line: str) -> None:
    pane.wait_for(lambda: line in pane.tmux("capture-pane", "-p", "-t", target).split("\n"), line)


def test_a_flood_keeps_the_focused_view_near_the_pane_and_a_switch_leaves_it_behind(
    pane: TestPane, server: Server
) -> None:
    """A pane that prints faster than xterm.js parses (a build log, ``seq``) must not put
    the focused view seconds behind it: the page holds at most half a MiB unparsed (one
    frame more), then leaves the stream, draws what it holds, and redraws the pane from a
    fresh snapshot. And a pane chosen while the last one's output waits to be parsed
    shows none of it: it was drawn over the new pane before (for a second, after a
    flood)."""
    flooding = pane.pane("#{pane_id}")
    other = pane.tmux("new-window", "-d", "-t", "tb-test", "-P", "-F", "#{pane_id}").strip()
    pane.tmux("send-keys", "-t", other, "clear; echo quiet-$((6*7))", "Enter")
    _in_pane(pane, other, "quiet-42")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = opened(browser, f"{server.base_url}/#token={TOKEN}", errors)
            page.locator("#status").filter(has_text="connected (full)").wait_for()
            page.evaluate("(pane) => window.tmuxBridgeView.choose(pane)", flooding)
            page.locator("#terminal .xterm-rows", has_text="$").wait_for()
            page.evaluate(_WATCH_FLOOD, flooding)
            # a flood watched to its end, the parser stopped at its start
            pane.tmux("send-keys", "-t", flooding, f"{_STALL}{_FLOOD}; echo end-$((6*7))", "Enter")
            _in_pane(pane, flooding, "end-42")
            stalled = "() => window.flood.stalls === 1 && window.flood.most > 512 * 1024"
            page.wait_for_function(stalled, timeout=WAIT * 1000)
            page.evaluate("() => window.flood.release()")
            page.locator("#terminal .xterm-rows", has_text="end-42").wait_for()
            rows = [row.rstrip() for row in _terminal_text(page).split("\n")]
            first = page.evaluate("() => ({ ...window.flood })")
            # a second one, and the other pane chosen while a quarter MiB waits
            page.evaluate(
                "([behind, other]) => Object.assign(window.flood, { switchBehind: behind, other })",
                [256 * 1024, other],
            )
            command = f"{_STALL}{_FLOOD}; echo again-$((6*7))"
            pane.tmux("send-keys", "-t", flooding, command, "Enter")
            page.locator("#terminal .xterm-rows", has_text="quiet-42").wait_for()
            page.evaluate("() => window.flood.release()")  # the old terminal's, if it got there
            # the new pane's next output drawn: the old one's would have been drawn first
            pane.tmux("send-keys", "-t", other, "echo after-$((6*7))", "Enter")
            page.locator("#terminal .xterm-rows", has_text="after-42").wait_for()
            second = page.evaluate("() => ({ ...window.flood })")
        finally:
            browser.close()
    assert errors == []
    assert first["stalls"] == 1, first
    assert first["most"] <= 512 * 1024 + first["largest"], first
    assert rows[rows.index("end-42") - 1] == "flood-300000", rows[-8:]
    assert second["switched"] and second["drawnAfter"] == [], second
