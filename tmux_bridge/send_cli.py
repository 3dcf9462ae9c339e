"""``tmux-send``: the agent's side. Parses options, calls the facade, prints the result.

Everything a call does (the rules, the refusals, the audit log, the JSON document) is
the core's (:class:`tmux_bridge.api.Bridge`, :mod:`tmux_bridge.report`); this module
only adds what belongs to a command line: flags, signals, exit codes and hints that
name flags.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import click

from . import __version__
from .cli_common import FdSink, exit_now, run_cli
from .errors import BridgeError

if TYPE_CHECKING:
    from .api import Bridge
    from .cancel import Cancel
    from .results import CallResult, RunOptions

HELP = """Run COMMAND in a tmux-bridge pane's shell, as if you had run it yourself.

\b
COMMAND runs in the person's own interactive shell, so cd, export, functions
and aliases persist between calls. tmux-send is a command wrapper, like sudo
or timeout: several arguments are one command and its arguments, each passed
as it is (quoted for the pane's shell); one argument is shell code (pipes,
;, newlines). With - as COMMAND the command text is read from stdin.

\b
stdout, stderr and the exit status are the command's own. The command sees
terminals on stdin, stdout and stderr; the person watching the pane sees it
run and can type into it (passwords, [Y/n] prompts).

\b
REPL mode keeps an interpreter open in the pane between calls: --repl NAME
starts it (COMMAND is the shell command) and then evaluates COMMAND as code
in it; stdout is what the REPL printed in response; --close quits it.
With --keys, the arguments are tmux key names instead of a command.
Every mode takes -p TARGET for another pane: a label (tmux-bridge label),
a pane id (%3), WINDOW.PANE or SESSION:WINDOW.PANE.

\b
--check runs nothing: it says which pane and shell would run COMMAND,
whether that shell parses it, what its first word is there (alias,
function, builtin, keyword, file, not found; looked up in the pane's shell
with one short line such as `builtin type -t -- make`, shown in the pane
like any call) and whether the pane is ready, and exits with the status
the call would have: 0 when it would run.

Files go through the pane's shell too, as its user, from its directory:
--write PATH writes stdin to PATH exactly (SHA-256 checked there, moved
into place atomically, an existing file first copied to PATH.~N~ unless
--no-backup); --read PATH prints the file's exact bytes (--json adds size,
mode, mtime, SHA-256); --edit PATH --old TEXT --new TEXT replaces the one
occurrence of TEXT and prints a unified diff. At most 256 MiB; only
--max-time applies.

\b
Examples:
  tmux-send -- ls -la
  tmux-send -- grep "two words" notes.txt
  tmux-send -- 'cd /srv && make test 2>&1 | tail -5'
  tmux-send --timeout 60 -- sudo apt-get install -y jq
  tmux-send - < script.sh
  tmux-send --repl python -- python3
  tmux-send --repl python -- 'import math; math.pi * 2'
  tmux-send --close
  tmux-send --keys -- C-c
  tmux-send -p db -- psql -c 'select 1'     # the pane labelled db
  tmux-send --check -- make test
  tmux-send --write notes.txt < notes.txt
  tmux-send --read /etc/os-release
  tmux-send --edit app.conf --old 'port = 80' --new 'port = 8080'

\b
Exit status:
  0-255  the command's own (128+N when a signal N killed it);
         in REPL mode 0, or 1 when the REPL reported an error
  124    --timeout or --max-time fired (Ctrl-C, then Ctrl-\\ after 3 s)
  125    tmux-send could not run or finish the command, or could not
         write, read or edit the file (see stderr)
  2      bad usage
  130    tmux-send itself was interrupted (SIGINT); 143 for SIGTERM,
         129 for SIGHUP
