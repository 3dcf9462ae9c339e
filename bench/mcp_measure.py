"""The MCP server's measurement (issue 14): ``run`` of ``true`` through the SDK's
in-memory client and through a ``tmux-bridge mcp`` stdio subprocess, each against the
pane's own round trip and against the same call of the facade in this process (what the
MCP face itself adds); how soon the first line a command prints reaches the client as
progress; and the stdio server's RSS idle, after a warm-up and after many more calls
(issue 26: flat).

The clients live on one asyncio loop on a thread of their own, so the steps stay plain
functions for :func:`measures.interleaved`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from measures import SEND_TIMEOUT, Config, Outcome, ShellState, Skip, Step, interleaved, to_ms
from results import Metric, ratio
from tmuxserver import TMUX_BRIDGE, BenchError, Pane

T = TypeVar("T")
FIRST_LINE_RUNS = 5  # commands whose first line's arrival is timed (per client run)
WARM_CALLS = 200  # cheap calls before the stdio server's RSS is the baseline of "flat"


class Loop:
    """An asyncio loop on a thread; :meth:`run` waits for a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(SEND_TIMEOUT)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class Clients:
    """The in-memory client and the stdio client for ``pane``, held open by one task on
    ``loop`` (the SDK's cancel scopes must be left in the task that entered them)."""

    def __init__(self, pane: Pane, loop: Loop) -> None:
        self.pane, self.loop = pane, loop
        self.memory: Any = None
        self.stdio: Any = None
        self.facade: Any = None  # the api.Bridge the in-memory server calls
        self.tmux: Any = None  # its tmux server
        self._ready = threading.Event()
        self._done: asyncio.Event | None = None
        self._held = asyncio.run_coroutine_threadsafe(self._hold(), loop.loop)
        self._ready.wait(SEND_TIMEOUT)
        if self._held.done():
            self._held.result()  # raises what kept the clients from opening

    async def _hold(self) -> None:
        from mcp import Client, StdioServerParameters

        from tmux_bridge.api import Bridge
        from tmux_bridge.infra.tmux import Tmux
        from tmux_bridge.mcp.server import build_server
        from tmux_bridge.target import Target

        env = self.pane.env
        socket = Path(env["TMUX_TMPDIR"]) / f"tmux-{os.getuid()}" / "default"
        target = Target(Tmux(socket_path=str(socket)), self.pane.session, None,
                        env["TMUX_BRIDGE_DIR"])  # fmt: skip
        self.facade = Bridge(target, "bench")
        self.tmux = target.tmux
        params = StdioServerParameters(command=str(TMUX_BRIDGE), args=["mcp"], env=dict(env))
        self._done = asyncio.Event()
        async with (
            Client(build_server(target)) as self.memory,
            Client(params, mode="legacy") as self.stdio,
        ):
            self._ready.set()
            await self._done.wait()

    def timed_run(self, client: Any, command: str = "true") -> float:
        """Seconds for one ``run`` through ``client``; it must have exited 0."""

        async def one() -> float:
            started = time.perf_counter()
            result = await client.call_tool("run", {"command": command})
            elapsed = time.perf_counter() - started
            if result.is_error or result.structured_content["exit_status"] != 0:
                raise BenchError(f"run {command!r} through MCP gave {result.content}")
            return elapsed

        return self.loop.run(one())

    def timed_facade(self) -> float:
        """Seconds for ``Bridge.run("true")`` here, no MCP; it must have exited 0."""
        started = time.perf_counter()
        result = self.facade.run("true")
        elapsed = time.perf_counter() - started
        if result.exit_status != 0:
            raise BenchError(f"Bridge.run('true') exited {result.exit_status}")
        return float(elapsed)

    def timed_tmux(self, channel: bool) -> float:
        """Seconds for one tmux command (``display-message -p``) down this process's
        channel (``channel``), or in a tmux client of its own: a command given stdin
        never goes down a channel. (Switching channels off for it closed the channel,
        and the step after it, always the in-memory client's, paid for a new one.)"""
        started = time.perf_counter()
        self.tmux.run("display-message", "-p", "#{pid}", stdin=None if channel else b"")
        return time.perf_counter() - started

    def first_line_delay(self, client: Any) -> float:
        """Seconds from the shell printing a line (its own clock, ``date +%s.%N``) to the
        client's progress notification with it."""
        arrived: list[tuple[float, str]] = []

        async def progress(_p: float, _total: float | None, message: str | None) -> None:
            arrived.append((time.time(), message or ""))

        async def one() -> None:
            command = "date +%s.%N; sleep 0.3"
            await client.call_tool("run", {"command": command}, None, progress)

        self.loop.run(one())
        if not arrived:
            raise BenchError("no progress notification for a command that printed")
        when, text = arrived[0]
        return when - float(text.split()[0])

    def many(self, count: int) -> None:
        """``count`` cheap calls through the stdio client (read_screen, status,
        list_panes in turn), each checked to have answered without an error."""
        calls: list[tuple[str, dict[str, Any]]] = [
            ("read_screen", {"lines": 20}),
            ("status", {}),
            ("list_panes", {}),
        ]

        async def all_of_them() -> None:
            for i in range(count):
                name, arguments = calls[i % len(calls)]
                result = await self.stdio.call_tool(name, arguments)
                if result.is_error:
                    raise BenchError(f"{name} through MCP gave {result.content}")

        asyncio.run_coroutine_threadsafe(all_of_them(), self.loop.loop).result()

    def close(self) -> None:
        """Close both clients (the stdio server exits) and wait for it."""
        if self._done is not None:
            self.loop.loop.call_soon_threadsafe(self._done.set)
        self._held.result(SEND_TIMEOUT)


