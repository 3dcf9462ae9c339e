"""Dry runs: what a command call would do, without running the command.

:func:`check_command` answers four questions about a command for the target pane:

* which pane and shell would run it;
* whether that shell parses it: the text the real call would write (several words
  quoted as command mode quotes them) is checked by this machine's binary of the pane's
  shell with its own no-execute flag (``bash -n``, ``zsh -n``, ``fish --no-execute``,
  ``sh -n``), with that shell's default options;
* what the first command word resolves to (alias, keyword, function, builtin, file,
  or not found). Functions and aliases live only in the pane's shell, so the name is
  looked up there: one line such as ``builtin type -t -- make`` runs through the
  normal runner, the way every call runs (the person sees it, and it stays out of
  the shell's history as every call does). It is typed only when the pane is ready,
  the command parses and its first word is literal text (not ``$EDITOR``, a glob or
  a command substitution, which only running could expand: ``unknown``);
* whether the pane is ready: the readiness checks of a real call (the pane's lock,
  waiting for another call as a real call would, an open REPL, a program in front, a
  half-typed line), without typing.

The exit status it predicts is the real call's: 125 when the pane is not ready, the
status the pane's shell gives a command it cannot parse (:data:`PARSE_ERROR_STATUS`),
127 when the first word resolves to nothing, else 0. Pre-flight checks help an agent;
they are no security boundary (the command may still fail, or do harm, when it runs).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from ..cancel import Cancel
from ..errors import LockTimeout, PaneNotReady, ReplMismatch
from ..infra import procfs
from ..infra.runtime import ensure_private_dir, remove_quietly, write_private_file
from ..pane import readiness
from ..pane.front import gateway_in_front
from ..pane.info import find_pane
from ..results import RunOptions, new_call_id
from ..target import Target
from ..text.shells import ShellKind, quote
from .command import Command, command_bytes, run_command
from .frame import Notice, pane_call, shell_front

# The exit status of a real call whose command the pane's shell cannot parse, as
# measured (bash 5.2, zsh 5.9, fish 3.6, dash 0.5): bash's `.` of the command file
# returns 2 and zsh's 126; the fish and POSIX sh runners check the file first and
# return the status of `fish --no-execute` (127) or `sh -n` (2).
PARSE_ERROR_STATUS: dict[ShellKind, int] = {"bash": 2, "zsh": 126, "fish": 127, "posix": 2}
# The same in a far shell, where the command is `eval`'d: as measured (bash 5.2, zsh
# 5.9, fish 3.6, dash 0.5 and busybox 1.35 sh).
FAR_PARSE_ERROR_STATUS: dict[ShellKind, int] = {"bash": 2, "zsh": 1, "fish": 123, "posix": 2}
# What every shell gives a command it cannot find.
NOT_FOUND_STATUS = 127
# Seconds a syntax check may take (the shells need a few milliseconds).
PARSE_TIMEOUT = 10.0

_PARSE_FLAGS: dict[ShellKind, tuple[str, ...]] = {
    "bash": ("-n",),
    "zsh": ("-f", "-n"),
    "fish": ("--no-config", "--no-execute"),
    "posix": ("-n",),
}

# Shown in the pane after the lookup line, so the person reads what it is for.
_LOOKUP_NOTE = "  # dry run: where the first word comes from"

RESOLUTIONS = ("alias", "keyword", "function", "builtin", "file", "not_found", "unknown")


class CheckResult(NamedTuple):
    """What a dry run found. ``resolves_as`` is one of :data:`RESOLUTIONS`, or ``None``
    when the command has no command word (empty, comments, assignments only);
    ``parses`` is ``None`` when no syntax check could be made (no shell tmux-send can
    drive). ``would_exit`` is the status the real call would exit with (0: it would
    run); ``typed_lookup`` whether a lookup was typed into the pane. ``parsed_by`` is
    the binary of this machine that checked the syntax; ``far`` (a far shell in front:
    ``via``, ``gateway_pid``, ``shell``, and ``kind_from``: ``last_call`` or ``probe``)
    says whose syntax that was."""

    command: str
    pane: str
    shell: str | None
    parses: bool | None
    parse_error: str | None
    first_word: str | None
    resolves_as: str | None
    ready: bool
    reason: str | None
    error_code: str | None
    would_exit: int
    typed_lookup: bool
    parsed_by: str | None = None
    far: dict[str, Any] | None = None


class FirstWord(NamedTuple):
    """The first command word: its text as the shell will see it when ``literal``,
    else as written (it holds an expansion only running can do)."""

    text: str
    literal: bool


def check_command(
    target: Target, command: Command, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> CheckResult:
    """Dry-run ``command`` (as :func:`~tmux_bridge.calls.command.run_command` takes it).

    Blocks while another call holds the pane, as a real call would (up to
    ``options.max_time``). Raises what a real call raises before a pane is found
    (:class:`NoBridgeSession`, :class:`NoSuchPane`, :class:`RuntimeDirError`,
    :class:`TmuxError`) and :class:`Cancelled`; a pane that is not ready is a result.
    """
    ensure_private_dir(target.runtime_dir)
    pane = find_pane(target.tmux, target.session, target.pane).pane
    kind = None if pane.dead else procfs.shell_kind(pane.pid)
    text = command_text(kind, command)
    gateway = None if pane.dead else gateway_in_front(pane)
    if gateway is not None:
        from .farcheck import check_far

        return check_far(target, pane, gateway, command, text, options, notice, cancel)
    parses: bool | None = None
    parse_error = None
    word = None
    binary = None
    if kind is not None:
        script = command_bytes(kind, command)
        binary = procfs.shell_executable(pane.pid)
        parses, parse_error = parse_check(kind, binary, script, target.runtime_dir)
        word = _first_word_of(kind, command)
    resolves_as = None if word is None else "unknown"
    typed = False
    try:
        if kind is not None and parses and word is not None and word.literal:
            typed, resolves_as = True, lookup(target, kind, word.text, options, notice, cancel)
        else:
            wait_until_ready(target, options, notice, cancel)
    except (PaneNotReady, ReplMismatch, LockTimeout) as exc:
        shell = kind or procfs.process_name(pane.pid) or None
        return CheckResult(
            text, pane.pane_id, shell, parses, parse_error, _shown(word), resolves_as,
            False, str(exc), exc.code, exc.exit_code, False, binary,
        )  # fmt: skip
    return CheckResult(
        text, pane.pane_id, kind, parses, parse_error, _shown(word), resolves_as,
        True, None, None, predicted_exit(kind, parses, resolves_as), typed, binary,
    )  # fmt: skip


def predicted_exit(
    kind: ShellKind | None, parses: bool | None, resolves_as: str | None, far: bool = False
) -> int:
    """The status of a real call to a ready pane (``far``: a far shell): the shell's
    parse-error status, 127 for a first word that resolves to nothing, else 0 (the
    command would run)."""
    if kind is not None and parses is False:
        return (FAR_PARSE_ERROR_STATUS if far else PARSE_ERROR_STATUS)[kind]
    if resolves_as == "not_found":
        return NOT_FOUND_STATUS
    return 0


def command_text(kind: ShellKind | None, command: Command) -> str:
    """The command as the audit log and the result show it."""
    if isinstance(command, bytes):
        return command.decode("utf-8", "surrogateescape")
    if isinstance(command, str):
        return command
    if kind is None:
        return " ".join(command)
    return command_bytes(kind, command).decode("utf-8", "surrogateescape")


def _shown(word: FirstWord | None) -> str | None:
    return None if word is None else word.text


def _first_word_of(kind: ShellKind, command: Command) -> FirstWord | None:
    if isinstance(command, (str, bytes)):
        text = command if isinstance(command, str) else command.decode("utf-8", "surrogateescape")
        return first_word(kind, text)
    words = list(command)
    if len(words) == 1:
        return first_word(kind, words[0])
    return FirstWord(words[0], True) if words else None


# --- readiness and the lookup ---------------------------------------------------------


def wait_until_ready(
    target: Target, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> None:
    """The readiness checks of a real command call, under the pane's lock, typing
    nothing; raises what the real call would raise before typing."""
    with pane_call(target, options, cancel, notice) as frame:
        shell_front(frame)
        readiness.ready_shell(target.tmux, frame.view, frame.records, frame.deadline, cancel)


def lookup_line(kind: ShellKind, word: str) -> str:
    """The line that asks the pane's shell what ``word`` is, printing one answer."""
    quoted = quote(kind, word)
    if kind == "bash":
        return f"builtin type -t -- {quoted}{_LOOKUP_NOTE}"
    if kind == "zsh":
        return f"builtin whence -w -- {quoted}{_LOOKUP_NOTE}"
    if kind == "fish":  # `type -t` says "function" for fish's aliases: they are functions
        return f"builtin type -t -- {quoted} 2>/dev/null{_LOOKUP_NOTE}"
    return f"command -V -- {quoted} 2>/dev/null{_LOOKUP_NOTE}"


