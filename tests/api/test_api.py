"""The library API in process: explicit targets, cancellation from threads and asyncio,
typed results and their JSON document, two panes at once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tmux_bridge import Bridge, Cancel, RunOptions, error_document, to_document
from tmux_bridge.errors import Cancelled, InvalidRequest, NoBridgeSession, NoSuchPane, ReplMismatch

from ..support.pane import WAIT, MakeBridge, TestPane, shell_path, target_of
from ..support.tmuxserver import RC_FILES

# Prints "started" from the program in the foreground, so a cancellation right after it
# meets that program, not the shell between two commands.
SLEEPER = "sh -c 'echo started; exec sleep 30'"


def api_pane_dir(bridge: TestPane) -> str:
    """The pane's directory for a target named by its socket's path: tmux_bridge/pane/records.py
    prefixes ``pane-N`` with a tag of the socket, unless it is the default socket."""
    dirs = [path.name for path in bridge.runtime.iterdir() if path.is_dir()]
    tagged = [name for name in dirs if name != bridge.pane_dir()]
    assert len(tagged) == 1 and tagged[0].endswith("-" + bridge.pane_dir()), dirs
    return tagged[0]


def after_api_calls(bridge: TestPane) -> set[str]:
    """What the runtime directory holds once the API's calls to the one pane ended:
    :meth:`TestPane.between_calls` for its directory, and the directory where
    ``tmux-bridge --detach`` learnt the new shell's prompt (named for the default socket)."""
    return bridge.between_calls(api_pane_dir(bridge)) | bridge.learnt_at_start()


