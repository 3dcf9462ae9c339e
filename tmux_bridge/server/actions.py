"""The actions on the real tmux: each one call (or two) of the facade.

Nothing here touches tmux itself: :class:`tmux_bridge.api.Bridge` does, with its rules,
refusals, locks, interrupts and audit log. Every action runs on a worker thread and
gets the :class:`~tmux_bridge.cancel.Cancel` the app triggers when the client goes away
or the server stops.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..api import Bridge
from ..cancel import Cancel
from ..errors import BridgeError
from ..report import error_document, to_document
from ..results import CallResult, JobResult, RunOptions
from ..target import Target
from .contract import DEFAULT_LINES, DEFAULT_WAIT_MS, Request, reply, screen_matcher

CLIENT = "tmux-bridge serve"  # the client named in the person's audit log
RUN_MODES = {
    "run": "command",
    "start_repl": "repl_start",
    "evaluate": "repl_eval",
    "close_repl": "repl_close",
    "read_file": "read",
    "write_file": "write",
    "edit_file": "edit",
    "edit_lines": "edit",
    "stat_file": "stat",
    "backups": "backups",
    "restore_file": "restore",
}


class TmuxBackend:
    """The actions, on the tmux server ``base`` names (its session is the default)."""

    mode = "tmux"

    def __init__(self, base: Target) -> None:
        self.base = base

    def bridge(self, request: Request) -> Bridge:
        """The facade for the request's session (default: the bridge session) and pane."""
        session = request.session or self.base.session
        return Bridge(self.base._replace(session=session, pane=request.pane), CLIENT)

    def handle(self, request: Request, cancel: Cancel) -> dict[str, Any]:
        """Carry out ``request``; raises :class:`BridgeError` when it cannot be done."""
        return HANDLERS[request.action](self, request, cancel)

    def health(self) -> dict[str, Any]:
        return {"session": self.base.session, "tmux": " ".join(self.base.tmux.socket_args)}


