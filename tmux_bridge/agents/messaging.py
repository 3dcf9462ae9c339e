"""Messages between agents: stored in the inbox, delivered as prompts when the recipient
is idle, retried while pending, and answered (``wait_reply``).

A message is claimed under the recipient pane's lock (the same flock every prompt
takes): the state is read again once the lock is held, so a message another process
delivered meanwhile is left alone, and it is marked before the lock is let go.

A message is for the recipient's program it was sent to (pane, pid, start time): at
each try that program must still be the agent in front of that pane (else the message
fails, never pasted into what runs there now), and a message still pending when its
time to live runs out (:func:`message_ttl`, 24 h unless ``TMUX_BRIDGE_MESSAGE_TTL``
says otherwise) is ``expired``: the sender sees it in the inbox, the person as a notice.
"""

from __future__ import annotations

import math
import os
import time

from ..cancel import Cancel
from ..errors import (
    AgentChanged,
    AmbiguousAgent,
    BridgeError,
    InvalidRequest,
    LockTimeout,
    NotDelivered,
    PromptNotTaken,
    Unconfirmed,
    WaitTimeout,
)
from ..infra.tmux import Tmux
from ..pane.records import PaneDir
from ..tuples import NamedTuple
from . import inbox
from .delivery import PromptReceipt, deliver_locked, look, reply_after, sleep_or_cancel
from .detect import Agent, agent_state, find_agent
from .inbox import Message

IDLE_WAIT = 1.0  # seconds a delivery attempt waits for a working agent before it retries later
TTL_VAR = "TMUX_BRIDGE_MESSAGE_TTL"
MAX_TTL = 366 * 24 * 3600.0  # a year: longer is no time to live


def message_ttl(ttl: float | None = None) -> float:
    """Seconds a new message may stay pending: ``ttl`` when given, else
    ``$TMUX_BRIDGE_MESSAGE_TTL``, else 24 h. :class:`InvalidRequest` unless it is a
    number above 0 and at most a year (``nan`` and ``inf`` are not)."""
    if ttl is None:
        raw = os.environ.get(TTL_VAR, "").strip()
        try:
            ttl = float(raw) if raw else inbox.DEFAULT_TTL
        except ValueError:
            raise InvalidRequest(f"{TTL_VAR}={raw!r} is no number of seconds.") from None
    if not (math.isfinite(ttl) and 0 < ttl <= MAX_TTL):
        raise InvalidRequest(
            f"a message's time to live is a number of seconds above 0 and at most "
            f"{MAX_TTL:.0f} (a year), not {ttl!r}."
        )
    return ttl


class Sent(NamedTuple):
    """What ``send_message`` did: the message as it now is (its state), the receipt when
    it was delivered, and the reply when one was waited for."""

    message: Message
    receipt: PromptReceipt | None
    reply: str | None

    def document(self) -> dict[str, object]:
        return {
            **self.message.document(),
            "receipt": self.receipt.document() if self.receipt else None,
            "reply": self.reply,
        }


class Attempt(NamedTuple):
    """What one try at a message did: the message as it now is, the receipt when it was
    delivered, the error when this try did not deliver it."""

    message: Message
    receipt: PromptReceipt | None
    error: BridgeError | None
    changed: bool = False  # this try delivered it or made it fail


def try_deliver(
    tmux: Tmux,
    runtime_dir: str,
    message: Message,
    cancel: Cancel | None = None,
    idle_wait: float = IDLE_WAIT,
) -> Attempt:
    """Deliver a pending message if its recipient is idle now (waiting at most
    ``idle_wait`` s for it and for another sender): delivered, still pending (busy, a
    draft in the box, no input box), failed (the agent is gone, its pane runs another
    program than the one the message was sent to, or Enter was never taken), or expired
    (its time to live ran out; nothing tried)."""
    if message.expires is not None and time.time() >= message.expires:
        error = (
            f"it was not delivered within its time to live ({_span(message)}); it was never pasted."
        )
        changed = inbox.mark(runtime_dir, message.id, "expired", expect="pending", error=error)
        return Attempt(_now(runtime_dir, message), None, None, changed)
    try:
        agent = find_agent(tmux, message.pane or message.recipient)
    except AmbiguousAgent as exc:
        return Attempt(message, None, exc)  # stays pending: one of them may be meant
    if agent is None and message.pane is None:
        # sent before its recipient ran: waits for an agent of that name to start
        return Attempt(message, None, None)
    why = f"the agent {message.recipient} is gone." if agent is None else _not_for(agent, message)
    if agent is None or why is not None:
        changed = inbox.mark(runtime_dir, message.id, "failed", expect="pending", error=why)
        return Attempt(_now(runtime_dir, message), None, None, changed)
    records = PaneDir(runtime_dir, tmux, agent.pane)
    deadline = time.monotonic() + idle_wait
    try:
        with records.locked(deadline, cancel, lambda: None):
            current = inbox.get(runtime_dir, message.id)
            if current is None or current.state != "pending":
                return Attempt(current or message, None, None)  # handled by another process
            try:
                receipt = deliver_locked(
                    tmux, agent, records, message.as_prompt(), False, deadline, cancel
                )
            except Unconfirmed as exc:  # submitted: never pasted again
                inbox.mark(runtime_dir, message.id, "delivered", expect="pending", error=str(exc))
                return Attempt(_now(runtime_dir, message), exc.receipt, None, True)  # type: ignore[arg-type]
            except NotDelivered as exc:
                final = isinstance(exc, (PromptNotTaken, AgentChanged))
                state: inbox.MessageState = "failed" if final else "pending"
                inbox.mark(runtime_dir, message.id, state, expect="pending", error=str(exc))
                return Attempt(_now(runtime_dir, message), None, exc, state == "failed")
            inbox.mark(runtime_dir, message.id, "delivered", expect="pending")
    except LockTimeout as exc:
        return Attempt(message, None, exc)  # another sender holds the agent: later
    return Attempt(_now(runtime_dir, message), receipt, None, True)


