"""Reading a pane's own output stream between markers: REPL mode's transport.

A REPL keeps the pane's terminal between calls, so its output cannot go through relay
terminals the way a command's does. Instead each call opens ``tmux pipe-pane`` for its
own duration, pointed at a FIFO of ours (:class:`~tmux_bridge.pane.tap.PaneTap`, as
far calls do), types into the pane, and cuts the evaluation's output out of that stream
between a start and an end marker the REPL itself prints
(:class:`~tmux_bridge.text.output.MarkerScanner`). Only tmux is asked for the stream, so
the same reader works for a REPL on another host.
"""

from __future__ import annotations

import os
import re
import select
import signal
import time
from collections.abc import Callable
from typing import Literal, cast

from ..cancel import Cancel, check_not_cancelled
from ..infra.patterns import Pattern
from ..infra.process import proc
from ..infra.relay import close_fd
from ..infra.tmux import Tmux, paste_commands
from ..pane.info import PaneInfo, cursor_line
from ..pane.tap import PaneTap
from ..results import CallRecord
from ..text.markers import HIDDEN_OPEN, RUNNER_END
from ..text.output import MarkerScanner, PassThrough, TerminalText, clean
from .clock import CallClock, Step, announce_waiting, cancelled
from .frame import Notice
from .waiting import PaneCall, Signal

Sink = Callable[[bytes], None]
Scanner = MarkerScanner | PassThrough
Outcome = Literal["ended", "ready", "gone", "timeout", "stopped"]


