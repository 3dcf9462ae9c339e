"""Prompt delivery into an agent's input box, with a receipt that comes from the target.

The sequence, under the agent pane's call lock (an flock, so senders in any process take
turns and never interleave): leave copy mode; wait until the agent is idle; look at the
input box and refuse a draft that is not ours (or clear it when asked); paste the text
through a tmux paste buffer (``paste-buffer -p``: tmux adds the bracketed-paste markers
only when the program asked for bracketed paste); wait until the box shows it (never
pasted again: an agent may show a paste seconds later, and both would be submitted);
press Enter; then confirm from what only a submission causes: the agent works, it queued
the prompt while starting, or the box no longer holds the text and the conversation
above it grew by it. The box is the one nearest the cursor (Codex draws submitted
prompts with its box's glyph). Enter is pressed again, with growing waits, only while
nothing at all reacted: never into a working agent. Only then is the prompt
``delivered``; a screen that changed without such a sign is :class:`Unconfirmed` (exit
3: it may well have been taken; never resent); every other end is a
:class:`NotDelivered` that says why. The last prompt delivered is remembered: an agent
interrupted puts it back in its box, and it is ours to clear.

The text goes through :func:`~tmux_bridge.text.seams.pasted_text` first (no control
character but TAB and LF: nothing in it can end the paste and become keys), and before
the paste and before each Enter the program in front must still be the agent's
(:func:`~tmux_bridge.agents.detect.changed`; else :class:`AgentChanged`).

Times are in seconds; each look at the pane is one tmux invocation (about 3 ms).
"""

from __future__ import annotations

import re
import select
import signal
import time
import uuid
from collections.abc import Callable

from ..cancel import Cancel
from ..errors import (
    AgentBusy,
    AgentChanged,
    Cancelled,
    DraftInInput,
    NoInputBox,
    NoSuchAgent,
    NotDelivered,
    PromptNotTaken,
    Unconfirmed,
)
from ..infra.runtime import atomic_write, remove_quietly
from ..infra.tmux import Tmux, paste_commands
from ..pane.info import PaneInfo, find_pane
from ..pane.records import PaneDir
from ..text.seams import pasted_text
from ..tuples import NamedTuple
from .detect import (
    GENERIC,
    Agent,
    Runtime,
    agent_state,
    changed,
    find_agent,
    input_row,
    read_state,
)

POLL = 0.02
# How long each Enter is given to be taken before it is pressed again.
ENTER_WAITS = (0.25, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5)
PASTE_WAIT = 15.0  # for the pasted text to show in the box (Codex: once it is set up)
CLEAR_TRIES = 4  # presses in a row that did not shorten the box
MAX_CLEAR_PRESSES = 400  # two a line of a box of 200 lines
STRANDED_FILE = "stranded"  # what we pasted and was not taken (ours, may be cleared)
# The last prompt we delivered: an agent interrupted (Escape) puts it back in its box
# (Claude Code does), and it is still ours, cleared before the next delivery.
DELIVERED_FILE = "delivered"
_NOT_TEXT = re.compile(r"[\s\u2500-\u259f]+")  # whitespace and box drawing


class PromptReceipt(NamedTuple):
    """A prompt delivered (``delivered`` true) or not, as the target showed it.

    ``confirmed_by`` is ``"conversation"`` (the box emptied and the text shows above it)
    or ``"working"`` (the agent started working); ``enters`` counts the Enter presses
    (more than 1: some were swallowed); ``reason`` says why it was not delivered."""

    agent: str
    pane: str
    target: str
    delivered: bool
    confirmed_by: str | None
    enters: int
    replaced_draft: bool
    seconds: float
    reason: str | None = None

    def document(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "pane": self.pane,
            "target": self.target,
            "delivered": self.delivered,
            "confirmed_by": self.confirmed_by,
            "enters": self.enters,
            "replaced_draft": self.replaced_draft,
            "seconds": round(self.seconds, 3),
            "reason": self.reason,
        }


class Look(NamedTuple):
    """One look at the agent's pane: tmux's view, the rows, the input box's text
    (``None``: no box found) and the row it starts on."""

    pane: PaneInfo
    screen: list[str]
    box: str | None
    row: int | None


def squeeze(text: str) -> str:
    """``text`` without whitespace and box drawing, for comparing what a TUI wraps."""
    return _NOT_TEXT.sub("", text)


def signature(text: str, length: int = 24) -> str:
    """What identifies ``text`` on a screen: the end of its last non-blank line."""
    lines = [line for line in text.splitlines() if line.strip()]
    return squeeze(lines[-1] if lines else text)[-length:]