def _not_for(agent: Agent, message: Message) -> str | None:
    """Why ``agent`` (found by the recipient's name now) is not the program the message
    was sent to; ``None`` when it is (or the message predates recording it)."""
    if message.pane is not None and agent.pane != message.pane:
        return (
            f"the agent {message.recipient} runs in pane {agent.pane} now, not in "
            f"{message.pane} where the message was for; it was not pasted."
        )
    if message.pid is not None and (agent.pid, agent.start) != (message.pid, message.start):
        return (
            f"the program in front of pane {agent.pane} is not the one the message was sent "
            f"to (pid {agent.pid}, was {message.pid}): it ended or was replaced; it was not "
            "pasted."
        )
    return None


def _span(message: Message) -> str:
    seconds = (message.expires or message.created) - message.created
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"


def _now(runtime_dir: str, message: Message) -> Message:
    return inbox.get(runtime_dir, message.id) or message


def deliver_pending(tmux: Tmux, runtime_dir: str, cancel: Cancel | None = None) -> list[Attempt]:
    """Try every pending message once, oldest first, without waiting for a busy
    recipient (a recipient's messages in order: after one that stays pending, its later
    ones wait too)."""
    attempts: list[Attempt] = []
    waiting: set[str] = set()
    for message in inbox.listing(runtime_dir, state="pending"):
        whom = message.pane or message.recipient  # a program, or a name yet to run
        if whom in waiting:
            continue
        attempt = try_deliver(tmux, runtime_dir, message, cancel, idle_wait=0.0)
        attempts.append(attempt)
        if attempt.message.state == "pending":
            waiting.add(whom)
    return attempts


def wait_delivered(
    tmux: Tmux, runtime_dir: str, message: Message, deadline: float, cancel: Cancel | None
) -> Attempt:
    """Try until the message is delivered or failed, or ``deadline`` passes
    (:class:`WaitTimeout`, the message still pending)."""
    while True:
        attempt = try_deliver(tmux, runtime_dir, message, cancel)
        if attempt.message.state != "pending":
            return attempt
        if time.monotonic() >= deadline:
            raise WaitTimeout(
                f"message #{message.id} is still pending: {message.recipient} did not become "
                "idle in time. It stays in the inbox and is delivered later."
            )
        _pause(0.2, cancel)


def wait_reply(
    tmux: Tmux,
    runtime_dir: str,
    message: Message,
    receipt: PromptReceipt,
    deadline: float,
    cancel: Cancel | None = None,
) -> str:
    """Wait until the recipient has worked on the message and is idle again; return what
    it printed after it, and mark the message read with that reply. Raises
    :class:`WaitTimeout` when the deadline passes first."""
    worked = receipt.confirmed_by == "working"
    text = message.as_prompt()
    while time.monotonic() < deadline:
        agent = find_agent(tmux, receipt.pane)
        if agent is None:
            break
        now = look(tmux, agent.kind, agent.pane)
        state = agent_state(agent.kind, now.screen, now.pane)
        worked = worked or state == "working"
        reply = reply_after(now, text) if state == "idle" else None
        if reply is not None and (worked or reply):
            inbox.mark(runtime_dir, message.id, "read", expect="delivered", reply=reply)
            return reply
        _pause(0.1, cancel)
    raise WaitTimeout(f"no reply to message #{message.id} from {message.recipient} in time.")


def _pause(seconds: float, cancel: Cancel | None) -> None:
    sleep_or_cancel(seconds, cancel)
