"""Exceptions raised by the core, and the one table that maps outcomes to exit codes.

The core raises these; only the CLIs turn them into exit codes and messages on stderr.
"""

from __future__ import annotations

# Exit codes of tmux-send. Every other status (0-255) is the command's own.
EXIT_USAGE = 2  # bad options or arguments (click's own code)
EXIT_TIMEOUT = 124  # the idle or overall timeout fired (as timeout(1) does)
EXIT_FAILURE = 125  # tmux-send could not run or finish the command
EXIT_SIGINT = 130  # tmux-send itself got SIGINT (or the command died of it)
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
    """Base of every error tmux-send and tmux-bridge report; the message is shown as is."""

    exit_code = EXIT_FAILURE

    def render(self) -> str:
        """The whole text for stderr."""
        return f"Error: {self}"


class TmuxError(BridgeError):
    """A tmux command failed; the message names the tmux subcommand and tmux's complaint."""

    def __init__(self, argv: tuple[str, ...], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        subcommand = _subcommand(argv)
        detail = stderr.strip() or f"exit status {returncode}"
        super().__init__(f"tmux {subcommand} failed: {detail}")


def _subcommand(argv: tuple[str, ...]) -> str:
    """The tmux subcommand in ``tmux -L NAME SUBCOMMAND ...``."""
    words = list(argv[1:])
    while words and words[0].startswith("-"):
        flag = words.pop(0)
        if flag in ("-L", "-S", "-f") and words:
            words.pop(0)
    return words[0] if words else "?"


class TmuxNotFound(BridgeError):
    """No tmux executable on PATH."""

    def __init__(self) -> None:
        super().__init__("tmux is not installed (no `tmux` on PATH).")


class NoBridgeSession(BridgeError):
    """The bridge session does not exist, or no tmux server runs at all."""

    def render(self) -> str:
        return NO_BRIDGE_MESSAGE


class SessionClosed(BridgeError):
    """The bridge session or the whole tmux server went away while a command ran."""

    def __init__(self) -> None:
        super().__init__("tmux-bridge session closed.")


class PaneNotReady(BridgeError):
    """Something is in the way of typing into the bridge pane; nothing was typed."""


class RuntimeDirError(BridgeError):
    """The runtime directory is missing, unsafe or unusable."""


class LockTimeout(BridgeError):
    """Another tmux-send held the bridge for longer than --max-time allowed us to wait."""


class ReplError(BridgeError):
    """A REPL-mode request does not fit the state of the pane (wrong REPL, none open, ...)."""


def exit_status(status: int | None, timed_out: str | None, own_signal: int | None) -> int:
    """tmux-send's exit status for a command that was typed into the pane.

    ========================================  =============================
    what happened                             exit status
    ========================================  =============================
    tmux-send got SIGINT / SIGTERM / SIGHUP    130 / 143 / 129 (128 + N)
    the idle or overall timeout fired         124
    the command finished                      its status (128 + N if killed by signal N)
    the command ended the shell               the status it ended with
    status unknown                            125
    ========================================  =============================
    """
    if own_signal is not None:
        return 128 + own_signal
    if timed_out is not None:
        return EXIT_TIMEOUT
    if status is None:
        return EXIT_FAILURE
    return status
