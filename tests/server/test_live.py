"""``/ws`` on a real ``tmux-bridge serve`` with a real WebSocket client (``websockets``)
against a real tmux server: every frame type, the gates before the upgrade, the
read-only token, a slow client (all bytes or a ``lagging`` event, never a silent gap),
a stalled pipe re-armed, upload limits, and resizing with a person attached."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from ..support.pane import WAIT, TestPane, enter_nested
from ..support.serve import TOKEN, Server, running

pytestmark = pytest.mark.tmux
READ_ONLY = "read-only-token-0123456789-abcdef"


@pytest.fixture(scope="module")
def server(pane: TestPane) -> Iterator[Server]:
    path = pane.root / "read-only-token"
    path.write_text(READ_ONLY + "\n")
    path.chmod(0o600)
    with running(pane.env, "--read-only-token-file", str(path)) as started:
        yield started


def ws_url(server: Server, query: str = "") -> str:
    return server.base_url.replace("http://", "ws://") + "/ws" + query


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


async def open_ws(server: Server, token: str | None = TOKEN, **kwargs: Any) -> ClientConnection:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return await connect(ws_url(server), additional_headers=headers, max_size=2**25, **kwargs)


async def reply(ws: ClientConnection, request_id: str) -> dict[str, Any]:
    """The JSON reply with ``id``; binary frames before it are skipped."""
    while True:
        message = await ws.recv()
        if isinstance(message, str) and json.loads(message).get("id") == request_id:
            return dict(json.loads(message))


async def event(ws: ClientConnection) -> dict[str, Any]:
    """The next JSON message; output frames of a subscribed pane before it are skipped."""
    while True:
        message = await ws.recv()
        if isinstance(message, str):
            return dict(json.loads(message))


def frame(kind: int, name: str, payload: bytes) -> bytes:
    return bytes([kind]) + name.encode() + b"\x00" + payload


async def collect(ws: ClientConnection, until: bytes, events: list[dict[str, Any]]) -> bytes:
    """Output bytes (0x01 payloads) until ``until`` appears in them; JSON events go to
    ``events``. A snapshot (starting with ESC c) replaces what came before it."""
    out = bytearray()
    while until not in out:
        message = await asyncio.wait_for(ws.recv(), WAIT)
        if isinstance(message, str):
            events.append(json.loads(message))
            continue
        assert message[0] == 1
        payload = message[message.index(b"\x00") + 1 :]
        out += payload
    return bytes(out)


def _is_snapshot(message: bytes) -> bool:
    return b"\x00\x1bc" in message[:300]


async def typed_until_live(
    ws: ClientConnection,
    line: Callable[[int], bytes],
    shown: Callable[[int], bytes],
    events: list[dict[str, Any]],
    tries: int = 3,
) -> bytes:
    """Type ``line(n)`` into the watched pane (``tb-test``) until what it prints,
    ``shown(n)``, comes in live output frames; the live bytes. A ``lagging`` event before
    that means the watch re-armed once more (two calls took and gave back its pipe,
    a check of the watch between them): the line's bytes may be in the snapshot that
    follows the event instead, so a new line is typed after that snapshot, at most
    ``tries`` lines in all. JSON events go to ``events``."""
    for n in range(tries):
        await ws.send(frame(2, "tb-test", line(n)))
        live, resynced = b"", False
        while shown(n) not in live:
            message = await asyncio.wait_for(ws.recv(), WAIT)
            if isinstance(message, str):
                events.append(json.loads(message))
                resynced = resynced or events[-1].get("type") == "lagging"
            elif not _is_snapshot(message):
                live += message[message.index(b"\x00") + 1 :]
            elif resynced:
                break  # redrawn: type a new line
        else:
            return live
    raise AssertionError(f"{tries} lines typed, none came back live; events: {events}")


def test_subscribe_acks_then_snapshot_then_typed_output(pane: TestPane, server: Server) -> None:
    pane.send("--", "echo before-subscribe")

    async def scenario() -> tuple[dict[str, Any], bytes, bytes]:
        async with await open_ws(server) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            ack = json.loads(await ws.recv())  # the ack comes first
            snapshot = await ws.recv()
            assert isinstance(snapshot, bytes)
            # typed as a terminal would: letters, Left, a letter, Enter
            await ws.send(frame(2, "tb-test", b"echo live-ac\x1b[Db\r"))
            live = await collect(ws, b"live-abc\r\n", [])
            return ack, snapshot, live

    ack, snapshot, live = run(scenario())
    assert ack["ok"] is True and ack["id"] == "1" and ack["type"] == "subscribe-output"
    assert (ack["cols"], ack["rows"]) == tuple(
        int(v) for v in pane.pane("#{pane_width} #{pane_height}").split()
    )
    assert snapshot.startswith(b"\x01tb-test\x00\x1bc")
    assert b"before-subscribe" in snapshot
    # the shell saw "live-a" + "b" + "c": Left moved the cursor (a key name, not text)
    assert b"live-abc\r\n" in live


def test_stream_false_is_history_only(pane: TestPane, server: Server) -> None:
    pane.send("--", "echo history-only")
    expected = pane.tmux("capture-pane", "-p", "-t", "tb-test")

    async def scenario() -> tuple[dict[str, Any], bytes]:
        async with await open_ws(server) as ws:
            request = {"id": "h", "type": "subscribe-output", "agent": "tb-test", "stream": False}
            await ws.send(json.dumps(request))
            ack = json.loads(await ws.recv())
            data = await ws.recv()
            assert isinstance(data, bytes)
            await ws.send(json.dumps({"id": "u", "type": "unsubscribe-output", "agent": "tb-test"}))
            unsub = await reply(ws, "u")
            assert unsub["ok"] is False  # nothing was subscribed
            return ack, data

    ack, data = run(scenario())
    assert ack["ok"] is True and ack["stream"] is False
    text = data.decode("utf-8", "replace")
    for line in expected.splitlines():
        if line.strip():
            assert line.rstrip() in re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def test_history_zero_snapshots_the_screen_alone(pane: TestPane, server: Server) -> None:
    """A tile asks for ``history: 0``: its snapshots hold the screen, not the scrollback;
    a history out of bounds is refused."""
    pane.send("--", "seq 1 200 | sed s/^/scrolled-/")
    history = pane.tmux("capture-pane", "-p", "-S", "-", "-t", "tb-test").splitlines()
    assert "scrolled-1" in history and "scrolled-200" in history  # scrolled away, and shown

    async def scenario() -> tuple[dict[str, Any], bytes, dict[str, Any], dict[str, Any]]:
        async with await open_ws(server) as ws:
            ask = {"id": "h", "type": "subscribe-output", "agent": "tb-test", "history": 0}
            await ws.send(json.dumps(ask))
            ack = json.loads(await ws.recv())
            data = await ws.recv()
            assert isinstance(data, bytes)
            await ws.send(json.dumps({**ask, "id": "big", "history": 5001}))
            big = await reply(ws, "big")
            await ws.send(json.dumps({**ask, "id": "text", "history": "10"}))
            return ack, data, big, await reply(ws, "text")

    ack, data, big, text = run(scenario())
    assert ack["ok"] is True
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", data.decode("utf-8", "replace"))
    rows = [row.strip() for row in re.split(r"[\r\n]+", shown)]
    assert "scrolled-200" in rows and "scrolled-1" not in rows, rows
    for refused in (big, text):
        assert refused["ok"] is False and refused["code"] == "invalid_request", refused


def test_unsubscribe_stops_the_stream(pane: TestPane, server: Server) -> None:
    async def scenario() -> tuple[dict[str, Any], list[Any]]:
        async with await open_ws(server) as ws, await open_ws(server) as witness:
            for client in (ws, witness):
                await client.send(
                    json.dumps({"id": "s", "type": "subscribe-output", "agent": "tb-test"})
                )
                await reply(client, "s")
                await client.recv()  # the snapshot
            await ws.send(json.dumps({"id": "u", "type": "unsubscribe-output", "agent": "tb-test"}))
            unsub = await reply(ws, "u")
            pane.tmux("send-keys", "-t", "tb-test", "echo after-$((6*7))-unsub", "Enter")
            # the witness, still subscribed, got the line: the watch has handed it out
            await collect(witness, b"after-42-unsub\r\n", [])
            await ws.send(json.dumps({"id": "p", "type": "list-panes"}))
            between: list[str | bytes] = []
            while True:  # whatever the first client got before this reply
                message = await asyncio.wait_for(ws.recv(), WAIT)
                if isinstance(message, str) and json.loads(message).get("id") == "p":
                    return unsub, between
                between.append(message)

    unsub, between = run(scenario())
    assert unsub["ok"] is True and unsub["type"] == "unsubscribe-output"
    assert between == []


def test_two_subscriptions_at_once_stream_each_byte_once(pane: TestPane, server: Server) -> None:
    """A page that asks for a pane twice before the first answer (the browser view's
    tiles name a pane by its id, and so does a view focused on it by id) gets each of its
    bytes once: both subscriptions were made, the first was never dropped, and every
    frame came twice until the page closed."""
    rounds = 5

    async def scenario() -> list[int]:
        async with await open_ws(server) as ws:
            for request_id in ("1", "2"):
                asked = {"id": request_id, "type": "subscribe-output", "agent": "tb-test"}
                await ws.send(json.dumps(asked))
            answered: set[str] = set()
            while answered != {"1", "2"}:
                message = await asyncio.wait_for(ws.recv(), WAIT)
                if isinstance(message, str):
                    answered.add(json.loads(message).get("id"))
            live = bytearray()  # every output frame but the snapshots
            for n in range(rounds):
                await ws.send(frame(2, "tb-test", f"echo once-{n}-$((6*7))\r".encode()))
                while f"once-{n}-42\r\n".encode() not in live:
                    message = await asyncio.wait_for(ws.recv(), WAIT)
                    if isinstance(message, bytes) and not _is_snapshot(message):
                        live += message[message.index(b"\x00") + 1 :]
            return [live.count(f"once-{n}-42\r\n".encode()) for n in range(rounds)]

    counts = run(scenario())
    assert max(counts) == 1, counts  # a line lost to a re-armed pipe is in a snapshot


def test_a_client_gone_during_its_subscription_leaves_no_pipe(
    pane: TestPane, server: Server
) -> None:
    """A client that closes while its subscription is still being made leaves nothing
    behind: the pane's pipe (the watch) ended with its last listener. The subscription
    used to finish after the connection's end had dropped the others, and the pane
    stayed piped to a listener of a closed connection."""

    async def scenario() -> None:
        for n in range(3):
            ws = await open_ws(server)
            message = {"id": str(n), "type": "subscribe-output", "agent": "tb-test"}
            await ws.send(json.dumps(message))
            await ws.close()

    pane.wait_for(lambda: pane.pane("#{pane_pipe}") == "0", "no pipe before")
    run(scenario())
    pane.wait_for(lambda: pane.pane("#{pane_pipe}") == "0", "the pipe closed with its client")


def _numbers(data: bytes) -> list[int]:
    data = re.sub(rb"\x1b\[[?0-9;]*[A-Za-z]", b"", data).replace(b"\r", b"")
    return [int(line) for line in data.split(b"\n") if line.isdigit()]


def test_a_reading_client_gets_every_line_in_order(pane: TestPane, server: Server) -> None:
    count = 300000

    async def scenario() -> tuple[bytes, list[dict[str, Any]]]:
        async with await open_ws(server) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            await reply(ws, "1")
            await ws.recv()  # the snapshot
            await ws.send(frame(2, "tb-test", f"seq 1 {count}; echo seq-done\r".encode()))
            events: list[dict[str, Any]] = []
            return await collect(ws, b"\nseq-done", events), events

    live, events = run(scenario())
    assert events == []
    assert _numbers(live) == list(range(1, count + 1))


def _check_runs(runs: list[bytes], count: int) -> None:
    """Each run of output (between a snapshot and the next ``lagging`` event) must be a
    contiguous piece of what the pane got: the typed line's echo, then ``seq``'s bytes,
    then ``slow-42``; nothing left out inside a run."""
    expected = b"".join(b"%d\r\n" % n for n in range(1, count + 1))  # as the tty shows seq
    for index, run in enumerate(runs):
        _head, echo, rest = run.partition(b"slow-$((6*7))\r\n")  # the end of the typed line
        if echo:  # bash turns bracketed paste off before it runs the line
            run = rest.removeprefix(b"\x1b[?2004l\r")
        body, done, _tail = run.partition(b"slow-42\r\n")
        if echo and done:
            assert body == expected, f"run {index}: not every line, in order"
        elif echo:
            assert expected.startswith(body), f"run {index}: a gap after the start"
        elif done:
            assert expected.endswith(body), f"run {index}: a gap before the end"
        else:
            assert body in expected, f"run {index}: not a contiguous piece of seq's output"


def test_a_slow_client_gets_a_lagging_event_and_a_snapshot_never_a_gap(
    pane: TestPane, server: Server
) -> None:
    count = 1000000

    async def scenario() -> list[tuple[str, Any]]:
        # the client reads nothing while the pane prints: its buffers fill, TCP stops
        # (a small receive buffer, so that loopback's several MB do not hide the lag)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
        sock.connect((host, int(port)))
        async with await open_ws(server, max_queue=1, sock=sock) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            await reply(ws, "1")
            await ws.recv()
            await ws.send(frame(2, "tb-test", f"seq 1 {count}; echo slow-$((6*7))\r".encode()))
            await asyncio.to_thread(pane.wait_for, lambda: "slow-42" in pane.screen(), "seq")
            received: list[tuple[str, Any]] = []
            seen = b""
            while b"slow-42\r\n" not in seen:
                message = await asyncio.wait_for(ws.recv(), WAIT)
                if isinstance(message, str):
                    received.append(("event", json.loads(message)))
                    continue
                payload = message[message.index(b"\x00") + 1 :]
                kind = "snapshot" if payload.startswith(b"\x1bc") else "output"
                received.append((kind, payload))
                # the end is in the output, or in a snapshot taken after the pane was done
                seen = payload if kind == "snapshot" else seen[-64:] + payload
            return received

    received = run(scenario())
    runs: list[bytes] = [b""]  # the first run: from the subscription's own snapshot
    for index, (kind, item) in enumerate(received):
        if kind == "event":  # only `lagging`, and a fresh snapshot right after it
            assert item["type"] == "lagging" and item["agent"] == "tb-test", item
            assert received[index + 1][0] == "snapshot", "a lagging event without a snapshot"
        elif kind == "snapshot":
            assert received[index - 1][0] == "event", "a snapshot without a lagging event"
            runs.append(b"")
        else:
            runs[-1] += item
    _check_runs(runs, count)
    if len(runs) == 1:  # it never lagged: then it got every byte
        assert b"slow-$((6*7))\r\n" in runs[0] and b"\r\n1000000\r\nslow-42" in runs[0]


def test_a_repl_call_takes_the_watched_pipe_and_the_watch_comes_back(
    pane: TestPane, server: Server
) -> None:
    async def scenario() -> tuple[list[Any], list[dict[str, Any]], bytes]:
        async with await open_ws(server) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            await reply(ws, "1")
            await ws.recv()
            calls = [
                await asyncio.to_thread(pane.send_text, "--repl", "python", "--", "python3 -q"),
                await asyncio.to_thread(pane.send_text, "--repl", "python", "--", "print(6*7)"),
            ]
            # the REPL call closed its pipe when it ended: a pipe now is the watch's again
            await asyncio.to_thread(
                pane.wait_for, lambda: pane.pane("#{pane_pipe}") == "1", "the watch re-armed"
            )
            events: list[dict[str, Any]] = []
            while not events:  # the watch said it missed bytes: a lagging event
                message = await asyncio.wait_for(ws.recv(), WAIT)
                if isinstance(message, str):
                    events.append(json.loads(message))
            live = await typed_until_live(
                ws,
                lambda n: b'print("watch-" * 2 + "%d")\r' % n,
                lambda n: b"watch-watch-%d\r\n" % n,
                events,
            )
            calls.append(await asyncio.to_thread(pane.send_text, "--close"))
            return calls, events, live

    try:
        calls, events, live = run(scenario())
    finally:  # python must not stay in the module's pane for the tests after this one
        if pane.foreground() != "bash":
            pane.send_text("--close")
    started, printed, closed = calls
    assert started[0] == 0 and printed == (0, "42\n", "") and closed[0] == 0, calls
    assert events and {e["type"] for e in events} == {"lagging"}
    assert re.search(rb"watch-watch-\d\r\n", live)


def test_a_far_call_takes_the_watched_pipe_and_the_watch_comes_back(
    pane: TestPane, server: Server
) -> None:
    """A far shell is read through the pane's pipe too (shells inside shells): on a
    watched pane the call takes the watch's pipe, and the watch re-arms after it."""

    async def scenario() -> tuple[tuple[int, str, str], bytes]:
        async with await open_ws(server) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            await reply(ws, "1")
            await ws.recv()
            await asyncio.to_thread(enter_nested, pane, "zsh")
            call = await asyncio.to_thread(pane.send_text, "--", "echo far-$((6*7))")
            await asyncio.to_thread(
                pane.wait_for, lambda: pane.pane("#{pane_pipe}") == "1", "the watch re-armed"
            )
            # the re-armed watch redraws the tile from a snapshot: type once it came (what
            # is typed before it would be drawn by the snapshot, not streamed live)
            while True:
                message = await asyncio.wait_for(ws.recv(), WAIT)
                if isinstance(message, bytes) and _is_snapshot(message):
                    break
            live = await typed_until_live(  # live bytes again after the far call
                ws, lambda n: b"echo watch-$((2*3))%d\r" % n, lambda n: b"watch-6%d\r\n" % n, []
            )
            return call, live

    call, live = run(scenario())
    assert call == (0, "far-42\n", ""), call
    assert re.search(rb"watch-6\d\r\n", live)


