"""Exceptions raised by the core, their stable codes, and the one exit-code table.

The core raises these; the faces (the CLIs, later the servers) turn them into exit
codes, HTTP statuses or tool errors. ``code`` is stable and machine-readable (the
``error_code`` of every JSON document); the message is a sentence for a person or an
agent and never names a command-line flag (an MCP tool has none): the CLI adds its own
hints by code.
"""

from __future__ import annotations

from typing import ClassVar

# Exit codes of tmux-send. Every other status (0-255) is the command's own.
EXIT_USAGE = 2  # bad options or arguments (click's own code)
EXIT_TIMEOUT = 124  # the idle or overall timeout fired (as timeout(1) does)
EXIT_NOT_DELIVERED = 1  # tmux-bridge prompt/message: tried, and the target did not take it
EXIT_UNCONFIRMED = 3  # tmux-bridge prompt: submitted, its taking not seen: do not resend
EXIT_FAILURE = 125  # tmux-send could not run or finish the command
EXIT_SIGHUP = 129  # tmux-send itself got SIGHUP
EXIT_SIGINT = 130  # tmux-send itself got SIGINT (or was cancelled by its caller)
EXIT_SIGTERM = 143  # tmux-send itself got SIGTERM

NO_BRIDGE_MESSAGE = """\
Error: No tmux-bridge session is running.

You have used `tmux-send`, but it currently has nowhere to send to.

The user needs to start the interactive backing terminal using `tmux-bridge`.
Do not try this yourself - instead, ask the user to do it for you.

This is necessary for *interactive* commands - for example, sudo (requiring
a password prompt). If you can avoid interactive tools, then prefer that.
Otherwise, please ask the user now."""


class BridgeError(Exception):
    """Base of every error the core reports; the message is shown as is."""

    code: ClassVar[str] = "bridge_error"
    exit_code: int = EXIT_FAILURE
    # the id of the pane the call was for, once it was found (for the audit log)
    pane: str | None = None
    # what a call that failed midway collected before (a far shell lost mid-command)
    partial_stdout: bytes = b""
    partial_stderr: bytes = b""

    def render(self) -> str:
        """The whole text for stderr."""
        return f"Error: {self}"


class InvalidRequest(BridgeError):
    """The request itself is malformed (a bad REPL name, a key that is no key name,
    control characters in literal text); nothing was done. Exit 2, like bad usage."""

    code = "invalid_request"
    exit_code = EXIT_USAGE


