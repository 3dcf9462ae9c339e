"""``tmux-send``: the agent's side. Parses options, calls the core, maps outcomes to exit codes."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Callable, Sequence

import click

from . import __version__
from .errors import EXIT_FAILURE, EXIT_SIGINT, BridgeError, exit_status
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
@click.version_option(__version__, "-V", "--version", prog_name="tmux-send")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def cli(
    timeout: float,
    max_time: float,
    raw: bool,
    repl_name: str | None,
    prompt: str | None,
    eval_template: str | None,
    close: bool,
    command: tuple[str, ...],
) -> int:
    stdout, stderr = _Stream(1), _Stream(2)

    def notice(message: str) -> None:
        stderr((message + "\n").encode())

    options = RunOptions(idle_timeout=timeout, max_time=max_time, raw=raw)
    if close:
        if command or repl_name or prompt or eval_template:
            raise click.UsageError("--close takes no COMMAND, --repl, --prompt or --eval-template")
        return _close(options, notice)
    if (prompt is not None or eval_template is not None) and repl_name is None:
        raise click.UsageError("--prompt and --eval-template go with --repl NAME")
    text = _command_text(command)
    try:
        if repl_name is not None:
            from .repl import ReplRequest, run_repl  # REPL mode only: keep it off the hot path

            request = ReplRequest(repl_name, prompt, eval_template)
            result = run_repl(request, text, options, stdout, notice)
        else:
            result = run_command(text, options, stdout, stderr, notice)
    except BridgeError as exc:
        click.echo(exc.render(), err=True)
        return exc.exit_code
    report = describe(result, options)
    if report:
        stderr(report.encode("utf-8", "surrogateescape"))
    return exit_status(result.status, result.timed_out, result.own_signal)


def _close(options: RunOptions, notice: Callable[[str], None]) -> int:
    from .repl import close_repl

    try:
        message, result = close_repl(options, notice)
    except BridgeError as exc:
        click.echo(exc.render(), err=True)
        return exc.exit_code
    if result is not None and result.status != 0:
        click.echo(describe(result, options), err=True, nl=False)
        return EXIT_FAILURE
    click.echo(f"tmux-send: {message}", err=True)
    return 0


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
