"""What tmux-send was asked (:class:`SendRequest`) and the call made of it (:func:`call`).

Everything a call does (the rules, the refusals, the audit log, the JSON document) is
the core's (:class:`tmux_bridge.api.Bridge`, :mod:`tmux_bridge.report`); this module
only adds what belongs to a command line: signals, exit codes and hints that name flags.
Both parsers of :mod:`tmux_bridge.cli.send` build a :class:`SendRequest`; like them it
never imports click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..errors import BridgeError
from ..text.seams import json_text, visible, visible_lines
from ..tuples import NamedTuple
from .common import FdSink
from .send_jobs import JOB_MODES, job_call

if TYPE_CHECKING:
    from ..api import Bridge, FittedStream
    from ..cancel import Cancel
    from ..results import CallResult, JobResult, RunOptions


class SendRequest(NamedTuple):
    """What the command line asked for."""

    mode: str  # "command", "--repl", "--close", "--keys", "--type", "--screen", "--write" ...
    words: tuple[str, ...]
    options: RunOptions
    repl_name: str | None = None
    prompt: str | None = None
    template: str | None = None
    text: str | None = None  # --type TEXT
    enter: bool = False
    allow_control: bool = False
    lines: int = 0
    pane: str | None = None  # the target pane; None: the bridge pane
    file: str | None = None  # --write, --read, --edit PATH
    old: str | None = None
    new: str | None = None
    backup: bool = True
    job: str | None = None  # --job, --wait, --kill ID
    everything: bool = False  # --job ID --all
    # --first, --last, --max-bytes (None: not given; the TMUX_SEND_* defaults apply)
    fit: tuple[int | None, int | None, int | None] = (None, None, None)
    output: str | None = None  # --output PATH_OR_ID
    offset: int = 0  # --offset N
    limit: int = 200  # --limit N
    if_sha256: str | None = None  # --if-sha256 HEX
    line: int | None = None  # --edit PATH --line N
    line_action: str | None = None  # replace (--new), insert, delete, append
    line_text: str | None = None
    backup_id: str | None = None  # --restore PATH --backup ID
    check_as: str | None = None  # --check --as KIND


# Modes whose output --first/--last/--max-bytes cut (and the TMUX_SEND_* defaults).
FIT_MODES = ("command", "--repl", "--job", "--wait")
FIT_ENV = ("TMUX_SEND_FIRST", "TMUX_SEND_LAST", "TMUX_SEND_MAX_BYTES")


class Output:
    """Where a call's output goes: streamed to our stdout/stderr, or, with --json,
    collected for the one JSON object printed at the end.

    The command's own output, a file's bytes and the screen asked for go through
    exactly (the sinks, :meth:`product`): they are what tmux-send is for. tmux-send's
    own text, which may quote what it was given or what a pane showed, goes through the
    seam to the terminal (:mod:`tmux_bridge.text.seams`): :meth:`notice`, :meth:`print_text`
    and :meth:`print_json` print nothing else.
    """

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.notes: list[str] = []
        self.facts: dict[str, str | None] | None = None  # what --info found
        self.out, self.err = FdSink(1), FdSink(2)
        self.fit: tuple[int | None, int | None, int | None] = (None, None, None)
        self.bridge: Bridge | None = None  # set by call() when it cuts output
        self.fitted: dict[str, FittedStream] = {}

    def stdout(self) -> Callable[[bytes], None] | None:
        """The sink for the command's stdout; None collects it into the result."""
        return None if self.as_json else self._fitted("stdout", self.out)

    def stderr(self) -> Callable[[bytes], None] | None:
        return None if self.as_json else self._fitted("stderr", self.err)

    def sink(self, name: str) -> Callable[[bytes], None]:
        """The sink of stream ``name`` (``stdout``, ``stderr``) for text mode: the cutting
        one already made for this call, if any, so that a stream is cut once."""
        made = self.fitted.get(name)
        if made is not None:
            return made
        return self._fitted(name, self.out if name == "stdout" else self.err)

    def _fitted(self, name: str, sink: FdSink) -> Callable[[bytes], None]:
        """``sink``, or, when output is cut, the cutting sink in front of it."""
        if self.bridge is None:
            return sink
        self.fitted[name] = self.bridge.fitted_stream(name, sink, *self.fit)
        return self.fitted[name]

    def finish(self, call_id: str) -> None:
        """Send the end of each cut stream (its cut line and tail); the whole streams
        are saved under ``call_id``."""
        fitted, self.fitted = self.fitted, {}
        for stream in fitted.values():
            stream.finish(call_id, "tmux-send")

    def fit_document(self, document: dict[str, object], result: CallResult | JobResult) -> None:
        """With --json: each stream of the document cut as asked, the whole saved."""
        if self.bridge is None:
            return
        for name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
            self.bridge.fit_document(document, name, data or b"", self.fit, "tmux-send")

    def notice(self, message: str) -> None:
        """tmux-send's own remarks (a wait for the lock, a command waiting for input):
        stderr, on a line of their own, or a JSON note."""
        if self.as_json:
            self.notes.append(message)
            return
        lead = "\n" if self.err.line_open else ""
        self.err((lead + visible_lines(message) + "\n").encode())

    def print_text(self, text: str) -> None:
        """tmux-send's own account on stdout (a dry run, the platform found)."""
        self.out(visible_lines(text).encode())

    def print_json(self, document: dict[str, object]) -> None:
        self.out((json_text(document) + "\n").encode())

    def product(self, data: bytes) -> None:
        """What the call was for, byte for byte: the screen, a file read, a diff."""
        self.out(data)


