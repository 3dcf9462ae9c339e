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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .cancel import Cancel
from .errors import BridgeError, NoBridgeSession
from .results import CallRecord, CallResult, Mode, RunOptions
from .target import Target

Sink = Callable[[bytes], None]
DEFAULT_OPTIONS = RunOptions()
Notice = Callable[[str], None]


def _ignore(_message: str) -> None:
    pass


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
        from .command import run_command

        out, err = stdout or _Collect(), stderr or _Collect()
        text = command if isinstance(command, (str, bytes)) else " ".join(command)
        return self._logged(
            "command",
            _text(text),
            lambda: run_command(self.target, command, options, (out, err), notice, cancel),
            out,
            err,
        )

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
        from .repl import ReplRequest, start_repl

        out = stdout or _Collect()
        request = ReplRequest(name, prompt, template)
        return self._logged(
            "repl_start",
            _text(command),
            lambda: start_repl(self.target, request, _bytes(command), options, out, notice, cancel),
            out,
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
        from .repl import ReplRequest, evaluate

        out = stdout or _Collect()
        request = ReplRequest(name, prompt, template)
        return self._logged(
            "repl_eval",
            _text(code),
            lambda: evaluate(self.target, request, _bytes(code), options, out, notice, cancel),
            out,
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
        from .repl import ReplRequest, run_repl

        out = stdout or _Collect()
        request = ReplRequest(name, prompt, template)
        return self._logged(
            "repl_eval",
            _text(text),
            lambda: run_repl(self.target, request, _bytes(text), options, out, notice, cancel),
            out,
        )

    def close_repl(
        self,
        options: RunOptions = DEFAULT_OPTIONS,
        *,
        notice: Notice = _ignore,
        cancel: Cancel | None = None,
    ) -> CallResult:
        """Quit the REPL tmux-send started the way it expects; nothing is typed when no
        REPL is open (status 0, with a note)."""
        from .repl import close_repl

        return self._logged(
            "repl_close", "", lambda: close_repl(self.target, options, notice, cancel)
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
    ) -> CallResult:
        """Write ``data`` to ``path`` (relative to the pane shell's directory) through the
        pane's shell, as its user: SHA-256 checked there, moved into place atomically, an
        existing file first copied to a backup (``result.file.backup``) unless
        ``backup`` is false. Only ``options.max_time`` applies (the work is silent)."""
        from .files import write_file

        return self._logged(
            "write",
            path,
            lambda: write_file(self.target, path, data, backup, options, notice, cancel),
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
        from .files import read_file

        return self._logged(
            "read", path, lambda: read_file(self.target, path, options, notice, cancel)
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
    ) -> CallResult:
        """Replace the one occurrence of ``old`` in the file at ``path`` with ``new``
        through the pane's shell (none or several: an error, the file untouched), after a
        backup unless ``backup`` is false; ``result.stdout`` is the unified diff."""
        from .files import edit_file

        return self._logged(
            "edit",
            path,
            lambda: edit_file(
                self.target, path, _bytes(old), _bytes(new), backup, options, notice, cancel
            ),
        )

    # --- keys and the screen -----------------------------------------------------------

    def send_keys(self, keys: Sequence[str]) -> CallResult:
        """Send tmux key names (``C-c``, ``Enter``, ``Up``, ``q``) to whatever is in
        front; ``screen`` is the screen once it settles. Takes no lock."""
        from .keys import send_keys

        return self._screen_call("keys", " ".join(keys), lambda: send_keys(self.target, keys))

    def type_text(self, text: str, enter: bool = False, allow_control: bool = False) -> CallResult:
        """Type ``text`` literally into whatever is in front (control characters only
        when ``allow_control``), then Enter if asked; ``screen`` is the settled screen."""
        from .keys import type_text

        shown = text + (" <Enter>" if enter else "")
        return self._screen_call(
            "type", shown, lambda: type_text(self.target, text, enter, allow_control)
        )

    def screen(self, lines: int = 0) -> CallResult:
        """The visible screen, or the last ``lines`` lines of history and screen."""
        from .keys import screen

        return self._screen_call("screen", "", lambda: screen(self.target, lines), log=False)

    def status(self) -> dict[str, Any]:
        """Whether the session runs, its shell, what is in front, the open REPL and a
        call in flight. Never raises for a missing session: ``running`` says."""
        from .status import bridge_status

        return bridge_status(self.target)

    # --- the audit log -----------------------------------------------------------------

    def _logged(
        self,
        mode: Mode,
        command: str,
        call: Callable[[], CallRecord],
        out: Sink | None = None,
        err: Sink | None = None,
    ) -> CallResult:
        """Make the call, keep collected output in the result, and log it (or the error
        that stopped it) for the person."""
        try:
            record = call()
        except BridgeError as exc:
            self._log_error(mode, command, exc)
            raise
        if isinstance(out, _Collect):
            record.stdout = bytes(out.data)
        if isinstance(err, _Collect):
            record.stderr = bytes(err.data)
        result = record.freeze()
        self._log(result)
        return result

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
        record = CallRecord(mode, command, pane.pane_id, RunOptions())
        record.status = 0
        record.screen = shown
        record.stdout = shown.encode("utf-8", "surrogateescape")
        record.stdout_bytes = len(record.stdout)
        record.duration = time.monotonic() - started
        result = record.freeze()
        if log:
            self._log(result)
        return result

    def _log(self, result: CallResult) -> None:
        from .audit import record
        from .report import file_document

        record(
            self.target.runtime_dir,
            {
                "id": result.call_id,
                "mode": result.mode,
                "pane": result.pane,
                "client": self.client,
                "command": result.command,
                "exit_status": result.exit_status,
                "timed_out": result.timed_out,
                "duration_s": round(result.duration, 3),
                "stdout_bytes": result.stdout_bytes,
                "stderr_bytes": result.stderr_bytes,
                "error": None,
                "error_code": None,
                **({"file": file_document(result.file)} if result.file else {}),
            },
        )

    def _log_error(self, mode: Mode, command: str, error: BridgeError) -> None:
        if isinstance(error, NoBridgeSession):
            return  # nothing to review: no terminal was there
        from .audit import record

        record(
            self.target.runtime_dir,
            {
                "id": None,
                "mode": mode,
                "pane": self.target.pane,
                "client": self.client,
                "command": command,
                "exit_status": error.exit_code,
                "timed_out": None,
                "duration_s": 0.0,
                "stdout_bytes": 0,
                "stderr_bytes": 0,
                "error": str(error),
                "error_code": error.code,
            },
        )


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")