"""


class _Request(NamedTuple):
    """What the command line asked for."""

    mode: str  # "command", "--repl", "--close", "--keys", "--type", "--screen", "--write" ...
    words: tuple[str, ...]
    options: RunOptions
    repl_name: str | None
    prompt: str | None
    template: str | None
    text: str | None
    enter: bool
    allow_control: bool
    lines: int
    pane: str | None  # the target pane; None: the bridge pane
    file: str | None = None  # --write, --read, --edit PATH
    old: str | None = None
    new: str | None = None
    backup: bool = True


class _Output:
    """Where a call's output goes: streamed to our stdout/stderr, or, with --json,
    collected for the one JSON object printed at the end."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.notes: list[str] = []
        self.facts: dict[str, str | None] | None = None  # what --info found
        self.out, self.err = FdSink(1), FdSink(2)

    def stdout(self) -> Callable[[bytes], None] | None:
        """The sink for the command's stdout; None collects it into the result."""
        return None if self.as_json else self.out

    def stderr(self) -> Callable[[bytes], None] | None:
        return None if self.as_json else self.err

    def notice(self, message: str) -> None:
        """tmux-send's own remarks (a wait for the lock, a command waiting for input):
        stderr, on a line of their own, or a JSON note."""
        if self.as_json:
            self.notes.append(message)
            return
        lead = "\n" if self.err.line_open else ""
        self.err((lead + message + "\n").encode("utf-8", "surrogateescape"))

    def print_json(self, document: dict[str, object]) -> None:
        import json

        text = json.dumps(document, ensure_ascii=False) + "\n"
        self.out(text.encode("utf-8", "surrogateescape"))


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
    "-p",
    "--pane",
    metavar="TARGET",
    help="The pane to use: a label, a pane id (%3), WINDOW.PANE in the bridge session or "
    "SESSION:WINDOW.PANE (default: the bridge pane). `tmux-bridge panes` lists them.",
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
    help="The arguments are tmux key names (C-c, Enter, Up, q), sent to whatever is in "
    "front; print the screen once it settles.",
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
@click.option("--screen", is_flag=True, help="Print the visible screen of the pane.")
@click.option(
    "--lines",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --screen: the last N lines of history and screen instead.",
)
@click.option(
    "--info",
    is_flag=True,
    help="Print the platform of the pane's shell (OS, kernel, arch, distribution, host, "
    "user, shell, directory), found by one probe command run there.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Dry run: run nothing; say which pane and shell would run COMMAND, whether it "
    "parses, what its first word resolves to and whether the pane is ready; exit with the "
    "status the call would have (0: it would run; 125: not ready; the shell's parse-error "
    "status; 127: first word not found).",
)
@click.option(
    "--write",
    "write_path",
    metavar="PATH",
    help="Write stdin to PATH through the pane's shell: SHA-256 checked, moved into place "
    "atomically, an existing file first copied to PATH.~N~.",
)
@click.option(
    "--read",
    "read_path",
    metavar="PATH",
    help="Print the exact bytes of PATH, read by the pane's shell.",
)
@click.option(
    "--edit",
    "edit_path",
    metavar="PATH",
    help="Replace the one occurrence of --old TEXT in PATH with --new TEXT; print the diff.",
)
@click.option(
    "--old", metavar="TEXT", help="With --edit: the exact text to replace (must occur once)."
)
@click.option("--new", metavar="TEXT", help="With --edit: the text to put in its place.")
@click.option(
    "--no-backup",
    is_flag=True,
    help="With --write or --edit: do not copy the old file to PATH.~N~.",
)
@click.option("--guide", is_flag=True, help="Print instructions for AI agents and exit.")
@click.version_option(__version__, "-V", "--version", prog_name="tmux-send")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def cli(
    pane: str | None,
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
    info: bool,
    check: bool,
    write_path: str | None,
    read_path: str | None,
    edit_path: str | None,
    old: str | None,
    new: str | None,
    no_backup: bool,
    guide: bool,
    command: tuple[str, ...],
) -> int:
    if guide:
        from .guide import GUIDE

        click.echo(GUIDE, nl=False)
        return 0
    from .results import RunOptions

    files = {"--write": write_path, "--read": read_path, "--edit": edit_path}
    mode = _mode(repl_name, close, keys, type_text, screen, info, files)
    if check:
        if mode != "command":
            raise click.UsageError(f"--check goes with a command only, not with {mode}")
        mode = "--check"
    _check_combinations(mode, prompt, eval_template, enter, allow_control, lines, command)
    _check_file_options(mode, old, new, no_backup)
    request = _Request(
        mode, command, RunOptions(timeout, max_time, raw), repl_name, prompt, eval_template,
        type_text, enter, allow_control, lines or 0, pane, files.get(mode), old, new,
        not no_backup,
    )  # fmt: skip
    return _call(request, _Output(as_json))


