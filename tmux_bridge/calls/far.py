"""Shells inside shells: a command run in a far shell the pane's shell started (``ssh``,
``su``, ``sudo -i``, ``docker exec``, a nested ``bash``), as if the agent ran it there.

Nothing of ours exists on the far side, so the call goes through the pane alone: before
anything is typed, the pane's terminal and screen are judged (a password prompt, a
full-screen program, a REPL's prompt are refused); then a one-line probe the far shell
answers (:func:`~tmux_bridge.text.farshell.probe_line`) tells that a shell is at its prompt and
which; then one line runs the command, and its output is cut out of the pane's byte
stream (``tmux pipe-pane``) between markers (:class:`~tmux_bridge.text.farshell.FarScanner`).

Timeouts and the caller's cancellation send Ctrl-C (then Ctrl-\\) through the pane, so
they reach the far side. A shell drops the rest of a line whose command Ctrl-C killed, so
when the far prompt comes back without the end marker a second short line fetches the
status and stderr. Waiting for input can only be seen on the screen: an unfinished line
and silence.
"""

from __future__ import annotations

import re
import select
import termios
import time
from collections.abc import Callable

from ..cancel import Cancel, check_not_cancelled
from ..errors import FarShellLost, PaneBusy, PaneNotAtPrompt, PanePiped
from ..infra.process import proc
from ..infra.relay import close_fd
from ..infra.tmux import Tmux, paste_commands
from ..pane.front import Gateway, prompt_part
from ..pane.info import PaneInfo, cursor_line, cursor_place, screen_tail
from ..pane.readiness import NOT_READY as _NOT_READY
from ..pane.readiness import SLOW_PROMPT_WAIT, check_not_typing_far, split_at_column
from ..pane.records import PaneDir
from ..pane.tap import PaneTap
from ..results import CallRecord
from ..text.farshell import (
    FarFacts,
    FarLook,
    FarScanner,
    Recovery,
    command_lines,
    fixed_pattern,
    fixup_line,
    helpers_lines,
    helpers_pattern,
    parse_probe,
    pieces_pattern,
    probe_line,
    probe_pattern,
    prompt_drawn,
    quiet_lines,
    recovery_line,
    with_helper_facts,
)
from ..text.markers import defined_pattern
from ..text.output import TerminalText
from ..text.shells import ShellKind, display_command
from .clock import CallClock, Step, cancelled, interrupt_reason
from .frame import Notice
from .waiting import PaneCall, Signal

Sink = Callable[[bytes], None]

PROBE_WAIT = 3.0  # seconds for the far shell to answer the probe (a slow link)
PROMPT_SETTLE = 0.5  # seconds at most to let an empty far prompt be drawn after the probe
FAR_PROMPT_POLL = 0.02  # seconds between looks at an empty cursor line after our call
PROMPT_POLL = 0.05  # seconds between looks at the cursor's row while the far prompt is drawn
PROMPT_LOOK = 0.3  # seconds of silence before looking whether the far prompt is back
PROMPT_BACK = 2.0  # seconds at most for the far prompt to come back after a call's end
TYPED_LIMIT = 2000  # characters typed with send-keys; longer text is pasted

_PASSWORD = re.compile(r"(?i)(password|passphrase|passcode|verification code|pin)[^:]*:\s*$")
_QUESTION = re.compile(r"(?i)\((yes/no[^)]*|y/n)\)\??\s*$|\[y/n\]\s*$")
# What ssh itself prints on the pane's terminal as the connection ends: not output.
_GOODBYE = re.compile(
    rb"(Shared c|C)onnection to \S+ closed( by remote host)?\.|client_loop: .*|"
    rb"packet_write_wait: .*|Read from remote host .*|Timeout, server .* not responding\."
)
# The far terminal's echo of Ctrl-C or Ctrl-\\ with the command's output after it on its
# line (a command that caught the signal and printed on): not output. Alone on its line
# it is held back and judged at the end (:meth:`FarCall._drop_interrupt_echo`).
_ECHO_IN_LINE = re.compile(rb"\^[C\\](?=[^\r\n]+\n)")
_REPL = re.compile(r"^(>>>|\.\.\.|In \[\d+\]:|irb\(.*\)|[\w-]+[=-]?[#>]|sqlite>|ghci>|>)\s*$")