class Started:
    """A stdout sink that notes when the command printed ``started``."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.event = threading.Event()

    def __call__(self, chunk: bytes) -> None:
        self.data += chunk
        if b"started\n" in self.data:
            self.event.set()


def new_pane(bridge: TestPane) -> str:
    """A second pane in the bridge session, at its prompt; returns its id."""
    pane = bridge.tmux("split-window", "-d", "-t", bridge.target, "-P", "-F", "#{pane_id}")
    pane = pane.strip()

    def at_prompt() -> bool:
        lines = [
            line
            for line in bridge.tmux("capture-pane", "-p", "-t", pane, check=False).split("\n")
            if line.strip()
        ]
        return bool(lines) and lines[-1].rstrip() == "$"

    bridge.wait_for(at_prompt, f"the prompt in pane {pane}")
    return pane


@pytest.fixture
def api(bridge: TestPane) -> Iterator[Bridge]:
    yield Bridge(target_of(bridge), client="test")


def test_run_returns_typed_result(api: Bridge, bridge: TestPane) -> None:
    result = api.run("echo out; echo err >&2; sh -c 'exit 3'")
    assert result.stdout == b"out\n"
    assert result.stderr == b"err\n"
    assert (result.status, result.exit_status) == (3, 3)
    assert result.mode == "command"
    assert result.shell == bridge.shell
    assert result.timed_out is None and result.cancelled is None


def test_run_words_are_one_command_with_exact_arguments(api: Bridge, bridge: TestPane) -> None:
    words = ["a b", "$HOME", "*", "it's", '"q"', "back\\slash", "", "~", "=x", "%1", "semi;"]
    result = api.run(["printf", "<%s>\\n", *words])
    assert result.stdout == b"".join(b"<" + w.encode() + b">\n" for w in words)
    assert result.exit_status == 0


def test_document_matches_the_result(api: Bridge) -> None:
    result = api.run("printf 'caf\\303\\251 \\377\\n'")
    document = to_document(result)
    assert document["stdout"] == "café \ufffd\n"
    assert document["stdout_b64"] == "Y2Fmw6kg/wo="
    assert document["exit_status"] == 0
    assert document["error_code"] is None
    assert document["id"] == result.call_id


def test_error_document_has_a_stable_code(bridge: TestPane) -> None:
    missing = Bridge(target_of(bridge)._replace(session="no-such-session"))
    with pytest.raises(NoBridgeSession) as caught:
        missing.run("true")
    document = error_document(caught.value, "true", "command")
    assert document["error_code"] == "no_bridge"
    assert document["exit_status"] == 125


def test_unknown_pane_is_a_clear_error(bridge: TestPane) -> None:
    with pytest.raises(NoSuchPane, match="%999"):
        Bridge(target_of(bridge, "%999")).run("true")


def _cancel_when_started(run: Callable[[Started, Cancel], object]) -> tuple[object, float]:
    """Run ``run`` on a worker thread, cancel it once its command printed ``started``."""
    sink = Started()
    cancel = Cancel()
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(run(sink, cancel)))
    worker.start()
    assert sink.event.wait(WAIT), "the command did not start"
    cancelled_at = time.monotonic()
    cancel.cancel()
    worker.join(WAIT)
    assert not worker.is_alive(), "the call did not end after the cancellation"
    cancel.close()
    return outcome[0], time.monotonic() - cancelled_at


def test_cancel_from_a_worker_thread(api: Bridge, bridge: TestPane) -> None:
    result, _took = _cancel_when_started(
        lambda sink, cancel: api.run(
            "sh -c 'echo started; exec sleep 30'", stdout=sink, cancel=cancel
        )
    )
    assert result.exit_status == 130  # type: ignore[attr-defined]
    assert result.signals_sent == ("SIGINT",)  # type: ignore[attr-defined]
    assert result.prompt_back  # type: ignore[attr-defined]
    assert bridge.runtime_files() == after_api_calls(bridge)
    assert api.run("echo usable").stdout == b"usable\n"


def test_cancel_from_asyncio(api: Bridge, bridge: TestPane) -> None:
    async def main() -> object:
        sink = Started()
        cancel = Cancel()
        task = asyncio.ensure_future(
            asyncio.to_thread(
                api.run, "sh -c 'echo started; exec sleep 30'", stdout=sink, cancel=cancel
            )
        )
        while not sink.event.is_set():
            await asyncio.wait({task}, timeout=0.02)
            assert not task.done(), "the command ended by itself"
        cancel.cancel()
        return await asyncio.wait_for(task, WAIT)

    result = asyncio.run(main())
    assert result.exit_status == 130  # type: ignore[attr-defined]
    assert result.signals_sent == ("SIGINT",)  # type: ignore[attr-defined]
    assert bridge.runtime_files() == after_api_calls(bridge)
    assert api.run("echo usable").stdout == b"usable\n"


def test_cancel_while_waiting_for_the_lock(api: Bridge, bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    first = Started()
    holder = threading.Thread(
        target=api.run,
        args=(f"echo started; while [ ! -e {go} ]; do sleep 0.02; done",),
        kwargs={"stdout": first, "options": RunOptions(idle_timeout=60)},
    )
    if bridge.shell == "fish":
        holder = threading.Thread(
            target=api.run,
            args=(f"echo started; while not test -e {go}; sleep 0.02; end",),
            kwargs={"stdout": first, "options": RunOptions(idle_timeout=60)},
        )
    holder.start()
    try:
        assert first.event.wait(WAIT)
        cancel = Cancel()
        errors: list[BaseException] = []

        def second() -> None:
            try:
                api.run("echo never", cancel=cancel)
            except Cancelled as exc:
                errors.append(exc)

        waiter = threading.Thread(target=second)
        waiter.start()
        cancel.cancel()
        waiter.join(WAIT)
        assert not waiter.is_alive()
        assert len(errors) == 1 and errors[0].exit_code == 130  # type: ignore[attr-defined]
    finally:
        go.touch()
        holder.join(WAIT)
    assert "never" not in bridge.history()


def test_one_panes_calls_are_logged_in_the_order_they_ran(
    api: Bridge, bridge: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's end is logged before it lets go of its pane. Here the first call's end
    entry is held back until the second call (waiting for the pane) has either run
    through or said that it waits: it can only wait, and the log keeps the order."""
    from tmux_bridge.audit import log

    real = log.record
    first_ending = threading.Event()
    second_ran_or_waits = threading.Event()

    def late_first_end(directory: str, entry: log.AuditEntry | dict[str, object]) -> None:
        fields = entry.document() if isinstance(entry, log.AuditEntry) else entry
        if fields.get("command") == "echo first" and fields.get("event") != "start":
            first_ending.set()
            assert second_ran_or_waits.wait(WAIT), "the second call neither ran nor waited"
        real(directory, entry)

    monkeypatch.setattr(log, "record", late_first_end)
    first = threading.Thread(target=api.run, args=("echo first",))
    first.start()
    try:
        assert first_ending.wait(WAIT), "the first call did not end"
        waits: list[str] = []

        def noticed(message: str) -> None:
            waits.append(message)
            second_ran_or_waits.set()

        second = api.run("echo second", notice=noticed)
        second_ran_or_waits.set()
    finally:
        second_ran_or_waits.set()
        first.join(WAIT)
    assert second.stdout == b"second\n"
    assert any("waiting for another tmux-send call" in message for message in waits)
    entries = log.read(str(bridge.runtime), None)
    assert [e["command"] for e in entries] == ["echo first", "echo second"]


