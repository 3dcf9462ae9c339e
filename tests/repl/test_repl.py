"""REPL mode with real interpreters: python3, node, sqlite3, psql on a real PostgreSQL
server, and nix repl where it runs."""

from __future__ import annotations

import array
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from ..support.pane import TestPane, stream_stopped


class ReplCase(NamedTuple):
    """How to drive one preset through the same checks."""

    name: str
    start: str  # shell command; {db} is a database path or socket dir
    banner: str  # a word its start-up banner shows
    value: str  # code -> `expected`
    expected: str
    block: str  # a multi-line block -> `block_expected`
    block_expected: str
    error: str  # code the REPL reports an error for
    # a regex for all of stdout after `error`: the report a terminal shows when the code is
    # typed into the REPL; only where it names the code's place (file, line) may differ
    error_report: str
    slow: str  # takes 2 s, then prints `slow_expected`
    slow_expected: str
    endless: str  # never finishes by itself
    after: str  # evaluated after the timeout: -> `after_expected`
    after_expected: str
    special: str  # quotes, backslashes, unicode, !, tab -> `special_expected`
    special_expected: str


SQL_BLOCK_REST = "insert into t values (1, 'x'),\n  (2, 'y');\nselect sum(a)\n  from t;"

CASES = {
    "python": ReplCase(
        name="python",
        start="python3 -q",
        banner="",
        value="6 * 7",
        expected="42\n",
        block="\n".join(
            [
                "def f(n):",
                "    total = 0",
                "",  # a blank line inside the block
                "    for i in range(n):",
                "        total += i",
                "",
                "    return total",
                "",
                "class C:",
                "    x = f(4)",
                "",
                "print(C.x)",
                "C.x + 1",
            ]
        ),
        block_expected="6\n7\n",
        error="1 / 0",
        error_report=(
            r'Traceback \(most recent call last\):\n  File "[^"\n]+", line 1, in <module>\n'
            r"(    .*\n)*ZeroDivisionError: division by zero\n"
        ),
        slow="import time; time.sleep(2); print('slept')",
        slow_expected="slept\n",
        endless="while True: pass",
        after="'still open'",
        after_expected="'still open'\n",
        special="print('it\\'s \"q\" \\\\ é 😀 !x \\t|')",
        special_expected='it\'s "q" \\ é 😀 !x \t|\n',
    ),
    "node": ReplCase(
        name="node",
        start="node",
        banner="Welcome to Node.js",
        value="6 * 7",
        expected="42\n",
        block="\n".join(
            [
                "let total = 0;",
                "function f(n) {",
                "  for (let i = 0; i < n; i++) {",
                "",
                "    total += i;",
                "  }",
                "  return total;",
                "}",
                "f(4)",
            ]
        ),
        block_expected="6\n",
        error="nope()",
        error_report=r"Uncaught ReferenceError: nope is not defined\n(    at .*\n)*",
        slow="const t = Date.now(); while (Date.now() - t < 2000) {}\nconsole.log('slept')",
        slow_expected="slept\n",
        endless="while (true) {}",
        after="'still ' + 'open'",
        after_expected="'still open'\n",
        special="console.log('it\\'s \"q\" \\\\ é 😀 !x \\t|')",
        special_expected='it\'s "q" \\ é 😀 !x \t|\n',
    ),
    "sqlite": ReplCase(
        name="sqlite",
        start="sqlite3 {db}",
        banner="SQLite version",
        value="select 6 * 7;",
        expected="42\n",
        block="create table t(a int,\n  b text);\n\n" + SQL_BLOCK_REST,
        block_expected="3\n",
        error="select * from no_such_table;",
        error_report=r"Parse error( near line \d+)?: no such table: no_such_table\n",
        slow=(
            "with recursive c(x) as (select 1 union all select x + 1 from c where x < 4000000)"
            " select 'slept' from c where x = 4000000;"
        ),
        slow_expected="slept\n",
        endless=(
            "with recursive c(x) as (select 1 union all select x + 1 from c)"
            " select count(*) from c;"
        ),
        after="select 'still open';",
        after_expected="still open\n",
        special="select 'it''s \"q\" \\ é 😀 !x \t|';",
        special_expected='it\'s "q" \\ é 😀 !x \t|\n',
    ),
    "psql": ReplCase(
        name="psql",
        start="psql -X -q -h {db} -U postgres -d postgres -P footer=off -A -t",
        banner="",
        value="select 6 * 7;",
        expected="42\n",
        block="create temp table t(a int,\n  b text);\n\n" + SQL_BLOCK_REST,
        block_expected="3\n",
        error="select * from no_such_table;",
        error_report=(
            r'(psql:.*:\d+: )?ERROR:  relation "no_such_table" does not exist\n'
            r"LINE 1: select \* from no_such_table;\n {22}\^\n"
        ),
        slow="select pg_sleep(2), 'slept';",
        slow_expected="|slept\n",
        endless="select pg_sleep(600);",
        after="select 'still open';",
        after_expected="still open\n",
        special="select 'it''s \"q\" \\ é 😀 !x \t|';",
        special_expected='it\'s "q" \\ é 😀 !x \t|\n',
    ),
    "nix": ReplCase(
        name="nix",
        start="nix repl",
        banner="Welcome to Nix",
        value="6 * 7",
        expected="42\n",
        block="let\n  f = n: n + 1;\n\nin f 5",
        block_expected="6\n",
        error='builtins.throw "boom"',
        error_report=r"error: boom\n",
        # about 2 s and 0.2 GB here; the endless one would take minutes
        slow=(
            "builtins.seq (builtins.foldl' (a: b: a + b) 0 (builtins.genList (x: x) 15000000))"
            ' "slept"'
        ),
        slow_expected='"slept"\n',
        endless=(
            "builtins.foldl' (a: b: builtins.foldl' (c: d: c + d) a (builtins.genList (x: x) 1000))"
            " 0 (builtins.genList (x: x) 10000000)"
        ),
        after='"still open"',
        after_expected='"still open"\n',
        special='"it\'s \\"q\\" \\\\ é 😀 !x \\t|"',
        special_expected='"it\'s \\"q\\" \\\\ é 😀 !x \\t|"\n',
    ),
}


