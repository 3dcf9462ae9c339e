"""The live view (issue 13): ``/ws`` on ``tmux-bridge serve`` with real WebSocket
clients (``websockets``) watching a pane.

- Line latency: a program in the pane prints a line every 20 ms with its
  ``CLOCK_MONOTONIC`` time (the same clock in every process of the machine); a
  subscribed client notes when each line arrives. p99 and median, target p99 <= 20 ms.
- Throughput: ``seq 1 1000000`` in the pane with 10 subscribed clients reading as fast
  as they can: every client must get every byte of seq's output (a contiguous piece,
  no ``lagging`` event); the pane's time for seq with the 10 watchers over its time
  with none just before (target <= 1.2 x, issue 26; the median of 9 interleaved pairs,
  3 with ``--quick``); the server's RSS after the first and the last such run (flat: at
  most 20 MiB more). Each client checks its frames against seq's output as they come,
  so that the clients' own work, on the same two cores as the pane, is little more than
  the WebSocket library's.

Measured once, in the first shell's run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from measures import SERVE_TOKEN, Config, HttpServer, Outcome, ShellState, Skip
from results import Metric, count_ok
from tmuxserver import BenchError, Pane

CLIENTS = 10
ROUNDS = 9  # interleaved pairs of seq alone and watched (3 with --quick)
LINES = 1000000
_done: set[str] = set()
_TIMED_SEQ = (
    "import subprocess, time\nt = time.monotonic()\n"
    f"subprocess.run(['seq', '1', '{LINES}'])\n"
    "print('ws-done %.4f' % (time.monotonic() - t))\n"
)
_TICKS = (
    "import time\n"
    "for i in range({n}):\n"
    "    print('tick %d %.6f' % (i, time.monotonic()), flush=True); time.sleep(0.02)\n"
    "print('ticks-done')"
)


def ws(state: ShellState, cfg: Config) -> Outcome:
    """The figures; :class:`Skip` after the first shell."""
    try:
        import websockets  # noqa: F401  (the server extra installs it)
    except ImportError:
        return Skip("websockets is not installed (pip install -e '.[server]')")
    if _done:
        return Skip("measured once, in " + next(iter(_done)))
    _done.add(state.pane.shell)
    pane = state.pane
    server = HttpServer(pane)
    try:
        server.post({"action": "list_sessions"})
        url = server.url.replace("http://", "ws://") + "/ws"
        latencies = asyncio.run(_latencies(url, pane, 200 if cfg.quick else 500))
        alone, rounds = [], []
        rss = [server.rss_mib()]
        for _ in range(3 if cfg.quick else ROUNDS):  # interleaved: the load shifts
            alone.append(seq_alone(pane))
            rounds.append(asyncio.run(_watched_seq(url, pane)))
            rss.append(server.rss_mib())
    finally:
        status = server.stop()
    if status != 0:
        raise BenchError(f"tmux-bridge serve exited {status} on SIGTERM")
    shell = pane.shell
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    watched = [elapsed for elapsed, _ in rounds]
    oks = [ok for _, per_client in rounds for ok in per_client]
    return [
        Metric("ws", shell, "line to a ws client, p99", "ms", [p99 * 1000]).at_most(20),
        Metric("ws", shell, "line to a ws client", "ms", [v * 1000 for v in latencies]),
        count_ok(
            "ws", shell, f"clients with every byte of seq 1 {LINES} ({len(rounds)} runs)", oks
        ),
        Metric(
            "ws",
            shell,
            f"pane slowdown, {CLIENTS} watchers",
            "x",
            [w / a for w, a in zip(watched, alone, strict=True)],
        ).at_most(1.2),
        Metric(
            "ws", shell, "server RSS growth, first run -> last", "MiB", [rss[-1] - rss[1]]
        ).at_most(20),
        Metric("ws", shell, "server RSS idle", "MiB", [rss[0]]),
    ]


async def _subscribe(url: str, session: str) -> Any:
    from websockets.asyncio.client import connect

    headers = {"Authorization": f"Bearer {SERVE_TOKEN}"}
    ws = await connect(url, additional_headers=headers, max_size=2**25)
    await ws.send(json.dumps({"id": "s", "type": "subscribe-output", "agent": session}))
    while True:
        message = await ws.recv()
        if isinstance(message, str) and json.loads(message).get("id") == "s":
            break
    await ws.recv()  # the snapshot
    return ws


def type_line(pane: Pane, line: str) -> None:
    """Type ``line`` into the pane and press Enter."""
    pane.tmux("send-keys", "-t", pane.target, "-l", line)
    pane.tmux("send-keys", "-t", pane.target, "Enter")


def python_line(pane: Pane, name: str, text: str) -> str:
    """``text`` as a Python file next to the pane's tmux directory; the line that runs it."""
    path = Path(pane.env["TMUX_TMPDIR"]).parent / name
    path.write_text(text)
    return f"{sys.executable} {path}"