def _watch_cat(pane: TestPane) -> int:
    """The pid of the watch's ``cat`` (its stdout is the watch's FIFO)."""
    fifo = pane.pane("#{@tmux-bridge-watch}")
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/fd/1") == fifo:
                    return int(entry)
            except OSError:
                continue
    raise AssertionError("no watch cat found")


def _ended(pid: int) -> bool:
    """Whether a process is gone or dead (a zombie its parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_stalled_pipe_is_re_armed_with_a_fresh_snapshot(pane: TestPane, server: Server) -> None:
    async def scenario() -> tuple[list[dict[str, Any]], int]:
        async with await open_ws(server) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            await reply(ws, "1")
            await ws.recv()
            stalled = _watch_cat(pane)
            os.kill(stalled, signal.SIGSTOP)  # the pipe stalls
            pane.tmux("send-keys", "-t", "tb-test", "echo after-stall", "Enter")
            events: list[dict[str, Any]] = []
            data = await collect(ws, b"after-stall\r\n", events)
            pane.tmux("send-keys", "-t", "tb-test", "echo still-live", "Enter")
            data += await collect(ws, b"still-live\r\n", events)
            assert _watch_cat(pane) != stalled
            return events, stalled

    events, stalled = run(scenario())
    # the stalled reader was ended (killed; tmux reaps it when its turn comes)
    pane.wait_for(lambda: _ended(stalled), f"the stalled cat {stalled} to be ended")
    assert [e["type"] for e in events] == ["lagging"]
    assert "stalled" in events[0]["reason"]


def test_uploads_paste_text_and_save_files_within_limits(pane: TestPane, server: Server) -> None:
    image = bytes(range(256)) * 4

    async def scenario() -> list[dict[str, Any]]:
        async with await open_ws(server) as ws:
            events = []
            await ws.send(frame(4, "tb-test", b"note.txt\x00text/plain\x00upload-inline-text"))
            events.append(json.loads(await ws.recv()))
            await ws.send(frame(4, "tb-test", b"pic.png\x00image/png\x00" + image))
            events.append(json.loads(await ws.recv()))
            big = b"x" * (8 * 1024 * 1024 + 1)
            await ws.send(frame(4, "tb-test", b"big.txt\x00text/plain\x00" + big))
            events.append(json.loads(await ws.recv()))
            try:  # a frame past the server's maximum ends the connection (1009)
                await ws.send(frame(4, "tb-test", b"huge\x00a/b\x00" + b"y" * (9 * 1024 * 1024)))
                await ws.recv()
            except ConnectionClosed as exc:
                events.append({"closed": exc.rcvd.code if exc.rcvd else None})
            return events

    events = run(scenario())
    text, picture, big, huge = events
    assert text["ok"] is True and text["pasted"] == "text"
    assert picture["pasted"] == "image-path" and os.path.isabs(picture["path"])
    assert Path(picture["path"]).read_bytes() == image
    assert stat.S_IMODE(os.stat(picture["path"]).st_mode) == 0o600
    # both pasted on the prompt's line, in order: the text as it is, then the image's path
    # (joined: the line wraps on the pane's 80 columns)
    line = "$ upload-inline-text" + picture["path"]
    joined = ("capture-pane", "-p", "-J", "-t", "tb-test")
    pane.wait_for(lambda: line in pane.tmux(*joined).splitlines(), "the pasted text and path")
    pane.tmux("send-keys", "-t", "tb-test", "C-u")
    assert big["ok"] is False and big["code"] == "invalid_request"
    assert huge == {"closed": 1009}


def test_a_dropped_text_file_never_runs_in_the_shell(pane: TestPane, server: Server) -> None:
    """Even with the shell's bracketed paste off (each pasted line break is Enter): a text
    of several lines is pasted as its saved file's path, one line without its final
    newline, and control characters in it are visible text."""
    marker = pane.root / "ran"
    uploads = [
        (b"many.txt", f"touch {marker}-1\necho second\n".encode()),
        (b"one.txt", f"touch {marker}-2\n".encode()),
        (b"esc.txt", b"a\x1b]0;title\x07b\x1b[201~c"),
    ]

    async def scenario() -> list[dict[str, Any]]:
        events = []
        async with await open_ws(server) as ws:
            for name, data in uploads:
                await ws.send(frame(4, "tb-test", name + b"\x00text/plain\x00" + data))
                events.append(json.loads(await ws.recv()))
                await asyncio.to_thread(shown, events[-1])
        return events

    lines: list[str] = []

    def shown(event: dict[str, Any]) -> None:
        """Wait for what was pasted on the prompt's line; keep it, then clear the line."""
        joined = ("capture-pane", "-p", "-J", "-t", "tb-test")
        pane.wait_for(lambda: pane.tmux(*joined).rstrip().split("\n")[-1] != "$", "a paste")
        lines.append(pane.tmux(*joined).rstrip().split("\n")[-1])
        pane.tmux("send-keys", "-t", "tb-test", "C-u")
        pane.wait_for(lambda: pane.tmux(*joined).rstrip().split("\n")[-1] == "$", "cleared")

    pane.tmux("send-keys", "-t", "tb-test", "bind 'set enable-bracketed-paste off'", "Enter")
    pane.tmux("send-keys", "-t", "tb-test", "clear", "Enter")
    pane.wait_for(lambda: pane.screen().strip() == "$", "a clear screen")
    try:
        many, one, esc = run(scenario())
    finally:
        pane.tmux("send-keys", "-t", "tb-test", "bind 'set enable-bracketed-paste on'", "Enter")
    assert (many["pasted"], one["pasted"], esc["pasted"]) == ("path", "text", "text")
    assert lines == [f"$ {many['path']}", f"$ touch {marker}-2", "$ a␛]0;title␇b␛[201~c"]
    assert Path(many["path"]).read_bytes() == uploads[0][1]  # the file itself is kept whole
    assert not list(pane.root.glob("ran*"))


