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
from .request import FIT_MODES, Output, SendRequest, call

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
a pane id (%3), WINDOW.PANE, SESSION:WINDOW.PANE or SESSION (its active
pane).

\b
--check runs nothing: it says which pane and shell would run COMMAND,
whether that shell parses it, what its first word is there (alias,
function, builtin, keyword, file, not found; looked up in the pane's shell
with one short line such as `builtin type -t -- make`, shown in the pane
like any call) and whether the pane is ready, and exits with the status
the call would have: 0 when it would run. --check --as KIND checks the
text instead (json, yaml, toml, python, jq, sh, bash, zsh, fish) with the
validators of the pane's host, and --write PATH --check checks stdin by
PATH's extension, writing nothing: exit 1 when it is not valid.

Files go through the pane's shell too, as its user, from its directory:
--write PATH writes stdin to PATH exactly (SHA-256 checked there, moved
into place atomically, the same bytes again changing nothing, an existing
file first copied to the host's backup directory unless --no-backup);
--read PATH prints the file's exact bytes (--json adds size, mode, mtime,
SHA-256); --stat PATH gives those and the MD5 without the content;
--edit PATH --old TEXT --new TEXT replaces the one occurrence of TEXT
(--line N with --new, --insert or --delete edits line N; --append TEXT
adds to the end) and prints a unified diff; --backups [PATH] lists the
backups and --restore PATH [--backup ID] puts one back (backing the file
up first). --if-sha256 HEX makes a write, edit or restore happen only if
the file still has that SHA-256. At most 256 MiB; only --max-time applies.

\b
Long output: --first N and --last N (lines) and --max-bytes N show the
head and tail of each stream around one cut line that names a file
holding all of it (TMUX_SEND_FIRST, TMUX_SEND_LAST, TMUX_SEND_MAX_BYTES
set defaults); --output PATH_OR_ID [--offset N] [--limit N] pages
through such a file.

\b
Examples:
  tmux-send -- ls -la
  tmux-send -- grep "two words" notes.txt
  tmux-send -- 'cd /srv && make test 2>&1 | tail -5'
  tmux-send --timeout 60 -- sudo apt-get install -y jq
  tmux-send --first 20 --last 20 -- make test
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
  tmux-send --edit app.conf --line 3 --delete
  tmux-send --stat app.conf
  tmux-send --restore app.conf
  tmux-send --background -- make -j8        # a job: prints its id
  tmux-send --wait ID                       # its output; exits with its status

