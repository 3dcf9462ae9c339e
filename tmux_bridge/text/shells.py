"""What is typed into the pane's shell, and the runner script it sources. Pure text, no I/O.

A call types one short line, `` . /tmp/tmux-bridge-$USER/<id>.run`` (fish: ``source``),
into the person's shell. That runner file, written here, does the rest inside the shell:

1. prints the agent's command (control characters made visible) and the start marker;
2. sources the command file with stdout and stderr on tmux-send's two relay terminals,
   so the command runs in the person's own shell (``cd``, variables persist) and sees
   terminals on all three streams;
   Pager variables the person has not set are set to ``cat`` for the command;
3. finishes: writes an in-band sentinel carrying the status to both relays (it arrives
   after every byte the command wrote), waits until tmux-send acknowledges or goes away
   (so the end marker lands after the last output in the pane), prints the end marker
   and returns the command's status, so ``$?`` stays right for the person. The stdout
   relay is opened for this before the sentinels are written (see the note above the
   templates).

Step 3 also runs from a one-shot prompt hook, because an interrupted command (Ctrl-C)
makes the shell drop the rest of the runner; the hook fires at the next prompt either
way. An exit hook reports the status when the command ends the shell itself (``exit 3``).
Every line is safe under ``set -eu``: a failing ``printf`` to a vanished relay must not
end the person's shell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ..tuples import NamedTuple
from .markers import (
    HIDDEN_CLOSE_PRINTF,
    HIDDEN_OPEN_PRINTF,
    SENTINEL_DONE,
    SENTINEL_EXIT,
    end_marker,
    sentinel_format,
    start_marker,
)
from .seams import excerpt, is_name, visible_lines

ShellKind = Literal["bash", "zsh", "fish", "posix"]

# Words no shell changes: no =word (zsh expands it to a path) and no %word (fish: PIDs).
_SAFE_WORD = re.compile(r"[A-Za-z0-9_./:@+,-]+")

# The acknowledgement only says "go": by then tmux-send has put all output in the pane.
ACK = b"\n"

# Set to `cat` for the command when the person has not set them: with a terminal on
# stdout, git, man, systemctl and psql would otherwise wait in a pager for keys.
PAGER_VARIABLES = ("GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "PSQL_PAGER", "PAGER")

BANNER_PREFIX = "[tmux-send] "


class RunnerSpec(NamedTuple):
    """Everything a runner script needs to know about one call.

    Without relay terminals (``stdout_tty`` empty) the command writes to the pane itself
    and the runner only prints the markers there: that is how a REPL is started, since
    it must keep the pane's terminal after the call.
    """

    call_id: str
    runner_path: str  # the file itself: zsh and fish take the line sourcing it out of history
    command_path: str
    stdout_tty: str
    stderr_tty: str
    banner: str
    shell_binary: str  # used by fish and POSIX sh to syntax-check before sourcing
    # fish: whether the command is syntax-checked first (False only for a line
    # :func:`parses_in_fish` vouches for)
    check: bool = True
    # the clean transcript: what erases the typed line before the header
    # (:func:`typed_erasure`), or None for today's visible plumbing (--verbose-transcript)
    erase: str | None = ""


def scratch_path(runner_path: str) -> str:
    """A call file the runner itself writes: bash saves the person's EXIT trap there,
    zsh the history line it puts back."""
    return runner_path.rsplit(".", 1)[0] + ".scratch"


def quote(kind: ShellKind, text: str) -> str:
    """Quote ``text`` as one word for ``kind``; the shell will see it byte for byte."""
    if text and _SAFE_WORD.fullmatch(text):
        return text
    if kind == "fish":
        # fish single quotes take two escapes: \' and \\
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + text.replace("'", "'\\''") + "'"


def join_words(kind: ShellKind, words: Sequence[str]) -> str:
    """A command line that runs ``words`` as one command with these exact arguments,
    each quoted for ``kind``: what ``sudo``, ``env`` or ``timeout`` do with their
    arguments. One word is left alone: it is shell code (``'a | b; c'``)."""
    if len(words) == 1:
        return words[0]
    return " ".join(quote(kind, word) for word in words)


# Sent before the typed line. Whatever mode the shell's line editor is in, `i` and
# BackSpace leave it in insert (vi) or emacs mode with the line as it was: in vi normal
# mode (the person pressed Escape) `i` enters insert mode and BackSpace at the start of
# the insertion deletes nothing; in insert or emacs mode `i` is typed and deleted again.
# Without them, vi normal mode would read the typed line as commands (`.` repeats the
# last change, `/` searches history). Then C-e C-u clear the line, which the caller has
# checked holds nothing of the person's.
LINE_EDITOR_RESET = ("i", "BSpace", "C-e", "C-u")


def typed_line(kind: ShellKind, runner_path: str) -> str:
    """The one line typed into the shell. The leading space keeps it out of history
    where the shell is set to ignore such lines (fish always; bash and zsh if configured)."""
    verb = "source" if kind == "fish" else "."
    return f" {verb} {quote(kind, runner_path)}"


def display_command(command: str, agent: str | None = None) -> str:
    """The agent's command as shown to the person: control characters made visible
    (:func:`~tmux_bridge.text.seams.visible_lines`: its lines stay lines, nothing in it can
    drive the terminal), and a long one cut to its start and its end with a line that
    says how many lines and characters are not shown (:func:`~tmux_bridge.text.seams.excerpt`:
    at most 12 lines, 4000 characters of the command). After ``[tmux-send: AGENT] `` when
    the calling agent's name is known (and is a name: 1 to 40 of A-Z a-z 0-9 _ . -)."""
    prefix = f"[tmux-send: {agent}] " if agent and is_name(agent) else BANNER_PREFIX
    return prefix + visible_lines(excerpt(command).text)


