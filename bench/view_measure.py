"""Mission control (issue 25): the browser view's page in Debian's headless Chromium
(driven by Playwright, as the browser tests do) against ``tmux-bridge serve``, with 10
agent panes (declared by ``TMUX_BRIDGE_AGENT``, each a program that printed a line and
waits) beside the shell's pane.

- First full paint: from the page's navigation start to the moment every one of the 10
  agent tiles shows its pane's line (the page loaded, its token given, the panes
  listed, 11 subscriptions answered and drawn). Target at most 1000 ms, each of 5 loads;
  a load that has not drawn them after 30 s counts as 30 s (what it shows is printed).
- Line to tile: a program in the shell's pane prints a line every 20 ms with its
  wall-clock time; the page (11 tiles open) notes, from a ``MutationObserver`` on the
  tile's rows, when each line is drawn there. p99 target at most 50 ms.
- Pane slowdown: ``seq 1 1000000`` in the shell's pane with the page open on the 11
  tiles over its time with no page, the median of interleaved pairs (target at most
  1.3 x).

Measured once, in the first shell's run; skipped without Playwright or Chromium.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from measures import SERVE_TOKEN, Config, HttpServer, Outcome, ShellState, Skip
from results import Metric
from tmuxserver import BenchError, Pane
from ws_measure import python_line, seq_alone, type_line

AGENTS = 10
LOADS = 5  # page loads timed (3 with --quick)
ROUNDS = 5  # interleaved pairs of seq alone and with the page (3 with --quick)
CHROMIUM = os.environ.get("TMUX_BRIDGE_CHROMIUM", "/usr/bin/chromium")
PAGE_WAIT = 30  # seconds the page is given for each thing it is waited for
VIEWPORT = {"width": 1700, "height": 1300}  # every tile on screen (xterm.js draws only those)
_done: set[str] = set()
_AGENT = "import sys\nprint('agent-ready', sys.argv[1], flush=True)\nsys.stdin.read()\n"
_TICKS = (
    "import time\n"
    "for i in range({n}):\n"
    "    print('tick %d %.6f' % (i, time.time()), flush=True); time.sleep(0.02)\n"
    "print('ticks-done')"
)
# In the page: when every agent tile shows its line, the time since navigation start.
_PAINTED = """() => {
  const tiles = [...document.querySelectorAll('.tile')]
    .filter((t) => t.innerText.includes('agent-ready'));
  if (tiles.length >= %d && !window.__painted) window.__painted = performance.now();
  return Boolean(window.__painted);
}"""
# In the page: each "tick N T" line drawn in the tile of PANE, the time it took (ms).
_OBSERVE = """(pane) => {
  window.__ticks = new Map();
  const rows = document.querySelector(`.tile[data-pane="${pane}"] .xterm-rows`);
  const look = () => {
    const now = performance.timeOrigin + performance.now();
    for (const hit of rows.innerText.matchAll(/tick (\\d+) (\\d+\\.\\d+)/g)) {
      if (!window.__ticks.has(hit[1])) window.__ticks.set(hit[1], now - Number(hit[2]) * 1000);
    }
  };
  const seen = () => {
    look();
    if (rows.innerText.includes('ticks-done')) window.__ticksDone = true;
  };
  new MutationObserver(seen).observe(rows, { childList: true, subtree: true, characterData: true });
}"""


def view(state: ShellState, cfg: Config) -> Outcome:
    """The figures; :class:`Skip` after the first shell or without a browser."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return Skip("playwright is not installed (pip install -e '.[test]')")
    if not shutil.which(CHROMIUM):
        return Skip(f"no Chromium at {CHROMIUM} (.ci/deps installs it)")
    if _done:
        return Skip("measured once, in " + next(iter(_done)))
    _done.add(state.pane.shell)
    pane = state.pane
    _start_agents(pane)
    server = HttpServer(pane)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                figures = _measure(browser, server.url, pane, cfg)
            finally:
                browser.close()
    finally:
        status = server.stop()
        for i in range(AGENTS):
            pane.tmux("kill-session", "-t", f"=view-agent-{i}", check=False)
    if status != 0:
        raise BenchError(f"tmux-bridge serve exited {status} on SIGTERM")
    return figures


