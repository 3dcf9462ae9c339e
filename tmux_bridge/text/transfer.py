"""Pure text of far transfers: the far-side wrapper that moves a file's bytes through the
pane's stream as base64 (unseen, in OSC strings), the pieces typed into it, and the reader
that takes them out of the stream.

A far shell is reached only through the pane: what tmux-send sends is typed (pasted) into
it, what it sends back is printed on its terminal. :data:`WRAPPER` runs tmux-send's file
script (``calls/files.py``) there with its stdin and stdout carried this way:

* **to the far side** (a write): the wrapper turns the terminal's echo and line editing
  off (``stty -echo -icanon``: no line length limit, nothing drawn), says it is ready,
  then reads pieces of base64, each after a line of its own (11 digits of length, then
  ``P`` when it should print a progress line, else ``-``; length 0 ends; read a byte
  at a time by ``dd``, so that nothing past it is taken) with ``head -c``, and decodes
  them with ``base64 -d`` (or ``base64 -D``, ``openssl base64 -d``) into a file in a
  private directory, saying after each that it has it. tmux-send pastes the next piece
  only then: the terminal never holds more than one, and no ``head`` can read past its
  piece. The terminal's settings come back before the script runs.
* **back** (every operation's header, a read's bytes): the script's stdout is encoded by
  ``base64`` and ``awk`` prints it in OSC strings (:data:`~tmux_bridge.text.markers.TRANSFER_OSC`)
  that tmux does not draw, with a line for the person about every 2 s.

Status 86: the far side lacks what this needs (base64, ``head -c``, ``dd``, ``stty``,
``awk``, a temporary directory); nothing was received, and the caller falls back to the slow way.
"""

from __future__ import annotations

from .markers import (
    TRANSFER_ACK,
    TRANSFER_DATA,
    TRANSFER_INTRO,
    TRANSFER_READY,
    transfer_printf,
)
from .seams import sh_private_dir

NO_TRANSFER = 86  # the wrapper's status when the far side cannot do it this way
PIECE = 1 << 20  # base64 bytes pasted at a time (a multiple of 4: each decodes alone)
_OSC_CHUNK = 8192  # base64 bytes at most in one OSC string sent back
_HELD_MAX = 4 * _OSC_CHUNK  # an OSC string never ended this long after it began: not ours

# How the script's stdout is sent back: ``awk`` puts base64 lines (76 wide or one long
# line, as the far ``base64`` writes them) into OSC strings of about _OSC_CHUNK bytes,
# and prints how much went every 2 s or so (``srand()`` returns the previous seed: the
# time of day in seconds, in POSIX awk, mawk, gawk and busybox).
_AWK = r"""
function out(s) { printf "{data}", id, s }
function tick() {
    if (++lines % 512) return
    now = srand()
    if (now - last >= 2) { last = now; printf "tmux-send: %d MiB sent\n", c * 3 / 4 / 1048576 }
}
BEGIN { srand(); last = srand() }
{
    c += length($0)
    if (length($0) > {chunk}) {
        if (b != "") out(b)
        b = ""
        for (i = 1; i <= length($0); i += {chunk}) out(substr($0, i, {chunk}))
    } else {
        b = b $0
        if (length(b) >= {chunk}) { out(b); b = "" }
    }
    tick()
}
END { if (b != "") out(b) }
""".replace("{data}", transfer_printf(TRANSFER_DATA)).replace("{chunk}", str(_OSC_CHUNK))

