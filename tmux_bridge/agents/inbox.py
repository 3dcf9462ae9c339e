"""The persistent inbox: messages between agents in SQLite, in the runtime directory.

``inbox.sqlite3`` (mode 0600) holds one row per message. Its state moves
``pending`` -> ``delivered`` (the recipient took it as a prompt), ``failed`` (it could
not take it: the agent went away, its pane runs another program now, or Enter was never
taken) or ``expired`` (still pending when its time to live ran out: never pasted), and
``delivered`` -> ``read`` once the sender saw the reply (``--wait-reply``). Each change
is one transaction (``BEGIN IMMEDIATE``), with the time it happened (seconds since the
epoch). A pending message is retried by whichever tmux-bridge process runs next and by
``tmux-bridge serve`` in the background; claiming it happens under the recipient pane's
lock, so two processes never deliver it twice. A message keeps the recipient's pane and
program (pid and start time) it was sent to.

A new inbox is made whole in a file of its own and then linked into place, so a valid
inbox is never empty. One that is empty (truncated), not a database or malformed is
moved aside to ``inbox.sqlite3.corrupt-TIME-PID`` (kept for the person) and
:class:`~tmux_bridge.errors.InboxCorrupt` raised; the next use starts a new one. An
inbox of an older version (schema 0) is upgraded in place, its pending messages given
the default time to live from their creation.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from ..errors import InboxCorrupt, InboxError
from ..infra.runtime import ensure_private_dir, remove_quietly
from ..tuples import NamedTuple

if TYPE_CHECKING:
    import sqlite3

INBOX_FILE = "inbox.sqlite3"
MessageState = Literal["pending", "delivered", "failed", "expired", "read"]
SCHEMA_VERSION = 2
DEFAULT_TTL = 24 * 3600.0  # seconds a message may stay pending (TMUX_BRIDGE_MESSAGE_TTL)
_TABLE = """
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'expired', 'read')),
    created REAL NOT NULL,
    updated REAL NOT NULL,
    delivered_at REAL,
    read_at REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    reply TEXT,
    expires REAL,
    pane TEXT,
    pid INTEGER,
    start INTEGER,
    sender_verified INTEGER
)"""
_INDEX = "CREATE INDEX messages_state ON messages (state, recipient)"
_OLD_COLUMNS = (
    "id, sender, recipient, body, state, created, updated, delivered_at, read_at, attempts, "
    "error, reply"
)
_COLUMNS = _OLD_COLUMNS + ", expires, pane, pid, start, sender_verified"
# SQLite's primary result codes for a file that is no database, or a damaged one.
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26


class Message(NamedTuple):
    """One message as stored. Times are seconds since the epoch; ``expires`` is when a
    message still pending expires; ``pane``, ``pid`` and ``start`` (clock ticks after
    boot) name the recipient's program it was sent to (``None`` in an upgraded inbox);
    ``sender_verified``: the sender is the agent of the pane the message was sent from
    (else a name the sender gave, shown as ``from NAME (unverified)``; ``None`` in an
    upgraded inbox: not known, shown as unverified)."""

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
    expires: float | None = None
    pane: str | None = None
    pid: int | None = None
    start: int | None = None
    sender_verified: bool | None = None

    def document(self) -> dict[str, object]:
        """The message as JSON: every column but the recipient program's pid and start."""
        document = dict(self._asdict())
        del document["pid"], document["start"]
        return document

    def from_label(self) -> str:
        """Who sent it, as the inbox and notices show it: ``NAME`` for a verified sender,
        else ``NAME (unverified)``."""
        return self.sender if self.sender_verified else f"{self.sender} (unverified)"

    def as_prompt(self) -> str:
        """The text the recipient gets: headed as from another agent, not the person
        (:func:`~tmux_bridge.text.seams.message_prompt`); a body longer than
        :func:`inline_limit` becomes one line naming the command that prints it
        (:func:`~tmux_bridge.text.seams.message_reference`)."""
        from ..text.seams import message_prompt, message_reference

        verified = bool(self.sender_verified)
        if len(self.body) > inline_limit():
            return message_reference(self.id, self.sender, len(self.body), verified)
        return message_prompt(self.id, self.sender, self.body, verified)


