"""The facade every face calls: :class:`Bridge`.

The command-line tools, and the servers to come, reach the core only through this
class, so none of them can skip what it owns: the safety rules (validated REPL names,
key names and literal text, the refusals of the engines) and the person's audit log.

Every method runs on the calling thread and blocks until the call is done. Pass a
:class:`~tmux_bridge.cancel.Cancel` to stop it from another thread or an asyncio task
(``await asyncio.to_thread(bridge.run, cmd, cancel=cancel)``): the command is
interrupted as if the person pressed Ctrl-C. Errors are :class:`BridgeError` subclasses
with a stable ``code``; results are :class:`CallResult` values, and
:func:`tmux_bridge.report.to_document` makes the JSON document of either.

Every call's time limits are checked first (:func:`~tmux_bridge.results.check_options`:
``InvalidRequest`` for NaN, infinite, 0 or less, more than a week), before anything is
logged or typed. A call that types and waits is logged when it starts and when it ends
(:mod:`tmux_bridge.audit.log`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .cancel import Cancel
from .errors import EXIT_FAILURE, BridgeError, InvalidRequest, NoBridgeSession, PaneNotReady
from .results import CallRecord, CallResult, JobResult, Mode, RunOptions, check_options
from .target import Target
from .tuples import NamedTuple

if TYPE_CHECKING:
    from .agents.delivery import PromptReceipt
    from .agents.detect import Agent as Agent
    from .agents.inbox import Message
    from .agents.messaging import Attempt, Sent
    from .audit.log import LoggedCall as LoggedCall
    from .audit.stats import Friction as Friction
    from .audit.stats import FrictionSummary as FrictionSummary
    from .errors import InboxCorrupt
    from .infra.doctor import Check as EnvironmentCheck
    from .infra.saved import FittedStream as FittedStream
    from .infra.saved import Page as OutputPage
    from .pane.shapes import BridgeStatus, FitResult, NewSession, PaneEntry, PaneLabel, Upload
    from .pane.watch import Listener, Snapshot
    from .results import CheckResult, LineEdit
    from .text.fit import Limits

Sink = Callable[[bytes], None]
BRIDGE_KEY = "bridge"  # the bridge pane's entry in tend_agents' states
DEFAULT_OPTIONS = RunOptions()
Notice = Callable[[str], None]
# the calls kept as a pane's last command in the context
_REMEMBERED = ("command", "repl_start", "repl_eval", "write", "read", "edit", "restore")


class Origin(NamedTuple):
    """Where a message comes from when it names no sender: the pane the sending
    program runs in, and the agent name it declares. The core reads no environment
    for it; a face whose environment is the sender's passes :meth:`from_env` (the
    CLI, the stdio MCP server an agent client started), a server passes none."""

    pane: str | None = None  # the sender's pane id, ``$TMUX_PANE``
    name: str | None = None  # the sender's declared name, ``$TMUX_BRIDGE_AGENT``

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Origin:
        """The origin ``env`` tells: ``$TMUX_PANE`` and ``$TMUX_BRIDGE_AGENT``."""
        return cls(env.get("TMUX_PANE"), env.get("TMUX_BRIDGE_AGENT"))


NO_ORIGIN = Origin()  # a server's: the sender is named, or "unnamed"


class ServerWatch(Protocol):
    """A watch on a tmux server (:meth:`Bridge.server_changes`), from ``start`` to
    ``stop`` (``wait``: until its thread ended)."""

    def start(self) -> None: ...

    def ready(self, timeout: float = ...) -> bool:
        """Wait until the watch's control client is attached (tmux before 3.7 crashes if
        a session is created or closed while one is attaching): a face answers the
        subscriber after this. Whether it was within ``timeout`` seconds."""
        ...

    def stop(self, wait: bool = True) -> None: ...


def _ignore(_message: str) -> None:
    pass


class _ReplCall(NamedTuple):
    """What :meth:`Bridge.start_repl`, ``evaluate`` and ``repl`` were given."""

    name: str
    text: bytes | str
    options: RunOptions
    prompt: str | None
    template: str | None
    out: Sink
    notice: Notice
    cancel: Cancel | None


class _Collect:
    """A sink that keeps what it gets, for a caller that gave none."""

    def __init__(self) -> None:
        self.data = bytearray()

    def __call__(self, chunk: bytes) -> None:
        self.data += chunk


class Bridge:
    """A terminal a person watches, driven for an agent.

    ``target`` names the tmux server, session, pane and runtime directory (default:
    :meth:`Target.from_env`, the bridge pane of ``tmux-bridge-$USER``). ``client`` names
    the face or program in the audit log (``tmux-send``, an MCP client's name).
    """

    def __init__(self, target: Target | None = None, client: str = "python") -> None:
        self.target = target if target is not None else Target.from_env()
        self.client = client
        self.remember = True  # keep each command as the pane's last command in the context

    # --- commands ----------------------------------------------------------------------

    def run(
        self,
        command: bytes | str | Sequence[str],
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        stdout: Sink | None = None,
        stderr: Sink | None = None,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Run ``command`` in the pane's own shell, as if the agent had run it.

        ``command`` is shell code (``str``/``bytes``), or a list of words run as one
        command with exactly these arguments (quoted for the pane's shell). Output goes
        to ``stdout``/``stderr`` as it arrives, or is collected into the result.
        """
        from .infra.process import proc
        from .infra.tmux import drop_look_ahead
        from .pane.info import look_ahead

        # the pane's first look, and the process facts' first reading where that takes a
        # process (ps), on their way while the call's code is imported (a CLI's)
        look_ahead(self.target.tmux, self.target.session, self.target.pane)
        proc.look_ahead()
        try:
            from .calls.command import run_command

            out, err = stdout or _Collect(), stderr or _Collect()
            text = command if isinstance(command, (str, bytes)) else " ".join(command)
            return self._logged(
                "command",
                _text(text),
                options,
                lambda: run_command(self.target, command, options, (out, err), notice, cancel),
                out,
                err,
            )
        finally:
            drop_look_ahead()  # one the call never took (it failed before it looked)
            proc.forget()

    def check(
        self,
        command: bytes | str | Sequence[str],
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CheckResult:
        """A dry run of :meth:`run`: which pane and shell would run ``command``, whether
        that shell parses it, what its first word resolves to, whether the pane is ready,
        and the exit status the call would have (``would_exit``, 0 when it would run).

        ``command`` is never run. The first word is looked up in the pane's own shell
        (functions and aliases live only there) by one short line typed like any call
        (``builtin type -t -- NAME``), only when the pane is ready, the command parses
        and the word is literal. Waits for another call holding the pane as :meth:`run`
        does. A pane that is not ready is a result (``ready`` false, ``reason``,
        ``error_code``); raises what :meth:`run` raises before it finds a pane, and
        :class:`Cancelled`. A help for agents, not a security boundary.
        """
        from .calls.check import check_command, command_text

        started = time.monotonic()
        try:
            check_options(options)
            result = check_command(self.target, command, options, notice, cancel)
        except BridgeError as exc:
            self._log_check(command_text(None, command), started, None, exc)
            raise
        self._log_check(result.command, started, result)
        return result

    # --- jobs --------------------------------------------------------------------------

    def start_job(
        self,
        command: bytes | str | Sequence[str],
        options: RunOptions = DEFAULT_OPTIONS,
    ) -> JobResult:
        """Start ``command`` in the pane's own shell as a job: it keeps running (the pane
        busy, the person watching) after this returns, which is once it runs. Its output
        is spooled in the runtime directory for :meth:`job` and :meth:`wait_job`. Only
        ``options.max_time`` applies: how long to wait for the pane. Raises what
        :meth:`run` raises before anything is typed, and ``pane_busy`` naming the job
        when a job runs in the pane already. Logged."""
        from .calls import background, jobs

        text = command if isinstance(command, (str, bytes)) else " ".join(command)
        check_options(options)
        started = self._log_start("job", _text(text))
        try:
            spec = background.spec_of(self.target, command, options.max_time, options.agent)
            job_id = background.start(spec)
        except BridgeError as exc:
            self._log_error("job", _text(text), exc, started)
            raise
        result = jobs.peek(self.target.runtime_dir, job_id)
        self._log_job(result, started)
        return result

    def job(self, job_id: str, *, everything: bool = False) -> JobResult:
        """Job ``job_id`` now, with what it printed since the last read of it (each
        byte is handed out once, whoever reads); ``everything``: all of it from the
        start, the read position left alone."""
        from .calls import jobs

        return jobs.read(self.target.runtime_dir, job_id, everything)

    def wait_job(
        self,
        job_id: str,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        stdout: Sink | None = None,
        stderr: Sink | None = None,
        cancel: Cancel | None = None,
    ) -> JobResult:
        """Wait until job ``job_id`` ends, handing what it prints (from the last read
        on) to ``stdout``/``stderr`` as it comes, or collecting it into the result.
        ``options.idle_timeout`` (no new output) and ``options.max_time`` end the wait,
        not the job (``timed_out``); so does ``cancel`` (:class:`Cancelled`)."""
        from .calls.jobwait import wait

        check_options(options)
        out, err = stdout or _Collect(), stderr or _Collect()
        try:
            result = wait(self.target.runtime_dir, job_id, options, (out, err), cancel)
        except BridgeError as exc:
            exc.partial_stdout = bytes(out.data) if isinstance(out, _Collect) else b""
            exc.partial_stderr = bytes(err.data) if isinstance(err, _Collect) else b""
            raise
        if isinstance(out, _Collect):
            result = result._replace(stdout=bytes(out.data))
        if isinstance(err, _Collect):
            result = result._replace(stderr=bytes(err.data))
        return result

    def kill_job(self, job_id: str) -> JobResult:
        """Interrupt job ``job_id`` as a timeout would (Ctrl-C, then Ctrl-\\ after 3 s)
        and return it once it ended (``interrupted``); an ended job is returned as it
        is. Reads nothing of its output. Logged."""
        from .calls.jobwait import kill

        result = kill(self.target.runtime_dir, job_id)
        self._log_job(result, None, "job_kill")
        return result

    def jobs(self) -> list[JobResult]:
        """Every job known in the runtime directory, oldest first, without output;
        jobs that ended and were read more than a day ago are removed first."""
        from .calls.jobs import listing

        return listing(self.target.runtime_dir)

    @staticmethod
    def job_changes(before: dict[str, JobResult], now: list[JobResult]) -> list[dict[str, Any]]:
        """The events from one listing of :meth:`jobs` (``before``: id -> job) to the
        next: ``job-started``, ``job-ended`` (each with the job document)."""
        from .calls.jobs import job_events

        return job_events(before, now)

    def _log_job(self, result: JobResult, started: str | None, mode: str = "job") -> None:
        from .audit.log import ABSENT, AuditEntry, record

        entry = AuditEntry(
            call=started or ABSENT,
            id=result.job,
            mode=mode,
            pane=result.pane,
            target=result.target,
            client=self.client,
            command=result.command,
            exit_status=result.exit_code,
            state=result.state,
        )
        record(self.target.runtime_dir, entry)

    def check_content(
        self,
        data: bytes | str,
        kind: str | None = None,
        name: str = "-",
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CheckResult:
        """A check by kind: whether ``data`` is valid ``kind`` (``json``, ``yaml``,
        ``toml``, ``python``, ``jq``, ``sh``, ``bash``, ``zsh``, ``fish``; ``None``: by
        the extension of ``name``, a path), judged by the validators of the pane's host
        (``result.validator``; ``None`` when it has none). Nothing is written or run;
        ``result.valid``, ``result.error`` (line, column, message), ``would_exit`` 1
        when not valid. Raises :class:`InvalidRequest` for an unknown ``kind``."""
        from .calls.validate import check_content, kind_of

        started = time.monotonic()
        try:
            check_options(options)
            chosen = kind_of(name if name != "-" else None, kind)
            result = check_content(self.target, _bytes(data), chosen, name, options, notice, cancel)
        except BridgeError as exc:
            self._log_check(name, started, None, exc)
            raise
        self._log_check(name, started, result)
        return result

    # --- REPLs -------------------------------------------------------------------------

    def start_repl(
        self,
        name: str,
        command: bytes | str,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        prompt: str | None = None,
        template: str | None = None,
        stdout: Sink | None = None,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Start REPL ``name`` (a preset, or any name with ``prompt``, a regex for its
        prompt line) with shell command ``command``; done when its prompt shows."""
        out = stdout or _Collect()
        call = _ReplCall(name, command, options, prompt, template, out, notice, cancel)
        return self._logged(
            "repl_start", _text(command), options, lambda: self._repl("start", call), out
        )

    def evaluate(
        self,
        name: str,
        code: bytes | str,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        prompt: str | None = None,
        template: str | None = None,
        stdout: Sink | None = None,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Evaluate ``code`` in the open REPL ``name``; stdout is what it printed in
        response. Status 0, or 1 when the REPL reported an error."""
        out = stdout or _Collect()
        call = _ReplCall(name, code, options, prompt, template, out, notice, cancel)
        return self._logged(
            "repl_eval", _text(code), options, lambda: self._repl("evaluate", call), out
        )

    def repl(
        self,
        name: str,
        text: bytes | str,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        prompt: str | None = None,
        template: str | None = None,
        stdout: Sink | None = None,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Start REPL ``name`` with shell command ``text`` when none is open, else
        evaluate ``text`` in it: what ``tmux-send --repl NAME`` does."""
        out = stdout or _Collect()
        call = _ReplCall(name, text, options, prompt, template, out, notice, cancel)
        return self._logged("repl_eval", _text(text), options, lambda: self._repl("run", call), out)

    def _repl(self, engine: str, call: _ReplCall) -> CallRecord:
        """One REPL call: ``engine`` start, evaluate, or run (either, as needed)."""
        from .calls.repl import ReplRequest, evaluate, run_repl, start_repl

        run = {"start": start_repl, "evaluate": evaluate, "run": run_repl}[engine]
        request = ReplRequest(call.name, call.prompt, call.template)
        text = _bytes(call.text)
        return run(self.target, request, text, call.options, call.out, call.notice, call.cancel)

    def close_repl(
        self,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Quit the REPL tmux-send started the way it expects; nothing is typed when no
        REPL is open (status 0, with a note)."""
        from .calls.repl import close_repl

        return self._logged(
            "repl_close", "", options, lambda: close_repl(self.target, options, notice, cancel)
        )

    # --- files -------------------------------------------------------------------------

    def write_file(
        self,
        path: str,
        data: bytes,
        *,
        backup: bool = True,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
        if_sha256: str | None = None,
    ) -> CallResult:
        """Write ``data`` to ``path`` (relative to the pane shell's directory) through the
        pane's shell, as its user: SHA-256 checked there, moved into place atomically, an
        existing file first copied to a backup in the host's backup directory
        (``result.file.backup``) unless ``backup`` is false; bytes equal to the file's
        change nothing (``result.file.status`` ``unchanged``). With ``if_sha256`` the
        file must still have that SHA-256 (else ``file_changed``). Only
        ``options.max_time`` applies (the work is silent)."""
        from .calls.files import write_file

        return self._logged(
            "write",
            path,
            options,
            lambda: write_file(self.target, path, data, backup, options, notice, cancel, if_sha256),
        )

    def read_file(
        self,
        path: str,
        *,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Read the file at ``path`` through the pane's shell: ``result.stdout`` holds its
        exact bytes (SHA-256 checked), ``result.file`` its size, mode, mtime and digest."""
        from .calls.files import read_file

        return self._logged(
            "read", path, options, lambda: read_file(self.target, path, options, notice, cancel)
        )

    def edit_file(
        self,
        path: str,
        old: bytes | str,
        new: bytes | str,
        *,
        backup: bool = True,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
        if_sha256: str | None = None,
    ) -> CallResult:
        """Replace the one occurrence of ``old`` in the file at ``path`` with ``new``
        through the pane's shell (none or several: an error, the file untouched), after a
        backup unless ``backup`` is false; ``result.stdout`` is the unified diff. With
        ``if_sha256`` the file must have that SHA-256 when read (else ``file_changed``)."""
        from .calls.files import edit_file, replace_once

        return self._logged(
            "edit",
            path,
            options,
            lambda: edit_file(
                self.target,
                path,
                replace_once(_bytes(old), _bytes(new)),
                backup,
                options,
                notice,
                cancel,
                if_sha256,
            ),
        )

    def edit_lines(
        self,
        path: str,
        edit: LineEdit,
        *,
        backup: bool = True,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
        if_sha256: str | None = None,
    ) -> CallResult:
        """Replace, insert before or delete one line of the file at ``path``, or append
        to it (:class:`~tmux_bridge.results.LineEdit`), as :meth:`edit_file` edits: a
        line it does not have is ``edit_no_line``; ``result.stdout`` is the diff."""
        from .calls.filekeep import line_change
        from .calls.files import edit_file

        return self._logged(
            "edit",
            path,
            options,
            lambda: edit_file(
                self.target,
                path,
                line_change(edit),
                backup,
                options,
                notice,
                cancel,
                if_sha256,
            ),
        )

    def stat_file(
        self,
        path: str,
        *,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """The facts of the file at ``path`` (size, mode, mtime, SHA-256, MD5 in
        ``result.file``) without its content travelling."""
        from .calls.filekeep import stat_file

        return self._logged(
            "stat", path, options, lambda: stat_file(self.target, path, options, notice, cancel)
        )

    def list_backups(
        self,
        path: str | None = None,
        *,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """The backups kept on the pane's host (``result.backups``, oldest first): all,
        or those of the file at ``path``."""
        from .calls.filekeep import list_backups

        return self._logged(
            "backups",
            path or "",
            options,
            lambda: list_backups(self.target, path, options, notice, cancel),
        )

    def restore_file(
        self,
        path: str,
        backup_id: str | None = None,
        *,
        options: RunOptions = DEFAULT_OPTIONS,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
        if_sha256: str | None = None,
    ) -> CallResult:
        """Put back the newest backup of the file at ``path`` (or backup ``backup_id``),
        backing the current content up first, so a restore can be undone."""
        from .calls.filekeep import restore_file

        return self._logged(
            "restore",
            path,
            options,
            lambda: restore_file(self.target, path, backup_id, if_sha256, options, notice, cancel),
        )

    # --- keys and the screen -----------------------------------------------------------

    def send_keys(self, keys: Sequence[str]) -> CallResult:
        """Send tmux key names (``C-c``, ``Enter``, ``Up``, ``q``) to whatever is in
        front; ``screen`` is the screen once it settles. Takes no lock."""
        from .pane.keys import send_keys

        return self._screen_call("keys", " ".join(keys), lambda: send_keys(self.target, keys))

    def type_text(self, text: str, enter: bool = False, allow_control: bool = False) -> CallResult:
        """Type ``text`` literally into whatever is in front (control characters only
        when ``allow_control``), then Enter if asked; ``screen`` is the settled screen."""
        from .pane.keys import type_text

        shown = text + (" <Enter>" if enter else "")
        return self._screen_call(
            "type", shown, lambda: type_text(self.target, text, enter, allow_control)
        )

    def screen(self, lines: int = 0, join_wrapped: bool = True) -> CallResult:
        """The visible screen, with ``lines`` lines of history above it; wrapped
        lines joined unless ``join_wrapped`` is false."""
        from .pane.keys import screen

        return self._screen_call(
            "screen", "", lambda: screen(self.target, lines, join_wrapped), log=False
        )

    def send_input(
        self,
        text: str | None = None,
        keys: Sequence[str] = (),
        enter: bool = False,
        settle: bool = False,
    ) -> CallResult:
        """Type ``text`` literally (no control characters), then send the tmux key names
        ``keys``, then Enter, to whatever is in front. Returns at once with an empty
        ``screen``, or with ``settle`` once the screen settles (at most 2 s), with it.
        Takes no lock."""
        from .pane.keys import send_input

        mode: Mode = "type" if text else "keys"
        shown = " ".join([*([text] if text else []), *keys, *(["<Enter>"] if enter else [])])
        return self._screen_call(
            mode, shown, lambda: send_input(self.target, text, keys, enter, settle)
        )

    def wait_for_screen(
        self,
        matches: Callable[[str], bool],
        timeout: float,
        lines: int = 0,
        join_wrapped: bool = True,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """The screen (as :meth:`screen` gives it) once ``matches`` accepts it, looked at
        every 0.1 s; :class:`~tmux_bridge.errors.WaitTimeout` after ``timeout`` seconds."""
        from .pane.keys import wait_for_screen

        return self._screen_call(
            "screen",
            "",
            lambda: wait_for_screen(self.target, matches, timeout, lines, join_wrapped, cancel),
            log=False,
        )

    def status(self) -> BridgeStatus:
        """Whether the session runs, its shell, what is in front, the open REPL and a
        call in flight (``.document()``: the JSON form). Never raises for a missing
        session: ``running`` says."""
        from .pane.status import bridge_status

        return bridge_status(self.target)

    # --- sessions ----------------------------------------------------------------------

    def sessions(self) -> list[str]:
        """The sessions of the target's tmux server, sorted (empty when none runs)."""
        from .pane.sessions import list_sessions

        return list_sessions(self.target.tmux)

    def create_session(self, name: str, cwd: str, cancel: Cancel | None = None) -> NewSession:
        """Start session ``name`` (1-64 of ``A-Z a-z 0-9 _ -``) on the target's tmux
        server, running the person's login shell in ``cwd`` (absolute, existing), with
        the bridge pane's long scrollback, so the person can attach and watch. Returns
        once its shell shows its prompt (see :meth:`split`): its name, the pane's id and
        target, and ``cwd``; logged for the person."""
        from .pane.info import find_pane
        from .pane.sessions import new_session

        try:
            new_session(self.target, name, cwd)
        except BridgeError as exc:
            self._log_event("session_create", name, exc)
            raise
        self._log_event("session_create", name)
        pane = find_pane(self.target.tmux, name, None).pane
        self._await_shell(pane.pane_id, cancel)
        from .pane.shapes import NewSession

        return NewSession(name, pane.pane_id, pane.target, cwd)

    def kill_session(self, name: str) -> None:
        """End session ``name`` and what runs in it; logged for the person."""
        from .pane.sessions import kill_session

        try:
            kill_session(self.target.tmux, name)
        except BridgeError as exc:
            self._log_event("session_kill", name, exc)
            raise
        self._log_event("session_kill", name)

    def ensure_session(self, ready: bool = False, cancel: Cancel | None = None) -> str | None:
        """Create the target's session in the current directory unless it runs (and the
        runtime directory, mode 0700, refusing an unsafe one). Returns a note for the
        person when the shell had to start elsewhere (the home directory). With
        ``ready``, a session made now is returned once its shell shows its prompt (see
        :meth:`split`)."""
        from .pane.sessions import ensure_session

        made, note = ensure_session(self.target)
        if made and ready:
            self._await_shell(self.pane_id(), cancel)
        return note

    def attach(self) -> None:
        """Show the target's session to the person: inside a client of the same tmux
        server, switch it there; otherwise this process becomes ``tmux attach-session``
        (and does not return)."""
        from .pane.sessions import attach

        attach(self.target.tmux, self.target.session)

    # --- the audit log -----------------------------------------------------------------

    def log(self, count: int | None = None) -> list[LoggedCall]:
        """The latest ``count`` calls of the audit log (all when ``None``), oldest first,
        each once: its end entry, or its start (``running`` true or false) for a call
        that has not ended (``.document()``: the entry as logged). Refuses an unsafe
        runtime directory."""
        from .audit.log import LoggedCall, read
        from .infra.runtime import check_private_dir

        check_private_dir(self.target.runtime_dir)
        entries = read(self.target.runtime_dir, count, unfinished=True)
        return [LoggedCall.of(entry) for entry in entries]

    def stats(self, count: int | None = None) -> FrictionSummary:
        """The friction summary of the latest ``count`` calls (all when ``None``): per
        pane and overall, calls, failures by exit status, timeouts, refusals by reason,
        the slowest commands and those that failed most often (``.document()``: the
        JSON form)."""
        from .audit.stats import summarize

        return summarize(call.fields for call in self.log(count))

    # --- several panes -----------------------------------------------------------------

    def panes(self, every_session: bool = False, refresh: bool = False) -> list[PaneEntry]:
        """Every pane of the bridge session (``every_session``: of the tmux server): its
        target, label, shell, user, directory, what is in front, a call in flight, the
        platform and last command remembered for it. ``refresh`` first probes the
        platform of every pane whose shell waits at its prompt (in parallel)."""
        from .pane.layout import list_panes

        entries = list_panes(self.target, every_session)
        if not refresh:
            return entries
        from concurrent.futures import ThreadPoolExecutor

        ready = [e.pane for e in entries if e.front is not None and e.front.kind == "prompt"]
        with ThreadPoolExecutor(max_workers=max(len(ready), 1)) as pool:
            for pane_id in ready:
                pool.submit(self._quiet_info, pane_id)
        return list_panes(self.target, every_session)

    def _quiet_info(self, pane_id: str) -> None:
        with contextlib.suppress(BridgeError):  # busy meanwhile: its facts stay as they were
            Bridge(self.target.with_pane(pane_id), self.client).info()

    def info(
        self,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
        tools_max_age: float | None = None,
    ) -> tuple[CallResult, dict[str, str | None]]:
        """The platform of the pane's shell (OS, kernel, architecture, distribution,
        host, user, shell and its version, directory) and its host's tools (the flavour
        of grep, sed, awk, date, stat, find, xargs and tar, the GNU variants there, the
        package manager, and ``tools_at``: when they were probed), found by one probe
        command run in that shell, and remembered in the context. The tools are probed
        once per host (user@hostname) and again when older than ``tools_max_age``
        seconds (default :data:`~tmux_bridge.pane.context.TOOLS_MAX_AGE`, an hour; 0:
        now). Returns the probe's result and the facts (``None`` for those the probe
        could not tell)."""
        from .infra.process import proc
        from .pane.context import TOOLS_MAX_AGE, fresh_hosts, read_context
        from .pane.info import find_pane
        from .text.facts import parse, probe_command

        pane = find_pane(self.target.tmux, self.target.session, self.target.pane).pane
        kind = proc.shell_kind(pane.pid) or "posix"
        probe = Bridge(self.target, self.client)
        probe.remember = False  # the person's last command stays theirs
        context = read_context(self.target.runtime_dir)
        age = TOOLS_MAX_AGE if tools_max_age is None else tools_max_age
        known = " ".join(fresh_hosts(context, age, time.time()))
        result = probe.run(probe_command(kind, known), options, notice=notice, cancel=cancel)
        facts = parse((result.stdout or b"").decode("utf-8", "replace"), result.shell or kind)
        probed = facts.pop("tools_probed", None) is not None
        if result.far:  # a far shell answered: say through what
            facts["via"] = str(result.far["via"])
            facts["shell_version"] = facts["shell_version"] or str(result.far["shell_version"])
        if result.exit_status == 0:
            self._keep_facts(result, facts, context, probed)
        return result, facts

    def _keep_facts(
        self,
        result: CallResult,
        facts: dict[str, str | None],
        context: dict[str, Any],
        probed: bool,
    ) -> None:
        """Remember the platform for the pane and the tools for the host (when probed
        now), or complete ``facts`` with the host's tools kept from before."""
        from .pane.context import HOST_PREFIX, update_pane
        from .pane.records import pane_dir_name
        from .text.facts import TOOL_KEYS

        now = time.time()
        host = f"{HOST_PREFIX}{facts['user']}@{facts['hostname']}"
        if probed:
            tools = {key: facts.get(key) for key in TOOL_KEYS}
            update_pane(self.target.runtime_dir, host, {**tools, "at": now})
        else:
            kept = context.get(host, {})
            facts.update({key: kept.get(key) for key in TOOL_KEYS})
            now = kept.get("at", now)
        facts["tools_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        key = pane_dir_name(self.target.tmux, result.pane)
        update_pane(self.target.runtime_dir, key, {"platform": {**facts, "at": time.time()}})

    def label(self, name: str | None) -> PaneLabel:
        """Label the target's pane ``name`` (unique on the server; ``None`` removes
        it). Returns the pane's id, target and label."""
        from .pane.layout import set_label

        pane = set_label(self.target, name)
        from .pane.shapes import PaneLabel

        return PaneLabel(pane.pane_id, pane.target, pane.label or None)

    def split(
        self,
        label: str | None = None,
        horizontal: bool = False,
        command: str | None = None,
        cancel: Cancel | None = None,
    ) -> PaneLabel:
        """Open a new pane beside the target's pane (in its directory, the person's
        shell, their focus unchanged), label it, and type ``command`` there once its
        shell shows a prompt (a program such as ``ssh`` keeps running: nothing waits for
        it). Returns the new pane's id, target and label, and a ``note`` when its shell
        had to start in the home directory (tmux cannot start a pane in the other's).

        Returns once the new shell shows its prompt, so that a call into the pane right
        away finds it ready (a shell reading its startup files is busy; just after tmux
        forked it, the pane does not even run it yet); a shell that shows none within
        15 s is left to the call to report (with ``command``: raises
        :class:`~tmux_bridge.errors.PaneNotReady`)."""
        from .pane.layout import split, wait_for_new_shell

        pane, note = split(self.target, label, horizontal)
        if command is not None:
            wait_for_new_shell(self.target, pane.pane_id, cancel)
            Bridge(self.target.with_pane(pane.pane_id), self.client).type_text(command, enter=True)
        else:
            self._await_shell(pane.pane_id, cancel)
        from .pane.shapes import PaneLabel

        return PaneLabel(pane.pane_id, pane.target, pane.label or None, note)

    def _await_shell(self, pane_id: str, cancel: Cancel | None) -> None:
        """Wait for a new pane's shell to show its prompt; one that does not within the
        wait is left as it is: the pane exists, and a call into it says what is in the
        way."""
        import contextlib

        from .pane.layout import wait_for_new_shell

        with contextlib.suppress(PaneNotReady):
            wait_for_new_shell(self.target, pane_id, cancel)

    # --- the live view (tmux-bridge serve's /ws) ----------------------------------------

    def pane_id(self) -> str:
        """The id (``%N``) of the target's pane; raises when there is none."""
        from .pane.info import find_pane_id

        return find_pane_id(self.target.tmux, self.target.session, self.target.pane)

    def watch(self, listener: Listener) -> str:
        """Hand the pane's output bytes, exactly as the pane got them, to ``listener``
        (on a thread of the watch; it must not block) until :meth:`unwatch`; its
        ``resync`` is called when bytes may have been missed (a pipe re-armed, the pane
        gone). Returns the pane's id."""
        from .pane.watch import WATCHES

        pane_id = self.pane_id()
        WATCHES.add(self.target.tmux, pane_id, listener)
        return pane_id

    def unwatch(self, pane_id: str, listener: Listener) -> None:
        from .pane.watch import WATCHES

        WATCHES.remove(self.target.tmux, pane_id, listener)

    def snapshot(self, history: int = 5000) -> Snapshot:
        """The pane's scrollback (``history`` rows) and screen as terminal bytes that
        redraw it on a fresh terminal of its size."""
        from .pane.watch import snapshot

        return snapshot(self.target.tmux, self.pane_id(), history)

    def terminal_input(self, data: bytes) -> None:
        """Type VT bytes from a terminal (a browser's) into the pane: special keys as
        tmux key names, the rest byte for byte. Takes no lock, like :meth:`send_keys`."""
        from .pane.termio import send_terminal_input

        send_terminal_input(self.target.tmux, self.pane_id(), data)

    def fit(self, cols: int, rows: int) -> FitResult:
        """Ask for the pane's window to be ``cols`` x ``rows``: applied only while no
        person is attached (their terminal is never shrunk or pinned)."""
        from .pane.termio import fit

        return fit(self.target.tmux, self.pane_id(), cols, rows)

    def give_back_size(self) -> FitResult:
        """Undo :meth:`fit` when the terminal that asked for it is gone: the window takes
        the largest attached client's size, or with nobody attached its session's
        ``default-size``, and nothing pins it."""
        from .pane.termio import give_back

        return give_back(self.target.tmux, self.pane_id())

    def upload(self, name: str, mime: str, data: bytes) -> Upload:
        """Save a file (at most 8 MiB) in the runtime directory's ``uploads`` and paste
        it into the pane: text up to 256 KiB inline, else its absolute path. Logged."""
        import os

        from .pane.termio import upload

        directory = os.path.join(self.target.runtime_dir, "uploads")
        try:
            result = upload(self.target.tmux, self.pane_id(), directory, name, mime, data)
        except BridgeError as exc:
            self._log_event("upload", name, exc)
            raise
        self._log_event("upload", name)
        return result

    # --- agents ----------------------------------------------------------------------

    def agents(self) -> list[Agent]:
        """Every AI agent on the target's tmux server (a known agent CLI in front, or a
        session that declares one and whose program still runs), with its state
        (``working``, ``idle``, ``unknown``); empty when none runs. Reads only."""
        from .agents.detect import list_agents

        return list_agents(self.target.tmux)

    def server_changes(self, on_change: Callable[[str], None]) -> ServerWatch:
        """A watch on the target's tmux server, not started yet: from ``start`` to
        ``stop``, a tmux control-mode client of its own calls ``on_change(name)`` on its
        thread when sessions, windows, panes or their programs changed (``"%attached"``
        each time it (re)attached, ``"%no-session"`` when there is no session)."""
        from .infra.control import ControlClient

        return ControlClient(self.target.tmux, on_change)

    @staticmethod
    def agent_changes(before: dict[str, Agent], now: list[Agent]) -> list[dict[str, Any]]:
        """The lifecycle events from ``before`` (name -> agent) to ``now``:
        ``agent-removed``, ``agent-added``, ``agent-updated`` (the working/idle state
        alone is no event)."""
        from .agents.changes import agent_events

        return agent_events(before, now)

    def send_prompt(
        self,
        agent: str,
        text: str,
        *,
        replace_draft: bool = False,
        timeout: float = 30.0,
        cancel: Cancel | None = None,
    ) -> PromptReceipt:
        """Deliver ``text`` into the input box of ``agent`` (a name, pane id or target
        from :meth:`agents`) and submit it; returns the receipt once the target showed
        that it took the prompt. Waits up to ``timeout`` seconds for another sender
        and for the agent to be idle. Raises :class:`~tmux_bridge.errors.NotDelivered`
        (exit 1; ``receipt`` says why: busy, no input box, a draft in the box, Enter
        never taken), :class:`~tmux_bridge.errors.NoSuchAgent`, or what tmux raises
        (exit 125). A draft not ours is refused unless ``replace_draft``. Logged."""
        from .agents.delivery import deliver

        if not text.strip():
            from .errors import InvalidRequest

            raise InvalidRequest("the prompt is empty.")
        started = time.monotonic()
        try:
            receipt = deliver(
                self.target.tmux, self.target.runtime_dir, agent, text, replace_draft,
                timeout, cancel,
            )  # fmt: skip
        except BridgeError as exc:
            self._log_prompt("prompt", agent, text, started, None, exc)
            raise
        self._log_prompt("prompt", agent, text, started, receipt)
        return receipt

    def send_message(
        self,
        to: str,
        text: str,
        *,
        sender: str | None = None,
        origin: Origin = NO_ORIGIN,
        wait_reply: bool = False,
        timeout: float = 300.0,
        ttl: float | None = None,
        cancel: Cancel | None = None,
    ) -> Sent:
        """Store a message from agent ``sender`` (default: the agent in the pane of
        ``origin``, else the name it declares, else ``unnamed``; a name of 1 to 40 of
        A-Z a-z 0-9 _ . -) to agent
        ``to`` in the inbox, and deliver it as a prompt marked as from that agent if
        ``to`` is idle now; else it stays pending and the next tmux-bridge process (or
        ``serve``) delivers it, only to the program it was sent to and only for ``ttl``
        seconds (default ``$TMUX_BRIDGE_MESSAGE_TTL``, else 24 h; then it is
        ``expired``). With ``wait_reply``, retries until delivered, waits until ``to`` has
        worked and is idle again, and returns what it printed (the message is then
        ``read``); :class:`~tmux_bridge.errors.WaitTimeout` after ``timeout`` seconds.
        Raises :class:`~tmux_bridge.errors.SelfSend`, ``InvalidSender``,
        ``NoSuchAgent``; logged. An unreadable inbox is moved aside (a notice says
        where) and the message stored in a new one."""
        from .agents import inbox
        from .agents.messaging import Sent, message_ttl, try_deliver, wait_delivered
        from .agents.messaging import wait_reply as reply_of
        from .errors import InboxCorrupt

        started = time.monotonic()
        agent, name, verified = self._message_ends(to, sender, origin)
        if not text.strip():
            from .errors import InvalidRequest

            raise InvalidRequest("the message is empty.")
        ttl = message_ttl(ttl)
        tmux, run_dir = self.target.tmux, self.target.runtime_dir
        program = (agent.pane, agent.pid, agent.start) if agent else None
        recipient = agent.name if agent else to  # none runs yet: it waits for that name
        ends = (run_dir, name, recipient, text)
        try:
            message = inbox.add(*ends, ttl=ttl, program=program, verified=verified)
        except InboxCorrupt as exc:
            self._inbox_fault(exc)
            message = inbox.add(*ends, ttl=ttl, program=program, verified=verified)
        if wait_reply:
            attempt = wait_delivered(tmux, run_dir, message, started + timeout, cancel)
        else:
            attempt = try_deliver(tmux, run_dir, message, cancel)
        self._log_attempt(attempt, started)
        reply = None
        if wait_reply and attempt.receipt is not None:
            reply = reply_of(
                tmux, run_dir, attempt.message, attempt.receipt, started + timeout, cancel
            )
        final = inbox.get(run_dir, message.id) or attempt.message
        return Sent(final, attempt.receipt, reply)

    def _message_ends(
        self, to: str, sender: str | None, origin: Origin
    ) -> tuple[Agent | None, str, bool]:
        """The recipient (``None``: none runs yet, and ``to`` is a name it may start
        under), the sender's name, and whether it is verified; no self-sends. In an
        agent's pane the sender is that agent (verified): ``sender`` may only give its
        name or one of its aliases. Elsewhere it is the name given (``sender``, else
        ``origin``'s, else ``unnamed``): unverified, shown as ``from NAME (unverified)``."""
        from .agents.detect import list_agents, pick
        from .errors import InvalidSender, NoSuchAgent, SelfSend
        from .text.seams import is_name

        agents = list_agents(self.target.tmux)
        recipient = pick(agents, to)
        if recipient is None and not is_name(to):
            raise NoSuchAgent(
                f"no agent called {to!r} runs on this tmux server; "
                "list them with `tmux-bridge agents`."
            )
        here = origin.pane
        mine = next((a for a in agents if a.pane == here), None)
        if mine is not None and sender is not None and sender not in (mine.name, *mine.aliases):
            raise InvalidSender(
                f"this pane's agent is {mine.name}: a message from here is from it, so the "
                f"sender cannot be {sender!r}. Leave the sender out."
            )
        name = mine.name if mine else (sender or origin.name or "unnamed")
        if recipient is not None and (name == recipient.name or (here and here == recipient.pane)):
            raise SelfSend(f"{recipient.name} cannot send a message to itself.")
        if not is_name(name):
            whose = "the sender's name" if sender else "your agent's name, the default sender,"
            raise InvalidSender(
                f"{whose} {name!r} cannot head a message: a sender's name is 1 to 40 letters, "
                "digits, '_', '.' or '-'. Give one as the sender."
            )
        return recipient, name, mine is not None

    def inbox(
        self, agent: str | None = None, clear: bool = False, deliver: bool = True
    ) -> list[Message]:
        """The messages (sent or received by ``agent``, or all), oldest first, with their
        states; ``clear`` first removes those that are done (pending ones stay). ``agent``
        is any name that reaches a running agent (``codex``, ``2.0``: its messages are
        under its name), else a name as stored. Tries pending messages first (unless
        ``deliver`` is false: a look that types nothing), so none waits on an idle agent
        (and expires those whose time ran out). Raises
        :class:`~tmux_bridge.errors.InboxCorrupt` for an unreadable inbox, which it moved
        aside (the next call starts a new one), ``AmbiguousAgent``."""
        from .agents import inbox
        from .agents.detect import find_agent

        if agent is not None:
            found = find_agent(self.target.tmux, agent)
            agent = found.name if found is not None else agent
        if deliver:
            self.deliver_pending()
        if clear:
            inbox.clear(self.target.runtime_dir, agent)
        return inbox.listing(self.target.runtime_dir, agent)

    def read_message(self, message_id: int) -> Message:
        """Message ``message_id`` of the inbox (what ``tmux-bridge inbox --read N``
        prints: a long message is delivered as a line naming that command). Raises
        :class:`~tmux_bridge.errors.InvalidRequest` when there is none."""
        from .agents import inbox
        from .errors import InvalidRequest

        found = (
            inbox.get(self.target.runtime_dir, message_id)
            if inbox.exists(self.target.runtime_dir)
            else None
        )
        if found is None:
            raise InvalidRequest(
                f"there is no message #{message_id} in the inbox; `tmux-bridge inbox` lists them."
            )
        return found

    def deliver_pending(self, cancel: Cancel | None = None) -> list[Attempt]:
        """Try each pending message once (each recipient idle now gets its messages);
        each try is logged. Cheap when there is no inbox."""
        from .agents import inbox

        if not inbox.exists(self.target.runtime_dir):
            return []  # before the messaging modules: every tmux-bridge command comes here
        from .agents.messaging import deliver_pending
        from .errors import InboxCorrupt

        started = time.monotonic()
        try:
            attempts = deliver_pending(self.target.tmux, self.target.runtime_dir, cancel)
        except InboxCorrupt as exc:
            self._inbox_fault(exc)
            raise
        for attempt in attempts:
            self._log_attempt(attempt, started)
        return attempts

    def _inbox_fault(self, error: InboxCorrupt) -> None:
        """Tell the person that their inbox was moved aside (a notice: where it is now)."""
        from .agents.notices import notify

        notify(self.target.tmux, f"tmux-bridge: unreadable inbox moved to {error.moved_to}")

    def tend_agents(self, seen: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """One pass of the background work ``serve`` does every few seconds: deliver the
        pending messages whose recipients are idle, and show the person a notice for
        each agent that stopped working since ``seen`` (pane id -> (name, state), from
        the last pass). Returns the states now, for the next pass."""
        from .agents.notices import notify, waiting_notices
        from .errors import InboxError

        with contextlib.suppress(InboxError):  # the person got a notice; a new inbox next
            self.deliver_pending()
        now: dict[str, tuple[str, str]] = {a.pane: (a.name, a.state) for a in self.agents()}
        now[BRIDGE_KEY] = ("bridge", "password" if self._asks_password() else "")
        for text in waiting_notices(seen, now):
            notify(self.target.tmux, text)
        return now

    def _asks_password(self) -> bool:
        """Whether the bridge pane's program waits for the person's password."""
        from .infra.process import proc
        from .pane.info import find_pane

        try:
            pane = find_pane(self.target.tmux, self.target.session, self.target.pane).pane
        except BridgeError:
            return False
        return proc.asks_password(pane.pid, pane.tty) is True

    def _log_attempt(self, attempt: Attempt, started: float) -> None:
        """Log a try at a message; a delivery or failure is also a notice for the person."""
        message = attempt.message
        if attempt.changed:
            from .agents.notices import message_notice, notify

            text = message_notice(
                message.recipient, message.from_label(), message.id, message.state
            )
            notify(self.target.tmux, text)
        extra = {"message_id": message.id, "sender": message.sender, "state": message.state}
        self._log_prompt(
            "message", message.recipient, message.body, started, attempt.receipt,
            attempt.error, extra,
        )  # fmt: skip

    def _log_prompt(
        self,
        mode: str,
        agent: str,
        text: str,
        started: float,
        receipt: PromptReceipt | None,
        error: BridgeError | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """A prompt or message in the audit log: to whom, the text, the outcome."""
        from .audit.log import AuditEntry, record

        got = receipt if receipt is not None else getattr(error, "receipt", None)
        entry = AuditEntry(
            id=None,
            mode=mode,
            pane=got.pane if got else error.pane if error else None,
            target=got.target if got else None,
            agent=agent,
            client=self.client,
            command=text,
            exit_status=error.exit_code if error else 0,
            duration_s=round(time.monotonic() - started, 3),
            enters=got.enters if got else 0,
            error=str(error) if error else None,
            error_code=error.code if error else None,
        )
        record(self.target.runtime_dir, entry._replace(**(extra or {})))

    # --- the audit log -----------------------------------------------------------------

    def _logged(
        self,
        mode: Mode,
        command: str,
        options: RunOptions,
        call: Callable[[], CallRecord],
        out: Sink | None = None,
        err: Sink | None = None,
    ) -> CallResult:
        """Make the call, keep collected output in the result, and log it for the
        person: its start (once its options are valid, before anything is typed), then
        its end, the result or whatever stopped it, before the call lets go of its pane
        (so one pane's calls are logged in the order they ran). A process killed in
        between leaves the start alone in the log, which ``tmux-bridge log`` shows as
        never ended."""
        from .calls.frame import locks_kept

        started: str | None = None
        with locks_kept():
            try:
                check_options(options)
                started = self._log_start(mode, command)
                record = call()
            except Exception as exc:
                self._log_error(mode, command, exc, started)
                if isinstance(exc, BridgeError) and isinstance(out, _Collect):
                    exc.partial_stdout = bytes(out.data)
                if isinstance(exc, BridgeError) and isinstance(err, _Collect):
                    exc.partial_stderr = bytes(err.data)
                raise
            if isinstance(out, _Collect):
                record.stdout = bytes(out.data)
            if isinstance(err, _Collect):
                record.stderr = bytes(err.data)
            result = record.freeze()
            self._log(result, started)
        return result

    def _log_start(self, mode: Mode, command: str) -> str:
        """A call starts: its line in the audit log. Returns the key (``call``) its end
        is logged under."""
        from .audit.log import record, start_entry
        from .infra.process import proc

        proc.begin_call()  # the process facts of an earlier call never answer this one
        entry = start_entry(mode, self.target.pane, self.client, command)
        record(self.target.runtime_dir, entry)
        return str(entry.call)

    def _screen_call(
        self, mode: Mode, command: str, call: Callable[[], tuple[Any, str]], log: bool = True
    ) -> CallResult:
        started = time.monotonic()
        try:
            pane, shown = call()
        except BridgeError as exc:
            if log:
                self._log_error(mode, command, exc)
            raise
        record = CallRecord(mode, command, pane, RunOptions())
        record.status = 0
        record.screen = shown
        record.stdout = shown.encode("utf-8", "surrogateescape")
        record.stdout_bytes = len(record.stdout)
        record.duration = time.monotonic() - started
        result = record.freeze()
        if log:
            self._log(result)
        return result

    def _log(self, result: CallResult, started: str | None = None) -> None:
        from .audit.log import ABSENT, AuditEntry, record
        from .report import file_document

        self._remember(result)
        entry = AuditEntry(
            call=started or ABSENT,
            id=result.call_id,
            mode=result.mode,
            pane=result.pane,
            target=result.target,
            label=result.label or None,
            client=self.client,
            command=result.command,
            exit_status=result.exit_status,
            timed_out=result.timed_out,
            duration_s=round(result.duration, 3),
            stdout_bytes=result.stdout_bytes,
            stderr_bytes=result.stderr_bytes,
            error=None,
            error_code=None,
            file=file_document(result.file) if result.file else ABSENT,
            host=_where(result.far)[0],
            platform=_where(result.far)[1],
        )
        record(self.target.runtime_dir, entry)

    def _remember(self, result: CallResult) -> None:
        """Keep the pane's last command (with its status and time) in the context."""
        if not self.remember or result.mode not in _REMEMBERED:
            return
        from .pane.context import update_pane
        from .pane.records import pane_dir_name

        last = {
            "command": result.command,
            "status": result.status,
            "exit_status": result.exit_status,
            "timed_out": result.timed_out,
            "at": time.time(),
            "duration_s": round(result.duration, 3),
        }
        key = pane_dir_name(self.target.tmux, result.pane)
        far = {**result.far, "at": time.time()} if result.far else None
        update_pane(self.target.runtime_dir, key, {"last_command": last, "far": far})

    def _log_event(self, mode: str, name: str, error: BridgeError | None = None) -> None:
        """A line in the audit log for what is no call in a pane (a session made or
        ended through the API)."""
        from .audit.log import AuditEntry, record

        entry = AuditEntry(
            id=None,
            mode=mode,
            pane=None,
            target=name,
            label=None,
            client=self.client,
            command=name,
            exit_status=error.exit_code if error else 0,
            error=str(error) if error else None,
            error_code=error.code if error else None,
        )
        record(self.target.runtime_dir, entry)

    def _log_error(
        self, mode: Mode, command: str, error: Exception, started: str | None = None
    ) -> None:
        """The end of a call that ``error`` stopped (nothing typed, or a failure
        midway); an error not of ours is logged as ``internal_error``."""
        if isinstance(error, NoBridgeSession) and started is None:
            return  # nothing to review: no terminal was there
        from .audit.log import ABSENT, AuditEntry, record

        if isinstance(error, BridgeError):
            pane, status, text, code = error.pane, error.exit_code, str(error), error.code
        else:
            pane, status, code = None, EXIT_FAILURE, "internal_error"
            text = f"{type(error).__name__}: {error}"
        entry = AuditEntry(
            call=started or ABSENT,
            id=None,
            mode=mode,
            pane=pane or self.target.pane,
            target=None,
            label=None,
            client=self.client,
            command=command,
            exit_status=status,
            timed_out=None,
            duration_s=0.0,
            stdout_bytes=0,
            stderr_bytes=0,
            error=text,
            error_code=code,
        )
        record(self.target.runtime_dir, entry)

    def _log_check(
        self,
        command: str,
        started: float,
        result: CheckResult | None,
        error: BridgeError | None = None,
    ) -> None:
        """A dry run in the audit log (mode ``check``): the status it predicts, what kept
        the pane from being ready, and whether a lookup was typed into the pane."""
        if isinstance(error, NoBridgeSession):
            return
        from .audit.log import AuditEntry, record

        pane = result.pane if result is not None else error.pane if error else None
        reason = result.reason if result is not None else str(error)
        code = result.error_code if result is not None else error.code if error else None
        entry = AuditEntry(
            id=None,
            mode="check",
            pane=pane or self.target.pane,
            client=self.client,
            command=command,
            exit_status=result.would_exit if result else error.exit_code if error else None,
            timed_out=None,
            duration_s=round(time.monotonic() - started, 3),
            stdout_bytes=0,
            stderr_bytes=0,
            error=reason,
            error_code=code,
            typed_lookup=bool(result and result.typed_lookup),
        )
        record(self.target.runtime_dir, entry)

    # --- output that fits (issue 23: text/fit.py, infra/saved.py) ----------------------

    def fitted_stream(
        self, name: str, sink: Sink, first: int | None, last: int | None, max_bytes: int | None
    ) -> FittedStream:
        """A sink for stream ``name`` (stdout, stderr) that passes its head to ``sink``
        at once, holds a bounded tail and saves the whole stream once a cut is certain;
        its ``finish(call_id)`` sends the cut line and the tail."""
        from .infra.saved import FittedStream

        return FittedStream(self.target.runtime_dir, name, _limits(first, last, max_bytes), sink)

    def fit_document(
        self,
        document: dict[str, Any],
        name: str,
        data: bytes,
        limits: tuple[int | None, int | None, int | None],
        who: str = "tmux-bridge",
    ) -> None:
        """Cut ``document[name]`` (the bytes ``data``) to ``limits`` (first lines, last
        lines, bytes): head, cut line, tail; the whole saved (``NAME_file``)."""
        from .infra.saved import fit_document

        fit_document(document, name, data, _limits(*limits), self.target.runtime_dir, who)

    def fit_document_within(
        self,
        document: dict[str, Any],
        streams: dict[str, bytes],
        max_document: int,
        who: str = "tmux-bridge",
    ) -> None:
        """Cut the ``streams`` of ``document`` (name -> bytes) until its JSON text takes
        at most ``max_document`` bytes: each head, cut line and tail, the whole saved."""
        from .infra.saved import fit_document_within

        fit_document_within(document, streams, max_document, self.target.runtime_dir, who)

    def read_output(self, path_or_id: str, offset: int = 0, limit: int = 200) -> OutputPage:
        """Lines ``offset`` (from 0) to ``offset + limit`` of a saved stream: a path a
        cut line gave, or a call's id (``ID`` or ``ID.stderr``). Raises
        :class:`InvalidRequest` for a path outside the saved-output folder."""
        from .infra.saved import read_page

        if offset < 0 or not 1 <= limit <= 100_000:
            raise InvalidRequest(
                f"a page starts at line 0 or later and has 1 to 100000 lines; it was "
                f"offset {offset}, limit {limit}."
            )
        return read_page(self.target.runtime_dir, path_or_id, offset, limit)


def _limits(first: int | None, last: int | None, max_bytes: int | None) -> Limits:
    """The limits of a cut, checked: whole numbers, 0 or more."""
    from .text.fit import Limits

    for what, value in (("first", first), ("last", last), ("max_bytes", max_bytes)):
        if value is not None and (not isinstance(value, int) or value < 0):
            raise InvalidRequest(f"{what} must be a whole number, 0 or more; it was {value!r}.")
    return Limits(first, last, max_bytes)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _where(far: dict[str, str | int] | None) -> tuple[str, str]:
    """The host and platform (OS) a call ran on, for its log entry: the far shell's
    when one answered, else this machine's."""
    if far:
        return str(far.get("host") or "?"), str(far.get("os") or "?")
    uname = os.uname()
    return uname.nodename, uname.sysname


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def environment_checks() -> list[EnvironmentCheck]:
    """What ``tmux-bridge doctor`` reports: tmux's version, the shells, the runtime
    directory, the process facts (and what they cannot see here), the extras; each
    ``ok``, ``missing`` or ``note``, with what to install."""
    from .infra.doctor import checks

    return checks()
