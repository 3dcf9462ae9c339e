"""Checks by kind: whether text is valid JSON, YAML, TOML, Python, a jq filter or shell
code of one kind, decided by the validators the pane's host has.

The text travels to the pane's shell as a write's bytes do
(:mod:`tmux_bridge.calls.files`: a private file here, the typed command for a far
shell), and :data:`SCRIPT`, a POSIX sh script, runs the first validator of its kind
found there: ``python3`` (``json``, ``tomllib``, PyYAML's ``yaml``, ``compile`` to an
AST), else ``jq`` for JSON; ``jq -n`` compiling a filter; ``sh -n``, ``bash -n``,
``zsh -n`` or ``fish --no-execute`` for shell code. Nothing runs the text: Python only
parses it, jq compiles the filter inside a branch never taken, the shells only parse.
When the host has no validator for the kind, the result says so (``validator``
``None``, ``valid`` ``None``).
"""

from __future__ import annotations

import re
from typing import BinaryIO

from ..cancel import Cancel
from ..errors import FileError, InvalidRequest
from ..results import CheckResult, RunOptions
from ..target import Target
from .files import _Call, _file_options, _run_script, _visible
from .frame import Notice, pane_call

KINDS = ("json", "yaml", "toml", "python", "jq", "sh", "bash", "zsh", "fish")
EXTENSIONS = {
    ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".py": "python",
    ".jq": "jq", ".sh": "sh", ".bash": "bash", ".zsh": "zsh", ".fish": "fish",
}  # fmt: skip
INVALID_EXIT = 1  # the status of a content check that found an error

# The Python validators: the kind on the command line, the text on stdin. Prints the
# report as the script does; exits 3 when python3 lacks the kind's module.
_PYTHON = r"""import re, sys
k = sys.argv[1]
d = sys.stdin.buffer.read()
def out(r, l=0, c=0, m=""):
    m = " ".join(str(m).split())
    if not l:
        f = re.search(r"line (\d+)", m)
        l = int(f.group(1)) if f else 0
    if not c:
        f = re.search(r"col(?:umn)? (\d+)", m)
        c = int(f.group(1)) if f else 0
    sys.stdout.write("tmux-send-check 1\0python3\0%s\0%d\0%d\0%s\0" % (r, l, c, m))
    sys.exit(0)
try:
    if k == "json":
        import json
        json.loads(d)
    elif k == "toml":
        import tomllib
        tomllib.loads(d.decode("utf-8"))
    elif k == "yaml":
        import yaml
        list(yaml.safe_load_all(d))
    else:
        compile(d, "<text>", "exec", 1024, dont_inherit=True)
except ImportError:
    sys.exit(3)
except Exception as e:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    if mark is not None:
        out("invalid", mark.line + 1, mark.column + 1, e)
    line = getattr(e, "lineno", 0) or 0
    col = getattr(e, "colno", 0) or getattr(e, "offset", 0) or 0
    out("invalid", line, col, getattr(e, "msg", None) or e)
out("valid")
"""
assert "'" not in _PYTHON

SCRIPT = r"""# tmux-send's checks by kind, run by /bin/sh in the pane's shell: the text on stdin,
# the kind as $1. On stdout: tmux-send-check 1, the validator, the result (valid,
# invalid or none), the line, the column and the message, each ended by a NUL.
kind=$1
PYCHECK='{python}'
report() { printf 'tmux-send-check 1\0%s\0%s\0%s\0%s\0%s\0' "$1" "$2" "$3" "$4" "$5"; }
has() { command -v "$1" >/dev/null 2>&1; }
shell() {  # $1 parses the text without running it
    has "$1" || { report "" none 0 0 "no $1 here"; return 0; }
    if [ "$1" = fish ]; then m=$(fish --no-execute 2>&1); else m=$("$1" -n 2>&1); fi
    if [ $? = 0 ]; then report "$1" valid 0 0 ""; else report "$1" invalid 0 0 "$m"; fi
}
jq_json() {
    if m=$(jq . 2>&1 >/dev/null); then report jq valid 0 0 ""; else report jq invalid 0 0 "$m"; fi
}
jq_filter() {  # compiled inside a branch never taken: never run
    f=$(cat)
    m=$(jq -n "if false then ($f
) else empty end" 2>&1 </dev/null)
    if [ $? = 3 ]; then report jq invalid 0 0 "$m"; else report jq valid 0 0 ""; fi
}
case $kind in
    json)
        if has python3; then python3 -c "$PYCHECK" json
        elif has jq; then jq_json
        else report "" none 0 0 "no python3 or jq here"; fi ;;
    yaml | toml | python)
        if has python3; then
            python3 -c "$PYCHECK" "$kind" \
                || report "" none 0 0 "the python3 here has no $kind parser"
        else report "" none 0 0 "no python3 here"; fi ;;
    jq) if has jq; then jq_filter; else report "" none 0 0 "no jq here"; fi ;;
    sh | bash | zsh | fish) shell "$kind" ;;
    *) report "" none 0 0 "no check for $kind" ;;
esac
""".replace("{python}", _PYTHON)
_MAGIC = b"tmux-send-check 1"


