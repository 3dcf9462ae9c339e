"""Dry runs: what a command call would do, without running the command.

:func:`check_command` answers four questions about a command for the target pane:

* which pane and shell would run it;
* whether that shell parses it: the text the real call would write (several words
  quoted as command mode quotes them) is checked by this machine's binary of the pane's
  shell with its own no-execute flag (``bash -n``, ``zsh -n``, ``fish --no-execute``,
  ``sh -n``), with that shell's default options;
* what the first command word resolves to (alias, keyword, function, builtin, file,
  or not found). Functions and aliases live only in the pane's shell, so the name is
  looked up there: one line such as ``builtin type -t -- make`` runs through the
  normal runner, the way every call runs (the person sees it, and it stays out of
  the shell's history as every call does). It is typed only when the pane is ready,
  the command parses and its first word is literal text (not ``$EDITOR``, a glob or
  a command substitution, which only running could expand: ``unknown``);
* whether the pane is ready: the readiness checks of a real call (the pane's lock,
  waiting for another call as a real call would, an open REPL, a program in front, a
  half-typed line), without typing.

The exit status it predicts is the real call's: 125 when the pane is not ready, the
status the pane's shell gives a command it cannot parse
(:data:`~tmux_bridge.text.syntax.PARSE_ERROR_STATUS`),
127 when the first word resolves to nothing, else 0. Pre-flight checks help an agent;
they are no security boundary (the command may still fail, or do harm, when it runs).
"""

from __future__ import annotations

from ..cancel import Cancel
from ..errors import LockTimeout, PaneNotReady, ReplMismatch
from ..infra.process import proc
from ..infra.runtime import ensure_private_dir
from ..pane import readiness
from ..pane.front import gateway_in_front
from ..pane.info import PaneInfo, find_pane
from ..results import CheckResult, RunOptions
from ..target import Target
from ..text.shells import ShellKind
from ..text.syntax import first_word_of, lookup_line, predicted_exit, read_lookup, shown
from .command import Command, command_bytes, run_command
from .frame import Notice, pane_call, shell_front
from .syntaxcheck import parse_check


def check_command(
    target: Target, command: Command, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> CheckResult:
    """Dry-run ``command`` (as :func:`~tmux_bridge.calls.command.run_command` takes it):
    in the pane's own shell, or in the far shell in front of it
    (:func:`~tmux_bridge.calls.farcheck.check_far`).

    Blocks while another call holds the pane, as a real call would (up to
    ``options.max_time``). Raises what a real call raises before a pane is found
    (:class:`NoBridgeSession`, :class:`NoSuchPane`, :class:`RuntimeDirError`,
    :class:`TmuxError`) and :class:`Cancelled`; a pane that is not ready is a result.
    """
    ensure_private_dir(target.runtime_dir)
    pane = find_pane(target.tmux, target.session, target.pane).pane
    kind = None if pane.dead else proc.shell_kind(pane.pid)
    text = command_text(kind, command)
    gateway = None if pane.dead else gateway_in_front(pane)
    if gateway is not None:
        from .farcheck import check_far

        return check_far(target, pane, gateway, command, text, options, notice, cancel)
    return check_local(target, pane, kind, command, text, options, notice, cancel)


def check_local(
    target: Target,
    pane: PaneInfo,
    kind: ShellKind | None,
    command: Command,
    text: str,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> CheckResult:
    """:func:`check_command` for a pane whose own shell (a ``kind`` shell) is in front."""
    parses: bool | None = None
    parse_error = None
    word = None
    binary = None
    if kind is not None:
        binary = proc.shell_executable(pane.pid)
        parses, parse_error = parse_check(
            kind, binary, command_bytes(kind, command), target.runtime_dir
        )
        word = first_word_of(kind, command)
    resolves_as = None if word is None else "unknown"
    typed = False
    try:
        if kind is not None and parses and word is not None and word.literal:
            typed, resolves_as = True, lookup(target, kind, word.text, options, notice, cancel)
        else:
            wait_until_ready(target, options, notice, cancel)
    except (PaneNotReady, ReplMismatch, LockTimeout) as exc:
        return CheckResult(
            command=text,
            pane=pane.pane_id,
            shell=kind or proc.process_name(pane.pid) or None,
            parses=parses,
            parse_error=parse_error,
            first_word=shown(word),
            resolves_as=resolves_as,
            ready=False,
            reason=str(exc),
            error_code=exc.code,
            would_exit=exc.exit_code,
            typed_lookup=False,
            parsed_by=binary,
        )
    return CheckResult(
        command=text,
        pane=pane.pane_id,
        shell=kind,
        parses=parses,
        parse_error=parse_error,
        first_word=shown(word),
        resolves_as=resolves_as,
        ready=True,
        reason=None,
        error_code=None,
        would_exit=predicted_exit(kind, parses, resolves_as),
        typed_lookup=typed,
        parsed_by=binary,
    )


def command_text(kind: ShellKind | None, command: Command) -> str:
    """The command as the audit log and the result show it."""
    if isinstance(command, bytes):
        return command.decode("utf-8", "surrogateescape")
    if isinstance(command, str):
        return command
    if kind is None:
        return " ".join(command)
    return command_bytes(kind, command).decode("utf-8", "surrogateescape")


# --- readiness and the lookup ---------------------------------------------------------


def wait_until_ready(
    target: Target, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> None:
    """The readiness checks of a real command call, under the pane's lock, typing
    nothing; raises what the real call would raise before typing."""
    with pane_call(target, options, cancel, notice) as frame:
        shell_front(frame)
        readiness.ready_shell(target.tmux, frame.view, frame.records, frame.deadline, cancel)


def lookup(
    target: Target,
    kind: ShellKind,
    word: str,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> str:
    """What ``word`` is in the pane's shell, by running
    :func:`~tmux_bridge.text.syntax.lookup_line` there like
    any command call (readiness checks first: raises as a real call does)."""
    out = bytearray()
    record = run_command(
        target,
        lookup_line(kind, word),
        options._replace(raw=False),
        (out.extend, lambda _chunk: None),
        notice,
        cancel,
    )
    if record.timed_out is not None or record.cancelled is not None or record.status is None:
        return "unknown"
    return read_lookup(kind, out.decode("utf-8", "replace"))
