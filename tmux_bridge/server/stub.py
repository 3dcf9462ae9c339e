"""Stub mode: the same actions in memory, for developing a client without a terminal.

Nothing is ever run. Each session is a list of screen lines starting at the prompt
``$ ``: text is typed onto the last line, Enter (or ``enter``) starts a new prompt line,
``C-c`` shows ``^C`` first; ``run`` shows its command and returns status 0 with no
output. Requests are validated as in tmux mode (the same parser, and the core's own
checks of names), and replies have the same shapes, including the result document of
``tmux-send --json`` for ``run`` and the REPL actions.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ..cancel import Cancel
from ..errors import (
    Cancelled,
    InvalidRequest,
    NoBridgeSession,
    NoSuchPane,
    ReplMismatch,
    ReplNotOpen,
    SessionExists,
    WaitTimeout,
)
from ..report import to_document
from ..results import (
    BridgeStatus,
    CallResult,
    Mode,
    NewSession,
    RunOptions,
    StatusRepl,
    new_call_id,
)
from ..rules import check_repl_name
from .contract import (
    DEFAULT_LINES,
    DEFAULT_WAIT_MS,
    FILE_ACTIONS,
    JOB_ACTIONS,
    Request,
    reply,
    screen_matcher,
)

PROMPT = "$ "
HEIGHT = 24  # rows of the simulated screen
MAX_ROWS = 10_000  # rows kept per session
POLL = 0.1  # seconds between two looks while waiting for wait_for
STUB_NOTE = "stub mode: nothing was run"
NEW_LINE_KEYS = {"enter", "c-m", "kpenter"}


class _Session:
    def __init__(self, name: str, pane_id: str, cwd: str) -> None:
        self.name = name
        self.pane_id = pane_id
        self.cwd = cwd
        self.rows = [PROMPT]
        self.repl: str | None = None

    def type(self, text: str) -> None:
        self.rows[-1] += text

    def new_line(self) -> None:
        self.rows.append(PROMPT)
        del self.rows[:-MAX_ROWS]

    def key(self, key: str) -> None:
        if key.lower() in NEW_LINE_KEYS:
            self.new_line()
        elif key.lower() == "c-c":
            self.type("^C")
            self.new_line()

    def text(self, lines: int) -> str:
        rows = [row.rstrip() for row in self.rows[-lines:]]
        while rows and not rows[-1]:
            rows.pop()
        return "\n".join(rows)


class StubBackend:
    """The actions on simulated sessions; ``default`` is the session used when a
    request names none (it exists from the start, as the bridge session would)."""

    mode = "stub"

    def __init__(self, default: str) -> None:
        self.default = default
        self.lock = threading.Lock()
        self.panes = 0
        self.sessions: dict[str, _Session] = {}
        self._add(default, os.path.expanduser("~"))

    def _add(self, name: str, cwd: str) -> _Session:
        session = _Session(name, f"%{self.panes}", cwd)
        self.panes += 1
        self.sessions[name] = session
        return session

    def health(self) -> dict[str, Any]:
        return {"session": self.default}

    def handle(self, request: Request, cancel: Cancel) -> dict[str, Any]:
        if request.action in JOB_ACTIONS:
            raise InvalidRequest(
                f"{request.action}: the stub runs no jobs (it has no shell); serve without "
                "--mode stub to use jobs."
            )
        if request.action in FILE_ACTIONS:
            raise InvalidRequest(
                f"{request.action}: the stub has no shell to handle files with; serve "
                "without --mode stub to use them."
            )
        if request.action in ("send_and_capture", "run", "start_repl", "evaluate", "close_repl"):
            return _SLOW[request.action](self, request, cancel)
        with self.lock:
            return _QUICK[request.action](self, request)

    def find(self, request: Request) -> _Session:
        """The session a request names (its pane, if given, must be that session's);
        call with the lock held."""
        name = request.session or self.default
        session = self.sessions.get(name)
        if session is None:
            raise NoBridgeSession(f"no session {name!r} in the stub.")
        if request.pane is not None and request.pane != session.pane_id:
            raise NoSuchPane(f"no pane {request.pane!r} in session {name!r} of the stub.")
        return session


def _list(stub: StubBackend, request: Request) -> dict[str, Any]:
    return reply(request.action, sessions=sorted(stub.sessions))


def _create(stub: StubBackend, request: Request) -> dict[str, Any]:
    name = request.session or f"api-{os.urandom(4).hex()}"
    if name in stub.sessions:
        raise SessionExists(f"a session {name!r} already runs in the stub.")
    cwd = request.cwd or os.path.expanduser("~")
    session = stub._add(name, cwd)
    info = NewSession(name, session.pane_id, f"{name}:0.0", cwd)
    return reply(request.action, session=name, metadata=info.document())


def _kill(stub: StubBackend, request: Request) -> dict[str, Any]:
    del stub.sessions[stub.find(request).name]
    return reply(request.action, session=request.session)


def _send(session: _Session, request: Request) -> None:
    if request.text:
        session.type(request.text)
    for key in request.keys:
        session.key(key)
    if request.enter:
        session.new_line()


def _send_keys(stub: StubBackend, request: Request) -> dict[str, Any]:
    session = stub.find(request)
    _send(session, request)
    return reply(request.action, session=request.session, metadata=_where(session))


def _capture(stub: StubBackend, request: Request) -> dict[str, Any]:
    session = stub.find(request)
    lines = request.lines or DEFAULT_LINES
    metadata = {**_where(session), "lines": lines, "join_wrapped": bool(request.join_wrapped)}
    output = session.text(lines + HEIGHT)
    return reply(request.action, session=request.session, output=output, metadata=metadata)


def _status(stub: StubBackend, request: Request) -> dict[str, Any]:
    name = request.session or stub.default
    session = stub.sessions.get(name)
    if session is None:
        status = BridgeStatus(name, False)
    else:
        repl = StatusRepl(session.repl, None) if session.repl else None
        status = BridgeStatus(name, True, session.pane_id, "stub", None, session.cwd, None, repl)
    return reply(request.action, session=name, metadata=status.document())


def _screen(stub: StubBackend, request: Request) -> dict[str, Any]:
    session = stub.find(request)
    text = session.text((request.lines or 0) + HEIGHT)
    shown = text + "\n" if text else ""
    document = to_document(_result(session, "screen", "", screen=shown))
    return reply(request.action, session=session.name, output=shown, metadata={"result": document})


def _send_and_capture(stub: StubBackend, request: Request, cancel: Cancel) -> dict[str, Any]:
    with stub.lock:
        session = stub.find(request)
        _send(session, request)
    lines = (request.lines or DEFAULT_LINES) + HEIGHT
    matches = request.matcher
    if matches is None and request.wait_for:
        matches = screen_matcher(request.wait_for)
    deadline = time.monotonic() + (request.timeout_ms or DEFAULT_WAIT_MS) / 1000
    while True:
        with stub.lock:
            output = session.text(lines)
        if matches is None or matches(output):
            break
        _pause(deadline, cancel)
    return reply(
        request.action,
        session=request.session,
        output=output,
        metadata={**_where(session), "matched": matches is not None},
    )


def _pause(deadline: float, cancel: Cancel) -> None:
    """Wait POLL seconds before the next look; raise at the deadline or on cancel."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise WaitTimeout("what was waited for did not show in time.")
    if select.select([cancel.fd], [], [], min(POLL, left))[0]:
        raise Cancelled(cancel.signum or signal.SIGINT)


def _typed(
    stub: StubBackend,
    request: Request,
    mode: Mode,
    shown: str,
    check: Callable[[_Session], None],
) -> dict[str, Any]:
    """A call that would type into the pane: checked against the simulated REPL state,
    shown on the screen, answered with a result document (status 0, no output)."""
    with stub.lock:
        session = stub.find(request)
        check(session)
        session.type(shown)
        session.new_line()
    document = to_document(_result(session, mode, shown), notes=[STUB_NOTE])
    return reply(request.action, session=session.name, output="", metadata={"result": document})


def _run(stub: StubBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    command = request.command
    shown = command if isinstance(command, str) else " ".join(command or ())

    def check(session: _Session) -> None:
        if session.repl is not None:
            raise ReplMismatch(
                f"the REPL {session.repl!r} is open: evaluate code in it, or close it.",
                repl=session.repl,
            )

    return _typed(stub, request, "command", shown, check)


def _start_repl(stub: StubBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    name = str(request.name)
    check_repl_name(name)

    def check(session: _Session) -> None:
        if session.repl is not None:
            raise ReplMismatch(f"the REPL {session.repl!r} is open already.", repl=session.repl)
        session.repl = name

    return _typed(stub, request, "repl_start", str(request.command), check)


def _evaluate(stub: StubBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    name = str(request.name)
    check_repl_name(name)

    def check(session: _Session) -> None:
        if session.repl is None:
            raise ReplNotOpen(f"no REPL is open; start {name!r} first.", wanted=name)
        if session.repl != name:
            raise ReplMismatch(
                f"the REPL {session.repl!r} is open, not {name!r}.", session.repl, name
            )

    return _typed(stub, request, "repl_eval", str(request.code), check)


def _close_repl(stub: StubBackend, request: Request, _cancel: Cancel) -> dict[str, Any]:
    def check(session: _Session) -> None:
        session.repl = None

    return _typed(stub, request, "repl_close", "", check)


def _where(session: _Session) -> dict[str, Any]:
    return {"pane": session.pane_id, "target": f"{session.name}:0.0"}


def _result(session: _Session, mode: Mode, command: str, screen: str | None = None) -> CallResult:
    """A result like the core's, for what the stub pretends to have done."""
    stdout = (screen or "").encode()
    return CallResult(
        mode=mode,
        call_id=new_call_id(),
        command=command,
        pane=session.pane_id,
        shell="stub",
        repl=session.repl,
        status=0,
        exit_status=0,
        timed_out=None,
        cancelled=None,
        signals_sent=(),
        prompt_back=True,
        shell_exited=False,
        shell_restarted=False,
        waited_for_input=False,
        stdout=stdout,
        stderr=b"",
        stdout_bytes=len(stdout),
        stderr_bytes=0,
        duration=0.0,
        options=RunOptions(),
        pane_tail=(),
        notes=(),
        screen=screen,
        target=f"{session.name}:0.0",
    )


_QUICK: dict[str, Callable[[StubBackend, Request], dict[str, Any]]] = {
    "list_sessions": _list,
    "create_session": _create,
    "kill_session": _kill,
    "send_keys": _send_keys,
    "capture_pane": _capture,
    "status": _status,
    "screen": _screen,
}
_SLOW: dict[str, Callable[[StubBackend, Request, Cancel], dict[str, Any]]] = {
    "send_and_capture": _send_and_capture,
    "run": _run,
    "start_repl": _start_repl,
    "evaluate": _evaluate,
    "close_repl": _close_repl,
}