def test_resize_never_shrinks_the_person_and_does_not_pin(pane: TestPane, server: Server) -> None:
    async def ask(cols: int, rows: int) -> dict[str, Any]:
        async with await open_ws(server) as ws:
            await ws.send(frame(3, "tb-test", f"{cols}:{rows}".encode()))
            return dict(json.loads(await ws.recv()))

    def size() -> str:
        return pane.pane("#{window_width}x#{window_height}")

    person = pexpect.spawn(
        "tmux", ["-L", "default", "attach", "-t", "=tb-test"], env=pane.env, dimensions=(30, 100)
    )
    try:
        pane.wait_for(lambda: pane.people() == 1, "the person")
        pane.wait_for(lambda: size() == "100x29", "the person's size")  # minus the status line
        answer = run(ask(50, 10))
        assert answer["applied"] is False
        assert size() == "100x29"
    finally:
        person.close(force=True)
    pane.wait_for(lambda: pane.people() == 0, "the person to leave")
    answer = run(ask(70, 20))
    assert answer["applied"] is True and (answer["cols"], answer["rows"]) == (70, 20)
    assert pane.tmux("show-options", "-w", "-t", "tb-test", "window-size").strip() == ""
    person = pexpect.spawn(
        "tmux", ["-L", "default", "attach", "-t", "=tb-test"], env=pane.env, dimensions=(30, 100)
    )
    try:  # the browser's size did not pin the window: the person gets theirs
        pane.wait_for(lambda: size() == "100x29", "the person's size again")
    finally:
        person.close(force=True)