class TmuxError(BridgeError):
    """A tmux command failed; the message names the tmux subcommand and tmux's complaint."""

    code = "tmux_failed"

    def __init__(self, argv: tuple[str, ...], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        detail = stderr.strip() or f"exit status {returncode}"
        super().__init__(f"tmux {_subcommand(argv)} failed: {detail}")


def _subcommand(argv: tuple[str, ...]) -> str:
    """The tmux subcommand in ``tmux -L NAME SUBCOMMAND ...``."""
    words = list(argv[1:])
    while words and words[0].startswith("-"):
        flag = words.pop(0)
        if flag in ("-L", "-S", "-f") and words:
            words.pop(0)
    return words[0] if words else "?"


class TmuxTimeout(TmuxError):
    """A tmux command did not finish within the time its caller allowed (a stopped or
    overloaded tmux server); the tmux client was killed."""

    code = "tmux_timeout"

    def __init__(self, argv: tuple[str, ...], seconds: float) -> None:
        BridgeError.__init__(
            self,
            f"tmux {_subcommand(argv)} did not answer within {seconds:g} s; the tmux server "
            "may be stopped or overloaded.",
        )
        self.argv = argv
        self.returncode = -9
        self.stderr = ""


class TmuxNotFound(BridgeError):
    """No tmux executable on PATH."""

    code = "tmux_not_found"

    def __init__(self) -> None:
        super().__init__("tmux is not installed (no `tmux` on PATH).")


class NoBridgeSession(BridgeError):
    """The bridge session does not exist, or no tmux server runs at all."""

    code = "no_bridge"

    def render(self) -> str:
        return NO_BRIDGE_MESSAGE


class NoSuchPane(BridgeError):
    """The pane a target names does not exist (any more)."""

    code = "no_such_pane"


class NoSuchJob(BridgeError):
    """No job of that id is known in the runtime directory (never started there, or
    removed a day after it ended and was read)."""

    code = "no_such_job"


class AmbiguousPane(NoSuchPane):
    """A pane target names more than one pane (a label and another pane's place)."""

    code = "ambiguous_pane"


class LabelTaken(InvalidRequest):
    """Another pane already has the label."""

    code = "label_taken"


class SessionExists(BridgeError):
    """A session of that name already runs on the tmux server."""

    code = "session_exists"


class SessionClosed(BridgeError):
    """The session or the whole tmux server went away while a command ran."""

    code = "session_closed"

    def __init__(self) -> None:
        super().__init__("tmux-bridge session closed.")


class FarShellLost(BridgeError):
    """The far shell a call ran in (through ssh, su, sudo, a container) went away
    mid-command without saying how it ended: the connection dropped, the far side was
    killed. What the command printed until then has been handed over."""

    code = "far_shell_lost"


class PaneNotReady(BridgeError):
    """Something is in the way of typing into the pane; nothing was typed."""

    code = "pane_not_ready"


class PaneBusy(PaneNotReady):
    """A program, a busy builtin or a full-screen program has the pane."""

    code = "pane_busy"


class PaneNotAtPrompt(PaneNotReady):
    """The pane holds no shell tmux-send can drive at a prompt it can type at: its shell
    exited, it is not a shell, or its line editor is not taking text (vi normal mode)."""

    code = "pane_not_at_prompt"


class HalfTypedLine(PaneNotReady):
    """The person has typed at the prompt and not run it yet."""

    code = "half_typed_line"


class RuntimeDirError(BridgeError):
    """The runtime directory is missing, unsafe or unusable."""

    code = "runtime_dir_unsafe"


class LockTimeout(BridgeError):
    """Another call held the pane for longer than the overall time allowed us to wait."""

    code = "lock_timeout"


class WaitTimeout(BridgeError):
    """What was waited for on the screen did not show up in time. Exit 124, like the
    other timeouts."""

    code = "wait_timeout"
    exit_code = EXIT_TIMEOUT


class Cancelled(BridgeError):
    """The caller cancelled the call before anything was typed. The exit status is that
    of the signal the cancellation stands for (130 for SIGINT)."""

    code = "cancelled"

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__("the call was cancelled before anything was typed.")


class ReplError(BridgeError):
    """A REPL request does not fit the state of the pane. ``repl`` names the REPL that
    is open (or was), ``wanted`` the one the request named."""

    code = "repl_error"

    def __init__(self, message: str, repl: str | None = None, wanted: str | None = None) -> None:
        self.repl = repl
        self.wanted = wanted
        super().__init__(message)


class ReplNotOpen(ReplError):
    """No REPL tmux-send started is open in the pane (or it is no longer running)."""

    code = "repl_not_open"


class ReplMismatch(ReplError):
    """Another REPL than the one named is open, or one is open where a command was asked."""

    code = "repl_mismatch"


class FarReplUnsupported(ReplError):
    """The REPL named cannot be started in a far shell (behind ssh, su, sudo ...): only
    presets whose code can be typed through the pane are (python, node)."""

    code = "far_repl_unsupported"


class PanePiped(ReplError):
    """The pane already has a ``pipe-pane`` open, which REPL mode needs for itself."""

    code = "pane_piped"


class FileError(BridgeError):
    """A file could not be written, read or edited through the pane's shell; the file is
    as it was (a write replaces it whole or not at all)."""

    code = "file_error"


class FileNotFound(FileError):
    """The file to read or edit, or the directory to write in, does not exist (seen
    from the pane's shell, relative to its directory)."""

    code = "file_not_found"


class ReadFailed(FileError):
    """The pane's shell could not read the file: not a regular file, no permission."""

    code = "read_failed"


class WriteFailed(FileError):
    """The pane's shell could not write the file: a read-only directory or file, no space,
    not a regular file. Nothing was left behind: no temporary file, no backup."""

    code = "write_failed"


class FileTooLarge(FileError):
    """The file, or the content to write, is over the size tmux-send moves through a pane."""

    code = "file_too_large"


class ChecksumMismatch(FileError):
    """The bytes that arrived do not have the SHA-256 of the bytes sent: they were damaged
    on the way, or the file changed while it was read."""

    code = "checksum_mismatch"


class NoChecksumTool(FileError):
    """The pane's side has none of sha256sum, shasum or openssl to check a SHA-256."""

    code = "no_checksum_tool"


class FileChanged(FileError):
    """The file changed between reading it and writing the edit; the edit was not made."""

    code = "file_changed"


class EditNoMatch(FileError):
    """The text to replace does not occur in the file; the file was not changed."""

    code = "edit_no_match"


class EditAmbiguous(FileError):
    """The text to replace occurs more than once in the file; the file was not changed."""

    code = "edit_ambiguous"


class EditNoLine(FileError):
    """A line edit names a line the file does not have; the file was not changed."""

    code = "edit_no_line"


class BackupNotFound(FileError):
    """No backup of that file (or of that id) is kept on the pane's host; nothing was
    restored."""

    code = "backup_not_found"


class NoSuchAgent(NoSuchPane):
    """No agent of that name (or pane) runs on the tmux server; nothing was tried."""

    code = "no_such_agent"


class SelfSend(InvalidRequest):
    """A message from an agent to itself; nothing was stored or sent."""

    code = "self_send"


class InvalidSender(InvalidRequest):
    """A sender's name that is no pane label (1 to 40 of A-Z a-z 0-9 _ . -): it goes
    into the header of the message, which it must not be able to end or forge. Nothing
    was stored or sent."""

    code = "invalid_sender"


class InboxError(BridgeError):
    """The inbox (``inbox.sqlite3`` in the runtime directory) could not be used: it is
    locked too long, not readable, or not a file. The message says which and what to do."""

    code = "inbox_error"


class InboxCorrupt(InboxError):
    """The inbox was not a readable SQLite database (garbage, truncated, malformed). It
    was moved aside (kept for the person: ``moved_to``) and the next use starts a new
    one; the messages in it were not delivered."""

    code = "inbox_corrupt"
    moved_to: str = ""


class NotDelivered(BridgeError):
    """A prompt or message was tried and the target did not take it; ``receipt`` (a
    :class:`~tmux_bridge.agents.delivery.PromptReceipt`) says how far it got. Exit 1."""

    code = "not_delivered"
    exit_code = EXIT_NOT_DELIVERED
    receipt: object = None


class AgentBusy(NotDelivered):
    """The agent was still working when the time to wait for it ran out; nothing was
    pasted."""

    code = "agent_busy"


class NoInputBox(NotDelivered):
    """The agent shows no input box to paste into (a question or a menu is open);
    nothing was pasted."""

    code = "no_input_box"


class DraftInInput(NotDelivered):
    """The agent's input box holds text that is not ours (the person's draft); nothing
    was pasted."""

    code = "draft_in_input"


class PromptNotTaken(NotDelivered):
    """The prompt was pasted but the agent did not take it: Enter was swallowed every
    time, or the text never showed in the box."""

    code = "prompt_not_taken"


class AgentChanged(NotDelivered):
    """The program in front of the agent's pane is no longer the one the text was for
    (it exited, exec'd another program, or a shell or a way to one took its place);
    nothing more was pasted or pressed."""

    code = "agent_changed"


class Unconfirmed(NotDelivered):
    """The prompt was pasted and submitted, and the screen changed, but not in a way
    that shows for sure it was taken: it may well have been. Exit 3: do not send it
    again; look at the agent first."""

    code = "unconfirmed"
    exit_code = EXIT_UNCONFIRMED


class AmbiguousAgent(BridgeError):
    """A name names several agents (a runtime that runs more than once, a window name
    shared); the message lists them. Nothing was tried. Exit 2."""

    code = "ambiguous_agent"
    exit_code = EXIT_USAGE


def exit_status(status: int | None, timed_out: str | None, cancelled: int | None) -> int:
    """tmux-send's exit status for a command that was typed into the pane.

    ========================================  =============================
    what happened                             exit status
    ========================================  =============================
    cancelled (SIGINT / SIGTERM / SIGHUP)      130 / 143 / 129 (128 + N)
    the idle or overall timeout fired         124
    the command finished                      its status (128 + N if killed by signal N)
    the command ended the shell               the status it ended with
    status unknown                            125
    ========================================  =============================
    """
    if cancelled is not None:
        return 128 + cancelled
    if timed_out is not None:
        return EXIT_TIMEOUT
    if status is None:
        return EXIT_FAILURE
    return status


class NoSavedOutput(BridgeError):
    """A saved stream asked for is not there: nothing was cut, or it was pruned."""

    code = "no_saved_output"