def call(request: SendRequest, output: Output) -> int:
    """Read the command, make the call with signals mapped onto its cancellation, and
    print the result (or the error) with our hints."""
    from ..api import Bridge
    from ..cancel import SignalCancel
    from ..target import Target

    words = _command(request)
    bridge = Bridge(Target.from_env(pane=request.pane), client="tmux-send")
    agent = os.environ.get("TMUX_BRIDGE_AGENT")  # the caller's name, for the pane's header
    request = request._replace(options=request.options._replace(agent=agent))
    if request.mode == "--output":
        return _page(bridge, request, output)
    with SignalCancel() as cancel:
        try:
            _fit(bridge, request, output)
            if request.mode == "--check":
                return _check(bridge, request, words, output, cancel)
            if request.mode in JOB_MODES:
                status = job_call(bridge, request, words, output, cancel)
                output.finish(_new_id())  # a cut read's cut line and tail
                return status
            result = _HANDLERS[request.mode](bridge, request, words, output, cancel)
        except BridgeError as exc:
            output.finish(_new_id())
            return _failed(output, exc, request)
    output.finish(result.call_id)
    return _report(output, result)


def _fit(bridge: Bridge, request: SendRequest, output: Output) -> None:
    """Cut the output as --first, --last, --max-bytes (or their TMUX_SEND_* defaults)
    ask, in the modes that print a command's output."""
    import os

    from ..errors import InvalidRequest

    if request.mode not in FIT_MODES:
        return
    limits = list(request.fit)
    for index, variable in enumerate(FIT_ENV):
        value = os.environ.get(variable, "")
        if limits[index] is None and value:
            if not value.isdigit():
                raise InvalidRequest(
                    f"{variable} must be a whole number, 0 or more; it is {value!r}. "
                    "Set it to a number or unset it."
                )
            limits[index] = int(value)
    if limits != [None, None, None]:
        output.fit = (limits[0], limits[1], limits[2])
        output.bridge = bridge


def _new_id() -> str:
    import os

    return os.urandom(5).hex()


def _page(bridge: Bridge, request: SendRequest, output: Output) -> int:
    """--output: a page of a saved stream, exactly, and where the next one starts."""
    assert request.output is not None
    try:
        page = bridge.read_output(request.output, request.offset, request.limit)
    except BridgeError as exc:
        return _failed(output, exc, request)
    last = page.offset + page.lines
    if output.as_json:
        output.print_json(
            {
                "mode": "output", "path": page.path, "offset": page.offset,
                "lines": page.lines, "total_lines": page.total_lines,
                "total_bytes": page.total_bytes, "more": page.more,
                "text": page.data.decode("utf-8", "replace"),
                "error": None, "error_code": None,
            }
        )  # fmt: skip
        return 0
    output.product(page.data)
    if page.more:
        output.notice(
            f"tmux-send: lines {page.offset + 1}-{last} of {page.total_lines} of "
            f"{page.path}; the next page: --offset {last}"
        )
    return 0


def _command(request: SendRequest) -> str | bytes | Sequence[str]:
    """Shell code (one argument, or stdin for ``-``), or the words of one command."""
    words = request.words
    if request.mode in ("command", "--repl", "--check", "--background") and list(words) == ["-"]:
        return sys.stdin.buffer.read()
    if request.mode == "--repl":
        return " ".join(words)
    return words[0] if len(words) == 1 else words


def _run(
    bridge: Bridge, request: SendRequest, words: object, output: Output, cancel: Cancel
) -> CallResult:
    assert isinstance(words, (str, bytes, tuple))
    return bridge.run(
        words,
        request.options,
        stdout=output.stdout(),
        stderr=output.stderr(),
        notice=output.notice,
        cancel=cancel,
    )


