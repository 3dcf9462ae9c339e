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


# -- far shells: paths and data in shell code typed into a far shell ----------------