def check_far_front(pane: PaneInfo, gateway: Gateway, line: str) -> None:
    """Refuse before typing when what the pane shows is not a far shell's prompt: a
    password or yes/no question, a full-screen program, a REPL's prompt, a nested shell
    of this machine busy with a builtin. ``line`` is the cursor's line on the screen."""
    via = f"`{gateway.name}` runs in it"
    modes = proc.local_modes(pane.tty)
    seen = line.strip()
    if modes is not None and modes & termios.ICANON and not modes & termios.ECHO:
        raise PaneBusy(_NOT_READY + f"{via} and asks for a password (`{seen}`). Ask the person.")
    if _PASSWORD.search(seen) or _QUESTION.search(seen):
        raise PaneBusy(_NOT_READY + f"{via} and asks a question (`{seen}`). Ask the person.")
    if pane.alternate_on:
        raise PaneBusy(_NOT_READY + f"{via}, and a full-screen program is open behind it.")
    if _REPL.match(seen):
        raise PaneNotAtPrompt(
            _NOT_READY + f"{via}, and it shows `{seen}`: a program's prompt, not a shell's."
        )
    if gateway.local_shell and modes is not None and modes & termios.ICANON:
        kind = proc.shell_kind(gateway.pid)
        if kind != "posix":
            raise PaneBusy(_NOT_READY + f"its nested shell (`{gateway.name}`) is busy.")