\b
Exit status:
  0-255  the command's own (128+N when a signal N killed it);
         in REPL mode 0, or 1 when the REPL reported an error
  124    --timeout or --max-time fired (Ctrl-C, then Ctrl-\\ after 3 s; with
         --on-timeout detach the command runs on as a job; a --wait timed out)
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
    "SESSION:WINDOW.PANE, or SESSION for its active pane (default: the bridge pane). "
    "`tmux-bridge panes` lists them.",
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
    "--verbose-transcript",
    is_flag=True,
    help="Show tmux-send's plumbing in the pane (the typed line, the call's markers), for "
    "debugging; the person's tmux option @tmux-bridge-transcript=verbose does the same.",
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
    help="With --repl, for a REPL without a preset: a regex matching its prompt line; "
    "alone, the REPL tmux-send started in the pane (a new one is named repl) "
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
    "user, shell, directory) and its host's tools (GNU, BSD or busybox grep, sed, awk, "
    "date, stat, find, xargs, tar; GNU variants; package manager), found by one probe "
    "command run there (the tools once an hour per host).",
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
    "--as",
    "check_as",
    metavar="KIND",
    help="With --check: check COMMAND (or stdin, with -) as KIND instead: json, yaml, toml, "
    "python, jq, sh, bash, zsh or fish, with the validators of the pane's host. "
    "--write PATH --check checks stdin by PATH's extension (or --as) and writes nothing.",
)
@click.option(
    "--write",
    "write_path",
    metavar="PATH",
    help="Write stdin to PATH through the pane's shell: SHA-256 checked, moved into place "
    "atomically, an existing file first backed up; the same bytes again change nothing.",
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
    "--line",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --edit: edit line N (from 1): --new TEXT replaces it, --insert TEXT goes "
    "before it, --delete removes it.",
)
@click.option("--insert", metavar="TEXT", help="With --edit --line N: insert TEXT before line N.")
@click.option("--delete", is_flag=True, help="With --edit --line N: delete line N.")
@click.option(
    "--append", metavar="TEXT", help="With --edit: add TEXT at the end of the file, exactly."
)
@click.option(
    "--if-sha256",
    metavar="HEX",
    help="With --write, --edit or --restore: change the file only if it still has this "
    "SHA-256 (else file_changed); --stat, --read and --write report it.",
)
@click.option(
    "--no-backup",
    is_flag=True,
    help="With --write or --edit: do not back the old file up.",
)
@click.option(
    "--on-timeout",
    type=click.Choice(["interrupt", "detach"]),
    default="interrupt",
    show_default=True,
    help="What a timeout does to the command: interrupt it (Ctrl-C, then Ctrl-\\), or "
    "detach: let it run on as a job (exit 124, the job id on stderr).",
)
@click.option(
    "--background",
    is_flag=True,
    help="Start COMMAND as a job: print its id and exit once it runs; it runs on in the pane.",
)
@click.option(
    "--job",
    "job_id",
    metavar="ID",
    help="Print what job ID printed since the last --job of it, and its state; exit 0 "
    "while it runs, then with its status.",
)
@click.option("--all", "everything", is_flag=True, help="With --job: all of its output.")
@click.option(
    "--wait",
    "wait_id",
    metavar="ID",
    help="Wait until job ID ends, printing its output; exit with its status (124 when "
    "--timeout or --max-time fires first: the job runs on).",
)
@click.option("--kill", "kill_id", metavar="ID", help="Interrupt job ID (Ctrl-C, then Ctrl-\\).")
@click.option("--jobs", "list_jobs", is_flag=True, help="List the jobs and their states.")
@click.option(
    "--first",
    type=click.IntRange(min=0),
    metavar="N",
    help="Show only the first N lines of each output stream (and the --last ones), one cut "
    "line saying how much was left out and the file holding all of it. Default: "
    "$TMUX_SEND_FIRST, else no limit.",
)
@click.option(
    "--last",
    type=click.IntRange(min=0),
    metavar="N",
    help="Show only the last N lines of each output stream (with --first). Default: "
    "$TMUX_SEND_LAST, else no limit.",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=0),
    metavar="N",
    help="Show at most N bytes of each output stream: head and tail around a cut line. "
    "Default: $TMUX_SEND_MAX_BYTES, else no limit.",
)
@click.option(
    "--output",
    "output_path",
    metavar="PATH_OR_ID",
    help="Print a page of a saved stream: the path a cut line gave, or a call's id "
    "(ID for its stdout, ID.stderr).",
)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    metavar="N",
    help="With --output: the first line of the page (from 0; default 0).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=100_000),
    metavar="N",
    help="With --output: lines in the page (default 200).",
)
@click.option(
    "--stat",
    "stat_path",
    metavar="PATH",
    help="Print PATH's size, mode, mtime, SHA-256 and MD5 (its content does not travel).",
)
@click.option(
    "--backups",
    is_flag=True,
    help="List the backups kept on the pane's host (of the file COMMAND names, if any).",
)
@click.option(
    "--restore",
    "restore_path",
    metavar="PATH",
    help="Put back the newest backup of PATH (or --backup ID), backing it up first.",
)
@click.option("--backup", "backup_id", metavar="ID", help="With --restore: the backup to restore.")
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
    files, command = _files(params)
    repl_name, prompt, template = _repl_name(params), params["prompt"], params["eval_template"]
    mode = _mode(
        repl_name, params["close"], params["keys"], params["type_text"], params["screen"],
        params["info"], {**files, **_jobs(params)},
    )  # fmt: skip
    mode = _check_mode(mode, files, params)
    enter, allow_control, lines = params["enter"], params["allow_control"], params["lines"]
    checked = _write_check(command) if files.get("--check") else command
    _check_combinations(mode, prompt, template, enter, allow_control, lines, checked)
    old, new, no_backup = params["old"], params["new"], params["no_backup"]
    _check_file_options(mode, old, new, no_backup)
    _check_job_options(mode, params["everything"], params["on_timeout"])
    fit = (params["first"], params["last"], params["max_bytes"])
    _check_output_options(mode, fit, params["offset"], params["limit"])
    line_action, line_text = _line_edit(mode, params)
    _check_guards(mode, params)
    options = RunOptions(
        params["timeout"], params["max_time"], params["raw"], params["on_timeout"],
        params["verbose_transcript"],
    )  # fmt: skip
    path = (files.get(mode) or None) if mode != "--output" else None
    return SendRequest(
        mode, command, options, repl_name, prompt, template, params["type_text"], enter,
        allow_control, lines or 0, params["pane"], path, old, new, not no_backup,
        job=params["job_id"] or params["wait_id"] or params["kill_id"],
        everything=params["everything"], fit=fit, output=params["output_path"],
        offset=params["offset"] or 0, limit=params["limit"] or 200,
        if_sha256=params["if_sha256"], line=params["line"], line_action=line_action,
        line_text=line_text, backup_id=params["backup_id"], check_as=params["check_as"],
    )  # fmt: skip