def _mode(
    repl_name: str | None,
    close: bool,
    keys: bool,
    type_text: str | None,
    screen: bool,
    info: bool,
    files: dict[str, str | None],
) -> str:
    modes = [
        name
        for name, on in (
            ("--repl", repl_name is not None),
            ("--close", close),
            ("--keys", keys),
            ("--type", type_text is not None),
            ("--screen", screen),
            ("--info", info),
            *((flag, path is not None) for flag, path in files.items()),
        )
        if on
    ]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} do not go together")
    return modes[0] if modes else "command"


def _check_combinations(
    mode: str,
    prompt: str | None,
    eval_template: str | None,
    enter: bool,
    allow_control: bool,
    lines: int | None,
    command: tuple[str, ...],
) -> None:
    if (prompt is not None or eval_template is not None) and mode != "--repl":
        raise click.UsageError("--prompt and --eval-template go with --repl NAME")
    if (enter or allow_control) and mode != "--type":
        raise click.UsageError("--enter and --allow-control go with --type TEXT")
    if lines is not None and mode != "--screen":
        raise click.UsageError("--lines goes with --screen")
    if mode in ("--close", "--type", "--screen", "--info", *_FILE_MODES) and command:
        raise click.UsageError(f"{mode} takes no COMMAND")
    if mode == "--keys" and not command:
        raise click.UsageError("--keys needs at least one key name, e.g. --keys Enter")
    if mode in ("command", "--repl", "--check") and not command:
        raise click.UsageError("no COMMAND given (put it after --, or - to read it from stdin)")


_FILE_MODES = ("--write", "--read", "--edit")


def _check_file_options(mode: str, old: str | None, new: str | None, no_backup: bool) -> None:
    if (old is not None or new is not None) and mode != "--edit":
        raise click.UsageError("--old and --new go with --edit PATH")
    if mode == "--edit" and (old is None or new is None):
        raise click.UsageError("--edit PATH needs --old TEXT and --new TEXT")
    if no_backup and mode not in ("--write", "--edit"):
        raise click.UsageError("--no-backup goes with --write or --edit")
    if mode == "--write" and (sys.stdin is None or sys.stdin.isatty()):
        raise click.UsageError("--write PATH writes what comes on stdin: redirect or pipe it")


def _call(request: _Request, output: _Output) -> int:
    """Read the command, make the call with signals mapped onto its cancellation, and
    print the result (or the error) with our hints."""
    from .api import Bridge
    from .cancel import SignalCancel
    from .target import Target

    words = _command(request)
    bridge = Bridge(Target.from_env(pane=request.pane), client="tmux-send")
    with SignalCancel() as cancel:
        try:
            if request.mode == "--check":
                return _check(bridge, request, words, output, cancel)
            result = _HANDLERS[request.mode](bridge, request, words, output, cancel)
        except BridgeError as exc:
            return _failed(output, exc, request)
    return _report(output, result)


def _command(request: _Request) -> str | bytes | Sequence[str]:
    """Shell code (one argument, or stdin for ``-``), or the words of one command."""
    words = request.words
    if request.mode in ("command", "--repl", "--check") and list(words) == ["-"]:
        return sys.stdin.buffer.read()
    if request.mode == "--repl":
        return " ".join(words)
    return words[0] if len(words) == 1 else words


def _run(
    bridge: Bridge, request: _Request, words: object, output: _Output, cancel: Cancel
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
    bridge: Bridge, request: _Request, words: object, output: _Output, cancel: Cancel
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
    bridge: Bridge, request: _Request, _words: object, output: _Output, cancel: Cancel
) -> CallResult:
    return bridge.close_repl(request.options, notice=output.notice, cancel=cancel)


def _keys(
    bridge: Bridge, request: _Request, _words: object, _output: _Output, _cancel: Cancel
) -> CallResult:
    return bridge.send_keys(list(request.words))


def _type(
    bridge: Bridge, request: _Request, _words: object, _output: _Output, _cancel: Cancel
) -> CallResult:
    assert request.text is not None
    return bridge.type_text(request.text, request.enter, request.allow_control)


def _screen(
    bridge: Bridge, request: _Request, _words: object, _output: _Output, _cancel: Cancel
) -> CallResult:
    return bridge.screen(request.lines)


def _info(
    bridge: Bridge, request: _Request, _words: object, output: _Output, cancel: Cancel
) -> CallResult:
    result, facts = bridge.info(request.options, notice=output.notice, cancel=cancel)
    output.facts = facts
    return result


