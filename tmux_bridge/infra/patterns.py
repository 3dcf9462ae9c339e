"""Regular expressions a client gives: the screen to wait for (``wait_for`` of the HTTP
API) and a REPL's prompt (``--prompt``, the MCP tools' ``prompt``).

A pattern is a program for the regex engine, so it is bounded twice:

- **Its size, before it is compiled** (:func:`check_pattern`, pure, linear in its
  length): at most :data:`MAX_PATTERN` characters, every counted repeat (``{m}``,
  ``{m,n}``) at most :data:`MAX_REPEAT`, and at most :data:`MAX_WEIGHT` for the whole
  (each atom times the counts of the repeats around it). Compiling expands counted
  repeats: ``(?:x{65535}){65535}``, 19 characters, asked the ``regex`` package for
  15 GB; ``(?:x{1000}){1000}`` takes 280 MB and 0.6 s; a weight of 10,000 about 3 MB
  and 3 ms. Syntax whose nesting this scan could misread is refused rather than
  guessed at: ``[`` inside a set, ``{`` that starts no count, verbose mode, comments,
  recursion, conditionals and other engine-specific groups.
- **Its time, each search** (:func:`use_time_limit`): a server searches with the
  ``regex`` package, which gives up after the limit (and lets other threads run
  meanwhile); ``re`` has no limit, and a backtracking search holds the interpreter
  lock, so one ``(a|a)*$`` froze a whole server. tmux-send (the person's own process)
  keeps ``re``: importing ``regex`` would slow its start.

Errors are :class:`~tmux_bridge.errors.InvalidRequest` sentences naming the pattern's
role (``what``) and the way out.
"""

from __future__ import annotations

import re
import threading
from typing import Any, NoReturn, Protocol

from ..errors import InvalidRequest

MAX_PATTERN = 256  # characters of one pattern
MAX_REPEAT = 1000  # the largest count of a counted repeat
MAX_WEIGHT = 10_000  # atoms, each times the counts of the repeats around it
_COUNT = re.compile(r"\{([0-9]*)(,([0-9]*))?\}")
_GROUP = re.compile(r"\(\?(?::|=|!|<=|<!|>|P?<\w+>)")
_FLAGS = re.compile(r"\(\?([imsau]*)(?:-([ims]+))?(:|\))")
_BACKREF = re.compile(r"\(\?P=\w+\)")
_BRACED_ESCAPE = "pPNx"  # \p{L}, \N{DASH}, \x{41}: the braces are the escape's
_BRACES = re.compile(r"\{[\w .:=&-]*\}")  # what such braces may hold


class Pattern(Protocol):
    """A compiled pattern: ``re.Pattern`` or :class:`TimedPattern`."""

    @property
    def pattern(self) -> str: ...

    def search(self, string: str) -> Any: ...

    def match(self, string: str) -> Any: ...


def check_pattern(pattern: str, what: str) -> None:
    """Refuse ``pattern`` (raise :class:`InvalidRequest`) when it is too long, holds a
    count above :data:`MAX_REPEAT` or weighs more than :data:`MAX_WEIGHT`, or uses syntax
    this check does not read. Pure; microseconds. A pattern it lets through may still
    not compile: the engine says so then."""
    if len(pattern) > MAX_PATTERN:
        raise InvalidRequest(
            f"{what} is too long: {len(pattern)} characters, at most {MAX_PATTERN}."
        )
    weight = pattern_weight(pattern, what)
    if weight > MAX_WEIGHT:
        raise InvalidRequest(
            f"{what} repeats too much: its counted repeats, nested, make {weight} atoms "
            f"to compile, at most {MAX_WEIGHT}; use * or + instead of large counts."
        )


def pattern_weight(pattern: str, what: str) -> int:
    """What compiling ``pattern`` expands to, in atoms: each atom (a character, a set,
    an escape, ``.``) counts 1, a group the sum of what it holds (at least 1), and a
    counted repeat multiplies what it repeats by its largest count (``*``, ``+`` and
    ``?`` by 1: engines do not expand them). Raises :class:`InvalidRequest` for a count
    above :data:`MAX_REPEAT` and for syntax it does not read (see :func:`check_pattern`)."""
    return _Scan(pattern, what).weight()


class _Frame:
    """A group being read: the weight so far, and that of its last item (which a
    quantifier multiplies); ``None`` before an item (after ``(`` or ``|``)."""

    def __init__(self) -> None:
        self.total = 0
        self.last: int | None = None

    def add(self, weight: int) -> None:
        self.total += weight
        self.last = weight


