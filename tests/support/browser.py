"""Debian's headless Chromium for the browser view's tests, driven by Playwright's Python
package (its own browsers are never downloaded): where it is, and a page opened on the
view with its errors and (when asked) its WebSocket frames kept."""

from __future__ import annotations

import os

from playwright.sync_api import Browser, Page, Playwright

from .pane import WAIT

CHROMIUM = os.environ.get("TMUX_BRIDGE_CHROMIUM", "/usr/bin/chromium")


def launch(p: Playwright) -> Browser:
    """Chromium, headless (the tests run as root: no sandbox)."""
    return p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])


def opened(
    browser: Browser,
    url: str,
    errors: list[str],
    frames: list[str] | None = None,
    **context: object,
) -> Page:
    """A page at ``url``; its errors in ``errors``, the text frames it sends in ``frames``
    and, as ``<< NAME``, the subscription each output frame it gets is for."""
    page = browser.new_context(**context).new_page()  # type: ignore[arg-type]
    page.on("pageerror", lambda e: errors.append(str(e)))
    if frames is not None:
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: frames.append(str(f))))
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: _got(frames, f)))
    page.set_default_timeout(WAIT * 1000)
    page.goto(url)
    return page


def _got(frames: list[str], frame: str | bytes) -> None:
    if isinstance(frame, bytes) and frame[:1] == b"\x01":  # an output frame: 1 NAME NUL ...
        frames.append("<< " + frame[1 : frame.index(b"\x00")].decode())