WRAPPER = r"""# tmux-send's far transfer, run by /bin/sh: ID MODE TOTAL, then the script's
# arguments.
# MODE: send (the script's stdin comes from the terminal: TOTAL base64 bytes) or none.
id=$1 mode=$2 total=$3 t= s= r=
shift 3
nope() { [ "$mode" = none ] || printf '{ready}' "$id" "$1"; exit {no}; }
trap '[ -z "$s" ] || stty "$s"; [ -z "$t" ] || rm -rf -- "$t"' EXIT
# interrupted while receiving: the rest of the piece on its way is read and dropped
# (until 0.2 s of silence), not left for the far shell to take as typed text
drain() { [ -z "$r" ] || { stty -icanon min 0 time 2; cat >/dev/null; } 2>/dev/null; }
trap 'exit 129' HUP; trap 'drain; exit 130' INT; trap 'drain; exit 143' TERM
if [ "$(printf YQ== | base64 -d 2>/dev/null)" = a ]; then dec='base64 -d' enc=base64
elif [ "$(printf YQ== | base64 -D 2>/dev/null)" = a ]; then dec='base64 -D' enc=base64
elif [ "$(printf YQ== | openssl base64 -d -A 2>/dev/null)" = a ]; then
    dec='openssl base64 -d -A' enc='openssl base64 -A'
else nope 'no base64 here'; fi
[ "$(printf abc | head -c 2 2>/dev/null)" = ab ] || nope 'no head -c here'
[ "$(printf abc | dd bs=1 count=2 2>/dev/null)" = ab ] || nope 'no dd here'
[ "$(echo a | awk '{ print $1 }' 2>/dev/null)" = a ] || nope 'no awk here'
encode() { $enc | awk -v id="$id" '{awk}'; }
receive() {  # pieces from the terminal into $t/in until one of length 0
    got=0
    while :; do
        h=$(dd bs=1 count=13 2>/dev/null) k=${h%?}
        case $k in "" | *[!0-9]*) return 1 ;; esac
        k=$(( 1$k - 100000000000 ))
        [ "$k" -gt 0 ] || return 0
        head -c "$k" | $dec >>"$t/in" 2>/dev/null
        got=$(( got + k ))
        [ "${h#"${h%?}"}" != P ] || printf 'tmux-send: %s%% received\n' $(( got * 100 / total ))
        printf '{ack}' "$id" "$got"
    done
}
if [ "$mode" = send ]; then
    t=$({private_dir} 2>/dev/null) || { t=; nope 'no temporary directory'; }
    : >"$t/in" || nope 'cannot write in the temporary directory'
    s=$(stty -g 2>/dev/null) || { s=; nope 'no stty here'; }
    stty -echo -icanon min 1 time 0 || nope 'stty cannot change the terminal'
    printf '{ready}' "$id" ok
    r=1
    receive || { stty "$s"; printf 'tmux-send: the pieces came out of step\n' >&2; exit 80; }
    r=
    stty "$s"
    in=$t/in
else
    in=/dev/null
fi
{ st=$( { { (
{script}
) <"$in"; echo "$?" >&3; } | encode >&4; } 3>&1 ); } 4>&1
exit "${st:-80}"
"""


def wrapper(script: str) -> str:
    """:data:`WRAPPER` around ``script`` (POSIX sh that reads stdin, writes stdout)."""
    assert "'" not in _AWK  # it goes inside single quotes
    parts = {
        "{ready}": transfer_printf(TRANSFER_READY),
        "{ack}": transfer_printf(TRANSFER_ACK),
        "{no}": str(NO_TRANSFER),
        "{private_dir}": sh_private_dir(),
        "{awk}": _AWK,
    }
    text = WRAPPER
    for key, value in parts.items():
        text = text.replace(key, value)
    return text.replace("{script}", script)


def piece_head(size: int, progress: bool) -> bytes:
    """The head pasted before a piece of ``size`` base64 bytes (0: the end)."""
    return b"%011d%s\n" % (size, b"P" if progress else b"-")


class TransferReader:
    """Takes a transfer's OSC strings (of call ``transfer_id``) out of the pane's raw
    stream: :meth:`feed` gives back everything else; the data is kept in :attr:`data`,
    the other messages in :attr:`messages` (kind, text) until taken."""

    def __init__(self, transfer_id: str) -> None:
        self.own = transfer_id.encode() + b";"
        self.held = b""
        self.data: list[bytes] = []
        self.messages: list[tuple[str, str]] = []

    def feed(self, chunk: bytes) -> bytes:
        """The stream without our OSC strings (an unfinished one is held back)."""
        buf = self.held + chunk if self.held else chunk
        self.held = b""
        out: list[bytes] = []
        pos = 0
        while (at := buf.find(TRANSFER_INTRO, pos)) >= 0:
            out.append(buf[pos:at])
            end = buf.find(b"\x07", at)
            if end < 0:
                if len(buf) - at > _HELD_MAX:  # not one of ours: let it through
                    out.append(buf[at:])
                    return b"".join(out)
                self.held = buf[at:]
                return b"".join(out)
            self._take(buf[at + len(TRANSFER_INTRO) : end])
            pos = end + 1
        tail = _partial_intro(buf, pos)
        out.append(buf[pos : len(buf) - tail])
        self.held = buf[len(buf) - tail :] if tail else b""
        return b"".join(out)

    def _take(self, payload: bytes) -> None:
        if not payload.startswith(self.own):
            return
        kind, _, text = payload[len(self.own) :].partition(b";")
        if kind == TRANSFER_DATA.encode():
            self.data.append(text)
        else:
            self.messages.append((kind.decode("ascii", "replace"), text.decode("utf-8", "replace")))

    def take_messages(self) -> list[tuple[str, str]]:
        messages, self.messages = self.messages, []
        return messages

    def decoded(self) -> bytes:
        """The bytes the far side sent, decoded (``binascii.Error`` when damaged)."""
        import binascii

        return binascii.a2b_base64(b"".join(self.data), strict_mode=True)


def _partial_intro(buf: bytes, pos: int) -> int:
    """How many bytes at the end of ``buf`` (from ``pos``) may begin an OSC intro."""
    for size in range(min(len(TRANSFER_INTRO) - 1, len(buf) - pos), 0, -1):
        if TRANSFER_INTRO.startswith(buf[-size:]):
            return size
    return 0