INLINE_VAR = "TMUX_BRIDGE_MESSAGE_INLINE"
INLINE_DEFAULT = 2000


def inline_limit() -> int:
    """The longest body pasted whole (characters): ``$TMUX_BRIDGE_MESSAGE_INLINE``, else
    2,000; longer ones are delivered by reference."""
    raw = os.environ.get(INLINE_VAR, "").strip()
    return int(raw) if raw.isdigit() else INLINE_DEFAULT


def inbox_path(runtime_dir: str) -> str:
    return os.path.join(runtime_dir, INBOX_FILE)


def exists(runtime_dir: str) -> bool:
    """Whether the inbox was ever created (a cheap check before opening it)."""
    return os.path.exists(inbox_path(runtime_dir))


@contextlib.contextmanager
def opened(runtime_dir: str) -> Iterator[sqlite3.Connection]:
    """The inbox, created (0600, in the private runtime directory) on first use, checked
    (``PRAGMA quick_check``) and upgraded to this schema. Waits up to 10 s for another
    process's transaction. Raises :class:`InboxCorrupt` (the file moved aside) for a
    damaged inbox, here or in what the caller does with it, and :class:`InboxError`
    for another SQLite failure."""
    import sqlite3  # here: `tmux-bridge` checks for pending messages on every start

    ensure_private_dir(runtime_dir)
    path = inbox_path(runtime_dir)
    if not os.path.exists(path):
        _create(path)
    try:
        seen = os.stat(path)
        connection = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise InboxError(f"the inbox {path} cannot be opened: {exc}.") from exc
    try:
        _check(connection, seen.st_size)
        yield connection
    except sqlite3.Error as exc:
        connection.close()
        if not _damaged(exc):
            raise InboxError(f"the inbox {path} cannot be used: {exc}.") from exc
        raise _moved_aside(path, seen, str(exc)) from exc
    finally:
        connection.close()


def _check(connection: sqlite3.Connection, size: int) -> None:
    """Raise for a damaged inbox; upgrade an older one."""
    import sqlite3

    if size == 0:
        raise sqlite3.DatabaseError("it is empty (truncated to 0 bytes)")
    result = connection.execute("PRAGMA quick_check").fetchall()
    if result != [("ok",)]:
        raise sqlite3.DatabaseError("database disk image is malformed: " + str(result[0][0]))
    if connection.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        _upgrade(connection)


