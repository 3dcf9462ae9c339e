"""Pure shell syntax for dry runs: the first command word, the lookup line and its answer.

Nothing here runs a shell. :func:`first_word` reads the first command word of shell code
the way the shell would (after assignments, redirections and an opening parenthesis;
not literal when only running could expand it), :func:`lookup_line` is the line that
asks the pane's shell what a word is and :func:`read_lookup` reads its answer;
:func:`parse_argv` is the no-execute check of a script by a shell binary and
:func:`parse_complaint` its complaint; :func:`predicted_exit` the status a real call
would exit with.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence

from ..tuples import NamedTuple
from .shells import ShellKind, quote

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

_PARSE_FLAGS: dict[ShellKind, tuple[str, ...]] = {
    "bash": ("-n",),
    "zsh": ("-f", "-n"),
    "fish": ("--no-config", "--no-execute"),
    "posix": ("-n",),
}

# Shown in the pane after the lookup line, so the person reads what it is for.
_LOOKUP_NOTE = "  # dry run: where the first word comes from"

RESOLUTIONS = ("alias", "keyword", "function", "builtin", "file", "not_found", "unknown")


class FirstWord(NamedTuple):
    """The first command word: its text as the shell will see it when ``literal``,
    else as written (it holds an expansion only running can do)."""

    text: str
    literal: bool


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


def shown(word: FirstWord | None) -> str | None:
    """The first word as a dry run's result shows it (``None``: no command word)."""
    return None if word is None else word.text


def first_word_of(kind: ShellKind, command: str | bytes | Sequence[str]) -> FirstWord | None:
    """The first command word of a command as a call takes it: shell code (text or
    bytes), or words (one word is read as shell code; of several, the first is literal)."""
    if isinstance(command, (str, bytes)):
        text = command if isinstance(command, str) else command.decode("utf-8", "surrogateescape")
        return first_word(kind, text)
    words = list(command)
    if len(words) == 1:
        return first_word(kind, words[0])
    return FirstWord(words[0], True) if words else None


# --- the lookup ------------------------------------------------------------------------


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


def parse_argv(kind: ShellKind, binary: str, path: str) -> list[str]:
    """The command line that has ``binary`` (a ``kind`` shell) check the syntax of the
    script in ``path`` without running it, with that shell's default options."""
    return [binary, *_PARSE_FLAGS[kind], path]


def parse_complaint(binary: str, path: str, status: int, stderr: bytes) -> str:
    """What the shell said about a script it could not parse (the file's name shown as
    ``command``), or its exit status when it said nothing."""
    complaint = stderr.decode("utf-8", "replace")
    complaint = re.sub(r"\S*" + re.escape(os.path.basename(path)), "command", complaint)
    return complaint.strip() or f"{binary} exited with status {status}"


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
