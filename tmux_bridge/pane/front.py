"""What is in front of a pane's shell, decided once per call: the shell itself, a far
shell behind a gateway (ssh, su, sudo, a container, a nested shell), or a REPL tmux-send
started; and the one registry of programs that lead to another shell.

Every call mode dispatches on :func:`pane_front`'s answer (carried on the call's frame,
:class:`~tmux_bridge.calls.frame.CallFrame`); the listings (``panes``, ``status``) and
agent detection read the same registry. Only ``/proc`` and, for a far REPL, the
cursor's line are looked at; nothing is typed.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from ..cancel import Cancel, check_not_cancelled
from ..errors import HalfTypedLine, PaneBusy, PaneNotReady
from ..infra.process import proc
from ..infra.tmux import Tmux
from ..tuples import NamedTuple
from .info import PaneInfo, cursor_place
from .readiness import split_at_column
from .records import PaneDir, ReplRecord

if TYPE_CHECKING:
    from ..infra.patterns import Pattern

# --- the registry of ways to another shell -------------------------------------------------

# Programs through which a person reaches another shell (the foreground of the pane)
# and which calls drive as a far shell. Not mosh-client: it sends screen states, not
# the byte stream, so output that scrolls by between two states (and the markers in
# it) never reaches the pane.
GATEWAYS = frozenset(
    {
        "ssh", "su", "sudo", "doas", "runuser", "docker", "podman",
        "kubectl", "nix", "nix-shell", "poetry", "lxc", "lxc-attach", "machinectl",
        "systemd-nspawn", "toolbox", "distrobox", "chroot", "nsenter", "script", "vagrant",
    }
)  # fmt: skip
# How a listing names a program in front of a pane's shell that is itself a way to
# another shell: a remote one, or a nested one on this machine.
REMOTE = frozenset({"ssh", "mosh", "mosh-client", "et", "telnet"})
NESTED = frozenset(
    {"bash", "zsh", "fish", "sh", "dash", "ksh", "busybox", "su", "sudo", "docker",
     "podman", "kubectl", "nix", "nix-shell", "poetry", "toolbox", "distrobox"}
)  # fmt: skip
SHELL_WAYS = GATEWAYS | REMOTE | NESTED


def interactive(pid: int) -> bool:
    """Whether a shell's arguments are options only, none of them ``-c`` (a shell that
    runs a command or a script is a tool's, not a way for a person)."""
    words = proc.command_line(pid)
    if words is None:
        return False
    options = [a for a in words[1:] if a]
    return all(a.startswith("-") and (a.startswith("--") or "c" not in a) for a in options)


# --- what is in front ----------------------------------------------------------------------


class Gateway(NamedTuple):
    """The pane's foreground program that leads to a far shell."""

    pid: int  # the leader of the pane's foreground process group
    name: str  # its command name (``ssh``, ``sudo``, ``bash``)
    local_shell: bool  # a shell of this machine on the pane's own terminal


class LocalShell(NamedTuple):
    """The pane's own shell is in front (or a program that is no way to a far shell).
    ``gone``: the record of a REPL tmux-send started that is no longer in front."""

    gone: ReplRecord | None = None


class FarShell(NamedTuple):
    """A far shell behind ``gateway`` is in front (``gone`` as for :class:`LocalShell`)."""

    gateway: Gateway
    gone: ReplRecord | None = None


class OpenRepl(NamedTuple):
    """The REPL tmux-send started is in front (``far``: in a far shell). ``refusal``: a
    far REPL whose line shows something else (text typed at it, busy), raised by the
    modes where they would refuse; a listing still counts the REPL as open."""

    record: ReplRecord
    far: bool
    refusal: PaneNotReady | None = None


Front = LocalShell | FarShell | OpenRepl


def pane_front(tmux: Tmux, pane: PaneInfo, records: PaneDir) -> Front:
    """What is in front of ``pane``'s shell now: the REPL tmux-send started (checked to
    be in front), else a far shell's gateway, else the shell itself."""
    state = records.read_repl()
    if state is not None:
        try:
            if repl_open(tmux, state, pane):
                return OpenRepl(state, state.far is not None)
        except PaneNotReady as exc:
            return OpenRepl(state, state.far is not None, exc)
    gateway = gateway_in_front(pane)
    return LocalShell(state) if gateway is None else FarShell(gateway, state)