def _repl(
    bridge: Bridge, request: SendRequest, words: object, output: Output, cancel: Cancel
) -> CallResult:
    assert isinstance(words, (str, bytes)) and request.repl_name is not None
    return bridge.repl(
        request.repl_name,
        words,
        request.options,
        prompt=request.prompt,
        template=request.template,
        stdout=output.stdout(),
        notice=output.notice,
        cancel=cancel,
    )


def _close(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    return bridge.close_repl(request.options, notice=output.notice, cancel=cancel)


def _keys(
    bridge: Bridge, request: SendRequest, _words: object, _output: Output, _cancel: Cancel
) -> CallResult:
    return bridge.send_keys(list(request.words))


def _type(
    bridge: Bridge, request: SendRequest, _words: object, _output: Output, _cancel: Cancel
) -> CallResult:
    assert request.text is not None
    return bridge.type_text(request.text, request.enter, request.allow_control)


def _screen(
    bridge: Bridge, request: SendRequest, _words: object, _output: Output, _cancel: Cancel
) -> CallResult:
    return bridge.screen(request.lines)


def _info(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    result, facts = bridge.info(request.options, notice=output.notice, cancel=cancel)
    output.facts = facts
    return result


def _check(
    bridge: Bridge, request: SendRequest, words: object, output: Output, cancel: Cancel
) -> int:
    """The dry run, printed as text or one JSON document; exits as the call would."""
    from ..report import check_document, describe_check

    assert isinstance(words, (str, bytes, tuple))
    if request.check_as is not None or request.file is not None:
        data = words if isinstance(words, (str, bytes)) else " ".join(words)
        if request.file is not None:  # --write PATH --check: the content on stdin
            data = sys.stdin.buffer.read()
        result = bridge.check_content(
            data, request.check_as, request.file or "-", request.options,
            notice=output.notice, cancel=cancel,
        )  # fmt: skip
    else:
        result = bridge.check(words, request.options, notice=output.notice, cancel=cancel)
    if output.as_json:
        output.print_json(check_document(result, output.notes))
    else:
        output.print_text(describe_check(result))
    return result.would_exit


def _write(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    from ..results import MAX_FILE_BYTES

    assert request.file is not None
    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)  # one byte more: "too large" if read
    return bridge.write_file(
        request.file,
        data,
        backup=request.backup,
        options=request.options,
        notice=output.notice,
        cancel=cancel,
        if_sha256=request.if_sha256,
    )


def _read(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    assert request.file is not None
    return bridge.read_file(
        request.file, options=request.options, notice=output.notice, cancel=cancel
    )


def _edit(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    assert request.file is not None
    if request.line_action is not None:
        return _edit_lines(bridge, request, output, cancel)
    assert request.old is not None and request.new is not None
    return bridge.edit_file(
        request.file,
        request.old,
        request.new,
        backup=request.backup,
        options=request.options,
        notice=output.notice,
        cancel=cancel,
        if_sha256=request.if_sha256,
    )


def _edit_lines(bridge: Bridge, request: SendRequest, output: Output, cancel: Cancel) -> CallResult:
    from ..results import LineEdit

    assert request.file is not None
    text = (request.line_text or "").encode("utf-8", "surrogateescape")
    line = request.line or 0
    edit = {
        "replace": LineEdit("replace", line, text),
        "insert": LineEdit("insert", line, text),
        "delete": LineEdit("delete", line),
    }.get(request.line_action or "", LineEdit("append", 0, text))
    return bridge.edit_lines(
        request.file,
        edit,
        backup=request.backup,
        options=request.options,
        notice=output.notice,
        cancel=cancel,
        if_sha256=request.if_sha256,
    )


def _stat(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    assert request.file is not None
    return bridge.stat_file(
        request.file, options=request.options, notice=output.notice, cancel=cancel
    )


def _backups(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    return bridge.list_backups(
        request.file, options=request.options, notice=output.notice, cancel=cancel
    )


def _restore(
    bridge: Bridge, request: SendRequest, _words: object, output: Output, cancel: Cancel
) -> CallResult:
    assert request.file is not None
    return bridge.restore_file(
        request.file,
        request.backup_id,
        options=request.options,
        notice=output.notice,
        cancel=cancel,
        if_sha256=request.if_sha256,
    )


_HANDLERS: dict[str, Callable[[Bridge, SendRequest, object, Output, Cancel], CallResult]] = {
    "command": _run,
    "--repl": _repl,
    "--close": _close,
    "--keys": _keys,
    "--type": _type,
    "--screen": _screen,
    "--info": _info,
    "--write": _write,
    "--read": _read,
    "--edit": _edit,
    "--stat": _stat,
    "--backups": _backups,
    "--restore": _restore,
}


def _report(output: Output, result: CallResult) -> int:
    """The result's JSON document, or the screen of a keys call and tmux-send's account
    of anything unusual on stderr; returns the exit status."""
    from ..report import describe, to_document

    hints = _result_hints(result)
    if output.as_json:
        document = to_document(result, notes=output.notes)
        output.fit_document(document, result)
        document["notes"] += hints
        if output.facts is not None:
            document["info"] = output.facts
        output.print_json(document)
    else:
        if output.facts is not None and result.exit_status == 0:
            facts = output.facts.items()  # each on its own line, whatever the far side said
            output.print_text(
                "".join(f"{k}: {visible(v if v is not None else '?')}\n" for k, v in facts)
            )
        elif result.screen is not None:
            output.product(result.screen.encode("utf-8", "surrogateescape"))
        elif (result.file is not None or result.backups is not None) and result.stdout:
            output.product(result.stdout)  # the bytes read, a write's summary, an edit's diff
        report = describe(result) + "".join(hint + "\n" for hint in hints)
        if report:
            output.notice(report.rstrip("\n"))
    return result.exit_status


def _result_hints(result: CallResult) -> list[str]:
    hints = []
    if result.timed_out and result.job:
        hints.append(f"`tmux-send --wait {result.job}` waits for it; `--job` reads it on.")
    elif result.timed_out:
        hints.append("Pass a larger --timeout or --max-time for slow commands.")
    if result.mode == "repl_eval" and not result.prompt_back:
        hints.append("To quit the REPL: tmux-send --close.")
    return hints


def _failed(output: Output, exc: BridgeError, request: SendRequest) -> int:
    """tmux-send could not do what was asked: the error on stderr or in the JSON."""
    hint = _error_hint(exc, request)
    if output.as_json:
        from ..report import error_document

        command = request.text or request.file or " ".join(request.words)
        document = error_document(exc, command, request.mode.lstrip("-"), output.notes)
        if hint:
            document["notes"].append(hint)
        output.print_json(document)
    else:
        output.notice(exc.render() + (f"\n{hint}" if hint else ""))
    return exc.exit_code


def _error_hint(exc: BridgeError, request: SendRequest) -> str:
    """The command-line flags that get past an error, where there are any."""
    from ..errors import ReplError

    repl = exc.repl if isinstance(exc, ReplError) else None
    wanted = exc.wanted if isinstance(exc, ReplError) else None
    if exc.code == "repl_mismatch" and request.mode == "command":
        return f"Pass --repl {repl} to evaluate code in it, or --close to quit it first."
    if exc.code == "repl_mismatch":
        return f"Pass --repl {repl} to use it, or --close to quit it first."
    if exc.code == "repl_not_open" and wanted:
        return f"Start it again with `tmux-send --repl {wanted} -- <command>`."
    if exc.code == "pane_busy" and exc.pane and "job " in str(exc):
        return "`tmux-send --wait ID` waits for the job; `tmux-bridge split` opens another pane."
    if exc.code in ("no_such_pane", "ambiguous_pane"):
        return "`tmux-bridge panes` lists the panes with their targets and labels."
    if exc.code == "lock_timeout":
        return "Pass a larger --max-time to wait longer."
    if exc.code == "invalid_request" and request.mode == "--type":
        return "Send keys such as Enter or C-c with --keys, or pass --allow-control."
    if exc.code == "invalid_request" and request.mode == "--keys":
        return "Type literal text with --type TEXT."
    if exc.code in _FILE_HINTS:
        return _FILE_HINTS[exc.code]
    if exc.code == "repl_error" and request.mode == "--repl":
        return "For a REPL without a preset pass --prompt REGEX (its prompt) with --repl NAME."
    return ""


_FILE_HINTS = {
    "edit_no_match": "--old must be the file's exact text, spaces and line ends included; "
    "--read PATH shows it.",
    "edit_ambiguous": "Give an --old that takes in more of the neighbouring lines, so that "
    "it occurs once.",
    "file_changed": "Run the same --edit again: it reads the file anew (or --stat PATH for "
    "the SHA-256 to give --if-sha256).",
    "edit_no_line": "--read PATH shows its lines; --line N counts from 1.",
    "backup_not_found": "tmux-send --backups lists the backups kept on the pane's host.",
}
