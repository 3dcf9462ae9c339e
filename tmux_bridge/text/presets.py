"""REPL presets: how each interpreter is told to evaluate code, mark the end, and quit.

Pure text, no I/O. Most presets never type the agent's code: it goes to a file and the
REPL is given one short line that loads it (``exec(open(...).read())``, ``\\i file``,
``.read file``), so multi-line blocks, quotes, tabs and 100 KB of code arrive intact and
nothing of the code is echoed. The loaded text prints a start marker, evaluates the
code the way the REPL itself would (expression values shown, errors reported), and then
prints the end marker, in the REPL's own language: completion is known for certain.

``nix repl`` cannot load a file into its own scope, so its code is pasted as input, and
the markers are expressions it evaluates before and after (in the clean transcript,
paths whose values hide the markers and erase the expressions' rows).
"""

from __future__ import annotations

import json

from ..tuples import NamedTuple
from .markers import (
    HIDDEN_CLOSE,
    HIDDEN_OPEN,
    MARK,
    MARK_PRINTF,
    end_marker,
    hidden,
    start_marker,
)
from .seams import escaped_argument
from .shells import erase_typed


class EvalPlan(NamedTuple):
    """What one evaluation needs: files to write, and what to type into the REPL."""

    files: dict[str, bytes]  # path -> content (the agent's code among them)
    typed: str  # typed into the REPL, then Enter; for nix: pasted, several lines
    echo_lines: tuple[str, ...] = ()  # typed lines whose echo lands between the markers
    markers: bool = True  # False: a REPL without a preset, done when its prompt is back
    lead: bytes = b"\r\n"  # what precedes the end marker in the pane's output stream
    # typed a line at a time (nix, more than the terminal takes at once): the first
    # stage like ``typed``, each next one once the REPL reads again, which the last
    # line of its output stream, escapes and carriage returns taken out, shows when
    # ``reading`` matches it in full (its prompt or its continuation prompt)
    stages: tuple[str, ...] = ()
    reading: str = ""


# Python: evaluate statement by statement in "single" mode, as the REPL does, so that
# expression values are shown; skip our own frame in tracebacks. One evaluator for the
# local REPL (the code in a file at ``p``) and the far one (the code typed as ``c``):
# ``g`` the REPL's globals, ``b`` the start marker, ``e`` the end marker with ``%s`` for
# the status, ``n`` what goes before it.
_PYTHON_RUN = """\
def __tmux_send_run(g, b, e, n, c, p=None):
    import ast, sys, traceback
    sys.stdout.write(b)
    sys.stdout.flush()
    s = 0
    try:
        if p is not None:
            with open(p, encoding="utf-8", errors="surrogateescape") as f:
                c = f.read()
        for x in ast.parse(c, "<tmux-send>", "exec").body:
            exec(compile(ast.Interactive(body=[x]), "<tmux-send>", "single"), g)
    except SystemExit:
        sys.stdout.write(n + e % "0")
        sys.stdout.flush()
        raise
    except BaseException as exc:
        s = 1
        t = exc.__traceback__
        traceback.print_exception(type(exc), exc, t.tb_next if t else None)
    sys.stderr.flush()
    sys.stdout.write(n + e % ("%d" % s))
    sys.stdout.flush()
"""

# The presets that work in a far shell get a helper, typed into the REPL once
# (calls/farrepl.py drives them): python's calls the same evaluator.
_PYTHON_HELPER = (
    _PYTHON_RUN
    + """\
def __tmux_send_far(i, c, h=None, w=0):
    m = "MARK"
    o, z = ("", "\\n") if h is None else ("OPEN", "CLOSE")
    b = (h or "") + o + m + "START_" + i + "___" + z
    e = o + m + "END_" + i + " %s___" + m + "ERR_" + i + "___" + z
    e += " " * w + "\\r\\x1b[K" if w else ""
    __tmux_send_run(globals(), b, e, "\\n" if h is None else "", c)
"""
)