# How the header and the status line are marked as tmux-send's, not the person's: dim.
_STYLE_ON = r"\033[2m"
_STYLE_OFF = r"\033[0m"


def erase_typed(cursor_x: int, length: int, width: int) -> str:
    """The escapes that erase a line of ``length`` characters typed at column
    ``cursor_x`` of a ``width``-column pane, once Enter has moved the cursor below it:
    up the rows it took, to its first column, everything from there on erased."""
    end = cursor_x + length
    rows = (end - 1) // max(width, 1) + 1 if end > 0 else 1
    return f"\x1b[{rows}A\x1b[{cursor_x + 1}G\x1b[J"


def typed_erasure(kind: ShellKind, runner_path: str, cursor_x: int, width: int) -> str:
    """What takes the typed line off the screen once the shell has read it, as
    ``printf(1)`` must see it: the cursor goes back up the rows the line took (it was
    typed at column ``cursor_x`` of a ``width``-column pane, after the prompt), to the
    column where it began, and everything from there on is erased. The prompt stays;
    the header takes the typed line's place. A screen row that has scrolled into
    the history is out of reach: only a pane too small to hold the typed line leaves it."""
    erase = erase_typed(cursor_x, len(typed_line(kind, runner_path)), width)
    return erase.replace("\x1b", r"\033")


def status_line(status: int, interrupted: str = "") -> str:
    """The one line shown after a call that failed or was interrupted (none after a
    success): ``[exit 2]``, ``[interrupted: idle timeout]``; with its style, as printed."""
    if interrupted:
        text = f"[interrupted: {interrupted}]"
    elif status:
        text = f"[exit {status}]"
    else:
        return ""
    return "\x1b[2m" + text + "\x1b[0m\n"


def runner_script(kind: ShellKind, spec: RunnerSpec) -> str:
    """The script the shell sources for one call."""
    clean = spec.erase is not None
    template = _TEMPLATES[kind]
    if not spec.check:
        template = "".join(
            line for line in template.splitlines(keepends=True) if _CHECK_TAG not in line
        )
    return _fill(template, _common(kind, spec), relays=bool(spec.stdout_tty), clean=clean)