def lookup(
    target: Target,
    kind: ShellKind,
    word: str,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> str:
    """What ``word`` is in the pane's shell, by running :func:`lookup_line` there like
    any command call (readiness checks first: raises as a real call does)."""
    out = bytearray()
    record = run_command(
        target,
        lookup_line(kind, word),
        options._replace(raw=False),
        (out.extend, lambda _chunk: None),
        notice,
        cancel,
    )
    if record.timed_out is not None or record.cancelled is not None or record.status is None:
        return "unknown"
    return read_lookup(kind, out.decode("utf-8", "replace"))


_ZSH_KINDS = {
    "alias": "alias",
    "reserved": "keyword",
    "function": "function",
    "builtin": "builtin",
    "command": "file",
    "hashed": "file",
    "none": "not_found",
}
_POSIX_PHRASES = (
    ("a tracked alias", "file"),
    ("an alias", "alias"),
    ("a shell function", "function"),
    ("a function", "function"),
    ("a shell keyword", "keyword"),
    ("a reserved word", "keyword"),
    ("a keyword", "keyword"),
    ("a special shell builtin", "builtin"),
    ("a shell builtin", "builtin"),
    ("a builtin", "builtin"),
    ("/", "file"),
)


def read_lookup(kind: ShellKind, output: str) -> str:
    """The answer of :func:`lookup_line`'s output, one of :data:`RESOLUTIONS`."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if kind in ("bash", "fish"):
        known = ("alias", "keyword", "function", "builtin", "file")
        return last if last in known else "not_found"
    if kind == "zsh":
        return _ZSH_KINDS.get(last.rpartition(": ")[2], "unknown") if last else "unknown"
    name, sep, what = last.partition(" is ")
    if not sep:
        return "not_found" if last.endswith("not found") else "unknown"
    if what == name:
        return "file"  # busybox sh: an applet it runs itself ("ls is ls")
    return next((name for phrase, name in _POSIX_PHRASES if what.startswith(phrase)), "unknown")


# --- the syntax check -----------------------------------------------------------------


def parse_check(
    kind: ShellKind, binary: str, script: bytes, runtime_dir: str
) -> tuple[bool | None, str | None]:
    """Whether ``binary`` (the pane's shell, a ``kind`` shell) parses ``script``, and its
    complaint when not (the file's name shown as ``command``). ``(None, reason)`` when
    the check itself could not be made."""
    import subprocess

    path = os.path.join(runtime_dir, f"check-{new_call_id()}.cmd")
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV")}
    try:
        write_private_file(path, script)
        done = subprocess.run(
            [binary, *_PARSE_FLAGS[kind], path],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PARSE_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the syntax check with {binary} could not be made: {exc}"
    finally:
        remove_quietly(path)
    if done.returncode == 0:
        return True, None
    complaint = done.stderr.decode("utf-8", "replace")
    complaint = re.sub(r"\S*" + re.escape(os.path.basename(path)), "command", complaint)
    return False, complaint.strip() or f"{binary} exited with status {done.returncode}"


# --- the first command word -----------------------------------------------------------

_NAME_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_REDIRECTION = re.compile(r"[0-9]*(&>>|&>|>>|>&|>\||<<<|<<-|<<|<&|<>|>|<)")
_BLANKS = " \t"


class _Token(NamedTuple):
    kind: str  # "word", "operator", "redirection"
    raw: str
    word: FirstWord | None


def first_word(kind: ShellKind, text: str) -> FirstWord | None:
    """The first command word of shell code ``text`` (after assignments such as
    ``A=1``, redirections and an opening subshell parenthesis), or ``None`` when there
    is none or the text cannot be read (an unbalanced quote)."""
    skip_target = False
    for token in _tokens(kind, text):
        if token.kind == "redirection":
            skip_target = True
        elif token.kind == "operator":
            if token.raw not in ("\n", ";", "("):
                return None
        elif skip_target:
            skip_target = False
        elif not _NAME_ASSIGNMENT.match(token.raw):
            return token.word
    return None


def _tokens(kind: ShellKind, text: str) -> Iterator[_Token]:
    operators = ";&|\n" if kind == "fish" else ";&|()\n"
    i = 0
    while i < len(text):
        char = text[i]
        if char in _BLANKS or text.startswith("\\\n", i):
            i += 2 if char == "\\" else 1
        elif char == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif redirection := _REDIRECTION.match(text, i):
            i = redirection.end()
            yield _Token("redirection", redirection.group(), None)
        elif char in operators:
            i += 1
            yield _Token("operator", char, None)
        else:
            end, word = _word(kind, text, i, operators)
            if word is None:
                return
            yield _Token("word", text[i:end], word)
            i = end


def _word(kind: ShellKind, text: str, start: int, operators: str) -> tuple[int, FirstWord | None]:
    """The word starting at ``start``: where it ends, and its value (``None`` for an
    unbalanced quote). It is not literal when it holds an expansion."""
    value: list[str] = []
    literal = not (text[start] == "~" or (kind == "zsh" and text[start] == "="))
    bracket = False  # an unquoted [ : with a ] after it, a glob
    i = start
    while i < len(text) and text[i] not in _BLANKS and text[i] not in operators:
        char = text[i]
        expands = False
        if char == "'":
            i, part = _single_quoted(kind, text, i + 1)
        elif char == '"':
            i, part, expands = _double_quoted(kind, text, i + 1)
        elif char == "\\" and i + 1 < len(text):
            i, part = i + 2, text[i + 1].replace("\n", "")  # backslash-newline: nothing
            expands = kind == "fish" and part.isalnum()  # \n, \x41: fish escapes
        else:
            i, part = i + 1, char
            expands = (
                char in "$`*?(" or (char == "{" and i - 1 > start) or (bracket and char == "]")
            )
            bracket = bracket or char == "["
        if part is None:
            return i, None
        literal = literal and not expands
        value.append(part)
    if text[start] == "{" and i - start > 1:
        literal = False  # brace expansion; a lone { opens a group
    return i, FirstWord("".join(value) if literal else text[start:i], literal)


def _single_quoted(kind: ShellKind, text: str, i: int) -> tuple[int, str | None]:
    part: list[str] = []
    while i < len(text):
        char = text[i]
        if char == "'":
            return i + 1, "".join(part)
        if kind == "fish" and char == "\\" and text[i + 1 : i + 2] in ("'", "\\"):
            char, i = text[i + 1], i + 1
        part.append(char)
        i += 1
    return i, None


def _double_quoted(kind: ShellKind, text: str, i: int) -> tuple[int, str | None, bool]:
    """The quoted text from ``i`` (after the quote) to the closing quote, and whether it
    holds an expansion (``"$HOME"``)."""
    part: list[str] = []
    escapable = '"$\\\n' if kind == "fish" else '"$`\\\n'
    expands = False
    while i < len(text):
        char = text[i]
        if char == '"':
            return i + 1, "".join(part), expands
        if char == "\\" and i + 1 < len(text) and text[i + 1] in escapable:
            char, i = text[i + 1], i + 1
        elif char == "$" or (char == "`" and kind != "fish"):
            expands = True
        part.append(char)
        i += 1
    return i, None, expands


# --- the result as a document and as text ---------------------------------------------


def check_document(result: CheckResult, notes: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON document of a dry run (``tmux-send --check --json``)."""
    return {"mode": "check", **result._asdict(), "notes": list(notes)}


def describe_check(result: CheckResult) -> str:
    """The dry run for a person or an agent to read, a line per question."""
    if result.parses is None:
        parses = "not checked" + (f": {result.parse_error}" if result.parse_error else "")
    elif result.parses:
        parses = "yes"
    else:
        parses = "no"
    if result.parses is not None and result.parsed_by:
        parses += f" ({result.parsed_by} of this machine checked it)"
    if result.parses is False:
        parses += "\n" + _indent(result.parse_error or "")
    if result.first_word is None:
        first = "none (no command word)"
    else:
        how = (result.resolves_as or "unknown").replace("_", " ")
        first = f"{result.first_word!r}: {how}" + _why_unknown(result)
    ready = "yes" if result.ready else f"no ({result.error_code})\n" + _indent(result.reason or "")
    shell = result.shell or "none tmux-send can drive"
    if result.far is not None:
        where = {"last_call": "from its last call", "probe": "from the probe"}.get(
            result.far["kind_from"], "its kind not known yet"
        )
        via = result.far["via"]
        shell = f"{result.shell or 'unknown'}: the far shell behind `{via}` ({where})"
    lines = [
        f"pane        {result.pane}",
        f"shell       {shell}",
        f"parses      {parses}",
        f"first word  {first}",
        f"ready       {ready}",
        f"would exit  {result.would_exit}" + (" (it would run)" if result.would_exit == 0 else ""),
    ]
    return "\n".join(lines) + "\n"


def _why_unknown(result: CheckResult) -> str:
    if result.resolves_as != "unknown":
        return ""
    if result.typed_lookup:
        return " (the lookup gave no answer in time)"
    if not result.ready:
        return " (not looked up: the pane is not ready)"
    if not result.parses:
        return " (not looked up: the command does not parse)"
    return " (it expands only when run)"


def _indent(text: str) -> str:
    return "\n".join("            " + line for line in text.splitlines())
