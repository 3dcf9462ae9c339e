"""``subscribe-agents`` from serve's one tmux control-mode client, on a real tmux server
with a real ``serve`` and a real WebSocket client: an agent starting, exiting and
restarting in an existing pane, a person attaching and detaching (pexpect), a new
session, the control client's own session killed (it reattaches), and the control
client being no person (``attached`` false, a browser resize applied), the tmux server
going away and coming back, and a clean stop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pexpect
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tmux_bridge.infra.control import ControlClient
from tmux_bridge.infra.tmux import Tmux

from ..support.agent_world import World
from ..support.pane import WAIT, MakeBridge
from ..support.serve import TOKEN, running, wait_until
from ..support.ws_client import event, request

pytestmark = pytest.mark.tmux


@pytest.fixture
def world(make_bridge: MakeBridge) -> Iterator[World]:
    yield World(make_bridge("bash"))


def about(name: str, *types: str) -> Callable[[dict[str, Any]], bool]:
    def wanted(event: dict[str, Any]) -> bool:
        named = event.get("name") or event.get("agent", {}).get("name")
        return event.get("type") in types and named == name

    return wanted


def control_clients(world: World, *, channels: bool = False) -> list[str]:
    """``session_name`` of each lifecycle client of the test's tmux server: the
    read-only control-mode clients (serve's command channel is not read-only), with
    ``channels`` every control-mode client."""
    listed = world.b.tmux(
        "list-clients", "-F", "#{client_control_mode} #{client_flags} #{session_name}"
    )
    found = [line.split(" ", 2) for line in listed.splitlines()]
    return [
        name
        for mode, flags, name in found
        if mode == "1" and (channels or "read-only" in flags.split(","))
    ]


def person_attaches(world: World, session: str) -> pexpect.spawn:
    return pexpect.spawn(
        "tmux", ["-S", world.socket, "attach", "-t", f"={session}"], env=world.b.env
    )


def pane_pid(world: World, session: str) -> int:
    return int(world.b.tmux("display-message", "-p", "-t", f"={session}:", "#{pane_pid}"))


def test_lifecycle_comes_from_the_control_client(world: World) -> None:
    world.start("shell", "bash --norc")  # the only session: the control client's
    with running(world.b.env) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {TOKEN}"}

        async def scenario() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with connect(url, additional_headers=headers) as ws:
                seen["sub"] = await request(ws, {"id": "1", "type": "subscribe-agents"})
                await asyncio.to_thread(
                    wait_until, lambda: control_clients(world) == ["shell"], "the control client"
                )
                # an agent starting in an existing pane: only tmux's subscription tells
                world.b.tmux("send-keys", "-t", "=shell:", "claude", "Enter")
                seen["started"] = await event(ws, about("shell", "agent-added"))
                world.b.tmux("send-keys", "-t", "=shell:", "C-c")
                seen["exited"] = await event(ws, about("shell", "agent-removed"))
                world.b.tmux("send-keys", "-t", "=shell:", "claude", "Enter")
                seen["again"] = await event(ws, about("shell", "agent-added"))
                world.b.tmux("respawn-pane", "-k", "-t", "=shell:", "claude")
                restart = ("agent-removed", "agent-added")
                seen["restart"] = [
                    await event(ws, about("shell", *restart)),
                    await event(ws, about("shell", *restart)),
                ]
                person = await asyncio.to_thread(person_attaches, world, "shell")
                try:
                    seen["attached"] = await event(ws, about("shell", "agent-updated"))
                finally:
                    person.close(force=True)
                seen["detached"] = await event(ws, about("shell", "agent-updated"))
                world.start("other", "codex")
                seen["other"] = await event(ws, about("other", "agent-added"))
                # the control client's own session goes: it attaches to another
                world.b.tmux("kill-session", "-t", "=shell")
                seen["gone"] = await event(ws, about("shell", "agent-removed"))
                await asyncio.to_thread(
                    wait_until, lambda: control_clients(world) == ["other"], "the reattach"
                )
                world.start("third", "claude")
                seen["third"] = await event(ws, about("third", "agent-added"))
                world.b.tmux("kill-session", "-t", "=other")
                seen["other-gone"] = await event(ws, about("other", "agent-removed"))
                seen["unsub"] = await request(ws, {"id": "2", "type": "unsubscribe-agents"})
                await asyncio.to_thread(
                    wait_until, lambda: control_clients(world) == [], "the client to end"
                )
            return seen

        seen = asyncio.run(scenario())

    assert seen["sub"]["ok"] is True and seen["sub"]["agents"] == []
    assert seen["started"]["agent"]["runtime"] == "claude"
    assert seen["exited"] == {"type": "agent-removed", "name": "shell"}
    assert seen["again"]["agent"]["runtime"] == "claude"
    assert [e["type"] for e in seen["restart"]] == ["agent-removed", "agent-added"]
    assert seen["attached"]["agent"]["attached"] is True
    assert seen["detached"]["agent"]["attached"] is False
    assert seen["other"]["agent"]["runtime"] == "codex"
    assert seen["third"]["agent"]["name"] == "third"
    assert seen["unsub"]["ok"] is True


def test_the_control_client_is_no_person(world: World) -> None:
    world.start("alpha", "claude", width=100, height=30)
    world.wait_names({"alpha"})

    def attached() -> bool:
        code, out, err = world.cli("agents", "--json")
        assert (code, err) == (0, "")
        [entry] = json.loads(out)
        return bool(entry["attached"])

    with running(world.b.env) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {TOKEN}"}

        async def resize(cols: int, rows: int) -> dict[str, Any]:
            async with connect(url, additional_headers=headers) as ws:
                await ws.send(b"\x03alpha\x00" + f"{cols}:{rows}".encode())
                return dict(json.loads(await asyncio.wait_for(ws.recv(), WAIT)))

        async def scenario() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with connect(url, additional_headers=headers) as ws:
                seen["sub"] = await request(ws, {"id": "1", "type": "subscribe-agents"})
                await asyncio.to_thread(
                    wait_until, lambda: control_clients(world) == ["alpha"], "the control client"
                )
                raw = world.b.tmux("display-message", "-p", "-t", "=alpha:", "#{session_attached}")
                seen["tmux counts it"] = raw.strip()
                seen["attached"] = await asyncio.to_thread(attached)
                seen["resize"] = await resize(70, 20)
                person = await asyncio.to_thread(person_attaches, world, "alpha")
                try:
                    seen["updated"] = await event(ws, about("alpha", "agent-updated"))
                    seen["person"] = await asyncio.to_thread(attached)
                    seen["resize with person"] = await resize(50, 10)
                finally:
                    person.close(force=True)
            return seen

        seen = asyncio.run(scenario())

    assert int(seen["tmux counts it"]) >= 1  # what pane.py must not take for a person
    assert seen["sub"]["agents"][0]["attached"] is False
    assert seen["attached"] is False
    assert seen["resize"]["applied"] is True
    assert (seen["resize"]["cols"], seen["resize"]["rows"]) == (70, 20)
    assert seen["updated"]["agent"]["attached"] is True
    assert seen["person"] is True
    assert seen["resize with person"]["applied"] is False


def test_no_control_client_outlives_serve(world: World) -> None:
    world.start("alpha", "claude")
    with running(world.b.env) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {TOKEN}"}

        async def subscribed() -> None:
            async with connect(url, additional_headers=headers) as ws:
                await request(ws, {"id": "1", "type": "subscribe-agents"})
                await asyncio.to_thread(
                    wait_until, lambda: control_clients(world) == ["alpha"], "the control client"
                )
                # the command channel too: serve's tmux commands go down it
                listed = await request(ws, {"id": "2", "type": "list-panes"})
                assert listed["ok"] is True, listed
                assert len(control_clients(world, channels=True)) == 2
                os.kill(server.proc.pid, signal.SIGKILL)  # no chance to stop it itself

        with contextlib.suppress(ConnectionClosed):  # closing the dropped connection may say so
            asyncio.run(subscribed())
    wait_until(
        lambda: control_clients(world, channels=True) == [],
        "the control clients to end with serve",
    )


def test_a_subscription_is_answered_once_its_control_client_is_attached(world: World) -> None:
    """tmux before 3.7 crashes, every session with it, when a session is created while a
    control client is still attaching (seen: a session started right after
    ``subscribe-agents``' answer). The answer now comes once the client is attached: it
    is in ``list-clients`` (which shows attached clients only) the moment the answer is
    read, without waiting, and a session created then leaves the server up. Five times:
    a new client each (the last subscriber gone, the client is stopped)."""
    world.start("alpha", "claude")
    with running(world.b.env) as server:
        url = server.base_url.replace("http://", "ws://") + "/ws"
        headers = {"Authorization": f"Bearer {TOKEN}"}

        async def subscribed() -> list[list[str]]:
            seen = []
            async with connect(url, additional_headers=headers) as ws:
                for n in range(5):
                    answer = await request(ws, {"id": f"s{n}", "type": "subscribe-agents"})
                    assert answer["ok"] is True, answer
                    seen.append(control_clients(world))
                    world.start(f"beta{n}", "bash --norc")
                    await request(ws, {"id": f"u{n}", "type": "unsubscribe-agents"})
                    await asyncio.to_thread(
                        wait_until, lambda: control_clients(world) == [], "the client stopped"
                    )
            return seen

        assert asyncio.run(subscribed()) == [["alpha"]] * 5
    sessions = world.b.tmux("list-sessions", "-F", "#{session_name}").split()
    assert {f"beta{n}" for n in range(5)} <= set(sessions), sessions


def test_the_client_is_ready_once_attached_or_with_no_session(world: World) -> None:
    world.start("first", "bash --norc")
    told: list[str] = []
    client = ControlClient(Tmux(socket_path=world.socket), told.append)
    client.start()
    try:
        assert client.ready(WAIT)
        assert "%attached" in told and control_clients(world) == ["first"]
    finally:
        client.stop()
    world.b.tmux("kill-server")
    alone = ControlClient(Tmux(socket_path=world.socket), told.append)
    alone.start()
    try:
        assert alone.ready(WAIT) and "%no-session" in told
    finally:
        alone.stop()


def test_the_client_waits_out_a_server_gone_and_stops_clean(world: World) -> None:
    told: list[str] = []
    world.start("first", "bash --norc")
    client = ControlClient(Tmux(socket_path=world.socket), told.append)
    client.start()
    try:
        wait_until(lambda: "%attached" in told, "the attach")
        wait_until(lambda: control_clients(world) == ["first"], "the control client")
        world.b.tmux("kill-server")
        wait_until(lambda: "%no-session" in told, "no session")
        told.clear()
        world.start("second", "bash --norc")  # a new server: found by the 2 s check
        wait_until(lambda: "%attached" in told, "the attach to the new server")
        assert control_clients(world) == ["second"]
    finally:
        client.stop()
    assert not client.thread.is_alive()
    assert control_clients(world) == []


@pytest.mark.parametrize(("flags", "person"), [((), True), (("-f", "no-output"), False)])
def test_a_control_client_that_takes_output_is_a_person(
    make_bridge: MakeBridge, flags: tuple[str, ...], person: bool
) -> None:
    """iTerm2's ``tmux -CC`` is a control client that shows the panes to someone: it
    counts as attached; a watcher that asked for no output (like serve's) does not."""
    from tmux_bridge.pane.info import list_all_panes

    b = make_bridge("bash")
    b.start()
    socket = b.tmux("display-message", "-p", "#{socket_path}").strip()
    tmux = Tmux(socket_path=socket)
    assert [p.attached for p in list_all_panes(tmux)] == [0]
    client = subprocess.Popen(
        ["tmux", "-S", socket, "-C", "attach-session", "-t", b.session, *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=b.env,
    )
    try:
        b.wait_for(
            lambda: b.tmux("list-clients", "-F", "#{client_control_mode}").split() == ["1"],
            "the control client",
        )
        assert [p.attached for p in list_all_panes(tmux)] == [1 if person else 0]
    finally:
        client.kill()
        client.wait(10)
        assert client.stdin is not None
        client.stdin.close()