class FarCall(PaneCall):
    """One call in a far shell: the stream, the probe, the command line, the outcome."""

    def __init__(
        self,
        tmux: Tmux,
        pane: PaneInfo,
        gateway: Gateway,
        record: CallRecord,
        sinks: tuple[Sink, Sink],
        notice: Notice,
        cancel: Cancel | None,
    ) -> None:
        super().__init__(tmux, pane, record, notice, cancel)
        self.gateway = gateway
        self.sinks = sinks
        self.tap = PaneTap(tmux, pane.pane_id)
        self.pidfd = proc.exit_fd(gateway.pid)
        self.scanner = FarScanner(record.call_id)
        self.cleaner = TerminalText()
        self.prompt = ""
        self.recovered = False
        self.discard = False  # the rest up to the end marker is not the command's output
        self.held = b""  # output held back: the unfinished last line
        self.gone = False
        self.waiter = "the command"  # what may wait for input, for the notice
        self.kind: ShellKind = "bash"  # the far shell's, once :meth:`wait` knows it
        self.look_at = 0.0  # when to look at the pane next, after a silence
        self.records: PaneDir | None = None  # the pane's directory (:func:`run_far`)
        self.detached = False  # the call became a job (``on_timeout`` "detach")
        self.echo_at: tuple[int, int] | None = None  # the cursor at the first Ctrl-C
        self.echoes = 0  # Ctrl-C (or Ctrl-\\) sent whose echo has not been seen in the output
        self.transcript = (  # how the clean transcript shows the call; None: the plumbing shows
            None
            if record.options.verbose_transcript or pane.transcript == "verbose"
            else FarLook(
                pane.cursor_x, pane.width, display_command(record.command, record.options.agent)
            )
        )

    # --- the probe -------------------------------------------------------------------

    def probe(self, deadline: float, prompt: str) -> FarFacts:
        """Open the stream, type the probe, read its answer; raise :class:`PaneNotAtPrompt`
        when none comes (what is in front is not a shell at its prompt). ``prompt`` is
        the far prompt as it shows now (left of the cursor)."""
        pane_id = self.pane.pane_id
        self.prompt = prompt
        line = probe_line(self.record.call_id, self.transcript)
        self.open_stream(
            ["send-keys", "-t", pane_id, "-l", "--", line],
            ["send-keys", "-t", pane_id, "Enter"],
        )
        pattern = probe_pattern(self.record.call_id)
        until = min(deadline, time.monotonic() + PROBE_WAIT)
        data = self.read_until(lambda d: pattern.search(d) is not None, until)
        match = pattern.search(data)
        if match is None:
            seen = cursor_line(self.tmux, pane_id).strip()
            raise PaneNotAtPrompt(
                _NOT_READY + f"`{self.gateway.name}` runs in it and what it shows "
                f"(`{seen or self.prompt}`) did not answer as a shell at its prompt would. "
                "The probe line typed there is harmless; ask the person to bring a shell "
                "prompt back."
            )
        self._settle(data[match.end() :])
        facts = parse_probe(match.group(1))
        return facts if facts.helpers else self._define(facts, deadline)

    def open_stream(self, *then: list[str]) -> None:
        """Point the pane's stream at our FIFO, then run the tmux commands ``then``."""
        pane_id = self.pane.pane_id
        check_not_cancelled(self.cancel)
        commands = [["copy-mode", "-q", "-t", pane_id]] if self.pane.in_mode else []
        self.tap.open(commands, list(then))

    def _settle(self, after: bytes) -> None:
        """Let the far prompt be drawn again before typing on. The lines this follows
        (the probe, the helper lines, the fix-up) leave the cursor at the start of an
        empty row; until the prompt shows there, the shell may still be ending the line
        (zsh's PROMPT_SP mark, then its precmd; bash's PROMPT_COMMAND; a slow prompt)
        with the terminal's echo on, and a line typed then would show twice: echoed by
        the terminal, then drawn by the line editor (the copy its erasure counts). Line
        editors set their terminal mode before they draw the prompt: the prompt seen in
        the stream (``after``: what came after the answer), or after a silence any text
        left of the cursor, means the next line is read by the editor. With no prompt
        seen before the call (an empty one), :data:`PROMPT_SETTLE` s at most."""
        until = time.monotonic() + (PROMPT_BACK if self.prompt else PROMPT_SETTLE)
        while not prompt_drawn(after, self.prompt):
            if self.gone or time.monotonic() >= until:
                return
            more = self.read_until(bool, min(until, time.monotonic() + PROMPT_POLL))
            if not more and prompt_part(self.tmux, self.pane.pane_id):
                return
            after += more

    def _define(self, facts: FarFacts, deadline: float) -> FarFacts:
        """Define our helper functions in the far shell (once per far shell), a line at
        a time, each typed once the one before answered."""
        lines = helpers_lines(facts.shell, self.record.call_id, self.transcript)
        for line in lines[:-1]:
            self._answered(line, defined_pattern(self.record.call_id), deadline, facts.shell)
        pattern = helpers_pattern(self.record.call_id)
        answer = self._answered(lines[-1], pattern, deadline, facts.shell)
        return with_helper_facts(facts, answer.group(1))

    def _answered(
        self, line: str, pattern: re.Pattern[bytes], deadline: float, shell: ShellKind
    ) -> re.Match[bytes]:
        """Type ``line`` and read until the far shell's answer (``pattern``) came."""
        self._type(line)
        until = min(deadline, time.monotonic() + PROBE_WAIT)
        data = self.read_until(lambda d: pattern.search(d) is not None, until)
        match = pattern.search(data)
        if match is None:
            raise PaneNotAtPrompt(
                _NOT_READY + f"the far {shell} shell behind `{self.gateway.name}` did not "
                "define tmux-send's helper functions; ask the person to look at the pane."
            )
        self._settle(data[match.end() :])
        return match

    def read_until(self, done: Callable[[bytes], bool], until: float) -> bytes:
        """What the stream brings until ``done`` says so of it, ``until`` or the
        gateway's exit (then :attr:`gone`)."""
        if self.gone:
            return b""
        data = self.tap.read_until(done, until, self.pidfd)
        if self.pidfd >= 0 and select.select([self.pidfd], [], [], 0)[0]:
            self.gone = True
        return data

    # --- the command -----------------------------------------------------------------

    def run(self, facts: FarFacts, command: bytes, deadline: float) -> None:
        """Type the command line and read until the far shell has printed its stderr
        end marker, a timeout ran its course, or the gateway went away."""
        quiet = quiet_lines(facts.shell, self.record.call_id, command, self.transcript)
        if quiet is None:
            self._type(*command_lines(facts.shell, self.record.call_id, command, self.transcript))
        else:
            self._type_quietly(*quiet, deadline)
        self.wait(facts.shell, deadline)

    def _type_quietly(self, line: str, pieces: list[str], deadline: float) -> None:
        """Type the line that reads a long command's pieces with the far terminal's echo
        off, and paste the pieces once it says it reads them (:func:`quiet_lines`):
        nothing of them shows. Without its answer nothing is pasted (the pieces typed at a
        prompt would run) and Ctrl-C ends the line, which may have left the echo off."""
        self._type(line)
        pattern = pieces_pattern(self.record.call_id)
        until = min(deadline, time.monotonic() + PROBE_WAIT)
        if pattern.search(self.read_until(lambda d: pattern.search(d) is not None, until)):
            self._type(*pieces)
            return
        self.interrupt("INT")
        raise PaneNotAtPrompt(
            _NOT_READY + f"the far shell behind `{self.gateway.name}` did not "
            "answer the line that reads a long command (nothing of the command ran); "
            "it was stopped with Ctrl-C, and may have left the far terminal's echo off: "
            "ask the person to look at the pane (`stty echo` turns it on)."
        )

    def wait(self, kind: ShellKind, deadline: float) -> None:
        """Read until the end marker's stderr end, a timeout ran its course, or the
        gateway went away (what :meth:`run` does once the line is typed)."""
        self.kind = kind
        self.look_at = time.monotonic() + PROMPT_LOOK
        ending = self.wait_loop(deadline)
        if ending == "detached":  # a job's keeper holds the call now
            return
        if ending == "gone":
            self._lost()
            return
        self._finish()

    def over(self, clock: CallClock) -> str | None:
        return "ended" if self.scanner.done or self.ready() else None

    def look(self, clock: CallClock, now: float) -> None:
        """After :data:`PROMPT_LOOK` s of silence, look at the pane (:meth:`_look`)."""
        clock.input_check_due(now)  # keeps the clock's wake-up ahead (looks are ours)
        if now >= self.look_at:
            self.look_at = now + PROMPT_LOOK
            self._look(self.kind, clock)

    def wait_for_events(self, clock: CallClock) -> str | None:
        if self._poll(clock):
            now = time.monotonic()
            clock.saw_output(now)
            self.look_at = now + PROMPT_LOOK
            return None
        return "gone" if self.gone else None

    def take(self, step: Step, clock: CallClock, now: float) -> str | None:
        """The clock's step; at a timeout with ``on_timeout`` "detach", the far command
        runs on as a job instead of being interrupted."""
        if step == "interrupt" and self._detach():
            return "detached"
        return super().take(step, clock, now)

    def _detach(self) -> bool:
        """A timeout with ``on_timeout`` "detach": a keeper forked from here holds the
        call (:mod:`tmux_bridge.calls.keeper`), reading the pane's stream on; True when
        it does."""
        record = self.record
        if record.options.on_timeout != "detach" or self.records is None:
            return False
        if cancelled(record, self.cancel):
            return False
        from .keeper import detach

        self.detached = detach(KeptFarCall(self, self.records)) is not None
        return self.detached

    def ready(self) -> bool:
        """Whether the call is done before any end marker (a REPL's prompt showing)."""
        return False

    def _type(self, *lines: str) -> None:
        """Type ``lines``, each with Enter; long text goes through a paste buffer (tmux
        refuses a long command), pasted without bracketed-paste marks, as if typed."""
        pane_id = self.pane.pane_id
        text = "\n".join(lines)
        if len(text) <= TYPED_LIMIT:
            self.tmux.run_all(
                ["send-keys", "-t", pane_id, "-l", "--", text],
                ["send-keys", "-t", pane_id, "Enter"],
            )
            return
        load, paste = paste_commands(f"tmux-send-{self.record.call_id}", pane_id, bracketed=False)
        self.tmux.run(*load, stdin=text.encode())
        self.tmux.run_all(
            paste,
            ["send-keys", "-t", pane_id, "Enter"],
        )

    def _poll(self, clock: CallClock) -> bool:
        """Wait for the stream, the gateway's exit, a cancellation or the next look;
        whether output came."""
        poller = select.poll()
        poller.register(self.tap.fd, select.POLLIN)
        if self.pidfd >= 0:
            poller.register(self.pidfd, select.POLLIN)
        if self.cancel is not None and self.record.cancelled is None:
            poller.register(self.cancel.fd, select.POLLIN)
        got = False
        for fd, _mask in poller.poll(clock.poll_ms(time.monotonic(), PROMPT_LOOK)):
            if fd == self.pidfd:
                self.gone = True
        while (chunk := self.tap.read()) is not None:
            got = True
            self._feed(chunk)
        return got

    def _feed(self, chunk: bytes) -> None:
        out = self.scanner.feed(chunk)
        if out:
            self._deliver(out)

    def _deliver(self, out: bytes) -> None:
        """Hand on whole lines; hold the unfinished last line (it may be the far prompt
        after a Ctrl-C) and a line ending in the terminal's ``^C`` echo."""
        if self.discard:
            return
        self.held += out
        if self.echoes:  # the terminal's echo of our Ctrl-C, output after it on its line
            self.held, found = _ECHO_IN_LINE.subn(b"", self.held, count=1)
            self.echoes -= found
        cut = self.held.rfind(b"\n") + 1
        start = self.held.rfind(b"\n", 0, max(cut - 1, 0)) + 1
        last = self.held[start:cut].rstrip(b"\r\n")
        if cut and (last.endswith(b"^C") or _GOODBYE.match(last)):
            cut = start
        self._emit(self.held[:cut])
        self.held = self.held[cut:]

    def _drop_interrupt_echo(self) -> None:
        """The far terminal's echo of Ctrl-C (or Ctrl-\\) at the end of what is held: not
        the command's output (a shell that goes on with the line after a killed command,
        as fish does, prints its end marker after it)."""
        for echo in (b"^C", b"^\\"):
            at = self.held.rfind(echo)
            if at >= 0 and not self.held[at + 2 :].strip():
                self.held = self.held[:at]

    def _release(self) -> None:
        held, self.held = self.held, b""
        self._emit(held)

    def _emit(self, out: bytes) -> None:
        if not out:
            return
        self.record.stdout_bytes += len(out)
        text = out if self.record.options.raw else self.cleaner.feed(out)
        if text:
            self.sinks[0](text)

    def _recover(self, kind: ShellKind) -> None:
        """The far prompt is back without the end marker: what is held is the
        terminal's ``^C`` and the prompt, less what the command printed before them; the
        recovery line's echo is not output either."""
        held = self.held
        at = held.find(b"^C")
        self.held = held[:at] if at >= 0 else held[: held.rfind(b"\n") + 1]
        self._release()
        self.discard = True
        self.recovered = True
        self._type(recovery_line(kind, self._recovery()))

    def _recovery(self) -> Recovery | None:
        """How the clean transcript's recovery line erases itself, the far prompt and
        the ``^C`` echoed above it, and what its status line says (none: the plumbing)."""
        if self.transcript is None:
            return None
        record = self.record
        interrupted = record.timed_out is not None or record.cancelled is not None
        why = interrupt_reason(record) if interrupted else ""
        now = _cursor(self.tmux, self.pane.pane_id)
        if now is None:
            return Recovery(self.transcript.cursor_x, self.transcript.width, None, why)
        row, column = now
        echo = None
        if self.echo_at is not None and 0 <= row - self.echo_at[0] <= MAX_ECHO_ROWS:
            echo = (row - self.echo_at[0], self.echo_at[1])
        return Recovery(column, self.transcript.width, echo, why)

    def _look(self, kind: ShellKind, clock: CallClock) -> None:
        """Silence: the far prompt back without the end marker (Ctrl-C, ours or the
        person's, dropped the rest of the line) fetches the status; an unfinished line
        of output means the command waits for input."""
        if self.scanner.ended or self.recovered:
            return
        self._deliver(self.scanner.release_line_end())
        line = prompt_part(self.tmux, self.pane.pane_id)
        prompt = self.prompt
        if (
            self.scanner.started
            and line == prompt
            and prompt
            and self.tap.ends_as_shown(lambda text: prompt in text)
        ):
            self._recover(kind)
            return
        pending = self.held.strip()
        if not clock.running or not pending:
            self._release()
        elif self.scanner.started and line.strip():
            clock.hold_idle(time.monotonic())
            if not self.record.waited_for_input:
                self.record.waited_for_input = True
                self.record.input_detected_by = "screen"
                self.notice(
                    f"tmux-send: {self.waiter} seems to wait for input in the bridge terminal "
                    f"(an unfinished line on the screen: {line.strip()}; the idle timeout "
                    "is paused)"
                )

    def interrupt(self, which: Signal) -> None:
        """Ctrl-C (or Ctrl-\\) typed into the pane: it reaches the far terminal, whose
        line discipline signals the far command (no signal of ours can cross ssh)."""
        pane_id = self.pane.pane_id
        result = self.tmux.run_all(
            ["copy-mode", "-q", "-t", pane_id],
            ["display-message", "-p", "-t", pane_id, _CURSOR],
            ["send-keys", "-t", pane_id, "C-c" if which == "INT" else "C-\\"],
            check=False,
        )
        self.echoes += 1
        if which == "INT" and self.echo_at is None:  # where the terminal echoes ^C
            self.echo_at = _parse_cursor(result.stdout)

    # --- ending ----------------------------------------------------------------------

    def _lost(self) -> None:
        """The gateway exited: read what is left; a far shell that printed its exit
        status ended as asked (``exit 3``), any other way is a lost connection."""
        self.tap.drain(self._feed, lambda: self.scanner.done)
        if self.scanner.ended:
            self._finish()
            return
        rest = self.scanner.flush()
        if rest:
            self._deliver(rest)
        self.held = self.held[: self.held.rfind(b"\n") + 1]  # the local shell's prompt
        lines = self.held.splitlines(keepends=True)
        self.held = b"".join(line for line in lines if not _GOODBYE.match(line.rstrip()))
        self._release()
        self._flush_cleaner()
        raise FarShellLost(
            f"the far shell behind `{self.gateway.name}` went away while the command ran "
            "(the connection dropped or the far side was killed); its output until then "
            "was printed, its status is unknown. The pane is back at its own shell."
        )

    def _finish(self) -> None:
        record = self.record
        if not self.scanner.ended:
            rest = self.scanner.flush()
            if rest:
                self._deliver(rest)
        record.status = self.scanner.status
        if record.signals_sent or record.status in (130, 131):
            self._drop_interrupt_echo()
        self._release()
        self._flush_cleaner()
        if self.scanner.stderr:
            record.stderr_bytes = len(self.scanner.stderr)
            self.sinks[1](self.scanner.stderr)
        if self.scanner.shell_ended:
            record.shell_exited = True
            record.notes.append(
                f"the command ended the far shell (behind `{self.gateway.name}`) with status "
                f"{record.status}; the pane is back at the shell that started it."
            )
        self._fix_transcript()
        if not record.prompt_back or record.timed_out or cancelled(self.record, self.cancel):
            record.pane_tail = screen_tail(self.tmux, self.pane.pane_id)

    def _fix_transcript(self) -> None:
        """The end marker came after tmux-send's interrupt (fish goes on with the line; a
        command caught Ctrl-C and exited): once the far prompt is back, the line that
        deletes the ``^C``, replaces ``[exit N]`` by the reason and erases itself
        (:func:`~tmux_bridge.text.farshell.fixup_line`). Nothing else changes: without
        the prompt, or with ``[exit N]`` not right above it (a prompt of several lines),
        the transcript keeps the ``^C`` and ``[exit N]``."""
        record = self.record
        if self.transcript is None or self.recovered or not record.signals_sent:
            return
        if not self.scanner.done or self.scanner.shell_ended or not self._prompt_back():
            return
        after = self._recovery()
        failed = record.status not in (0, None)
        if after is None or not after.why or (failed and not self._shows(1, 0, "[exit ")):
            return
        if after.echo is not None and not self._shows(*after.echo, "^C"):
            after = after._replace(echo=None)
        self._type(fixup_line(record.call_id, after, failed))
        pattern = fixed_pattern(record.call_id)
        until = time.monotonic() + PROBE_WAIT
        data = self.read_until(lambda d: pattern.search(d) is not None, until)
        match = pattern.search(data)
        if match is not None:
            self._settle(data[match.end() :])

    def _prompt_back(self) -> bool:
        """Whether the far prompt is drawn again (within :data:`PROMPT_BACK` s): the
        prompt seen before, or, after :data:`PROMPT_LOOK` s of silence, any text left of
        the cursor (a prompt that changed: the command's ``cd``, a clock)."""
        until = time.monotonic() + PROMPT_BACK
        while True:
            line = prompt_part(self.tmux, self.pane.pane_id)
            if line and line == self.prompt:
                return True
            if self.gone or time.monotonic() >= until:
                return False
            if not self.read_until(bool, min(until, time.monotonic() + PROMPT_LOOK)) and line:
                return True

    def _shows(self, rows: int, column: int, text: str) -> bool:
        """Whether the row ``rows`` above the cursor's shows ``text`` at ``column``."""
        result = self.tmux.run(
            "display-message", "-p", "-t", self.pane.pane_id, "#{cursor_y}", check=False
        )
        if not result.stdout.strip().isdigit():
            return False
        row = int(result.stdout) - rows
        line = self.tmux.run(
            "capture-pane",
            "-p",
            "-t",
            self.pane.pane_id,
            "-S",
            str(row),
            "-E",
            str(row),
            check=False,
        ).stdout
        return line[column : column + len(text)] == text

    def _flush_cleaner(self) -> None:
        if not self.record.options.raw:
            rest = self.cleaner.finish()
            if rest:
                self.sinks[0](rest)

    def close(self) -> None:
        """Let the pane's stream go and close what is ours (a call that became a job
        only closes its descriptors: its keeper reads the stream on)."""
        if self.detached:
            self.tap.forget()
        else:
            self.tap.close()
            cancelled(self.record, self.cancel)
        self.pidfd = close_fd(self.pidfd)


