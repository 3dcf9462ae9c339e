"""Running one command in the bridge pane's shell and streaming its output back.

The command's stdout and stderr are two pseudo-terminals opened here (the relays): the
command sees terminals, as it would in the pane, while we read exactly what it wrote,
stream it to the agent, and copy it raw into the pane so the person sees it live.
See :mod:`tmux_bridge.shells` for what runs inside the shell.

One call, in order: take the call lock; find the pane and check that its shell waits at
the prompt; write the command and runner files; type one short line; then wait in
``poll`` (no polling loop: relay data, the shell's exit, and our own signals all wake it)
until both relays deliver the end sentinel, a timeout fires, or the shell goes away.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import select
import signal
import struct
import termios
import time
from collections.abc import Callable, Iterator
from types import FrameType

from . import pane as panes
from . import procfs, readiness
from .errors import SessionClosed
from .output import SentinelScanner, TerminalText
from .runtime import (
    INFLIGHT_FILE,
    call_lock,
    ensure_private_dir,
    remove_quietly,
    runtime_dir,
    session_name,
    sweep_call_files,
    write_private_file,
)
from .shells import (
    ACK,
    SENTINEL_END,
    SENTINEL_EXIT,
    RunnerSpec,
    ShellKind,
    display_command,
    runner_script,
    sentinel_prefix,
    typed_line,
)
from .state import check_no_repl
from .tmux import run_tmux

Sink = Callable[[bytes], None]

INTERRUPT_GRACE = 3.0  # seconds from SIGINT until SIGQUIT
INPUT_CHECK = 0.5  # seconds of silence between looks at whether the command waits for input
QUIT_GRACE = 2.0  # seconds from SIGQUIT until we give up and report the survivor
PANE_BACKLOG_LIMIT = 256 * 1024  # stop reading the relays while this much waits for the pane
READ_SIZE = 65536


class RunOptions:
    """How to run one command. Times are in seconds."""

    __slots__ = ("idle_timeout", "max_time", "raw")

    def __init__(self, idle_timeout: float = 10.0, max_time: float = 120.0, raw: bool = False):
        self.idle_timeout = idle_timeout
        self.max_time = max_time
        self.raw = raw


class RunResult:
    """What happened to one command. ``status`` is ``None`` when it is not known."""

    def __init__(self, call_id: str, command: str, shell: str) -> None:
        self.call_id = call_id
        self.command = command
        self.shell = shell
        self.mode = "command"  # or "repl": an evaluation in a REPL
        self.status: int | None = None
        self.timed_out: str | None = None  # "idle" or "overall"
        self.own_signal: int | None = None  # a signal tmux-send itself received
        self.signals_sent: list[str] = []
        self.prompt_back = True
        self.shell_exited = False
        self.shell_restarted = False
        self.stdout_bytes = 0
        self.stderr_bytes = 0
        self.duration = 0.0
        self.pane_tail: list[str] = []
        self.notes: list[str] = []
        self.waited_for_input = False


class Relay:
    """One pseudo-terminal the command writes to instead of the pane."""

    def __init__(self, cols: int, rows: int) -> None:
        self.master, self.slave = os.openpty()
        attrs = termios.tcgetattr(self.slave)
        attrs[1] &= ~termios.OPOST  # keep "\n" as "\n" and tabs as tabs
        attrs[3] &= ~(termios.ECHO | termios.ECHONL)  # our acknowledgement is not output
        termios.tcsetattr(self.slave, termios.TCSANOW, attrs)
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class SignalWatch:
    """SIGINT, SIGTERM and SIGHUP to tmux-send, recorded and made pollable.

    While installed, these signals no longer end tmux-send: ``received`` holds the first
    one and ``fd`` becomes readable, so the wait loop can interrupt the command first.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self.fd, self._write_fd = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(self._write_fd, False)
        self._previous_wakeup = signal.set_wakeup_fd(self._write_fd)
        self._previous: dict[int, object] = {}
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum

    def drain(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self.fd, 512):
                pass

    def close(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        signal.set_wakeup_fd(self._previous_wakeup)
        _close(self.fd)
        _close(self._write_fd)


def new_call_id() -> str:
    return os.urandom(5).hex()


def run_command(
    command: bytes,
    options: RunOptions,
    stdout: Sink,
    stderr: Sink,
    notice: Callable[[str], None],
) -> RunResult:
    """Run ``command`` (shell code) in the bridge pane's shell; stream its output.

    ``stdout``/``stderr`` receive the command's output as it arrives (cleaned unless
    ``options.raw``); ``notice`` receives one-line progress notes meant for the agent's
    stderr (waiting for the lock). Returns when the command has finished and the shell
    is back at its prompt, or a timeout ran its course, or tmux-send was signalled.

    Raises :class:`~tmux_bridge.errors.NoBridgeSession`, :class:`PaneNotReady`,
    :class:`RuntimeDirError`, :class:`LockTimeout` before anything was typed, and
    :class:`SessionClosed` when the session vanished mid-command.
    """
    with locked_call(options, notice) as (directory, started, deadline):
        view = panes.find_bridge(session_name())
        pane = view.pane
        check_no_repl(directory, pane)
        kind = procfs.shell_kind(pane.pid)
        readiness.check_ready(pane, kind)
        assert kind is not None
        readiness.check_not_typing(pane, kind, view.screen, directory)
        call = _Call(directory, pane, kind, command, options, (stdout, stderr), notice)
        try:
            call.start()
            call.wait(deadline)
        finally:
            call.close()
        call.result.duration = time.monotonic() - started
        return call.result


@contextlib.contextmanager
def locked_call(
    options: RunOptions, notice: Callable[[str], None]
) -> Iterator[tuple[str, float, float]]:
    """The frame of every call that types into the pane: the runtime directory made or
    checked, the call lock held, leftovers of killed calls swept away. Yields the
    directory, the start time and the ``--max-time`` deadline (``time.monotonic()``)."""
    started = time.monotonic()
    deadline = started + options.max_time
    directory = runtime_dir()
    ensure_private_dir(directory)
    with call_lock(directory, deadline, lambda: notice(_lock_holder_note(directory))):
        sweep_call_files(directory)
        yield directory, started, deadline


def _lock_holder_note(directory: str) -> str:
    try:
        with open(os.path.join(directory, INFLIGHT_FILE), encoding="utf-8", errors="replace") as f:
            pid, since, command = f.read().split("\n", 2)
        age = time.time() - float(since)
        return (
            f"tmux-send: waiting for another tmux-send call to finish "
            f"(pid {pid}, running for {age:.0f} s: {command[:80]!r})"
        )
    except (OSError, ValueError):
        return "tmux-send: waiting for another tmux-send call to finish"


class _Call:
    """The state of one call between typing the line and the end sentinel."""

    def __init__(
        self,
        directory: str,
        pane: panes.PaneInfo,
        kind: ShellKind,
        command: bytes,
        options: RunOptions,
        sinks: tuple[Sink, Sink],
        notice: Callable[[str], None],
    ) -> None:
        self.pane = pane
        self.kind = kind
        self.command = command
        self.options = options
        self.sinks = sinks
        self.notice = notice
        self.call_id = new_call_id()
        self.result = RunResult(self.call_id, command.decode("utf-8", "surrogateescape"), kind)
        self.runner_path = os.path.join(directory, self.call_id + ".run")
        self.command_path = os.path.join(directory, self.call_id + ".cmd")
        self.inflight_path = os.path.join(directory, INFLIGHT_FILE)
        self.relays: list[Relay] = []
        self.scanners: list[SentinelScanner] = []
        self.cleaners = [TerminalText(), TerminalText()]
        self.pane_fd = -1
        self.pane_backlog = bytearray()
        self.pane_ends_in_newline = True
        self.pidfd = -1
        self.signals: SignalWatch | None = None
        self.set_remain_on_exit = pane.remain_on_exit != "on"
        self.typed = False
        self.runner_seen_open = False
        self.runner_closed_at: float | None = None

    # --- setting up ------------------------------------------------------------------

    def start(self) -> None:
        pane = self.pane
        write_private_file(
            self.inflight_path,
            f"{os.getpid()}\n{time.time()}\n{self.result.command}".encode(
                "utf-8", "surrogateescape"
            ),
        )
        self.relays = [Relay(pane.width, pane.height), Relay(pane.width, pane.height)]
        prefix = sentinel_prefix(self.call_id)
        self.scanners = [SentinelScanner(prefix, SENTINEL_END) for _ in self.relays]
        write_private_file(self.command_path, self.command)
        spec = RunnerSpec(
            call_id=self.call_id,
            command_path=self.command_path,
            stdout_tty=self.relays[0].path,
            stderr_tty=self.relays[1].path,
            banner=display_command(self.result.command),
            shell_binary=procfs.shell_executable(pane.pid),
        )
        write_private_file(self.runner_path, runner_script(self.kind, spec).encode())
        try:
            self.pidfd = os.pidfd_open(pane.pid)
        except (OSError, AttributeError):
            self.pidfd = -1  # no pidfd (old kernel): the shell's death is polled instead
        try:
            self.pane_fd = os.open(pane.tty, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            self.pane_fd = -1  # the person will not see the output; the agent still will
        self.signals = SignalWatch()
        keys: list[str] = []
        if pane.in_mode:
            keys += ["copy-mode", "-q", "-t", pane.pane_id, ";"]
        if self.set_remain_on_exit:
            # keeps the pane (and the person's terminal) alive if the command ends the shell
            keys += ["set-option", "-p", "-t", pane.pane_id, "remain-on-exit", "on", ";"]
        line = typed_line(self.kind, self.runner_path)
        keys += [
            "send-keys", "-t", pane.pane_id, "C-e", "C-u", ";",
            "send-keys", "-t", pane.pane_id, "-l", "--", line, ";",
            "send-keys", "-t", pane.pane_id, "Enter",
        ]  # fmt: skip
        run_tmux(*keys)
        self.typed = True

    def _own_signal(self) -> int | None:
        return self.signals.received if self.signals is not None else None

    # --- waiting ---------------------------------------------------------------------

    def wait(self, deadline: float) -> None:
        result = self.result
        options = self.options
        poller = select.poll()
        for relay in self.relays:
            poller.register(relay.master, select.POLLIN)
        if self.pidfd >= 0:
            poller.register(self.pidfd, select.POLLIN)
        assert self.signals is not None
        poller.register(self.signals.fd, select.POLLIN)
        reading = True
        last_output = time.monotonic()
        phase = "running"  # -> "sent-int" -> "sent-quit"
        phase_deadline = 0.0
        input_check = min(INPUT_CHECK, options.idle_timeout / 2)
        next_input_check = last_output + input_check

        while not all(s.seen for s in self.scanners):
            now = time.monotonic()
            if phase == "running" and now >= next_input_check:
                # a command waiting for the person is not idle: the idle timeout waits too
                next_input_check = now + input_check
                if procfs.waiting_for_input(self.pane.pid, self.pane.tty):
                    last_output = now
                    self._announce_waiting()
            if phase == "running":
                if self._own_signal() is not None:
                    phase, phase_deadline = self._interrupt("INT", now)
                elif now >= deadline:
                    result.timed_out = "overall"
                    phase, phase_deadline = self._interrupt("INT", now)
                elif now >= last_output + options.idle_timeout:
                    result.timed_out = "idle"
                    phase, phase_deadline = self._interrupt("INT", now)
            elif now >= phase_deadline:
                if phase == "sent-int":
                    phase, phase_deadline = self._interrupt("QUIT", now)
                else:
                    result.prompt_back = False
                    break
            if phase == "running":
                wake_at = min(deadline, last_output + options.idle_timeout, next_input_check)
            else:
                wake_at = phase_deadline
            if self.pidfd < 0 or self.kind == "posix":
                wake_at = min(wake_at, now + 0.05)  # the shell's state is polled
            want_pane = bool(self.pane_backlog) and self.pane_fd >= 0
            if want_pane:
                poller.register(self.pane_fd, select.POLLOUT)
            if reading and len(self.pane_backlog) > PANE_BACKLOG_LIMIT:
                reading = False
                for relay, scanner in zip(self.relays, self.scanners, strict=True):
                    if not scanner.seen:
                        poller.unregister(relay.master)
            elif not reading and len(self.pane_backlog) <= PANE_BACKLOG_LIMIT // 2:
                reading = True
                for relay, scanner in zip(self.relays, self.scanners, strict=True):
                    if not scanner.seen:
                        poller.register(relay.master, select.POLLIN)
            timeout_ms = max(0, int((wake_at - time.monotonic()) * 1000) + 1)
            events = poller.poll(timeout_ms)
            if want_pane:
                poller.unregister(self.pane_fd)
            shell_gone = False
            for fd, _mask in events:
                if fd == self.signals.fd:
                    self.signals.drain()
                elif fd == self.pidfd:
                    shell_gone = True
                elif fd == self.pane_fd:
                    self._flush_pane(block=False)
                else:
                    index = 0 if fd == self.relays[0].master else 1
                    if self._read_relay(index):
                        last_output = time.monotonic()
                        next_input_check = last_output + input_check
                    if self.scanners[index].seen:
                        poller.unregister(fd)
            if self.pidfd < 0 and procfs.proc_stat(self.pane.pid) is None:
                shell_gone = True
            if shell_gone:
                self._shell_went_away()
                return
            if self.kind == "posix" and self._posix_runner_cut_short():
                result.status = 128 + (signal.SIGQUIT if phase == "sent-quit" else signal.SIGINT)
                result.notes.append(
                    "POSIX sh has no prompt hook: the command was interrupted and its exact "
                    f"status is unknown; {result.status} is assumed."
                )
                break
        self._finish()

    def _announce_waiting(self) -> None:
        """Say once that the command waits for the person, with the prompt it shows."""
        if self.result.waited_for_input:
            return
        self.result.waited_for_input = True
        prompt = panes.cursor_line(self.pane.pane_id).strip()
        self.notice(
            "tmux-send: the command is waiting for input in the bridge terminal"
            + (f": {prompt}" if prompt else "")
            + " (the idle timeout is paused while it waits)"
        )

    def _read_relay(self, index: int) -> bool:
        relay = self.relays[index]
        try:
            data = os.read(relay.master, READ_SIZE)
        except BlockingIOError:
            return False
        except OSError as exc:
            if exc.errno == errno.EIO:
                return False
            raise
        output = self.scanners[index].feed(data)
        if output:
            self._deliver(index, output)
        return True

    def _deliver(self, index: int, output: bytes) -> None:
        if index == 0:
            self.result.stdout_bytes += len(output)
        else:
            self.result.stderr_bytes += len(output)
        if self.pane_fd >= 0:
            self.pane_backlog += output
            self.pane_ends_in_newline = output.endswith(b"\n")
            self._flush_pane(block=False)
        agent = output if self.options.raw else self.cleaners[index].feed(output)
        if agent:
            self.sinks[index](agent)

    def _flush_pane(self, block: bool, limit: float = 2.0) -> None:
        """Copy the backlog into the pane's terminal; with ``block``, wait up to ``limit``
        seconds for tmux to take it all."""
        give_up = time.monotonic() + limit
        while self.pane_backlog and self.pane_fd >= 0:
            try:
                written = os.write(self.pane_fd, self.pane_backlog)
                del self.pane_backlog[:written]
            except BlockingIOError:
                if not block or time.monotonic() >= give_up:
                    return
                select.select([], [self.pane_fd], [], max(give_up - time.monotonic(), 0))
            except OSError:
                self.pane_backlog.clear()
                self.pane_fd = _close(self.pane_fd)

    def _interrupt(self, which: str, now: float) -> tuple[str, float]:
        """Send SIGINT or SIGQUIT to the pane's foreground, as Ctrl-C / Ctrl-\\ would."""
        signum = signal.SIGINT if which == "INT" else signal.SIGQUIT
        key = "C-c" if which == "INT" else "C-\\"
        self.result.signals_sent.append(f"SIG{which}")
        self._tell_person(f"{_reason(self.result, self._own_signal())}: sending SIG{which}")
        stat = procfs.proc_stat(self.pane.pid)
        sent = False
        if stat is not None and stat.tpgid > 0:
            try:
                os.killpg(stat.tpgid, signum)
                sent = True
            except OSError:
                sent = False  # another user's program (sudo): use the key instead
        if not sent:
            run_tmux(
                "copy-mode", "-q", "-t", self.pane.pane_id, ";",
                "send-keys", "-t", self.pane.pane_id, key,
                check=False,
            )  # fmt: skip
        if which == "INT":
            return "sent-int", now + INTERRUPT_GRACE
        return "sent-quit", now + QUIT_GRACE

    def _posix_runner_cut_short(self) -> bool:
        """dash keeps a sourced file open while it runs it and has no prompt hook: the
        runner closed without a sentinel, with the shell holding the terminal, means an
        interrupt cut the line short. Checked every 50 ms."""
        open_now = _has_open(self.pane.pid, self.runner_path)
        if open_now:
            self.runner_seen_open = True
            self.runner_closed_at = None
            return False
        if not self.runner_seen_open:
            return False
        stat = procfs.proc_stat(self.pane.pid)
        if stat is None or stat.tpgid != stat.pgrp:
            return False
        now = time.monotonic()
        if self.runner_closed_at is None:
            self.runner_closed_at = now
        return now - self.runner_closed_at > 0.15

    def _tell_person(self, message: str) -> None:
        if self.pane_fd >= 0:
            lead = b"" if self.pane_ends_in_newline else b"\n"
            self.pane_backlog += lead + f"[tmux-send] {message}\n".encode()
            self.pane_ends_in_newline = True
            self._flush_pane(block=True, limit=0.2)

    # --- ending ----------------------------------------------------------------------

    def _finish(self) -> None:
        """Both sentinels are in (or we gave up): hand the rest over and let the shell go."""
        result = self.result
        for index, scanner in enumerate(self.scanners):
            if scanner.seen:
                kind, _, status = (scanner.body or "").partition(":")
                if status.isdigit():
                    result.status = int(status)
                if kind == SENTINEL_EXIT:
                    result.shell_exited = True
            else:
                self._drain_relay(index)
        self._flush_cleaners()
        if self.pane_fd >= 0 and not self.pane_ends_in_newline:
            self.pane_backlog += b"\n"
            self.pane_ends_in_newline = True
        self._flush_pane(block=True)
        if result.shell_exited:
            self._wait_for_shell_exit()
            return
        with contextlib.suppress(OSError):
            os.write(self.relays[0].master, ACK)
        if not result.prompt_back or result.timed_out or self._own_signal():
            result.pane_tail = panes.screen_tail(self.pane.pane_id)

    def _drain_relay(self, index: int) -> None:
        while self._read_relay(index):
            pass
        leftover = self.scanners[index].leftover()
        if leftover:
            self._deliver(index, leftover)

    def _flush_cleaners(self) -> None:
        if self.options.raw:
            return
        for index, cleaner in enumerate(self.cleaners):
            rest = cleaner.finish()
            if rest:
                self.sinks[index](rest)

    def _wait_for_shell_exit(self) -> None:
        if self.pidfd >= 0:
            select.select([self.pidfd], [], [], 2.0)
        self._shell_went_away()

    def _shell_went_away(self) -> None:
        """The pane's shell process ended: the command ended it, or the session died."""
        for index in (0, 1):
            if not self.scanners[index].seen:
                self._drain_relay(index)
        self._flush_cleaners()
        result = self.result
        result.shell_exited = True
        for scanner in self.scanners:
            kind, _, status = (scanner.body or "").partition(":")
            if kind == SENTINEL_EXIT and status.isdigit():
                result.status = int(status)
        state = _wait_until_dead(self.pane.pane_id)
        if state is None:
            raise SessionClosed()
        if result.status is None:
            result.status = _dead_status(self.pane.pane_id)
        run_tmux("respawn-pane", "-t", self.pane.pane_id, "-c", self.pane.current_path or "~")
        result.shell_restarted = True
        if result.status is None:
            result.notes.append(
                "The command ended the bridge's shell and tmux did not report its exit status."
            )
        ended = "The command ended the bridge's shell" + (
            f" (exit status {result.status})" if result.status is not None else ""
        )
        result.notes.append(
            f"{ended}. A new shell now runs in the same pane, started in "
            f"{self.pane.current_path or 'the home directory'}; the old shell's variables, "
            "functions and other state are gone."
        )

    def close(self) -> None:
        if self.typed and self.set_remain_on_exit:
            run_tmux(
                "set-option", "-p", "-u", "-t", self.pane.pane_id, "remain-on-exit", check=False
            )
        if self.signals is not None:
            self.result.own_signal = self.signals.received
            self.signals.close()
        for fd in (self.pidfd, self.pane_fd):
            _close(fd)
        for relay in self.relays:
            relay.close()
        for path in (self.runner_path, self.command_path, self.inflight_path):
            remove_quietly(path)


def _wait_until_dead(pane_id: str, limit: float = 1.0) -> panes.PaneInfo | None:
    """The pane once tmux has marked it dead; ``None`` when it is gone altogether."""
    give_up = time.monotonic() + limit
    while True:
        state = panes.pane_state(pane_id)
        if state is None or state.dead or time.monotonic() >= give_up:
            return state
        time.sleep(0.005)


def _dead_status(pane_id: str, limit: float = 0.5) -> int | None:
    """The dead pane's exit status from tmux, which sometimes never reports it."""
    give_up = time.monotonic() + limit
    while True:
        result = run_tmux(
            "display-message",
            "-p",
            "-t",
            pane_id,
            "#{pane_dead_status}:#{pane_dead_signal}",
            check=False,
        )
        status, _, signum = result.stdout.strip().partition(":")
        if status.isdigit():
            return int(status)
        if signum.isdigit():
            return 128 + int(signum)
        if time.monotonic() >= give_up:
            return None
        time.sleep(0.01)


def _reason(result: RunResult, own_signal: int | None) -> str:
    if own_signal is not None:
        return f"tmux-send got {signal.Signals(own_signal).name}"
    if result.timed_out == "idle":
        return "idle timeout"
    return "overall timeout"


def _has_open(pid: int, path: str) -> bool:
    """Whether process ``pid`` has ``path`` open (from ``/proc/<pid>/fd``)."""
    directory = f"/proc/{pid}/fd"
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(os.path.join(directory, name)) == path:
                return True
        except OSError:
            continue
    return False


def _close(fd: int) -> int:
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)
    return -1