def use_channels(on: bool) -> None:
    """This process's tmux commands down a control-mode channel (as serve's and mcp's
    are) or in a client each (:func:`tmux_bridge.infra.tmux.use_channels`)."""
    from tmux_bridge.infra.tmux import use_channels as switch

    switch(on)


def stdio_rss_mib() -> float:
    """The VmRSS of our ``tmux-bridge mcp`` child, in MiB."""
    wanted = f"{TMUX_BRIDGE}\0mcp\0".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if cmdline.endswith(wanted) and f"\nPPid:\t{os.getpid()}\n" in status:
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    raise BenchError("no tmux-bridge mcp process of ours to read the RSS of")


def mcp(state: ShellState, cfg: Config) -> Outcome:
    """The MCP server in the pane's tmux server (see the module docstring)."""
    try:
        import mcp as _sdk  # noqa: F401  (the mcp extra installs it)
    except ImportError:
        return Skip("the MCP SDK is not installed (pip install -e '.[test]')")
    pane, loop = state.pane, Loop()
    try:
        clients = Clients(pane, loop)
    except BaseException:
        loop.close()
        raise
    try:
        idle = stdio_rss_mib()
        use_channels(True)  # this process is as resident as serve and mcp are
        steps: dict[str, Step] = {
            "memory": lambda: clients.timed_run(clients.memory),
            "stdio": lambda: clients.timed_run(clients.stdio),
            "facade": clients.timed_facade,
            "pane": lambda: pane.round_trip("true"),
            "channel": lambda: clients.timed_tmux(channel=True),
            "client": lambda: clients.timed_tmux(channel=False),
        }
        s = interleaved(pane, steps, cfg.runs)
        first = [clients.first_line_delay(clients.stdio) for _ in range(FIRST_LINE_RUNS)]
        clients.many(WARM_CALLS)
        warm = stdio_rss_mib()
        clients.many(cfg.serve_requests)
        after = stdio_rss_mib()
    finally:
        use_channels(False)
        clients.close()
        loop.close()
    return _metrics(pane.shell, s, first, (idle, warm, after), cfg.serve_requests)


def _metrics(
    shell: str,
    s: dict[str, list[float]],
    first: list[float],
    rss: tuple[float, float, float],
    count: int,
) -> list[Metric]:
    idle, warm, after = rss
    memory = Metric("mcp", shell, "run true, in-memory client", "ms", to_ms(s["memory"]))
    stdio = Metric("mcp", shell, "run true, stdio client", "ms", to_ms(s["stdio"]))
    own = Metric("mcp", shell, "pane round trip (send-keys + wait-for)", "ms", to_ms(s["pane"]))
    facade = Metric("mcp", shell, "Bridge.run('true') in process", "ms", to_ms(s["facade"]))
    channel = Metric(  # issue 26: at most 0.2 ms, against about 3 ms for a client of its own
        "mcp", shell, "a tmux command down the channel", "ms", to_ms(s["channel"])
    ).at_most(0.2)
    client = Metric("mcp", shell, "a tmux command, a client of its own", "ms", to_ms(s["client"]))
    arrival = Metric(
        "mcp", shell, "first printed line -> progress (stdio)", "ms", to_ms(first)
    ).at_most(50)
    warm_rss = Metric(
        "mcp", shell, f"tmux-bridge mcp RSS after {WARM_CALLS} calls", "MiB", [warm], derived=True
    )
    after_rss = Metric(
        "mcp", shell, f"tmux-bridge mcp RSS after {count} more", "MiB", [after], derived=True
    )
    return [
        memory,
        stdio,
        own,
        facade,
        channel,
        client,
        ratio("mcp", shell, "run true in memory / pane round trip", memory, own).at_most(1.3),
        ratio("mcp", shell, "run true in memory / Bridge.run in process", memory, facade),
        ratio("mcp", shell, "Bridge.run in process / pane round trip", facade, own).at_most(1.2),
        ratio("mcp", shell, "run true over stdio / pane round trip", stdio, own).at_most(1.6),
        ratio("mcp", shell, "tmux command: channel / own client", channel, client).at_most(0.1),
        arrival,
        Metric("mcp", shell, "tmux-bridge mcp RSS idle", "MiB", [idle], derived=True).at_most(60),
        warm_rss,
        after_rss,
        ratio(
            "mcp", shell, f"mcp RSS after {count} more / after {WARM_CALLS}", after_rss, warm_rss
        ).at_most(1.1),
    ]