def _cooked(fd: int) -> bool:
    """Whether the terminal of ``fd`` is in canonical mode (a line at a time)."""
    return bool(termios.tcgetattr(fd)[3] & termios.ICANON)


def _needs(name: str) -> None:
    binary = {
        "python": "python3",
        "node": "node",
        "sqlite": "sqlite3",
        "psql": "psql",
        "nix": "nix",
    }[name]
    if shutil.which(binary) is None:
        pytest.skip(f"{binary} is not installed")


@pytest.fixture(params=list(CASES))
def repl(
    request: pytest.FixtureRequest, make_bridge: Callable[[str], TestPane], tmp_path: Path
) -> Iterator[tuple[TestPane, ReplCase]]:
    case = CASES[request.param]
    _needs(case.name)
    db = request.getfixturevalue("postgres") if case.name == "psql" else str(tmp_path / "t.db")
    b = make_bridge("bash")
    b.start()
    code, out, err = b.send_text(
        "--timeout", "60", "--repl", case.name, "--", case.start.format(db=db)
    )
    assert code == 0, (out, err, b.screen())
    assert case.banner in out
    yield b, case


def _eval(b: TestPane, case: ReplCase, code: str, *options: str) -> tuple[int, str, str]:
    return b.send_text(*options, "--repl", case.name, "--", code)


