"""Pure text for far shells (a shell behind ssh, su, sudo, a container or a nested
shell): the probe line and its answer, the typed command line per shell, and the scanner
that cuts stdout, the status and stderr out of the pane's byte stream.

Everything typed is printable ASCII on one line. Whatever the far shell must print
(markers, the command text) is given to ``printf`` with the first underscore of each
marker and every byte outside printable ASCII written as an octal escape, so the far
terminal's echo of the line can never be taken for what the shell prints.

stdout stays the far terminal; the far terminal turns each ``\\n`` into ``\\r\\n``
(``onlcr``), which :class:`FarScanner` undoes exactly (``onlcr`` maps only NL, so a
``\\r\\n`` the command wrote itself arrives as ``\\r\\r\\n`` and comes back as
``\\r\\n``). stderr goes to a far-side file printed after the end marker.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .markers import start_marker
from .shells import ShellKind

# printf format escapes for the marker texts (the echo shows ``\\137__``, never ``___``)
_US = r"\137__"


def printf_text(data: bytes) -> str:
    """``data`` as a ``printf`` format inside single quotes: printable ASCII as is
    (``%`` doubled), ``'``, ``\\`` and every other byte as a 3-digit octal escape."""
    out: list[str] = []
    for byte in data:
        char = chr(byte)
        if char == "%":
            out.append("%%")
        elif 0x20 <= byte < 0x7F and char not in "'\\":
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


# --- the probe -----------------------------------------------------------------------------


class FarFacts(NamedTuple):
    """What the far shell said about itself."""

    shell: ShellKind
    version: str
    user: str
    host: str
    os: str
    cwd: str
    tmp_writable: bool

    def document(self, via: str) -> dict[str, str | bool]:
        return {
            "via": via,
            "shell": self.shell,
            "shell_version": self.version,
            "user": self.user,
            "host": self.host,
            "os": self.os,
            "cwd": self.cwd,
        }


def probe_line(call_id: str) -> str:
    """One line every far shell (bash, zsh, fish >= 3.4, POSIX sh, busybox) answers with
    ``___TMUXSEND_PROBE_<id> bash|zsh|fish|user|host|os|tmp|cwd___``; the leading space
    keeps it out of bash's history (``ignorespace``) and fish's."""
    fields = "|".join(["%s"] * 8)
    return (
        f" printf '{_US}TMUXSEND_PROBE_%s {fields}___\\n' {call_id}"
        ' "$BASH_VERSION" "$ZSH_VERSION" "$FISH_VERSION" "$(id -un 2>/dev/null)"'
        ' "$(uname -n 2>/dev/null)" "$(uname -s 2>/dev/null)"'
        ' "$(test -w /tmp && echo w)" "$PWD"'
    )


def probe_pattern(call_id: str) -> re.Pattern[bytes]:
    return re.compile(rb"___TMUXSEND_PROBE_" + call_id.encode() + rb" ([^\r\n]*?)___\r?\n")


def parse_probe(answer: bytes) -> FarFacts:
    """The facts in a probe's answer (the text between the id and the final ``___``)."""
    parts = answer.decode("utf-8", "replace").split("|", 7)
    parts += [""] * (8 - len(parts))
    bash, zsh, fish, user, host, system, tmp, cwd = parts
    kind: ShellKind = "bash" if bash else "zsh" if zsh else "fish" if fish else "posix"
    return FarFacts(kind, bash or zsh or fish, user, host, system, cwd, tmp == "w")


# --- the command line ----------------------------------------------------------------------


def stderr_path(call_id: str) -> str:
    """The far-side file that holds the command's stderr until it is printed."""
    return f"/tmp/.tmux-send-{call_id}.err"


def _tail(call_id: str, kind: str, status: str, quote: str) -> str:
    """Print the end (or exit) marker with ``status``, then the stderr file and the
    stderr end marker, and remove the file."""
    q = quote
    path = stderr_path(call_id)
    return (
        f"printf {q}\\n{_US}TMUXSEND_{kind}_{call_id} %d___{q} {status}; "
        f"cat {path} 2>/dev/null; rm -f {path}; printf {q}{_US}TMUXSEND_ERR_{call_id}___\\n{q}"
    )