# fish's reserved words, and the builtins that take the rest of the line as a command
_FISH_KEYWORDS = frozenset(
    {"and", "begin", "break", "builtin", "case", "command", "continue", "else", "end",
     "exec", "for", "function", "if", "in", "not", "or", "return", "switch", "time",
     "while"}
)  # fmt: skip
_PLAIN_LINE = re.compile(rb"[A-Za-z0-9_./:@+,-]+(?: [A-Za-z0-9_./:@+,-]+)*\n?")


def parses_in_fish(command: bytes) -> bool:
    """Whether fish parses ``command`` whatever it holds: one line of plain words
    (letters, digits and ``_./:@+,-``, no quote, no expansion, no separator) between
    single spaces, the first no keyword of fish's and no option. Such a line needs no
    syntax check before it is sourced (``fish --no-execute``, a process of about 3 ms a
    call); any other line is checked."""
    if not _PLAIN_LINE.fullmatch(command):
        return False
    first = command.split(b" ", 1)[0].strip()
    return not first.startswith(b"-") and first.decode() not in _FISH_KEYWORDS


def _common(kind: ShellKind, spec: RunnerSpec) -> dict[str, str]:
    def q(text: str) -> str:
        return quote(kind, text)

    return {
        "PO": q(spec.stdout_tty),
        "PE": q(spec.stderr_tty),
        "CMD": q(spec.command_path),
        "TMP": q(scratch_path(spec.runner_path)),
        "TYPED": q(typed_line(kind, spec.runner_path)),
        "DONE": q(sentinel_format(spec.call_id, SENTINEL_DONE)),
        "EXIT": q(sentinel_format(spec.call_id, SENTINEL_EXIT)),
        "BANNER": q(spec.banner),
        **_marks(kind, spec),
        "SH": q(spec.shell_binary),
        "PAGERS": " ".join(PAGER_VARIABLES),
    }


def _marks(kind: ShellKind, spec: RunnerSpec) -> dict[str, str]:
    """The header, the markers and the status line as ``printf(1)`` formats: bare
    (``--verbose-transcript``), or the clean transcript's (the typed line erased, the
    header dim, the markers hidden, a status line only after a failure)."""
    start, end = start_marker(spec.call_id), end_marker(spec.call_id, "%d")
    if spec.erase is None:
        head, tail = "%s\\n" + start + "\\n", end + "\\n"
        return {"HEAD": quote(kind, head), "END": quote(kind, tail), "FAILED": "''"}
    head = spec.erase + _STYLE_ON + "%s" + _STYLE_OFF + "\\n" + _hidden(start)
    failed = _STYLE_ON + "[exit %d]" + _STYLE_OFF + "\\n"
    return {
        "HEAD": quote(kind, head),
        "END": quote(kind, _hidden(end)),
        "FAILED": quote(kind, failed),
    }


def _hidden(marker: str) -> str:
    return HIDDEN_OPEN_PRINTF + marker + HIDDEN_CLOSE_PRINTF


_RELAY_TAG = "  # relay"
_BARE_TAG = "  # bare"  # the status line a runner without relays prints itself
_CHECK_TAG = "  # check"  # the syntax check, left out when a line needs none


def _fill(template: str, values: dict[str, str], relays: bool, clean: bool = True) -> str:
    lines = template.splitlines(keepends=True)
    if relays or not clean:  # tmux-send prints the status line, or the end marker shows it
        lines = [line for line in lines if _BARE_TAG not in line]
    if relays:
        values = {**values, "REDIRECT": " >@PO@ 2>@PE@", "CHECKERR": " 2>@PE@"}
        template = "".join(lines).replace(_RELAY_TAG + "\n", "\n")
    else:
        values = {**values, "REDIRECT": "", "CHECKERR": ""}
        template = "".join(line for line in lines if _RELAY_TAG not in line)
    template = template.replace(_BARE_TAG + "\n", "\n").replace(_CHECK_TAG + "\n", "\n")
    for key in ("REDIRECT", "CHECKERR"):  # template text holding placeholders itself
        template = template.replace("@" + key + "@", values.pop(key))
    # one pass: a value (the banner shows the agent's command) is never scanned again,
    # so a command holding "@START@" stays as it is
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