def look(tmux: Tmux, runtime: Runtime, pane_id: str) -> Look:
    """The pane and its input box now. The box's text is what follows the prompt glyph
    up to the cursor's row; on the cursor's row right of the cursor only when something
    is left of it (so a placeholder drawn after an empty prompt is no draft)."""
    view = find_pane(tmux, "", pane_id)
    screen = view.screen or []
    pane = view.pane
    row = input_row(runtime, screen, pane.cursor_y)
    if row is None:
        return Look(pane, screen, None, None)
    lines = [screen[r] for r in range(row, min(pane.cursor_y, len(screen) - 1) + 1)]
    start = re.match(runtime.prompt, lines[0])
    skip = start.end() if start else 0
    cursor_rel = pane.cursor_x - (skip if len(lines) == 1 else 0)
    lines[0] = lines[0][skip:]
    left = "\n".join([*lines[:-1], lines[-1][: max(cursor_rel, 0)]])
    text = left if not squeeze(left) else "\n".join(lines)
    return Look(pane, screen, "\n".join(_unbox(line) for line in text.split("\n")).strip(), row)


def _unbox(line: str) -> str:
    return line.strip().strip("│┃|").strip()


def deliver(
    tmux: Tmux,
    runtime_dir: str,
    agent_name: str,
    text: str,
    replace_draft: bool = False,
    timeout: float = 30.0,
    cancel: Cancel | None = None,
) -> PromptReceipt:
    """Deliver ``text`` as a prompt to the agent named ``agent_name`` (a name, pane id
    or target) and return the receipt. Waits up to ``timeout`` for the pane's lock and
    for the agent to be idle. Raises :class:`NoSuchAgent` (nothing tried),
    :class:`NotDelivered` subclasses with the receipt (``AgentBusy``, ``NoInputBox``,
    ``DraftInInput``, ``PromptNotTaken``), :class:`Cancelled`, tmux errors."""
    started = time.monotonic()
    agent = require_agent(tmux, agent_name)
    records = PaneDir(runtime_dir, tmux, agent.pane)
    with records.locked(started + timeout, cancel, lambda: None):
        return deliver_locked(tmux, agent, records, text, replace_draft, started + timeout, cancel)


def require_agent(tmux: Tmux, name: str) -> Agent:
    """The agent ``name`` names; :class:`NoSuchAgent` when none does."""
    agent = find_agent(tmux, name)
    if agent is None:
        raise NoSuchAgent(
            f"no agent called {name!r} runs on this tmux server; "
            "list them with `tmux-bridge agents`."
        )
    return agent


def deliver_locked(
    tmux: Tmux,
    agent: Agent,
    records: PaneDir,
    text: str,
    replace_draft: bool,
    deadline: float,
    cancel: Cancel | None,
) -> PromptReceipt:
    """:func:`deliver` for a caller that holds the agent pane's lock (``records``)."""
    attempt = _Attempt(tmux, agent, text, records, time.monotonic())
    return attempt.run(replace_draft, deadline, cancel)


