"""Command mode: one command in the pane's own shell, its output back through relays.

The command's stdout and stderr are two pseudo-terminals opened here (the relays): the
command sees terminals, as it would in the pane, while we read exactly what it wrote,
stream it to the caller, and copy it raw into the pane so the person sees it live.
See :mod:`tmux_bridge.text.shells` for what runs inside the shell.

One call, in order: find the pane and hold its lock (:mod:`tmux_bridge.calls.frame`); check
that its shell waits at the prompt; write the command and runner files; type one short
line; then wait in ``poll`` (no polling loop: relay data, the shell's exit, and the
caller's cancellation all wake it) until both relays deliver the end sentinel, a
timeout fires, or the shell goes away.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..cancel import Cancel, check_not_cancelled
from ..infra.process import proc
from ..infra.relay import PaneMirror, Relay, close_fd
from ..infra.runtime import remove_quietly, write_private_file
from ..infra.tmux import Tmux
from ..pane import readiness
from ..pane.front import FarShell, Gateway
from ..pane.info import PaneInfo, screen_tail
from ..pane.records import PaneDir
from ..results import CallRecord, RunOptions
from ..target import Target
from ..text.markers import SENTINEL_END, SENTINEL_EXIT, sentinel_prefix
from ..text.output import SentinelScanner, TerminalText
from ..text.shells import (
    ACK,
    LINE_EDITOR_RESET,
    RunnerSpec,
    ShellKind,
    display_command,
    join_words,
    parses_in_fish,
    runner_script,
    scratch_path,
    status_line,
    typed_erasure,
)
from ..text.shells import typed_line as make_typed_line
from .clock import CallClock, Step, announce_waiting, cancelled, interrupt_reason
from .frame import CallFrame, Notice, pane_call, shell_front
from .respawn import respawn_after_exit
from .waiting import PaneCall, Signal

Sink = Callable[[bytes], None]
Command = bytes | str | Sequence[str]
# a command chosen once the shell's kind is known (a far shell's, from its probe)
Chooser = Callable[[ShellKind], Command]


def run_command(
    target: Target,
    command: Command,
    options: RunOptions,
    sinks: tuple[Sink, Sink],
    notice: Notice,
    cancel: Cancel | None,
) -> CallRecord:
    """Run ``command`` in the target pane's shell; stream its output into ``sinks``.

    ``command`` is shell code (``bytes`` or ``str``), or a list of words run as one
    command with exactly these arguments (quoted for the pane's shell; one word is
    shell code). Returns when the command has finished and the shell is back at its
    prompt, a timeout ran its course, or the call was cancelled (the command is then
    interrupted as Ctrl-C would).

    Raises before anything is typed: :class:`NoBridgeSession`, :class:`PaneNotReady`
    and its kin, :class:`ReplMismatch` (a REPL tmux-send started is open),
    :class:`RuntimeDirError`, :class:`LockTimeout`, :class:`Cancelled`; and
    :class:`SessionClosed` when the session vanished mid-command.
    """
    with pane_call(target, options, cancel, notice) as frame:
        return run_in_frame(target, frame, command, options, sinks, notice, cancel)


def run_in_frame(
    target: Target,
    frame: CallFrame,
    command: Command | Chooser,
    options: RunOptions,
    sinks: tuple[Sink, Sink],
    notice: Notice,
    cancel: Cancel | None,
    shown: str | None = None,
    far_call: Callable[..., Any] | None = None,
) -> CallRecord:
    """:func:`run_command` in a pane whose lock the caller holds (``frame``), so that
    one caller can make several calls in a row (an edit reads, then writes). ``shown``
    is what the person sees instead of the command text, and what the record names.
    ``command`` may be a :data:`Chooser` (``shown`` is then needed): called with the
    shell's kind before anything of the command is typed. ``far_call`` makes the call
    in a far shell (``run_far``'s ``make_call``: a transfer's)."""
    front = shell_front(frame)
    if isinstance(front, FarShell):
        return _run_far(
            target, frame, front.gateway, command, options, sinks, notice, cancel, shown,
            far_call,
        )  # fmt: skip
    kind, pane = readiness.ready_shell(
        target.tmux, frame.view, frame.records, frame.deadline, cancel
    )
    text = command_bytes(kind, command(kind) if callable(command) else command)
    shown = text.decode("utf-8", "surrogateescape") if shown is None else shown
    record = CallRecord("command", shown, pane, options)
    record.shell = kind
    call = CommandCall(target.tmux, pane, kind, frame.records, text, record, sinks, notice, cancel)
    started = time.time()
    try:
        call.start()
        call.wait(frame.deadline)
    finally:
        call.close()
    if call.back_at_prompt():
        frame.records.mark_settled(started, record.call_id, call.end_row)
    record.duration = time.monotonic() - frame.started
    return record


def _run_far(
    target: Target,
    frame: CallFrame,
    gateway: Gateway,
    command: Command | Chooser,
    options: RunOptions,
    sinks: tuple[Sink, Sink],
    notice: Notice,
    cancel: Cancel | None,
    shown: str | None,
    far_call: Callable[..., Any] | None = None,
) -> CallRecord:
    """:func:`run_in_frame` for a far shell (:mod:`tmux_bridge.calls.far`)."""
    from .far import FarCall, run_far

    pane = frame.view.pane
    if shown is None:
        shown = (
            ""
            if callable(command)
            else command_bytes("bash", command).decode("utf-8", "surrogateescape")
        )
    record = CallRecord("command", shown, pane, options)
    frame.records.write_inflight(record.command)
    started = time.time()
    try:
        run_far(
            target.tmux,
            pane,
            gateway,
            lambda facts: command_bytes(
                facts.shell, command(facts.shell) if callable(command) else command
            ),
            record,
            frame.deadline,
            (sinks[0], sinks[1], notice, cancel),
            frame.records,
            frame.view.screen,
            far_call or FarCall,
        )
    finally:
        if record.job is None:  # a job's keeper holds the call (and its record) now
            frame.records.clear_inflight()
    if record.status is not None and not (record.timed_out or record.shell_exited or record.job):
        frame.records.mark_settled(started, record.call_id)  # (the far prompt's row unknown)
    record.duration = time.monotonic() - frame.started
    return record


def command_bytes(kind: ShellKind, command: Command) -> bytes:
    """The shell code for ``command`` in a ``kind`` shell."""
    if isinstance(command, bytes):
        return command
    if isinstance(command, str):
        return command.encode("utf-8", "surrogateescape")
    return join_words(kind, list(command)).encode("utf-8", "surrogateescape")


class CommandCall(PaneCall):
    """The state of one call between typing the line and the end sentinel."""

    def __init__(
        self,
        tmux: Tmux,
        pane: PaneInfo,
        kind: ShellKind,
        records: PaneDir,
        command: bytes,
        record: CallRecord,
        sinks: tuple[Sink, Sink],
        notice: Notice,
        cancel: Cancel | None,
    ) -> None:
        super().__init__(tmux, pane, record, notice, cancel)
        self.kind = kind
        self.records = records
        self.command = command
        self.sinks = sinks
        self.runner_path = records.file(record.call_id + ".run")
        self.command_path = records.file(record.call_id + ".cmd")
        self.relays: list[Relay] = []
        self.scanners: list[SentinelScanner] = []
        self.cleaners = [TerminalText(), TerminalText()]
        self.mirror: PaneMirror | None = None
        self.pidfd = -1
        self.set_remain_on_exit = pane.remain_on_exit != "on"
        self.typed = False
        self.reading = True
        self.detached = False  # the call became a job (on_timeout "detach")
        self.posix = _PosixRunnerWatch(pane.pid, self.runner_path) if kind == "posix" else None
        # the person sees tmux-send's plumbing (--verbose-transcript, or their tmux option)
        self.verbose = record.options.verbose_transcript or pane.transcript == "verbose"
        self.end_row = -1  # the pane's row (scrollback counted) where the call ended
        self.show_status = not self.verbose  # the status line after a failure

    # --- setting up ------------------------------------------------------------------

    def start(self) -> None:
        """Write the files, open the relays, and type the line."""
        pane = self.pane
        self.records.write_inflight(self.record.command)
        self.relays = [Relay(pane.width, pane.height), Relay(pane.width, pane.height)]
        prefix = sentinel_prefix(self.record.call_id)
        self.scanners = [SentinelScanner(prefix, SENTINEL_END) for _ in self.relays]
        write_private_file(self.command_path, self.command)
        spec = RunnerSpec(
            call_id=self.record.call_id,
            runner_path=self.runner_path,
            command_path=self.command_path,
            stdout_tty=self.relays[0].path,
            stderr_tty=self.relays[1].path,
            banner=display_command(self.record.command, self.record.options.agent),
            shell_binary=proc.shell_executable(pane.pid),
            erase=None
            if self.verbose
            else typed_erasure(self.kind, self.runner_path, pane.cursor_x, pane.width),
            check=self.kind != "fish" or not parses_in_fish(self.command),
        )
        write_private_file(self.runner_path, runner_script(self.kind, spec).encode())
        write_private_file(scratch_path(self.runner_path), b"")  # the shell keeps it 0600
        self.pidfd = proc.exit_fd(pane.pid)
        # a logging pipe-pane of the person's gets the bytes the terminal would give it
        self.mirror = PaneMirror(pane.tty, own_newlines=pane.watched or not pane.piped)
        check_not_cancelled(self.cancel)
        self.tmux.run_all(*self._typing())
        self.typed = True

    def _typing(self) -> list[list[str]]:
        """The tmux commands that type the line: copy mode left, the pane kept alive if
        the command ends the shell, the line cleared, the runner line, Enter."""
        pane_id = self.pane.pane_id
        commands: list[list[str]] = []
        if self.pane.in_mode:
            commands.append(["copy-mode", "-q", "-t", pane_id])
        if self.set_remain_on_exit:
            commands.append(["set-option", "-p", "-t", pane_id, "remain-on-exit", "on"])
        line = make_typed_line(self.kind, self.runner_path)
        commands += [
            ["send-keys", "-t", pane_id, *LINE_EDITOR_RESET],
            ["send-keys", "-t", pane_id, "-l", "--", line],
            ["send-keys", "-t", pane_id, "Enter"],
        ]
        return commands

    # --- waiting ---------------------------------------------------------------------

    def wait(self, deadline: float) -> None:
        """Read both relays until both sentinels are in, interrupting on a timeout or a
        cancellation; then hand the rest over (or restart a shell the command ended)."""
        ending = self.wait_loop(deadline)
        if ending == "detached":  # a job's keeper holds the call now
            return
        if ending == "gone":
            respawn_after_exit(self.tmux, self.pane, self.record, self._drain_all)
            return
        if ending == "cut-short":
            self._posix_interrupted(self.clock)
            self.show_status = False  # dash drew its prompt already: none under it
        self._finish()

    def over(self, clock: CallClock) -> str | None:
        return "ended" if all(s.seen for s in self.scanners) else None

    def look(self, clock: CallClock, now: float) -> None:
        if (
            clock.input_check_due(now)
            and proc.waiting_for_input(self.pane.pid, self.pane.tty) is True
        ):
            clock.hold_idle(now)
            announce_waiting(self.record, self.tmux, self.pane.pane_id, self.notice, "the command")

    def wait_for_events(self, clock: CallClock) -> str | None:
        if self._handle(self._poll(clock), clock):
            return "gone"
        if self.posix is not None and self.posix.cut_short():
            return "cut-short"
        return None

    def take(self, step: Step, clock: CallClock, now: float) -> str | None:
        """The clock's step; at a timeout with ``on_timeout`` "detach", the command runs
        on as a job instead of being interrupted."""
        if step == "interrupt" and self._detach():
            return "detached"
        return super().take(step, clock, now)

    def _detach(self) -> bool:
        """A timeout with ``on_timeout`` "detach": the command runs on as a job
        (:mod:`tmux_bridge.calls.keeper`); True when it does."""
        record = self.record
        if record.options.on_timeout != "detach" or cancelled(record, self.cancel):
            return False
        from .keeper import detach

        self.detached = detach(self) is not None
        return self.detached

    def _poll(self, clock: CallClock) -> list[tuple[int, int]]:
        """Wait for relay data, the shell's exit, a cancellation or the next deadline."""
        assert self.mirror is not None
        poller = select.poll()
        if self.reading and self.mirror.full:
            self.reading = False
        elif not self.reading and self.mirror.drained:
            self.reading = True
        for relay, scanner in zip(self.relays, self.scanners, strict=True):
            if self.reading and not scanner.seen:
                poller.register(relay.master, select.POLLIN)
        if self.pidfd >= 0:
            poller.register(self.pidfd, select.POLLIN)
        if self.cancel is not None and self.record.cancelled is None:
            poller.register(self.cancel.fd, select.POLLIN)
        if self.mirror.wants_to_write:
            poller.register(self.mirror.fd, select.POLLOUT)
        polled = self.pidfd < 0 or self.posix is not None  # the shell's state is polled
        return poller.poll(clock.poll_ms(time.monotonic(), 0.05 if polled else float("inf")))

    def _handle(self, events: list[tuple[int, int]], clock: CallClock) -> bool:
        """Act on what ``poll`` reported; True when the pane's shell went away."""
        assert self.mirror is not None
        shell_gone = False
        for fd, _mask in events:
            if fd == self.pidfd:
                shell_gone = True
            elif fd == self.mirror.fd:
                self.mirror.flush(block=False)
            elif fd in (self.relays[0].master, self.relays[1].master):
                index = 0 if fd == self.relays[0].master else 1
                if self._read_relay(index):
                    clock.saw_output(time.monotonic())
        return shell_gone or (self.pidfd < 0 and not proc.alive(self.pane.pid))

    def _read_relay(self, index: int) -> bool:
        data = self.relays[index].read()
        if data is None:
            return False
        output = self.scanners[index].feed(data)
        if output:
            self._deliver(index, output)
            if self.posix is not None:
                self.posix.ran()  # the runner is running: the command printed
        return True

    def _deliver(self, index: int, output: bytes) -> None:
        if index == 0:
            self.record.stdout_bytes += len(output)
        else:
            self.record.stderr_bytes += len(output)
        assert self.mirror is not None
        self.mirror.put(output)
        agent = output if self.record.options.raw else self.cleaners[index].feed(output)
        if agent:
            self.sinks[index](agent)

    def interrupt(self, which: Signal) -> None:
        """Send SIGINT or SIGQUIT to the pane's foreground, as Ctrl-C / Ctrl-\\ would."""
        assert self.mirror is not None
        if self.verbose:  # else the status line says it once the command has stopped
            self.mirror.say(f"{interrupt_reason(self.record)}: sending SIG{which}")
        signum = signal.SIGINT if which == "INT" else signal.SIGQUIT
        if not proc.signal_foreground(self.pane.pid, signum):
            key = "C-c" if which == "INT" else "C-\\"
            send_interrupt_key(self.tmux, self.pane.pane_id, key)

    def _posix_interrupted(self, clock: CallClock) -> None:
        signum = signal.SIGQUIT if clock.phase == "sent-quit" else signal.SIGINT
        self.record.status = 128 + signum
        self.record.notes.append(
            "POSIX sh has no prompt hook: the command was interrupted and its exact "
            f"status is unknown; {self.record.status} is assumed."
        )

    # --- ending ----------------------------------------------------------------------

    def _finish(self) -> None:
        """Both sentinels are in (or we gave up): hand the rest over and let the shell go."""
        record = self.record
        for index, scanner in enumerate(self.scanners):
            if scanner.seen:
                kind, _, status = (scanner.body or "").partition(":")
                if status.isdigit():
                    record.status = int(status)
                if kind == SENTINEL_EXIT:
                    record.shell_exited = True
            else:
                self._drain_relay(index)
        self._flush_cleaners()
        assert self.mirror is not None
        self.mirror.end_line()
        if self.show_status and not record.shell_exited:
            self.mirror.put(self._status_line().encode())
        self.mirror.flush(block=True)
        if record.shell_exited:
            if self.pidfd >= 0:
                select.select([self.pidfd], [], [], 2.0)
            respawn_after_exit(self.tmux, self.pane, record, self._drain_all)
            return
        with contextlib.suppress(OSError):
            os.write(self.relays[0].master, ACK)
        if not record.prompt_back or record.timed_out or cancelled(self.record, self.cancel):
            record.pane_tail = screen_tail(self.tmux, self.pane.pane_id)

    def _status_line(self) -> str:
        """The line after the output: none after a success, else the status, or why
        tmux-send interrupted the command."""
        record = self.record
        interrupted = record.timed_out is not None or record.cancelled is not None
        reason = interrupt_reason(record) if interrupted else ""
        return status_line(record.status or 0, reason)

    def _drain_relay(self, index: int) -> None:
        while self._read_relay(index):
            pass
        leftover = self.scanners[index].leftover()
        if leftover:
            self._deliver(index, leftover)

    def back_at_prompt(self) -> bool:
        """Whether the call ended with the shell back at its prompt, as it always does
        unless the command survived the interrupts or ended the shell."""
        return all(s.seen for s in self.scanners) and not self.record.shell_exited

    def _drain_all(self) -> list[SentinelScanner]:
        """Everything still in the relays, handed over; the scanners, for their sentinels."""
        for index in (0, 1):
            if not self.scanners[index].seen:
                self._drain_relay(index)
        self._flush_cleaners()
        return self.scanners

    def _flush_cleaners(self) -> None:
        if self.record.options.raw:
            return
        for index, cleaner in enumerate(self.cleaners):
            rest = cleaner.finish()
            if rest:
                self.sinks[index](rest)

    def _leave_pane(self) -> None:
        """Put the pane's option back and note the row where the call ended, in one
        tmux call: the next call knows from it that nothing ran since (readiness)."""
        pane_id = self.pane.pane_id
        commands = [[word.replace("{pane}", pane_id) for word in _END_ROW]]
        if self.set_remain_on_exit:
            commands.insert(0, ["set-option", "-p", "-u", "-t", pane_id, "remain-on-exit"])
        result = self.tmux.run_all(*commands, check=False)
        row = result.stdout.strip().rsplit("\n", 1)[-1]
        self.end_row = int(row) if row.isdigit() else -1

    def close(self) -> None:
        """Put the pane's option back, close everything, remove the call's files (a
        call that became a job only closes its descriptors: its keeper does the rest)."""
        if self.detached:
            self.pidfd = close_fd(self.pidfd)
            if self.mirror is not None:
                self.mirror.close()
            for relay in self.relays:
                relay.close()
            return
        if self.typed:
            self._leave_pane()
        cancelled(
            self.record, self.cancel
        )  # a signal that came after the command ended still counts
        self.pidfd = close_fd(self.pidfd)
        if self.mirror is not None:
            self.mirror.close()
        for relay in self.relays:
            relay.close()
        for path in (self.runner_path, self.command_path, scratch_path(self.runner_path)):
            remove_quietly(path)
        self.records.clear_inflight()