def test_two_panes_run_at_once(api: Bridge, bridge: TestPane, tmp_path: Path) -> None:
    """Each command waits for the other one to have started: serialized calls would
    wait for each other until the idle timeout and fail."""
    other = Bridge(target_of(bridge, new_pane(bridge)), client="test")
    a, b = tmp_path / "a", tmp_path / "b"
    loop = "while [ ! -e {} ]; do sleep 0.02; done"
    if bridge.shell == "fish":
        loop = "while not test -e {}; sleep 0.02; end"
    results: dict[str, object] = {}
    options = RunOptions(idle_timeout=WAIT)
    threads = [
        threading.Thread(
            target=lambda: results.__setitem__(
                "a", api.run(f"touch {a}; " + loop.format(b) + "; echo A", options)
            )
        ),
        threading.Thread(
            target=lambda: results.__setitem__(
                "b", other.run(f"touch {b}; " + loop.format(a) + "; echo B", options)
            )
        ),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 2)
    assert results["a"].stdout == b"A\n"  # type: ignore[attr-defined]
    assert results["b"].stdout == b"B\n"  # type: ignore[attr-defined]
    assert results["a"].pane != results["b"].pane  # type: ignore[attr-defined]


def test_repl_through_the_api(api: Bridge, bridge: TestPane) -> None:
    started = api.start_repl("python", "python3 -q")
    assert started.exit_status == 0, started
    with pytest.raises(ReplMismatch):
        api.run("echo refused")
    assert api.evaluate("python", "21 * 2").stdout == b"42\n"
    closed = api.close_repl()
    assert closed.exit_status == 0
    assert api.run("echo back").stdout == b"back\n"


def test_invalid_requests(api: Bridge) -> None:
    with pytest.raises(InvalidRequest):
        api.send_keys(["Escape;", "new-window"])
    with pytest.raises(InvalidRequest):
        api.type_text("a\x03b")
    with pytest.raises(InvalidRequest):
        api.start_repl("bad\nname", "python3")


def test_screen_result(api: Bridge) -> None:
    api.run("echo on-screen")
    result = api.screen()
    assert result.mode == "screen"
    assert result.screen is not None and "on-screen" in result.screen


def test_host_tools_are_probed_once_then_again_when_old(api: Bridge, bridge: TestPane) -> None:
    """The tools' flavours are kept per host with a time: a second info() keeps them
    (the probe skips that part), one with a zero age probes them again."""
    import json

    context = Path(bridge.runtime) / "context.json"

    def host_at() -> float:
        kept = json.loads(context.read_text())
        (key,) = (k for k in kept if k.startswith("host:"))
        return float(kept[key]["at"])

    _, first = api.info()
    assert first["grep"] == "gnu" and first["package_manager"] == "apt", first
    at = host_at()
    _, second = api.info()
    assert (host_at(), second["grep"], second["tools_at"]) == (at, "gnu", first["tools_at"])
    _, third = api.info(tools_max_age=0)
    assert host_at() > at and third["grep"] == "gnu"


def test_a_new_session_or_pane_takes_a_call_at_once(
    make_bridge: MakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """create_session and split return once the new shell shows its prompt: a call right
    after them runs, even where the shell's startup files take a second (a call into a
    shell still reading them, or into a pane whose shell tmux has not started yet, is
    refused as busy)."""
    slow = {name: text + "sleep 1\n" for name, text in RC_FILES.items()}
    b = make_bridge("bash", slow)
    b.start()
    monkeypatch.setenv("SHELL", shell_path("bash"))  # the login shell create_session starts
    api = Bridge(target_of(b), client="test")
    made = api.create_session("made", str(b.home))
    result = Bridge(target_of(b)._replace(session="made"), client="test").run("echo $TMUX_PANE")
    assert (result.stdout, result.exit_status) == (f"{made.pane}\n".encode(), 0), result
    beside = api.split("beside")
    result = Bridge(target_of(b, beside.pane), client="test").run("echo $TMUX_PANE")
    assert (result.stdout, result.exit_status) == (f"{beside.pane}\n".encode(), 0), result