def gateway_in_front(pane: PaneInfo) -> Gateway | None:
    """The program in front of the pane's shell when it may lead to a far shell: one of
    :data:`GATEWAYS`, or an interactive shell (not ``sh -c``, not a script). Only looked
    for when something other than the shell is in front: keeps calls short."""
    shell = proc.proc_stat(pane.pid)
    if shell is None or shell.tpgid in (shell.pgrp, -1):
        return None
    name = proc.command_name(shell.tpgid).lstrip("-")
    if name in GATEWAYS:
        return Gateway(shell.tpgid, name, False)
    if proc.shell_kind(shell.tpgid) is not None and interactive(shell.tpgid):
        return Gateway(shell.tpgid, name, True)
    return None


# --- the REPL tmux-send started ------------------------------------------------------------


def repl_in_front(state: ReplRecord, pane: PaneInfo) -> bool:
    """Whether the recorded REPL still runs and is the program in the pane's foreground
    (for a far REPL: the program that leads to its far shell)."""
    if state.pane_id != pane.pane_id:
        return False
    repl = proc.proc_stat(state.pid)
    shell = proc.proc_stat(pane.pid)
    if repl is None or shell is None:
        return False
    if state.far is not None:  # a far shell on the pane's own terminal (a nested
        return proc.holds_terminal(state.pid, shell.tpgid)  # shell, su) gives it away
    return repl.pgrp == shell.tpgid


def repl_open(tmux: Tmux, state: ReplRecord, pane: PaneInfo) -> bool:
    """:func:`repl_in_front`, and for a far REPL its prompt on the cursor's line (the
    far shell's prompt back: the person quit it). Raises :class:`HalfTypedLine` or
    :class:`PaneBusy` when the far REPL's line shows something else."""
    if not repl_in_front(state, pane):
        return False
    if state.far is None:
        return True
    return far_repl_shows(tmux, state, pane)


def repl_shown(tmux: Tmux, state: ReplRecord, pane: PaneInfo) -> bool:
    """:func:`repl_open` for a listing: a far REPL busy or with text typed at its prompt
    is still open."""
    try:
        return repl_open(tmux, state, pane)
    except PaneNotReady:
        return True


def prompt_part(tmux: Tmux, pane_id: str) -> str:
    """The cursor line left of the cursor, right-trimmed: the far prompt without a right
    prompt (zsh's RPROMPT, fish's right prompt), which may change (a clock)."""
    line, column = cursor_place(tmux, pane_id)
    return (split_at_column(line, column)[0] if column >= 0 else line).rstrip()


# How long a local REPL may take to draw its prompt (right after a call of ours that
# ended at its end marker, printed just before the prompt) before it is called busy.
REPL_PROMPT_WAIT = 1.0


def check_local_repl_ready(
    tmux: Tmux, state: ReplRecord, pane: PaneInfo, cancel: Cancel | None = None
) -> None:
    """Before typing into the local REPL ``state`` names (in front): the cursor must
    stand right after its prompt, with nothing typed (see :func:`repl_line`). Raises
    :class:`HalfTypedLine` when the person has typed at the prompt, or begun a statement
    or block not finished (a continuation prompt), and :class:`PaneBusy` when no prompt
    shows within :data:`REPL_PROMPT_WAIT` (busy with the person's code, or reading their
    input): what an evaluation types would go to the person's line or program."""
    from ..infra.patterns import compile_pattern  # only with a REPL open
    from ..text.presets import find_preset

    prompt = compile_pattern(state.prompt_re, "the prompt")
    preset = find_preset(state.name)
    continued = preset.continued if preset is not None else None
    deadline = time.monotonic() + REPL_PROMPT_WAIT
    while True:
        line, column = cursor_place(tmux, pane.pane_id)
        kind = repl_line(line, column, prompt, continued)
        if kind == "ready":
            return
        if kind == "continued":
            raise HalfTypedLine(
                f"the {state.name} REPL shows `{line}`: a statement or block begun there is "
                "not finished. tmux-send will not add to it; ask the person to finish or "
                "clear it."
            )
        if kind == "typed":
            raise HalfTypedLine(
                f"the person has typed at the {state.name} REPL's prompt (`{line}`) and not "
                "run it yet. tmux-send will not add to their input or clear it; ask them "
                "to run or clear it."
            )
        if time.monotonic() >= deadline:
            raise PaneBusy(
                f"the {state.name} REPL's prompt does not show (the cursor's line shows "
                f"`{line}`): it may be busy with something the person started, or reading "
                "their input. Ask the person."
            )
        check_not_cancelled(cancel)
        time.sleep(0.01)


