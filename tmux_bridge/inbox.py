"""The persistent inbox: messages between agents in SQLite, in the runtime directory.

``inbox.sqlite3`` (mode 0600) holds one row per message. Its state moves
``pending`` -> ``delivered`` (the recipient took it as a prompt) or ``failed`` (it could
not take it: the agent went away, or Enter was never taken), and ``delivered`` ->
``read`` once the sender saw the reply (``--wait-reply``). Each change is one
transaction (``BEGIN IMMEDIATE``), with the time it happened (seconds since the epoch).
A pending message is retried by whichever tmux-bridge process runs next and by
``tmux-bridge serve`` in the background; claiming it happens under the recipient pane's
lock, so two processes never deliver it twice.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, NamedTuple

from .runtime import ensure_private_dir

if TYPE_CHECKING:
    import sqlite3

INBOX_FILE = "inbox.sqlite3"
MessageState = Literal["pending", "delivered", "failed", "read"]
_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'read')),
    created REAL NOT NULL,
    updated REAL NOT NULL,
    delivered_at REAL,
    read_at REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    reply TEXT
);
CREATE INDEX IF NOT EXISTS messages_state ON messages (state, recipient);
"""
_COLUMNS = (
    "id, sender, recipient, body, state, created, updated, delivered_at, read_at, attempts, "
    "error, reply"
)


class Message(NamedTuple):
    """One message as stored. Times are seconds since the epoch."""

    id: int
    sender: str
    recipient: str
    body: str
    state: MessageState
    created: float
    updated: float
    delivered_at: float | None
    read_at: float | None
    attempts: int
    error: str | None
    reply: str | None

    def document(self) -> dict[str, object]:
        return dict(self._asdict())

    def as_prompt(self) -> str:
        """The text the recipient gets: marked as from another agent, not the person."""
        return (
            f"[tmux-bridge message #{self.id} from agent {self.sender}, not from the person; "
            f"to answer: tmux-bridge message --to {self.sender} TEXT]\n{self.body}"
        )


def inbox_path(runtime_dir: str) -> str:
    return os.path.join(runtime_dir, INBOX_FILE)


def exists(runtime_dir: str) -> bool:
    """Whether the inbox was ever created (a cheap check before opening it)."""
    return os.path.exists(inbox_path(runtime_dir))


@contextlib.contextmanager
def opened(runtime_dir: str) -> Iterator[sqlite3.Connection]:
    """The inbox, created (0600, in the private runtime directory) on first use.
    Waits up to 10 s for another process's transaction."""
    import sqlite3  # here: `tmux-bridge` checks for pending messages on every start

    ensure_private_dir(runtime_dir)
    path = inbox_path(runtime_dir)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    connection = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    try:
        connection.executescript(_SCHEMA)
        yield connection
    finally:
        connection.close()


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def add(runtime_dir: str, sender: str, recipient: str, body: str) -> Message:
    """Store a new pending message; returns it with its id."""
    now = time.time()
    with opened(runtime_dir) as db, _transaction(db):
        cursor = db.execute(
            "INSERT INTO messages (sender, recipient, body, state, created, updated) "
            "VALUES (?, ?, ?, 'pending', ?, ?)",
            (sender, recipient, body, now, now),
        )
        message_id = cursor.lastrowid
    found = get(runtime_dir, int(message_id or 0))
    assert found is not None
    return found


def get(runtime_dir: str, message_id: int) -> Message | None:
    with opened(runtime_dir) as db:
        row = db.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
    return Message(*row) if row else None


def listing(
    runtime_dir: str, recipient: str | None = None, state: MessageState | None = None
) -> list[Message]:
    """Messages (to ``recipient``, in ``state``), oldest first; empty without an inbox."""
    if not exists(runtime_dir):
        return []
    clauses, values = [], []
    if recipient is not None:
        clauses.append("(recipient = ? OR sender = ?)")
        values += [recipient, recipient]
    if state is not None:
        clauses.append("state = ?")
        values.append(state)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    with opened(runtime_dir) as db:
        rows = db.execute(f"SELECT {_COLUMNS} FROM messages{where} ORDER BY id", values)
        return [Message(*row) for row in rows.fetchall()]


def mark(
    runtime_dir: str,
    message_id: int,
    state: MessageState,
    expect: MessageState | None = None,
    error: str | None = None,
    reply: str | None = None,
) -> bool:
    """Move the message to ``state`` (only from ``expect`` when given), with its time and
    ``error`` or ``reply``; whether it moved. A failed try that stays pending counts an
    attempt."""
    now = time.time()
    column = {"delivered": "delivered_at", "read": "read_at"}.get(state)
    sets = ["state = ?", "updated = ?", "attempts = attempts + ?", "error = ?"]
    values: list[object] = [state, now, 1 if state in ("pending", "failed", "delivered") else 0]
    values.append(error)
    if column:
        sets.append(f"{column} = ?")
        values.append(now)
    if reply is not None:
        sets.append("reply = ?")
        values.append(reply)
    where = "id = ?" + (" AND state = ?" if expect else "")
    values += [message_id, *([expect] if expect else [])]
    with opened(runtime_dir) as db, _transaction(db):
        return (
            db.execute(f"UPDATE messages SET {', '.join(sets)} WHERE {where}", values).rowcount > 0
        )


def clear(runtime_dir: str, recipient: str | None = None) -> int:
    """Remove the messages that are done (delivered, read, failed), of ``recipient``
    (sent or received) or all; pending ones stay. How many were removed."""
    if not exists(runtime_dir):
        return 0
    where = "state != 'pending'" + (" AND (recipient = ? OR sender = ?)" if recipient else "")
    values = [recipient, recipient] if recipient else []
    with opened(runtime_dir) as db, _transaction(db):
        return db.execute(f"DELETE FROM messages WHERE {where}", values).rowcount
