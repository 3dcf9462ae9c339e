"""What the person sees of REPL calls (python, node): the start like any command, then
each evaluation as a header at the REPL's prompt and the output exactly as the REPL
printed it; no typed line, no path, no call id, no marker (issue 29)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ..support.pane import TestPane, transcript

pytestmark = pytest.mark.tmux

# (preset, start command, its prompt, [(code, the lines it leaves after its header)])
CASES = {
    "python": (
        "python3 -q",
        ">>>",
        [
            ("print('hi')", ["hi"]),
            ("x = 41", []),
            ("x + 1", ["42"]),
            ("1/0", ["Traceback (most recent call last):", '  File "<tmux-send>", line 1, in '
             "<module>", "ZeroDivisionError: division by zero"]),
            ("print('\\033[1mbold\\033[0m')", ["bold"]),
        ],
    ),
    "node": (
        "node",
        ">",
        [
            ("console.log('hi')", ["hi"]),
            ("let x = 41", []),
            ("x + 1", ["42"]),
            ("console.log('\\x1b[1mbold\\x1b[0m')", ["bold"]),
        ],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_evaluations_show_as_a_header_and_the_output(
    make_bridge: Callable[[str], TestPane], name: str
) -> None:
    start, prompt, calls = CASES[name]
    if shutil.which(start.split()[0]) is None:
        pytest.skip(f"{start.split()[0]} is not installed")
    b = make_bridge("bash")
    b.start()
    result = b.send("--json", "--timeout", "60", "--repl", name, "--", start)
    ids = [json.loads(result.stdout)["id"]]
    expected = ["$ [tmux-send] " + start]
    if name == "node":
        expected += [line for line in json.loads(result.stdout)["stdout"].split("\n")[:-1]]
    for code, lines in calls:
        result = b.send("--json", "--repl", name, "--", code)
        ids.append(json.loads(result.stdout)["id"])
        expected += [f"{prompt} [tmux-send] " + code.replace("\033", "^["), *lines]
    expected.append(prompt)
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")
    everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
    for plumbing in ("TMUXSEND", str(b.runtime), *ids):
        assert plumbing not in everything, everything


# The SQL REPLs: (start command with {db}, its prompt, [(code, the lines it leaves)]);
# psql's report of an error names the code "<tmux-send>", as python's traceback does.
SQL_CASES = {
    "psql": (
        "psql -X -q -h {db} -U postgres -d postgres -P footer=off -A -t",
        "postgres=#",
        [
            ("select 6 * 7;", ["42"]),
            ("create temp table t(a int);", []),
            ("select * from nope;", ['psql:<tmux-send>:1: ERROR:  relation "nope" does not exist',
             "LINE 1: select * from nope;", "                      ^"]),
            ("\\echo '\\033[1mbold\\033[0m'", ["bold"]),
            ("select 1;\nselect 'two';", ["1", "two"]),
        ],
    ),
    "sqlite": (
        "sqlite3 {db}",
        "sqlite>",
        [
            ("select 6 * 7;", ["42"]),
            ("create table t(a int);", []),
            ("select * from nope;", ["Parse error near line 1: no such table: nope"]),
            ("select char(27) || '[1mbold' || char(27) || '[0m';", ["bold"]),
            ("select 1;\nselect 'two';", ["1", "two"]),
        ],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SQL_CASES))
def test_sql_evaluations_show_as_a_header_and_the_output(
    make_bridge: Callable[[str], TestPane],
    request: pytest.FixtureRequest,
    tmp_path: Path,
    name: str,
) -> None:
    start, prompt, calls = SQL_CASES[name]
    if shutil.which(start.split()[0]) is None:
        pytest.skip(f"{start.split()[0]} is not installed")
    db = request.getfixturevalue("postgres") if name == "psql" else str(tmp_path / "t.db")
    b = make_bridge("bash")
    b.start()
    result = b.send("--json", "--timeout", "60", "--repl", name, "--", start.format(db=db))
    document = json.loads(result.stdout)
    ids = [document["id"]]
    expected = ["$ [tmux-send] " + start.format(db=db), *document["stdout"].split("\n")[:-1]]
    for code, lines in calls:
        result = b.send("--json", "--repl", name, "--", code)
        document = json.loads(result.stdout)
        assert document["stdout"] == "".join(line + "\n" for line in lines), document
        ids.append(document["id"])
        header, *more = code.split("\n")
        expected += [f"{prompt} [tmux-send] {header}", *more, *lines]
    if name == "psql":  # an output without a final newline: the prompt follows it
        assert b.send_text("--repl", name, "--", "\\echo -n abc") == (0, "abc", "")
        expected += [f"{prompt} [tmux-send] \\echo -n abc", "abc" + prompt]
    else:
        expected.append(prompt)
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")
    everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
    for plumbing in ("TMUXSEND", str(b.runtime), *ids):
        assert plumbing not in everything, everything


# nix repl echoes the code itself, after its own prompt, and puts a blank line after
# each value: the transcript is what it shows when the person types the code.
NIX_CALLS = [
    ("6 * 7", ["42"]),
    ("x = 41", []),
    ("let\n  f = n: n + 1;\nin f x", ["42"]),
    ('builtins.throw "boom"', ["error: boom"]),
    ('"it\'s \\"q\\""', ['"it\'s \\"q\\""']),
    ("/. + builtins.fromJSON ''\"/\\u001b[1mbold\\u001b[0m\"''", ["/bold"]),  # a path: raw
]


def test_nix_evaluations_show_as_the_code_and_the_output(
    make_bridge: Callable[[str], TestPane],
) -> None:
    if shutil.which("nix") is None:
        pytest.skip("nix is not installed")
    b = make_bridge("bash")
    b.start()
    result = b.send("--json", "--timeout", "60", "--repl", "nix", "--", "nix repl")
    document = json.loads(result.stdout)
    ids = [document["id"]]
    expected = ["$ [tmux-send] nix repl", *document["stdout"].split("\n")[:-1]]
    for code, lines in NIX_CALLS:
        result = b.send("--json", "--repl", "nix", "--", code)
        document = json.loads(result.stdout)
        assert document["stdout"] == "".join(line + "\n" for line in lines), document
        ids.append(document["id"])
        first, *more = code.split("\n")
        echo = ["[tmux-send]", "nix-repl> " + first, *(" " * 10 + line for line in more)]
        expected += [*echo, *lines, ""]
    expected.append("nix-repl>")
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")
    # on a cleared screen the cursor cannot go up past the first row: the code shows a
    # row lower (and the tag names the agent)
    b.tmux("send-keys", "-t", b.target, "C-l")
    b.wait_for(lambda: b.screen().startswith("nix-repl>"), "the cleared screen")
    b.env["TMUX_BRIDGE_AGENT"] = "codex"
    result = b.send("--json", "--repl", "nix", "--", "1 + 1")
    ids.append(json.loads(result.stdout)["id"])
    top = ["[tmux-send: codex]", "", "nix-repl> 1 + 1", "2", "", "nix-repl>"]
    b.wait_for(lambda: b.screen().rstrip().split("\n") == top, f"the screen {top}")
    everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
    for plumbing in ("TMUXSEND", str(b.runtime), *ids):
        assert plumbing not in everything, everything
    document = json.loads(b.bridge_cli("status", "--json").stdout)
    assert (document["transcript"], document["transcript_note"]) == ("clean", None), document


def test_an_output_without_a_final_newline_is_left_as_the_repl_shows_it(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--repl", "python", "--", "python3 -q")[0] == 0
    assert b.send_text("--repl", "python", "--", "print('a', end='')") == (0, "a", "")
    expected = ["$ [tmux-send] python3 -q", ">>> [tmux-send] print('a', end='')", "a>>>"]
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")


def test_a_start_the_shell_cannot_parse_gives_its_error_and_no_marker(
    make_bridge: Callable[[str], TestPane],
) -> None:
    """The start command is a shell's command line: python code is a syntax error to
    bash. The agent gets bash's error as the person sees it, and nothing of a marker."""
    b = make_bridge("bash")
    b.start()
    result = b.send("--json", "--repl", "python", "--", "print(6*7)")
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["status"]) == (2, 2), result.stdout
    b.wait_for(lambda: transcript(b)[-2:] == ["[exit 2]", "$"], "the status line")
    shown = transcript(b)[1:-2]  # between the header and the status line
    assert shown and all("syntax error" in line or "print(6*7)" in line for line in shown)
    assert doc["stdout"] == "\n".join(shown) + "\n"