def repl_line(line: str, column: int, prompt: Pattern, continued: str | None) -> str:
    """What the cursor's ``line`` (right-trimmed; the cursor at ``column``, -1 unknown)
    shows of a REPL whose prompt ``prompt`` matches (the prompt alone) and whose
    continuation prompt ``continued`` matches: ``"ready"`` (the cursor right after the
    prompt, alone on the line or after output that did not end its line, as in
    ``x>>> ``), ``"continued"``, ``"typed"`` (text right of the cursor, or after the
    prompt) or ``"other"`` (no prompt: busy, or reading input)."""
    left, right = split_at_column(line, column) if column >= 0 else (line, "")
    if right.strip():
        return "typed"
    bare = left.rstrip()
    if continued is not None and re.fullmatch(continued, bare):
        return "continued"
    if prompt.search(bare):
        return "ready"
    # a prompt after output: every preset's prompt ends with a blank the cursor follows
    before = split_at_column(line, column - 1)[0] if column > 0 else line
    if line[len(before) : len(before) + 1] in ("", " "):
        for start in range(1, len(bare)):
            tail = bare[start:]
            if prompt.search(tail) and not (continued and re.fullmatch(continued, tail)):
                return "ready"
    if any(prompt.search(bare[:end]) for end in range(len(bare) - 1, 0, -1)):
        return "typed"
    return "other"


def far_repl_drawn(
    tmux: Tmux, state: ReplRecord, pane: PaneInfo, cancel: Cancel | None = None
) -> bool:
    """:func:`far_repl_shows`, given up to :data:`REPL_PROMPT_WAIT` to draw its prompt
    before it is called busy: over a slow link a far REPL's prompt comes a while after
    the end of the call before."""
    deadline = time.monotonic() + REPL_PROMPT_WAIT
    while True:
        try:
            return far_repl_shows(tmux, state, pane)
        except PaneBusy:
            if time.monotonic() >= deadline:
                raise
        check_not_cancelled(cancel)
        time.sleep(0.01)


def far_repl_shows(tmux: Tmux, state: ReplRecord, pane: PaneInfo) -> bool:
    """Whether the far REPL ``state`` names (its gateway checked to be in front) is at
    its prompt: True; the far shell's prompt back: False (the person quit it). Raises
    :class:`HalfTypedLine` for text typed at the REPL's prompt, :class:`PaneBusy` when
    the line shows something else (the REPL busy with the person's code)."""
    from ..infra.patterns import compile_pattern  # only with a far REPL open
    from ..text.presets import FAR_REPLS

    whole, column = cursor_place(tmux, pane.pane_id)
    line, right = split_at_column(whole, column) if column >= 0 else (whole, "")
    line = line.rstrip()  # the prompt part (see prompt_part)
    far = state.far or {}
    if right.strip():  # typed, the cursor moved back into it
        raise HalfTypedLine(
            f"the person has typed at the far {state.name} REPL's prompt (`{whole}`) and not "
            "run it yet. tmux-send will not add to their input; ask them to run or clear it."
        )
    if re.fullmatch(r"\.\.\.", line):  # python's and node's continuation prompt
        raise HalfTypedLine(
            f"the far {state.name} REPL shows `...`: the person has begun a block there and "
            "not finished it. tmux-send will not add to it; ask them to finish or clear it."
        )
    if compile_pattern(state.prompt_re, "the prompt").search(line):
        return True
    if line and line == far.get("prompt"):
        return False
    spec = FAR_REPLS.get(state.name)
    if spec is not None and re.search(spec.typed, line):
        raise HalfTypedLine(
            f"the person has typed at the far {state.name} REPL's prompt (`{line}`) and not "
            "run it yet. tmux-send will not add to their input; ask them to run or clear it."
        )
    raise PaneBusy(
        f"the far {state.name} REPL's prompt does not show (the cursor's line shows "
        f"`{line}`): it may be busy with something the person started. Ask the person."
    )
