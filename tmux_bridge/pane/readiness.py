"""Whether the pane's shell may be typed into now: at its prompt, with nothing of the
person's in the way (a program in front, a busy builtin, a half-typed line).

The half-typed-line check is one heuristic with one memory (:class:`PromptMemory`): a
line that is a known bare prompt plus more holds the person's typing. The pane's own
shell's prompts are learnt (:func:`check_not_typing`); a far shell's (behind ssh, su
...) is the line seen at the start of the last far call through the same program, kept
apart, and a far shell seen the first time must show a line that ends as prompts do
(:func:`check_not_typing_far`)."""

from __future__ import annotations

import time

from ..cancel import Cancel, check_not_cancelled
from ..errors import HalfTypedLine, PaneBusy, PaneNotAtPrompt
from ..infra.process import proc
from ..infra.tmux import Tmux
from ..text.shells import ShellKind
from .info import PaneInfo, PaneView, find_pane
from .records import PaneDir, PromptMemory

# The refusal sentences: how every refusal to type starts, and how some end.
NOT_READY = "The bridge terminal is not ready: "
HANDS_OFF = "tmux-send does not type into a terminal the person is using."

# How long a shell seen between commands may take to reach its prompt (e.g. the shell of
# the previous call still drawing it) before we call it busy.
PROMPT_WAIT = 0.5
# How long a shell may take to draw its prompt right after a call of ours (no key pressed
# since): prompts that run git, kubectl or a slow hook take seconds.
SLOW_PROMPT_WAIT = 10.0


def check_ready(
    pane: PaneInfo,
    kind: ShellKind | None,
    prompt_wait: float = PROMPT_WAIT,
    cancel: Cancel | None = None,
) -> ShellKind:
    """The shell's kind, when it waits at its prompt for a command; else raise
    :class:`PaneBusy` or :class:`PaneNotAtPrompt` naming what is in the way. Copy mode
    alone is not in the way: the caller leaves it.

    May wait up to ``prompt_wait`` seconds for a shell that is between commands.
    """
    kind = check_shell(pane, kind)
    wait_for_prompt(pane, kind, prompt_wait, cancel)
    return kind


def check_shell(pane: PaneInfo, kind: ShellKind | None) -> ShellKind:
    """The kind of the pane's shell; raise :class:`PaneNotAtPrompt` when the pane is dead
    or runs no shell tmux-send can drive."""
    if pane.dead:
        raise PaneNotAtPrompt(
            NOT_READY + "its shell has exited (the pane is dead). "
            "Ask the person to restart it with `tmux-bridge`."
        )
    if kind is None:
        name = proc.process_name(pane.pid) or pane.current_command
        raise PaneNotAtPrompt(
            NOT_READY + f"it runs `{name}`, not a shell tmux-send can drive "
            "(bash, zsh, fish or a POSIX sh)."
        )
    return kind


def wait_for_prompt(
    pane: PaneInfo, kind: ShellKind, prompt_wait: float, cancel: Cancel | None = None
) -> bool:
    """Wait up to ``prompt_wait`` seconds for the shell to wait at its prompt with
    nothing in front; whether it had to wait. Raises as :func:`check_ready`."""
    deadline = time.monotonic() + prompt_wait
    waited = False
    while True:
        problem = _foreground_problem(pane, kind)
        if problem is None:
            return waited
        if time.monotonic() >= deadline or not problem[1]:
            error = PaneBusy if problem[1] else PaneNotAtPrompt
            raise error(NOT_READY + problem[0] + " " + HANDS_OFF)
        check_not_cancelled(cancel)
        waited = True
        time.sleep(0.002 if time.monotonic() < deadline - prompt_wait + 0.5 else 0.02)
        proc.forget()  # asked again: what has changed since


