"""The seams: every place where text from one layer changes meaning in the next.

Text an agent, a message, a file name or a web page controls reaches tmux formats, the
person's terminal, a program's input box and far shells. Each such crossing has exactly
one function here, and the code that crosses calls it: nowhere else builds that text by
hand. ``tests/seams/test_seam_*.py`` feed each one every byte and hostile payloads, check what
a real tmux, terminal, program or far shell makes of the result, and scan the source for
bypasses. SECURITY.md says what each seam promises.

Pure text: this module imports nothing of ours (but the record base, :mod:`~tmux_bridge.tuples`)
and does no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..tuples import NamedTuple

if TYPE_CHECKING:
    from re import Pattern

# -- tmux formats: an argument tmux expands (#{...}, #(...), #[...]) -------------------
# tmux 3.3a, measured (tests/seams/test_seam_fmt.py): an argument tmux expands turns `##` into
# `#`, except that a run of `#` followed by `[` stays as it is (a style, left for drawing);
# `#{...}` is a variable (an unclosed `#{` ends the text), `#(...)` runs a shell command in
# the server, `#H` and the like are aliases. Drawing (the status line, a message) then
# reads `#[...]` as a style and halves every run of `#`. display-message and pipe-pane
# run strftime(3) over their text first (`%%` is `%`); -c, -s, set-option -F and run-shell
# do not. Targets (-t), the command of a new pane and option values set without -F are
# not expanded at all.

# The longest start directory the kernel lets tmux chdir(2) into (PATH_MAX with its NUL);
# a longer one, tmux's pane silently starts elsewhere.
MAX_DIRECTORY_BYTES = 4095


def format_text(text: str) -> str:
    """``text`` as an argument tmux expands once as a format (``new-session -s``,
    ``set-option -F``; the ``-c`` of a new pane through :func:`start_directory`): the
    expansion is exactly ``text``, for any text (bytes as surrogate escapes included).
    Every ``#`` is doubled but a run of them before ``[``, which tmux keeps as it is.
    A leading ``-`` becomes ``#{l:-}`` (a literal ``-``): as the first word after a
    command's flags (``display-message -p TEXT``) it would be read as a flag. A NUL
    stays: no tmux argument can hold one (``Tmux.run`` raises ValueError)."""
    if text.startswith("-"):
        return "#{l:-}" + format_text(text[1:])
    if "#" not in text:
        return text
    parts = []
    start = 0
    while (at := text.find("#", start)) >= 0:
        end = at
        while end < len(text) and text[end] == "#":
            end += 1
        run = text[at:end]
        parts += [text[start:at], run if text[end : end + 1] == "[" else run + run]
        start = end
    parts.append(text[start:])
    return "".join(parts)


def format_text_timed(text: str) -> str:
    """``text`` as an argument tmux runs through strftime(3) and then expands as a format
    (the message of ``display-message -p``, the command of ``pipe-pane``): the result is
    exactly ``text``."""
    return format_text(text).replace("%", "%%")


def drawn_text(text: str) -> str:
    """``text`` as the value of an option a person shows in a drawn format
    (``#{@tmux-bridge-notice}`` in ``status-right``): the value is inserted unexpanded
    and then drawn, so every ``#`` is doubled and ``#[...]`` shows as text, not a style."""
    return text.replace("#", "##")


def message_text(text: str) -> str:
    """``text`` as the message of ``display-message -c CLIENT`` (strftime, then expanded,
    then drawn on the client's status line): shown exactly as ``text``, no style, no
    variable, no command run (control characters are tmux's to draw: it drops them)."""
    return format_text_timed(drawn_text(text))


def start_directory(path: str) -> str:
    """``path`` as the ``-c`` of ``new-session``, ``split-window`` or ``respawn-pane``: the
    pane starts in exactly that directory. Raises ValueError when tmux cannot start a pane
    there: not absolute (tmux would take it as relative to the client's directory; ``~``
    is not expanded), a NUL, a lone surrogate that is no escaped byte, or more than
    :data:`MAX_DIRECTORY_BYTES` bytes (tmux would fall back to another directory)."""
    encoded = path.encode("utf-8", "surrogateescape")  # raises for other lone surrogates
    if not path.startswith("/") or "\0" in path or len(encoded) > MAX_DIRECTORY_BYTES:
        raise ValueError(f"tmux cannot start a pane in {path[:200]!r}")
    return format_text(path)


def _shell_word(word: str) -> str:
    """``word`` quoted for a POSIX shell (as :func:`shlex.quote`, without importing it)."""
    if word and all(c.isascii() and (c.isalnum() or c in "@%+=:,./-_") for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def pipe_command(argv: Sequence[str], stdout: str | None = None) -> str:
    """The command of ``pipe-pane``, which tmux runs through strftime(3), expands as a
    format and hands to ``/bin/sh -c``: the shell runs exactly ``argv`` (``exec``: the
    process tmux started becomes it), its stdout into the file ``stdout`` when given.
    Any bytes in the words and the path (a TMPDIR with a space, ``%`` or ``#(...)``);
    raises ValueError for no words or a NUL, which no argument can hold."""
    words = [*argv, stdout or ""]
    if not argv or any("\0" in word for word in words):
        raise ValueError("a command needs a program, and no word can hold a NUL")
    line = " ".join(["exec", *map(_shell_word, argv)])
    if stdout is not None:
        line += " > " + _shell_word(stdout)
    return format_text_timed(line)


def command_line(*commands: Sequence[str]) -> str:
    """tmux commands as one command string (the commands of ``if-shell``), which tmux's
    parser reads back as exactly these words: each word single-quoted, with a newline as
    ``"\\n"`` (after a raw one, the parser drops blanks and reads ``#`` as a comment) and
    a byte 0xff as ``"\\377"`` (it ends the parser's input). A word is then expanded or
    not as its command does it (build those with the functions above). Raises ValueError
    for a NUL."""
    lines = []
    for command in commands:
        if any("\0" in word for word in command):
            raise ValueError("a tmux command word cannot hold a NUL")
        lines.append(" ".join(_tmux_word(word) for word in command))
    return " ; ".join(lines)


def _tmux_word(word: str) -> str:
    quoted = word.replace("'", "'\\''").replace("\n", "'\"\\n\"'")
    return "'" + quoted.replace("\udcff", "'\"\\377\"'") + "'"


# -- the person's terminal: text printed to it --------------------------------------
#
# A command, an agent's name, a directory, a message, a label, an error that quotes what
# it was given: text we do not control reaches the person's terminal only through
# visible() (one field on one line), visible_lines() (text that is lines by nature) or
# json_text() (a JSON document). A terminal acts on C0 and C1 controls and DEL (ESC
# starts the sequences that set the title, write the clipboard, move the cursor and
# erase lines), the bidirectional controls reorder what it shows, and bytes that are not
# UTF-8 may be C1 controls to an 8-bit terminal; everything else is shown as it is.

# what a terminal acts on, besides the C0 and C1 controls and DEL: bidirectional
# controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and the line and
# paragraph separators U+2028 and U+2029
_FORMAT = "\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"  # lone surrogates: bytes that were not UTF-8, or worse
_UNSAFE_FIELD = f"[\x00-\x1f\x7f-\x9f{_FORMAT}{_SURROGATES}]"
_UNSAFE_LINES = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}{_SURROGATES}]"  # \t \n kept
_patterns: dict[str, Pattern[str]] = {}