# node: the code runs as a script in the REPL's own context (top-level let/const
# persist), its value shown as the REPL would, errors reported as "Uncaught ...".
_NODE_HELPER = """\
globalThis.__tmux_send_q = () => {  // no "undefined" for the line typed, once
  const r = require("repl").repl, quiet = r ? r.ignoreUndefined : false;
  if (r) {
    r.ignoreUndefined = true;
    setImmediate(() => { r.ignoreUndefined = quiet; });
  }
};
globalThis.__tmux_send_far = (i, c, h, w) => {
  const vm = require("vm"), util = require("util"), m = "MARK";
  __tmux_send_q();
  const o = h === undefined ? "" : "OPEN", z = h === undefined ? "\\n" : "CLOSE";
  process.stdout.write((h || "") + o + m + "START_" + i + "___" + z);
  let s = 0;
  try {
    const v = vm.runInThisContext(c, { filename: "tmux-send", breakOnSigint: true });
    if (v !== undefined) console.log(util.inspect(v, { colors: false }));
  } catch (e) {
    s = 1;
    const text = e instanceof Error ? `${e.name}: ${e.message}` : util.inspect(e);
    const frames = e instanceof Error && e.stack
      ? e.stack.split("\\n").filter((l) => l.includes("tmux-send:")) : [];
    console.log(["Uncaught " + text, ...frames.filter((l) => l.startsWith("    at"))].join("\\n"));
  }
  const n = h === undefined ? "\\n" : "";
  const pad = w ? " ".repeat(w) + "\\r\\x1b[K" : "";
  process.stdout.write(n + o + m + "END_" + i + " " + s + "___" + m + "ERR_" + i + "___" + z + pad);
};
"""


def _far_helper(source: str) -> str:
    """A far helper's source with the marker's start and the hidden marker's ends."""
    source = source.replace('"MARK"', f'"{MARK}"')
    return source.replace('"OPEN"', json.dumps(HIDDEN_OPEN)).replace(
        '"CLOSE"', json.dumps(HIDDEN_CLOSE)
    )


class FarRepl(NamedTuple):
    """How one preset's REPL is driven in a far shell (calls/farrepl.py drives it)."""

    typed: str  # a regex: the REPL's prompt with text typed after it
    define: str  # the helper's source, evaluated by one typed line
    wrap: str  # how that line evaluates a string literal ({lit}), then prints {mark}
    variable: str  # the statement that sets the buffer of a long literal ({op}, {lit})
    astral: str  # a character beyond U+FFFF in a string literal (a format of its code)
    hide: str  # empties that buffer, prints the string literal {lit} if the helper is in


class Preset(NamedTuple):
    name: str
    aliases: tuple[str, ...]
    ready: str  # regex matched against the last line on screen: the REPL's prompt
    quit: str  # typed to leave the REPL the way it expects
    error: str | None  # regex over the output when the end marker carries no status
    far: FarRepl | None = None  # how it runs in a far shell (python, node), if it can
    # its prompt while a statement or block the person began is unfinished (rstripped)
    continued: str | None = None


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "python",
            ("python3", "py"),
            r"^(>>>|\.\.\.) ?$",
            "exit()",
            None,
            FarRepl(
                r"^(>>>|\.\.\.) \S",
                _far_helper(_PYTHON_HELPER),
                "exec({lit}); print({mark}, end='')",
                "__tmux_send_c {op} {lit}",
                "\\U{:08x}",
                "__tmux_send_c = '';"
                " print({lit} if '__tmux_send_far' in globals() else '', end='')",
            ),
            r"\.\.\.",
        ),
        Preset(
            "node",
            ("nodejs", "js"),
            r"^> ?$",
            ".exit",
            None,
            FarRepl(
                r"^> \S",
                _far_helper(_NODE_HELPER),
                "eval({lit}); __tmux_send_q(); void process.stdout.write({mark})",
                "void (globalThis.__tmux_send_c {op} {lit})",
                "\\u{{{:x}}}",
                "globalThis.__tmux_send_c = '';"
                " void process.stdout.write(globalThis.__tmux_send_far ? {lit} : '')",
            ),
            r"\.\.\.",
        ),
        Preset(
            "psql",
            ("postgres", "postgresql"),
            r"^[^\s]*[=(-][#>] ?$",
            "\\q",
            r"^(psql:.*?)?(ERROR|FATAL|PANIC):",
            continued=r"[^\s]*[-('\"*$][#>]",  # PROMPT2: in a statement, parentheses, a quote
        ),
        Preset(
            "sqlite",
            ("sqlite3",),
            r"^sqlite> ?$",
            ".quit",
            r"^(Error|Parse error|Runtime error)\b",
            continued=r"\s*\.\.\.>",
        ),
        Preset("nix", ("nix-repl",), r"^nix-repl> ?$", ":q", r"^error:"),
    )
}