# The cursor's place: its row counted from the top of the history, its column; a
# history at its limit drops its oldest lines as new ones come, so rows do not count.
_CURSOR = "#{cursor_y} #{cursor_x} #{history_size} #{history_limit}"
MAX_ECHO_ROWS = 3  # rows at most between the ^C echo and the far prompt (shell's own)


def _parse_cursor(text: str) -> tuple[int, int] | None:
    fields = text.split()
    if len(fields) != 4 or not all(field.isdigit() for field in fields):
        return None
    row, column, history, limit = map(int, fields)
    return (row + history, column) if history < limit else None


def _cursor(tmux: Tmux, pane_id: str) -> tuple[int, int] | None:
    """The cursor's place (:data:`_CURSOR`), None when rows do not count."""
    result = tmux.run("display-message", "-p", "-t", pane_id, _CURSOR, check=False)
    return _parse_cursor(result.stdout)


class KeptFarCall:
    """A far call that timed out, as a job's keeper holds it (the keeper's
    :class:`~tmux_bridge.calls.keeper.LiveCall`): the command line was typed already."""

    def __init__(self, call: FarCall, records: PaneDir) -> None:
        self.call = call
        self.tmux = call.tmux
        self.records = records
        self.record = call.record
        self.end_row = -1  # where the call ended is not known to a far call

    @property
    def sinks(self) -> tuple[Sink, Sink]:
        return self.call.sinks

    @sinks.setter
    def sinks(self, sinks: tuple[Sink, Sink]) -> None:
        self.call.sinks = sinks

    @property
    def notice(self) -> Notice:
        return self.call.notice

    @notice.setter
    def notice(self, notice: Notice) -> None:
        self.call.notice = notice

    def start(self) -> None:
        raise AssertionError("a kept far call was typed already")

    def wait(self, deadline: float) -> None:
        self.call.wait(self.call.kind, deadline)

    def close(self) -> None:
        self.call.close()

    def back_at_prompt(self) -> bool:
        return self.record.prompt_back and not self.record.shell_exited