class PaneStream(PaneCall):
    """One REPL-mode call: type into the pane and read its stream until an outcome.

    ``prompt_re`` is the REPL's prompt (to tell its own line editor from code waiting
    for input, and to see it back after an interrupt); ``error_re``, when given, marks
    output that means the REPL reported an error (``saw_error``).
    """

    def __init__(
        self,
        tmux: Tmux,
        pane: PaneInfo,
        record: CallRecord,
        stdout: Sink,
        notice: Notice,
        cancel: Cancel | None,
    ) -> None:
        super().__init__(tmux, pane, record, notice, cancel)
        self.stdout = stdout
        self.text = TerminalText()
        self.prompt_re: Pattern | None = None
        self.error_re: re.Pattern[str] | None = None
        self.saw_error = False
        self.started_ticks = proc.ticks_now() - 1
        self.repl_known: int | None = None  # the REPL's pid, once it is known
        # the call's stream, the watched process, what cuts the output and when the
        # call is done: set by :meth:`run`
        self.tap: PaneTap | None = None
        self.pidfd = -1
        self.watch_pid = 0
        self.scanner: Scanner = PassThrough()
        self.done: Callable[[], bool] | None = None
        self.collect: list[bytes] | None = None
        # the REPL may stop reading tmux-send's files at an error (psql's ON_ERROR_STOP,
        # sqlite's .bail), back at its prompt with no end marker; when it was first
        # seen so (the clock's last output then), to be sure at the next look
        self.stops_short = False
        self.stop_seen: float | None = None
        self.stopped = False
        # lines still to type, each once the REPL reads again (:meth:`stage`), and the
        # stream since the last one was typed: whether a line ended in it, its last line
        self.stages: list[bytes] = []
        self.reading_re: re.Pattern[str] | None = None
        self.stage_ended = False
        self.stage_tail = b""

    def stage(self, lines: tuple[str, ...], reading: str) -> None:
        """Type ``lines`` after what :meth:`run` types, each once the stream shows the
        REPL reading again: a line ended since the one before was typed, and the last
        line, clean, is all ``reading`` (its prompt). A REPL that evaluates a line with
        its terminal cooked never gets the next one then (the terminal would echo it
        once more). An interrupt or a cancellation types nothing more."""
        self.stages = [(line + "\n").encode("utf-8", "surrogateescape") for line in lines]
        self.reading_re = re.compile(reading)

    ladder = ("INT",)  # SIGQUIT would end the REPL

    def run(
        self,
        keys: list[list[str]],
        scanner: Scanner,
        deadline: float,
        watch_pid: int,
        done: Callable[[], bool] | None = None,
        paste: bytes | None = None,
        collect: list[bytes] | None = None,
        clear: tuple[str, ...] = ("C-e", "C-u"),
    ) -> Outcome:
        """Open the stream, type ``keys`` (after ``clear``, the keys that clear the line)
        and Enter, and read until the end marker ("ended"), ``done`` ("ready"), the death
        of ``watch_pid`` ("gone"), a timeout or cancellation that the REPL survived
        ("timeout") or, with :attr:`stops_short`, the REPL back at its prompt without
        the end marker ("stopped")."""
        pane_id = self.pane.pane_id
        self.tap = PaneTap(self.tmux, pane_id)
        self.pidfd = proc.exit_fd(watch_pid)
        self.watch_pid = watch_pid
        self.scanner, self.done, self.collect = scanner, done, collect
        buffer = f"tmux-send-{self.record.call_id}"
        try:
            if paste is not None:
                load = paste_commands(buffer, pane_id, bracketed=False)[0]
                self.tmux.run(*load, stdin=paste)
            check_not_cancelled(self.cancel)
            self.tap.open(
                [["copy-mode", "-q", "-t", pane_id]],
                [
                    ["send-keys", "-t", pane_id, *clear],
                    *keys,
                    ["send-keys", "-t", pane_id, "Enter"],
                ],
            )
            return cast(Outcome, self.wait_loop(deadline))
        finally:
            self.tap.close()
            cancelled(self.record, self.cancel)
            self.pidfd = close_fd(self.pidfd)

    def over(self, clock: CallClock) -> str | None:
        scanner = self.scanner
        if scanner.ended:
            self._flush_text()
            return "ended" if clock.running or self.record.timed_out is None else "timeout"
        if self.done is not None and scanner.started and self.done():
            return "ready"
        if not clock.running and self.at_prompt() and self._stream_at_prompt():
            self._flush_text()
            return "timeout"  # the interrupt cut the REPL's script short (psql's \i)
        if self.stopped:
            self.text.finish()  # the REPL's prompt, no output of the code's
            return "stopped"
        return None

    def look(self, clock: CallClock, now: float) -> None:
        if self.scanner.started:
            self._look_for_input(clock, now)

    def take(self, step: Step, clock: CallClock, now: float) -> str | None:
        """A timeout at the REPL's own prompt (the stream's too: the screen alone may be
        ahead of the code's end) ends the call (nothing runs: the code stopped short);
        the REPL not back within the grace period ends it too."""
        if step == "interrupt" and self.at_prompt() and self._stream_at_prompt():
            self.record.prompt_back = True
            self._flush_text()
            return "timeout"
        if step == "interrupt":
            return super().take(step, clock, now)
        self.record.prompt_back = False
        self._flush_text()
        return "timeout"

    def wait_for_events(self, clock: CallClock) -> str | None:
        """Wait for the stream, the watched process or a cancellation; "gone" when the
        watched process has exited (what it printed is handed over first)."""
        assert self.tap is not None
        tap, pidfd, scanner, collect = self.tap, self.pidfd, self.scanner, self.collect
        poller = select.poll()
        poller.register(tap.fd, select.POLLIN)
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
        if self.cancel is not None and self.record.cancelled is None:
            poller.register(self.cancel.fd, select.POLLIN)
        cap = 0.1 if not clock.running else float("inf")  # look for the prompt coming back
        ready = {fd for fd, _mask in poller.poll(clock.poll_ms(time.monotonic(), cap))}
        held = b""
        if tap.fd in ready and pidfd not in ready:
            got, held = self._drain(tap, scanner, collect, pidfd)
            if got:
                clock.saw_output(time.monotonic())
            if self.stages and not held and clock.running and self._reads_again():
                self._type_stage()
        if pidfd in ready or held:
            self._drain_after_exit(tap, scanner, collect, held)
            if collect is None:
                self._emit_stream(scanner.flush())
            self._flush_text()
            return "gone"
        return None

    def _look_for_input(self, clock: CallClock, now: float) -> None:
        """Code waiting for the person (``input()``) is not idle; the REPL's own line
        editor at its own prompt is not waiting for input, it is done or stuck."""
        if not clock.input_check_due(now):
            return
        if proc.waiting_for_input(self.pane.pid, self.pane.tty) is not True:
            self.stop_seen = None
            return
        if not self.at_prompt():
            clock.hold_idle(now)
            announce_waiting(self.record, self.tmux, self.pane.pane_id, self.notice, "the REPL")
        elif self.stops_short and not self.scanner.ended:
            # reading its terminal at its own prompt, the end marker not come: seen so
            # twice with no output between (what tmux had not written to the stream yet
            # came meanwhile), the REPL stopped reading the call's files
            self.stopped = self.stop_seen == clock.last_output
            self.stop_seen = clock.last_output

    def _stream_at_prompt(self) -> bool:
        """Whether the stream, too, ends with the REPL's prompt: the screen runs ahead of
        it (what the code printed before the prompt, a traceback, may still be on its
        way; see :meth:`~tmux_bridge.pane.tap.PaneTap.ends_as_shown`)."""
        prompt, tap = self.prompt_re, self.tap
        if prompt is None or tap is None:
            return True
        return tap.ends_as_shown(lambda text: prompt.search(text) is not None)

    def at_prompt(self) -> bool:
        """Whether the line the cursor is on is the REPL's own prompt (from tmux)."""
        if self.prompt_re is None:
            return False
        line = cursor_line(self.tmux, self.pane.pane_id)
        return bool(self.prompt_re.search(line.rstrip()))

    def _drain(
        self, tap: PaneTap, scanner: Scanner, collect: list[bytes] | None, pidfd: int
    ) -> tuple[bool, bytes]:
        """Pass on what the stream holds; stop at a piece read once the REPL had exited
        and return it (it may hold its shell's report of the signal that killed it,
        which is no output of the REPL's)."""
        got = False
        while (data := tap.read()) is not None:
            # (alive: a polled exit descriptor, procps's, may not be readable yet)
            if pidfd >= 0 and (
                select.select([pidfd], [], [], 0)[0] or not proc.alive(self.watch_pid)
            ):
                return got, data
            got = True
            if self.stages:
                self._follow_stage(data)
            output = scanner.feed(data)
            if not output:
                continue
            if collect is not None:
                collect.append(output)
            else:
                self._emit_stream(output)
        return got, b""

    def _follow_stage(self, data: bytes) -> None:
        """Keep what tells whether the REPL reads again: a line ended, the last one."""
        cut = data.rfind(b"\n")
        if cut >= 0:
            self.stage_ended = True
            self.stage_tail = data[cut + 1 :]
        else:
            self.stage_tail = (self.stage_tail + data)[-STAGE_TAIL:]

    def _reads_again(self) -> bool:
        if not self.stage_ended or self.reading_re is None:
            return False
        shown = clean(self.stage_tail).decode("utf-8", "replace")
        return self.reading_re.fullmatch(shown) is not None

    def _type_stage(self) -> None:
        """Paste the next line (its line break an Enter), unless the call was cancelled
        or the REPL is gone."""
        cancelled = self.cancel is not None and self.cancel.cancelled
        if cancelled or self.record.cancelled is not None or not proc.alive(self.watch_pid):
            self.stages.clear()
            return
        load, paste = paste_commands(
            f"tmux-send-{self.record.call_id}", self.pane.pane_id, bracketed=False
        )
        self.tmux.run_all(load, paste, stdin=self.stages.pop(0))
        self.stage_ended, self.stage_tail = False, b""

    def _drain_after_exit(
        self, tap: PaneTap, scanner: Scanner, collect: list[bytes] | None, held: bytes = b""
    ) -> None:
        """The rest of the stream once the REPL has exited: what it printed last (still
        on its way through tmux), without what its shell printed after it (a report of
        the signal that killed it, the end marker of the call that started it, the
        prompt)."""
        output = scanner.feed(repl_part(read_until_end_marker(tap, EXIT_READ_LIMIT, held)))
        if not output:
            return
        if collect is not None:
            collect.append(output)
        else:
            self._emit_stream(output)

    def _emit_stream(self, output: bytes) -> None:
        """Output of the stream: cleaned (the text keeps the unfinished line, a prompt,
        for :meth:`pending`), or passed on raw."""
        cleaned = self.text.feed(output)
        self.emit(output if self.record.options.raw else cleaned)

    def pending(self) -> str:
        """The unfinished last line as it shows now (a prompt being drawn, say)."""
        return self.text.pending().decode("utf-8", "replace")

    def emit(self, text: bytes) -> None:
        if not text:
            return
        if self.error_re is not None and self.error_re.search(
            clean(text).decode("utf-8", "replace")
        ):
            self.saw_error = True
        self.record.stdout_bytes += len(text)
        self.stdout(text)

    def _flush_text(self) -> None:
        rest = self.text.finish()
        if not self.record.options.raw:
            self.emit(rest)

    def interrupt(self, which: Signal) -> None:
        """Ctrl-C for the REPL: SIGINT to the program in front, which stays open; the
        lines not typed yet never are."""
        self.stages.clear()
        if not self._signal_repl():
            self.tmux.run("send-keys", "-t", self.pane.pane_id, "C-c", check=False)

    def _signal_repl(self) -> bool:
        shell = proc.proc_stat(self.pane.pid)
        if shell is None:
            return False
        pid = self.repl_known or self.repl_pid(shell.tpgid)
        target = proc.proc_stat(pid) if pid else None
        try:
            if target is not None and pid is not None and target.pgrp != shell.pgrp:
                os.killpg(target.pgrp, signal.SIGINT)
                return True
            if pid is not None:
                os.kill(pid, signal.SIGINT)
                return True
        except OSError:
            return False
        return False

    def repl_pid(self, tpgid: int) -> int | None:
        """The program in the pane's foreground: the shell's newest child in that group
        started since this call began (fish keeps older helpers in its own group)."""
        return proc.foreground_child(self.pane.pid, tpgid, self.started_ticks)


