"""REPL sessions in the bridge pane: starting one, evaluating code in it, closing it.

A REPL keeps the pane's terminal between calls, so its output cannot go through relay
terminals the way a command's does. Instead each call opens ``tmux pipe-pane`` for its
own duration, pointed at a pseudo-terminal of ours, and cuts the evaluation's output out
of that stream between a start and an end marker the REPL itself prints (see
:mod:`tmux_bridge.presets`). Which REPL tmux-send started is remembered in the runtime
directory and checked against the pane (the REPL must still be the program in front).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import time
from collections.abc import Callable
from typing import NamedTuple

from . import pane as panes
from . import procfs, readiness
from .errors import EXIT_FAILURE, PaneNotReady, ReplError
from .output import MarkerScanner, PassThrough, TerminalText, clean
from .presets import (
    Preset,
    describe_presets,
    end_pattern,
    find_preset,
    plan_eval,
    start_marker,
)
from .runtime import (
    remove_quietly,
    session_name,
    write_private_file,
)
from .shells import RunnerSpec, ShellKind, display_command, runner_script, typed_line
from .state import ReplState, clear_state, read_state, repl_in_front, write_state
from .tmux import run_tmux
from .transport import (
    INPUT_CHECK,
    INTERRUPT_GRACE,
    Relay,
    RunOptions,
    RunResult,
    SignalWatch,
    locked_call,
    new_call_id,
)

Sink = Callable[[bytes], None]


class ReplRequest(NamedTuple):
    name: str
    prompt: str | None  # --prompt REGEX for a REPL without a preset
    template: str | None  # --eval-template: the code is typed as this text, {code} replaced


def run_repl(
    request: ReplRequest,
    text: bytes,
    options: RunOptions,
    stdout: Sink,
    notice: Callable[[str], None],
) -> RunResult:
    """``--repl NAME -- TEXT``: start the REPL with shell command TEXT when none is open,
    else evaluate TEXT in it. Returns like :func:`tmux_bridge.transport.run_command`."""
    preset = _preset_for(request)
    with locked_call(options, notice) as (directory, started, deadline):
        view = panes.find_bridge(session_name())
        pane = view.pane
        if pane.piped:
            raise ReplError(
                "the bridge pane already has a `tmux pipe-pane` open (a logging plugin?). "
                "REPL mode reads the pane's output through one; close the other first."
            )
        state = read_state(directory)
        if state is not None and repl_in_front(state, pane):
            if state.name != preset.name:
                raise ReplError(
                    f"the open REPL is {state.name}, not {preset.name}. Pass --repl "
                    f"{state.name} to use it, or --close to quit it first."
                )
            call = _Stream(directory, pane, options, stdout, started)
            call.notice = notice
            return call.evaluate(preset, state, text, request.template, deadline)
        if state is not None:
            clear_state(directory)
            if state.name == preset.name:
                raise ReplError(
                    f"the {state.name} REPL tmux-send started is no longer running in the "
                    "bridge terminal (the person may have quit it). Start it again with "
                    f"`tmux-send --repl {preset.name} -- <command>`."
                )
        kind = procfs.shell_kind(pane.pid)
        readiness.check_ready(pane, kind)
        assert kind is not None
        call = _Stream(directory, pane, options, stdout, started)
        call.notice = notice
        return call.start(preset, kind, text, deadline)


def close_repl(options: RunOptions, notice: Callable[[str], None]) -> tuple[str, RunResult | None]:
    """``--close``: quit the REPL tmux-send started and wait for the shell's prompt.

    Returns a sentence for the agent and, when a REPL was closed, the result. With no
    REPL open nothing is typed.
    """
    with locked_call(options, notice) as (directory, started, deadline):
        view = panes.find_bridge(session_name())
        state = read_state(directory)
        if state is None:
            return "No REPL is open; nothing was changed.", None
        if not repl_in_front(state, view.pane):
            clear_state(directory)
            return (
                f"The {state.name} REPL is no longer running; nothing was changed.",
                None,
            )
        call = _Stream(directory, view.pane, options, lambda _data: None, started)
        result = call.close(state, deadline)
        clear_state(directory)
        return f"Closed the {state.name} REPL; the shell prompt is back.", result


def _preset_for(request: ReplRequest) -> Preset:
    if request.template is not None and request.prompt is None:
        raise ReplError("--eval-template goes with --prompt (a REPL without a preset).")
    if request.prompt is not None:
        try:
            re.compile(request.prompt)
        except re.error as exc:
            raise ReplError(f"--prompt is not a valid regular expression: {exc}") from None
        return Preset(request.name, (), request.prompt, "", None)
    preset = find_preset(request.name)
    if preset is None:
        raise ReplError(
            f"no REPL preset is called {request.name!r}. Presets:\n{describe_presets()}\n"
            "For another REPL pass --prompt REGEX (its prompt) with --repl NAME."
        )
    return preset


class _Stream:
    """One REPL-mode call: the pane's output stream, read through pipe-pane."""

    def __init__(
        self,
        directory: str,
        pane: panes.PaneInfo,
        options: RunOptions,
        stdout: Sink,
        started: float,
    ) -> None:
        self.directory = directory
        self.pane = pane
        self.options = options
        self.stdout = stdout
        self.started = started
        self.call_id = new_call_id()
        self.files: list[str] = []
        self.text = TerminalText()
        self.error: re.Pattern[str] | None = None  # output that means the REPL reported one
        self.saw_error = False
        self.ready: re.Pattern[str] | None = None  # the REPL's prompt
        self.notice: Callable[[str], None] = lambda _message: None
        own = procfs.proc_stat(os.getpid())
        self.started_ticks = own.start if own else 0

    # --- the three requests ------------------------------------------------------------

    def start(self, preset: Preset, kind: ShellKind, command: bytes, deadline: float) -> RunResult:
        """Type the start command into the shell; done when the REPL's prompt shows."""
        pane = self.pane
        result = RunResult(self.call_id, command.decode("utf-8", "surrogateescape"), kind)
        command_path = self._write(".cmd", command)
        runner = RunnerSpec(
            call_id=self.call_id,
            command_path=command_path,
            stdout_tty="",
            stderr_tty="",
            banner=display_command(result.command),
            shell_binary=procfs.shell_executable(pane.pid),
        )
        runner_path = self._write(".run", runner_script(kind, runner).encode())
        scanner = MarkerScanner(
            start_marker(self.call_id).encode(),
            re.compile(end_pattern(self.call_id)),
            f"___TMUXSEND_END_{self.call_id}".encode(),
        )
        ready = re.compile(preset.ready)

        def is_ready() -> bool:
            if not ready.search(self.text.pending().decode("utf-8", "replace").rstrip("\n")):
                return False
            shell = procfs.proc_stat(pane.pid)
            return shell is not None and self._repl_pid(shell.tpgid) is not None

        outcome = self._run(
            ["send-keys", "-t", pane.pane_id, "-l", "--", typed_line(kind, runner_path)],
            scanner,
            deadline,
            result,
            watch_pid=pane.pid,
            done=is_ready,
        )
        if outcome == "ready":
            shell = procfs.proc_stat(pane.pid)
            pid = self._repl_pid(shell.tpgid) if shell else None
            if pid is not None:
                write_state(
                    self.directory,
                    ReplState(preset.name, pid, pane.pane_id, preset.ready, preset.quit),
                )
                result.status = 0
            else:
                result.status = EXIT_FAILURE
                result.notes.append("The REPL's prompt showed, but its process could not be found.")
        elif outcome == "ended":
            result.status = scanner.status if scanner.status is not None else EXIT_FAILURE
            if result.status == 0:
                result.status = 1
                result.notes.append(f"The command ended without showing the {preset.name} prompt.")
        return result

    def evaluate(
        self, preset: Preset, state: ReplState, code: bytes, template: str | None, deadline: float
    ) -> RunResult:
        """Evaluate ``code`` in the open REPL; done at the end marker it prints."""
        result = RunResult(self.call_id, code.decode("utf-8", "surrogateescape"), state.name)
        result.mode = "repl"
        if template is not None:
            code = template.encode().replace(b"{code}", code)
        plan = plan_eval(preset, self.call_id, code, self.directory)
        for path, content in plan.files.items():
            self._write_at(path, content)
        scanner: MarkerScanner | PassThrough = MarkerScanner(
            start_marker(self.call_id).encode(),
            re.compile(end_pattern(self.call_id)),
            f"___TMUXSEND_END_{self.call_id}".encode(),
            plan.lead,
        )
        collected: list[bytes] = []
        done: Callable[[], bool] | None = None
        if not plan.markers:
            scanner = PassThrough()
            done = _prompt_after_echo(collected, plan.echo_lines, re.compile(preset.ready))
        keys = ["send-keys", "-t", self.pane.pane_id, "-l", "--", plan.typed]
        if "\n" in plan.typed:
            keys = [
                "paste-buffer",
                "-d",
                "-b",
                f"tmux-send-{self.call_id}",
                "-t",
                self.pane.pane_id,
            ]
        self.error = re.compile(preset.error, re.MULTILINE) if preset.error else None
        self.ready = re.compile(preset.ready)
        outcome = self._run(
            keys,
            scanner,
            deadline,
            result,
            watch_pid=state.pid,
            paste=plan.typed.encode("utf-8", "surrogateescape") if "\n" in plan.typed else None,
            collect=collected if plan.echo_lines else None,
            done=done,
        )
        if outcome == "ready":  # no markers: the prompt came back after the echo
            self._emit(_after_echo(b"".join(collected), plan.echo_lines))
            result.status = 0
        elif outcome == "ended":
            if plan.echo_lines:
                self._emit(_without_echo(b"".join(collected), plan.echo_lines, preset.ready))
            if scanner.status is not None:
                result.status = scanner.status
            else:
                result.status = 1 if self.saw_error else 0
        elif outcome == "gone":
            clear_state(self.directory)
            result.status = EXIT_FAILURE
            result.notes.append(f"The {state.name} REPL exited during the evaluation.")
            result.pane_tail = panes.screen_tail(self.pane.pane_id)
        return result

    def close(self, state: ReplState, deadline: float) -> RunResult:
        """Type the REPL's own quit command; done when its process is gone and the shell
        holds the terminal again."""
        result = RunResult(self.call_id, state.quit, state.name)
        try:
            pidfd = os.pidfd_open(state.pid)
        except OSError:
            pidfd = -1
        pane_id = self.pane.pane_id
        if state.quit:
            keys = ["send-keys", "-t", pane_id, "-l", "--", state.quit, ";"]
            keys += ["send-keys", "-t", pane_id, "Enter"]
        else:  # no preset: end of input, sent only after checking the REPL is in front
            keys = ["send-keys", "-t", pane_id, "C-d"]
        run_tmux(
            "copy-mode",
            "-q",
            "-t",
            pane_id,
            ";",
            "send-keys",
            "-t",
            pane_id,
            "C-e",
            "C-u",
            ";",
            *keys,
        )
        try:
            limit = min(deadline, time.monotonic() + self.options.idle_timeout)
            if pidfd >= 0:
                select.select([pidfd], [], [], max(limit - time.monotonic(), 0))
            while procfs.proc_stat(state.pid) is not None and time.monotonic() < limit:
                time.sleep(0.01)
            if procfs.proc_stat(state.pid) is not None:
                result.status = EXIT_FAILURE
                result.notes.append(
                    f"The {state.name} REPL did not quit after `{state.quit}`; it is still open."
                )
                return result
            kind = procfs.shell_kind(self.pane.pid)
            try:
                readiness.check_ready(self.pane, kind, prompt_wait=2.0)
            except PaneNotReady as exc:
                result.status = EXIT_FAILURE
                result.notes.append(f"The REPL quit, but the shell prompt did not come back: {exc}")
                return result
            result.status = 0
            return result
        finally:
            if pidfd >= 0:
                os.close(pidfd)

    # --- the stream ----------------------------------------------------------------------

    def _run(
        self,
        keys: list[str],
        scanner: MarkerScanner | PassThrough,
        deadline: float,
        result: RunResult,
        watch_pid: int,
        done: Callable[[], bool] | None = None,
        paste: bytes | None = None,
        collect: list[bytes] | None = None,
    ) -> str:
        """Open the stream, type, and read until the end marker ("ended"), ``done``
        ("ready"), the watched process's death ("gone") or a timeout ("timeout")."""
        relay = Relay(self.pane.width, self.pane.height)
        signals = SignalWatch()
        pane_id = self.pane.pane_id
        try:
            pidfd = os.pidfd_open(watch_pid)
        except OSError:
            pidfd = -1
        if paste is not None:
            run_tmux("load-buffer", "-b", f"tmux-send-{self.call_id}", "-", stdin=paste)
        try:
            run_tmux(
                "copy-mode", "-q", "-t", pane_id, ";",
                "pipe-pane", "-O", "-t", pane_id, f"cat > {relay.path}", ";",
                "send-keys", "-t", pane_id, "C-e", "C-u", ";",
                *keys, ";",
                "send-keys", "-t", pane_id, "Enter",
            )  # fmt: skip
            return self._wait(relay, signals, pidfd, scanner, deadline, result, done, collect)
        finally:
            run_tmux("pipe-pane", "-t", pane_id, check=False)
            result.own_signal = signals.received
            signals.close()
            relay.close()
            if pidfd >= 0:
                os.close(pidfd)
            for path in self.files:
                remove_quietly(path)
            result.duration = time.monotonic() - self.started

    def _wait(
        self,
        relay: Relay,
        signals: SignalWatch,
        pidfd: int,
        scanner: MarkerScanner | PassThrough,
        deadline: float,
        result: RunResult,
        done: Callable[[], bool] | None,
        collect: list[bytes] | None,
    ) -> str:
        poller = select.poll()
        poller.register(relay.master, select.POLLIN)
        poller.register(signals.fd, select.POLLIN)
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
        last_output = time.monotonic()
        input_check = min(INPUT_CHECK, self.options.idle_timeout / 2)
        next_input_check = last_output + input_check
        interrupted_at: float | None = None
        while True:
            now = time.monotonic()
            if interrupted_at is None and scanner.started and now >= next_input_check:
                # code waiting for the person (input()) is not idle
                next_input_check = now + input_check
                if procfs.waiting_for_input(self.pane.pid, self.pane.tty):
                    last_output = now
                    if not result.waited_for_input:
                        result.waited_for_input = True
                        prompt = panes.cursor_line(self.pane.pane_id).strip()
                        self.notice(
                            "tmux-send: the REPL is waiting for input in the bridge terminal"
                            + (f": {prompt}" if prompt else "")
                            + " (the idle timeout is paused while it waits)"
                        )
            if interrupted_at is None:
                if signals.received is not None:
                    interrupted_at = self._interrupt(result, now)
                elif now >= deadline:
                    result.timed_out = "overall"
                    interrupted_at = self._interrupt(result, now)
                elif now >= last_output + self.options.idle_timeout:
                    result.timed_out = "idle"
                    interrupted_at = self._interrupt(result, now)
            elif now >= interrupted_at + INTERRUPT_GRACE:
                result.prompt_back = False
                self._flush_text()
                return "timeout"
            wake = (
                (interrupted_at + INTERRUPT_GRACE)
                if interrupted_at
                else min(deadline, last_output + self.options.idle_timeout)
            )
            events = poller.poll(max(0, int((wake - time.monotonic()) * 1000) + 1))
            for fd, _mask in events:
                if fd == signals.fd:
                    signals.drain()
                elif fd == pidfd:
                    self._drain_into(relay, scanner, collect)
                    if collect is None:
                        self._emit(
                            scanner.flush() if self.options.raw else self.text.feed(scanner.flush())
                        )
                    self._flush_text()
                    return "gone"
                else:
                    if self._drain_into(relay, scanner, collect):
                        last_output = time.monotonic()
                        next_input_check = last_output + input_check
            if scanner.ended:
                self._flush_text()
                return "ended" if interrupted_at is None or not result.timed_out else "timeout"
            if done is not None and scanner.started and done():
                return "ready"
            if interrupted_at is not None and self._back_at_prompt():
                return "timeout"  # the interrupt cut the REPL's script short (psql's \i)

    def _back_at_prompt(self) -> bool:
        """After an interrupt: the REPL shows its prompt and waits for input again."""
        if self.ready is None:
            return False
        line = self.text.pending().decode("utf-8", "replace")
        if not self.ready.search(line):
            return False
        self.text = TerminalText()  # the prompt line is not output
        return True

    def _drain_into(
        self, relay: Relay, scanner: MarkerScanner | PassThrough, collect: list[bytes] | None
    ) -> bool:
        got = False
        while True:
            try:
                data = os.read(relay.master, 65536)
            except OSError:
                return got
            if not data:
                return got
            got = True
            output = scanner.feed(data)
            if not output:
                continue
            if collect is not None:
                collect.append(output)
            else:
                self._emit(output if self.options.raw else self.text.feed(output))

    def _emit(self, text: bytes) -> None:
        if not text:
            return
        if self.error is not None and self.error.search(clean(text).decode("utf-8", "replace")):
            self.saw_error = True
        self.stdout(text)

    def _flush_text(self) -> None:
        if not self.options.raw:
            self._emit(self.text.finish())

    def _interrupt(self, result: RunResult, now: float) -> float:
        """Ctrl-C for the REPL: SIGINT to the program in front, which stays open."""
        result.signals_sent.append("SIGINT")
        shell = procfs.proc_stat(self.pane.pid)
        sent = False
        if shell is not None:
            pid = self._repl_pid(shell.tpgid)
            target = procfs.proc_stat(pid) if pid else None
            with contextlib.suppress(OSError):
                if target is not None and pid is not None and target.pgrp != shell.pgrp:
                    os.killpg(target.pgrp, signal.SIGINT)
                    sent = True
                elif pid is not None:
                    os.kill(pid, signal.SIGINT)
                    sent = True
        if not sent:
            run_tmux("send-keys", "-t", self.pane.pane_id, "C-c", check=False)
        return now

    def _repl_pid(self, tpgid: int) -> int | None:
        """The program in the pane's foreground: the shell's newest child in that group
        started since this call began."""
        return procfs.foreground_child(self.pane.pid, tpgid, self.started_ticks)

    def _write(self, suffix: str, content: bytes) -> str:
        path = os.path.join(self.directory, self.call_id + suffix)
        self._write_at(path, content)
        return path

    def _write_at(self, path: str, content: bytes) -> None:
        write_private_file(path, content)
        self.files.append(path)