class _Scan:
    """One left-to-right reading of a pattern: groups, sets, escapes and counts."""

    def __init__(self, pattern: str, what: str) -> None:
        self.p = pattern
        self.what = what
        self.stack = [_Frame()]

    def weight(self) -> int:
        at = 0
        while at < len(self.p):
            at = self._step(at)
        if len(self.stack) > 1:
            self._refuse("a group is not closed")
        return self.stack[0].total

    def _step(self, at: int) -> int:
        char, frame = self.p[at], self.stack[-1]
        if char == "\\":
            return self._escape(at)
        if char == "[":
            frame.add(1)
            return self._set_end(at)
        if char == "(":
            return self._open(at)
        if char == ")":
            if len(self.stack) == 1:
                self._refuse("a ) closes no group")
            inner = self.stack.pop()
            self.stack[-1].add(max(inner.total, 1))
            return at + 1
        if char == "{":
            return self._count(at)
        if char == "|":
            frame.last = None
        elif char not in "*+?":  # * + ? and the lazy or possessive marks: no expansion
            frame.add(1)
        return at + 1

    def _escape(self, at: int) -> int:
        self.stack[-1].add(1)
        end = at + 2
        braces = _BRACES.match(self.p, end)
        if self.p[at + 1 : at + 2] in tuple(_BRACED_ESCAPE) and braces is not None:
            end = braces.end()  # else any { after it is read as a count, or refused
        return end

    def _set_end(self, at: int) -> int:
        """Past the set opened at ``at``: ``]`` right after ``[`` or ``[^`` is a member."""
        end = at + 1
        if self.p[end : end + 1] == "^":
            end += 1
        if self.p[end : end + 1] == "]":
            end += 1
        while end < len(self.p):
            char = self.p[end]
            if char == "\\":
                end += 2
                continue
            if char == "[":  # a nested set or [:alpha:]: read differently by the engines
                self._refuse(r"a [ inside a set (write \[ there)")
            if char == "]":
                return end + 1
            end += 1
        self._refuse("a set is not closed")

    def _open(self, at: int) -> int:
        if not self.p.startswith("(?", at):
            self.stack.append(_Frame())
            return at + 1
        backref = _BACKREF.match(self.p, at)
        if backref:
            self.stack[-1].add(1)
            return backref.end()
        group = _GROUP.match(self.p, at)
        flags = _FLAGS.match(self.p, at)
        opened = group or flags
        if opened is None:
            self._refuse(
                f"the group {self.p[at : at + 4]!r}... is not one tmux-bridge reads (use (, "
                "(?:, (?P<name>, lookarounds, (?>, or the flags i, m, s, a, u)"
            )
        if opened is flags and opened.group(3) == ")":  # flags for what follows
            return opened.end()
        self.stack.append(_Frame())
        return opened.end()

    def _count(self, at: int) -> int:
        found = _COUNT.match(self.p, at)
        if found is None:
            self._refuse(r"a { that starts no count {m}, {m,} or {m,n} (write \{ for a brace)")
        low, high = found.group(1), found.group(3)
        counts = [int(n) for n in (low, high) if n]
        if any(n > MAX_REPEAT for n in counts):
            raise InvalidRequest(
                f"{self.what} has a repeat count of {max(counts)}; at most {MAX_REPEAT} (use "
                "* or + for any number)."
            )
        frame = self.stack[-1]
        if frame.last is not None:
            times = max([1, *counts])
            frame.total += frame.last * (times - 1)
            frame.last *= times
        return found.end()

    def _refuse(self, why: str) -> NoReturn:
        raise InvalidRequest(f"{self.what} is refused: {why}.")


# --- compiling and searching -----------------------------------------------------------

_time_limit: float | None = None  # seconds per search; None: re, without a limit
# A search that backtracks keeps a stack that grows with the text: ~150 MB in the 0.1 s
# a 3 MB text allows. So few run at once, whatever the number of threads or clients.
MAX_SEARCHES = 2
_searches = threading.BoundedSemaphore(MAX_SEARCHES)


def use_time_limit(seconds: float) -> None:
    """From now on in this process, compile client patterns with the ``regex`` package
    and give each search at most ``seconds`` (the servers call this once)."""
    global _time_limit
    _time_limit = seconds


class TimedPattern:
    """A pattern of the ``regex`` package whose every search or match gives up after
    ``seconds`` with :class:`InvalidRequest` (other threads run meanwhile); at most
    :data:`MAX_SEARCHES` run at once in the process, the others wait their turn."""

    def __init__(self, compiled: Any, seconds: float, what: str) -> None:
        self.compiled = compiled
        self.seconds = seconds
        self.what = what

    @property
    def pattern(self) -> str:
        return str(self.compiled.pattern)

    def search(self, string: str) -> Any:
        with _searches:
            try:
                return self.compiled.search(string, timeout=self.seconds, concurrent=True)
            except TimeoutError:
                raise self._slow() from None

    def match(self, string: str) -> Any:
        with _searches:
            try:
                return self.compiled.match(string, timeout=self.seconds, concurrent=True)
            except TimeoutError:
                raise self._slow() from None

    def _slow(self) -> InvalidRequest:
        return InvalidRequest(
            f"{self.what} took more than {self.seconds:g} s to search the text once (it "
            "backtracks without end); use a simpler pattern."
        )


def compile_timed(pattern: str, what: str, seconds: float, flags: int = 0) -> TimedPattern:
    """``pattern`` checked (:func:`check_pattern`) and compiled by the ``regex`` package
    (``flags`` are ``re``'s, which it shares), each search limited to ``seconds``.
    Raises :class:`InvalidRequest` for a pattern refused or not compiling. Milliseconds
    for any pattern the check lets through."""
    check_pattern(pattern, what)
    import regex  # only here: servers, never tmux-send's start

    try:
        compiled = regex.compile(pattern, flags | regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, MemoryError) as exc:
        raise InvalidRequest(f"{what} is not a valid regular expression: {exc}.") from None
    return TimedPattern(compiled, seconds, what)


def compile_pattern(pattern: str, what: str, flags: int = 0) -> Pattern:
    """``pattern`` checked and compiled for the engine this process uses: ``regex`` with
    a time limit per search once :func:`use_time_limit` was called, else ``re`` (no
    limit). Raises :class:`InvalidRequest` for a pattern refused or not compiling."""
    if _time_limit is not None:
        return compile_timed(pattern, what, _time_limit, flags)
    check_pattern(pattern, what)
    try:
        return re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        raise InvalidRequest(f"{what} is not a valid regular expression: {exc}.") from None
