"""Whether the pane's shell may be typed into now: at its prompt, with nothing of the
person's in the way (a program in front, a busy builtin, a half-typed line)."""

from __future__ import annotations

import time

from .errors import HalfTypedLine, PaneBusy, PaneNotAtPrompt
from .pane import PaneInfo
from .procfs import (
    command_name,
    foreground_child,
    line_editor_active,
    proc_stat,
    process_name,
    waits_for_keys,
)
from .rundir import PaneDir
from .shells import ShellKind

_NOT_READY = "The bridge terminal is not ready: "
_HANDS_OFF = "tmux-send does not type into a terminal the person is using."

# How long a shell seen between commands may take to reach its prompt (e.g. the shell of
# the previous call still drawing it) before we call it busy.
PROMPT_WAIT = 0.5


def check_ready(
    pane: PaneInfo, kind: ShellKind | None, prompt_wait: float = PROMPT_WAIT
) -> ShellKind:
    """The shell's kind, when it waits at its prompt for a command; else raise
    :class:`PaneBusy` or :class:`PaneNotAtPrompt` naming what is in the way. Copy mode
    alone is not in the way: the caller leaves it.

    May wait up to ``prompt_wait`` seconds for a shell that is between commands.
    """
    if pane.dead:
        raise PaneNotAtPrompt(
            _NOT_READY + "its shell has exited (the pane is dead). "
            "Ask the person to restart it with `tmux-bridge`."
        )
    if kind is None:
        name = process_name(pane.pid) or pane.current_command
        raise PaneNotAtPrompt(
            _NOT_READY + f"it runs `{name}`, not a shell tmux-send can drive "
            "(bash, zsh, fish or a POSIX sh)."
        )
    deadline = time.monotonic() + prompt_wait
    while True:
        problem = _foreground_problem(pane, kind)
        if problem is None:
            return kind
        if time.monotonic() >= deadline or not problem[1]:
            error = PaneBusy if problem[1] else PaneNotAtPrompt
            raise error(_NOT_READY + problem[0] + " " + _HANDS_OFF)
        time.sleep(0.002)


def _foreground_problem(pane: PaneInfo, kind: ShellKind) -> tuple[str, bool] | None:
    """What keeps the shell from its prompt, and whether it may clear up by itself."""
    shell = proc_stat(pane.pid)
    if shell is None:
        return ("its shell has exited.", False)
    what = "a full-screen program" if pane.alternate_on else "a program"
    if shell.tpgid not in (shell.pgrp, -1):
        name = command_name(shell.tpgid) or pane.current_command
        return (f"{what} is running in it (`{name}`). Ask the person to finish or quit it.", True)
    # fish runs the commands of a sourced file (a REPL tmux-send started, say) in its own
    # process group, so the foreground group alone does not show them
    child = foreground_child(pane.pid, shell.tpgid)
    if child is not None and not (kind == "fish" and waits_for_keys(pane.pid)):
        name = command_name(child)
        return (f"{what} is running in it (`{name}`). Ask the person to finish or quit it.", True)
    if pane.alternate_on:
        return (f"a full-screen program is open in it (`{pane.current_command}`).", True)
    if kind != "posix" and line_editor_active(pane.tty) is False:
        return (
            f"its shell ({kind}) is busy and not at its prompt (a builtin such as `read`, "
            "or a loop, is running).",
            True,
        )
    return None


def check_not_typing(
    pane: PaneInfo, kind: ShellKind, screen: list[str] | None, records: PaneDir
) -> None:
    """Refuse when the person seems to have typed something at the prompt and not run it.

    tmux cannot tell typed text from the prompt, so the prompt line is learnt: a line
    seen at the start of two calls in a row is taken as the bare prompt. Later, a prompt
    line that is that text plus more means the person typed the rest. A changed prompt
    (a new directory, a status shown in it) is simply learnt again. Seeing a line twice
    keeps a prompt caught half-drawn from ever being learnt.
    """
    if screen is None or pane.cursor_y >= len(screen):
        return
    line = screen[pane.cursor_y].rstrip()
    if not line:
        return
    if kind == "fish" and line.startswith("read>"):
        # fish's `read` edits its input with the same line editor as the prompt, so only
        # its prompt tells the two apart
        raise PaneBusy(
            _NOT_READY
            + "its shell (fish) is busy: `read` waits for the person's input. "
            + _HANDS_OFF
        )
    known, candidate = records.read_prompt()
    if known and line != known and line.startswith(known):
        typed = line[len(known) :].strip()
        raise HalfTypedLine(
            _NOT_READY + f"the person has typed `{typed}` at its prompt and not run it yet. "
            "tmux-send will not overwrite their input; ask them to run or clear it."
        )
    if line == known:
        return
    if line == candidate:
        known, candidate = line, ""
    else:
        candidate = line
    records.write_prompt(known, candidate)
