"""tmux-send's options: the click command that reads every command line
:mod:`tmux_bridge.cli.send_quick` leaves to it, checks which options go together, and owns
``--help``, ``--version`` and ``--guide``. It builds a
:class:`~tmux_bridge.cli.request.SendRequest` and hands it to
:func:`~tmux_bridge.cli.request.call`.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import __version__
from ..results import RunOptions
from .request import Output, SendRequest, call

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
    default=RunOptions().idle_timeout,
    show_default=True,
    help="Idle timeout: seconds without output before the command is interrupted (above 0, "
    "at most a week).",
)
@click.option(
    "--max-time",
    type=float,
    default=RunOptions().max_time,
    show_default=True,
    help="Overall timeout in seconds, counting any wait for another tmux-send (above 0, at "
    "most a week).",
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
    help="With --repl, for a REPL without a preset: a regex matching its prompt line "
    "(at most 256 characters, counts up to 1000).",
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
    help="With --screen: N lines of history above the screen too (N plus the screen's rows).",
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
def cli(**params: Any) -> int:
    if params["guide"]:
        from .guide import GUIDE

        click.echo(GUIDE, nl=False)
        return 0
    return call(build_request(params), Output(params["as_json"]))


def build_request(params: dict[str, Any]) -> SendRequest:
    """The request the options ``params`` (click's, by parameter name) ask for; raises
    :class:`click.UsageError` for options that do not go together."""
    files = {"--write": params["write_path"], "--read": params["read_path"]}
    files["--edit"] = params["edit_path"]
    repl_name, command = params["repl_name"], params["command"]
    prompt, template = params["prompt"], params["eval_template"]
    mode = _mode(
        repl_name, params["close"], params["keys"], params["type_text"], params["screen"],
        params["info"], files,
    )  # fmt: skip
    if params["check"]:
        if mode != "command":
            raise click.UsageError(f"--check goes with a command only, not with {mode}")
        mode = "--check"
    enter, allow_control, lines = params["enter"], params["allow_control"], params["lines"]
    _check_combinations(mode, prompt, template, enter, allow_control, lines, command)
    old, new, no_backup = params["old"], params["new"], params["no_backup"]
    _check_file_options(mode, old, new, no_backup)
    options = RunOptions(params["timeout"], params["max_time"], params["raw"])
    return SendRequest(
        mode, command, options, repl_name, prompt, template, params["type_text"], enter,
        allow_control, lines or 0, params["pane"], files.get(mode), old, new, not no_backup,
    )  # fmt: skip


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