def _damaged(exc: Exception) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:  # raised by _check itself
        return True
    return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _moved_aside(path: str, seen: os.stat_result, why: str) -> InboxCorrupt:
    """Move the damaged inbox (and its journal) aside, unless another process already
    did (the file at ``path`` is no longer the one we opened); the error to raise."""
    aside = ""
    with contextlib.suppress(FileNotFoundError):
        now = os.stat(path)
        if (now.st_dev, now.st_ino) == (seen.st_dev, seen.st_ino):
            aside = _keep(path, f"{path}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    where = f"it was moved aside to {aside} (kept for you)" if aside else "it was moved aside"
    error = InboxCorrupt(
        f"the inbox {path} could not be read ({why}): {where}, and the next use starts a "
        "new, empty inbox. The messages in it were not delivered."
    )
    error.moved_to = aside
    return error


def _keep(path: str, name: str) -> str:
    """Move ``path`` (and its journal) to ``name``, or ``name-2``, ``name-3`` ... when
    taken (a link never replaces a file); the name it got."""
    for n in range(1, 1000):
        aside = name if n == 1 else f"{name}-{n}"
        try:
            os.link(path, aside)
        except FileExistsError:
            continue
        os.unlink(path)
        for suffix in ("-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.rename(path + suffix, aside + suffix)
        return aside
    raise InboxError(f"the damaged inbox {path} cannot be moved aside: {name} is taken.")


def _create(path: str) -> None:
    """Make a new inbox in a file of its own, then link it into place (another process
    may have made one meanwhile: then that one stays)."""
    import sqlite3

    building = f"{path}.new-{os.getpid()}-{time.monotonic_ns()}"
    os.close(os.open(building, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    try:
        connection = sqlite3.connect(building, isolation_level=None)
        try:
            connection.execute(_TABLE)
            connection.execute(_INDEX)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            connection.close()
        with contextlib.suppress(FileExistsError):
            os.link(building, path)
    except sqlite3.Error as exc:
        raise InboxError(f"a new inbox cannot be made at {path}: {exc}.") from exc
    finally:
        remove_quietly(building)


def _upgrade(db: sqlite3.Connection) -> None:
    """An older schema to this one, in one transaction: schema 0 (no ``expired``, no
    expiry, no recipient program) is rebuilt, a pending message expiring DEFAULT_TTL
    after it was created; schema 1 gets ``sender_verified`` (``None``: not known)."""
    with _transaction(db):
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version >= SCHEMA_VERSION:
            return  # another process upgraded it meanwhile
        if version == 1:
            db.execute("ALTER TABLE messages ADD COLUMN sender_verified INTEGER")
        else:
            _rebuild(db)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _rebuild(db: sqlite3.Connection) -> None:
    """Schema 0's table (if any) copied into this schema's, keeping its ids."""
    old = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages'").fetchone()
    sequence = None
    if old:
        db.execute("ALTER TABLE messages RENAME TO messages_v0")
        sequence = db.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'messages_v0'"
        ).fetchone()
    db.execute("DROP INDEX IF EXISTS messages_state")
    db.execute(_TABLE)
    db.execute(_INDEX)
    if old:
        db.execute(
            f"INSERT INTO messages ({_OLD_COLUMNS}, expires) "
            f"SELECT {_OLD_COLUMNS}, created + ? FROM messages_v0",
            (DEFAULT_TTL,),
        )
        db.execute("DROP TABLE messages_v0")
    if sequence:  # ids are never used again, not even those of messages cleared before
        db.execute("DELETE FROM sqlite_sequence WHERE name = 'messages'")
        db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('messages', ?)", sequence)


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def add(
    runtime_dir: str,
    sender: str,
    recipient: str,
    body: str,
    *,
    ttl: float | None = None,
    program: tuple[str, int, int] | None = None,
    verified: bool = False,
) -> Message:
    """Store a new pending message, which expires ``ttl`` seconds from now (never when
    ``None``) and is for the recipient's ``program`` (pane id, pid, start), from a
    ``verified`` sender or not; returns it with its id."""
    now = time.time()
    expires = None if ttl is None else now + ttl
    pane, pid, start = program or (None, None, None)
    with opened(runtime_dir) as db, _transaction(db):
        cursor = db.execute(
            "INSERT INTO messages (sender, recipient, body, state, created, updated, expires, "
            "pane, pid, start, sender_verified) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)",
            (sender, recipient, body, now, now, expires, pane, pid, start, int(verified)),
        )
        message_id = cursor.lastrowid
    found = get(runtime_dir, int(message_id or 0))
    assert found is not None
    return found


def get(runtime_dir: str, message_id: int) -> Message | None:
    with opened(runtime_dir) as db:
        row = db.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,)).fetchone()
    return _message(row) if row else None


def _message(row: tuple[object, ...]) -> Message:
    """A stored row as a message (SQLite keeps ``sender_verified`` as 0 or 1)."""
    *columns, verified = row
    return Message._make([*columns, None if verified is None else bool(verified)])


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
        return [_message(row) for row in rows.fetchall()]


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
    """Remove the messages that are done (delivered, read, failed, expired), of ``recipient``
    (sent or received) or all; pending ones stay. How many were removed."""
    if not exists(runtime_dir):
        return 0
    where = "state != 'pending'" + (" AND (recipient = ? OR sender = ?)" if recipient else "")
    values = [recipient, recipient] if recipient else []
    with opened(runtime_dir) as db, _transaction(db):
        return db.execute(f"DELETE FROM messages WHERE {where}", values).rowcount
