"""One account of every result: the JSON document all faces give, and the sentences a
person or an agent reads about anything unusual (a timeout, a restarted shell).

Nothing here names a command-line flag; a face adds its own hints.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from typing import Any

from .errors import BridgeError
from .results import CallResult, CheckResult, FileFacts


def describe(result: CallResult) -> str:
    """tmux-send's own account of anything unusual about a call, for stderr: why the
    command was interrupted and how it ended, notes, the last lines of the pane."""
    lines: list[str] = []
    if result.timed_out or result.cancelled is not None:
        lines += _interruption(result)
    lines += [f"tmux-send: {note}" for note in result.notes]
    if result.pane_tail:
        lines.append("Last lines of the bridge terminal:")
        lines.extend("  " + line for line in result.pane_tail)
    return "\n".join(lines) + "\n" if lines else ""


def _interruption(result: CallResult) -> list[str]:
    options = result.options
    if result.cancelled is not None:
        cause = f"tmux-send was interrupted ({signal.Signals(result.cancelled).name})"
    elif result.timed_out == "idle":
        cause = f"Timeout: idle timeout, no output for {options.idle_timeout:g} s"
    else:
        cause = f"Timeout: overall timeout, the command ran for {options.max_time:g} s"
    if result.job is not None:
        return [
            f"tmux-send: {cause}. The command was not interrupted: it runs on as job "
            f"{result.job}, whose output and exit status are kept until read."
        ]
    sent = " then ".join(result.signals_sent) or "nothing"
    in_repl = result.mode == "repl_eval"
    lines = [f"tmux-send: {cause}. Sent {sent} to {'the REPL' if in_repl else 'the command'}."]
    if in_repl and result.prompt_back and not result.signals_sent:
        lines.append(
            "The REPL is back at its prompt without finishing the code (it stopped early, "
            "at an error say), so nothing was interrupted; it stays open."
        )
    elif in_repl:
        lines.append(
            "The REPL stopped the evaluation and is back at its prompt; it stays open."
            if result.prompt_back
            else "The REPL did not come back to its prompt within 3 s of SIGINT; it may "
            "still be evaluating. Ask the person, or close the REPL."
        )
    elif result.prompt_back:
        status = "" if result.status is None else f" (its status: {result.status})"
        lines.append(f"The command stopped and the shell prompt came back{status}.")
    else:
        lines.append(
            "The command survived SIGINT and SIGQUIT and is still running in the bridge "
            "terminal. Ask the person to stop it; tmux-send refuses to run anything "
            "else there until it ends."
        )
    return lines


def to_document(
    result: CallResult,
    stdout: bytes | None = None,
    stderr: bytes | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """The JSON document of a result (``tmux-send --json``, the HTTP API, MCP).

    ``stdout``/``stderr`` default to what the result collected. Output that is not
    valid UTF-8 is carried losslessly in base64 beside its text form (undecodable bytes
    shown as U+FFFD). ``notes`` are remarks made during the call (a wait for the lock,
    a command waiting for input); the account of :func:`describe` is added to them.
    """
    document: dict[str, Any] = {
        "id": result.call_id,
        "mode": result.mode,
        "pane": result.pane,
        "target": result.target,
        "label": result.label or None,
        "command": result.command,
        "exit_status": result.exit_status,
        "status": result.status,
        "timed_out": result.timed_out,
        "signals_sent": list(result.signals_sent),
        "duration_s": round(result.duration, 3),
        "shell": result.repl if result.mode == "repl_eval" else (result.shell or result.repl),
        "repl": result.repl,
        "waited_for_input": result.waited_for_input,
        "input_detected_by": result.input_detected_by,
        "stderr_merged": result.stderr_merged,
        "far": result.far,
        "shell_restarted": result.shell_restarted,
        "job": result.job,
        "error": None,
        "error_code": None,
    }
    if result.screen is not None:
        document["screen"] = result.screen
    if result.file is not None:
        document["file"] = file_document(result.file)
    if result.backups is not None:
        document["backups"] = [backup._asdict() for backup in result.backups]
    out = result.stdout if stdout is None else stdout
    err = result.stderr if stderr is None else stderr
    for name, data in (("stdout", out), ("stderr", err)):  # before the texts: see _counts
        _counts(document, name, data or b"")
    _add_output(document, "stdout", out, result.mode)
    _add_output(document, "stderr", err)
    report = describe(result)
    document["notes"] = [*(notes or []), *([report.rstrip("\n")] if report else [])]
    return document


def file_document(facts: FileFacts) -> dict[str, Any]:
    """The ``file`` object of a write, read, edit, stat or restore: ``mode`` as an octal
    string (``"0644"``), ``mtime`` in seconds since the epoch, ``backup`` ``null`` when
    none, ``status`` (``created``, ``updated``, ``unchanged``) and ``md5`` ``null``
    where the operation gives none."""
    return {
        "path": facts.path,
        "abs_path": facts.abs_path,
        "size": facts.size,
        "sha256": facts.sha256,
        "mode": None if facts.mode is None else f"{facts.mode:04o}",
        "mtime": facts.mtime,
        "backup": facts.backup,
        "status": facts.status,
        "md5": facts.md5,
    }


def error_document(
    error: BridgeError, command: str, mode: str, notes: list[str] | None = None
) -> dict[str, Any]:
    """The JSON document of a call that could not be made (nothing was typed), or that
    failed midway: ``stdout``/``stderr`` then hold what it printed until then; ``pane``
    once the pane was found (a refusal names the pane that refused)."""
    return {
        "id": None,
        "mode": mode,
        "pane": error.pane,
        "target": None,
        "label": None,
        "command": command,
        "exit_status": error.exit_code,
        "status": None,
        "timed_out": None,
        "signals_sent": [],
        "duration_s": 0.0,
        "shell": None,
        "repl": None,
        "waited_for_input": False,
        "input_detected_by": None,
        "stderr_merged": False,
        "far": None,
        "shell_restarted": False,
        "job": None,
        "error": error.render(),
        "error_code": error.code,
        "stdout": error.partial_stdout.decode("utf-8", "replace"),
        "stderr": error.partial_stderr.decode("utf-8", "replace"),
        "notes": list(notes or []),
    }


def _counts(document: dict[str, Any], name: str, data: bytes) -> None:
    """``NAME_truncated``, ``NAME_file``, ``NAME_lines`` and ``NAME_bytes`` of a whole
    stream (a face that cuts it sets the first two). They come before the texts, so a
    reader that sees only the document's head still learns a stream was cut and where
    all of it is."""
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    document[f"{name}_truncated"] = False
    document[f"{name}_file"] = None
    document[f"{name}_lines"] = lines
    document[f"{name}_bytes"] = len(data)


def _add_output(
    document: dict[str, Any], name: str, data: bytes | None, mode: str = "command"
) -> None:
    """The text of ``data``; when it is not UTF-8, also its bytes in base64 (a file read
    gives only those: its text, U+FFFD for every stray byte, would be noise and costs
    several times the file's size in memory)."""
    raw = data or b""
    try:
        document[name] = raw.decode("utf-8")
    except UnicodeDecodeError:
        import base64

        document[name] = None if mode == "read" else raw.decode("utf-8", "replace")
        document[name + "_b64"] = base64.b64encode(raw).decode("ascii")


# --- dry runs -------------------------------------------------------------------------


def check_document(result: CheckResult, notes: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON document of a dry run (``tmux-send --check --json``)."""
    return {"mode": "check", **result._asdict(), "notes": list(notes)}


def describe_check(result: CheckResult) -> str:
    """The dry run for a person or an agent to read, a line per question."""
    if result.kind is not None:
        return _describe_content(result)
    if result.parses is None:
        parses = "not checked" + (f": {result.parse_error}" if result.parse_error else "")
    elif result.parses:
        parses = "yes"
    else:
        parses = "no"
    if result.parses is not None and result.parsed_by:
        parses += f" ({result.parsed_by} of this machine checked it)"
    if result.parses is False:
        parses += "\n" + _indent(result.parse_error or "")
    if result.first_word is None:
        first = "none (no command word)"
    else:
        how = (result.resolves_as or "unknown").replace("_", " ")
        first = f"{result.first_word!r}: {how}" + _why_unknown(result)
    ready = "yes" if result.ready else f"no ({result.error_code})\n" + _indent(result.reason or "")
    shell = result.shell or "none tmux-send can drive"
    if result.far is not None:
        where = {"last_call": "from its last call", "probe": "from the probe"}.get(
            result.far["kind_from"], "its kind not known yet"
        )
        via = result.far["via"]
        shell = f"{result.shell or 'unknown'}: the far shell behind `{via}` ({where})"
    lines = [
        f"pane        {result.pane}",
        f"shell       {shell}",
        f"parses      {parses}",
        f"first word  {first}",
        f"ready       {ready}",
        f"would exit  {result.would_exit}" + (" (it would run)" if result.would_exit == 0 else ""),
    ]
    return "\n".join(lines) + "\n"


def _describe_content(result: CheckResult) -> str:
    """A check by kind, a line per question."""
    if result.valid is None:
        valid = "not checked" + (f": {result.parse_error}" if result.parse_error else "")
    else:
        valid = "yes" if result.valid else "no\n" + _indent(result.parse_error or "")
    lines = [
        f"pane        {result.pane}",
        f"kind        {result.kind}",
        f"validator   {result.validator or 'none'}",
        f"valid       {valid}",
        f"would exit  {result.would_exit}",
    ]
    return "\n".join(lines) + "\n"


def _why_unknown(result: CheckResult) -> str:
    if result.resolves_as != "unknown":
        return ""
    if result.typed_lookup:
        return " (the lookup gave no answer in time)"
    if not result.ready:
        return " (not looked up: the pane is not ready)"
    if not result.parses:
        return " (not looked up: the command does not parse)"
    return " (it expands only when run)"


def _indent(text: str) -> str:
    return "\n".join("            " + line for line in text.splitlines())