class _Attempt:
    """One delivery, under the lock."""

    def __init__(
        self, tmux: Tmux, agent: Agent, text: str, records: PaneDir, started: float
    ) -> None:
        self.tmux = tmux
        self.agent = agent
        self.runtime = agent.kind
        self.text = pasted_text(text).strip("\n")
        self.records = records
        self.started = started
        self.enters = 0
        self.replaced = False

    def receipt(self, confirmed_by: str | None, reason: str | None = None) -> PromptReceipt:
        return PromptReceipt(
            self.agent.name,
            self.agent.pane,
            self.agent.target,
            confirmed_by is not None,
            confirmed_by,
            self.enters,
            self.replaced,
            time.monotonic() - self.started,
            reason,
        )

    def fail(self, error: type[NotDelivered], reason: str) -> NotDelivered:
        exc = error(f"not delivered to {self.agent.name}: {reason}")
        exc.receipt = self.receipt(None, reason)
        exc.pane = self.agent.pane
        return exc

    def run(self, replace_draft: bool, deadline: float, cancel: Cancel | None) -> PromptReceipt:
        now = self.wait_idle(deadline, cancel)
        if now.box:
            self.clear_draft(now, replace_draft)
        self.check_front(now.pane)
        pasted = self.alone(self.paste_shown(cancel), cancel)
        confirmed = self.submit(pasted, cancel)
        atomic_write(self.records.file(DELIVERED_FILE), squeeze(self.text).encode())
        remove_quietly(self.records.file(STRANDED_FILE))
        return self.receipt(confirmed)

    def look(self) -> Look:
        return look(self.tmux, self.runtime, self.agent.pane)

    def check_front(self, pane: PaneInfo) -> None:
        """Raise :class:`AgentChanged` unless the agent's own program is still in front."""
        why = changed(self.agent, pane)
        if why is not None:
            raise self.fail(AgentChanged, why + " Nothing more was pasted or pressed.")

    def wait_idle(self, deadline: float, cancel: Cancel | None) -> Look:
        """Leave copy mode, then wait until the agent is idle with its input box shown."""
        while True:
            now = self.look()
            if now.pane.in_mode:
                self.tmux.run("send-keys", "-t", self.agent.pane, "-X", "cancel", check=False)
                continue
            state, question = read_state(self.runtime, now.screen, now.pane)
            if state == "idle" and now.row is not None:
                return now
            if time.monotonic() >= deadline:
                raise self._not_ready(state, question)
            sleep_or_cancel(0.05, cancel)

    def _not_ready(self, state: str, question: str | None) -> NotDelivered:
        if state == "working":
            return self.fail(AgentBusy, "the agent was still working when time ran out.")
        if state == "needs_person":
            return self.fail(
                NoInputBox, f"the agent shows {question}: the person must answer it first."
            )
        if state == "starting":
            return self.fail(NoInputBox, "the agent was still starting when time ran out.")
        return self.fail(
            NoInputBox, "the agent shows no input box (a question or a menu may be open)."
        )

    def clear_draft(self, now: Look, replace_draft: bool) -> None:
        """Refuse a draft that is not ours, else clear the box with the runtime's keys."""
        ours = {self._ours(STRANDED_FILE), self._ours(DELIVERED_FILE)} - {""}
        assert now.box is not None
        if not replace_draft and squeeze(now.box) not in ours:
            raise self.fail(
                DraftInInput,
                f"its input box already holds text that is not ours ({_short(now.box)!r}); "
                "nothing was pasted.",
            )
        self._clear("nothing was pasted")

    def _clear(self, so: str) -> None:
        """Empty the box with the runtime's keys (End, C-u: one line at a time; at a
        line's start Codex's C-u takes the line break). Pressed again while each press
        shortens the box (a box of many lines), until CLEAR_TRIES presses in a row did
        not."""
        keys = ("C-u",) if self.runtime is GENERIC else ("End", "C-u")
        box = self.look().box or ""
        misses = 0
        for _ in range(MAX_CLEAR_PRESSES):
            if misses >= CLEAR_TRIES:
                break
            last = self._press_look(keys, box)
            if _empty(last):
                self.replaced = True
                return
            now = last.box if last.row is not None else None
            misses = 0 if now is not None and len(now) < len(box) else misses + 1
            box = now if not misses and now is not None else box
        raise self.fail(DraftInInput, f"its input box could not be cleared; {so}.")

    def _press_look(self, keys: tuple[str, ...], box: str) -> Look:
        """Press ``keys``; the look once the box is shorter than ``box``, or after 0.5 s."""
        self.tmux.run("send-keys", "-t", self.agent.pane, *keys)
        seen: list[Look] = []
        _wait(lambda: _shortened(self.look(), box, seen), 0.5, None)
        return seen[-1]

    def alone(self, pasted: Look, cancel: Cancel | None) -> Look:
        """The look once the box holds our text alone: a prompt of ours that the agent
        put back in its box while we pasted (Claude Code does a moment after Escape) is
        joined to the text; then the box is cleared and the text pasted again."""
        mine = squeeze(self.text)
        ours = {self._ours(STRANDED_FILE), self._ours(DELIVERED_FILE)} - {""}
        for _ in range(CLEAR_TRIES):
            box = squeeze(pasted.box or "")
            extra = box.replace(mine, "", 1) if mine in box else ""
            if not extra or extra not in ours:
                return pasted  # ours alone, or folded by the agent, or not ours to judge
            self._clear("nothing was submitted")
            pasted = self.paste_shown(cancel)
        return pasted

    def _ours(self, name: str) -> str:
        """What we pasted and is recorded in ``name`` (squeezed), or ``""``."""
        try:
            with open(self.records.file(name), encoding="utf-8") as f:
                return f.read()
        except OSError:
            return ""

    def paste(self) -> None:
        """Load the text into a buffer of its own and paste it (bracketed when the program
        asked for it), deleting the buffer, in one tmux invocation."""
        name = f"tmux-bridge-{uuid.uuid4().hex[:12]}"
        self.tmux.run_all(
            *paste_commands(name, self.agent.pane, bracketed=True),
            stdin=pasted_text(self.text).encode(),
        )
        atomic_write(self.records.file(STRANDED_FILE), squeeze(self.text).encode())

    def paste_shown(self, cancel: Cancel | None) -> Look:
        """Paste once, and the look once the box shows it. Never pasted again while the
        box stays empty: Codex shows a paste only once its session is set up (seconds
        after its box first shows, longer on a loaded machine), and a second paste would
        then be submitted with the first."""
        self.paste()
        return self.wait_pasted(cancel)

    def wait_pasted(self, cancel: Cancel | None) -> Look:
        """The look once the box shows the text's end, or holds text that stopped
        changing."""
        seen: list[Look] = []

        sig = signature(self.text)

        def settled() -> bool:
            seen.append(self.look())
            if sig in squeeze(seen[-1].box or ""):
                return True  # shown as sent; else (a TUI that folds pastes) once it settles
            boxes = [s.box for s in seen[-3:]]
            return len(boxes) == 3 and bool(boxes[0]) and boxes[0] == boxes[1] == boxes[2]

        if not _wait(settled, PASTE_WAIT, cancel):
            raise self.fail(PromptNotTaken, "the pasted text never showed in its input box.")
        return seen[-1]

    def submit(self, pasted: Look, cancel: Cancel | None) -> str:
        """Press Enter, then confirm from what only a submission causes: the agent
        works (``working``), queues it while it starts (``queued``), or the box no longer
        holds the text and the conversation above it grew by it (``conversation``).
        Enter is pressed again only while nothing at all reacted (the box and what is
        below it as they were after the paste, the agent idle): never into a working
        agent. Unconfirmed when something changed but no sign of a submission showed;
        not taken only when nothing changed after every Enter."""
        sig = signature(self.text)
        before = _above(pasted).count(sig)
        still = _reaction(pasted)
        how: list[str] = []
        stirred: list[bool] = []

        def taken() -> bool:
            now = self.look()
            state = agent_state(self.runtime, now.screen, now.pane)
            if state in ("working", "starting"):
                how.append("working" if state == "working" else "queued")
            elif sig not in squeeze(now.box or "") and _above(now).count(sig) > before:
                how.append("conversation")
            elif _reaction(now) != still or state != "idle":
                stirred.append(True)
            return bool(how)

        for wait in ENTER_WAITS:
            now = pasted if self.enters == 0 else self.look()
            self.check_front(now.pane)
            if self.enters == 0 or not stirred:
                self.tmux.run("send-keys", "-t", self.agent.pane, "Enter")
                self.enters += 1
            if _wait(taken, wait, cancel):
                return how[0]
        if stirred:
            raise self.fail(
                Unconfirmed,
                "it was submitted and the screen changed, but it did not show that the agent "
                "took it (it may well have: do not send it again; look at the agent).",
            )
        raise self.fail(
            PromptNotTaken,
            f"{self.enters} Enter presses did not submit it; the text is still in its input "
            "box (the next prompt from tmux-bridge clears it).",
        )


