"""A stand-in AI agent CLI: a small TUI the agent tests install as ``claude`` or
``codex`` on a test PATH (the name picks the look: Claude Code's bordered box with
``> ``, Codex's ``\u203a `` line).

It asks for bracketed paste, draws its conversation (wrapped at the terminal's width, as
the real CLIs wrap it), an input box and a status line
(``esc to interrupt`` while it works), takes pasted and typed text, submits on Enter,
"works" for ``STANDIN_WORK`` seconds and then replies with the prompt in upper case.
With ``STANDIN_IGNORE`` (a probability) and ``STANDIN_SEED`` it ignores some Enters;
with ``STANDIN_LIMBO=1`` it takes a prompt and shows no sign of it (the box empties);
with ``STANDIN_TRUST=1`` it starts on a folder-trust question, as Claude Code does in a
folder it was not told to trust, until Enter answers it.
Every prompt it takes is appended to ``STANDIN_LOG`` as one JSON line, so a test learns
what was submitted from the program itself, not from the code under test.
C-u clears the box; End is accepted and ignored; C-c or C-d ends it. Like the real
CLIs it redraws when its terminal is resized (SIGWINCH).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sys
import termios
import time
import tty

STYLE = os.path.basename(sys.argv[0])
WORK = float(os.environ.get("STANDIN_WORK", "0.3"))
IGNORE = float(os.environ.get("STANDIN_IGNORE", "0"))
RANDOM = random.Random(int(os.environ.get("STANDIN_SEED", "1")))
LOG = os.environ.get("STANDIN_LOG")
BRACKETED = os.environ.get("STANDIN_BRACKETED", "1") == "1"
# Takes a prompt without showing it anywhere: the box empties, nothing else changes.
LIMBO = os.environ.get("STANDIN_LIMBO") == "1"
# Starts on a folder-trust question (the words Claude Code 2.1.331 draws) until Enter.
TRUST = os.environ.get("STANDIN_TRUST") == "1"
TRUST_SCREEN = [
    "Accessing workspace:", "", os.getcwd(), "",
    "Quick safety check: Is this a project you created or one you trust?", "",
    "\u276f No, exit", "  Yes, I trust this folder", "", "Enter to confirm \u00b7 Esc to cancel",
]  # fmt: skip


class Agent:
    def __init__(self) -> None:
        self.conversation: list[str] = [f"{STYLE} stand-in ready"]
        self.input = ""
        self.busy_until = 0.0
        self.pending: str | None = None
        self.count = 0
        self.partial = ""  # a paste whose end has not arrived yet
        self.trusting = TRUST  # the folder-trust question is on the screen

    def draw(self) -> None:
        # the tty's size, as a TUI reads it (not $COLUMNS, which a shell may have set)
        width, height = os.get_terminal_size(sys.stdout.fileno())
        if self.trusting:
            rows = "".join(" " + line[: width - 2] + "\r\n" for line in TRUST_SCREEN)
            sys.stdout.write("\x1b[H\x1b[2J" + rows)
            sys.stdout.flush()
            return
        box = self.box_rows(width)
        # a status row as Codex draws it once set up ("← for agents · ? for shortcuts")
        status = (
            "✻ Working… (esc to interrupt)" if self.busy_until else "  stand-in · ? for shortcuts"
        )
        room = max(height - len(box) - 2, 1)
        # the conversation wrapped at the width, as the real CLIs wrap it
        step = max(width - 1, 1)
        wrapped = [t[i : i + step] for t in self.conversation for i in range(0, len(t) or 1, step)]
        shown = wrapped[-room:]
        out = ["\x1b[H\x1b[2J"]
        out += [line + "\r\n" for line in shown]
        out += ["\r\n" * (room - len(shown))]
        top = len(shown) + (room - len(shown)) + 1
        out += [row + "\r\n" for row in box]
        out.append(status)
        cursor_row, cursor_col = self.cursor(top)
        out.append(f"\x1b[{cursor_row};{cursor_col}H")
        sys.stdout.write("".join(out))
        sys.stdout.flush()

    def lines(self) -> list[str]:
        return self.input.split("\n")

    def box_rows(self, width: int) -> list[str]:
        lines = self.lines()
        if STYLE == "codex":
            return ["\u203a " + lines[0], *("  " + line for line in lines[1:])]
        inner = width - 4
        rows = ["╭" + "─" * (width - 2) + "╮"]
        for i, line in enumerate(lines):
            text = ("> " if i == 0 else "  ") + line
            rows.append("│ " + text[:inner].ljust(inner) + "│")
        rows.append("╰" + "─" * (width - 2) + "╯")
        return rows

    def cursor(self, top: int) -> tuple[int, int]:
        lines = self.lines()
        if STYLE == "codex":
            return top + len(lines) - 1, 3 + len(lines[-1])
        return top + len(lines), 5 + len(lines[-1])

    def enter(self) -> None:
        if self.trusting:  # the question answered
            self.trusting, self.input = False, ""
            return
        if self.busy_until or not self.input.strip():
            return
        if IGNORE and RANDOM.random() < IGNORE:
            return  # swallowed, as real TUIs sometimes do
        text, self.input = self.input, ""
        self.count += 1
        if LIMBO:
            if LOG:
                with open(LOG, "a") as f:
                    f.write(json.dumps({"n": self.count, "text": text}) + "\n")
            return
        lines = text.split("\n")
        self.conversation += [("> " if i == 0 else "  ") + line for i, line in enumerate(lines)]
        if LOG:
            with open(LOG, "a") as f:
                f.write(json.dumps({"n": self.count, "text": text}) + "\n")
        self.pending = text
        self.busy_until = time.monotonic() + WORK

    def tick(self) -> None:
        if self.busy_until and time.monotonic() >= self.busy_until:
            self.busy_until = 0.0
            assert self.pending is not None
            self.conversation += ["● " + line for line in self.pending.upper().split("\n")]
            self.conversation.append("")
            self.pending = None

    def feed(self, data: str) -> bool:
        """Handle input; False to quit."""
        data, self.partial = self.partial + data, ""
        while data:
            if data.startswith("\x1b[200~"):
                end = data.find("\x1b[201~")
                if end < 0:
                    self.partial = data
                    return True
                self.input += data[6:end].replace("\r", "\n")
                data = data[end + 6 :]
            elif data.startswith(("\x1b[F", "\x1bOF")):
                data = data[3:]
            elif data[0] in "\x03\x04":
                return False
            elif data[0] == "\r":
                self.enter()
                data = data[1:]
            elif data[0] == "\x15":
                self.input = ""
                data = data[1:]
            elif data[0] == "\x7f":
                self.input = self.input[:-1]
                data = data[1:]
            else:
                if data[0] >= " " or data[0] == "\n":
                    self.input += data[0]
                data = data[1:]
        return True


def main() -> None:
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    if BRACKETED:
        sys.stdout.write("\x1b[?2004h")
    agent = Agent()
    resized, wake = os.pipe()  # SIGWINCH wakes the loop, which redraws at the new size
    os.set_blocking(wake, False)
    signal.signal(signal.SIGWINCH, lambda *_: None)
    signal.set_wakeup_fd(wake)
    try:
        agent.draw()
        while True:
            wait = max(agent.busy_until - time.monotonic(), 0.0) if agent.busy_until else None
            ready, _, _ = select.select([fd, resized], [], [], wait)
            if resized in ready:
                os.read(resized, 4096)
            if fd in ready:
                data = os.read(fd, 65536).decode("utf-8", "replace")
                if not data or not agent.feed(data):
                    break
            agent.tick()
            agent.draw()
    finally:
        sys.stdout.write("\x1b[?2004l\x1b[H\x1b[2J")
        sys.stdout.flush()
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    main()
