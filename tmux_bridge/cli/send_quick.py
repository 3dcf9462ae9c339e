"""tmux-send's common command lines, read without click.

Agents call ``tmux-send [-p TARGET] [-t SECONDS] [--max-time SECONDS] [--raw] [--json]
[--] COMMAND...`` hundreds of times a day, and importing click is about a third of
tmux-send's start-up. :func:`quick_request` reads exactly those lines; for anything
else (another option, a value click would refuse, ``-pVALUE``, an option given twice,
help, version, completion) it returns None and the click command in
:mod:`tmux_bridge.cli.send_options` reads the line, so that every error message and all of
``--help`` come from one place. ``tests/unit/test_send_quick.py`` checks both readers agree on
every line this one takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..results import RunOptions

# option -> (field, takes a value)
_OPTIONS = {
    "-p": ("pane", True),
    "--pane": ("pane", True),
    "-t": ("timeout", True),
    "--timeout": ("timeout", True),
    "--max-time": ("max_time", True),
    "--raw": ("raw", False),
    "--json": ("json", False),
}
_DIGITS = frozenset("0123456789")


class QuickLine(NamedTuple):
    """A command line :func:`quick_request` took: what to run, and whether as JSON."""

    words: tuple[str, ...]
    pane: str | None
    options: RunOptions
    as_json: bool


def quick_request(argv: Sequence[str], environ: Mapping[str, str]) -> QuickLine | None:
    """The command line ``argv`` (without the program name) when it is one of the common
    shapes, else None (click reads it)."""
    if "_TMUX_SEND_COMPLETE" in environ:  # click's shell completion
        return None
    seen = _options(argv)
    if seen is None:
        return None
    values, rest = seen
    words = tuple(argv[len(argv) - rest :])
    if not words:
        return None
    timeout = _seconds(values.get("timeout"), RunOptions().idle_timeout)
    max_time = _seconds(values.get("max_time"), RunOptions().max_time)
    if timeout is None or max_time is None:
        return None
    options = RunOptions(timeout, max_time, "raw" in values)
    return QuickLine(words, values.get("pane"), options, "json" in values)


def _options(argv: Sequence[str]) -> tuple[dict[str, str], int] | None:
    """The options before the command (field -> value; "" for a flag) and how many
    arguments are the command; None for a line this reader leaves to click."""
    values: dict[str, str] = {}
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            return values, len(argv) - index - 1
        if arg == "-" or not arg.startswith("-"):
            return values, len(argv) - index  # the command's first word ends the options
        name, equals, value = arg.partition("=")
        known = _OPTIONS.get(name)
        if known is None or (equals and (not known[1] or name == "-p" or name == "-t")):
            return None
        field, takes_value = known
        if takes_value and not equals:
            index += 1
            if index == len(argv):
                return None
            value = argv[index]
        if field in values or (takes_value and (not value or value.startswith("-"))):
            return None
        values[field] = value
        index += 1
    return values, 0


def _seconds(value: str | None, default: float) -> float | None:
    """A timeout written as plain decimal digits (``5``, ``2.5``, ``.5``) and above zero,
    the default when not given, None for anything else (click says what is wrong)."""
    if value is None:
        return default
    whole, _dot, fraction = value.partition(".")
    if not (whole or fraction) or not set(whole + fraction) <= _DIGITS:
        return None
    seconds = float(value)
    return seconds if seconds > 0 else None