def _without_echo(raw: bytes, echo_lines: tuple[str, ...], prompt: str) -> bytes:
    """For REPLs given their input as typed lines (nix): drop the prompt-and-echo lines
    and the blank lines the REPL puts around each value."""
    prompt_re = re.compile(prompt.rstrip("$").rstrip(" ?"))
    lines = clean(raw).decode("utf-8", "surrogateescape").split("\n")
    expected = [line.strip() for line in echo_lines if line.strip()]
    kept = []
    for line in lines:
        stripped = line.strip()
        match = prompt_re.match(line)
        if match and line[match.end() :].strip() in ("", *expected[:1]):
            if expected and line[match.end() :].strip() == expected[0]:
                expected.pop(0)
            continue
        if expected and stripped == expected[0] and line.startswith(" "):
            expected.pop(0)
            continue
        kept.append(line)
    if kept and kept[-1] == '"':
        kept.pop()  # the opening quote of the end marker, printed as a string value
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return ("\n".join(kept) + "\n").encode("utf-8", "surrogateescape") if kept else b""


def _prompt_after_echo(
    collected: list[bytes], typed: tuple[str, ...], prompt: re.Pattern[str]
) -> Callable[[], bool]:
    """For a REPL without a preset: done once the echo of the last typed line has come,
    followed by output and a line that matches the REPL's prompt."""
    last = next((line.strip() for line in reversed(typed) if line.strip()), "")

    def done() -> bool:
        lines = clean(b"".join(collected)).decode("utf-8", "replace").split("\n")
        echoed = [i for i, line in enumerate(lines) if last and last in line]
        return bool(echoed) and echoed[-1] < len(lines) - 1 and bool(prompt.search(lines[-1]))

    return done


def _after_echo(raw: bytes, typed: tuple[str, ...]) -> bytes:
    """The lines after the echo of the last typed line, without the final prompt line."""
    last = next((line.strip() for line in reversed(typed) if line.strip()), "")
    lines = clean(raw).decode("utf-8", "surrogateescape").split("\n")
    echoed = max((i for i, line in enumerate(lines) if last in line), default=-1)
    body = lines[echoed + 1 : -1]
    return ("\n".join(body) + "\n").encode("utf-8", "surrogateescape") if body else b""