_END_ROW = ["display-message", "-p", "-t", "{pane}", "#{e|+:#{history_size},#{cursor_y}}"]


def send_interrupt_key(tmux: Tmux, pane_id: str, key: str) -> None:
    """Ctrl-C (or Ctrl-\\) through tmux, for a foreground we may not signal (``sudo``
    runs as root): copy mode is left first, so the key reaches the program."""
    tmux.run_all(["copy-mode", "-q", "-t", pane_id], ["send-keys", "-t", pane_id, key], check=False)


class _PosixRunnerWatch:
    """dash keeps a sourced file open while it runs it and has no prompt hook: the
    runner closed without a sentinel, with the shell holding the terminal, means an
    interrupt cut the line short. Checked every 50 ms."""

    def __init__(self, shell_pid: int, runner_path: str) -> None:
        self.shell_pid = shell_pid
        self.runner_path = runner_path
        self.seen_open = False
        self.closed_at: float | None = None

    def ran(self) -> None:
        """The runner is known to have run (its command printed), even if it was cut
        short before a check saw it open."""
        self.seen_open = True

    def cut_short(self) -> bool:
        if proc.has_open(self.shell_pid, self.runner_path) is True:  # Unknown: not seen
            self.seen_open = True
            self.closed_at = None
            return False
        stat = proc.proc_stat(self.shell_pid)
        if stat is None or stat.tpgid != stat.pgrp:
            # a job of the shell's holds the terminal: the runner started it
            self.seen_open = self.seen_open or stat is not None
            return False
        if not self.seen_open:
            return False
        now = time.monotonic()
        if self.closed_at is None:
            self.closed_at = now
        return now - self.closed_at > 0.15
