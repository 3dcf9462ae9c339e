"""REPL mode in a far shell: a python (or node) REPL started in a shell behind ssh,
su, sudo or a nested shell, driven through the pane alone.

Nothing of ours exists on the far side and the far REPL cannot read our files, so the
code is typed. Once per REPL, right after its prompt first shows, one line defines a
helper function in it (``__tmux_send_far``); each evaluation is then one line calling
it with the code as an escaped string literal (printable ASCII only: the person reads
the code, and no tab reaches the line editor), or for long code a few lines of at most
:data:`PIECE` characters that build the literal in ``__tmux_send_c`` first. The helper
prints the start marker, evaluates the code as the local presets do (statement by
statement, values shown, errors reported, status 1), then the end marker: both are
built from pieces at run time, so the echo of the typed line never contains them.
The output is cut out of the pane's stream by :class:`~tmux_bridge.text.farshell.FarScanner`.

The REPL is started with the far shell's helpers (``__tmux_send_begin ID``, the start
command, ``__tmux_send_end $? END``) with stderr left on the terminal: when the REPL
exits, that call's end marker shows in the stream, which is how ``--close`` and an
evaluation see it go.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from ..errors import EXIT_FAILURE, FarReplUnsupported
from ..infra.patterns import Pattern, compile_pattern
from ..pane.front import Gateway, prompt_part
from ..pane.info import cursor_place, screen_tail
from ..pane.records import ReplRecord
from ..results import CallRecord
from ..text.farshell import FarFacts, FarLook, erased_line, head_printf
from ..text.markers import (
    DEF,
    HIDDEN_CLOSE,
    HIDDEN_OPEN,
    MARK,
    MARK_PRINTF,
    defined_pattern,
    end_prefix,
)
from ..text.output import render_line
from ..text.presets import FAR_REPLS, FarRepl, Preset
from ..text.seams import printf_text
from ..text.shells import ShellKind, erase_typed
from .far import PROBE_WAIT, FarCall, run_far
from .frame import ReplContext
from .waiting import Signal

PIECE = 3000  # characters of the code's literal per typed line (canonical mode: 4095)


def far_repl_for(preset: Preset) -> FarRepl:
    """How ``preset`` runs in a far shell; raises :class:`FarReplUnsupported`."""
    spec = preset.far  # none for a --prompt REPL, even one with a preset's name
    if spec is None:
        supported = ", ".join(FAR_REPLS)
        raise FarReplUnsupported(
            f"the pane's shell has a far shell in front (ssh, su, sudo ...), and a "
            f"{preset.name} REPL cannot be driven there: its code would have to reach "
            f"files of this machine. In a far shell REPL mode works for {supported}; "
            "run the REPL's commands as plain commands there instead.",
            wanted=preset.name,
        )
    return spec


# --- pure text --------------------------------------------------------------------------------


def literal_pieces(text: str, astral: str, size: int = PIECE) -> list[str]:
    """``text`` as the insides of single-quoted string literals of printable ASCII (the
    same escapes in python and JavaScript but for ``astral``, the format of a character
    beyond U+FFFF), cut into pieces of at most ``size`` characters, never inside an
    escape."""
    pieces: list[str] = []
    piece: list[str] = []
    length = 0
    for char in text:
        token = _escape(char, astral)
        if length + len(token) > size and piece:
            pieces.append("".join(piece))
            piece, length = [], 0
        piece.append(token)
        length += len(token)
    pieces.append("".join(piece))
    return pieces


def _escape(char: str, astral: str) -> str:
    code = ord(char)
    if char in "\\'":
        return "\\" + char
    if 0x20 <= code < 0x7F:
        return char
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return astral.format(code)


def define_line(spec: FarRepl, call_id: str, look: FarLook | None = None) -> str:
    """The one line that defines the helper and answers ``___TMUXSEND_DEF_<id>___``;
    with ``look`` (the REPL's prompt's column, the pane's width), the answer is hidden
    and the line erases itself, to its row's start (the REPL draws its prompt anew)."""
    (literal,) = literal_pieces(spec.define, spec.astral, size=1 << 30)

    def make(before: str, after: str) -> str:
        quoted = [_literal(spec, text) for text in (before, after)]
        mark = f"{quoted[0]} + '{MARK[:7]}' + '{MARK[7:]}{DEF}_{call_id}___\\n' + {quoted[1]}"
        return spec.wrap.format(lit=f"'{literal}'", mark=mark)  # (no marker in its echo)

    if look is None:
        return make("", "")
    line = make("", "")
    for _ in range(3):  # the row count's digits change the line's length
        erase = erase_typed(look.cursor_x, len(line), look.width).replace(
            f"[{look.cursor_x + 1}G", "[1G"
        )
        line = make(erase + HIDDEN_OPEN, HIDDEN_CLOSE)
    return line


def _literal(spec: FarRepl, text: str) -> str:
    (inside,) = literal_pieces(text, spec.astral, size=1 << 30)
    return f"'{inside}'"


def def_pattern(call_id: str) -> re.Pattern[bytes]:
    return defined_pattern(call_id)


def eval_lines(spec: FarRepl, call_id: str, code: str, look: FarLook | None = None) -> list[str]:
    """The lines typed to evaluate ``code``: one call of the helper, or for long code
    the literal built in a variable first, then the call. With ``look``, the call's line
    erases itself and the helper prints the header in its place and hides its markers;
    the lines that build a long literal are typed on the terminal's alternate screen
    (:func:`_hiding_line`), which the call leaves, back where the first line was typed."""
    pieces = literal_pieces(code, spec.astral)
    lines = [
        spec.variable.format(op="=" if n == 0 else "+=", lit=f"'{piece}'")
        for n, piece in enumerate(pieces)
    ]
    code_arg = f"'{pieces[0]}'" if len(pieces) == 1 else "__tmux_send_c"
    lines = lines if len(pieces) > 1 else []

    def make(head: str) -> str:
        return f"__tmux_send_far('{call_id}', {code_arg}{head})"

    if look is None:
        return [*lines, make("")]
    banner = look.banner if len(look.banner) <= HEAD_MAX else look.banner[:HEAD_MAX] + " ..."
    if lines:
        hiding = [_hiding_line(spec, look), *(spec.variable.format(op="+=", lit=f"'{piece}'")
                  for piece in pieces)]  # fmt: skip
        head = _literal(spec, f"{_ALTERNATE_OFF}\x1b[2m{banner}\x1b[0m\n")
        return [*hiding, make(f", {head}, {look.width}")]
    line = make("")
    for _ in range(3):  # the row count's digits change the line's length
        erase = erase_typed(look.cursor_x, len(line), look.width)
        head = _literal(spec, f"{erase}\x1b[2m{banner}\x1b[0m\n")
        line = make(f", {head}, {look.width}")
    return [line]


# The terminal's alternate screen: tmux keeps no history of it, and leaving it brings
# the main screen back as it was, the cursor where it was when it was entered.
_ALTERNATE_ON, _ALTERNATE_OFF = "\x1b[?1049h", "\x1b[?1049l"


def _hiding_line(spec: FarRepl, look: FarLook) -> str:
    """The first line typed for long code: it empties the literal's buffer, erases
    itself and enters the alternate screen, where the lines that build the literal
    show and go (a tmux with ``alternate-screen`` off shows them). A REPL without the
    helper (not the one tmux-send started) stays on the main screen: no call leaves it."""
    line = spec.hide.format(lit="''")
    for _ in range(3):  # the row count's digits change the line's length
        erase = erase_typed(look.cursor_x, len(line), look.width)
        line = spec.hide.format(lit=_literal(spec, erase + _ALTERNATE_ON))
    return line


HEAD_MAX = 400  # characters of the header an evaluation's line carries


def start_line(kind: ShellKind, call_id: str, command: bytes, look: FarLook | None = None) -> str:
    """The line typed into the far shell to start the REPL: the start marker, the
    command, then the far shell's end marker with its status, shown when the REPL
    exits. Its stderr stays on the terminal (the REPL's prompts and reports), so no
    stderr file is made (one would outlive a dropped connection). With ``look``, the
    line erases itself, the header takes its place, and the markers are hidden."""
    if look is None:
        begin = f"'{MARK_PRINTF}START_%s___\\n' {call_id}"
        return _start_line(kind, call_id, command, begin, "")
    pad, head = str(max(look.width, 1)), head_printf(call_id, look)
    return erased_line(
        lambda erase: _start_line(kind, call_id, command, f"'{erase}{head}'", pad), look
    )


def _start_line(kind: ShellKind, call_id: str, command: bytes, begin: str, pad: str) -> str:
    text = printf_text(command)
    if kind == "fish":
        pad = pad or "''"
        return (
            f" set -g __tmux_send_id {call_id}; set -g __tmux_send_err /dev/null;"
            f" set -g __tmux_send_pad {pad}; printf {begin};"
            f" eval (printf '{text}' | string collect); __tmux_send_end $status END"
        )
    return (
        f" __tmux_send_id={call_id}; __tmux_send_err=/dev/null; __tmux_send_pad={pad};"
        f" printf {begin}; eval \"$(printf '{text}')\"; __tmux_send_end $? END"
    )


def exit_mark(start_id: str) -> bytes:
    """What the stream shows once the far REPL started by call ``start_id`` exited."""
    return end_prefix(start_id) + b" "


# --- the calls --------------------------------------------------------------------------------


class FarReplStart(FarCall):
    """Types the REPL's start line into the far shell (probed already) and reads until
    the REPL's prompt is the unfinished last line, then defines the helper in it."""

    spec: FarRepl
    prompt_re: Pattern
    started_repl = False

    def run(self, facts: FarFacts, command: bytes, deadline: float) -> None:
        self.ladder = ("INT",)  # Ctrl-\ would kill the REPL, not stop the code
        self.far_prompt = self.prompt
        self._type(start_line(facts.shell, self.record.call_id, command, self.transcript))
        self.wait(facts.shell, deadline)
        if not self.started_repl:
            return
        look = None
        if self.transcript is not None:  # the REPL's prompt, where the line is typed
            column = cursor_place(self.tmux, self.pane.pane_id)[1]
            look = self.transcript._replace(cursor_x=max(column, 0))
        self._type(define_line(self.spec, self.record.call_id, look))
        pattern = def_pattern(self.record.call_id)
        until = min(deadline, time.monotonic() + PROBE_WAIT)
        if pattern.search(self.read_until(lambda d: pattern.search(d) is not None, until)):
            self.record.status = 0
            return
        self.record.status = EXIT_FAILURE
        self.record.notes.append(
            "The REPL's prompt showed, but it did not define tmux-send's helper function "
            "(the line typed for it is on the screen); it is left open."
        )
        self.started_repl = False

    def ready(self) -> bool:
        """The REPL's prompt is the unfinished last line of what came after the start
        marker (the prompt itself is no output)."""
        if not self.scanner.started or self.scanner.ended or not self.held:
            return False
        cut = self.held.rfind(b"\n") + 1
        last = render_line(self.held[cut:]).decode("utf-8", "replace").rstrip("\r")
        if not self.prompt_re.search(last):
            return False
        self.held = self.held[:cut]
        self.started_repl = True
        return True


class FarReplEval(FarCall):
    """One evaluation in a far REPL: the stream opened, the lines typed, the output read
    until the helper's end marker, the REPL's prompt back without it (an interrupt), or
    the REPL's exit (the end marker of the call that started it)."""

    prompt_re: Pattern
    start_id = ""
    raw_tail = b""
    repl_exited = False
    quit_after = False  # the REPL's exit came after the evaluation's end, in one read
    interrupted = False
    helper_missing = False
    echoed = False  # the call's line (its id) came back: the REPL has read it

    def evaluate(self, lines: list[str], kind: ShellKind, deadline: float) -> None:
        self.ladder = ("INT",)
        self.waiter = "the REPL"
        self.open_stream()
        self._type(*lines)
        self.wait(kind, deadline)

    def _feed(self, chunk: bytes) -> None:
        if self.repl_exited or self.quit_after:  # the far shell's marker and prompt
            return
        mark = exit_mark(self.start_id)
        data = self.raw_tail + chunk
        self.echoed = self.echoed or f"'{self.record.call_id}'".encode() in data
        at = data.find(mark)
        if at < 0:
            self.raw_tail = data[-len(mark) :]
            super()._feed(chunk)
            return
        cut = at - len(self.raw_tail)
        if cut > 0:
            super()._feed(chunk[:cut])
        if self.scanner.ended:  # the code ended, then the REPL (exit() as code): read
            self.quit_after = True  # together, the evaluation's own status stands
            return
        self.scanner.flush()  # a "\r\n" held back: the shell's, before its marker
        self._drop_mark_start(mark)
        self.repl_exited = True
        self.scanner.done = True

    def _drop_mark_start(self, mark: bytes) -> None:
        """The marker's first bytes, when an earlier read ended inside it: the unfinished
        line held back (never handed on) is that beginning."""
        line = self.held.rfind(b"\n") + 1
        if line < len(self.held) and mark.startswith(self.held[line:]):
            self.held = self.held[:line]

    def _deliver(self, out: bytes) -> None:
        if self.interrupted and b"^C" in out:  # the far terminal's echo of our Ctrl-C
            out = out.replace(b"^C", b"", 1)
            self.interrupted = False
        super()._deliver(out)

    def interrupt(self, which: Signal) -> None:
        self.interrupted = True
        super().interrupt(which)

    def _look(self, kind: ShellKind, clock: Any) -> None:
        """After a silence: the REPL's prompt back without the end marker (an interrupt
        caught outside the helper) ends the call with no status; back without even the
        start marker, the helper never ran (a REPL the person started anew). The stream
        must end with the prompt too (the screen runs ahead: see ``PaneTap.ends_as_shown``)."""
        if not self.scanner.ended and (self.scanner.started or self.echoed):
            line = prompt_part(self.tmux, self.pane.pane_id)
            prompt = self.prompt_re
            if prompt.search(line) and self.tap.ends_as_shown(
                lambda text: bool(prompt.search(text))
            ):
                self.helper_missing = not self.scanner.started and clock.running
                rest = self.scanner.flush()
                if rest:
                    self._deliver(rest)
                self.held = self.held[: self.held.rfind(b"\n") + 1]
                self.record.prompt_back = True
                self.scanner.done = True
                return
        super()._look(kind, clock)


# --- the requests -----------------------------------------------------------------------------


def start_far(call: ReplContext, gateway: Gateway, preset: Preset, command: bytes) -> CallRecord:
    """Start ``preset``'s REPL with shell command ``command`` in the far shell in front
    of the pane; done when its prompt shows and the helper is defined."""
    spec = far_repl_for(preset)
    frame = call.frame
    record = call.record("repl_start", command.decode("utf-8", "surrogateescape"), preset.name)
    made: list[FarReplStart] = []

    def make(*args: Any) -> FarCall:
        start = FarReplStart(*args)
        start.spec, start.prompt_re = spec, compile_pattern(preset.ready, "the prompt")
        made.append(start)
        return start

    frame.records.write_inflight(record.command)
    try:
        facts = run_far(
            call.tmux,
            call.pane,
            gateway,
            lambda _facts: command,
            record,
            frame.deadline,
            (call.stdout, _to_notes(record), call.notice, call.cancel),
            frame.records,
            frame.view.screen,
            make_call=make,
        )
    finally:
        frame.records.clear_inflight()
    if made and made[0].started_repl:
        far = {"document": record.far, "prompt": made[0].far_prompt, "start_id": record.call_id}
        far["shell"] = facts.shell
        state = ReplRecord(preset.name, gateway.pid, call.pane.pane_id, preset.ready, preset.quit)
        frame.records.write_repl(state._replace(far=far))
    elif record.status == 0:
        record.status = 1
        record.notes.append(f"The command ended without showing the {preset.name} prompt.")
    return call.done(record)


def _to_notes(record: CallRecord) -> Callable[[bytes], None]:
    """stderr of the start line (the far shell's own complaints, which go to the
    terminal here): kept as a note."""
    return lambda data: record.notes.append(data.decode("utf-8", "replace").strip())


def evaluate_far(call: ReplContext, state: ReplRecord, code: bytes) -> CallRecord:
    """Evaluate ``code`` in the far REPL ``state`` names (checked to be in front)."""
    far = state.far or {}
    record = call.record("repl_eval", code.decode("utf-8", "surrogateescape"), state.name)
    record.shell, record.far = far.get("shell"), far.get("document")
    spec = FAR_REPLS[state.name]
    gateway = Gateway(state.pid, str((record.far or {}).get("via", "")), False)
    evaluation = FarReplEval(
        call.tmux, call.pane, gateway, record, (call.stdout, _to_notes(record)), call.notice,
        call.cancel,
    )  # fmt: skip
    evaluation.prompt_re = compile_pattern(state.prompt_re, "the prompt")
    evaluation.start_id = str(far.get("start_id", ""))
    code_text = code.decode("utf-8", "surrogateescape")
    lines = eval_lines(spec, record.call_id, code_text, evaluation.transcript)
    call.records.write_inflight(record.command)
    try:  # far_shell_lost: the record stays, so the next call says the REPL is gone
        evaluation.evaluate(lines, far.get("shell", "posix"), call.frame.deadline)
    finally:
        evaluation.close()
        call.records.clear_inflight()
    if record.timed_out is not None:
        record.status = None  # as locally: the code was stopped, it has no status
    if evaluation.repl_exited or evaluation.helper_missing:
        call.records.clear_repl()
        record.status = EXIT_FAILURE
        record.notes.append(
            f"The {state.name} REPL exited during the evaluation."
            if evaluation.repl_exited
            else f"The {state.name} REPL in front did not run the code: it has no "
            "tmux-send helper, so it is not the one tmux-send started (the person may "
            "have started it anew). It is forgotten; ask the person to quit it."
        )
        record.pane_tail = screen_tail(call.tmux, call.pane.pane_id)
    return call.done(record)


def close_far(call: ReplContext, state: ReplRecord) -> CallRecord:
    """Type the REPL's quit command; done when the end marker of the call that started
    it shows (the far shell is back at its prompt)."""
    far = state.far or {}
    record = call.record("repl_close", state.quit, state.name)
    record.shell, record.far = far.get("shell"), far.get("document")
    gateway = Gateway(state.pid, str((record.far or {}).get("via", "")), False)
    closing = FarCall(
        call.tmux, call.pane, gateway, record, (call.stdout, call.stdout), call.notice, call.cancel
    )
    pane_id = call.pane.pane_id
    mark = exit_mark(str(far.get("start_id", "")))
    try:
        closing.open_stream(
            ["send-keys", "-t", pane_id, "-l", "--", state.quit],
            ["send-keys", "-t", pane_id, "Enter"],
        )
        limit = min(call.frame.deadline, time.monotonic() + call.options.idle_timeout)
        seen = closing.read_until(lambda d: mark in d, limit)
    finally:
        closing.close()
    if mark in seen:
        record.status = 0
        record.notes.append(f"Closed the {state.name} REPL; the far shell's prompt is back.")
    elif closing.gone:
        record.status = EXIT_FAILURE
        record.notes.append(f"The far shell behind `{gateway.name}` went away as the REPL quit.")
    else:
        record.status = EXIT_FAILURE
        record.notes.append(f"The {state.name} REPL did not quit after `{state.quit}`.")
        record.pane_tail = screen_tail(call.tmux, pane_id)
    return call.done(record)