def _files(params: dict[str, Any]) -> tuple[dict[str, str | None], tuple[str, ...]]:
    """The file modes asked for (flag -> PATH), and COMMAND (``--backups [PATH]`` takes
    its PATH from it)."""
    files = {"--write": params["write_path"], "--read": params["read_path"]}
    files["--edit"] = params["edit_path"]
    files["--output"] = params["output_path"]
    files |= {"--stat": params["stat_path"], "--restore": params["restore_path"]}
    command: tuple[str, ...] = params["command"]
    if params["backups"]:
        if len(command) > 1:
            raise click.UsageError("--backups takes at most one PATH")
        files["--backups"], command = (command[0] if command else ""), ()
    return files, command


def _jobs(params: dict[str, Any]) -> dict[str, bool]:
    return {
        "--background": params["background"], "--job": params["job_id"] is not None,
        "--wait": params["wait_id"] is not None, "--kill": params["kill_id"] is not None,
        "--jobs": params["list_jobs"],
    }  # fmt: skip


def _repl_name(params: dict[str, Any]) -> str | None:
    """--repl NAME; ``""`` for the seed tool's --prompt alone (the REPL in front,
    unnamed)."""
    repl_name: str | None = params["repl_name"]
    if repl_name == "":
        raise click.UsageError(
            "'' is not a REPL name: use 1 to 32 letters, digits, '_', '.' or '-'"
        )
    if params["prompt"] is not None and repl_name is None:
        return ""
    return repl_name


def _check_mode(mode: str, files: dict[str, str | None], params: dict[str, Any]) -> str:
    """--check makes a command (or --write PATH) a dry run; --as KIND goes with it."""
    if params["check"]:
        if mode not in ("command", "--write"):
            raise click.UsageError(f"--check goes with a command or --write, not with {mode}")
        files["--check"] = files["--write"] if mode == "--write" else None
        return "--check"
    if params["check_as"] is not None:
        raise click.UsageError("--as KIND goes with --check")
    return mode


def _mode(
    repl_name: str | None,
    close: bool,
    keys: bool,
    type_text: str | None,
    screen: bool,
    info: bool,
    files: dict[str, str | bool | None],
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
            *((flag, path not in (None, False)) for flag, path in files.items()),
        )
        if on
    ]
    if len(modes) > 1:
        raise click.UsageError(f"{' and '.join(modes)} do not go together")
    return modes[0] if modes else "command"


