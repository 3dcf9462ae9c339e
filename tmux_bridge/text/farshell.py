"""Pure text for far shells (a shell behind ssh, su, sudo, a container or a nested
shell): the probe line and its answer, the typed command line per shell, and the scanner
that cuts stdout, the status and stderr out of the pane's byte stream.

Everything typed is printable ASCII on one line. Whatever the far shell must print
(markers, the command text) is given to ``printf`` with the first underscore of each
marker and every byte outside printable ASCII written as an octal escape, so the far
terminal's echo of the line can never be taken for what the shell prints.

stdout stays the far terminal; the far terminal turns each ``\\n`` into ``\\r\\n``
(``onlcr``), which :class:`FarScanner` undoes exactly (``onlcr`` maps only NL, so a
``\\r\\n`` the command wrote itself arrives as ``\\r\\r\\n`` and comes back as
``\\r\\n``). stderr goes to a far-side file printed after the end marker, made by
``mktemp`` in the far shell's private directory (:func:`tmux_bridge.text.seams.far_dir_function`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..tuples import NamedTuple
from .markers import (
    DEF,
    FIXED,
    HIDDEN_CLOSE,
    HIDDEN_CLOSE_PRINTF,
    HIDDEN_OPEN,
    HIDDEN_OPEN_PRINTF,
    MARK,
    MARK_PRINTF,
    PIECES,
    PROBE,
    answer_pattern,
    err_marker,
    far_end_pattern,
    start_marker,
)
from .seams import far_dir_function, far_temp_file, fish_quoted, printf_text
from .shells import ShellKind, erase_typed, status_line

# the first underscore of each marker as printf writes it: the echo shows ``\\137__``


# --- the probe -----------------------------------------------------------------------------

HELPERS_VERSION = "6"  # bumped when the helper definitions change


class FarLook(NamedTuple):
    """How a clean transcript shows a far call (none: ``--verbose-transcript``): the
    far prompt ends at ``cursor_x`` of a ``width``-column pane; ``banner`` is the header.
    Each typed line is erased by what it prints once the far shell has read it, and the
    markers and answers are hidden in OSC strings (:func:`~tmux_bridge.text.markers.hidden`)."""

    cursor_x: int
    width: int
    banner: str


def _erased(make: Callable[[str], str], look: FarLook, whole_row: bool) -> str:
    """The line ``make`` builds around the printf format that erases that very line
    once the shell has read it: up the rows it took, to the prompt's end (or, for a
    line after which the shell draws a new prompt, ``whole_row``, to the row's start),
    the rest of the screen cleared."""
    erase = ""
    line = make(erase)
    for _ in range(3):  # the row count's digits change the line's length
        seq = erase_typed(look.cursor_x, len(line), look.width)
        if whole_row:
            seq = seq.replace(f"[{look.cursor_x + 1}G", "[1G")
        erase = seq.replace("\x1b", r"\033")
        line = make(erase)
    return line


def _hidden_printf(text: str) -> str:
    return HIDDEN_OPEN_PRINTF + text + HIDDEN_CLOSE_PRINTF


class FarFacts(NamedTuple):
    """What the far shell said about itself; ``helpers`` is whether our two helper
    functions are defined there (from an earlier call)."""

    shell: ShellKind
    version: str
    cwd: str
    helpers: bool
    user: str = ""
    host: str = ""
    os: str = ""
    # whether the far shell has its private directory (``mktemp -d`` worked there): else
    # stderr goes to the terminal, merged into stdout
    tmp_writable: bool = True

    def document(self, via: str, gateway_pid: int) -> dict[str, str | int]:
        """The ``far`` object of a result (and of the pane's context)."""
        return {
            "via": via,
            "gateway_pid": gateway_pid,
            "shell": self.shell,
            "shell_version": self.version,
            "user": self.user,
            "host": self.host,
            "os": self.os,
            "cwd": self.cwd,
        }


def probe_line(call_id: str, look: FarLook | None = None) -> str:
    """One line every far shell (bash, zsh, fish >= 3.4, POSIX sh, busybox) answers with
    ``___TMUXSEND_PROBE_<id> BASH|ZSH|FISH|PWD|FACTS___``, under ``set -u`` too; the
    leading space keeps it out of bash's history (``ignorespace``) and fish's.

    fish takes ``\\'`` inside single quotes as a quote, other shells as the end of the
    quoted text: ``true '\\'; SH; true '; FISH; true \\'`` runs ``SH`` in bash, zsh and
    sh (for which ``; FISH; true \\`` is quoted text) and ``FISH`` in fish (for which
    ``'; SH; true`` is). So each reads only what it parses, and the POSIX part can use
    ``${VAR-}``, which ``set -u`` allows and fish cannot parse. With ``look``, the
    line erases itself and its answer is hidden (:class:`FarLook`)."""
    answer = f"{MARK_PRINTF}{PROBE}_%s %s|%s|%s|%s|%s___\\n"

    def make(erase: str) -> str:
        fmt = f'"{erase}{answer}" {call_id}' if look is None else f'"{erase}{hidden}" {call_id}'
        sh = f'printf {fmt} "${{BASH_VERSION-}}" "${{ZSH_VERSION-}}" "" "$PWD"'
        sh += ' "${__tmux_send_facts-}"'
        fish = f'printf {fmt} "" "" "$FISH_VERSION" "$PWD" "$__tmux_send_facts"'
        return f" true '\\'; {sh}; true '; {fish}; true \\'"

    hidden = _hidden_printf(answer)
    return make("") if look is None else _erased(make, look, whole_row=True)


def probe_pattern(call_id: str) -> re.Pattern[bytes]:
    return answer_pattern(PROBE, call_id)


def parse_probe(answer: bytes) -> FarFacts:
    """The facts in a probe's answer (the text between the id and the final ``___``)."""
    parts = answer.decode("utf-8", "replace").split("|", 4)
    parts += [""] * (5 - len(parts))
    bash, zsh, fish, cwd, facts = parts
    kind: ShellKind = "bash" if bash else "zsh" if zsh else "fish" if fish else "posix"
    base = FarFacts(kind, bash or zsh or fish, cwd, False)
    return with_helper_facts(base, facts.encode())


# --- the helpers, defined once per far shell ---------------------------------------------

# the last substitution succeeds (`set -e`: an assignment has its status)
_FACTS = (
    f"{HELPERS_VERSION}|$(id -un 2>/dev/null)|$(uname -n 2>/dev/null)"
    "|$(uname -s 2>/dev/null; true)|$__tmux_send_w"
)
# the private directory made once, when the helpers are defined: "w" when it was
# (an and-or list, so that a failure does not end a shell under `set -e`)
_SH_DIR = "__tmux_send_w=; __tmux_send_dir && __tmux_send_w=w; "
_FISH_DIR = " set -g __tmux_send_w ''; __tmux_send_dir; and set -g __tmux_send_w w;"
# The clean transcript (``__tmux_send_pad`` set: the pane's width): the end and
# stderr-end markers hidden, each followed by as many spaces, a carriage return and an
# erase to the line's end, which leave the cursor at the start of a line whether or not
# the output ended one (the spaces wrap only after an unfinished line: from a line's
# start they fill it, and the cursor stays there until a next character; a width less
# one would leave an output of one character on the line, then erase it); then, after
# a failure, the status line. Otherwise (``--verbose-transcript``, a REPL's start) the
# bare markers, as the stream's scanner reads either.
_HIDDEN_END = f"{HIDDEN_OPEN_PRINTF}{MARK_PRINTF}%s_%s %d___{HIDDEN_CLOSE_PRINTF}"
_HIDDEN_ERR = f"{HIDDEN_OPEN_PRINTF}{MARK_PRINTF}ERR_%s___{HIDDEN_CLOSE_PRINTF}"
_FAILED = "'\\033[2m[exit %d]\\033[0m\\n'"
_SH_PAD = "\"%${__tmux_send_pad}s\\r\\033[K\" ''"
_FISH_PAD = '"%"$__tmux_send_pad"s\\r\\033[K" \'\''
# (one function prints either form of a mark, so that the line stays within busybox's
# 1023 bytes: __tmux_send_k MARK BEFORE AFTER, BEFORE and AFTER the bare form's)
_SH_MARK = (
    '__tmux_send_k() { if [ -n "${__tmux_send_pad-}" ]; then '
    f'printf "{HIDDEN_OPEN_PRINTF}{MARK_PRINTF}%s___{HIDDEN_CLOSE_PRINTF}'
    '%${__tmux_send_pad}s\\r\\033[K" "$1" \'\'; '
    f'else printf "$2{MARK_PRINTF}%s___$3" "$1"; fi; }}; '
)
_SH_END = (
    "__tmux_send_end() { trap - EXIT; "
    "__tmux_send_k \"$2_$__tmux_send_id $1\" '\\n' ''; "
    'if [ -f "$__tmux_send_err" ]; then cat "$__tmux_send_err"; rm -f "$__tmux_send_err"; fi; '
    "__tmux_send_k \"ERR_$__tmux_send_id\" '' '\\n'; "
    # (a third argument, the recovery line's after an interrupt, is the status line)
    f'[ -z "${{__tmux_send_pad-}}" ] || [ "$1" = 0 ] || {{ [ -n "${{3-}}" ] && printf "$3"; }} '
    f'|| printf {_FAILED} "$1"; }}; '
)
# the first of the two helper lines of a shell but fish (helpers_lines)
_FIRST_HELPERS = far_dir_function() + " " + _SH_MARK.removesuffix(" ")
# (the second argument is what to print first: the start marker, or, in the clean
# transcript, the erasure of the typed line, the header and the hidden start marker)
_SH_BEGIN = (
    "__tmux_send_begin() { __tmux_send_id=$1; __tmux_send_pad=${3-}; "
    + far_temp_file("__tmux_send_err", "err")
    + " || __tmux_send_err=/dev/tty; "
    '{hook} printf "$2"; }; '
)
_FISH = (
    " function __tmux_send_begin; set -g __tmux_send_id $argv[1];"
    " set -g __tmux_send_pad $argv[3]; "
    + far_temp_file("__tmux_send_err", "err", fish=True)
    + "; or set -g __tmux_send_err /dev/tty;"
    " printf $argv[2]; end;"
    " function __tmux_send_end;"
    ' if test -n "$__tmux_send_pad";'
    f" printf '{_HIDDEN_END}' $argv[2] $__tmux_send_id $argv[1]; printf {_FISH_PAD};"
    f" else; printf '\\n{MARK_PRINTF}%s_%s %d___' $argv[2] $__tmux_send_id $argv[1]; end;"
    " if test -f $__tmux_send_err; cat $__tmux_send_err; rm -f $__tmux_send_err; end;"
    ' if test -n "$__tmux_send_pad";'
    f" printf '{_HIDDEN_ERR}' $__tmux_send_id; printf {_FISH_PAD};"
    f" test $argv[1] = 0; or printf {_FAILED} $argv[1];"
    f" else; printf '{MARK_PRINTF}ERR_%s___\\n' $__tmux_send_id; end;"
    " set -e __tmux_send_id; end;"
    " function __tmux_send_exit --on-event fish_exit;"
    " set -l s $status; set -q __tmux_send_id; and __tmux_send_end $s EXIT; end;"
)


def helpers_lines(kind: ShellKind, call_id: str, look: FarLook | None = None) -> list[str]:
    """The lines that define ``__tmux_send_begin`` and ``__tmux_send_end`` in a far
    ``kind`` shell (typed once per far shell), each typed once the one before answered:
    the last answers with its facts (``___TMUXSEND_DEF_<id> FACTS___``), one before it
    with ``___TMUXSEND_DEF_<id>___`` (two lines but for fish: busybox sh's line editor
    keeps 1023 bytes of a line). A command that ends the shell still prints its
    status: an EXIT trap while a call runs (zsh: ``zshexit_functions``; fish: the
    ``fish_exit`` event). With ``look``, each line erases itself and its answer is hidden."""
    lines = []
    parts = [_FIRST_HELPERS, ""] if kind != "fish" else [""]
    for at, part in enumerate(parts):
        facts = at == len(parts) - 1

        def make(erase: str, part: str = part, facts: bool = facts) -> str:
            answer = _answer(call_id, erase, look is not None, facts)
            return _helpers(kind, answer) if facts else part + answer

        lines.append(make("") if look is None else _erased(make, look, True))
    return lines


def helpers_line(kind: ShellKind, call_id: str) -> str:
    """:func:`helpers_lines`, one after the other (for a shell that reads them all)."""
    return "\n".join(helpers_lines(kind, call_id))


def _answer(call_id: str, erase: str, hidden: bool, facts: bool = True) -> str:
    text = f"{MARK_PRINTF}{DEF}_%s %s___\\n" if facts else f"{MARK_PRINTF}{DEF}_%s___\\n"
    text = erase + (_hidden_printf(text) if hidden else text)
    return f" printf '{text}' {call_id}" + (' "$__tmux_send_facts"' if facts else "")


def _helpers(kind: ShellKind, answer: str) -> str:
    if kind == "fish":
        facts = f' set -g __tmux_send_facts "{_FACTS}";'
        return far_dir_function(fish=True) + _FISH + _FISH_DIR + facts + answer
    if kind == "zsh":
        hook = "zshexit_functions+=(__tmux_send_exit);"
        end = _SH_END.replace(
            "trap - EXIT;", "zshexit_functions=(${zshexit_functions:#__tmux_send_exit});"
        )
        exit_fn = (
            "__tmux_send_exit() { __tmux_send_end $? EXIT; }; "
            # our lines stay out of zsh's history without histignorespace
            # (no failing command inside: err_exit in the hook would drop the line)
            "__tmux_send_nohist() { setopt localoptions noerrexit noerrreturn; "
            f"[[ $1 != *__tmux_send_* && $1 != *{MARK.lstrip('_')}{PROBE}_* ]]; }}; "
            "zshaddhistory_functions+=(__tmux_send_nohist); "
        )
    else:
        hook, end, exit_fn = "trap '__tmux_send_end $? EXIT' EXIT;", _SH_END, ""
    return (
        " "
        + _SH_BEGIN.replace("{hook}", hook)
        + end
        + exit_fn
        + _SH_DIR
        + f'__tmux_send_facts="{_FACTS}";'
        + answer
    )


def helpers_pattern(call_id: str) -> re.Pattern[bytes]:
    return answer_pattern(DEF, call_id)


def with_helper_facts(facts: FarFacts, answer: bytes) -> FarFacts:
    """``facts`` completed by the answer of :func:`helpers_line`."""
    known = answer.decode("utf-8", "replace").split("|")
    if len(known) != 5 or known[0] != HELPERS_VERSION:
        return facts
    return facts._replace(
        helpers=True, user=known[1], host=known[2], os=known[3], tmp_writable=known[4] == "w"
    )


# --- the command line ----------------------------------------------------------------------


def command_line(kind: ShellKind, call_id: str, command: bytes, look: FarLook | None = None) -> str:
    """The one short line typed into a far ``kind`` shell (its helpers defined) to run
    ``command`` there: ``eval``'d in the shell itself, so state persists (after a space:
    bash's eval takes a leading ``-`` for an option, dash's has no ``--``); stdout on the
    terminal, stderr to a far file printed after the end marker (merged into stdout when
    the far shell has no private directory: ``mktemp -d`` failed or is missing). With
    ``look``, the line erases itself, a header takes its place, the markers are hidden."""
    text = printf_text(command)
    if kind == "fish":
        run = f"begin; eval (printf '{text}' | string collect); end 2>$__tmux_send_err"
        return _begin_line(call_id, f"{run}; __tmux_send_end $status END", look)
    run = f'{{ eval " $(printf \'{text}\')"; }} 2>"$__tmux_send_err"'
    return _begin_line(call_id, f"{run}; __tmux_send_end $? END", look)


# The most characters of a far call's header as a printf format: it is typed in the
# command's line, which a POSIX sh takes up to POSIX_PIECE characters of.
HEADER_MAX = 400


def header_text(banner: str) -> str:
    """``banner`` as a printf format of at most :data:`HEADER_MAX` characters: cut, with
    how many characters are not shown, when longer."""
    text = printf_text(banner.encode("utf-8", "surrogateescape"))
    keep = HEADER_MAX - 40
    while len(text) > HEADER_MAX and keep > 0:
        text = printf_text(
            f"{banner[:keep]} ... ({len(banner) - keep} more characters)".encode(
                "utf-8", "surrogateescape"
            )
        )
        keep //= 2
    return text


def _begin_line(call_id: str, rest: str, look: FarLook | None) -> str:
    """`` __tmux_send_begin ID HEAD PAD; REST``: what to print first (the bare start
    marker; with ``look``, the line's erasure, the header and the hidden start marker)
    and, for the clean transcript, the pane's width (:data:`_SH_END`)."""
    if look is None:
        return f" __tmux_send_begin {call_id} '{MARK_PRINTF}START_{call_id}___\\n' ''; {rest}"
    head, pad = head_printf(call_id, look), max(look.width, 1)
    return _erased(
        lambda erase: f" __tmux_send_begin {call_id} '{erase}{head}' {pad}; {rest}", look, False
    )


def head_printf(call_id: str, look: FarLook) -> str:
    """What the clean transcript prints before a far call's output, as a printf format:
    the dim header, then the hidden start marker (after the typed line's erasure)."""
    start = f"{MARK_PRINTF}START_{call_id}___"
    return f"\\033[2m{header_text(look.banner)}\\033[0m\\n{_hidden_printf(start)}"


def erased_line(make: Callable[[str], str], look: FarLook) -> str:
    """The line ``make`` builds around the printf format that erases it once the far
    shell has read it, back to the far prompt's end (a far REPL's start line)."""
    return _erased(make, look, whole_row=False)


# A POSIX sh reads its line in the terminal's canonical mode, which takes at most 4095
# bytes a line, and line editors slow down on very long lines: a longer command goes in
# pieces of at most this many characters, each appended to a variable.
PIECE = 3000
# busybox sh (a POSIX sh to the probe) reads with its own line editor, which keeps the
# first 1023 bytes of a line and drops the rest: a POSIX sh gets shorter lines.
POSIX_PIECE = 900
# A longer command, once cut, goes in shorter pieces still: fish's and zsh's line editors
# take time that grows faster than the line (a file operation's 14 KB command: fish 2.6 s
# in pieces of 3000 characters, 1.2 s in pieces of 1000; zsh 1.0 s and 0.6 s; bash 0.3 s
# either way; measured 2026-11-26).
CUT_PIECE = 1000


def piece_size(kind: ShellKind) -> int:
    """The longest command text (a printf format) typed in one line to a ``kind`` shell."""
    return POSIX_PIECE if kind == "posix" else PIECE


# How a command collected in ``__tmux_send_c`` (a printf format) runs and ends.
_SH_RUN = '{ eval " $(printf "$__tmux_send_c")"; } 2>"$__tmux_send_err"; __tmux_send_end $? END'
_FISH_RUN = (
    "begin; eval (printf $__tmux_send_c | string collect); end 2>$__tmux_send_err;"
    " __tmux_send_end $status END"
)


def command_lines(
    kind: ShellKind, call_id: str, command: bytes, look: FarLook | None = None
) -> list[str]:
    """The lines typed to run ``command``: :func:`command_line`, or for a long command
    pieces of its text collected in ``__tmux_send_c`` first (with ``look``, only the
    last line is erased: the pieces' lines stay)."""
    text = printf_text(command)
    size = piece_size(kind)
    if len(text) + (len(header_text(look.banner)) if look else 0) <= size:
        return [command_line(kind, call_id, command, look)]
    lines: list[str] = []
    for piece in _pieces(text, min(size, CUT_PIECE)):
        if kind == "fish":
            before = '"$__tmux_send_c"' if lines else ""
            lines.append(f" set -g __tmux_send_c {before}'{piece}'")
        else:
            before = "$__tmux_send_c" if lines else ""
            lines.append(f" __tmux_send_c={before}'{piece}'")
    return [*lines, _begin_line(call_id, _FISH_RUN if kind == "fish" else _SH_RUN, look)]


def quiet_lines(
    kind: ShellKind, call_id: str, command: bytes, look: FarLook | None
) -> tuple[str, list[str]] | None:
    """For the clean transcript, a command too long for one line: the one line to type,
    which turns the far terminal's echo off (in fish, a POSIX sh it starts does), answers
    ``___TMUXSEND_PIECES_<id> ok___`` (hidden), reads the pieces of the command's text
    a line each, turns the echo on and runs the command as :func:`command_line` does;
    and the pieces, to paste once it answered. None: :func:`command_lines` it is."""
    text = printf_text(command)
    size = piece_size(kind)
    if look is None or len(text) + len(header_text(look.banner)) <= size:
        return None
    pieces = _pieces(text, size)
    answer = _hidden_printf(f"{MARK_PRINTF}{PIECES}_%s ok___\\n")
    # (in fish, the answer goes to stderr, the terminal: stdout is the text fish keeps)
    to = " >&2" if kind == "fish" else ""
    read = (
        f"{{ stty -echo 2>/dev/null || :; }}; printf '{answer}' {call_id}{to}; __tmux_send_c=;"
        f" __tmux_send_n={len(pieces)}; while [ $__tmux_send_n -gt 0 ]"
        " && IFS= read -r __tmux_send_l; do __tmux_send_c=$__tmux_send_c$__tmux_send_l;"
        " __tmux_send_n=$((__tmux_send_n - 1)); done; { stty echo 2>/dev/null || :; };"
    )
    run = _SH_RUN
    if kind == "fish":
        # fish's own `read` draws with its line editor: a POSIX sh reads the pieces and
        # prints the text for fish to keep
        sh = f'{read} printf %s "$__tmux_send_c"'
        read = f"set -g __tmux_send_c (command sh -c {fish_quoted(sh)} | string collect);"
        run = _FISH_RUN
    head, pad = head_printf(call_id, look), max(look.width, 1)
    line = _erased(
        lambda erase: f" {read} __tmux_send_begin {call_id} '{erase}{head}' {pad}; {run}",
        look,
        False,
    )
    return line, pieces


def pieces_pattern(call_id: str) -> re.Pattern[bytes]:
    """The answer of :func:`quiet_lines`'s line: its echo is off, it reads the pieces."""
    return answer_pattern(PIECES, call_id)


def _pieces(text: str, size: int) -> list[str]:
    """``text`` (a printf format) cut into pieces of at most ``size`` characters, never
    inside an escape (``\\ooo``, ``%%``)."""
    pieces = []
    while text:
        cut = min(size, len(text))
        escape = text.rfind("\\", cut - 3, cut)
        if cut < len(text) and escape >= 0:
            cut = escape  # not inside \ooo
        percents = len(text[:cut]) - len(text[:cut].rstrip("%"))
        if cut < len(text) and percents % 2:
            cut -= 1  # not between the two of a %%
        pieces.append(text[:cut])
        text = text[cut:]
    return pieces


def recovery_line(kind: ShellKind, after: Recovery | None = None) -> str:
    """The line typed when an interrupt cut the command line short (the shell drops the
    rest of a line whose command Ctrl-C killed): the status it left, stderr, cleanup.
    With ``after`` (the clean transcript; not fish, which rarely needs the line), the
    line erases itself, the far prompt it was typed at and the terminal's ``^C`` echo
    above it, and the status line says why the command was interrupted."""
    if kind == "fish":
        return " __tmux_send_end $status END"
    if after is None:
        return " __tmux_send_end $? END"
    status = printf_text(status_line(1, after.why).encode()) if after.why else ""
    echo_rows, echo_x = after.echo if after.echo is not None else (0, 0)
    # (the far shell's own line end after the ^C: as in a local shell, an empty line)
    line_end = "\\n" if after.echo is not None and (echo_rows or echo_x) else ""

    def make(erase: str) -> str:
        end = f" '{status}'" if status else ""
        run = f"__tmux_send_end $__tmux_send_s END{end}"
        return f" __tmux_send_s=$?; printf '{erase}{line_end}'; {run}"

    line = make("")
    for _ in range(3):  # the row count's digits change the line's length
        seq = erase_typed(after.cursor_x, len(line), after.width)
        rows = int(seq[2 : seq.index("A")]) + echo_rows
        erase = f"\\033[{rows}A\\033[{echo_x + 1}G\\033[J"
        line = make(erase)
    return line


def fixup_line(call_id: str, after: Recovery, failed: bool) -> str:
    """For the clean transcript, the line typed at the far prompt after a call whose end
    marker came although tmux-send interrupted it (fish goes on with a line whose command
    Ctrl-C killed; any shell, with a command that caught Ctrl-C and exited by itself).
    Once read, it deletes the terminal's ``^C`` echo (``after.echo``: rows above the
    prompt's row, column; its two characters only: stderr printed below stays), erases the
    ``[exit N]`` line the call printed (``failed``), the far prompt and itself, prints
    the status line with the reason (``after.why``) and answers
    ``___TMUXSEND_FIXED_<id> ok___`` (hidden)."""
    status = printf_text(status_line(1, after.why).encode())
    shown = 1 if failed else 0  # the [exit N] row, right above the prompt's
    answer = _hidden_printf(f"{MARK_PRINTF}{FIXED}_%s ok___\\n")

    def make(erase: str) -> str:
        return f" printf '{erase}{status}{answer}' {call_id}"

    line = make("")
    for _ in range(3):  # the row count's digits change the line's length
        seq = erase_typed(after.cursor_x, len(line), after.width)
        rows = int(seq[2 : seq.index("A")])
        erase = f"\\033[{rows + shown}A\\033[1G\\033[J"
        if after.echo is not None and after.echo[0] > shown:
            echo_rows, echo_x = after.echo
            erase = (
                f"\\033[{rows + echo_rows}A\\033[{echo_x + 1}G\\033[2P"
                f"\\033[{echo_rows - shown}B\\033[1G\\033[J"
            )
        line = make(erase)
    return line


def fixed_pattern(call_id: str) -> re.Pattern[bytes]:
    """The answer of :func:`fixup_line`."""
    return answer_pattern(FIXED, call_id)


class Recovery(NamedTuple):
    """Where the recovery line is typed and what it erases (:func:`recovery_line`): the
    far prompt ends at ``cursor_x`` of a ``width``-column pane; ``echo`` is where the
    terminal echoed the first Ctrl-C (rows above the prompt's row, column), when known;
    ``why`` the reason the status line gives (``idle timeout``; empty: ``[exit N]``)."""

    cursor_x: int
    width: int
    echo: tuple[int, int] | None
    why: str


# --- the stream ----------------------------------------------------------------------------


def undo_onlcr(data: bytes) -> bytes:
    """The bytes the command wrote, from what its terminal sent on (``\\r\\n`` -> ``\\n``)."""
    return data.replace(b"\r\n", b"\n")


MARKER_MAX = 64  # bytes of an end marker: "\r\n___TMUXSEND_EXIT_<id> <status>___"


class FarScanner:
    """Cuts one far call out of the pane's raw stream: the echo and everything before
    the start marker is dropped, stdout is handed on as it comes (``feed``), then the
    status of the end (or exit) marker and stderr up to its own end marker are kept."""

    def __init__(self, call_id: str) -> None:
        self._start = start_marker(call_id).encode()
        self._end = far_end_pattern(call_id)
        self._err_end = err_marker(call_id)
        # what comes before a marker: a line end (bare), a hidden marker's start (clean)
        self._tails = (b"\r\n" + MARK.encode(), _HIDDEN_START + MARK.encode())
        self._buf = b""
        self.started = False
        self.status: int | None = None
        self.shell_ended = False
        self.stderr = b""
        self.done = False

    @property
    def ended(self) -> bool:
        return self.status is not None

    def feed(self, data: bytes) -> bytes:
        """stdout as the command wrote it, as far as it is certain not to be a marker."""
        buf = self._buf + data
        if not self.started:
            after = _after_start(buf, self._start)
            if after < 0:
                self._buf = buf[-len(self._start) - 2 :]
                return b""
            self.started = True
            buf = buf[after:]
        if self.ended:
            self._buf = b""
            self._take_stderr(buf)
            return b""
        match = self._end.search(buf)
        if match:
            self.status = int(match.group(2))
            self.shell_ended = match.group(1) == b"EXIT"
            self._buf = b""
            self._take_stderr(buf[match.end() :])
            return undo_onlcr(buf[: match.start()])
        keep = min(_held_from(buf, tail) for tail in self._tails)
        self._buf = buf[keep:]
        return undo_onlcr(buf[:keep])

    def _take_stderr(self, data: bytes) -> None:
        if self.done:
            return
        self.stderr += data
        at = self.stderr.find(self._err_end)
        if at >= 0:
            # (less what the clean transcript prints around it: see _SH_END)
            stderr = _AFTER_END.sub(b"", self.stderr[:at], count=1)
            self.stderr = undo_onlcr(stderr.removesuffix(_HIDDEN_START))
            self.done = True

    def release_line_end(self) -> bytes:
        """After a silence: a held ``\r\n`` is the command's own, since the end marker
        comes in one write with the line end printed before it."""
        if self.started and not self.ended and self._buf == b"\r\n":
            self._buf = b""
            return b"\n"
        return b""

    def flush(self) -> bytes:
        """What is held back, for a stream that ends without the end marker."""
        held, self._buf = (self._buf if self.started and not self.ended else b""), b""
        return undo_onlcr(held)


_HIDDEN_START = HIDDEN_OPEN.encode()
# what the clean transcript prints after the end marker: the end of its OSC string, the
# spaces, carriage return and erasure that start a line (_SH_END)
_AFTER_END = re.compile(rb"\A" + re.escape(HIDDEN_CLOSE.encode()) + rb"(?: *\r\x1b\[K)?")


def _after_start(buf: bytes, start: bytes) -> int:
    """Where the output starts after the start marker in ``buf`` (its line end when
    bare, its OSC string's end when hidden), or -1 while that is not known."""
    at = buf.find(start)
    if at < 0:
        return -1
    after = at + len(start)
    if buf[after : after + 1] == HIDDEN_CLOSE.encode():
        return after + 1
    if buf[after : after + 2] == b"\r\n":
        return after + 2
    return -1


def _held_from(buf: bytes, tail: bytes) -> int:
    """Where in ``buf`` what may be ``tail`` and a marker starts (its length when
    nothing may): a marker begun, its id or status still to come, or its start."""
    keep = len(buf) - _overlap(buf, tail)  # also a lone "\r" (half a "\r\n")
    begun = buf.rfind(tail, max(0, len(buf) - MARKER_MAX))
    return min(keep, begun) if begun >= 0 else keep


def _overlap(data: bytes, tail: bytes) -> int:
    """Length of the longest end of ``data`` that ``tail`` starts with."""
    for size in range(min(len(data), len(tail)), 0, -1):
        if tail.startswith(data[-size:]):
            return size
    return 0


# --- the far prompt drawn again ----------------------------------------------------------

# a terminal's control sequences (CSI, OSC, charset, two-byte) and its other controls
_CONTROLS = re.compile(
    rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()*+][0-~]|[ -~])"
    rb"|[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]"
)


def prompt_drawn(after: bytes, prompt: str) -> bool:
    """Whether the far shell's output ``after`` the answer of a line that erased its row
    ends by drawing ``prompt`` (as the screen showed it left of the cursor): its text
    after the last carriage return or line feed, without control sequences, holds it.
    zsh's PROMPT_SP mark (``%``, spaces, carriage returns) is no prompt."""
    if not prompt:
        return False
    last = max(after.rfind(b"\r"), after.rfind(b"\n"))
    text = _CONTROLS.sub(b"", after[last + 1 :]).decode("utf-8", "replace")
    return prompt in text
