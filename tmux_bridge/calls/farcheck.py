"""Dry runs in a far shell (``tmux-send --check`` with ssh, su, sudo, a container or a
nested shell in front of the pane's shell).

The command is parsed by this machine's binary of the far shell's kind (``bash -n``,
``zsh -n``, ``fish --no-execute``, ``sh -n``), as :mod:`tmux_bridge.calls.check` does with the
pane's own shell. The kind is the one the last call there recorded, when that call went
through the same program (its pid), so nothing is typed to learn it; else the probe of a
far call names it: the dry run then types the probe (and, once per far shell, the helper
definitions) and one line, the lookup of the first word or an empty command. A probe
that names another kind than the one recorded (the person started another shell behind
the same ssh) wins.
"""

from __future__ import annotations

import shutil
import time
from typing import Any

from ..cancel import Cancel
from ..errors import BridgeError, LockTimeout, PaneNotReady, ReplMismatch
from ..pane.front import Gateway
from ..pane.info import PaneInfo
from ..results import CheckResult, RunOptions
from ..target import Target
from ..text.shells import ShellKind
from ..text.syntax import FirstWord, first_word_of, lookup_line, predicted_exit, read_lookup, shown
from .command import Command, command_bytes, run_in_frame
from .far import check_far_ready
from .frame import Notice, pane_call, shell_front
from .syntaxcheck import parse_check

# the binary of each kind on this machine that checks the far shell's syntax
LOCAL_BINARY: dict[ShellKind, str] = {"bash": "bash", "zsh": "zsh", "fish": "fish", "posix": "sh"}
# What the record (and the audit log) names the dry run's far call.
SHOWN = "(dry run: the far shell's kind, where the first word comes from)"


class Judged:
    """What is known of the command in the far shell's kind."""

    def __init__(self) -> None:
        self.kind: ShellKind | None = None
        self.parses: bool | None = None
        self.parse_error: str | None = None
        self.parsed_by: str | None = None
        self.word: FirstWord | None = None

    def judge(self, kind: ShellKind, command: Command, runtime_dir: str) -> None:
        self.kind = kind
        self.word = first_word_of(kind, command)
        binary = shutil.which(LOCAL_BINARY[kind])
        self.parsed_by = binary
        if binary is None:
            self.parses = None
            self.parse_error = (
                f"this machine has no {LOCAL_BINARY[kind]} to check the far {kind} shell's "
                "syntax with"
            )
            return
        script = command_bytes(kind, command)
        self.parses, self.parse_error = parse_check(kind, binary, script, runtime_dir)

    def result(
        self,
        text: str,
        pane_id: str,
        far: dict[str, Any],
        *,
        resolves_as: str | None,
        refused: BridgeError | None,
        would_exit: int,
        typed: bool,
    ) -> CheckResult:
        """The dry run's result: what is judged, the readiness (``refused``: the pane
        is not ready) and the lookup."""
        return CheckResult(
            command=text,
            pane=pane_id,
            shell=self.kind,
            parses=self.parses,
            parse_error=self.parse_error,
            first_word=shown(self.word),
            resolves_as=resolves_as,
            ready=refused is None,
            reason=None if refused is None else str(refused),
            error_code=None if refused is None else refused.code,
            would_exit=would_exit,
            typed_lookup=typed,
            parsed_by=self.parsed_by,
            far=far,
        )

    @property
    def wants_lookup(self) -> bool:
        return bool(self.parses) and self.word is not None and self.word.literal


def recorded_kind(target: Target, pane: PaneInfo, gateway: Gateway) -> ShellKind | None:
    """The far shell's kind the last call in the pane recorded, when it went through
    the program now in front (the same pid)."""
    from ..pane.context import facts_of, read_context
    from ..pane.records import pane_dir_name

    key = pane_dir_name(target.tmux, pane.pane_id)
    facts = facts_of(read_context(target.runtime_dir), key, pane.server)
    far = facts.get("far")
    if isinstance(far, dict) and far.get("gateway_pid") == gateway.pid:
        kind = far.get("shell")
        if kind in LOCAL_BINARY:
            return kind  # type: ignore[no-any-return]
    return None


