"""The HTTP contract v1 and what this server adds to it: the request's fields and their
bounds, what each action requires, and the reply (an error's reply and the one table
of HTTP statuses: :mod:`tmux_bridge.web.replies`). The contract: docs/specs/http-contract-v1.md;
what we add: docs/http-api.md.

Everything a client sends is checked here before any action runs, the same way in
tmux and stub mode; the rules of the core (session names, directories, key names,
literal text) are the core's own functions, called here early so that both modes refuse
alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..errors import InvalidRequest
from ..infra.patterns import MAX_PATTERN, check_pattern, compile_timed
from ..rules import MAX_KEYS, check_directory, check_keys, check_session_name, check_text
from ..text.seams import NAME_MAX, is_name
from ..tuples import NamedTuple

CONTRACT_ACTIONS = (
    "list_sessions",
    "create_session",
    "send_keys",
    "capture_pane",
    "send_and_capture",
    "kill_session",
)
EXTRA_ACTIONS = ("run", "start_repl", "evaluate", "close_repl", "status", "screen")
JOB_ACTIONS = ("start_job", "job", "wait_job", "kill_job", "jobs")  # docs/jobs.md
# files through the pane's shell (docs/http-api.md, docs/files.md)
FILE_ACTIONS = (
    "read_file", "write_file", "edit_file", "edit_lines", "stat_file", "backups",
    "restore_file", "check_content",
)  # fmt: skip
ACTIONS = CONTRACT_ACTIONS + EXTRA_ACTIONS + JOB_ACTIONS + FILE_ACTIONS
LINE_EDITS = ("replace", "insert", "delete", "append")
KINDS = ("json", "yaml", "toml", "python", "jq", "sh", "bash", "zsh", "fish")

MAX_BODY = 256 * 1024  # bytes of one request body
MAX_TEXT = 8000  # characters of literal input
MAX_COMMAND = 128 * 1024  # characters of a command or of REPL code
MAX_WORDS = 1000  # words of a command given as a list
MAX_WAIT_FOR = MAX_PATTERN  # characters of the wait_for regex (patterns.py: its other bounds)
MAX_KEY = 64  # characters of one key name
MAX_PANE = 128  # characters of a pane target
MAX_NAME = 64  # characters of a REPL name
MAX_PATH = 4096  # characters of a directory
LINES = (1, 5000)
DEFAULT_LINES = 200
TIMEOUT_MS = (100, 120_000)
DEFAULT_WAIT_MS = 5000  # send_and_capture's wait for wait_for
MAX_TIME_MS = (100, 3_600_000)
MAX_FIT = 1 << 40  # first, last, max_bytes: whole numbers, 0 or more
REGEX_TIME = 0.1  # seconds one search of the screen for wait_for may take
COMPILE_TIME = 2.0  # seconds compiling wait_for may take (milliseconds within its bounds)


class Request(NamedTuple):
    """One validated request. Absent fields are ``None`` (or empty, or false).
    ``matcher`` is no field a client sends: the app sets it to ``wait_for`` compiled
    (:func:`screen_matcher`, off the event loop) before the action runs."""

    action: str
    session: str | None = None
    pane: str | None = None
    cwd: str | None = None
    text: str | None = None
    keys: tuple[str, ...] = ()
    enter: bool = False
    lines: int | None = None
    wait_for: str | None = None
    timeout_ms: int | None = None
    join_wrapped: bool | None = None
    command: str | tuple[str, ...] | None = None
    max_time_ms: int | None = None
    raw: bool = False
    name: str | None = None
    code: str | None = None
    job: str | None = None  # a job's id (start_job gives it)
    all: bool = False  # job: all of its output, not what is new
    matcher: Callable[[str], bool] | None = None
    # output that fits (run, start_repl, evaluate): lines kept from each end, bytes in all
    first: int | None = None
    last: int | None = None
    max_bytes: int | None = None
    # files: the path, the text to write or check, an edit, a guard, a backup
    path: str | None = None
    content: str | None = None
    old: str | None = None
    new: str | None = None
    line: int | None = None
    edit: str | None = None  # a line edit: replace, insert, delete, append
    backup: bool | None = None  # keep a backup (default: true)
    if_sha256: str | None = None
    backup_id: str | None = None
    kind: str | None = None  # a check's kind (default: by the path's extension)
    agent: str | None = None  # the calling agent's name, for the pane's header


Parser = Callable[[str, Any], Any]


def _string(limit: int) -> Parser:
    def parse(name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise InvalidRequest(f"{name} must be a string.")
        if len(value) > limit:
            raise InvalidRequest(f"{name} is too long: {len(value)} characters, at most {limit}.")
        if "\0" in value:
            raise InvalidRequest(f"{name} holds a NUL character.")
        check_encodable(name, value)
        return value

    return parse


def check_encodable(name: str, value: str) -> None:
    """Refuse a string JSON gave us that is no text: a lone surrogate (``"\\ud800"``
    is valid JSON, but no UTF-8 exists for it, so no shell, file or reply can hold it)."""
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidRequest(
            f"{name} holds a lone surrogate (U+{ord(value[exc.start]):04X} at character "
            f"{exc.start}), which is no text: send UTF-8 text (a surrogate pair only "
            "as the two halves of one character)."
        ) from None


def _integer(low: int, high: int) -> Parser:
    def parse(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidRequest(f"{name} must be an integer.")
        if not low <= value <= high:
            raise InvalidRequest(f"{name} must be between {low} and {high}; got {value}.")
        return value

    return parse


def _boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidRequest(f"{name} must be true or false.")
    return value


def _session(name: str, value: Any) -> str:
    session: str = _string(MAX_NAME + 16)(name, value)
    check_session_name(session)
    return session


def _cwd(name: str, value: Any) -> str:
    path: str = _string(MAX_PATH)(name, value)
    check_directory(path)
    return path


def _text(name: str, value: Any) -> str:
    text: str = _string(MAX_TEXT)(name, value)
    check_text(text, allow_control=False)
    return text


def _keys(name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(key, str) for key in value):
        raise InvalidRequest(f"{name} must be a list of key names (strings).")
    if len(value) > MAX_KEYS:
        raise InvalidRequest(f"{name} holds {len(value)} keys; at most {MAX_KEYS}.")
    keys = tuple(_string(MAX_KEY)(name, key) for key in value if key)
    if keys:
        check_keys(keys)
    return keys


def _command(name: str, value: Any) -> str | tuple[str, ...]:
    if isinstance(value, str):
        text: str = _string(MAX_COMMAND)(name, value)
        return text
    if not isinstance(value, list) or not value or len(value) > MAX_WORDS:
        raise InvalidRequest(
            f"{name} must be shell code (a string) or a command and its arguments (a list "
            f"of 1-{MAX_WORDS} strings)."
        )
    words = tuple(_string(MAX_COMMAND)(name, word) for word in value)
    if sum(len(word) + 1 for word in words) > MAX_COMMAND:
        raise InvalidRequest(f"{name} is too long: at most {MAX_COMMAND} characters in all.")
    return words


def _wait_for(name: str, value: Any) -> str:
    """Checked, not compiled: the app compiles it off the event loop once the role and
    the action allow it (:func:`screen_matcher`)."""
    pattern: str = _string(MAX_WAIT_FOR)(name, value)
    check_pattern(pattern, name)
    return pattern


def _choice(choices: tuple[str, ...]) -> Parser:
    def parse(name: str, value: Any) -> str:
        if value not in choices:
            raise InvalidRequest(f"{name} must be one of {', '.join(choices)}.")
        return str(value)

    return parse


def _agent(name: str, value: Any) -> str:
    text: str = _string(NAME_MAX)(name, value)
    if not is_name(text):
        raise InvalidRequest(
            f"{name} must be the calling agent's name: 1 to {NAME_MAX} letters, digits, "
            "'_', '.' or '-'."
        )
    return text


def _sha256(name: str, value: Any) -> str:
    text: str = _string(64)(name, value)
    if len(text) != 64 or not all(c in "0123456789abcdefABCDEF" for c in text):
        raise InvalidRequest(f"{name} must be a SHA-256: 64 hex digits.")
    return text


FIELDS: dict[str, Parser] = {
    "session": _session,
    "pane": _string(MAX_PANE),
    "cwd": _cwd,
    "text": _text,
    "keys": _keys,
    "enter": _boolean,
    "lines": _integer(*LINES),
    "wait_for": _wait_for,
    "timeout_ms": _integer(*TIMEOUT_MS),
    "join_wrapped": _boolean,
    "command": _command,
    "max_time_ms": _integer(*MAX_TIME_MS),
    "raw": _boolean,
    "name": _string(MAX_NAME),
    "code": _string(MAX_COMMAND),
    "job": _string(MAX_NAME),
    "all": _boolean,
    "first": _integer(0, MAX_FIT),
    "last": _integer(0, MAX_FIT),
    "max_bytes": _integer(0, MAX_FIT),
    "path": _string(MAX_PATH),
    "content": _string(MAX_BODY),
    "old": _string(MAX_BODY),
    "new": _string(MAX_BODY),
    "line": _integer(1, 1 << 40),
    "edit": _choice(LINE_EDITS),
    "backup": _boolean,
    "if_sha256": _sha256,
    "backup_id": _string(MAX_NAME),
    "kind": _choice(KINDS),
    "agent": _agent,
}

REQUIRED: dict[str, tuple[str, ...]] = {
    "capture_pane": ("session",),
    "kill_session": ("session",),
    "send_keys": ("session",),
    "send_and_capture": ("session",),
    "run": ("command",),
    "start_repl": ("name", "command"),
    "evaluate": ("name", "code"),
    "start_job": ("command",),
    "job": ("job",),
    "wait_job": ("job",),
    "kill_job": ("job",),
    "read_file": ("path",),
    "write_file": ("path",),
    "edit_file": ("path", "old"),
    "edit_lines": ("path", "edit"),
    "stat_file": ("path",),
    "restore_file": ("path",),
    "check_content": ("content",),
}


def parse_request(body: bytes) -> Request:
    """The request in ``body`` (JSON), checked field by field and against what its
    action requires. ``null`` and ``""`` count as absent. Raises
    :class:`InvalidRequest` naming the first problem; nothing has run then. (The app
    does it in two steps, :func:`decode` and :func:`parse_fields`, with the role
    checked between them.)"""
    return parse_fields(*decode(body))


def decode(body: bytes) -> tuple[str, dict[str, Any]]:
    """The action ``body`` (JSON) asks for, and the whole object; no other field is
    looked at yet. Raises :class:`InvalidRequest` for anything but a JSON object with a
    known action."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        raise InvalidRequest("the body is not valid JSON.") from None
    if not isinstance(payload, dict):
        raise InvalidRequest("the body must be a JSON object with an action.")
    action = payload.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        shown = ascii(action)[:80]
        raise InvalidRequest(f"unknown action {shown}; the actions are {', '.join(ACTIONS)}.")
    return action, payload