# The presets whose REPL may stop reading tmux-send's files at an error in the code, back
# at its prompt with no end marker, by name: the setting that makes it do so.
STOPS_SHORT = {"psql": "ON_ERROR_STOP", "sqlite": ".bail"}

# The presets that run in a far shell, by name: a view of PRESETS.
FAR_REPLS: dict[str, FarRepl] = {p.name: p.far for p in PRESETS.values() if p.far is not None}


def find_preset(name: str) -> Preset | None:
    """The preset called ``name`` or one of its aliases."""
    for preset in PRESETS.values():
        if name == preset.name or name in preset.aliases:
            return preset
    return None


class Look(NamedTuple):
    """How a clean transcript shows an evaluation (python, node): the REPL's prompt
    ends at ``cursor_x`` of a ``width``-column pane; ``banner`` is the header."""

    cursor_x: int
    width: int
    banner: str
    tag: str = "[tmux-send]"  # the banner's mark alone (nix: a line above its own echo)


def plan_eval(
    preset: Preset,
    call_id: str,
    code: bytes,
    directory: str,
    look: Look | None = None,
    cwd: str | None = None,
) -> EvalPlan:
    """Files and the typed input for evaluating ``code`` in ``preset``'s REPL. With
    ``look`` (python, node, psql, sqlite), the typed line is erased, a dim header
    shown, and the markers hidden (nix: its own echo of the code stays, the lines
    around it go); without it (``--verbose-transcript``, a REPL without a preset) they
    show. ``cwd``: psql's working directory, when known."""
    base = f"{directory}/{call_id}"
    start = start_marker(call_id)
    if preset.name in ("python", "node"):
        make = _python if preset.name == "python" else _node
        plan = make(call_id, code, base, _Marks.bare(start, end_marker(call_id, "%s")))
        if look is None:
            return plan
        erase = erase_typed(look.cursor_x, len(plan.typed), look.width)
        marks = _Marks.hidden(erase + _DIM + look.banner + _UNDIM + "\n", call_id)
        return make(call_id, code, base, marks)
    if preset.name == "psql":
        if look is not None:
            return _psql_clean(call_id, code, base, look, cwd)
        return _psql(call_id, code, base, start)
    if preset.name == "sqlite":
        if look is not None:
            return _sqlite_clean(call_id, code, base, look)
        return _sqlite(call_id, code, base, start)
    if preset.name == "nix":
        if look is not None:
            return _nix_clean(call_id, code, look)
        return _nix(call_id, code, start)
    # a REPL without a preset (--prompt): the code is pasted; its prompt ends the output
    text = code.decode("utf-8", "surrogateescape")
    return EvalPlan({}, text, tuple(text.split("\n")), markers=False)


_CRLF = "\r\n"  # before the local end marker
_DIM, _UNDIM = "\x1b[2m", "\x1b[0m"


class _Marks(NamedTuple):
    """What an evaluation prints before its output (``begin``), and after it: ``lead``
    then ``end`` (with ``%s`` for the status)."""

    begin: str
    lead: str
    end: str

    @staticmethod
    def bare(start: str, end: str) -> _Marks:
        return _Marks(start + "\n", _CRLF, end + "\n")

    @staticmethod
    def hidden(head: str, call_id: str) -> _Marks:
        """The line end before the end marker goes inside its OSC string: tmux shows
        nothing of it, and the output is the REPL's exactly, final newline or not."""
        opener = HIDDEN_OPEN + _CRLF
        end = end_marker(call_id, "%s") + HIDDEN_CLOSE
        return _Marks(head + hidden(start_marker(call_id)), opener, end)


_PYTHON = (
    _PYTHON_RUN
    + """\
try:
    __tmux_send_run(globals(), ARGS)
finally:
    del __tmux_send_run
"""
)