def check_far(
    target: Target,
    pane: PaneInfo,
    gateway: Gateway,
    command: Command,
    text: str,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> CheckResult:
    """:func:`~tmux_bridge.calls.check.check_command` for a pane with a far shell in front."""
    judged = Judged()
    known = recorded_kind(target, pane, gateway)
    if known is not None:
        judged.judge(known, command, target.runtime_dir)
    typed = False
    resolves_as: str | None = None
    try:
        if known is None or judged.wants_lookup:
            typed, resolves_as = _far_call(target, judged, command, options, notice, cancel)
        else:
            _far_ready(target, gateway, options, notice, cancel)
    except (PaneNotReady, ReplMismatch, LockTimeout) as exc:
        if judged.kind is None:
            judged.parse_error = (
                "the far shell's kind is not known yet, and its probe is typed only into "
                "a ready pane"
            )
        return judged.result(
            text,
            pane.pane_id,
            _far(gateway, judged.kind, known),
            resolves_as=None if judged.word is None else "unknown",
            refused=exc,
            would_exit=exc.exit_code,
            typed=False,
        )
    if resolves_as is None and judged.word is not None:
        resolves_as = "unknown"
    return judged.result(
        text,
        pane.pane_id,
        _far(gateway, judged.kind, known),
        resolves_as=resolves_as,
        refused=None,
        would_exit=predicted_exit(judged.kind, judged.parses, resolves_as, far=True),
        typed=typed,
    )


def _far(gateway: Gateway, kind: ShellKind | None, known: ShellKind | None) -> dict[str, Any]:
    """The result's ``far``: the program in front, the far shell's kind and where the
    kind came from (``None``: not known, no probe was typed)."""
    where = None if kind is None else "last_call" if known == kind else "probe"
    return {"via": gateway.name, "gateway_pid": gateway.pid, "shell": kind, "kind_from": where}


def _far_ready(
    target: Target, gateway: Gateway, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> None:
    """The checks a far call makes before typing, under the pane's lock; typing nothing
    (a slow far prompt right after a call of ours is waited for, as by the call)."""
    with pane_call(target, options, cancel, notice) as frame:
        shell_front(frame)
        view = frame.view
        check_far_ready(
            target.tmux, view.pane, gateway, frame.records, view.screen, frame.deadline, cancel
        )


def _far_call(
    target: Target,
    judged: Judged,
    command: Command,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> tuple[bool, str | None]:
    """One far call: its probe names the kind (the command is judged in it, again when
    it is not the recorded one), then the lookup of the first word, or an empty line.
    Whether a lookup was typed, and its answer."""
    looked_up: list[ShellKind] = []

    def choose(kind: ShellKind) -> Command:
        if judged.kind != kind:
            judged.judge(kind, command, target.runtime_dir)
        if judged.wants_lookup and judged.word is not None:
            looked_up.append(kind)
            return lookup_line(kind, judged.word.text)
        return ""

    out = bytearray()
    with pane_call(target, options, cancel, notice) as frame:
        record = run_in_frame(
            target, frame, choose, options._replace(raw=False),
            (out.extend, lambda _chunk: None), notice, cancel, SHOWN,
        )  # fmt: skip
    _remember_far(target, record.pane, record.far)
    if not looked_up:
        return False, None
    if record.timed_out is not None or record.cancelled is not None or record.status is None:
        return True, "unknown"
    return True, read_lookup(looked_up[0], out.decode("utf-8", "replace"))


def _remember_far(target: Target, pane_id: str, far: dict[str, str | int] | None) -> None:
    """Keep the far facts the probe gave, so that the next dry run need not type it."""
    if not far:
        return
    from ..pane.context import update_pane
    from ..pane.records import pane_dir_name

    update_pane(
        target.runtime_dir, pane_dir_name(target.tmux, pane_id), {"far": {**far, "at": time.time()}}
    )
