"""REPL sessions in a pane: starting one, evaluating code in it, closing it.

Output is read from the pane's own stream between markers the REPL prints (see
:mod:`tmux_bridge.calls.stream` and :mod:`tmux_bridge.text.presets`). Which REPL tmux-send
started is remembered per pane (:mod:`tmux_bridge.pane.records`) and checked against the
pane: the REPL must still be the program in front.
"""

from __future__ import annotations

import re
import select
import time
from collections.abc import Callable

from ..cancel import Cancel, check_not_cancelled
from ..errors import (
    EXIT_FAILURE,
    InvalidRequest,
    PaneBusy,
    PaneNotReady,
    PanePiped,
    ReplError,
    ReplMismatch,
    ReplNotOpen,
)
from ..infra.patterns import compile_pattern
from ..infra.process import proc
from ..infra.relay import close_fd
from ..infra.tmux import Tmux, paste_commands
from ..pane import readiness
from ..pane.front import FarShell, OpenRepl, check_local_repl_ready, far_repl_drawn
from ..pane.info import screen_tail
from ..pane.records import ReplRecord
from ..results import CallRecord, RunOptions
from ..target import Target
from ..text.echo import after_echo, echo_prompt, prompt_after_echo, without_echo
from ..text.markers import end_pattern, end_prefix, start_marker
from ..text.output import MarkerScanner, PassThrough
from ..text.presets import (
    STOPS_SHORT,
    Look,
    Preset,
    describe_presets,
    find_preset,
    plan_eval,
)
from ..text.shells import (
    LINE_EDITOR_RESET,
    RunnerSpec,
    ShellKind,
    display_command,
    runner_script,
    scratch_path,
    typed_erasure,
    typed_line,
)
from ..tuples import NamedTuple
from .frame import CallFrame, Notice, ReplContext, pane_call
from .stream import PaneStream

Sink = Callable[[bytes], None]

REPL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,32}")
PROMPT = "the prompt"  # what a prompt pattern is called in its errors


class ReplRequest(NamedTuple):
    """Which REPL: a preset name, or any name with ``prompt`` (a regex for its prompt
    line) for a REPL without a preset, whose code may be typed through ``template``
    (``{code}`` replaced)."""

    name: str
    prompt: str | None = None
    template: str | None = None


def preset_for(request: ReplRequest) -> Preset:
    """The preset a request names, or one made from its prompt; raises
    :class:`InvalidRequest` for a bad name or regex, :class:`ReplError` for no preset."""
    if not REPL_NAME.fullmatch(request.name):
        raise InvalidRequest(
            f"{request.name!r} is not a REPL name: use 1 to 32 letters, digits, '_', '.' or '-'."
        )
    if request.template is not None and request.prompt is None:
        raise InvalidRequest("an evaluation template goes with a prompt (a REPL without a preset).")
    if request.prompt is not None:
        compile_pattern(request.prompt, PROMPT)  # bounded and valid, or refused now
        return Preset(request.name, (), request.prompt, "", None)
    preset = find_preset(request.name)
    if preset is None:
        raise ReplError(
            f"no REPL preset is called {request.name!r}. Presets:\n{describe_presets()}\n"
            "For another REPL, give a regular expression for its prompt.",
            wanted=request.name,
        )
    return preset


UNNAMED = "repl"  # the name of a REPL asked for by its prompt alone (the seed tool's way)


def _as_recorded(request: ReplRequest, frame: CallFrame | None) -> ReplRequest:
    """``request`` completed from the REPL record of the pane (``frame``; None before
    the pane is held, when only the request itself can be checked): no name means the
    REPL tmux-send started there (else :data:`UNNAMED`); a name with no preset and no
    prompt takes the prompt it was started with."""
    front = frame.front if frame is not None else None
    record = front.record if isinstance(front, OpenRepl) else getattr(front, "gone", None)
    recorded = record if isinstance(record, ReplRecord) else None
    name = request.name or (recorded.name if recorded else UNNAMED)
    request = request._replace(name=name)
    if (
        request.prompt is None
        and recorded is not None
        and recorded.name == name
        and find_preset(name) is None
    ):
        request = request._replace(prompt=recorded.prompt_re)
    elif request.prompt is None and frame is None and find_preset(name) is None:
        request = request._replace(prompt="")  # checked again once the pane is held
    return request


