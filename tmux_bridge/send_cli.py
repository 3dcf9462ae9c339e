"""``tmux-send``: the agent's side. Parses options, calls the core, maps outcomes to exit codes."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import time
from collections.abc import Sequence

import click

from . import __version__
from .errors import EXIT_FAILURE, EXIT_SIGINT, BridgeError, NoBridgeSession, exit_status
from .transport import RunOptions, RunResult, run_command

HELP = """Run COMMAND in the tmux-bridge pane's shell, as if you had run it yourself.

\b
COMMAND runs in the person's own interactive shell, so cd, export, functions
and aliases persist between calls. One argument is shell code (pipes, ;,
newlines); several are joined with single spaces, as ssh does. With - as
COMMAND the command text is read from stdin.

\b
stdout, stderr and the exit status are the command's own. The command sees
terminals on stdin, stdout and stderr; the person watching the pane sees it
run and can type into it (passwords, [Y/n] prompts).

\b
REPL mode keeps an interpreter open in the pane between calls: --repl NAME
starts it (COMMAND is the shell command) and then evaluates COMMAND as code
in it; stdout is what the REPL printed in response; --close quits it.

\b
Examples:
  tmux-send -- ls -la
  tmux-send -- 'cd /srv && make test 2>&1 | tail -5'
  tmux-send --timeout 60 -- sudo apt-get install -y jq
  tmux-send - < script.sh
  tmux-send --repl python -- python3
  tmux-send --repl python -- 'import math; math.pi * 2'
  tmux-send --close

\b
Exit status:
  0-255  the command's own (128+N when a signal N killed it);
         in REPL mode 0, or 1 when the REPL reported an error
  124    --timeout or --max-time fired (Ctrl-C, then Ctrl-\\ after 3 s)
  125    tmux-send could not run or finish the command (see stderr)
  2      bad usage
  130    tmux-send itself was interrupted (SIGINT); 143 for SIGTERM
"""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Stream:
    """Writes straight to a file descriptor; a reader that went away is ignored."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open = True

    def __call__(self, data: bytes) -> None:
        if not self.open:
            return
        try:
            _write_all(self.fd, data)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            self.open = False


