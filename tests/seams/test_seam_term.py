"""The seam to the person's terminal (tmux_bridge/text/seams.py, "the person's terminal"):
every byte and hostile payloads through visible(), visible_lines() and json_text(),
their properties (Hypothesis), the source scan that keeps both CLIs' prints on the seam,
and what a real terminal (a tmux pane) shows of tmux-bridge's and tmux-send's output.

The expected renderings come from elsewhere than the seam: ``cat -vT`` for the C0
controls and DEL, Python's ``repr`` for C1 controls, lone surrogates and bytes that are
not UTF-8, and tmux for what a terminal does with the result."""

from __future__ import annotations

import ast
import itertools
import json
import subprocess
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmux_bridge.text.seams import excerpt, json_text, shorten, visible, visible_lines

from ..support.pane import BIN, TestPane

PACKAGE = Path(__file__).resolve().parents[2] / "tmux_bridge"

# What a terminal acts on besides C0, DEL and C1 (seams.visible's docstring lists them).
FORMAT_CONTROLS = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
SEPARATORS = [0x2028, 0x2029]


def acts_on_terminal(char: str) -> bool:
    """Whether a terminal does something with ``char`` other than show it: a control
    (Unicode category Cc: C0, DEL, C1), a lone surrogate (Cs: what is left of a byte
    that was not UTF-8), a bidirectional control or a line or paragraph separator."""
    code = ord(char)
    return unicodedata.category(char) in ("Cc", "Cs") or code in FORMAT_CONTROLS + SEPARATORS


def cat_v(data: bytes) -> str:
    """What ``cat -vT`` shows of ``data`` (the C0 controls, tab included, and DEL in
    caret notation)."""
    result = subprocess.run(["cat", "-vT"], input=data, capture_output=True, check=True)
    return result.stdout.decode()


def repr_notation(char: str) -> str:
    """Python's own escape of a character it does not print (``\\x9b``, ``\\u202e``)."""
    return repr(char)[1:-1]


def byte_notation(byte: int) -> str:
    """Python's own escape of a byte (``\\x9b``)."""
    return repr(bytes([byte]))[2:-1]


# --- every byte, alone and inside text -------------------------------------------------

C0_AND_DEL = [*range(0x20), 0x7F]


def test_every_c0_control_and_del_shows_as_cat_v_shows_it() -> None:
    for code in C0_AND_DEL:
        char = chr(code)
        # cat writes a newline as itself; its caret form is ^J like every other C0
        expected = "^J" if char == "\n" else cat_v(char.encode())
        assert expected.startswith("^") and len(expected) == 2, (code, expected)
        assert visible(char) == expected, code
        assert visible(f"a{char}b") == f"a{expected}b", code


def test_every_code_point_up_to_ff_is_kept_or_shown() -> None:
    for code in range(0x100):
        char = chr(code)
        shown = visible(f"a{char}b")
        if code in C0_AND_DEL:
            continue  # above
        if 0x80 <= code < 0xA0:  # C1: CSI is 0x9b
            assert shown == f"a{repr_notation(char)}b", code
            assert shown == f"a\\x{code:02x}b", code
        else:  # printable ASCII and Latin-1 (the no-break space and soft hyphen too)
            assert shown == f"a{char}b", code


def test_every_byte_that_is_not_utf8_shows_as_the_byte() -> None:
    for byte in range(0x100):
        text = bytes([0x61, byte, 0x62]).decode("utf-8", "surrogateescape")
        shown = visible(text)
        if byte >= 0x80:  # alone, no byte from 0x80 up is UTF-8
            assert shown == f"a{byte_notation(byte)}b", byte
            shown.encode("utf-8")  # strict: no surrogate left
        else:
            assert shown == visible(f"a{chr(byte)}b"), byte


def test_other_invisible_characters_show_as_python_escapes() -> None:
    for code in [*FORMAT_CONTROLS, *SEPARATORS, 0xD800, 0xDBFF, 0xDC00, 0xDC7F, 0xDD00, 0xDFFF]:
        char = chr(code)
        assert visible(f"a{char}b") == f"a{repr_notation(char)}b", hex(code)
        assert visible_lines(f"a{char}b") == f"a{repr_notation(char)}b", hex(code)