# --- the requests --------------------------------------------------------------------------


def run_repl(
    target: Target,
    request: ReplRequest,
    text: bytes,
    options: RunOptions,
    stdout: Sink,
    notice: Notice,
    cancel: Cancel | None,
) -> CallRecord:
    """Start the REPL with shell command ``text`` when none is open, else evaluate
    ``text`` in it (what ``tmux-send --repl NAME`` does), under one lock."""
    if request.name:
        preset_for(_as_recorded(request, None))  # a bad name or regex: refused unlocked
    with pane_call(target, options, cancel, notice) as frame:
        preset = preset_for(_as_recorded(request, frame))
        repl = _open_repl(frame, preset, target.tmux, cancel)
        call = _ReplCall(target.tmux, frame, frame.view.pane, options, stdout, notice, cancel)
        if repl is not None:
            return call.evaluate(preset, repl, text, request.template)
        return call.start(preset, text)


def start_repl(
    target: Target,
    request: ReplRequest,
    command: bytes,
    options: RunOptions,
    stdout: Sink,
    notice: Notice,
    cancel: Cancel | None,
) -> CallRecord:
    """Start a REPL with shell command ``command``; done when its prompt shows. Raises
    :class:`ReplMismatch` when a REPL tmux-send started is open already."""
    preset = preset_for(request)
    with pane_call(target, options, cancel, notice) as frame:
        repl = _open_repl(frame, preset, target.tmux, cancel)
        if repl is not None:
            name = repl.record.name
            raise ReplMismatch(f"a {name} REPL is open already; evaluate code in it.", repl=name)
        return _ReplCall(
            target.tmux, frame, frame.view.pane, options, stdout, notice, cancel
        ).start(preset, command)


def evaluate(
    target: Target,
    request: ReplRequest,
    code: bytes,
    options: RunOptions,
    stdout: Sink,
    notice: Notice,
    cancel: Cancel | None,
) -> CallRecord:
    """Evaluate ``code`` in the open REPL. Raises :class:`ReplNotOpen` when none is."""
    preset_for(_as_recorded(request, None))
    with pane_call(target, options, cancel, notice) as frame:
        preset = preset_for(_as_recorded(request, frame))
        repl = _open_repl(frame, preset, target.tmux, cancel)
        if repl is None:
            raise ReplNotOpen(
                f"no {preset.name} REPL is open in the bridge terminal; start it first.",
                wanted=preset.name,
            )
        call = _ReplCall(target.tmux, frame, frame.view.pane, options, stdout, notice, cancel)
        return call.evaluate(preset, repl, code, request.template)