def test_status_says_clean_while_a_sqlite_repl_is_open(
    make_bridge: Callable[[str], TestPane],
) -> None:
    if shutil.which("sqlite3") is None:
        pytest.skip("sqlite3 is not installed")
    b = make_bridge("bash")
    b.start()
    document = json.loads(b.bridge_cli("status", "--json").stdout)
    assert (document["transcript"], document["transcript_note"]) == ("clean", None)
    assert b.send_text("--repl", "sqlite", "--", "sqlite3")[0] == 0
    document = json.loads(b.bridge_cli("status", "--json").stdout)
    assert (document["transcript"], document["transcript_note"]) == ("clean", None), document


def test_an_evaluation_header_names_the_calling_agent(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    b.env["TMUX_BRIDGE_AGENT"] = "codex"
    assert b.send_text("--repl", "python", "--", "python3 -q")[0] == 0
    assert b.send_text("--repl", "python", "--", "6*7") == (0, "42\n", "")
    expected = ["$ [tmux-send: codex] python3 -q", ">>> [tmux-send: codex] 6*7", "42", ">>>"]
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")


def test_psql_echoing_its_input_echoes_no_plumbing(
    make_bridge: Callable[[str], TestPane], request: pytest.FixtureRequest
) -> None:
    """psql started with ``-a`` (``ECHO all``: every line it reads is echoed) shows
    the header and the output, not the lines of tmux-send's files (ECHO is ``none``
    while a call runs); its ECHO is the person's again after each call, and a call
    that sets ECHO keeps what it set."""
    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    db = request.getfixturevalue("postgres")
    start = f"psql -X -q -a -h {db} -U postgres -d postgres -P footer=off -A -t"
    b = make_bridge("bash")
    b.start()
    result = b.send("--json", "--timeout", "60", "--repl", "psql", "--", start)
    expected = ["$ [tmux-send] " + start, *json.loads(result.stdout)["stdout"].split("\n")[:-1]]
    calls = [
        ("select 6 * 7", "42\n"),  # (its ";" left out)
        ("select * from nope;", 'psql:<tmux-send>:1: ERROR:  relation "nope" does not exist\n'
         "LINE 1: select * from nope;\n                      ^\n"),
        ("", "all"),  # the person asks: their setting is back
        ("\\set ECHO queries", ""),
        ("", "queries"),  # the agent's own setting is kept
    ]  # fmt: skip
    for code, out in calls:
        if not code:
            b.tmux("send-keys", "-t", b.target, "-l", "\\echo :ECHO")
            b.tmux("send-keys", "-t", b.target, "Enter")
            expected += ["postgres=# \\echo :ECHO", out]
            shown = [*expected, "postgres=#"]
            b.wait_for(lambda: transcript(b) == shown, f"{out} shown")  # noqa: B023
            continue
        document = json.loads(b.send("--json", "--repl", "psql", "--", code).stdout)
        assert (document["stdout"], document["stderr"]) == (out, ""), document
        expected += [f"postgres=# [tmux-send] {code}", *out.split("\n")[:-1]]
    expected.append("postgres=#")
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")


def test_an_error_that_stops_psql_leaves_the_persons_echo_to_the_next_call(
    make_bridge: Callable[[str], TestPane], request: pytest.FixtureRequest
) -> None:
    """With ON_ERROR_STOP on, an error in the agent's code ends every file psql reads
    and the line that read them: no end marker comes; the call ends once psql is back at
    its prompt (well before its idle timeout) with psql's report, status 1, and the
    person's ECHO (``-a``) is back after the next call."""
    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    db = request.getfixturevalue("postgres")
    start = f"psql -X -q -a -v ON_ERROR_STOP=1 -h {db} -U postgres -d postgres -A -t"
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--timeout", "60", "--repl", "psql", "--", start)[0] == 0
    failed = json.loads(b.send("--json", "-t", "60", "--repl", "psql", "--", "select x;").stdout)
    assert (failed["exit_status"], failed["timed_out"]) == (1, None), json.dumps(failed)
    assert failed["stdout"] == (
        'psql:<tmux-send>:1: ERROR:  column "x" does not exist\nLINE 1: select x;\n'
        "               ^\n"
    ), failed
    assert b.send_text("--repl", "psql", "--", "select 2;") == (0, "2\n", "")
    b.tmux("send-keys", "-t", b.target, "-l", "\\echo :ECHO")
    b.tmux("send-keys", "-t", b.target, "Enter")
    shown = ["postgres=# \\echo :ECHO", "all", "postgres=#"]
    b.wait_for(lambda: transcript(b)[-3:] == shown, "the person's ECHO back")
