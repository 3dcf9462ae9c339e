"""The exit-status table, error messages, and the exit code of every error."""

from __future__ import annotations

import importlib
import pkgutil
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple, get_args

import pytest

import tmux_bridge
from tmux_bridge import errors
from tmux_bridge.errors import (
    AgentBusy,
    AgentChanged,
    AmbiguousAgent,
    AmbiguousPane,
    BackupNotFound,
    BridgeError,
    Cancelled,
    ChecksumMismatch,
    DraftInInput,
    EditAmbiguous,
    EditNoLine,
    EditNoMatch,
    FarReplUnsupported,
    FarShellLost,
    FileChanged,
    FileError,
    FileNotFound,
    FileTooLarge,
    HalfTypedLine,
    InboxCorrupt,
    InboxError,
    InvalidRequest,
    InvalidSender,
    LabelTaken,
    LockTimeout,
    NoBridgeSession,
    NoChecksumTool,
    NoInputBox,
    NoSavedOutput,
    NoSuchAgent,
    NoSuchJob,
    NoSuchPane,
    NotDelivered,
    PaneBusy,
    PaneNotAtPrompt,
    PaneNotReady,
    PanePiped,
    PromptNotTaken,
    ReadFailed,
    ReplError,
    ReplMismatch,
    ReplNotOpen,
    RuntimeDirError,
    SelfSend,
    SessionClosed,
    SessionExists,
    TmuxError,
    TmuxNotFound,
    TmuxTimeout,
    Unconfirmed,
    WaitTimeout,
    WriteFailed,
    exit_status,
)
from tmux_bridge.results import TimeoutKind


class ExitCase(NamedTuple):
    test_id: str
    status: int | None
    timed_out: TimeoutKind | None  # so mypy rejects a kind the code never produces
    own_signal: int | None
    expected: int


# One or more rows for each row of exit_status's docstring table, in its order.
EXIT_CASES = [
    # tmux-send got SIGINT / SIGTERM / SIGHUP: 130 / 143 / 129 (128 + N)
    ExitCase("own-sigint", None, None, signal.SIGINT, 130),
    ExitCase("own-sigterm", None, None, signal.SIGTERM, 143),
    ExitCase("own-sighup", None, None, signal.SIGHUP, 129),
    ExitCase("own-signal-beats-status", 0, None, signal.SIGINT, 130),
    ExitCase("own-signal-beats-timeout", None, "idle", signal.SIGTERM, 143),
    # the idle or overall timeout fired: 124
    ExitCase("idle-timeout", None, "idle", None, 124),
    ExitCase("overall-timeout", None, "overall", None, 124),
    ExitCase("timeout-beats-status", 0, "idle", None, 124),
    # the command finished: its status (128 + N if killed by signal N)
    ExitCase("finished-ok", 0, None, None, 0),
    ExitCase("finished-failed", 1, None, None, 1),
    ExitCase("finished-status-124", 124, None, None, 124),
    ExitCase("finished-status-125", 125, None, None, 125),
    ExitCase("killed-by-sigkill", 128 + 9, None, None, 137),
    ExitCase("killed-by-sigint", 128 + 2, None, None, 130),
    # the command ended the shell: the status it ended with
    ExitCase("ended-shell", 3, None, None, 3),
    ExitCase("ended-shell-255", 255, None, None, 255),
    # status unknown: 125
    ExitCase("status-unknown", None, None, None, 125),
]


@pytest.mark.parametrize("case", EXIT_CASES, ids=[c.test_id for c in EXIT_CASES])
def test_exit_status(case: ExitCase) -> None:
    assert exit_status(case.status, case.timed_out, case.own_signal) == case.expected


def test_the_timeout_kinds_are_the_documented_ones_and_all_tested() -> None:
    # docs/agents-guide.md: `timed_out` is `null`, `"idle"` or `"overall"`
    assert set(get_args(TimeoutKind)) == {"idle", "overall"}
    assert {case.timed_out for case in EXIT_CASES} == {None, *get_args(TimeoutKind)}