def close_repl(
    target: Target, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> CallRecord:
    """Quit the REPL tmux-send started, the way it expects, and wait for the shell's
    prompt. With no REPL open nothing is typed (status 0, a note says so)."""
    with pane_call(target, options, cancel, notice) as frame:
        pane = frame.view.pane
        front = frame.front
        if not isinstance(front, OpenRepl):
            state = front.gone
            frame.records.clear_repl()
            record = CallRecord("repl_close", "", pane, options)
            record.status = 0
            record.notes.append(
                "No REPL is open; nothing was changed."
                if state is None
                else f"The {state.name} REPL is no longer running; nothing was changed."
            )
            return record
        if front.refusal is not None:
            raise front.refusal
        call = _ReplCall(
            target.tmux, frame, frame.view.pane, options, lambda _data: None, notice, cancel
        )
        record = call.close(front)
        frame.records.clear_repl()
        return record


def _open_repl(
    frame: CallFrame, preset: Preset, tmux: Tmux, cancel: Cancel | None
) -> OpenRepl | None:
    """The REPL tmux-send started that is still in front, checked against ``preset``;
    a stale record is forgotten. Refuses a pane with a pipe of its own, unless it is
    the live view's watch (which re-arms its pipe after the call and resyncs), and a far
    REPL whose line shows something else (its prompt given a moment to come)."""
    pane = frame.view.pane
    if pane.piped and not pane.watched:
        raise PanePiped(
            "the bridge pane already has a `tmux pipe-pane` open (a logging plugin?). "
            "REPL mode reads the pane's output through one; close the other first."
        )
    front = frame.front
    if isinstance(front, OpenRepl):
        refusal = front.refusal
        if refusal is not None and not (
            isinstance(refusal, PaneBusy) and far_repl_drawn(tmux, front.record, pane, cancel)
        ):
            raise refusal
        name = front.record.name
        if name != preset.name:
            raise ReplMismatch(
                f"the open REPL is {name}, not {preset.name}; use it, or close it first.",
                repl=name,
                wanted=preset.name,
            )
        return front
    state = front.gone
    if state is not None:  # a REPL record no longer in front
        frame.records.clear_repl()
        if state.name == preset.name:
            raise ReplNotOpen(
                f"the {state.name} REPL tmux-send started is no longer running in the "
                "bridge terminal (the person may have quit it). Start it again.",
                repl=state.name,
                wanted=preset.name,
            )
    return None


class _ReplCall(ReplContext):
    """One REPL request on a held pane."""

    def _stream(self, record: CallRecord) -> PaneStream:
        return PaneStream(self.tmux, self.pane, record, self.stdout, self.notice, self.cancel)

    # --- start ---------------------------------------------------------------------------

    def start(self, preset: Preset, command: bytes) -> CallRecord:
        """Type the start command into the shell; done when the REPL's prompt shows.
        The shell must be at its prompt with nothing typed, as for any command; a far
        shell in front (ssh, su ...) gets the REPL (:mod:`tmux_bridge.calls.farrepl`)."""
        front = self.frame.front
        if isinstance(front, FarShell):
            from .farrepl import start_far

            return start_far(self, front.gateway, preset, command)
        kind, pane = readiness.ready_shell(
            self.tmux, self.frame.view, self.records, self.frame.deadline, self.cancel
        )
        self.pane = pane
        record = self.record("repl_start", command.decode("utf-8", "surrogateescape"), preset.name)
        record.shell = kind
        try:
            runner_path = self._runner(kind, record, command)
            stream = self._stream(record)
            stream.prompt_re = compile_pattern(preset.ready, PROMPT)
            scanner = _markers(record.call_id)
            outcome = stream.run(
                [["send-keys", "-t", pane.pane_id, "-l", "--", typed_line(kind, runner_path)]],
                scanner,
                self.frame.deadline,
                watch_pid=pane.pid,
                done=lambda: self._started(stream, preset),
                clear=LINE_EDITOR_RESET,
            )
            self._started_outcome(outcome, stream, scanner, preset, record)
        finally:
            self.done(record)
        return record

    def _runner(self, kind: ShellKind, record: CallRecord, command: bytes) -> str:
        base = self.records.file(record.call_id)
        command_path = self.write(base + ".cmd", command)
        self.write(scratch_path(base + ".run"), b"")  # the runner writes it, kept 0600
        spec = RunnerSpec(
            call_id=record.call_id,
            runner_path=base + ".run",
            command_path=command_path,
            stdout_tty="",
            stderr_tty="",
            banner=display_command(record.command, record.options.agent),
            shell_binary=proc.shell_executable(self.pane.pid),
            erase=None
            if self.options.verbose_transcript or self.pane.transcript == "verbose"
            else typed_erasure(kind, base + ".run", self.pane.cursor_x, self.pane.width),
        )
        return self.write(base + ".run", runner_script(kind, spec).encode())

    def _started(self, stream: PaneStream, preset: Preset) -> bool:
        """The REPL's prompt is the unfinished last line and its process is in front."""
        prompt = stream.prompt_re
        if prompt is None or not prompt.search(stream.pending().rstrip("\n")):
            return False
        shell = proc.proc_stat(self.pane.pid)
        return shell is not None and stream.repl_pid(shell.tpgid) is not None

    def _started_outcome(
        self,
        outcome: str,
        stream: PaneStream,
        scanner: MarkerScanner,
        preset: Preset,
        record: CallRecord,
    ) -> None:
        if outcome == "ready":
            shell = proc.proc_stat(self.pane.pid)
            pid = stream.repl_pid(shell.tpgid) if shell else None
            if pid is None:
                record.status = EXIT_FAILURE
                record.notes.append("The REPL's prompt showed, but its process could not be found.")
                return
            state = ReplRecord(preset.name, pid, self.pane.pane_id, preset.ready, preset.quit)
            self.records.write_repl(state)
            record.status = 0
            stream.emit(stream.pending().encode())  # the prompt it waits at: it is ready
        elif outcome == "ended":
            record.status = scanner.status if scanner.status is not None else EXIT_FAILURE
            if record.status == 0:
                record.status = 1
                record.notes.append(f"The command ended without showing the {preset.name} prompt.")

    # --- evaluate ------------------------------------------------------------------------

    def evaluate(
        self, preset: Preset, repl: OpenRepl, code: bytes, template: str | None
    ) -> CallRecord:
        """Evaluate ``code`` in the open REPL; done at the end marker it prints."""
        state = repl.record
        if repl.far:
            from .farrepl import evaluate_far

            code = template.encode().replace(b"{code}", code) if template else code
            return evaluate_far(self, state, code)
        check_local_repl_ready(self.tmux, state, self.pane, self.cancel)
        record = self.record("repl_eval", code.decode("utf-8", "surrogateescape"), state.name)
        if template is not None:
            code = template.encode().replace(b"{code}", code)
        look = None
        if not (self.options.verbose_transcript or self.pane.transcript == "verbose"):
            banner = display_command(record.command, record.options.agent)
            tag = display_command("", record.options.agent).rstrip()
            look = Look(self.pane.cursor_x, self.pane.width, banner, tag)
        cwd = proc.working_dir(state.pid) if look is not None and preset.name == "psql" else None
        plan = plan_eval(preset, record.call_id, code, self.records.path, look, cwd)
        for path, content in plan.files.items():
            self.write(path, content)
        stream = self._stream(record)
        stream.repl_known = state.pid
        stream.prompt_re = prompt = compile_pattern(preset.ready, PROMPT)
        stream.error_re = re.compile(preset.error, re.MULTILINE) if preset.error else None
        stream.stops_short = preset.name in STOPS_SHORT and plan.markers
        collected: list[bytes] = []
        scanner: MarkerScanner | PassThrough = _markers(record.call_id, plan.lead)
        done = None
        if not plan.markers:
            scanner = PassThrough()
            done = prompt_after_echo(collected, plan.echo_lines, prompt.search)
        first = plan.stages[0] if plan.stages else plan.typed
        paste = "\n" in first
        keys = _eval_keys(self.pane.pane_id, record.call_id, first, paste)
        if plan.stages:
            stream.stage(plan.stages[1:], plan.reading)
        try:
            outcome = stream.run(
                keys,
                scanner,
                self.frame.deadline,
                watch_pid=state.pid,
                done=done,
                paste=first.encode("utf-8", "surrogateescape") if paste else None,
                collect=collected if plan.echo_lines else None,
            )
            self._evaluated(outcome, stream, scanner, collected, plan.echo_lines, preset, record)
        finally:
            self.done(record)
        return record

    def _evaluated(
        self,
        outcome: str,
        stream: PaneStream,
        scanner: MarkerScanner | PassThrough,
        collected: list[bytes],
        echo_lines: tuple[str, ...],
        preset: Preset,
        record: CallRecord,
    ) -> None:
        if outcome == "ready":  # no markers: the prompt came back after the echo
            stream.emit(after_echo(b"".join(collected), echo_lines))
            record.status = 0
        elif outcome == "ended":
            if echo_lines:
                prompt = compile_pattern(echo_prompt(preset.ready), "the prompt")
                stream.emit(without_echo(b"".join(collected), echo_lines, prompt.match))
            if scanner.status is not None:
                record.status = scanner.status
            else:
                record.status = 1 if stream.saw_error else 0
        elif outcome == "stopped":
            record.status = 1  # (an error in the code, as when the REPL goes on after it)
            record.notes.append(
                f"{preset.name} stopped at an error ({STOPS_SHORT[preset.name]} is on) and "
                "is back at its prompt: the output is what it printed up to the error; the "
                "rest of the code did not run."
            )
        elif outcome == "gone":
            self.records.clear_repl()
            record.status = EXIT_FAILURE
            record.notes.append(f"The {preset.name} REPL exited during the evaluation.")
            record.pane_tail = screen_tail(self.tmux, self.pane.pane_id)

    # --- close ---------------------------------------------------------------------------

    def close(self, repl: OpenRepl) -> CallRecord:
        """Type the REPL's own quit command; done when its process is gone and the shell
        holds the terminal again."""
        state = repl.record
        if repl.far:
            from .farrepl import close_far

            return close_far(self, state)
        check_local_repl_ready(self.tmux, state, self.pane, self.cancel)
        record = self.record("repl_close", state.quit, state.name)
        pidfd = proc.exit_fd(state.pid)
        pane_id = self.pane.pane_id
        if state.quit:
            keys = [["send-keys", "-t", pane_id, "-l", "--", state.quit]]
            keys.append(["send-keys", "-t", pane_id, "Enter"])
        else:  # no preset: end of input, sent only after checking the REPL is in front
            keys = [["send-keys", "-t", pane_id, "C-d"]]
        check_not_cancelled(self.cancel)
        self.tmux.run_all(
            ["copy-mode", "-q", "-t", pane_id], ["send-keys", "-t", pane_id, "C-e", "C-u"], *keys
        )
        try:
            self._closed(state, pidfd, record)
        finally:
            close_fd(pidfd)
            self.done(record)
        return record

    def _closed(self, state: ReplRecord, pidfd: int, record: CallRecord) -> None:
        limit = min(self.frame.deadline, time.monotonic() + self.options.idle_timeout)
        _wait_for_exit(state.pid, pidfd, limit, self.cancel)
        if proc.proc_stat(state.pid) is not None:
            record.status = EXIT_FAILURE
            record.notes.append(
                f"The {state.name} REPL did not quit after `{state.quit}`; it is still open."
            )
            return
        try:
            readiness.check_ready(self.pane, proc.shell_kind(self.pane.pid), prompt_wait=2.0)
        except PaneNotReady as exc:
            record.status = EXIT_FAILURE
            record.notes.append(f"The REPL quit, but the shell prompt did not come back: {exc}")
            return
        record.status = 0
        record.notes.append(f"Closed the {state.name} REPL; the shell prompt is back.")


def _markers(call_id: str, lead: bytes = b"\r\n") -> MarkerScanner:
    return MarkerScanner(
        start_marker(call_id).encode(), end_pattern(call_id), end_prefix(call_id), lead
    )


def _eval_keys(pane_id: str, call_id: str, typed: str, paste: bool) -> list[list[str]]:
    """What types an evaluation: one line as literal keys, several through a paste
    buffer (loaded beforehand), so that no line ends before the last one is in."""
    if paste:
        return [paste_commands(f"tmux-send-{call_id}", pane_id, bracketed=False)[1]]
    return [["send-keys", "-t", pane_id, "-l", "--", typed]]


def _wait_for_exit(pid: int, pidfd: int, limit: float, cancel: Cancel | None) -> None:
    """Until ``pid`` exits, ``limit`` passes, or the call is cancelled."""
    watched = [fd for fd in (pidfd, cancel.fd if cancel else -1) if fd >= 0]
    while proc.alive(pid):
        remaining = limit - time.monotonic()
        if remaining <= 0 or (cancel is not None and cancel.cancelled):
            return
        if pidfd >= 0:
            select.select(watched, [], [], remaining)
        else:
            select.select(watched, [], [], min(remaining, 0.01))