def parse_fields(action: str, payload: dict[str, Any]) -> Request:
    """The fields of a decoded request (:func:`decode`), each checked (sizes, the core's
    rules, ``wait_for``'s bounds: nothing is compiled), and what ``action`` requires.
    Raises :class:`InvalidRequest` naming the first problem."""
    unknown = sorted(set(payload) - set(FIELDS) - {"action"})
    if unknown:
        raise InvalidRequest(
            f"unknown fields: {', '.join(ascii(name[:40]) for name in unknown[:5])}; the "
            f"fields are action, {', '.join(FIELDS)}."
        )
    values = {
        name: FIELDS[name](name, value)
        for name, value in payload.items()
        if name != "action" and value is not None and value != ""
    }
    request = Request(action=action, **values)
    _check_required(request, values)
    return request


def _check_required(request: Request, given: dict[str, Any]) -> None:
    missing = [name for name in REQUIRED.get(request.action, ()) if name not in given]
    if missing:
        raise InvalidRequest(f"{request.action} requires {' and '.join(missing)}.")
    if request.action in ("send_keys", "send_and_capture") and not (
        request.text or request.keys or request.enter
    ):
        raise InvalidRequest(f"{request.action} requires at least one of text, keys or enter=true.")


def screen_matcher(pattern: str) -> Callable[[str], bool]:
    """A search for ``pattern`` (multi-line: ``^`` and ``$`` at every line) within the
    bounds of :func:`~tmux_bridge.infra.patterns.check_pattern`, compiled by the ``regex``
    package (milliseconds), each search giving up after REGEX_TIME seconds so that no
    pattern can hold a thread: a search that runs out of time raises
    :class:`InvalidRequest`. Raises it too for a pattern refused or not compiling."""
    compiled = compile_timed(pattern, "wait_for", REGEX_TIME, re.MULTILINE)
    return lambda text: compiled.search(text) is not None


def reply(
    action: str,
    *,
    session: str | None = None,
    sessions: list[str] | None = None,
    output: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A successful reply: ``ok``, ``action`` and the optional fields that are set."""
    document: dict[str, Any] = {"ok": True, "action": action}
    if session is not None:
        document["session"] = session
    if sessions is not None:
        document["sessions"] = sessions
    if output is not None:
        document["output"] = output
    if metadata is not None:
        document["metadata"] = metadata
    return document