def test_a_closed_tab_gives_the_size_back(pane: TestPane, server: Server) -> None:
    """A browser that resized a detached pane does not pin it: while two tabs are open
    the newest size holds, when one closes the other's comes back, when the last closes
    the window has the size tmux gives it with nobody attached (its session's
    ``default-size``)."""

    def size() -> str:
        return pane.pane("#{window_width}x#{window_height}")

    async def resize(ws: ClientConnection, cols: int, rows: int) -> dict[str, Any]:
        await ws.send(frame(3, "tb-test", f"{cols}:{rows}".encode()))
        return await event_of(ws, "resize")

    pane.wait_for(lambda: pane.people() == 0, "nobody attached")
    own = pane.tmux("show-options", "-A", "-v", "-t", "tb-test", "default-size").strip()
    assert own and own != "23x10"  # its own, else the global one (-A)

    async def tabs() -> None:
        first, second = await open_ws(server), await open_ws(server)
        assert (await resize(first, 23, 10))["applied"] is True
        assert size() == "23x10"
        assert (await resize(second, 47, 12))["applied"] is True
        await second.close()
        pane.wait_for(lambda: size() == "23x10", "the first tab's size again")
        await first.close()
        pane.wait_for(lambda: size() == own, "the size tmux gives it with nobody attached")

    run(tabs())
    assert pane.tmux("show-options", "-w", "-t", "tb-test", "window-size").strip() == ""