def test_visible_lines_keeps_line_breaks_and_tabs_only() -> None:
    for code in range(0x100):
        char = chr(code)
        expected = char if char in "\n\t" else visible(char)
        assert visible_lines(f"a{char}b") == f"a{expected}b", code


class Payload(NamedTuple):
    test_id: str
    text: str
    shown: str  # cat -v's caret notation, Python's escapes


PAYLOADS = [
    Payload("osc0-title", "\x1b]0;pwned\x07", "^[]0;pwned^G"),
    Payload("osc52-clipboard", "\x1b]52;c;cHduZWQ=\x07", "^[]52;c;cHduZWQ=^G"),
    Payload("forged-line", "\r\x1b[2K2024-01-01 ok", "^M^[[2K2024-01-01 ok"),
    Payload("bracketed-paste-end", "\x1b[201~", "^[[201~"),
    Payload("c1-csi", "\x9b31m", "\\x9b31m"),
    Payload("c1-osc-st", "\x9d0;t\x9c", "\\x9d0;t\\x9c"),
    Payload("nel", "a\x85b", "a\\x85b"),
    Payload("byte-csi", "\udc9b2J", "\\x9b2J"),
    Payload("lone-surrogate", "\ud83d", "\\ud83d"),
    Payload("rlo", "\u202eabc", "\\u202eabc"),
    Payload("line-separator", "a\u2028b", "a\\u2028b"),
    Payload(
        "tmux-format",
        "#(touch /tmp/x) #{pane_id} #[fg=red]",
        "#(touch /tmp/x) #{pane_id} #[fg=red]",
    ),
    Payload("unicode", "héllo 日本語 🙂 e\u0301", "héllo 日本語 🙂 e\u0301"),
]


@pytest.mark.parametrize("case", PAYLOADS, ids=[p.test_id for p in PAYLOADS])
def test_payloads(case: Payload) -> None:
    assert visible(case.text) == case.shown
    assert visible_lines(case.text) == case.shown
    assert not any(acts_on_terminal(c) for c in visible(case.text))
    document = {"command": case.text}
    assert json.loads(json_text(document)) == document


def test_a_newline_inside_a_field_starts_no_line() -> None:
    assert visible("ls\nrm -rf ~") == "ls^Jrm -rf ~"
    assert visible_lines("ls\nrm\r\n") == "ls\nrm^M\n"


# --- JSON: valid, the same value, byte for byte as before for ordinary text ------------


def test_json_escapes_what_a_terminal_acts_on_and_nothing_else() -> None:
    for code in [*range(0x100), *FORMAT_CONTROLS, *SEPARATORS, 0xD800, 0xDC9B]:
        document = {"k": f"a{chr(code)}b"}
        text = json_text(document)
        assert json.loads(text) == document, code
        plain = json.dumps(document, ensure_ascii=False)
        if acts_on_terminal(chr(code)) and code >= 0x20:  # JSON escapes C0 itself
            assert text == plain.replace(chr(code), f"\\u{code:04x}"), code
        else:
            assert text == plain, code
        assert not any(acts_on_terminal(c) for c in text), code


def test_json_of_ordinary_text_is_as_json_dumps_writes_it() -> None:
    document = {"command": "grep -r 'héllo' . | wc -l", "n": [1, 2.5, None, True], "e": "日本"}
    assert json_text(document) == json.dumps(document, ensure_ascii=False)


# --- properties ------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)
PRINTABLE = st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")))


@settings(max_examples=300)
@given(ANY_TEXT)
def test_no_output_of_the_seam_holds_what_a_terminal_acts_on(text: str) -> None:
    shown = visible(text)
    assert not any(acts_on_terminal(c) for c in shown)
    assert "\n" not in shown
    lines = visible_lines(text)
    assert not any(acts_on_terminal(c) for c in lines if c not in "\n\t")
    assert lines.count("\n") == text.count("\n")
    shown.encode("utf-8")
    lines.encode("utf-8")


@settings(max_examples=300)
@given(PRINTABLE)
def test_printable_text_passes_unchanged(text: str) -> None:
    assert visible(text) == text
    assert visible_lines(text) == text


@settings(max_examples=200)
@given(st.recursive(st.none() | st.booleans() | st.integers() | ANY_TEXT, lambda inner: (
    st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4)
), max_leaves=10))  # fmt: skip
def test_json_round_trips_and_is_safe(document: object) -> None:
    text = json_text(document)
    assert json.loads(text) == document
    assert not any(acts_on_terminal(c) for c in text)
    text.encode("utf-8")


