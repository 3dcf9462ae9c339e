"""The seams: every place where text from one layer changes meaning in the next.

Text an agent, a message, a file name or a web page controls reaches tmux formats, the
person's terminal, a program's input box and far shells. Each such crossing has exactly
one function here, and the code that crosses calls it: nowhere else builds that text by
hand (``tests/test_seams.py`` feeds each one every byte and hostile payloads, and checks
the source for bypasses).

Pure text: this module imports nothing of ours and does no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

# -- tmux formats: an argument tmux expands (#{...}, #(...), #[...]) -------------------
# tmux 3.3a, measured (tests/test_seam_fmt.py): an argument tmux expands turns `##` into
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
    A NUL stays: no tmux argument can hold one (``Tmux.run`` raises ValueError)."""
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


# -- a program's input box: text pasted into a TUI ------------------------------------


# -- far shells: paths and data in shell code typed into a far shell ----------------
