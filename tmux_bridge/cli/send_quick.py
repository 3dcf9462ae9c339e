"""tmux-send's common command lines, read without click.

Agents call ``tmux-send [-p TARGET] [-t SECONDS] [--max-time SECONDS] [--raw] [--json]
[--on-timeout interrupt|detach] [--] COMMAND...`` hundreds of times a day, and the job
modes (``--background -- COMMAND``, ``--job ID [--all]``, ``--wait ID``, ``--kill ID``,
``--jobs``) as often while a job runs; importing click is about a third of tmux-send's
start-up. :func:`quick_request` reads exactly those lines; for anything
else (another option, a value click would refuse, ``-pVALUE``, an option given twice,
help, version, completion) it returns None and the click command in
:mod:`tmux_bridge.cli.send_options` reads the line, so that every error message and all of
``--help`` come from one place. ``tests/unit/test_send_quick.py`` checks both readers agree on
every line this one takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from ..results import RunOptions
from ..tuples import NamedTuple

# option -> (field, takes a value)
_OPTIONS = {
    "-p": ("pane", True),
    "--pane": ("pane", True),
    "-t": ("timeout", True),
    "--timeout": ("timeout", True),
    "--max-time": ("max_time", True),
    "--raw": ("raw", False),
    "--json": ("json", False),
    "--on-timeout": ("on_timeout", True),
    "--background": ("--background", False),
    "--job": ("--job", True),
    "--all": ("all", False),
    "--wait": ("--wait", True),
    "--kill": ("--kill", True),
    "--jobs": ("--jobs", False),
}
_JOB_MODES = ("--background", "--job", "--wait", "--kill", "--jobs")
_ON_TIMEOUT = ("interrupt", "detach")
_DIGITS = frozenset("0123456789")


class QuickLine(NamedTuple):
    """A command line :func:`quick_request` took: what to run, and whether as JSON."""

    words: tuple[str, ...]
    pane: str | None
    options: RunOptions
    as_json: bool
    mode: str = "command"  # or one of the job modes
    job: str | None = None  # --job, --wait, --kill ID
    everything: bool = False  # --job ID --all


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
    mode = _mode(values, words)
    if mode is None:
        return None
    timeout = _seconds(values.get("timeout"), RunOptions().idle_timeout)
    max_time = _seconds(values.get("max_time"), RunOptions().max_time)
    if timeout is None or max_time is None:
        return None
    on_timeout: Literal["interrupt", "detach"] = (
        "detach" if values.get("on_timeout") == "detach" else "interrupt"
    )
    options = RunOptions(timeout, max_time, "raw" in values, on_timeout)
    job = values.get(mode) or None
    everything = "all" in values
    return QuickLine(words, values.get("pane"), options, "json" in values, mode, job, everything)


def _mode(values: dict[str, str], words: tuple[str, ...]) -> str | None:
    """The mode these options ask for (``command`` or a job mode) when they go together
    as click would have them, else None."""
    modes = [name for name in _JOB_MODES if name in values]
    if len(modes) > 1:
        return None
    mode = modes[0] if modes else "command"
    takes_words = mode in ("command", "--background")
    on_timeout = values.get("on_timeout", "interrupt")
    if takes_words != bool(words) or on_timeout not in _ON_TIMEOUT:
        return None
    if ("all" in values and mode != "--job") or (on_timeout != "interrupt" and mode != "command"):
        return None
    return mode


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