def command_line(kind: ShellKind, call_id: str, command: bytes, separate: bool = True) -> str:
    """The one line typed into a far ``kind`` shell to run ``command`` in it (state
    persists: it is ``eval``'d in the shell itself), stdout on the terminal, stderr to a
    far file unless ``separate`` is false. A command that ends the shell (``exit 3``)
    still prints its status (an EXIT trap, fish's ``fish_exit`` event)."""
    text = printf_text(command)
    start = f"printf '{_US}TMUXSEND_START_{call_id}___\\n'"
    redirect = f" 2>{stderr_path(call_id)}" if separate else ""
    if kind == "fish":
        handler = f"__tmux_send_exit_{call_id}"
        on_exit = _tail(call_id, "EXIT", "$status", "'")
        return (
            f" function {handler} --on-event fish_exit; {on_exit}; end; {start};"
            f" begin; eval (printf '{text}' | string collect); end{redirect};"
            f" {_tail(call_id, 'END', '$status', chr(39))}; functions -e {handler}"
        )
    return (
        f" trap '{_tail(call_id, 'EXIT', '$?', chr(34))}' EXIT; {start};"
        f" {{ eval \"$(printf '{text}')\"; }}{redirect};"
        f" {_tail(call_id, 'END', '$?', chr(39))}; trap - EXIT"
    )


def recovery_line(kind: ShellKind, call_id: str) -> str:
    """The line typed when an interrupt cut the command line short (the shell drops the
    rest of a line whose command Ctrl-C killed): the status it left, stderr, cleanup."""
    if kind == "fish":
        handler = f"__tmux_send_exit_{call_id}"
        return f" {_tail(call_id, 'END', '$status', chr(39))}; functions -e {handler}"
    return f" {_tail(call_id, 'END', '$?', chr(39))}; trap - EXIT"


# --- the stream ----------------------------------------------------------------------------


def undo_onlcr(data: bytes) -> bytes:
    """The bytes the command wrote, from what its terminal sent on (``\\r\\n`` -> ``\\n``)."""
    return data.replace(b"\r\n", b"\n")


class FarScanner:
    """Cuts one far call out of the pane's raw stream: the echo and everything before
    the start marker is dropped, stdout is handed on as it comes (``feed``), then the
    status of the end (or exit) marker and stderr up to its own end marker are kept."""

    def __init__(self, call_id: str) -> None:
        self._start = start_marker(call_id).encode()
        self._end = re.compile(
            rb"\r\n___TMUXSEND_(END|EXIT)_" + re.escape(call_id.encode()) + rb" (\d+)___"
        )
        self._err_end = f"___TMUXSEND_ERR_{call_id}___".encode()
        self._tail = b"\r\n___TMUXSEND_"
        self._buf = b""
        self.started = False
        self.status: int | None = None
        self.shell_ended = False
        self.stderr = b""
        self.done = False

    @property
    def ended(self) -> bool:
        return self.status is not None

    def feed(self, data: bytes) -> bytes:
        """stdout as the command wrote it, as far as it is certain not to be a marker."""
        buf = self._buf + data
        if not self.started:
            at = buf.find(self._start + b"\r\n")
            if at < 0:
                self._buf = buf[-len(self._start) - 2 :]
                return b""
            self.started = True
            buf = buf[at + len(self._start) + 2 :]
        if self.ended:
            self._buf = b""
            self._take_stderr(buf)
            return b""
        match = self._end.search(buf)
        if match:
            self.status = int(match.group(2))
            self.shell_ended = match.group(1) == b"EXIT"
            self._buf = b""
            self._take_stderr(buf[match.end() :])
            return undo_onlcr(buf[: match.start()])
        keep = len(buf) - _overlap(buf, self._tail)  # also a lone "\r" (half a "\r\n")
        self._buf = buf[keep:]
        return undo_onlcr(buf[:keep])

    def _take_stderr(self, data: bytes) -> None:
        if self.done:
            return
        self.stderr += data
        at = self.stderr.find(self._err_end)
        if at >= 0:
            self.stderr = undo_onlcr(self.stderr[:at])
            self.done = True

    def flush(self) -> bytes:
        """What is held back, for a stream that ends without the end marker."""
        held, self._buf = (self._buf if self.started and not self.ended else b""), b""
        return undo_onlcr(held)


def _overlap(data: bytes, tail: bytes) -> int:
    """Length of the longest end of ``data`` that ``tail`` starts with."""
    for size in range(min(len(data), len(tail)), 0, -1):
        if tail.startswith(data[-size:]):
            return size
    return 0