class TmuxErrorCase(NamedTuple):
    test_id: str
    argv: tuple[str, ...]
    returncode: int
    stderr: str
    message: str


TMUX_ERROR_CASES = [
    TmuxErrorCase(
        "socket-name",
        ("tmux", "-L", "default", "list-panes", "-t", "tmux-bridge-me", "-F", "#{pane_id}"),
        1,
        "can't find session: tmux-bridge-me\n",
        "tmux list-panes failed: can't find session: tmux-bridge-me",
    ),
    TmuxErrorCase(
        "socket-path-and-config",
        ("tmux", "-S", "/tmp/sock", "-f", "/dev/null", "send-keys", "-t", "%1", "x"),
        1,
        "no server running on /tmp/sock",
        "tmux send-keys failed: no server running on /tmp/sock",
    ),
    TmuxErrorCase(
        "flag-without-value",
        ("tmux", "-u", "-L", "default", "new-session", "-d"),
        1,
        "duplicate session: x",
        "tmux new-session failed: duplicate session: x",
    ),
    TmuxErrorCase(
        "empty-stderr",
        ("tmux", "-L", "default", "kill-server"),
        3,
        " \n",
        "tmux kill-server failed: exit status 3",
    ),
    TmuxErrorCase(
        "no-subcommand", ("tmux", "-L", "default"), 1, "", "tmux ? failed: exit status 1"
    ),
]


@pytest.mark.parametrize("case", TMUX_ERROR_CASES, ids=[c.test_id for c in TMUX_ERROR_CASES])
def test_tmux_error_names_subcommand(case: TmuxErrorCase) -> None:
    error = TmuxError(case.argv, case.returncode, case.stderr)
    assert str(error) == case.message
    assert error.render() == "Error: " + case.message
    assert (error.argv, error.returncode, error.stderr) == (
        case.argv,
        case.returncode,
        case.stderr,
    )


NO_BRIDGE_TEXT = """\
Error: No tmux-bridge session is running.

You have used `tmux-send`, but it currently has nowhere to send to.

The user needs to start the interactive backing terminal using `tmux-bridge`.
Do not try this yourself - instead, ask the user to do it for you.

This is necessary for *interactive* commands - for example, sudo (requiring
a password prompt). If you can avoid interactive tools, then prefer that.
Otherwise, please ask the user now."""


def test_no_bridge_session_text() -> None:
    assert NoBridgeSession().render() == NO_BRIDGE_TEXT


class RenderCase(NamedTuple):
    test_id: str
    error: BridgeError
    rendered: str


RENDER_CASES = [
    RenderCase("not-found", TmuxNotFound(), "Error: tmux is not installed (no `tmux` on PATH)."),
    RenderCase("closed", SessionClosed(), "Error: tmux-bridge session closed."),
    RenderCase(
        "plain-message", PaneNotReady("a program is running"), "Error: a program is running"
    ),
]


@pytest.mark.parametrize("case", RENDER_CASES, ids=[c.test_id for c in RENDER_CASES])
def test_render(case: RenderCase) -> None:
    assert case.error.render() == case.rendered


def _all_subclasses(cls: type[BridgeError]) -> set[type[BridgeError]]:
    found: set[type[BridgeError]] = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


class CodeCase(NamedTuple):
    test_id: str
    error: type[BridgeError]
    code: str
    exit_code: int