_PLACEHOLDER = re.compile(r"@([A-Z]+)@")


# The sentinels and the wait for the acknowledgement are one block that holds
# the stdout relay open on its stdin, opened before anything in it runs. tmux-send closes
# the relays (their /dev/pts paths vanish) as soon as it has both sentinels and has sent
# the acknowledgement, so a path opened after the sentinel may no longer exist: every
# shell then printed a warning into the pane (fish about 1 call in 3 with remain-on-exit
# on). The held descriptor reads the acknowledgement, or end-of-file once tmux-send has
# closed the relay; either comes after tmux-send put the last output in the pane.
# `2>/dev/null` comes first so a relay gone before the block (tmux-send gave up) stays
# quiet in bash, zsh and dash; fish warns about a failed redirection whatever the order.

# bash: the hook is the first entry of PROMPT_COMMAND (string or array element 0), the
# exit hook an EXIT trap; the person's own EXIT trap is saved and put back. It is saved
# through a file, not `$(trap -p EXIT)`: with `set -o functrace` a command substitution
# runs the person's DEBUG trap too, and whatever that prints (a title escape, say) would
# be captured and run as code.
_BASH = r"""__tmux_send_finish() {
    local __tmux_send_status=$?
    PROMPT_COMMAND=${PROMPT_COMMAND/__tmux_send_finish;/}
    builtin trap - EXIT
    builtin eval "${__tmux_send_exit_trap-}"
    {  # relay
        builtin printf @DONE@ "$__tmux_send_status" >@PE@  # relay
        builtin printf @DONE@ "$__tmux_send_status" >@PO@  # relay
        builtin read -r __tmux_send_ack  # relay
    } 2>/dev/null <@PO@ || :  # relay
    builtin unset __tmux_send_ack
    builtin printf @END@ "$__tmux_send_status"
    [ "$__tmux_send_status" = 0 ] || builtin printf @FAILED@ "$__tmux_send_status"  # bare
    for __tmux_send_v in ${__tmux_send_pagers-}; do  # unless the command changed it
        [ "${!__tmux_send_v-}" != cat ] || builtin unset "$__tmux_send_v"
    done
    builtin unset -f __tmux_send_finish __tmux_send_exit
    builtin unset __tmux_send_exit_trap __tmux_send_pagers __tmux_send_v
    return "$__tmux_send_status"
}
__tmux_send_exit() {
    local __tmux_send_status=$?
    builtin printf @EXIT@ "$__tmux_send_status" >@PE@ 2>/dev/null || :  # relay
    builtin printf @EXIT@ "$__tmux_send_status" >@PO@ 2>/dev/null || :  # relay
}
builtin trap -p EXIT >@TMP@
builtin read -r -d '' __tmux_send_exit_trap <@TMP@ || :
builtin trap __tmux_send_exit EXIT
PROMPT_COMMAND="__tmux_send_finish;${PROMPT_COMMAND-}"
__tmux_send_pagers=
for __tmux_send_v in @PAGERS@; do
    [ -n "${!__tmux_send_v+x}" ] && continue
    builtin export "$__tmux_send_v=cat"
    __tmux_send_pagers+=" $__tmux_send_v"
done
builtin printf @HEAD@ @BANNER@
{ . @CMD@; }@REDIRECT@
__tmux_send_finish
"""