def ready_shell(
    tmux: Tmux, view: PaneView, records: PaneDir, deadline: float, cancel: Cancel | None
) -> tuple[ShellKind, PaneInfo]:
    """The shell's kind and the pane, once its shell waits at its prompt with nothing
    typed; else raise as :func:`check_ready` and :func:`check_not_typing`.

    Right after a call of ours, with no key pressed since, whatever runs in the pane is
    the shell drawing its prompt (a slow prompt, or hooks that run programs): it is
    waited for up to :data:`SLOW_PROMPT_WAIT` rather than :data:`PROMPT_WAIT`.
    """
    pane = view.pane
    memory = records.read_prompt()
    quiet = _quiet(view, memory)
    kind = check_shell(pane, proc.shell_kind(pane.pid))
    wait = min(SLOW_PROMPT_WAIT, deadline - time.monotonic()) if quiet else PROMPT_WAIT
    if wait_for_prompt(pane, kind, max(wait, 0.0), cancel):
        view = find_pane(tmux, "", pane.pane_id)  # the prompt was drawn meanwhile
        pane = view.pane
        quiet = _quiet(view, memory)
    check_not_typing(pane, kind, view.screen, records, memory, quiet)
    return kind, pane


# Rows a prompt may take above the cursor line (a blank line, a line of git or host info).
_PROMPT_ROWS = 3


def _quiet(view: PaneView, memory: PromptMemory) -> bool:
    """Whether the pane is as the last call left it: no key since, nothing run since."""
    if not memory.quiet_since_last_call(view.pane.keys_at) or memory.end_row < 0:
        return False
    # the cursor is where that call left the shell: on the prompt it drew there
    row = view.pane.history_size + view.pane.cursor_y
    return 0 <= row - memory.end_row <= _PROMPT_ROWS + 1


def _foreground_problem(pane: PaneInfo, kind: ShellKind) -> tuple[str, bool] | None:
    """What keeps the shell from its prompt, and whether it may clear up by itself."""
    shell = proc.proc_stat(pane.pid)
    if shell is None:
        return ("its shell has exited.", False)
    what = "a full-screen program" if pane.alternate_on else "a program"
    if shell.tpgid not in (shell.pgrp, -1):
        name = proc.command_name(shell.tpgid) or pane.current_command
        return (f"{what} is running in it (`{name}`). Ask the person to finish or quit it.", True)
    # fish runs the commands of a sourced file (a REPL tmux-send started, say) in its own
    # process group, so the foreground group alone does not show them
    child = proc.foreground_child(pane.pid, shell.tpgid)
    # fish's own helpers: fish waits for keys. Unknown (no wait channel): counted busy
    if child is not None and not (kind == "fish" and proc.waits_for_keys(pane.pid) is True):
        name = proc.command_name(child)
        return (f"{what} is running in it (`{name}`). Ask the person to finish or quit it.", True)
    if pane.alternate_on:
        return (f"a full-screen program is open in it (`{pane.current_command}`).", True)
    if kind != "posix" and proc.line_editor_active(pane.tty) is False:
        return (
            f"its shell ({kind}) is busy and not at its prompt (a builtin such as `read`, "
            "or a loop, is running).",
            True,
        )
    return None