def check_far_ready(
    tmux: Tmux,
    pane: PaneInfo,
    gateway: Gateway,
    records: PaneDir,
    screen: list[str] | None = None,
    until: float = 0.0,
    cancel: Cancel | None = None,
) -> tuple[str, PaneInfo]:
    """Refuse, before typing, a far shell that is not ready (as :func:`run_far` does);
    the far prompt as it shows (left of the cursor) when it is, and ``pane`` with the
    cursor's column where the prompt leaves it. An empty cursor line
    right after a call of ours through ``gateway`` (no key pressed since) is the far
    shell still drawing its prompt (zsh's precmd, bash's PROMPT_COMMAND, a slow
    prompt): it is waited for until ``until`` (monotonic) and :data:`SLOW_PROMPT_WAIT`."""
    if pane.piped and not pane.watched:
        raise PanePiped(
            _NOT_READY + f"`{gateway.name}` runs in it, and a far shell is read through "
            "`tmux pipe-pane`, but the pane already has one open (a logging plugin?); "
            "close the other first."
        )
    if screen is not None and pane.cursor_y < len(screen):  # came with the pane's lookup
        line, column = screen[pane.cursor_y].rstrip(), pane.cursor_x
    else:
        line, column = cursor_place(tmux, pane.pane_id)
    check_far_front(pane, gateway, line)
    left = split_at_column(line, column)[0] if column >= 0 else line
    if not left.strip() and _ours_last(pane, gateway, records):
        until = min(until, time.monotonic() + SLOW_PROMPT_WAIT)
        while not left.strip() and time.monotonic() < until:
            check_not_cancelled(cancel)
            time.sleep(FAR_PROMPT_POLL)
            line, column = cursor_place(tmux, pane.pane_id)
            left = split_at_column(line, column)[0] if column >= 0 else line
        check_far_front(pane, gateway, line)
        pane = pane._replace(cursor_x=column)
    check_not_typing_far(left, gateway.name, gateway.pid, records)
    return left, pane