async def event_of(ws: ClientConnection, kind: str) -> dict[str, Any]:
    """The next JSON event of type ``kind``; frames before it are skipped."""
    while True:
        message = await asyncio.wait_for(ws.recv(), WAIT)
        if isinstance(message, str) and json.loads(message).get("type") == kind:
            return dict(json.loads(message))


# --- the gates and the read-only token ---------------------------------------------------


@pytest.mark.parametrize(
    ("test_id", "headers", "query"),
    [
        ("forged-origin", {"Origin": "http://evil.example"}, ""),
        ("wrong-token-header", {"Authorization": "Bearer wrong-token-0123456789"}, ""),
        ("wrong-token-query", {}, "?token=wrong-token-0123456789"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_gates_refuse_before_the_upgrade(
    server: Server, test_id: str, headers: dict[str, str], query: str
) -> None:
    async def scenario() -> int:
        try:
            async with connect(ws_url(server, query), additional_headers=headers):
                return 101
        except InvalidStatus as exc:
            return exc.response.status_code

    assert run(scenario()) == 403, test_id


def _upgrade_status(server: Server, host: str) -> str:
    """The status line a hand-written upgrade request with ``Host: host`` (and the
    right token) gets: a client library would send its own Host."""
    address = server.base_url.removeprefix("http://")
    hostname, port = address.rsplit(":", 1)
    request = (
        "GET /ws HTTP/1.1\r\n"
        f"Host: {host}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n"
    )
    with socket.create_connection((hostname, int(port)), timeout=WAIT) as sock:
        sock.sendall(request.encode())
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    return head.split(b"\r\n", 1)[0].decode()


def test_a_forged_host_is_refused_before_the_upgrade(server: Server) -> None:
    own = server.base_url.removeprefix("http://")
    assert _upgrade_status(server, own).startswith("HTTP/1.1 101 ")  # the same, honest
    assert _upgrade_status(server, "evil.example").startswith("HTTP/1.1 403 ")
    assert _upgrade_status(server, f"evil.example:{own.rsplit(':', 1)[1]}").startswith(
        "HTTP/1.1 403 "
    )


def test_token_ways_and_origins_accepted(server: Server) -> None:
    async def scenario() -> list[Any]:
        results: list[Any] = []
        origin = {"Origin": "http://localhost:5173"}  # localhost:* is allowed by default
        async with connect(ws_url(server, f"?token={TOKEN}"), additional_headers=origin) as ws:
            await ws.send(json.dumps({"id": "1", "type": "list-panes"}))
            results.append((await reply(ws, "1"))["ok"])
        async with connect(ws_url(server)) as ws:  # the token in the first message
            await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
            results.append(json.loads(await ws.recv()))
        async with connect(ws_url(server)) as ws:
            await ws.send(json.dumps({"type": "auth", "token": "nope"}))
            results.append(json.loads(await ws.recv())["ok"])
            try:
                await ws.recv()
            except ConnectionClosed as exc:
                results.append(exc.rcvd.code if exc.rcvd else None)
        return results

    listed, auth, refused, code = run(scenario())
    assert listed is True
    assert auth == {"type": "auth", "ok": True, "role": "full"}
    assert refused is False and code == 4401


def test_the_read_only_token_watches_but_never_types(pane: TestPane, server: Server) -> None:
    pane.send("--", "echo read-only-visible")

    async def scenario() -> tuple[bytes, list[dict[str, Any]]]:
        async with await open_ws(server, token=READ_ONLY) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            await reply(ws, "1")
            snapshot = await ws.recv()
            assert isinstance(snapshot, bytes)
            answers = []
            for kind, payload in (
                (2, b"echo typed-by-viewer\r"),
                (3, b"40:10"),
                (4, b"a\x00text/plain\x00x"),
            ):
                await ws.send(frame(kind, "tb-test", payload))
                answers.append(await event(ws))  # the prompt's redraw may come first
            await ws.send(
                json.dumps({"id": "p", "type": "send-prompt", "agent": "tb-test", "prompt": "hi"})
            )
            answers.append(await reply(ws, "p"))
            return snapshot, answers

    snapshot, answers = run(scenario())
    assert b"read-only-visible" in snapshot
    assert [a["ok"] for a in answers] == [False] * 4
    assert all("watch only" in a["error"] for a in answers)
    assert "typed-by-viewer" not in pane.screen()
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {READ_ONLY}"}
    ) as http:
        read = http.post("/v1/tmux", json={"action": "capture_pane", "session": "tb-test"})
        typed = http.post(
            "/v1/tmux", json={"action": "send_keys", "session": "tb-test", "text": "x"}
        )
        mcp = http.post("/mcp", json={})
    assert read.status_code == 200 and read.json()["ok"] is True
    assert typed.status_code == 403 and typed.json()["metadata"]["error_code"] == "read_only"
    assert mcp.status_code == 403


def test_a_snapshot_at_a_new_size_comes_after_that_size(pane: TestPane, server: Server) -> None:
    """A snapshot taken after the pane was resized (by a person, or by a resize frame
    the client sent before the snapshot came) is preceded by a ``size`` event with the
    size it was taken at: drawn at the client's old size it would scroll or wrap."""

    async def scenario() -> tuple[dict[str, Any], list[Any]]:
        async with await open_ws(server) as ws:
            await ws.send(json.dumps({"id": "1", "type": "subscribe-output", "agent": "tb-test"}))
            ack = await reply(ws, "1")
            await ws.recv()  # the first snapshot, at the ack's size
            await asyncio.to_thread(
                pane.tmux, "resize-window", "-t", "tb-test", "-x", "91", "-y", "27"
            )
            await asyncio.to_thread(pane.tmux, "pipe-pane", "-t", "tb-test")  # a resync
            seen: list[Any] = []  # events, and the next snapshot (live bytes skipped)
            while not seen or not isinstance(seen[-1], bytes):
                message = await asyncio.wait_for(ws.recv(), WAIT)
                if isinstance(message, str):
                    seen.append(json.loads(message))
                elif message.startswith(b"\x01tb-test\x00\x1bc"):
                    seen.append(message)
            return ack, seen

    ack, seen = run(scenario())
    assert (ack["cols"], ack["rows"]) != (91, 27)
    kinds = [m["type"] if isinstance(m, dict) else "snapshot" for m in seen]
    assert kinds == ["lagging", "size", "snapshot"], seen
    assert seen[1] == {"type": "size", "agent": "tb-test", "cols": 91, "rows": 27}