# Every error class, its stable machine-readable code and its exit status, written out.
CODE_CASES = [
    CodeCase("base", BridgeError, "bridge_error", 125),
    CodeCase("invalid", InvalidRequest, "invalid_request", 2),
    CodeCase("tmux-failed", TmuxError, "tmux_failed", 125),
    CodeCase("tmux-missing", TmuxNotFound, "tmux_not_found", 125),
    CodeCase("no-bridge", NoBridgeSession, "no_bridge", 125),
    CodeCase("no-pane", NoSuchPane, "no_such_pane", 125),
    CodeCase("ambiguous-pane", AmbiguousPane, "ambiguous_pane", 125),
    CodeCase("label-taken", LabelTaken, "label_taken", 2),
    CodeCase("closed", SessionClosed, "session_closed", 125),
    CodeCase("far-lost", FarShellLost, "far_shell_lost", 125),
    CodeCase("not-ready", PaneNotReady, "pane_not_ready", 125),
    CodeCase("busy", PaneBusy, "pane_busy", 125),
    CodeCase("not-at-prompt", PaneNotAtPrompt, "pane_not_at_prompt", 125),
    CodeCase("half-typed", HalfTypedLine, "half_typed_line", 125),
    CodeCase("runtime-dir", RuntimeDirError, "runtime_dir_unsafe", 125),
    CodeCase("lock-timeout", LockTimeout, "lock_timeout", 125),
    CodeCase("cancelled", Cancelled, "cancelled", 130),
    CodeCase("repl", ReplError, "repl_error", 125),
    CodeCase("repl-not-open", ReplNotOpen, "repl_not_open", 125),
    CodeCase("repl-mismatch", ReplMismatch, "repl_mismatch", 125),
    CodeCase("far-repl", FarReplUnsupported, "far_repl_unsupported", 125),
    CodeCase("piped", PanePiped, "pane_piped", 125),
    CodeCase("file", FileError, "file_error", 125),
    CodeCase("file-not-found", FileNotFound, "file_not_found", 125),
    CodeCase("read-failed", ReadFailed, "read_failed", 125),
    CodeCase("write-failed", WriteFailed, "write_failed", 125),
    CodeCase("too-large", FileTooLarge, "file_too_large", 125),
    CodeCase("checksum", ChecksumMismatch, "checksum_mismatch", 125),
    CodeCase("no-checksum-tool", NoChecksumTool, "no_checksum_tool", 125),
    CodeCase("file-changed", FileChanged, "file_changed", 125),
    CodeCase("edit-no-match", EditNoMatch, "edit_no_match", 125),
    CodeCase("edit-ambiguous", EditAmbiguous, "edit_ambiguous", 125),
    CodeCase("edit-no-line", EditNoLine, "edit_no_line", 125),
    CodeCase("backup-not-found", BackupNotFound, "backup_not_found", 125),
    CodeCase("tmux-timeout", TmuxTimeout, "tmux_timeout", 125),
    CodeCase("session-exists", SessionExists, "session_exists", 125),
    CodeCase("wait-timeout", WaitTimeout, "wait_timeout", 124),
    # tmux-bridge prompt / message: 0 delivered, 1 not delivered (with why), 125 could not try
    CodeCase("no-agent", NoSuchAgent, "no_such_agent", 125),
    CodeCase("self-send", SelfSend, "self_send", 2),
    CodeCase("not-delivered", NotDelivered, "not_delivered", 1),
    CodeCase("agent-busy", AgentBusy, "agent_busy", 1),
    CodeCase("no-input-box", NoInputBox, "no_input_box", 1),
    CodeCase("draft", DraftInInput, "draft_in_input", 1),
    CodeCase("not-taken", PromptNotTaken, "prompt_not_taken", 1),
    CodeCase("agent-changed", AgentChanged, "agent_changed", 1),
    CodeCase("unconfirmed", Unconfirmed, "unconfirmed", 3),
    CodeCase("ambiguous-agent", AmbiguousAgent, "ambiguous_agent", 2),
    CodeCase("invalid-sender", InvalidSender, "invalid_sender", 2),
    CodeCase("inbox", InboxError, "inbox_error", 125),
    CodeCase("inbox-corrupt", InboxCorrupt, "inbox_corrupt", 125),
    CodeCase("no-job", NoSuchJob, "no_such_job", 125),
    CodeCase("no-saved-output", NoSavedOutput, "no_saved_output", 125),
]