def _check(
    bridge: Bridge, request: _Request, words: object, output: _Output, cancel: Cancel
) -> int:
    """The dry run, printed as text or one JSON document; exits as the call would."""
    from .check import check_document, describe_check

    assert isinstance(words, (str, bytes, tuple))
    result = bridge.check(words, request.options, notice=output.notice, cancel=cancel)
    if output.as_json:
        output.print_json(check_document(result, output.notes))
    else:
        output.out(describe_check(result).encode("utf-8", "surrogateescape"))
    return result.would_exit


def _write(
    bridge: Bridge, request: _Request, _words: object, output: _Output, cancel: Cancel
) -> CallResult:
    from .files import MAX_FILE_BYTES

    assert request.file is not None
    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)  # one byte more: "too large" if read
    return bridge.write_file(
        request.file,
        data,
        backup=request.backup,
        options=request.options,
        notice=output.notice,
        cancel=cancel,
    )


def _read(
    bridge: Bridge, request: _Request, _words: object, output: _Output, cancel: Cancel
) -> CallResult:
    assert request.file is not None
    return bridge.read_file(
        request.file, options=request.options, notice=output.notice, cancel=cancel
    )


def _edit(
    bridge: Bridge, request: _Request, _words: object, output: _Output, cancel: Cancel
) -> CallResult:
    assert request.file is not None and request.old is not None and request.new is not None
    return bridge.edit_file(
        request.file,
        request.old,
        request.new,
        backup=request.backup,
        options=request.options,
        notice=output.notice,
        cancel=cancel,
    )


_HANDLERS: dict[str, Callable[[Bridge, _Request, object, _Output, Cancel], CallResult]] = {
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
}


def _report(output: _Output, result: CallResult) -> int:
    """The result's JSON document, or the screen of a keys call and tmux-send's account
    of anything unusual on stderr; returns the exit status."""
    from .report import describe, to_document

    hints = _result_hints(result)
    if output.as_json:
        document = to_document(result, notes=output.notes)
        document["notes"] += hints
        if output.facts is not None:
            document["info"] = output.facts
        output.print_json(document)
    else:
        if output.facts is not None and result.exit_status == 0:
            text = "".join(f"{k}: {v if v is not None else '?'}\n" for k, v in output.facts.items())
            output.out(text.encode("utf-8", "surrogateescape"))
        elif result.screen is not None:
            output.out(result.screen.encode("utf-8", "surrogateescape"))
        elif result.file is not None and result.stdout:
            output.out(result.stdout)  # the bytes read, a write's summary, an edit's diff
        report = describe(result) + "".join(hint + "\n" for hint in hints)
        if report:
            output.notice(report.rstrip("\n"))
    return result.exit_status


def _result_hints(result: CallResult) -> list[str]:
    hints = []
    if result.timed_out:
        hints.append("Pass a larger --timeout or --max-time for slow commands.")
    if result.mode == "repl_eval" and not result.prompt_back:
        hints.append("To quit the REPL: tmux-send --close.")
    return hints


def _failed(output: _Output, exc: BridgeError, request: _Request) -> int:
    """tmux-send could not do what was asked: the error on stderr or in the JSON."""
    hint = _error_hint(exc, request)
    if output.as_json:
        from .report import error_document

        command = request.text or request.file or " ".join(request.words)
        document = error_document(exc, command, request.mode.lstrip("-"), output.notes)
        if hint:
            document["notes"].append(hint)
        output.print_json(document)
    else:
        click.echo(exc.render() + (f"\n{hint}" if hint else ""), err=True)
    return exc.exit_code


def _error_hint(exc: BridgeError, request: _Request) -> str:
    """The command-line flags that get past an error, where there are any."""
    from .errors import ReplError

    repl = exc.repl if isinstance(exc, ReplError) else None
    wanted = exc.wanted if isinstance(exc, ReplError) else None
    if exc.code == "repl_mismatch" and request.mode == "command":
        return f"Pass --repl {repl} to evaluate code in it, or --close to quit it first."
    if exc.code == "repl_mismatch":
        return f"Pass --repl {repl} to use it, or --close to quit it first."
    if exc.code == "repl_not_open" and wanted:
        return f"Start it again with `tmux-send --repl {wanted} -- <command>`."
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
    "file_changed": "Run the same --edit again: it reads the file anew.",
}


def main() -> None:
    """Console-script entry point. Exits with the status described in ``--help``."""
    exit_now(run_cli(cli))