# The bytes of a long last line kept to see the REPL's prompt in (a prompt is shorter).
STAGE_TAIL = 256
# How long to read on after the REPL exited, for the end marker its shell prints.
EXIT_READ_LIMIT = 1.0
# The end marker of a command-mode call (the one that started the REPL), with its status.
_RUNNER_END = RUNNER_END


def read_until_end_marker(tap: PaneTap, limit: float, data: bytes = b"") -> bytes:
    """``data`` and what the stream brings after it until a command's end marker has
    come (or ``limit`` seconds)."""
    until = time.monotonic() + limit
    return data + tap.read_until(lambda more: bool(_RUNNER_END.search(data + more)), until)


def repl_part(data: bytes) -> bytes:
    """The bytes of ``data`` the REPL printed: those before the end marker of the call
    that started it, less the line before that marker when the status says a signal
    killed the REPL (bash, zsh and fish report the signal on a line of their own)."""
    end = _RUNNER_END.search(data)
    if end is None:
        return data
    head = data[: end.start()].removesuffix(HIDDEN_OPEN.encode())  # a hidden marker's start
    if int(end.group(1)) > 128:
        lines = head.rstrip(b"\r\n").rsplit(b"\n", 1)
        head = lines[0] + b"\n" if len(lines) == 2 else b""
    return head