def _ours_last(pane: PaneInfo, gateway: Gateway, records: PaneDir) -> bool:
    """Whether the pane is as the last far call through ``gateway`` left it back at the
    far prompt, with no key pressed since."""
    memory = records.read_prompt()
    return bool(memory.far_known(gateway.pid)) and memory.quiet_since_last_call(pane.keys_at)


def run_far(
    tmux: Tmux,
    pane: PaneInfo,
    gateway: Gateway,
    command: Callable[[FarFacts], bytes],
    record: CallRecord,
    deadline: float,
    io: tuple[Sink, Sink, Notice, Cancel | None],
    records: PaneDir,
    screen: list[str] | None = None,
    make_call: Callable[..., FarCall] = FarCall,
) -> FarFacts:
    """Run the command ``command`` gives for the far shell's kind in the far shell in
    front of ``pane``; the outcome is filled into ``record``. Raises
    :class:`PaneBusy` / :class:`PaneNotAtPrompt` before the command is typed (the probe
    may have been), :class:`FarShellLost` when the far side goes away mid-command.
    ``screen`` is the pane's screen when it came with the pane's lookup; ``make_call``
    makes the call (a subclass types something else than a command: a REPL's start)."""
    left, pane = check_far_ready(tmux, pane, gateway, records, screen, deadline, io[3])
    out, err, notice, cancel = io
    call = make_call(tmux, pane, gateway, record, (out, err), notice, cancel)
    call.records = records
    try:
        facts = call.probe(deadline, left.rstrip())
        record.shell = facts.shell
        record.far = facts.document(gateway.name, gateway.pid)
        if not facts.tmp_writable:
            record.stderr_merged = True
            record.notes.append(
                "the far shell could not make its private temporary directory (no mktemp, "
                "or its temporary directory is read-only): stderr is merged into stdout."
            )
        records.remember_far_prompt(gateway.pid, left.rstrip())
        call.run(facts, command(facts), deadline)
    finally:
        call.close()
    return facts