# zsh: one-shot entries in precmd_functions and zshexit_functions. Our own code runs
# under `emulate -L zsh`, so the person's options (ksharrays, nounset, ...) cannot break
# it; the command itself runs with their options. With hist_ignore_space the typed line
# stays in the in-memory history until another line is added, so Up would recall it:
# the person's previous line is added back (`fc -R` marks it as read from the file, so
# it is not written to the history file twice), which drops the typed line. This is done
# before the command runs, so tmux-send removes the file it takes.
_ZSH = r"""__tmux_send_finish() {
    local __tmux_send_status=$?
    emulate -L zsh
    precmd_functions=(${precmd_functions:#__tmux_send_finish})
    zshexit_functions=(${zshexit_functions:#__tmux_send_exit})
    local __tmux_send_ack
    {  # relay
        builtin printf @DONE@ $__tmux_send_status >@PE@  # relay
        builtin printf @DONE@ $__tmux_send_status >@PO@  # relay
        builtin read -r __tmux_send_ack  # relay
    } 2>/dev/null <@PO@ || :  # relay
    builtin printf @END@ $__tmux_send_status
    (( __tmux_send_status == 0 )) || builtin printf @FAILED@ $__tmux_send_status  # bare
    local __tmux_send_v
    for __tmux_send_v in $__tmux_send_pagers; do  # unless the command changed it
        [[ ${(P)__tmux_send_v-} != cat ]] || builtin unset $__tmux_send_v
    done
    builtin unset __tmux_send_pagers
    builtin unfunction __tmux_send_finish __tmux_send_exit 2>/dev/null
    return $__tmux_send_status
}
__tmux_send_forget() {  # Up-arrow recalls the person's last command, not the typed line
    local -i __tmux_send_n=$HISTCMD
    [[ ${history[$__tmux_send_n]-} == @TYPED@ ]] || __tmux_send_n=$(( HISTCMD - 1 ))
    [[ ${history[$__tmux_send_n]-} == @TYPED@ ]] || return 0
    local __tmux_send_line=${history[$(( __tmux_send_n - 1 ))]-}
    [[ -n $__tmux_send_line && $__tmux_send_line != *$'\n'* ]] || return 0
    builtin print -r -- $__tmux_send_line >| @TMP@ 2>/dev/null || return 0
    builtin fc -R @TMP@ 2>/dev/null
}
__tmux_send_exit() {
    local __tmux_send_status=$?
    emulate -L zsh
    (( ZSH_SUBSHELL == 0 )) || return 0  # zsh runs exit hooks in subshells, `(exit 3)`
    builtin printf @EXIT@ $__tmux_send_status >@PE@ 2>/dev/null || :  # relay
    builtin printf @EXIT@ $__tmux_send_status >@PO@ 2>/dev/null || :  # relay
}
__tmux_send_setup() {
    emulate -L zsh
    precmd_functions=(__tmux_send_finish $precmd_functions)
    zshexit_functions=(__tmux_send_exit $zshexit_functions)
    typeset -ga __tmux_send_pagers=()
    local __tmux_send_v
    for __tmux_send_v in @PAGERS@; do
        (( ${+parameters[$__tmux_send_v]} )) && continue
        export $__tmux_send_v=cat
        __tmux_send_pagers+=($__tmux_send_v)
    done
    __tmux_send_forget
    builtin printf @HEAD@ @BANNER@
    builtin unfunction __tmux_send_setup __tmux_send_forget
}
__tmux_send_setup
{ . @CMD@; }@REDIRECT@
__tmux_send_finish
"""

