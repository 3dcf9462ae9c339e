"""A call's first look at its pane, started ahead (pane/info.look_ahead): for every kind
of target (the bridge pane, a pane id, a label, a place) the look find_pane then makes
is the one started ahead, and what it finds is what it finds without one."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tmux_bridge.api import Bridge
from tmux_bridge.infra import tmux as tmux_module
from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.pane.info import LABEL_OPTION, find_pane, look_ahead

from ..support.pane import TestPane, target_of


@pytest.fixture(autouse=True)
def patient(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """However slow this machine is, a look started ahead is taken (the freshness rule
    is tested in tests/infra/test_tmux.py)."""
    monkeypatch.setattr(tmux_module, "AHEAD_FRESH", 60.0)
    yield
    tmux_module.drop_look_ahead()


def _server(pane: TestPane) -> Tmux:
    return Tmux(socket_path=str(pane.tmpdir / f"tmux-{os.getuid()}" / "default"))


@pytest.mark.parametrize("kind", ["bridge", "pane id", "label", "place"])
def test_find_pane_takes_the_look_started_ahead(
    pane: TestPane, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _server(pane)
    pane_id = pane.tmux("display-message", "-p", "-t", pane.target, "#{pane_id}").strip()
    pane.tmux("set-option", "-p", "-t", pane_id, LABEL_OPTION, "lookahead-test")
    place = pane.tmux(
        "display-message", "-p", "-t", pane_id, "#{session_name}:#{window_index}.#{pane_index}"
    ).strip()
    spec = {"bridge": None, "pane id": pane_id, "label": "lookahead-test", "place": place}[kind]
    pane.wait_for_prompt()
    alone = find_pane(t, pane.session, spec)

    started: list[tuple[str, ...]] = []
    real = tmux_module._start

    def spy(argv: tuple[str, ...], stdin: bytes | None) -> tmux_module._Started:
        started.append(argv)
        return real(argv, stdin)

    monkeypatch.setattr(tmux_module, "_start", spy)
    look_ahead(t, pane.session, spec)
    assert len(started) == 1, "one look started ahead"
    ahead = started[0]
    found = find_pane(t, pane.session, spec)
    assert tmux_module._ahead.started is None, "find_pane took the look"
    assert ahead not in started[1:], "and did not run it again"
    assert found.pane == alone.pane
    assert found.screen == alone.screen


def test_a_call_takes_the_look_it_started_ahead(
    pane: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bridge.run starts its pane's first look before its command code, and the call
    takes it: no client of its own runs for that look."""
    taken: list[bool] = []
    real = tmux_module._taken_ahead

    def spy(argv: tuple[str, ...] | None) -> tmux_module._Started | None:
        started = real(argv)
        taken.append(started is not None)
        return started

    monkeypatch.setattr(tmux_module, "_taken_ahead", spy)
    pane.wait_for_prompt()
    result = Bridge(target_of(pane)).run("true")
    assert result.exit_status == 0
    assert taken[:1] == [True], f"the first tmux command of the call took no look: {taken}"


def test_a_call_takes_the_process_reading_it_started_ahead(
    pane: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the portable process facts, Bridge.run starts its first ``ps`` before its
    command code, and the call's start takes it (infra/procps.look_ahead)."""
    from tmux_bridge.infra import process, procps

    monkeypatch.setattr(process, "proc", procps)
    monkeypatch.setattr(procps, "AHEAD_FRESH", 60.0)
    taken: list[bool] = []
    real = procps._taken_ahead

    def spy() -> tuple[tuple[int, int], float, int] | None:
        ahead = real()
        taken.append(ahead is not None)
        return ahead

    monkeypatch.setattr(procps, "_taken_ahead", spy)
    pane.wait_for_prompt()
    result = Bridge(target_of(pane)).run("true")
    assert result.exit_status == 0
    assert taken[:1] == [True], f"the call's first reading was not the one ahead: {taken}"
