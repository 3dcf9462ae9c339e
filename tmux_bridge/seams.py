"""The seams: every place where text from one layer changes meaning in the next.

Text an agent, a message, a file name or a web page controls reaches tmux formats, the
person's terminal, a program's input box and far shells. Each such crossing has exactly
one function here, and the code that crosses calls it: nowhere else builds that text by
hand (``tests/test_seams.py`` feeds each one every byte and hostile payloads, and checks
the source for bypasses).

Pure text: this module imports nothing of ours and does no I/O.
"""

from __future__ import annotations

# -- tmux formats: an argument tmux expands (#{...}, #(...), #[...]) -------------------


# -- the person's terminal: text printed to it --------------------------------------


# -- a program's input box: text pasted into a TUI ------------------------------------


# -- far shells: paths and data in shell code typed into a far shell ----------------
#
# Nothing of ours exists on a far host, and other users share its temporary directory:
# a name there that can be guessed ($$, a call id, a fixed name) is a name another user
# can take first, with a hard link to a file of theirs (they read what we write into
# it) or a symbolic link to a file of ours (we truncate it). So far-shell code makes
# every path it writes with mktemp: a file in the far shell's private directory (made by
# ``mktemp -d`` once, 0700, and checked to be ours and no symbolic link before each use),
# or a file beside the one being written. Data goes in as a printf format of printable
# ASCII, which no shell expands and the far terminal echoes as is.

FAR_DIR_VARIABLE = "__tmux_send_d"  # the far shell's variable naming its private directory
# the private directory: in the far shell's $TMPDIR (else /tmp), quoted, never expanded
_FAR_DIR_TEMPLATE_SH = '"${TMPDIR:-/tmp}/tmux-send.XXXXXX"'
_FAR_DIR_TEMPLATE_FISH = '"$__tmux_send_t/tmux-send.XXXXXX"'
_STEM_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_NAME_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_REST = _NAME_FIRST | frozenset("0123456789")


def printf_text(data: bytes) -> str:
    """``data`` as a ``printf`` format to put inside single quotes, from which the
    ``printf`` of bash, zsh, fish, dash and busybox sh gives ``data`` back exactly:
    printable ASCII as is (``%`` doubled), and as a 3-digit octal escape ``'``, ``\\``,
    every other byte, and a leading ``-`` (bash's and dash's printf take it for an
    option, and fish's has no ``--``). The result is printable ASCII without ``'``:
    safe to type into any far shell, and nothing in it is expanded."""
    out: list[str] = []
    for at, byte in enumerate(data):
        char = chr(byte)
        if char == "%":
            out.append("%%")
        elif 0x20 <= byte < 0x7F and char not in "'\\" and not (at == 0 and char == "-"):
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def far_dir_function(fish: bool = False) -> str:
    """The definition of ``__tmux_send_dir`` for a far shell (POSIX sh, bash, zsh, or
    fish >= 3.4), ending in ``;``: it makes sure ``$__tmux_send_d`` names a directory
    that ``mktemp -d`` made in ``$TMPDIR`` (else ``/tmp``), owned by the shell's user
    and not a symbolic link, making a new one when it is unset, gone, or not ours (a tmp
    cleaner removed it and another user made one of that name). Status 0 when it does;
    not 0, the variable empty, when ``mktemp`` is missing or fails (a read-only /tmp):
    no fallback to a name of our own. Safe under ``set -eu`` (every test that may fail
    is inside an and-or list); costs a ``mktemp`` process only when it makes one."""
    if fish:
        return (
            " function __tmux_send_dir; if set -q __tmux_send_d[1];"
            ' and test -d "$__tmux_send_d" -a ! -L "$__tmux_send_d" -a -O "$__tmux_send_d";'
            " return 0; end; set -l __tmux_send_t /tmp;"
            ' test -n "$TMPDIR"; and set __tmux_send_t $TMPDIR;'
            # string collect: one value even when the name holds a newline
            f" set -g __tmux_send_d (mktemp -d {_FAR_DIR_TEMPLATE_FISH} 2>/dev/null"
            " | string collect); end;"
        )
    return (
        ' __tmux_send_dir() { [ -n "${__tmux_send_d-}" ] && [ -d "$__tmux_send_d" ]'
        ' && [ ! -L "$__tmux_send_d" ] && [ -O "$__tmux_send_d" ] && return;'
        f" __tmux_send_d=$(mktemp -d {_FAR_DIR_TEMPLATE_SH} 2>/dev/null)"
        ' && [ -n "$__tmux_send_d" ]; };'
    )


def far_temp_file(variable: str, stem: str, fish: bool = False) -> str:
    """Far-shell code (an and-or list, no trailing ``;``) that sets ``variable`` to a new
    empty file (0600) that ``mktemp`` made in the far shell's private directory, named
    ``STEM.XXXXXX``; its status is not 0 when no file could be made (the caller then
    sets a fallback with ``||``, in fish ``; or``). Needs :func:`far_dir_function`
    defined. ``variable`` is a shell name, ``stem`` lowercase letters: anything else
    raises ``ValueError`` (they are written into the code as they are)."""
    _check_name(variable)
    if not stem or not set(stem) <= _STEM_LETTERS:
        raise ValueError(f"a temporary file's stem is lowercase letters: {stem!r}")
    made = f'mktemp "${FAR_DIR_VARIABLE}/{stem}.XXXXXX" 2>/dev/null'
    if fish:
        return f"__tmux_send_dir; and set -g {variable} ({made} | string collect)"
    return f"__tmux_send_dir && {variable}=$({made})"


def sh_temp_beside(directory: str, name: str) -> str:
    """The POSIX sh command that makes a new empty file (0600, ``mktemp``) in the
    directory ``$DIRECTORY`` named ``.$NAME.tmux-send-XXXXXX`` and prints its path: the
    temporary file a write fills before it is moved over the file named ``$NAME``
    (same directory, so the move is a rename). ``directory`` and ``name`` are shell
    variable names (``ValueError`` otherwise); the caller captures the output."""
    _check_name(directory)
    _check_name(name)
    return f'mktemp "${directory}/.${name}.tmux-send-XXXXXX"'


def _check_name(variable: str) -> None:
    if not variable or variable[0] not in _NAME_FIRST or not set(variable) <= _NAME_REST:
        raise ValueError(f"not a shell variable name: {variable!r}")