@settings(max_examples=200)
@given(ANY_TEXT, st.integers(min_value=8, max_value=120), st.integers(min_value=2, max_value=16))
def test_an_excerpt_is_the_start_and_the_end(text: str, max_chars: int, max_lines: int) -> None:
    shown, omitted = excerpt(text, max_chars, max_lines)
    if omitted == 0 and shown == text:
        assert len(text) <= max_chars and text.count("\n") < max_lines
        return
    head, _, rest = shown.partition("\n[... ")
    note, _, tail = rest.partition(" ...]\n")
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) + omitted + len(tail) == len(text)
    assert len(head) + len(tail) <= max_chars
    assert f"of {text.count(chr(10)) + 1} lines and {len(text)} characters" in note


@settings(max_examples=200)
@given(ANY_TEXT, st.integers(min_value=10, max_value=120))
def test_shorten_keeps_the_start_and_the_end(text: str, width: int) -> None:
    shown = shorten(text, width)
    assert len(shown) <= width
    if shown != text:
        head, _, tail = shown.partition(" ... ")
        assert text.startswith(head) and text.endswith(tail) and len(tail) == width // 3


# --- by construction: the CLIs print only through the seam -------------------------------

# The printing helpers: each prints only what a seam function made of its argument.
PRINTERS = {
    "cli/bridge.py": {"_say", "_say_text", "_say_json"},
    "cli/request.py": {"Output.notice", "Output.print_text", "Output.print_json", "Output.product"},
    "cli/send.py": set(),
    "cli/stats_text.py": set(),
    "cli/common.py": {"run_cli"},
    "cli/send_options.py": set(),
    "cli/send_quick.py": set(),
    "__main__.py": set(),
}
SEAM_FUNCTIONS = {"visible", "visible_lines", "json_text"}
# Our own texts, printed as they are.
CONSTANTS = {"GUIDE", "tool_table"}
# Output.product prints the product of a call (the screen, a file's bytes, a diff) exactly.
EXACT = {"cli/request.py": {"Output.product"}}
PRINT_CALLS = {"echo", "secho", "print", "write", "out", "err", "show"}


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _prints(path: Path) -> list[tuple[str, ast.Call]]:
    """Every call that prints in ``path``, with the function it is in."""
    found: list[tuple[str, ast.Call]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            if isinstance(child, ast.Call) and _callee(child) in PRINT_CALLS:
                found.append((where, child))
            visit(child, where)

    visit(ast.parse(path.read_text(), str(path)), "")
    return found


def _through_seam(argument: ast.expr) -> bool:
    """Whether ``argument`` holds what a seam function made (encoded, say, or with a
    line break of ours added)."""
    return any(
        isinstance(node, ast.Call) and _callee(node) in SEAM_FUNCTIONS
        for node in ast.walk(argument)
    )


def _ours(argument: ast.expr) -> bool:
    """Whether ``argument`` is a text of our own: a literal, the guide, the tool table."""
    if isinstance(argument, ast.Constant):
        return True
    if isinstance(argument, ast.Call):
        return _callee(argument) in CONSTANTS
    return isinstance(argument, ast.Name) and argument.id in CONSTANTS


def _bypasses(path: Path, name: str) -> list[str]:
    """Each print in ``path`` (the CLI module ``name``, a key of PRINTERS) of text that
    neither went through the seam nor is ours: ``file:line in function: call``."""
    helpers, exact = PRINTERS[name], EXACT.get(name, set())
    bad = []
    for where, call in _prints(path):
        if where in exact:
            continue
        if _callee(call) == "show":  # click's exception: only into a buffer, shown after
            ok = where in helpers and any(k.arg == "file" for k in call.keywords)
        elif where in helpers:
            ok = bool(call.args) and all(_through_seam(a) for a in call.args)
        else:
            ok = bool(call.args) and all(_ours(a) for a in call.args)
        if not ok:
            bad.append(f"{name}:{call.lineno} in {where or 'module'}: {ast.unparse(call)}")
    return bad


@pytest.mark.parametrize("name", sorted(PRINTERS))
def test_the_clis_print_only_through_the_seam(name: str) -> None:
    assert _bypasses(PACKAGE / name, name) == []


def test_the_scan_finds_a_bypass(tmp_path: Path) -> None:
    """The scan is not vacuous: a field printed as it is is found; one printed through
    a helper that uses the seam, and a constant, are not."""
    path = tmp_path / "bridge.py"
    path.write_text(
        "import click\n"
        "def _say(*lines):\n    click.echo(visible(lines[0]))\n"
        "def agents(found):\n    click.echo(f'{found.name}')\n    _say(found.name)\n"
        "    click.echo(GUIDE, nl=False)\n    print('No agents.')\n"
        "def _say_json(doc):\n    click.echo(json.dumps(doc))\n"
    )
    assert _bypasses(path, "cli/bridge.py") == [
        "cli/bridge.py:5 in agents: click.echo(f'{found.name}')",
        "cli/bridge.py:10 in _say_json: click.echo(json.dumps(doc))",
    ]


# --- what a real terminal shows: tmux-bridge and tmux-send in a tmux pane ----------------


def expected_shown(text: str) -> str:
    """What the person must see of ``text`` as one field, worked out without the seam:
    ``cat -vT`` for C0 and DEL, Python's escapes for the rest a terminal acts on."""
    out = []
    for char in text:
        code = ord(char)
        if code < 0x20 or code == 0x7F:
            out.append("^J" if char == "\n" else cat_v(char.encode()))
        elif 0xDC80 <= code <= 0xDCFF:
            out.append(byte_notation(code - 0xDC00))
        elif acts_on_terminal(char):
            out.append(repr_notation(char))
        else:
            out.append(char)
    return "".join(out)


class Terminal(NamedTuple):
    """A pane of the test's tmux server once the program in it has exited: its screen
    (wrapped lines joined), its title, and the server's paste buffers (OSC 52 makes one
    with set-clipboard on)."""

    lines: list[str]
    title: str
    buffers: str


_WINDOWS = itertools.count()  # each window's wait-for channel


def in_a_terminal(b: TestPane, argv: list[str], env: dict[str, str] | None = None) -> Terminal:
    """Run ``argv`` in a new window of the test's tmux server, as the person would in
    their terminal, and look at that terminal once it has exited."""
    b.tmux("set-option", "-s", "set-clipboard", "on")
    b.tmux("set-option", "-g", "remain-on-exit", "on")
    settings = [f"-e{k}={v}" for k, v in (env or {}).items()]
    words = " ".join("'" + word.replace("'", "'\\''") + "'" for word in argv)
    # tmux 3.3a calls a pane dead when its program exits, and drops what it had not yet
    # read of the program's output, unless the pane has a pipe (then it reads all first):
    # so the program starts once a pipe is open (a CPU hog made the title get lost)
    go = f"tb-go-{next(_WINDOWS)}"
    command = f"tmux wait-for {go} && exec {words}"
    pane = b.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", *settings, command).strip()
    b.tmux("pipe-pane", "-t", pane, "cat > /dev/null")
    b.tmux("wait-for", "-S", go)

    def dead() -> bool:
        return b.tmux("display-message", "-p", "-t", pane, "#{pane_dead}").strip() == "1"

    b.wait_for(dead, f"{argv} to exit in pane {pane}")
    screen = b.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", pane)  # tmux scrolls at exit
    title = b.tmux("display-message", "-p", "-t", pane, "#{pane_title}").strip()
    buffers = b.tmux("list-buffers", "-F", "#{buffer_sample}")
    b.tmux("kill-pane", "-t", pane)
    lines = [line for line in screen.split("\n") if line and not line.startswith("Pane is dead")]
    return Terminal(lines, title, buffers)


TITLE = "\x1b]0;pwned-title\x07"
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # "pwned"
FORGED = "\r\x1b[2K2024-01-01 00:00:00  command     0   0.01s  echo innocent"
HOSTILE = [
    f"echo {TITLE}",
    f"echo {CLIPBOARD}",
    f"true{FORGED}",
    "echo \x9b2J \u202eabc \udc9b",
    "printf 'two\nlines'",
]


def _plant_log(b: TestPane) -> None:
    entries = [
        {"time": f"2024-05-01T10:00:0{i}+0000", "mode": "command", "pane": "%0",
         "target": f"tb:0.0{TITLE}", "command": command, "exit_status": 1,
         "timed_out": None, "duration_s": 0.1, "error_code": None}
        for i, command in enumerate(HOSTILE)
    ]  # fmt: skip
    b.runtime.mkdir(mode=0o700, exist_ok=True)
    text = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries)
    (b.runtime / "log.jsonl").write_bytes(text.encode("utf-8", "surrogateescape"))