def visible(text: str) -> str:
    r"""``text`` as one field on one line of the person's terminal: every character a
    terminal would act on is written out as printable text, every other one is kept.

    Each such character is shown on its own, so an escape sequence shows as what it
    is (``\x1b]0;title\x07`` as ``^[]0;title^G``) and a newline does not start a line:

    * C0 controls U+0000-U+001F (tab and newline too) and DEL U+007F: caret notation,
      as ``cat -v`` shows them: ``^@`` ... ``^_``, ``^?`` (ESC ``^[``, newline ``^J``);
    * C1 controls U+0080-U+009F: ``\x80`` ... ``\x9f``, as Python's ``repr`` writes them;
    * a byte that was not UTF-8 (a lone surrogate U+DC80-U+DCFF, from Python's
      ``surrogateescape``): ``\xNN``, the byte;
    * any other lone surrogate, the bidirectional controls (U+061C, U+200E, U+200F,
      U+202A-U+202E, U+2066-U+2069) and U+2028, U+2029: ``\uXXXX``.

    Not reversible (a command holding the two characters ``^[`` shows as one holding
    ESC): the exact text is in the JSON outputs. Linear in the length; text with none of
    these characters is returned as it is.
    """
    return text if text.isprintable() else _shown(_UNSAFE_FIELD, text)


def visible_lines(text: str) -> str:
    """``text`` that is several lines by nature (an error message, a notice, an agent's
    reply, the command in the pane's banner): as :func:`visible`, but newlines and tabs
    are kept, so its lines stay lines. A carriage return is shown (``^M``): it would
    let a line overwrite the one before."""
    if text.isprintable():
        return text
    return _shown(_UNSAFE_LINES, text)


