"""The tools' output schemas: the documents ``tmux-send --json``, ``tmux-bridge status
--json`` and ``tmux-bridge panes --json`` print, described for a model.

Extra fields are allowed: a document may grow (``info``, the cap's ``stdout_file``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def _nullable_as_type_list(schema: dict[str, Any]) -> None:
    """Write each "X or null" property as ``"type": [X, "null"]`` instead of pydantic's
    ``anyOf`` of two schemas: the same JSON Schema, shorter in a model's context, and
    checked in half the time by a client that validates every result against it (the
    SDK's own client does)."""
    for prop in schema.get("properties", {}).values():
        alternatives = prop.get("anyOf")
        if (
            isinstance(alternatives, list)
            and len(alternatives) == 2
            and all(isinstance(a, dict) and set(a) == {"type"} for a in alternatives)
            and {"type": "null"} in alternatives
        ):
            del prop["anyOf"]
            prop["type"] = [a["type"] for a in alternatives]


class Document(BaseModel):
    """A tool's output document (its JSON Schema as :func:`_nullable_as_type_list` writes it)."""

    model_config = ConfigDict(json_schema_extra=_nullable_as_type_list)


class FileDocument(Document):
    """The file a write, read or edit handled, as the pane's shell saw it."""

    path: str = Field(description="the path as given, relative to the shell's directory")
    abs_path: str
    size: int = Field(description="bytes")
    sha256: str
    mode: str | None = Field(description='permission bits in octal, e.g. "0644"')
    mtime: int | None = Field(description="seconds since the epoch")
    backup: str | None = Field(description="where the old content was copied first")
    status: str | None = Field(
        default=None, description="what a write or edit did: created, updated or unchanged"
    )
    md5: str | None = Field(default=None, description="only from a stat")


class ResultDocument(Document):
    """One call's result (the document ``tmux-send --json`` prints), or the call that
    could not be made (``error_code`` set, nothing typed)."""

    model_config = ConfigDict(extra="allow")

    id: str | None = Field(description="the call's id in the person's audit log")
    mode: str
    pane: str | None = Field(description="the pane's id, %N")
    target: str | None = Field(description="SESSION:WINDOW.PANE of the pane")
    label: str | None
    command: str
    exit_status: int = Field(
        description="the command's own status; 124 after a timeout, 128+N when cancelled "
        "or killed by signal N, 125 when it could not be run"
    )
    status: int | None = Field(description="the command's own status, null when unknown")
    timed_out: str | None = Field(description='"idle" or "overall" when a timeout fired')
    signals_sent: list[str] = Field(description="what interrupted the command, in order")
    duration_s: float
    shell: str | None
    repl: str | None
    waited_for_input: bool = Field(description="the command waited for the person's input")
    shell_restarted: bool
    error: str | None
    error_code: str | None
    stdout: str | None = Field(description="exact output; when cut, see stdout_truncated")
    stderr: str | None
    notes: list[str] = Field(description="remarks: waits, interruptions, hints")
    screen: str | None = Field(None, description="the screen, for keys, text and screen")
    file: FileDocument | None = None
    stdout_b64: str | None = Field(None, description="stdout's bytes when not UTF-8")
    stderr_b64: str | None = None
    stdout_truncated: bool | None = Field(
        None, description="stdout was cut to fit: head, a cut line, tail; all of it in stdout_file"
    )
    stdout_file: str | None = Field(
        None, description="the file holding the whole cut stdout (read_output pages it)"
    )
    stdout_lines: int | None = Field(None, description="lines of the whole stdout")
    stdout_bytes: int | None = Field(None, description="bytes of the whole stdout")
    stderr_truncated: bool | None = None
    stderr_file: str | None = None
    stderr_lines: int | None = None
    stderr_bytes: int | None = None
    info: dict[str, Any] | None = Field(None, description="pane_info: the platform")


class JobDocument(Document):
    """A job (``tmux-send --job ID --json``): its state and what this call read of it."""

    model_config = ConfigDict(extra="allow")

    job: str = Field(description="the job's id, for read_job, wait_job and kill_job")
    pane: str
    target: str
    command: str
    state: str = Field(description="running, exited, interrupted (killed, Ctrl-C) or lost")
    exit_status: int | None = Field(description="the command's own; null while it runs")
    timed_out: str | None = Field(description="a wait_job that gave up: the job runs on")
    stdout: str = Field(description="this read's output: new since the last read")
    stderr: str
    stdout_bytes: int = Field(description="the job's stdout so far, in bytes")
    stderr_bytes: int
    dropped_bytes: int = Field(description="output beyond the spool's 1 GiB, not kept")
    started: str
    ended: str | None
    notes: list[str]


class JobsDocument(Document):
    """Every job (``tmux-send --jobs --json``), as ``jobs``."""

    jobs: list[dict[str, Any]] = Field(
        description="each job's document without output: job, pane, command, state, "
        "exit_status, stdout_bytes, stderr_bytes, started, ended"
    )


class StatusDocument(Document):
    """What ``tmux-bridge status --json`` prints."""

    model_config = ConfigDict(extra="allow")

    session: str
    running: bool = Field(description="false: no bridge runs; ask the person to start it")
    pane: str | None = None
    shell: str | None = None
    shell_pid: int | None = None
    cwd: str | None = None
    foreground: str | None = Field(None, description="the program in front; null: the prompt")
    repl: dict[str, Any] | None = None
    in_flight: dict[str, Any] | None = None
    transcript: str | None = Field(
        None,
        description="clean: the person sees each call's command, output and a status on "
        "failure; verbose: tmux-send's typed line and markers show (why in transcript_note)",
    )
    transcript_note: str | None = None


class PanesDocument(Document):
    """What ``tmux-bridge panes --json`` prints, as ``panes``."""

    panes: list[dict[str, Any]] = Field(
        description="each pane: pane, target, label, bridge, shell, user, host, cwd, front, "
        "in_flight, attached, platform, last_command, far (the far shell of the last "
        "call: via, user, host, os, shell) or far_left"
    )


class AgentsDocument(Document):
    """What ``tmux-bridge agents --json`` prints, as ``agents``."""

    agents: list[dict[str, Any]] = Field(
        description="each agent: name, role, runtime, rig, workDir, attached, pane, target, "
        "state (working, idle, needs_person, starting, unknown), question, aliases"
    )


class ReceiptDocument(Document):
    """A prompt's receipt (``tmux-bridge prompt --json``)."""

    model_config = ConfigDict(extra="allow")
    agent: str
    delivered: bool
    confirmed_by: str | None = Field(description="conversation or working")
    enters: int = Field(description="Enter presses; more than 1: some were swallowed")


class MessageDocument(Document):
    """A message as stored (``tmux-bridge message --json``), with its receipt and reply."""

    model_config = ConfigDict(extra="allow")
    id: int
    state: str = Field(description="pending, delivered, failed, expired or read")
    reply: str | None = Field(None, description="the answer, with wait_reply")
    sender_verified: bool | None = Field(
        None, description="sent from the sender agent's own pane; false: a name given elsewhere"
    )


class OutputPageDocument(Document):
    """A page of a saved stream (``read_output``)."""

    model_config = ConfigDict(extra="allow")

    path: str = Field(description="the saved stream")
    offset: int = Field(description="the page's first line, from 0")
    lines: int = Field(description="lines in text")
    total_lines: int
    total_bytes: int
    more: bool = Field(description="lines follow the page")
    next_offset: int | None = Field(description="the offset of the next page, null at the end")
    text: str = Field(description="the page's lines (U+FFFD for bytes that are not UTF-8)")


class CheckDocument(Document):
    """A check by kind (``tmux-send --check --as KIND --json``): whether the text is
    valid, by which validator of the pane's host."""

    model_config = ConfigDict(extra="allow")

    mode: str
    pane: str
    kind: str | None = Field(None, description="json, yaml, toml, python, jq, sh, ...")
    validator: str | None = Field(
        None, description="the program of the pane's host that judged it; null: none there"
    )
    valid: bool | None = Field(None, description="null: not checked (no validator)")
    error: dict[str, Any] | None = Field(None, description="the first error: line, column, message")
    ready: bool
    would_exit: int = Field(description="1 when not valid, else 0")
    notes: list[str]