def test_value(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    assert _eval(b, case, case.value) == (0, case.expected, "")


def test_multi_line_block(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    code, out, err = _eval(b, case, case.block)
    assert (code, out) == (0, case.block_expected), err


def test_error_gives_status_1(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    code, out, err = _eval(b, case, case.error)
    assert (code, err) == (1, "")
    assert re.fullmatch(case.error_report, out), out  # the REPL's own report, on stdout
    assert _eval(b, case, case.value)[:2] == (0, case.expected)


def test_slow_evaluation_waits_for_the_result(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    code, out, err = _eval(b, case, case.slow, "--timeout", "20")
    assert (code, out) == (0, case.slow_expected), err


def test_special_characters_arrive_intact(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    code, out, err = _eval(b, case, case.special)
    assert (code, out) == (0, case.special_expected), err


def test_timeout_interrupts_and_the_repl_stays_open(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    if case.name == "nix":
        pytest.skip("nix repl 2.8 (Debian 12) does not stop an evaluation on Ctrl-C")
    code, _, err = _eval(b, case, case.endless, "--timeout", "1")
    assert code == 124, err
    assert "back at its prompt" in err
    assert _eval(b, case, case.after)[:2] == (0, case.after_expected)


def test_close_returns_to_the_shell(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    code, out, err = b.send_text("--close")
    assert (code, out) == (0, ""), err
    assert f"Closed the {case.name} REPL" in err
    assert b.send_text("--", "echo shell") == (0, "shell\n", "")


def test_plain_command_is_refused_while_a_repl_is_open(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    code, _, err = b.send_text("--", "echo no")
    assert code == 125
    assert f"--repl {case.name}" in err and "--close" in err


def test_wrong_repl_name_names_the_open_one(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    other = "node" if case.name != "node" else "python"
    code, _, err = b.send_text("--repl", other, "--", "1")
    assert code == 125
    assert f"the open REPL is {case.name}" in err


# A statement or block begun at each REPL's prompt and not finished (its Enter pressed):
# the REPL then shows its continuation prompt. nix repl 2.8 shows none.
UNFINISHED = {
    "python": "for i in range(2):",
    "node": "function f() {",
    "sqlite": "select 1",
    "psql": "select 1",
}


def _bottom(b: TestPane) -> str:
    """The cursor's line (node shows a preview of the value below it)."""
    rows = b.tmux("capture-pane", "-p", "-t", b.target).split("\n")
    return rows[int(b.pane("#{cursor_y}"))].rstrip()


def test_the_persons_line_at_the_repl_prompt_is_never_typed_into(
    repl: tuple[TestPane, ReplCase],
) -> None:
    """The person types at the REPL's prompt (their code, not run yet): an evaluation, and
    the REPL's closing, are refused and leave the line as it is; it ran as they typed it
    once they pressed Enter. The same with a statement begun and not finished (the
    continuation prompt): the agent's code would be read as part of it."""
    b, case = repl
    b.person_types(case.value)
    b.wait_for(lambda: _bottom(b).endswith(case.value), "the typing to show")
    typed = _bottom(b)
    for call in (["--repl", case.name, "--", case.after], ["--close"]):
        result = b.send("--json", *call)
        document = json.loads(result.stdout)
        assert (result.returncode, document["error_code"]) == (125, "half_typed_line"), document
        assert "not run it yet" in document["error"]
        assert document["pane"] == b.pane("#{pane_id}")  # the pane that refused
        assert _bottom(b) == typed  # untouched
    b.person_types("\r")
    b.wait_for(lambda: case.expected.strip() in b.screen(), "the person's code to run")
    assert _eval(b, case, case.after)[:2] == (0, case.after_expected)
    if case.name not in UNFINISHED:
        return
    b.person_types(UNFINISHED[case.name] + "\r")
    b.wait_for(lambda: UNFINISHED[case.name] in b.screen(), "the statement begun")
    result = b.send("--json", "--repl", case.name, "--", case.after)
    document = json.loads(result.stdout)
    assert (result.returncode, document["error_code"]) == (125, "half_typed_line"), document
    assert "is not finished" in document["error"]


# Code that prints without ending its line: the REPL's prompt may then follow the output
# on the same line (`x>>> `), and the next evaluation goes on. (sqlite and nix end every
# line they print.)
NO_NEWLINE = {
    "python": ("print('x', end='')", "x"),
    "node": ("void process.stdout.write('x')", "x"),
    "psql": ("\\echo -n x", "x"),
}


@pytest.mark.parametrize("repl", list(NO_NEWLINE), indirect=True)
def test_output_that_does_not_end_its_line_leaves_the_repl_usable(
    repl: tuple[TestPane, ReplCase],
) -> None:
    b, case = repl
    code, output = NO_NEWLINE[case.name]
    assert _eval(b, case, code)[:2] == (0, output)
    assert _eval(b, case, case.value) == (0, case.expected, "")
    b.person_types(code + "\r")  # the person's own, then an evaluation
    b.wait_for(lambda: _bottom(b) != "" and not _bottom(b).endswith(code), "their output")
    assert _eval(b, case, case.value) == (0, case.expected, "")
    code_, out, err = b.send_text("--close")
    assert code_ == 0, (out, err, b.screen())


def test_the_persons_program_reading_input_in_the_repl_is_left_alone(python: TestPane) -> None:
    """The person's code in the REPL waits for their answer (``input()``): an evaluation
    would be typed as that answer. It is refused (busy), and the answer is theirs."""
    python.person_types("input('who? ')\r")
    python.wait_for(lambda: _bottom(python) == "who?", "the person's input() prompt")
    result = python.send("--json", "--repl", "python", "--", "6 * 7")
    document = json.loads(result.stdout)
    assert (result.returncode, document["error_code"]) == (125, "pane_busy"), document
    assert "prompt does not show" in document["error"]
    python.person_types("Ada\r")
    python.wait_for(lambda: "'Ada'" in python.screen(), "the person's answer, echoed")
    assert "6 * 7" not in python.screen()
    assert python.send_text("--repl", "python", "--", "6 * 7") == (0, "42\n", "")


# --- python in depth (the other presets share the mechanism) ----------------------------


@pytest.fixture
def python(make_bridge: Callable[[str], TestPane]) -> Iterator[TestPane]:
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--repl", "python", "--", "python3 -q")[0] == 0
    yield b


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_start_and_close_from_each_shell(
    make_bridge: Callable[[str], TestPane], shell: str
) -> None:
    b = make_bridge(shell)
    b.start()
    code, out, err = b.send_text("--repl", "python", "--", "python3 -q")
    assert code == 0, (out, err)
    assert b.send_text("--repl", "python", "--", "x = 5\nx * 2") == (0, "10\n", "")
    code, out, err = b.send_text("--close")
    assert code == 0, err
    assert b.send_text("--", "echo back") == (0, "back\n", "")


def test_state_persists_between_evaluations(python: TestPane) -> None:
    assert python.send_text("--repl", "python", "--", "data = [1, 2, 3]")[:2] == (0, "")
    assert python.send_text("--repl", "python", "--", "sum(data)") == (0, "6\n", "")


def test_a_hundred_kilobytes_of_code(python: TestPane) -> None:
    code = "\n".join(f"v{i} = {i}" for i in range(10000)) + "\nprint(v9999 + 1)"
    assert len(code) > 100_000
    assert python.send_text("--repl", "python", "--", code) == (0, "10000\n", "")


def test_the_person_answers_input(python: TestPane) -> None:
    proc = python.start_send("--repl", "python", "--", "name = input('who? ')\nprint('hi', name)")
    python.wait_for(lambda: "who?" in python.screen(), "the input() prompt")
    python.tmux("send-keys", "-t", python.target, "-l", "Ada")
    python.tmux("send-keys", "-t", python.target, "Enter")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.decode().endswith("hi Ada\n")


def test_repl_killed_mid_evaluation(python: TestPane, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    proc = python.start_send(
        "--repl", "python", "--",
        f"import os, time\n_ = open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "print('started', flush=True)\ntime.sleep(60)",
    )  # fmt: skip
    assert python.read_line(proc) == b"started\n"
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    out, err = proc.communicate(timeout=10)
    assert (proc.returncode, out) == (125, b"")
    assert b"exited during the evaluation" in err
    assert b"Last lines of the bridge terminal" in err
    assert python.send_text("--", "echo shell-again") == (0, "shell-again\n", "")


def test_the_person_quitting_the_repl_is_noticed(python: TestPane) -> None:
    python.tmux("send-keys", "-t", python.target, "exit()", "Enter")
    python.wait_for_prompt()
    code, _, err = python.send_text("--repl", "python", "--", "1")
    assert code == 125
    assert "no longer running" in err
    assert python.send_text("--", "echo fine") == (0, "fine\n", "")


def test_close_with_no_repl_open_changes_nothing(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    before = b.history()
    code, out, err = b.send_text("--close")
    assert (code, out) == (0, "")
    assert "No REPL is open" in err
    assert b.history() == before
    assert b.pane("#{pane_dead}") == "0"


def test_a_start_that_fails_reports_the_error(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    code, out, _ = b.send_text("--repl", "python", "--", "tb-no-such-python")
    assert code == 127
    assert "tb-no-such-python" in out
    assert b.send_text("--", "echo shell") == (0, "shell\n", "")


def test_unknown_preset_lists_the_presets(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    code, _, err = b.send_text("--repl", "cobol", "--", "x")
    assert code == 125
    assert "python" in err and "--prompt" in err


def test_custom_repl_with_a_prompt_regex(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    start = "python3 -q -i -c \"import sys; sys.ps1 = 'calc> '\""
    assert b.send_text("--repl", "calc", "--prompt", r"^calc> ?$", "--", start)[0] == 0
    assert b.send_text("--repl", "calc", "--prompt", r"^calc> ?$", "--", "6 * 7") == (0, "42\n", "")
    code, _, err = b.send_text("--close")
    assert code == 0, err
    assert b.send_text("--", "echo shell") == (0, "shell\n", "")


def test_custom_repl_with_an_eval_template(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    prompt = ("--prompt", r"^calc> ?$")
    start = "python3 -q -i -c \"import sys; sys.ps1 = 'calc> '\""
    assert b.send_text("--repl", "calc", *prompt, "--", start)[0] == 0
    template = ("--eval-template", "print('<' + str({code}) + '>')")
    assert b.send_text("--repl", "calc", *prompt, *template, "--", "6 * 7") == (0, "<42>\n", "")


def test_refuses_a_pane_with_its_own_pipe(
    make_bridge: Callable[[str], TestPane], tmp_path: Path
) -> None:
    b = make_bridge("bash")
    b.start()
    b.tmux("pipe-pane", "-t", b.target, f"cat > {tmp_path / 'log'}")
    code, _, err = b.send_text("--repl", "python", "--", "python3")
    assert code == 125
    assert "pipe-pane" in err
    assert b.pane("#{pane_pipe}") == "1"  # the person's pipe is left alone


@pytest.mark.parametrize(
    "args",
    [
        ["--close", "--", "x"],
        ["--prompt", "x", "--close"],  # --prompt alone is the seed tool's REPL mode (issue 23)
        ["--eval-template", "{code}", "--", "y"],
    ],
    ids=["close-with-command", "prompt-with-close", "template-without-repl"],
)
def test_repl_usage_errors(make_bridge: Callable[[str], TestPane], args: list[str]) -> None:
    b = make_bridge("bash")
    assert b.send(*args).returncode == 2


def _big_code(name: str, size: int) -> tuple[str, str]:
    """About ``size`` bytes of code for REPL ``name``, and what it prints."""
    payload = "x" * size
    if name == "python":
        return f"len('{payload}')", f"{size}\n"
    if name == "node":
        return f"'{payload}'.length", f"{size}\n"
    if name in ("sqlite", "psql"):
        return f"select length('{payload}');", f"{size}\n"
    return f'builtins.stringLength "{payload}"', f"{size}\n"


def test_a_hundred_kilobytes_of_code_in_each_repl(
    repl: tuple[TestPane, ReplCase],
) -> None:
    b, case = repl
    code, expected = _big_code(case.name, 100 * 1024)
    result = b.send("--timeout", "30", "--repl", case.name, "-", input=code.encode())
    assert (result.returncode, result.stdout.decode()) == (0, expected), result.stderr


def test_nix_is_typed_nothing_while_it_evaluates_a_line(
    make_bridge: Callable[[str], TestPane],
) -> None:
    """nix reads pasted code a line at a time and evaluates each with its terminal
    cooked: what arrives meanwhile is echoed by the terminal, then again by nix, and the
    first echo lands in the output (a 100 KB line under load). Code longer than the
    terminal surely takes at once is typed a line at a time, each once nix reads again:
    while its first line is evaluated, nothing of the next one waits in the terminal."""
    _needs("nix")
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--timeout", "60", "--repl", "nix", "--", "nix repl")[0] == 0
    payload = "x" * 2000
    code = f'{CASES["nix"].slow}\nbuiltins.stringLength "{payload}"'
    tty = b.pane("#{pane_tty}")
    proc = b.start_send("--timeout", "60", "--repl", "nix", "--", code)
    fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    waiting: list[int] = []  # bytes in the terminal's input while the first line ran
    try:
        b.wait_for(lambda: "builtins.seq" in b.screen(), "the first line's echo")
        # nix evaluates with its terminal cooked and reads with it raw (its line editor):
        # the terminal's mode, read on both sides of the count, tells which. The screen
        # cannot: tmux may draw the value after nix read on and tmux-send typed the next
        # line (seen beside a CPU hog).
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            before = _cooked(fd)
            held = array.array("i", [0])
            fcntl.ioctl(fd, termios.FIONREAD, held)
            if before and _cooked(fd):
                waiting.append(held[0])
            elif waiting:
                break  # it reads again: the next line may be typed now
    finally:
        os.close(fd)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out.decode()) == (0, '"slept"\n\n2000\n'), err
    assert waiting and max(waiting) == 0, (max(waiting, default=None), b.screen())


@pytest.mark.linux_facts(
    "psql reads the terminal while it holds its server's socket; Linux's wait channel "
    "(wait_woken) names both, only /proc/PID/syscall says which descriptor it reads"
)
def test_psql_reads_input_from_the_person(repl: tuple[TestPane, ReplCase]) -> None:
    b, case = repl
    if case.name != "psql":
        pytest.skip("psql's \\prompt; python's input() is tested on its own below")
    proc = b.start_send(
        "--timeout", "1.5", "--repl", "psql", "--", "\\prompt 'Who? ' who\nselect :'who';"
    )
    assert proc.stderr is not None
    assert b"waiting for input" in b.read_line_from(proc.stderr)
    b.tmux("send-keys", "-t", b.target, "-l", "Ada")
    b.tmux("send-keys", "-t", b.target, "Enter")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == b"Who? Ada\nAda\n"  # the question and the person's echo, then the result


def test_the_screen_ahead_of_the_stream_loses_no_output_at_a_timeout(python: TestPane) -> None:
    """After a timeout's Ctrl-C the REPL's prompt back on the screen ends the call once
    the stream has brought it too: the traceback before it, still on its way (the
    pane's pipe writer stopped meanwhile), is output, not lost."""
    b = python
    code = "print('started', flush=True)\nwhile True: pass"
    proc = b.start_send("--timeout", "1", "--repl", "python", "--", code)
    b.wait_for_call_start(proc)
    with stream_stopped(b):
        b.wait_for(
            lambda: "KeyboardInterrupt" in b.screen() and b.screen().rstrip().endswith(">>>"),
            "the prompt back after the timeout's Ctrl-C",
        )
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1)  # the prompt on the screen, the stream behind it
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 124, err
    assert b"KeyboardInterrupt" in out, (out, err)


def test_a_timeout_as_the_code_ends_loses_no_output(python: TestPane) -> None:
    """The idle timeout comes while the code's end is still on its way (the pane's pipe
    writer stopped): the REPL's prompt on the screen alone is not "the code stopped
    short", and what the code printed last comes back."""
    b = python
    code = "print('started', flush=True)\nimport time; time.sleep(0.2); print('done')"
    proc = b.start_send("--timeout", "1", "--repl", "python", "--", code)
    b.wait_for_call_start(proc)
    with stream_stopped(b):
        b.wait_for(
            lambda: re.search(r"^done\n>>>$", b.screen().rstrip(), re.M) is not None,
            "the code's end and the prompt on the screen",
        )
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1.5)  # past the idle timeout: the stream is behind
    out, err = proc.communicate(timeout=30)
    assert out.endswith(b"done\n"), (out, err)


def test_waiting_for_input_in_a_repl_holds_the_idle_timeout(python: TestPane) -> None:
    proc = python.start_send(
        "--timeout", "1.5", "--repl", "python", "--", "print('hi', input('Name? '))"
    )
    assert proc.stderr is not None
    notice = python.read_line_from(proc.stderr)
    assert b"REPL is waiting for input" in notice and b"Name?" in notice
    # longer than the idle timeout: the evaluation goes on waiting for the answer
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=2)
    python.tmux("send-keys", "-t", python.target, "-l", "Ada")
    python.tmux("send-keys", "-t", python.target, "Enter")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.endswith(b"hi Ada\n")


# --- defects of 0.1, each shown by a test that failed there --------------------------------


def test_a_trailing_semicolon_reaches_a_prompt_repl(make_bridge: Callable[[str], TestPane]) -> None:
    """tmux took a last argument ending in ';' for its own command separator."""
    b = make_bridge("bash")
    b.start()
    _needs("sqlite")
    prompt = ("--prompt", r"^sqlite> ?$", "--max-time", "30")
    assert b.send_text("--repl", "sq", *prompt, "--", "sqlite3")[0] == 0
    assert b.send_text("--repl", "sq", *prompt, "--", "select 6 * 7;") == (0, "42\n", "")


def test_starting_a_repl_keeps_a_half_typed_line(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    for _ in range(2):  # two calls let tmux-send learn the bare prompt
        assert b.send_text("--", "true")[0] == 0
        b.wait_for_prompt()
    b.person_types("git sta")
    b.wait_for(lambda: "$ git sta" in b.screen(), "the typing to show")
    code, _, err = b.send_text("--repl", "python", "--", "python3 -q")
    assert code == 125
    assert "typed `git sta`" in err
    assert b.screen().rstrip().endswith("$ git sta")  # the person's line is untouched


@pytest.mark.parametrize("name", ["\xff", "two\nlines", "a" * 33, "", "sp ace", "semi;"], ids=repr)
def test_repl_names_are_validated(make_bridge: Callable[[str], TestPane], name: str) -> None:
    b = make_bridge("bash")
    b.start()
    code, _, err = b.send_text("--repl", name, "--", "python3")
    assert code == 2, err
    assert "is not a REPL name" in err
    assert "Traceback" not in err
    assert [p for p in b.runtime.rglob("repl")] == []


def test_a_repl_that_stops_at_an_error_ends_the_call_then(
    make_bridge: Callable[[str], TestPane],
) -> None:
    """sqlite's .bail on ends a loaded file at the first error, before the end marker:
    the REPL sits at its prompt reading the terminal, which is not code waiting for
    input (that would hold the idle timeout). The call ends there, well before its idle
    timeout, with sqlite's report as its output, status 1 and a note that says why."""
    b = make_bridge("bash")
    b.start()
    _needs("sqlite")
    assert b.send_text("--repl", "sqlite", "--", "sqlite3")[0] == 0
    assert b.send_text("--repl", "sqlite", "--", ".bail on")[0] == 0
    result = b.send("--json", "--timeout", "60", "--max-time", "60", "--repl", "sqlite", "--",
                    "select 1; select nosuchcolumn; select 3;")  # fmt: skip
    document = json.loads(result.stdout)
    assert (result.returncode, document["timed_out"]) == (1, None), document
    assert (
        document["stdout"].startswith("1\n")
        and "no such column: nosuchcolumn" in document["stdout"]
    )
    assert "3\n" not in document["stdout"] and "sqlite>" not in document["stdout"], document
    notes = "\n".join(document["notes"])
    assert "stopped at an error (.bail is on)" in notes, f"{notes}\n--- pane:\n{b.screen()}"
    assert b.send_text("--repl", "sqlite", "--", "select 4;") == (0, "4\n", "")
    assert "did not come back" not in notes
