"""The seams: every place where text from one layer changes meaning in the next.

Text an agent, a message, a file name or a web page controls reaches tmux formats, the
person's terminal, a program's input box and far shells. Each such crossing has exactly
one function here, and the code that crosses calls it: nowhere else builds that text by
hand (``tests/test_seams.py`` feeds each one every byte and hostile payloads, and checks
the source for bypasses).

Pure text: this module imports nothing of ours and does no I/O.
"""

from __future__ import annotations

# -- tmux formats: an argument tmux expands (#{...}, #(...), #[...]) -------------------


# -- the person's terminal: text printed to it --------------------------------------


# -- a program's input box: text pasted into a TUI ------------------------------------
#
# Prompts, messages and uploaded text are pasted (``paste-buffer -p``) into whatever
# program an agent runs. Inside a bracketed paste every key is text, until the bytes
# ESC [ 2 0 1 ~ end it: after them, text would be keys again (C-u wiping the header, CR
# submitting, ``!`` opening Claude Code's shell). So no control character passes:
#
# * TAB and LF pass; CR LF and a lone CR become LF (tmux turns every LF into CR when it
#   pastes, inside the brackets: a new line, not Enter).
# * every other C0 control (0x00-0x1f) and DEL (0x7f) becomes its Unicode control
#   picture (ESC: U+241B, C-u: U+2415, DEL: U+2421): visible, and no longer a key;
# * a C1 control (U+0080-U+009F; U+009B is CSI to a terminal that reads 8-bit controls)
#   becomes U+241B and its 7-bit equivalent (U+009B: ``␛[``), as a terminal reads it;
# * a lone surrogate (from undecodable bytes) becomes U+FFFD.
#
# Everything else passes unchanged, so printable text is pasted as it is.

_PASTE_TABLE: dict[int, int | str] = {}  # built on first use: nothing at import time
# The characters a sender's name may use: a pane label's (1 to 40 of them).
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
NAME_MAX = 40


def pasted_text(text: str) -> str:
    """``text`` as it may be pasted into a program's input box: no control character
    but TAB and LF (the rules above). Idempotent; printable text comes back as it is."""
    if not _PASTE_TABLE:
        _PASTE_TABLE.update({code: 0x2400 + code for code in range(0x20) if code not in (9, 10)})
        _PASTE_TABLE[0x7F] = 0x2421
        _PASTE_TABLE.update({code: "\u241b" + chr(code - 0x40) for code in range(0x80, 0xA0)})
        _PASTE_TABLE.update(dict.fromkeys(range(0xD800, 0xE000), 0xFFFD))
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_PASTE_TABLE)


def is_name(name: str) -> bool:
    """Whether ``name`` is a pane label or a sender's name: 1 to 40 of A-Z a-z 0-9 _ . -"""
    return 0 < len(name) <= NAME_MAX and NAME_CHARS.issuperset(name)


def message_prompt(message_id: int, sender: str, body: str) -> str:
    """The prompt a message becomes: one header line that says it is from the agent
    ``sender``, not from the person, and how many lines of text follow it, then the
    body, both through :func:`pasted_text`. Nothing in the body can end the paste, so the
    header heads all of it; a sender that is no :func:`is_name` is a ``ValueError``
    (its ``]`` or newline would end the header early)."""
    if not is_name(sender):
        raise ValueError(f"not a sender's name: {sender!r}")
    text = pasted_text(body).strip("\n")
    count = text.count("\n") + 1
    lines = "the line" if count == 1 else f"the {count} lines"
    return (
        f"[tmux-bridge message #{int(message_id)} from agent {sender}, not from the person; "
        f"its text is {lines} below; to answer: tmux-bridge message --to {sender} TEXT]\n{text}"
    )


# -- far shells: paths and data in shell code typed into a far shell ----------------