def _python(call_id: str, code: bytes, base: str, marks: _Marks) -> EvalPlan:
    args = f"{marks.begin!r}, {marks.end!r}, {marks.lead!r}, None, {base + '.code'!r}"
    wrapper = _PYTHON.replace("ARGS", args)
    typed = f"exec(open({base + '.py'!r}).read())"
    files = {base + ".code": code, base + ".py": wrapper.encode()}
    return EvalPlan(files, typed, lead=_stream_lead(marks))


def _stream_lead(marks: _Marks) -> bytes:
    """What precedes the end marker in the pane's stream (see MarkerScanner): the
    terminal sends the lead's CR LF on as CR CR LF."""
    return marks.lead.replace(_CRLF, "\r\r\n").encode()


# node: run the code as a script in the REPL's own context (top-level let/const persist),
# show the value as the REPL would, report errors as "Uncaught ...".
_NODE = """\
(() => {
  const vm = require("vm"), util = require("util"), fs = require("fs");
  const code = fs.readFileSync(CODE, "utf8");
  const r = require("repl").repl, quiet = r ? r.ignoreUndefined : false;
  if (r) {  // no "undefined" for the line typed: once the REPL has shown its value
    r.ignoreUndefined = true;
    setImmediate(() => { r.ignoreUndefined = quiet; });
  }
  process.stdout.write(START);
  let status = 0;
  try {
    const value = vm.runInThisContext(code, { filename: "tmux-send", breakOnSigint: true });
    if (value !== undefined) console.log(util.inspect(value));
  } catch (e) {
    status = 1;
    const text = e instanceof Error ? `${e.name}: ${e.message}` : util.inspect(e);
    const frames = e instanceof Error && e.stack
      ? e.stack.split("\\n").filter((l) => l.includes("tmux-send:")) : [];
    console.log(["Uncaught " + text, ...frames.filter((l) => l.startsWith("    at"))].join("\\n"));
  }
  process.stdout.write(LEAD + END.replace("%s", String(status)));
})()
"""


def _node(call_id: str, code: bytes, base: str, marks: _Marks) -> EvalPlan:
    wrapper = (
        f"const START = {json.dumps(marks.begin)}, END = {json.dumps(marks.end)},"
        f" LEAD = {json.dumps(marks.lead)}, CODE = {json.dumps(base + '.code')};\n" + _NODE
    )
    wrapped = "{\n" + wrapper + "}\n"
    typed = f"eval(require('fs').readFileSync({json.dumps(base + '.js')}, 'utf8'))"
    files = {base + ".code": code, base + ".js": wrapped.encode()}
    return EvalPlan(files, typed, lead=_stream_lead(marks))


def _psql(call_id: str, code: bytes, base: str, start: str) -> EvalPlan:
    # the pager would wait for keys; ";" runs a last statement the agent left open
    text = (
        b"\\pset pager off\n\\echo " + start.encode() + b"\n" + code
        + b"\n;\n\\echo\n\\echo " + end_marker(call_id).encode() + b"\n"
    )  # fmt: skip
    return EvalPlan({base + ".sql": text}, f"\\i {base}.sql")


def _sqlite(call_id: str, code: bytes, base: str, start: str) -> EvalPlan:
    text = (
        b".print " + start.encode() + b"\n" + code
        + b"\n;\n.print\n.print " + end_marker(call_id).encode() + b"\n"
    )  # fmt: skip
    return EvalPlan({base + ".sql": text}, f".read {base}.sql")


def _header(look: Look, typed: str) -> str:
    """What takes the place of the line typed into the REPL: the dim header."""
    return erase_typed(look.cursor_x, len(typed), look.width) + _DIM + look.banner + _UNDIM


def _arg(text: str) -> str:
    """``text`` for a quoted argument of psql or sqlite: a marker's first underscore
    escaped too, so that a REPL echoing what it reads (``\\set ECHO all``, ``.echo on``)
    echoes no marker."""
    return escaped_argument(text.encode("utf-8", "surrogateescape")).replace(MARK, MARK_PRINTF)


# The code of a clean psql evaluation is read by a second \i from the pane's directory
# under this name, so that psql's own report of an error in it names no path and no
# id (``psql:<tmux-send>:1: ERROR: ...``, as python's traceback says "<tmux-send>"); its
# first line takes psql back to its own working directory, then the agent's code goes on
# on the same line (after psql's ``\\\\`` separator): line numbers are the code's.
PSQL_CODE = "<tmux-send>"