def json_text(document: object) -> str:
    r"""``document`` as one line of JSON that is safe on a terminal and decodes to the
    same value: ``json.dumps(document, ensure_ascii=False)``, byte for byte, except that
    DEL, the C1 controls, the characters :func:`visible` writes as ``\uXXXX`` and lone
    surrogates are written as ``\uXXXX`` escapes (JSON escapes the C0 controls itself).
    Those characters can only stand inside JSON strings, where the escape means the
    same character."""
    import json

    text = json.dumps(document, ensure_ascii=False)
    if text.isascii() and "\x7f" not in text:  # JSON has escaped every C0 control
        return text  # both checks run at C speed: a command's megabytes of output
    return _pattern(_UNSAFE_FIELD).sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _pattern(source: str) -> Pattern[str]:
    # compiled on first use: tmux-send's common path prints only printable text
    if source not in _patterns:
        import re

        _patterns[source] = re.compile(source)
    return _patterns[source]


def _shown(source: str, text: str) -> str:
    return _pattern(source).sub(lambda m: _notation(m.group()), text)


def _notation(char: str) -> str:
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return "^" + chr(code ^ 0x40)
    if 0x80 <= code < 0xA0:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


class Excerpt(NamedTuple):
    """What is shown of a long text: ``text`` (the whole text, or its head, a line
    saying what is left out, and its tail) and how many characters were left out."""

    text: str
    omitted: int