class _Output:
    """Where a call's output goes: streamed to our stdout/stderr, or, with --json,
    collected for the one JSON object printed at the end."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.stdout_data = bytearray()
        self.stderr_data = bytearray()
        self.notes: list[str] = []
        self._out, self._err = _Stream(1), _Stream(2)

    def stdout(self, data: bytes) -> None:
        if self.as_json:
            self.stdout_data += data
        else:
            self._out(data)

    def stderr(self, data: bytes) -> None:
        if self.as_json:
            self.stderr_data += data
        else:
            self._err(data)
            self._err_line_open = not data.endswith(b"\n")

    _err_line_open = False

    def notice(self, message: str) -> None:
        """tmux-send's own remarks (a wait for the lock, a command waiting for input):
        stderr, on a line of their own, or a JSON note."""
        if self.as_json:
            self.notes.append(message)
        else:
            lead = "\n" if self._err_line_open else ""
            self._err_line_open = False
            self._err((lead + message + "\n").encode("utf-8", "surrogateescape"))


def _command_text(command: Sequence[str]) -> bytes:
    if not command:
        raise click.UsageError("no COMMAND given (put it after --, or - to read it from stdin)")
    if list(command) == ["-"]:
        return sys.stdin.buffer.read()
    return " ".join(os.fsencode(arg).decode("utf-8", "surrogateescape") for arg in command).encode(
        "utf-8", "surrogateescape"
    )


def _positive(_ctx: click.Context, param: click.Parameter, value: float) -> float:
    if value <= 0:
        raise click.BadParameter("must be a positive number of seconds", param=param)
    return value


@click.command(
    help=HELP,
    context_settings={
        "help_option_names": ["-h", "--help"],
        "allow_interspersed_args": False,
        "max_content_width": 100,
    },
)
@click.option(
    "-t",
    "--timeout",
    type=float,
    default=10.0,
    show_default=True,
    callback=_positive,
    help="Idle timeout: seconds without output before the command is interrupted.",
)
@click.option(
    "--max-time",
    type=float,
    default=120.0,
    show_default=True,
    callback=_positive,
    help="Overall timeout in seconds, counting any wait for another tmux-send.",
)
@click.option(
    "--raw",
    is_flag=True,
    help="Pass output through byte for byte (keep colours and carriage-return redraws).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON object (stdout, stderr, exit_status, timed_out, ...) and nothing else.",
)
@click.option(
    "--repl",
    "repl_name",
    metavar="NAME",
    help="REPL mode: start REPL NAME with the shell command COMMAND, or, once it is open, "
    "evaluate COMMAND as code in it. Presets: python, node, psql, sqlite, nix.",
)
@click.option(
    "--prompt",
    metavar="REGEX",
    help="With --repl, for a REPL without a preset: a regex matching its prompt line.",
)
@click.option(
    "--eval-template",
    metavar="TEXT",
    help="With --prompt: type each evaluation as TEXT with {code} replaced by COMMAND.",
)
@click.option("--close", is_flag=True, help="Quit the REPL that --repl opened, the way it expects.")
@click.option(
    "--keys",
    is_flag=True,
    help="Send the arguments as tmux key names (C-c, Enter, Up, q) to whatever is in front; "
    "print the screen once it settles.",
)
@click.option(
    "--type",
    "type_text",
    metavar="TEXT",
    help="Type TEXT literally into whatever is in front (no key names); print the screen.",
)
@click.option("--enter", is_flag=True, help="With --type: press Enter after the text.")
@click.option(
    "--allow-control",
    is_flag=True,
    help="With --type: let control characters through (they may act as Ctrl-C and such).",
)
@click.option("--screen", is_flag=True, help="Print the visible screen of the bridge pane.")
@click.option(
    "--lines",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --screen: the last N lines of history and screen instead.",
)
@click.option("--guide", is_flag=True, help="Print instructions for AI agents and exit.")
@click.version_option(__version__, "-V", "--version", prog_name="tmux-send")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def cli(
    timeout: float,
    max_time: float,
    raw: bool,
    as_json: bool,
    repl_name: str | None,
    prompt: str | None,
    eval_template: str | None,
    close: bool,
    keys: bool,
    type_text: str | None,
    enter: bool,
    allow_control: bool,
    screen: bool,
    lines: int | None,
    guide: bool,
    command: tuple[str, ...],
) -> int:
    if guide:
        from .guide import GUIDE

        click.echo(GUIDE, nl=False)
        return 0
    modes = [
        name
        for name, on in (
            ("--repl", repl_name is not None),
            ("--close", close),
            ("--keys", keys),
            ("--type", type_text is not None),
            ("--screen", screen),
        )
        if on
    ]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} do not go together")
    mode = modes[0] if modes else "command"
    if (prompt is not None or eval_template is not None) and mode != "--repl":
        raise click.UsageError("--prompt and --eval-template go with --repl NAME")
    if (enter or allow_control) and mode != "--type":
        raise click.UsageError("--enter and --allow-control go with --type TEXT")
    if lines is not None and mode != "--screen":
        raise click.UsageError("--lines goes with --screen")
    if mode in ("--close", "--type", "--screen") and command:
        raise click.UsageError(f"{mode} takes no COMMAND")
    output = _Output(as_json)
    options = RunOptions(idle_timeout=timeout, max_time=max_time, raw=raw)
    if mode == "--close":
        return _close(options, output)
    if mode in ("--keys", "--type", "--screen"):
        return _screen_mode(mode, list(command), type_text, enter, allow_control, lines, output)
    text = _command_text(command)
    try:
        if repl_name is not None:
            from .repl import ReplRequest, run_repl  # REPL mode only: keep it off the hot path

            request = ReplRequest(repl_name, prompt, eval_template)
            result = run_repl(request, text, options, output.stdout, output.notice)
        else:
            result = run_command(text, options, output.stdout, output.stderr, output.notice)
    except BridgeError as exc:
        return _failed(output, exc, text.decode("utf-8", "surrogateescape"), mode)
    code = exit_status(result.status, result.timed_out, result.own_signal)
    report = describe(result, options)
    if report and not as_json:
        output.stderr(report.encode("utf-8", "surrogateescape"))
    _log(result.command, "repl" if repl_name else "command", code, result, output)
    if as_json:
        _print_json(output, result, code, report)
    return code


def _failed(output: _Output, exc: BridgeError, command: str, mode: str) -> int:
    """tmux-send could not do what was asked: the error on stderr or in the JSON."""
    if output.as_json:
        _print_json(output, None, exc.exit_code, None, error=exc.render(), command=command)
    else:
        click.echo(exc.render(), err=True)
    if not isinstance(exc, NoBridgeSession):
        _log(command, mode.lstrip("-"), exc.exit_code, None, output, error=str(exc))
    return exc.exit_code


def _close(options: RunOptions, output: _Output) -> int:
    from .repl import close_repl

    try:
        message, result = close_repl(options, output.notice)
    except BridgeError as exc:
        return _failed(output, exc, "", "--close")
    if result is not None and result.status != 0:
        report = describe(result, options)
        code = EXIT_FAILURE
    else:
        report = f"tmux-send: {message}\n"
        code = 0
    if output.as_json:
        _print_json(output, result, code, report, command=result.command if result else "")
    else:
        output.stderr(report.encode())
    if result is not None:
        _log(result.command, "close", code, result, output)
    return code


def _screen_mode(
    mode: str,
    keys: list[str],
    text: str | None,
    enter: bool,
    allow_control: bool,
    lines: int | None,
    output: _Output,
) -> int:
    from . import keys as keyboard

    started = time.monotonic()
    try:
        if mode == "--keys":
            if not keys:
                raise click.UsageError("--keys needs at least one key name, e.g. --keys Enter")
            shown = keyboard.send_keys(keys)
            what = " ".join(keys)
        elif mode == "--type":
            assert text is not None
            control = sorted({f"0x{ord(c):02x}" for c in text if ord(c) < 0x20 or ord(c) == 0x7F})
            if control and not allow_control:
                raise click.UsageError(
                    f"--type TEXT holds control characters ({', '.join(control)}); send keys such "
                    "as Enter or C-c with --keys, or pass --allow-control to type them as they are"
                )
            shown = keyboard.type_text(text, enter)
            what = text + (" <Enter>" if enter else "")
        else:
            shown = keyboard.screen(lines or 0)
            what = ""
    except BridgeError as exc:
        return _failed(output, exc, " ".join(keys) or (text or ""), mode)
    output.stdout(shown.encode("utf-8", "surrogateescape"))
    if mode != "--screen":
        _log(what, mode.lstrip("-"), 0, None, output, duration=time.monotonic() - started)
    if output.as_json:
        _print_json(output, None, 0, None, command=what, duration=time.monotonic() - started)
    return 0


def _log(
    command: str,
    mode: str,
    code: int,
    result: RunResult | None,
    output: _Output,
    error: str | None = None,
    duration: float | None = None,
) -> None:
    """One line in the audit log, for the person to review later."""
    from .audit import record
    from .runtime import runtime_dir

    record(
        runtime_dir(),
        {
            "id": result.call_id if result else None,
            "mode": mode,
            "command": command,
            "exit_status": code,
            "timed_out": result.timed_out if result else None,
            "duration_s": round(result.duration if result else (duration or 0.0), 3),
            "stdout_bytes": result.stdout_bytes if result else len(output.stdout_data),
            "stderr_bytes": result.stderr_bytes if result else 0,
            "error": error,
        },
    )


def _print_json(
    output: _Output,
    result: RunResult | None,
    code: int,
    report: str | None,
    error: str | None = None,
    command: str | None = None,
    duration: float | None = None,
) -> None:
    """The one JSON object --json promises. Output that is not valid UTF-8 is carried
    losslessly in base64 beside its text form (undecodable bytes shown as U+FFFD)."""
    import json

    document: dict[str, object] = {
        "id": result.call_id if result else None,
        "command": command if command is not None else (result.command if result else ""),
        "exit_status": code,
        "timed_out": result.timed_out if result else None,
        "signals_sent": result.signals_sent if result else [],
        "duration_s": round(result.duration if result else (duration or 0.0), 3),
        "shell": result.shell if result else None,
        "error": error,
    }
    for name, data in (("stdout", output.stdout_data), ("stderr", output.stderr_data)):
        raw = bytes(data)
        try:
            document[name] = raw.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            document[name] = raw.decode("utf-8", "replace")
            document[name + "_b64"] = base64.b64encode(raw).decode("ascii")
    notes = list(output.notes)
    if report:
        notes.append(report.rstrip("\n"))
    document["notes"] = notes
    output.as_json = False
    output.stdout(
        (json.dumps(document, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
    )


def describe(result: RunResult, options: RunOptions) -> str:
    """tmux-send's own account of anything unusual about a call, for stderr."""
    lines: list[str] = []
    if result.timed_out or result.own_signal is not None:
        if result.own_signal is not None:
            cause = f"tmux-send was interrupted ({signal.Signals(result.own_signal).name})"
        elif result.timed_out == "idle":
            cause = f"idle timeout: no output for {options.idle_timeout:g} s"
        else:
            cause = f"overall timeout: the command ran for {options.max_time:g} s"
        sent = " then ".join(result.signals_sent) or "nothing"
        what = "the REPL" if result.mode == "repl" else "the command"
        lines.append(f"tmux-send: {cause}. Sent {sent} to {what}.")
        if result.mode == "repl":
            lines.append(
                "The REPL stopped the evaluation and is back at its prompt; it stays open."
                if result.prompt_back
                else "The REPL did not come back to its prompt within 3 s of SIGINT; it may "
                "still be evaluating. Ask the person, or try `tmux-send --close`."
            )
        elif result.prompt_back:
            status = "" if result.status is None else f" (its status: {result.status})"
            lines.append(f"The command stopped and the shell prompt came back{status}.")
        else:
            lines.append(
                "The command survived SIGINT and SIGQUIT and is still running in the bridge "
                "terminal. Ask the person to stop it; tmux-send refuses to run anything "
                "else there until it ends."
            )
        if result.timed_out:
            lines.append("Pass a larger --timeout or --max-time for slow commands.")
    for note in result.notes:
        lines.append(f"tmux-send: {note}")
    if result.pane_tail:
        lines.append("Last lines of the bridge terminal:")
        lines.extend("  " + line for line in result.pane_tail)
    return "\n".join(lines) + "\n" if lines else ""


def main() -> None:
    """Console-script entry point. Exits with the status described in ``--help``."""
    exit_now(run_cli(cli))


def exit_now(code: int) -> None:
    """Exit with ``code`` without the interpreter's tear-down (about 5 ms of tmux-send's
    latency). Everything tmux-send opened is closed by then; only the streams to flush."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run_cli(command: click.Command, args: Sequence[str] | None = None) -> int:
    """Run a click command without click's own exit handling: usage errors exit 2,
    Ctrl-C before the command was typed exits 130 (click would say "Aborted!", 1)."""
    try:
        code = command.main(args=args, standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        return EXIT_SIGINT
    except BridgeError as exc:
        click.echo(exc.render(), err=True)
        return exc.exit_code
    return code if isinstance(code, int) else 0