_EXAMPLES: dict[type[BridgeError], BridgeError] = {
    TmuxError: TmuxError(("tmux", "-L", "default", "kill-server"), 1, ""),
    TmuxNotFound: TmuxNotFound(),
    TmuxTimeout: TmuxTimeout(("tmux", "-L", "default", "list-panes"), 10.0),
    NoBridgeSession: NoBridgeSession(),
    SessionClosed: SessionClosed(),
    Cancelled: Cancelled(signal.SIGINT),
}


@pytest.mark.parametrize("case", CODE_CASES, ids=[c.test_id for c in CODE_CASES])
def test_error_code_and_exit(case: CodeCase) -> None:
    error = _EXAMPLES.get(case.error) or case.error("a message")
    assert (error.code, error.exit_code) == (case.code, case.exit_code)


def test_cancelled_exits_with_its_signal() -> None:
    assert Cancelled(signal.SIGTERM).exit_code == 143
    assert Cancelled(signal.SIGHUP).exit_code == 129


def test_every_error_class_is_in_the_table() -> None:
    # import every module, so subclasses defined outside errors.py are found too
    for module in pkgutil.walk_packages(tmux_bridge.__path__, "tmux_bridge."):
        importlib.import_module(module.name)
    classes = _all_subclasses(BridgeError) | {BridgeError}
    assert classes == {case.error for case in CODE_CASES}
    codes = [case.code for case in CODE_CASES]
    assert len(codes) == len(set(codes))


# --- the exit-status table of tmux-send --help --------------------------------------


def _help_exit_table() -> list[tuple[str, str]]:
    """The entries of the "Exit status:" table in tmux-send --help: (code, text), with
    continuation lines joined to their entry."""
    tmux_send = Path(sys.executable).parent / "tmux-send"
    result = subprocess.run([str(tmux_send), "--help"], capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.split("\n")
    entries: list[tuple[str, str]] = []
    for line in lines[lines.index("  Exit status:") + 1 :]:
        if not line.strip():
            break
        entry = re.fullmatch(r" {4}(\d+(?:-\d+)?) +(\S.*)", line)
        if entry:
            entries.append((entry[1], entry[2]))
        else:  # a continuation of the entry above
            assert entries, line
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
    assert entries, result.stdout
    return entries


def _help_names(code: int, entries: list[tuple[str, str]]) -> str | None:
    """The clause of the --help table that names ``code`` itself (not within a range
    or as in 128+N), or None."""
    for label, text in entries:
        if label == str(code):
            return f"{label} {re.split(r'[,;]', text)[0]}"
        for clause in re.split(r"[,;]", text):
            if re.search(rf"(?<![\d+-]){code}(?![\d+-])", clause):
                return clause
    return None


@pytest.mark.parametrize(
    ("code", "signal_name"), [(129, "SIGHUP"), (130, "SIGINT"), (143, "SIGTERM")]
)
def test_help_lists_the_exit_status_of_each_signal(code: int, signal_name: str) -> None:
    assert code == 128 + signal.Signals[signal_name]
    clause = _help_names(code, _help_exit_table())
    assert clause is not None and signal_name in clause, clause


def _docstring_table_codes() -> set[int]:
    """The exit statuses exit_status()'s docstring table names outright (not 128 + N)."""
    lines = (exit_status.__doc__ or "").split("\n")
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r" *=+ +=+ *", line)]
    assert len(rules) == 3, lines  # above the heading, under it, under the last row
    rows = "\n".join(line.split("  ")[-1] for line in lines[rules[1] + 1 : rules[2]])
    return {int(n) for n in re.findall(r"(?<![\d+])(\d+)(?!\d| *\+)", rows)}


def test_help_lists_every_exit_code_of_the_errors_module() -> None:
    constants = {
        value
        for name, value in vars(errors).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    }
    class_codes = {case.exit_code for case in CODE_CASES}
    table = _docstring_table_codes()
    assert table >= {124, 125}, table  # the table was read
    entries = _help_exit_table()
    missing = {
        code for code in constants | class_codes | table if _help_names(code, entries) is None
    }
    assert not missing, (missing, entries)