# \pset prints what it set unless QUIET is on: on for it, then back as it was.
_PSQL_PAGER_OFF = (
    "\\set __tmux_send_quiet :QUIET\n\\set QUIET on\n\\pset pager off\n"
    "\\set QUIET :__tmux_send_quiet\n\\unset __tmux_send_quiet\n"
)


# psql echoes each line it reads when the person asked for it (``-a``, ``-e``, ``\\set
# ECHO all``): ECHO is ``none`` while tmux-send's file and the agent's code are read (the
# typed line saves the person's value first; each line that changes it is read before
# the change), then the person's value again, unless the code set ECHO itself (any value
# but ``none``: an ``\\if`` on a variable named after the value tells).
# With ON_ERROR_STOP on, an error in the code ends every file being read and the line
# that read them: psql goes back to its prompt, no end marker comes (the call ends when
# psql is seen reading its terminal there: STOPS_SHORT) and ECHO stays ``none``; so the
# person's ECHO is saved only when no call left it saved, and the next call that ends
# puts it back.
_PSQL_SAVED = "__tmux_send_echo"
_PSQL_ECHO_OFF = (
    f"\\if :{{?{_PSQL_SAVED}}} \\\\ \\else \\\\ \\set {_PSQL_SAVED} :ECHO \\\\ \\endif"
    " \\\\ \\set ECHO none \\\\ "
)
_PSQL_ECHO_AFTER = "\\set __tmux_send_after :ECHO \\\\ \\set ECHO none"
_PSQL_ECHO_BACK = (
    "\\set ECHO :__tmux_send_after \\\\ \\set __tmux_send_e_:__tmux_send_after 1 \\\\"
    f" \\if :{{?__tmux_send_e_none}} \\\\ \\set ECHO :{_PSQL_SAVED} \\\\ \\endif \\\\"
    " \\unset __tmux_send_e_:__tmux_send_after \\\\ \\unset __tmux_send_after \\\\"
    f" \\unset {_PSQL_SAVED}\n"
)


def _psql_clean(call_id: str, code: bytes, base: str, look: Look, cwd: str | None) -> EvalPlan:
    """psql's ``\\echo -n`` prints the header and the hidden markers (octal escapes in
    its quoted argument) and no line end of its own."""
    typed = _PSQL_ECHO_OFF + f"\\i {base}.sql"
    begin = _header(look, typed) + "\n" + hidden(start_marker(call_id))
    inner, read, include, first = base + ".code", base + ".code", "", b""
    if cwd is not None:  # else psql's report of an error names the file
        directory = base.rsplit("/", 1)[0]
        inner, read = f"{directory}/{PSQL_CODE}", PSQL_CODE
        include = f"\\cd '{_arg(directory)}'\n"
        first = f"\\cd '{_arg(cwd)}' \\\\ ".encode()
    text = (
        _PSQL_PAGER_OFF + f"\\echo -n '{_arg(begin)}'\n" + include
        + f"\\i '{_arg(read)}' \\\\ {_PSQL_ECHO_AFTER}\n"
        + f"\\echo -n '{_arg(hidden(end_marker(call_id)))}'\n" + _PSQL_ECHO_BACK
    )  # fmt: skip
    # (a statement the code leaves without its ";" is sent at the end of the file)
    files = {base + ".sql": text.encode(), inner: first + code + b"\n"}
    return EvalPlan(files, typed, lead=HIDDEN_OPEN.encode())


# sqlite's .print always ends with a line end: the start marker's goes after the header
# (a ";" after the marker's text tells MarkerScanner that the output starts on the next
# line), and the end marker's is undone by a cursor-up before it (the output ends with a
# line end, as sqlite's always do, so the prompt comes back where sqlite would put it).
_UP = "\x1b[A"


def _sqlite_clean(call_id: str, code: bytes, base: str, look: Look) -> EvalPlan:
    typed = f".read {base}.sql"
    begin = _header(look, typed) + HIDDEN_OPEN + start_marker(call_id) + ";" + HIDDEN_CLOSE
    text = (
        f'.print "{_arg(begin)}"\n.read "{_arg(base + ".code")}"\n'
        f'.print "{_arg(_UP + hidden(end_marker(call_id)))}"\n'
    )
    files = {base + ".sql": text.encode(), base + ".code": code + b"\n;\n"}
    return EvalPlan(files, typed, lead=(_UP + HIDDEN_OPEN).encode())