def excerpt(text: str, max_chars: int = 4000, max_lines: int = 12) -> Excerpt:
    """``text`` whole when it has at most ``max_chars`` characters and ``max_lines``
    lines. Else its start, the line ``[... L lines and C characters not shown, of N
    lines and M characters ...]`` (L: the lines none of which is shown) and its end, so
    that the end of a long or padded script is shown too: the start is at most
    ``max_lines - max_lines // 4 - 1`` lines (8 of 12) and ``max_chars - max_chars // 4``
    characters (3000 of 4000), the end at most ``max_lines // 4`` lines and
    ``max_chars // 4`` characters. The text itself is not made visible here."""
    lines = text.count("\n") + 1
    if len(text) <= max_chars and lines <= max_lines:
        return Excerpt(text, 0)
    tail_lines, tail_chars = max(max_lines // 4, 1), max_chars // 4
    head_end = -1
    for _ in range(max(max_lines - tail_lines - 1, 1)):
        head_end = text.find("\n", head_end + 1)
        if head_end < 0:
            break
    head_end = min(len(text) if head_end < 0 else head_end, max_chars - tail_chars)
    tail_start = len(text)
    for _ in range(tail_lines):
        tail_start = text.rfind("\n", 0, tail_start)
        if tail_start < 0:
            break
    tail_start = max(tail_start + 1, len(text) - tail_chars, head_end)
    left_out = text[head_end:tail_start]
    hidden_lines = max(left_out.count("\n") - 1, 0)
    note = (
        f"[... {hidden_lines} lines and {len(left_out)} characters not shown, "
        f"of {lines} lines and {len(text)} characters ...]"
    )
    return Excerpt(f"{text[:head_end]}\n{note}\n{text[tail_start:]}", len(left_out))


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters for one line of a listing: whole when it
    fits, else its start, `` ... `` and its last third, so its end is shown too."""
    if len(text) <= width:
        return text
    tail = width // 3
    return text[: width - tail - 5] + " ... " + text[len(text) - tail :]


# -- a program's input box: text pasted into a TUI ------------------------------------
#
# Prompts, messages and uploaded text are pasted (``paste-buffer -p``) into whatever
# program an agent runs. Inside a bracketed paste every key is text, until the bytes
# ESC [ 2 0 1 ~ end it: after them, text would be keys again (C-u wiping the header, CR
# submitting, ``!`` opening Claude Code's shell). So no control character passes:
#
# * TAB and LF pass; CR LF and a lone CR become LF (tmux turns every LF into CR when it
#   pastes, inside the brackets: a new line, not Enter).
# * every other C0 control (0x00-0x1f) and DEL (0x7f) becomes its Unicode control
#   picture (ESC: U+241B, C-u: U+2415, DEL: U+2421): visible, and no longer a key;
# * a C1 control (U+0080-U+009F; U+009B is CSI to a terminal that reads 8-bit controls)
#   becomes U+241B and its 7-bit equivalent (U+009B: ``␛[``), as a terminal reads it;
# * a lone surrogate (from undecodable bytes) becomes U+FFFD.
#
# Everything else passes unchanged, so printable text is pasted as it is.

_PASTE_TABLE: dict[int, int | str] = {}  # built on first use: nothing at import time
# The characters a sender's name may use: a pane label's (1 to 40 of them).
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
NAME_MAX = 40


def pasted_text(text: str) -> str:
    """``text`` as it may be pasted into a program's input box: no control character
    but TAB and LF (the rules above). Idempotent; printable text comes back as it is."""
    if not _PASTE_TABLE:
        _PASTE_TABLE.update({code: 0x2400 + code for code in range(0x20) if code not in (9, 10)})
        _PASTE_TABLE[0x7F] = 0x2421
        _PASTE_TABLE.update({code: "\u241b" + chr(code - 0x40) for code in range(0x80, 0xA0)})
        _PASTE_TABLE.update(dict.fromkeys(range(0xD800, 0xE000), 0xFFFD))
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_PASTE_TABLE)


def is_name(name: str) -> bool:
    """Whether ``name`` is a pane label or a sender's name: 1 to 40 of A-Z a-z 0-9 _ . -"""
    return 0 < len(name) <= NAME_MAX and NAME_CHARS.issuperset(name)


def message_prompt(message_id: int, sender: str, body: str, verified: bool = True) -> str:
    """The prompt a message becomes: one header line that says it is from the agent
    ``sender`` (``from NAME (unverified)`` unless ``verified``: a name the sender gave),
    not from the person, and how many lines of text follow it, then the body, both
    through :func:`pasted_text`. Nothing in the body can end the paste, so the
    header heads all of it; a sender that is no :func:`is_name` is a ``ValueError``
    (its ``]`` or newline would end the header early)."""
    if not is_name(sender):
        raise ValueError(f"not a sender's name: {sender!r}")
    text = pasted_text(body).strip("\n")
    count = text.count("\n") + 1
    lines = "the line" if count == 1 else f"the {count} lines"
    return (
        f"[tmux-bridge message #{int(message_id)} {_from(sender, verified)}, not from the "
        f"person; its text is {lines} below; to answer: tmux-bridge message --to {sender} "
        f"TEXT]\n{text}"
    )


def _from(sender: str, verified: bool) -> str:
    """``from agent NAME`` (the agent of the sending pane), else ``from NAME (unverified)``."""
    return f"from agent {sender}" if verified else f"from {sender} (unverified)"


def message_reference(message_id: int, sender: str, length: int, verified: bool = True) -> str:
    """The one-line prompt a long message becomes: who sent it and the command that
    prints its text, so no long paste can be mangled on its way into an input box."""
    if not is_name(sender):
        raise ValueError(f"not a sender's name: {sender!r}")
    number = int(message_id)
    return (
        f"[tmux-bridge message #{number} {_from(sender, verified)}, not from the person; its text "
        f"({int(length)} characters) is printed by: tmux-bridge inbox --read {number}; to "
        f"answer: tmux-bridge message --to {sender} TEXT]"
    )


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


def fish_quoted(text: str) -> str:
    """``text`` as one fish word in single quotes, which fish gives back exactly: inside
    them only ``\\'`` and ``\\\\`` are escapes (a far fish's line that runs POSIX sh code)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def escaped_argument(data: bytes) -> str:
    """``data`` as the inside of a quoted argument of psql's backslash commands (single
    quotes) or sqlite3's dot commands (double quotes), both of which read a 3-digit
    octal escape as its byte: printable ASCII as is, every other byte and ``'``, ``"``,
    ``\\`` escaped. The result is printable ASCII without a quote: a REPL that reads
    it prints ``data`` exactly, and nothing in it is interpolated."""
    return "".join(
        chr(byte) if 0x20 <= byte < 0x7F and chr(byte) not in "'\"\\" else f"\\{byte:03o}"
        for byte in data
    )


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


def sh_backup_file(directory: str, stamp: str) -> str:
    """The POSIX sh command that makes a new empty file (0600, ``mktemp``) in the
    backup directory ``$DIRECTORY`` named ``$STAMP-XXXXXX`` (``STAMP``: the time in
    seconds since the epoch, so names sort by age) and prints its path: a backup's
    copy. ``directory`` and ``stamp`` are shell variable names (``ValueError``
    otherwise); the caller captures the output."""
    _check_name(directory)
    _check_name(stamp)
    return f'mktemp "${directory}/${stamp}-XXXXXX"'


def sh_lock_link(directory: str, stamp: str) -> str:
    """The POSIX sh command that makes the lock ``$DIRECTORY/index.lock`` whole or not at
    all (it fails when the lock exists): a symbolic link to ``PID-STAMP``, this shell's
    process and ``$STAMP`` (the time in seconds since the epoch), so that a lock left by a
    process that is gone, or held far longer than any holder takes, can be told from one
    held (the backups' index). ``directory`` and ``stamp`` are shell variable names
    (``ValueError`` otherwise)."""
    _check_name(directory)
    _check_name(stamp)
    return f'ln -s "$$-${stamp}" "${directory}/index.lock"'


def _check_name(variable: str) -> None:
    if not variable or variable[0] not in _NAME_FIRST or not set(variable) <= _NAME_REST:
        raise ValueError(f"not a shell variable name: {variable!r}")


def sh_private_dir() -> str:
    """The POSIX sh command that makes a new private directory (0700, ``mktemp -d``) in
    ``$TMPDIR`` (else ``/tmp``) and prints its path: where a far transfer keeps the
    bytes it received until they are checked. The caller captures the output."""
    return 'mktemp -d "${TMPDIR:-/tmp}/tmux-send.XXXXXX"'