def _reaction(now: Look) -> tuple[int | None, str | None, str]:
    """What a submission changes first: where the box is, its text, and the rows below
    it (a status line)."""
    rows = now.screen[now.row :] if now.row is not None else now.screen
    return now.row, now.box, squeeze("".join(rows))


def reply_after(now: Look, text: str) -> str | None:
    """What the agent printed after ``text`` on the screen (``now``), above its input
    box: the rows after the last one that ends ``text``, without blank edges and rows
    of box drawing; ``None`` when ``text`` is no longer on the screen."""
    rows = now.screen[: now.row] if now.row is not None else now.screen
    sig = signature(text)
    end = next((i for i in range(len(rows) - 1, -1, -1) if _ends_at(rows, i, sig)), None)
    if end is None:
        return None
    kept = [row.rstrip() for row in rows[end + 1 :] if squeeze(row)]
    return "\n".join(kept)


def _ends_at(rows: list[str], i: int, sig: str) -> bool:
    """Whether ``sig`` ends on row ``i`` (it may start up to 4 rows above)."""
    first = max(i - 4, 0)
    return sig in squeeze("".join(rows[first : i + 1])) and sig not in squeeze(
        "".join(rows[first:i])
    )


def _above(now: Look) -> str:
    """The squeezed text of the rows above the input box."""
    rows = now.screen[: now.row] if now.row is not None else now.screen
    return squeeze("".join(rows))


def _shortened(now: Look, box: str, seen: list[Look]) -> bool:
    """Whether the box shows and is shorter than ``box`` (empty, or a line less); the
    look is kept in ``seen``."""
    seen.append(now)
    return now.row is not None and len(now.box or "") < len(box)


def _empty(now: Look) -> bool:
    """Whether the box shows and is empty (a look during a redraw finds no box)."""
    return now.row is not None and not now.box


def _short(text: str, width: int = 40) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def _wait(predicate: Callable[[], bool], seconds: float, cancel: Cancel | None) -> bool:
    """Poll ``predicate`` every POLL seconds for up to ``seconds``; whether it held."""
    deadline = time.monotonic() + seconds
    while True:
        if predicate():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sleep_or_cancel(min(POLL, left), cancel)


def sleep_or_cancel(seconds: float, cancel: Cancel | None) -> None:
    if cancel is None:
        time.sleep(seconds)
    elif select.select([cancel.fd], [], [], seconds)[0]:
        raise Cancelled(cancel.signum or signal.SIGINT)
