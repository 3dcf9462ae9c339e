"""The marker grammar: the one definition of every marker a call prints or scans for.

Two kinds of marks:

* the start and end markers, text the person sees in the pane around each call
  (``___TMUXSEND_START_<id>___`` and ``___TMUXSEND_END_<id> <status>___``); REPL mode
  also finds its output between them in the pane's stream;
* the sentinel, an invisible APC string (``ESC _ tmux-send:<id>:<kind>:<status> ESC \\``)
  the runner writes to each relay terminal after the command's last byte.

A far shell's call (behind ssh, su ...) has more marks, all ``___TMUXSEND_<MARK>_<id>``:
the probe's answer (``PROBE``), the helpers' answer (``DEF``, a far REPL's helper too),
the answer of the line that reads a long command's pieces (``PIECES``),
the end marker of a command that ended the far shell (``EXIT``) and the end of its
stderr (``ERR``); a far REPL's helper prints the same START and END markers.

In the clean transcript (the default) the person sees none of these: the runner
prints the start and end markers wrapped in an OSC string (:func:`hidden`,
``ESC ] 777 ; tmux-send ; <marker> BEL``), which tmux swallows (nothing on the screen,
nothing in ``capture-pane``) but passes byte for byte into the ``pipe-pane`` stream, and
through ssh or ``docker exec`` from a far shell. The markers keep their text inside it,
so every pattern below finds them either way. ``--verbose-transcript`` prints them bare.

A call id is 10 hex digits, so no marker can be matched by chance, and the marker text
is never typed (it is printed by code loaded from a file, or, in a far shell or a far
REPL, put together from pieces at run time), so its echo never matches.
"""

from __future__ import annotations

import re

# How every marker starts; and the same as printf(1) must see it, its first underscore
# escaped (\137), so that the echo of a typed line that prints a marker holds none.
MARK = "___TMUXSEND_"
MARK_PRINTF = r"\137__TMUXSEND_"
# The marks of a far shell besides START and END: the probe's answer, the helpers'
# answer, the end marker of a command that ended the far shell, the end of its stderr.
PROBE = "PROBE"
DEF = "DEF"
EXIT = "EXIT"
ERR = "ERR"
PIECES = "PIECES"  # a far shell reads the pieces of a long command, its echo off
FIXED = "FIXED"  # the transcript after an interrupt set right (the end marker came anyway)

_START = MARK + "START_{id}___"
_END = MARK + "END_{id}{status}___"

SENTINEL_DONE = "done"  # the command finished (or was interrupted); the shell lives on
SENTINEL_EXIT = "exit"  # the shell itself is exiting, with this status
SENTINEL_END = b"\x1b\\"


# The OSC string a hidden marker travels in: tmux keeps no trace of it on the screen.
HIDDEN_OPEN = "\x1b]777;tmux-send;"
HIDDEN_CLOSE = "\x07"
HIDDEN_OPEN_PRINTF = r"\033]777;tmux-send;"  # the same as printf(1) must see them
HIDDEN_CLOSE_PRINTF = r"\007"


def hidden(marker: str) -> str:
    """``marker`` wrapped so that the terminal shows nothing of it (see the module)."""
    return HIDDEN_OPEN + marker + HIDDEN_CLOSE


def start_marker(call_id: str) -> str:
    """The line printed before a call's output."""
    return _START.format(id=call_id)


def end_marker(call_id: str, status: str = "") -> str:
    """The end marker with ``status`` after a space (``"%d"``, ``"%s"`` for a format),
    or with no status (a REPL whose status comes from what it printed)."""
    return _END.format(id=call_id, status=f" {status}" if status else "")


def end_prefix(call_id: str) -> bytes:
    """What every end marker of this call starts with, with or without a status."""
    return f"{MARK}END_{call_id}".encode()


def end_pattern(call_id: str) -> re.Pattern[bytes]:
    """The end marker in a raw stream; group 1 is the status when there is one."""
    return re.compile(re.escape(end_prefix(call_id)) + rb"(?: (\d+))?___")


# Any command-mode call's end marker with its status (group 1).
RUNNER_END = re.compile(MARK.encode() + rb"END_[0-9a-f]{10} (\d+)___")


def far_end_pattern(call_id: str) -> re.Pattern[bytes]:
    """A far call's end marker on a line of its own, or hidden (group 1: ``END``, or
    ``EXIT`` when the command ended the far shell; group 2: the status)."""
    before = f"(?:\r\n|{re.escape(HIDDEN_OPEN)})"
    return re.compile(f"{before}{MARK}(END|{EXIT})_{re.escape(call_id)} (\\d+)___".encode())


def err_marker(call_id: str) -> bytes:
    """The mark after a far call's stderr."""
    return f"{MARK}{ERR}_{call_id}___".encode()


def answer_pattern(mark: str, call_id: str) -> re.Pattern[bytes]:
    """A far shell's answer (``mark``: :data:`PROBE`, :data:`DEF`) to the line typed
    with call ``call_id``; group 1 is what it says."""
    head = f"{MARK}{mark}_{call_id}".encode()
    return re.compile(re.escape(head) + rb" ([^\r\n]*?)___\r?\n")


def defined_pattern(call_id: str) -> re.Pattern[bytes]:
    """A far REPL's answer once its helper is defined (it says nothing more)."""
    return re.compile(re.escape(f"{MARK}{DEF}_{call_id}___".encode()) + rb"\r?\n")


def sentinel_format(call_id: str, kind: str) -> str:
    """The sentinel as ``printf(1)`` must see it, with ``%d`` for the status."""
    return rf"\033_tmux-send:{call_id}:{kind}:%d\033\\"


def sentinel_prefix(call_id: str) -> bytes:
    """The bytes every sentinel of this call starts with."""
    return f"\x1b_tmux-send:{call_id}:".encode()


# A far transfer's messages (``--read``/``--write`` through a far shell): an OSC string
# of tmux-send's own number, ``ESC ] 5379 ; <id> ; <kind> ; <text> BEL``. tmux draws
# nothing of an OSC it does not know, and its ``pipe-pane`` passes every byte, so the
# file's bytes (base64) travel through the pane's stream unseen. Kinds: ``R`` the far
# side is ready to receive (text: ``ok`` or why not), ``A`` a piece received, ``D`` data.
TRANSFER_OSC = "5379"
TRANSFER_INTRO = f"\x1b]{TRANSFER_OSC};".encode()
TRANSFER_READY = "R"
TRANSFER_ACK = "A"
TRANSFER_DATA = "D"


def transfer_printf(kind: str) -> str:
    """A transfer message as ``printf(1)`` and ``awk`` must see it: ``%s`` for the id,
    then ``%s`` for the text."""
    return rf"\033]{TRANSFER_OSC};%s;{kind};%s\007"