def check_not_typing(
    pane: PaneInfo,
    kind: ShellKind,
    screen: list[str] | None,
    records: PaneDir,
    memory: PromptMemory | None = None,
    quiet: bool = False,
) -> None:
    """Refuse when the person seems to have typed something at the prompt and not run it.

    tmux cannot tell typed text from the prompt, so the prompt is learnt: the text left
    of the cursor. Right after a call of ours with no key pressed since (``quiet``), the
    line is the bare prompt. Otherwise a line seen at the start of two calls in a row is
    taken as a bare prompt (seeing it twice keeps a prompt caught half-drawn from being
    learnt). A line that is a known prompt plus more means the person typed the rest; a
    changed prompt (a new directory, a status shown in it) is simply learnt again. Text
    right of the cursor is typed text unless it is a right prompt: apart from the
    cursor and ending at the right edge (zsh's RPROMPT, fish's right prompt).
    """
    if screen is None or pane.cursor_y >= len(screen):
        return
    left, right = split_at_column(screen[pane.cursor_y], pane.cursor_x)
    left = left.rstrip()
    if kind == "fish" and left.startswith("read>"):
        # fish's `read` edits its input with the same line editor as the prompt, so only
        # its prompt tells the two apart
        raise PaneBusy(
            NOT_READY
            + "its shell (fish) is busy: `read` waits for the person's input. "
            + HANDS_OFF
        )
    memory = records.read_prompt() if memory is None else memory
    if quiet:
        if left and left not in memory.known[:1]:
            records.write_prompt(memory.learnt(left))
        return
    typed = _typed_text(left, right, memory.known, pane.cursor_x, pane.width)
    if typed:
        raise HalfTypedLine(
            NOT_READY + f"the person has typed `{typed}` at its prompt and not run it yet. "
            "tmux-send will not overwrite their input; ask them to run or clear it."
        )
    if not left or left in memory.known:
        return
    if left == memory.candidate:
        records.write_prompt(memory.learnt(left))
    else:
        records.write_prompt(memory._replace(candidate=left))


# How a bare prompt ends, for a far shell seen the first time ($ # > % and themes' marks).
PROMPT_ENDS = "$#>%:)]\u00bb\u276f\u279c\u03bb\u2192\ue0b0\ue0b1\ue0b4"


def check_not_typing_far(line: str, via: str, pid: int, records: PaneDir) -> None:
    """:func:`check_not_typing` for a far shell behind the program ``via`` (its pid
    ``pid``): refuse when the cursor's line (left of the cursor) is the far prompt seen
    at the start of the last call through ``pid`` plus more, or (a far shell seen the
    first time) it does not end as prompts do."""
    seen = line.rstrip()
    if not seen:
        raise PaneBusy(
            NOT_READY + f"`{via}` runs in it and the cursor is on an empty line: "
            "no shell prompt shows (a program may be running on the far side, or the far "
            "shell is still starting). " + HANDS_OFF
        )
    known = records.read_prompt().far_known(pid)
    if seen in known:
        return
    typed = _typed_text(seen, "", known, 0, 0)
    if typed:
        raise HalfTypedLine(
            NOT_READY + f"the person has typed `{typed}` at the "
            "far shell's prompt and not run it yet. tmux-send will not add to their "
            "input; ask them to run or clear it."
        )
    if seen[-1] in PROMPT_ENDS:
        return
    raise PaneNotAtPrompt(
        NOT_READY + f"`{via}` runs in it and its line shows `{seen}`, which does "
        "not end as a shell prompt does; tmux-send cannot tell it from text typed there. "
        "Ask the person to clear the line."
    )


def _typed_text(left: str, right: str, known: tuple[str, ...], column: int, width: int) -> str:
    """What the person seems to have typed: the text after a known prompt left of the
    cursor, and text right of the cursor that is not a right prompt."""
    before = ""
    if left not in known:
        prefixes = [k for k in known if left.startswith(k)]
        if prefixes:
            before = left[len(max(prefixes, key=len)) :]
    after = right.rstrip()
    if after and _is_right_prompt(right, column, width):
        after = ""
    return (before + after).strip()


def _is_right_prompt(right: str, column: int, width: int) -> bool:
    """Text right of the cursor (at ``column``) that starts apart from it and ends at
    the right edge."""
    return right[:1] == " " and column + _cells(right.rstrip()) >= width - 2


def split_at_column(line: str, column: int) -> tuple[str, str]:
    """``line`` split at screen column ``column`` (wide characters take two)."""
    cells = 0
    for index, char in enumerate(line):
        if cells >= column:
            return line[:index], line[index:]
        cells += _width(char)
    return line, ""


def _cells(text: str) -> int:
    return sum(_width(char) for char in text)


def _width(char: str) -> int:
    if char.isascii():
        return 1
    import unicodedata  # only for non-ASCII lines

    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1