# fish: fish_postexec fires after the typed line even when Ctrl-C cut the runner short.
# fish reports parse errors of a sourced file on its own stderr, out of reach of our
# redirection, so the command is syntax-checked first (fish -n: a process of about 3 ms),
# unless it is a line that cannot fail to parse (parses_in_fish: the check line is left
# out, and `and` follows the header's printf, which succeeded).
# fish's `read` edits interactively when given a terminal, hence `head` for the ack.
_FISH = r"""function __tmux_send_finish
    set -l __tmux_send_status $argv[1]
    functions -e __tmux_send_hook __tmux_send_exit
    begin  # relay
        builtin printf @DONE@ $__tmux_send_status >@PE@  # relay
        builtin printf @DONE@ $__tmux_send_status >@PO@  # relay
        command head -n 1 >/dev/null  # relay
    end <@PO@ 2>/dev/null  # relay
    builtin printf @END@ $__tmux_send_status
    test $__tmux_send_status = 0; or builtin printf @FAILED@ $__tmux_send_status  # bare
    for __tmux_send_v in $__tmux_send_pagers  # unless the command changed it
        test "$$__tmux_send_v" = cat; and set -e $__tmux_send_v
    end
    set -e __tmux_send_pagers
    functions -e __tmux_send_finish
    # Up-arrow recalls the person's last command, not the typed line
    builtin history delete --exact --case-sensitive -- @TYPED@ >/dev/null 2>&1
    return $__tmux_send_status
end
function __tmux_send_hook --on-event fish_postexec
    set -l __tmux_send_status $status
    builtin printf '\r\033[K'  # over the ^C that fish leaves on the line
    __tmux_send_finish $__tmux_send_status
end
function __tmux_send_exit --on-event fish_exit
    set -l __tmux_send_status $status
    builtin printf @EXIT@ $__tmux_send_status >@PE@ 2>/dev/null  # relay
    builtin printf @EXIT@ $__tmux_send_status >@PO@ 2>/dev/null  # relay
end
set -g __tmux_send_pagers
for __tmux_send_v in @PAGERS@
    set -q $__tmux_send_v; and continue
    set -gx $__tmux_send_v cat
    set -a __tmux_send_pagers $__tmux_send_v
end
builtin printf @HEAD@ @BANNER@
command @SH@ --no-config --no-execute @CMD@@CHECKERR@  # check
and begin; source @CMD@; end@REDIRECT@
__tmux_send_finish $status
"""

# POSIX sh (dash and friends): no prompt hook exists, so an interrupted command is only
# noticed by tmux-send itself. A syntax error in a sourced file aborts the whole line in
# dash, so the command is checked with `sh -n` first.
_POSIX = r"""__tmux_send_finish() {
    __tmux_send_status=$?
    trap - EXIT
    {  # relay
        printf @DONE@ "$__tmux_send_status" >@PE@  # relay
        printf @DONE@ "$__tmux_send_status" >@PO@  # relay
        read -r __tmux_send_ack  # relay
    } 2>/dev/null <@PO@ || :  # relay
    printf @END@ "$__tmux_send_status"
    [ "$__tmux_send_status" = 0 ] || printf @FAILED@ "$__tmux_send_status"  # bare
    for __tmux_send_v in $__tmux_send_pagers; do  # unless the command changed it
        eval "[ \"\${$__tmux_send_v-}\" != cat ]" || unset "$__tmux_send_v"
    done
    unset -f __tmux_send_finish __tmux_send_exit
    unset __tmux_send_ack __tmux_send_pagers __tmux_send_v
    return "$__tmux_send_status"
}
__tmux_send_exit() {
    __tmux_send_status=$?
    printf @EXIT@ "$__tmux_send_status" >@PE@ 2>/dev/null || :  # relay
    printf @EXIT@ "$__tmux_send_status" >@PO@ 2>/dev/null || :  # relay
}
trap __tmux_send_exit EXIT
__tmux_send_pagers=
for __tmux_send_v in @PAGERS@; do
    eval "[ -n \"\${$__tmux_send_v+x}\" ]" && continue
    export "$__tmux_send_v=cat"
    __tmux_send_pagers="$__tmux_send_pagers $__tmux_send_v"
done
printf @HEAD@ @BANNER@
@SH@ -n @CMD@@CHECKERR@ && { . @CMD@; }@REDIRECT@
__tmux_send_finish
"""


_TEMPLATES: dict[ShellKind, str] = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH, "posix": _POSIX}