def _write_check(command: tuple[str, ...]) -> tuple[str, ...]:
    """--write PATH --check: the content comes on stdin, never as COMMAND."""
    if command:
        raise click.UsageError("--write PATH --check takes no COMMAND: the content is stdin")
    if sys.stdin is None or sys.stdin.isatty():
        raise click.UsageError("--write PATH --check checks what comes on stdin: redirect it")
    return ("-",)  # as if COMMAND were -: read from stdin


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
    if mode in ("--close", "--type", "--screen", "--info", *_FILE_MODES, *_JOB_IDS) and command:
        raise click.UsageError(f"{mode} takes no COMMAND")
    if mode == "--keys" and not command:
        raise click.UsageError("--keys needs at least one key name, e.g. --keys Enter")
    if mode in ("command", "--repl", "--check", "--background") and not command:
        raise click.UsageError("no COMMAND given (put it after --, or - to read it from stdin)")


_FILE_MODES = ("--write", "--read", "--edit", "--output", "--stat", "--restore", "--backups")
_JOB_IDS = ("--job", "--wait", "--kill", "--jobs")


def _check_job_options(mode: str, everything: bool, on_timeout: str) -> None:
    if everything and mode != "--job":
        raise click.UsageError("--all goes with --job ID")
    if on_timeout != "interrupt" and mode != "command":
        raise click.UsageError("--on-timeout goes with a command (not with " + mode + ")")


def _check_output_options(
    mode: str, fit: tuple[int | None, ...], offset: int | None, limit: int | None
) -> None:
    if fit != (None, None, None) and mode not in FIT_MODES:
        raise click.UsageError(
            "--first, --last and --max-bytes go with a command, --repl, --job or --wait"
        )
    if (offset is not None or limit is not None) and mode != "--output":
        raise click.UsageError("--offset and --limit go with --output PATH_OR_ID")


def _check_file_options(mode: str, old: str | None, new: str | None, no_backup: bool) -> None:
    if (old is not None or new is not None) and mode != "--edit":
        raise click.UsageError("--old and --new go with --edit PATH")
    if no_backup and mode not in ("--write", "--edit"):
        raise click.UsageError("--no-backup goes with --write or --edit")
    if mode == "--write" and (sys.stdin is None or sys.stdin.isatty()):
        raise click.UsageError("--write PATH writes what comes on stdin: redirect or pipe it")


def _line_edit(mode: str, params: dict[str, Any]) -> tuple[str | None, str | None]:
    """The line edit asked for (its action and text), or none: --old/--new then."""
    line, insert, delete, append = (params[k] for k in ("line", "insert", "delete", "append"))
    old, new = params["old"], params["new"]
    if mode != "--edit":
        if line is not None or insert is not None or delete or append is not None:
            raise click.UsageError("--line, --insert, --delete and --append go with --edit PATH")
        return None, None
    if append is not None:
        if line is not None or insert is not None or delete or old is not None or new is not None:
            raise click.UsageError("--append TEXT goes alone with --edit PATH")
        return "append", append
    if line is None:
        if insert is not None or delete:
            raise click.UsageError("--insert and --delete go with --line N")
        if old is None or new is None:
            raise click.UsageError(
                "--edit PATH needs --old TEXT and --new TEXT, --line N with --new TEXT, "
                "--insert TEXT or --delete, or --append TEXT"
            )
        return None, None
    chosen = [(a, t) for a, t, on in _line_actions(new, insert, delete) if on]
    if old is not None or len(chosen) != 1:
        raise click.UsageError("--line N needs one of --new TEXT, --insert TEXT or --delete")
    return chosen[0]


def _line_actions(new: str | None, insert: str | None, delete: bool) -> list[tuple[str, str, bool]]:
    return [
        ("replace", new or "", new is not None),
        ("insert", insert or "", insert is not None),
        ("delete", "", delete),
    ]


def _check_guards(mode: str, params: dict[str, Any]) -> None:
    if params["if_sha256"] is not None and mode not in ("--write", "--edit", "--restore"):
        raise click.UsageError("--if-sha256 goes with --write, --edit or --restore")
    if params["backup_id"] is not None and mode != "--restore":
        raise click.UsageError("--backup ID goes with --restore PATH")