def kind_of(path: str | None, given: str | None) -> str | None:
    """The kind to check: ``given`` (one of :data:`KINDS`), else by ``path``'s
    extension; ``None`` when neither says. Raises :class:`InvalidRequest` for a kind
    not in :data:`KINDS`."""
    if given is not None:
        if given not in KINDS:
            raise InvalidRequest(
                f"{given!r} is not a kind tmux-send checks; the kinds: {', '.join(KINDS)}."
            )
        return given
    if path is None:
        return None
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return EXTENSIONS.get(name[dot:].lower()) if dot > 0 else None


def check_content(
    target: Target,
    data: bytes,
    kind: str | None,
    name: str,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
) -> CheckResult:
    """Whether ``data`` (named ``name``: a path, or ``-``) is valid ``kind``, by the
    validators of the pane's host; nothing is written or run. With no kind (an unknown
    extension), nothing is checked: ``valid`` ``None``. The result's ``would_exit`` is
    :data:`INVALID_EXIT` when the text is not valid, else 0; its ``kind`` is
    ``unknown`` when ``kind`` is ``None``."""
    if kind is None:
        from ..pane.info import find_pane

        pane = find_pane(target.tmux, target.session, target.pane).pane.pane_id
        unknown = ("", "none", 0, 0, "no kind known for this name: pass --as KIND")
        return _result(name, pane, None, unknown, "unknown")
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, name, options, notice, cancel)
        shown = f"check {_visible(name)} as {kind} ({len(data)} bytes)"
        run = _run_script(call, [kind], data, shown, _parse, SCRIPT)
        report = _report(run.data)  # None: interrupted (timed out or cancelled)
        return _result(name, run.record.pane, run.record.shell, report, kind)


def _parse(stream: BinaryIO, _path: str) -> tuple[None, bytes]:
    return None, stream.read()


Report = tuple[str, str, int, int, str]  # validator, result, line, column, message


def _report(data: bytes) -> Report | None:
    if not data:
        return None
    fields = data.split(b"\0")
    if len(fields) < 7 or fields[0] != _MAGIC:
        raise FileError(f"the pane's shell gave no account of the check: {data[:80]!r}.")
    validator, result, line, column, message = (f.decode("utf-8", "replace") for f in fields[1:6])
    number = int(line) if line.isdigit() else 0
    if not number:
        found = re.search(r"line (\d+)|^[^:\n]*: (\d+): ", message)
        number = int(found.group(1) or found.group(2)) if found else 0
    return validator, result, number, int(column) if column.isdigit() else 0, message.strip()


def _result(
    name: str, pane: str, shell: str | None, report: Report | None, kind: str
) -> CheckResult:
    unchecked = ("", "none", 0, 0, "the check was interrupted (timed out or cancelled)")
    validator, result, line, column, message = report or unchecked
    valid = {"valid": True, "invalid": False}.get(result)
    error = None
    if valid is False:
        where = f"line {line}" + (f", column {column}" if column else "") if line else ""
        error = {"line": line or None, "column": column or None, "message": message}
        message = f"{where}: {message}" if where else message
    return CheckResult(
        command=name, pane=pane, shell=shell, parses=valid,
        parse_error=message if valid is not True and message else None, first_word=None,
        resolves_as=None, ready=True, reason=None, error_code=None,
        would_exit=INVALID_EXIT if valid is False else 0, typed_lookup=False,
        parsed_by=None, kind=kind, validator=validator or None, valid=valid, error=error,
    )  # fmt: skip