def _measure(browser: Any, url: str, pane: Pane, cfg: Config) -> list[Metric]:
    shell = pane.shell
    paints = [_first_paint(browser, url) for _ in range(3 if cfg.quick else LOADS)]
    latencies = _tile_latencies(browser, url, pane, 200 if cfg.quick else 500)
    ratios = []
    for _ in range(3 if cfg.quick else ROUNDS):  # interleaved: the load shifts
        alone = seq_alone(pane)
        with _page(browser, url) as page:
            _wait_tiles(page)
            ratios.append(seq_alone(pane) / alone)
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return [
        Metric("view", shell, f"first full paint, {AGENTS} agent tiles", "ms", paints).at_most(
            1000
        ),
        Metric("view", shell, f"line to its tile, p99 ({AGENTS + 1} tiles)", "ms", [p99]).at_most(
            50
        ),
        Metric("view", shell, "line to its tile", "ms", latencies),
        Metric("view", shell, f"pane slowdown, page with {AGENTS + 1} tiles", "x", ratios).at_most(
            1.3
        ),
    ]


def _start_agents(pane: Pane) -> None:
    """:data:`AGENTS` sessions, each a declared agent that printed its line."""
    script = Path(pane.env["TMUX_TMPDIR"]).parent / "view_agent.py"
    script.write_text(_AGENT)
    for i in range(AGENTS):
        name = f"view-agent-{i}"
        pane.tmux(
            "new-session", "-d", "-s", name, "-x", "100", "-y", "30",
            "-e", f"TMUX_BRIDGE_AGENT={name}", sys.executable, str(script), name,
        )  # fmt: skip
    deadline = time.monotonic() + 30
    for i in range(AGENTS):
        while "agent-ready" not in pane.tmux("capture-pane", "-p", "-t", f"=view-agent-{i}:"):
            if time.monotonic() > deadline:
                raise BenchError(f"view-agent-{i} did not start")
            time.sleep(0.05)


@contextmanager
def _page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT, bypass_csp=True)  # for the probes
    page = context.new_page()
    page.set_default_timeout(PAGE_WAIT * 1000)
    try:
        page.goto(f"{url}/#token={SERVE_TOKEN}")
        yield page
    finally:
        context.close()


# In the page: what it shows, for a load that did not draw the tiles.
_SHOWN = """() => ({
  mode: document.getElementById('tiles').hidden ? 'focus' : 'tiles',
  fonts: document.fonts.status,
  status: document.getElementById('status').textContent,
  tiles: [...document.querySelectorAll('.tile')].map((t) => t.innerText.slice(0, 60)),
})"""


def _wait_tiles(page: Any) -> None:
    """Until every agent's tile shows its line; a :class:`BenchError` with what the page
    shows when that takes longer than the page's wait."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(_PAINTED % AGENTS, polling="raf")
    except PlaywrightTimeout:
        shown = page.evaluate(_SHOWN)
        raise BenchError(f"the tiles not drawn in {PAGE_WAIT} s: {shown}") from None


def _first_paint(browser: Any, url: str) -> float:
    """ms from navigation start to every agent tile drawn, in a fresh context. A load
    that draws them not within the page's wait (30 s) counts as that long: a miss of the
    target, not a measurement that could not be made; what the page showed is printed."""
    with _page(browser, url) as page:
        try:
            _wait_tiles(page)
        except BenchError as exc:
            print(f"bench: view: {exc}", file=sys.stderr)
            return PAGE_WAIT * 1000.0
        return float(page.evaluate("window.__painted"))


def _tile_latencies(browser: Any, url: str, pane: Pane, count: int) -> list[float]:
    pane.wait_for_prompt()
    pane_id = pane.tmux("display-message", "-p", "-t", pane.target, "#{pane_id}").strip()
    with _page(browser, url) as page:
        _wait_tiles(page)
        page.locator(f'.tile[data-pane="{pane_id}"] .xterm-rows').wait_for()
        page.evaluate(_OBSERVE, pane_id)
        type_line(pane, "clear; " + python_line(pane, "view_ticks.py", _TICKS.format(n=count)))
        page.wait_for_function("window.__ticksDone === true", timeout=60000 + count * 100)
        found = page.evaluate("[...window.__ticks.values()]")
    pane.wait_for_prompt()
    if len(found) < count:
        raise BenchError(f"{len(found)} of {count} ticks reached the tile")
    return [float(ms) for ms in found]