def test_the_terminal_acts_on_these_sequences(make_bridge: Callable[[str], TestPane]) -> None:
    """The premise of the tests below: printed as they are, OSC 0 sets this terminal's
    title and OSC 52 makes a paste buffer."""
    b = make_bridge("bash")
    b.start()
    shown = in_a_terminal(b, ["printf", "%s", TITLE + CLIPBOARD + "shown"])
    assert shown.title == "pwned-title", shown
    assert "pwned" in shown.buffers, shown


def test_the_audit_log_cannot_drive_the_persons_terminal(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    _plant_log(b)
    untouched = in_a_terminal(b, ["true"]).title
    log = in_a_terminal(b, [str(BIN / "tmux-bridge"), "log"])
    assert (log.title, log.buffers) == (untouched, "")
    assert len(log.lines) == len(HOSTILE), log.lines  # no line forged, none erased
    for line, command in zip(log.lines, HOSTILE, strict=True):
        assert line.startswith("2024-05-01 10:00:0"), line
        # how tmux-bridge log shows a line break; the log is read as UTF-8
        one_line = command.replace("\n", "\u23ce ").replace("\udc9b", "\ufffd")
        assert line.endswith("  " + expected_shown(one_line)), line

    stats = in_a_terminal(b, [str(BIN / "tmux-bridge"), "log", "--stats"])
    assert (stats.title, stats.buffers) == (untouched, "")
    assert f"pane %0 (tb:0.0{expected_shown(TITLE)}): 5 calls" in "\n".join(stats.lines)
    assert not any(line.startswith("2024-01-01") for line in stats.lines)

    as_json = in_a_terminal(b, [str(BIN / "tmux-bridge"), "log", "--json"])
    assert (as_json.title, as_json.buffers) == (untouched, "")
    documents = [json.loads(line) for line in as_json.lines]
    assert [d["command"] for d in documents] == [
        c.replace("\udc9b", "\ufffd")
        for c in HOSTILE  # the log is read as UTF-8
    ]
    assert "\\u009b2J \\u202eabc" in as_json.lines[3]


def test_status_and_panes_show_a_hostile_directory_name(
    make_bridge: Callable[[str], TestPane], tmp_path: Path
) -> None:
    b = make_bridge("bash")
    b.start()
    directory = tmp_path / f"repo{TITLE}{CLIPBOARD}\x1b[2J"
    directory.mkdir()
    quoted = "'" + str(directory) + "'"
    assert b.send_text("--", f"cd {quoted}")[0] == 0
    untouched = in_a_terminal(b, ["true"]).title
    for command in (["status"], ["panes"]):
        shown = in_a_terminal(b, [str(BIN / "tmux-bridge"), *command])
        assert (shown.title, shown.buffers) == (untouched, ""), command
        assert expected_shown(str(directory)) in "\n".join(shown.lines), shown.lines


def test_tmux_sends_own_messages_cannot_drive_the_terminal(
    make_bridge: Callable[[str], TestPane], tmp_path: Path
) -> None:
    """An error quotes the runtime directory's path, which the environment names."""
    b = make_bridge("bash")
    b.start()
    runtime = tmp_path / f"run{TITLE}{CLIPBOARD}"
    runtime.mkdir(mode=0o777)
    runtime.chmod(0o777)  # unsafe: refused, and the path is in the message
    env = {"TMUX_BRIDGE_DIR": str(runtime)}
    untouched = in_a_terminal(b, ["true"]).title
    shown = in_a_terminal(b, [str(BIN / "tmux-send"), "--", "true"], env)
    assert (shown.title, shown.buffers) == (untouched, "")
    assert f"refusing the runtime directory {expected_shown(str(runtime))}:" in shown.lines[0]
    as_json = in_a_terminal(b, [str(BIN / "tmux-send"), "--json", "--", "true"], env)
    assert (as_json.title, as_json.buffers) == (untouched, "")
    document = json.loads("".join(as_json.lines))
    assert document["error_code"] == "runtime_dir_unsafe"
    assert str(runtime) in document["error"]