def _list_sessions(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    return reply(request.action, sessions=backend.bridge(request).sessions())


def _create_session(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    name = request.session or f"api-{os.urandom(4).hex()}"
    cwd = request.cwd or os.path.expanduser("~")
    info = backend.bridge(request).create_session(name, cwd, cancel)
    return reply(request.action, session=name, metadata=info.document())


def _kill_session(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    backend.bridge(request).kill_session(str(request.session))
    return reply(request.action, session=request.session)


def _send_keys(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    result = backend.bridge(request).send_input(request.text, request.keys, request.enter)
    return reply(request.action, session=request.session, metadata=_where(result))


def _capture_pane(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    lines = request.lines or DEFAULT_LINES
    result = backend.bridge(request).screen(lines, bool(request.join_wrapped))
    return reply(
        request.action,
        session=request.session,
        output=_contract_text(result),
        metadata={**_where(result), "lines": lines, "join_wrapped": bool(request.join_wrapped)},
    )


def _send_and_capture(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge = backend.bridge(request)
    lines = request.lines or DEFAULT_LINES
    if request.wait_for is None:
        bridge.send_input(request.text, request.keys, request.enter, settle=True)
        result = bridge.screen(lines, bool(request.join_wrapped))
    else:
        matches = request.matcher or screen_matcher(request.wait_for)
        bridge.send_input(request.text, request.keys, request.enter)
        timeout = (request.timeout_ms or DEFAULT_WAIT_MS) / 1000
        join = bool(request.join_wrapped)
        result = bridge.wait_for_screen(matches, timeout, lines, join, cancel)
    return reply(
        request.action,
        session=request.session,
        output=_contract_text(result),
        metadata={**_where(result), "matched": request.wait_for is not None},
    )


def _run_options(request: Request) -> RunOptions:
    defaults = RunOptions()
    return RunOptions(
        idle_timeout=request.timeout_ms / 1000 if request.timeout_ms else defaults.idle_timeout,
        max_time=request.max_time_ms / 1000 if request.max_time_ms else defaults.max_time,
        raw=request.raw,
        agent=request.agent,
    )


def _result_reply(
    request: Request, bridge: Bridge, call: Callable[[list[str]], CallResult]
) -> dict[str, Any]:
    """Make a call that types into the pane; its document (the same as ``tmux-send
    --json``) is ``metadata.result`` and its stdout the ``output``. An error that
    stopped it gets its error document from the app (:func:`error_metadata`)."""
    notes: list[str] = []
    result = call(notes)
    document = to_document(result, notes=notes)
    limits = (request.first, request.last, request.max_bytes)
    if limits != (None, None, None):  # the rule of tmux-send --first/--last/--max-bytes
        for name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
            bridge.fit_document(document, name, data or b"", limits)
    return _document_reply(request, bridge, document, "stdout")


def _document_reply(
    request: Request, bridge: Bridge, document: dict[str, Any], shown: str
) -> dict[str, Any]:
    """The reply to an action whose result is one JSON document (``tmux-send --json``):
    the document as ``metadata.result``, its field ``shown`` as ``output``."""
    return reply(
        request.action,
        session=bridge.target.session,
        output=document[shown],
        metadata={"result": document},
    )


def _run(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options = backend.bridge(request), _run_options(request)
    command = request.command if isinstance(request.command, str) else list(request.command or ())
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.run(command, options, notice=notes.append, cancel=cancel),
    )


def _start_repl(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options = backend.bridge(request), _run_options(request)
    name, command = str(request.name), str(request.command)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.start_repl(name, command, options, notice=notes.append, cancel=cancel),
    )


def _evaluate(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options = backend.bridge(request), _run_options(request)
    name, code = str(request.name), str(request.code)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.evaluate(name, code, options, notice=notes.append, cancel=cancel),
    )


def _close_repl(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options = backend.bridge(request), _run_options(request)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.close_repl(options, notice=notes.append, cancel=cancel),
    )


def _status(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    bridge = backend.bridge(request)
    return reply(request.action, session=bridge.target.session, metadata=bridge.status().document())


def _screen(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    join = request.join_wrapped is not False  # joined unless asked not to, as tmux-send does
    bridge = backend.bridge(request)
    document = to_document(bridge.screen(request.lines or 0, join))
    return _document_reply(request, bridge, document, "screen")


def _job_reply(request: Request, bridge: Bridge, result: JobResult) -> dict[str, Any]:
    """A job's document (``tmux-send --json`` of the job modes) as ``metadata.result``,
    its stdout as ``output``."""
    return _document_reply(request, bridge, result.document(), "stdout")


def _start_job(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    bridge = backend.bridge(request)
    command = request.command if isinstance(request.command, str) else list(request.command or ())
    return _job_reply(request, bridge, bridge.start_job(command, _run_options(request)))


def _job(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    bridge = backend.bridge(request)
    return _job_reply(request, bridge, bridge.job(str(request.job), everything=request.all))


def _wait_job(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge = backend.bridge(request)
    result = bridge.wait_job(str(request.job), _run_options(request), cancel=cancel)
    return _job_reply(request, bridge, result)


def _kill_job(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    bridge = backend.bridge(request)
    return _job_reply(request, bridge, bridge.kill_job(str(request.job)))


def _jobs(backend: TmuxBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    found = backend.bridge(request).jobs()
    return reply(request.action, metadata={"jobs": [job.document() for job in found]})


def error_metadata(request: Request, error: BridgeError) -> dict[str, Any]:
    """For a call that types into the pane and was refused: its error document (the
    same as ``tmux-send --json`` gives) as ``result``; nothing for other actions."""
    mode = RUN_MODES.get(request.action)
    if mode is None:
        return {}
    if request.action == "evaluate":
        text = request.code or ""
    elif request.path is not None or request.action == "backups":
        text = request.path or ""
    elif isinstance(request.command, tuple):
        text = " ".join(request.command)
    else:
        text = request.command or ""
    return {"result": error_document(error, text, mode)}


def _where(result: CallResult) -> dict[str, Any]:
    return {"pane": result.pane, "target": result.target}


def _contract_text(result: CallResult) -> str:
    """The contract's capture: the screen text without the newline after the last
    line (trailing blank lines are already gone)."""
    return (result.screen or "").removesuffix("\n")


# --- files ----------------------------------------------------------------------------


def _file_options(request: Request) -> RunOptions:
    return _run_options(request)._replace(raw=False)


def _utf8(text: str | None) -> bytes:
    return (text or "").encode("utf-8")  # the contract let no lone surrogate in


def _read_file(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options, path = backend.bridge(request), _file_options(request), str(request.path)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.read_file(path, options=options, notice=notes.append, cancel=cancel),
    )


def _write_file(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options, path = backend.bridge(request), _file_options(request), str(request.path)
    data, keep = _utf8(request.content), request.backup is not False
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.write_file(
            path, data, backup=keep, options=options, notice=notes.append, cancel=cancel,
            if_sha256=request.if_sha256,
        ),
    )  # fmt: skip


def _edit_file(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options, path = backend.bridge(request), _file_options(request), str(request.path)
    old, new, keep = _utf8(request.old), _utf8(request.new), request.backup is not False
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.edit_file(
            path, old, new, backup=keep, options=options, notice=notes.append, cancel=cancel,
            if_sha256=request.if_sha256,
        ),
    )  # fmt: skip


def _edit_lines(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    from ..results import LineEdit

    bridge, options, path = backend.bridge(request), _file_options(request), str(request.path)
    edit = LineEdit(request.edit, request.line or 0, _utf8(request.new))  # type: ignore[arg-type]
    keep = request.backup is not False
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.edit_lines(
            path, edit, backup=keep, options=options, notice=notes.append, cancel=cancel,
            if_sha256=request.if_sha256,
        ),
    )  # fmt: skip


def _stat_file(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options, path = backend.bridge(request), _file_options(request), str(request.path)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.stat_file(path, options=options, notice=notes.append, cancel=cancel),
    )


def _backups(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options = backend.bridge(request), _file_options(request)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.list_backups(
            request.path, options=options, notice=notes.append, cancel=cancel
        ),
    )


def _restore_file(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    bridge, options, path = backend.bridge(request), _file_options(request), str(request.path)
    return _result_reply(
        request,
        bridge,
        lambda notes: bridge.restore_file(
            path, request.backup_id, options=options, notice=notes.append, cancel=cancel,
            if_sha256=request.if_sha256,
        ),
    )  # fmt: skip


def _check_content(backend: TmuxBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    from ..report import check_document, describe_check

    bridge, notes = backend.bridge(request), list[str]()
    result = bridge.check_content(
        _utf8(request.content), request.kind, request.path or "-", _file_options(request),
        notice=notes.append, cancel=cancel,
    )  # fmt: skip
    return reply(
        request.action,
        session=bridge.target.session,
        output=describe_check(result),
        metadata={"result": check_document(result, notes)},
    )


Handler = Callable[[TmuxBackend, Request, Cancel], dict[str, Any]]
HANDLERS: dict[str, Handler] = {
    "list_sessions": _list_sessions,
    "create_session": _create_session,
    "kill_session": _kill_session,
    "send_keys": _send_keys,
    "capture_pane": _capture_pane,
    "send_and_capture": _send_and_capture,
    "run": _run,
    "start_repl": _start_repl,
    "evaluate": _evaluate,
    "close_repl": _close_repl,
    "status": _status,
    "screen": _screen,
    "start_job": _start_job,
    "job": _job,
    "wait_job": _wait_job,
    "kill_job": _kill_job,
    "jobs": _jobs,
    "read_file": _read_file,
    "write_file": _write_file,
    "edit_file": _edit_file,
    "edit_lines": _edit_lines,
    "stat_file": _stat_file,
    "backups": _backups,
    "restore_file": _restore_file,
    "check_content": _check_content,
}