def _nix(call_id: str, code: bytes, start: str) -> EvalPlan:
    # Strings split in two, so that their echo never contains the marker itself.
    half = len(start) // 2
    start_expr = f'"{start[:half]}" + "{start[half:]}"'
    end = end_marker(call_id)
    end_expr = f'"{end[:half]}" + "{end[half:]}"'
    lines = code.decode("utf-8", "surrogateescape").split("\n")
    return _nix_plan([start_expr, *lines, end_expr])


# nix repl's prompt: the echo of every line pasted into it starts after it.
NIX_PROMPT = "nix-repl> "


def _nix_clean(call_id: str, code: bytes, look: Look) -> EvalPlan:
    """The code pasted between two expressions whose values (paths, printed raw after a
    ``/``) erase their own echo and value rows, carry the markers hidden, and move the
    cursor up the two line ends nix prints after a value: the prompt and echo that
    follow land where the expression's echo was, under the dim tag (``[tmux-send]``,
    with the agent's name when known) that the first one prints there: the code's own
    echo is the rest of the header."""
    width = look.width
    start_expr = _nix_eraser(hidden(start_marker(call_id)), width, look.tag)
    end_expr = _nix_eraser(hidden(end_marker(call_id)), width)
    lines = code.decode("utf-8", "surrogateescape").split("\n")
    return _nix_plan([start_expr, *lines, end_expr], HIDDEN_OPEN.encode())


# What a terminal surely takes at once while nix reads it (Linux holds 4096 bytes of
# input, the BSDs and macOS 1024), and what nix's line editor shows when it reads again:
# its prompt, or the ten spaces that continue an unfinished expression.
PASTE_AT_ONCE = 512
NIX_READING = r"nix-repl> | {10}"


def _nix_plan(lines: list[str], lead: bytes = b"\r\n") -> EvalPlan:
    """The start expression, the code's lines and the end expression, pasted at once
    when the terminal takes them all before nix reads the first, else a line at a time.
    While nix evaluates a line its terminal is cooked: what arrives then is echoed by
    the terminal, and again by nix's line editor when it reads it, and the output would
    hold that first echo."""
    typed = "\n".join(lines)
    stages: tuple[str, ...] = ()
    if len(typed.encode("utf-8", "surrogateescape")) > PASTE_AT_ONCE:
        stages = tuple(lines)
    return EvalPlan({}, typed, tuple(lines[1:]), lead=lead, stages=stages, reading=NIX_READING)


def _nix_eraser(marker: str, width: int, tag: str = "") -> str:
    """A nix expression whose echo (after :data:`NIX_PROMPT` in a ``width``-column pane)
    and value rows are erased by its value, which prints ``marker`` (and ``tag``, dim,
    on a row of its own, before the marker: not output) and leaves the cursor two rows
    above the row after those. Typed as JSON escapes, the marker's first underscore
    escaped too: the echo holds no marker. The rows are deleted, not
    erased to the screen's end: tmux takes that, from the screen's first cell, for a
    clear, and keeps what the screen held in the history."""
    rows = 1
    for _ in range(3):  # the row count is in the expression: until it holds
        shown = f"{_DIM}{tag[: max(width - 1, 0)]}{_UNDIM}\r" if tag else ""
        up = 1 if tag else 2
        content = f"\r\x1b[{rows}A\x1b[{rows + 1}M{shown}{marker}\x1b[{up}A"
        literal = json.dumps("/" + content).replace(MARK, "\\u005f" + MARK[1:])
        expr = f"/. + builtins.fromJSON ''{literal}''"
        end = len(NIX_PROMPT) + len(expr)
        if end % width == 0:  # a full last row: readline moves to the next one first
            expr += " "
            end += 1
        rows, wanted = (end - 1) // max(width, 1) + 1, rows
        if rows == wanted:
            break
    return expr


def describe_presets() -> str:
    """One line per preset, for --help and errors."""
    return "\n".join(
        f"  {p.name:<8} {', '.join(p.aliases):<22} quits with {p.quit}" for p in PRESETS.values()
    )