async def _latencies(url: str, pane: Pane, count: int) -> list[float]:
    pane.wait_for_prompt()
    ws = await _subscribe(url, pane.session)
    type_line(pane, python_line(pane, "ws_ticks.py", _TICKS.format(n=count)))
    found: list[float] = []
    pending = b""
    done = False
    try:
        while not done:
            message = await asyncio.wait_for(ws.recv(), 60)
            now = time.monotonic()
            if isinstance(message, str):
                raise BenchError(f"unexpected event while measuring latency: {message}")
            *lines, pending = (pending + message[message.index(b"\x00") + 1 :]).split(b"\r\n")
            for line in lines:
                hit = re.search(rb"tick \d+ (\d+\.\d+)$", line)  # after any escapes
                if hit:
                    found.append(now - float(hit.group(1)))
                done = done or line == b"ticks-done"
    finally:
        await ws.close()
    pane.wait_for_prompt()
    if len(found) != count:
        raise BenchError(f"{len(found)} of {count} ticks reached the client")
    return found


def seq_alone(pane: Pane) -> float:
    """seq's time in the pane with nobody watching (read from the pane's screen)."""
    pane.wait_for_prompt()
    pane.tmux("clear-history", "-t", pane.target)
    type_line(pane, "clear; " + python_line(pane, "ws_seq.py", _TIMED_SEQ))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        hit = re.search(r"^ws-done (\d+\.\d+)$", pane.screen(), re.M)
        if hit:
            pane.wait_for_prompt()
            return float(hit.group(1))
        time.sleep(0.1)
    raise BenchError("seq did not finish in the pane")


async def _watched_seq(url: str, pane: Pane) -> tuple[float, list[bool]]:
    """seq with :data:`CLIENTS` subscribed readers: its time in the pane, and for each
    client whether it got every byte of seq's output with no lagging event."""
    pane.wait_for_prompt()
    clients = [await _subscribe(url, pane.session) for _ in range(CLIENTS)]
    try:
        readers = [asyncio.ensure_future(asyncio.wait_for(_check_all(ws), 120)) for ws in clients]
        type_line(pane, python_line(pane, "ws_seq.py", _TIMED_SEQ))
        results = await asyncio.gather(*readers)
    finally:
        for ws in clients:
            await ws.close()
    pane.wait_for_prompt()
    return results[0][0], [ok for _, ok in results]


@functools.cache
def _seq_output() -> bytes:
    """What ``seq 1 LINES`` prints, as a terminal gets it (CR LF)."""
    return b"".join(b"%d\r\n" % n for n in range(1, LINES + 1))


_SEQ_DONE = re.compile(rb"\r\nws-done (\d+\.\d+)\r\n")


async def _check_all(ws: Any) -> tuple[float, bool]:
    """Read one watcher's frames until the timed seq says it is done: seq's time, and
    whether the watcher got all of seq's output, in order and contiguous, with no
    ``lagging`` event. Each frame is compared with the expected bytes as it comes (no
    copy of the whole stream is kept), so that the ten watchers' own work, on the same
    two cores as the pane, is the WebSocket client's and not this check's."""
    expected = _seq_output()
    start = expected[:64]
    head = b""  # before seq's first bytes: the typed line's echo
    at = -1  # how much of seq's output has come, once it started
    ok = True
    tail = b""
    while True:
        message = await ws.recv()
        if isinstance(message, str):
            ok = ok and json.loads(message).get("type") != "lagging"
            continue
        piece = memoryview(message)[message.index(b"\x00") + 1 :]
        if at < 0:
            head += piece
            found = head.find(start)
            if found < 0:
                head = head[-len(start) :]
                continue
            piece, head, at = memoryview(head)[found:], b"", 0
        n = min(len(piece), len(expected) - at)
        ok = ok and expected.startswith(piece[:n], at)
        at += n
        tail = tail[-256:] + bytes(piece[-256:])
        done = _SEQ_DONE.search(tail)
        if done:
            return float(done.group(1)), ok and at == len(expected)
