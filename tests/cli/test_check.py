"""tmux-send --check: a dry run against real panes (bash, zsh, fish), and the pure parts.

Every dry run is compared with what the real call does afterwards in the same pane:
the command's side effect happens only then, and the real call exits with the status
the dry run predicted.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tmux_bridge.text.shells import ShellKind
from tmux_bridge.text.syntax import FirstWord, first_word, read_lookup

from ..support.pane import BIN, TestPane, dash_bridge


def check(bridge: TestPane, *command: str) -> tuple[int, dict[str, Any]]:
    """``tmux-send --check --json -- COMMAND``: its exit status and its document."""
    result = bridge.send("--check", "--json", "--", *command)
    assert result.stderr == b"", result.stderr
    return result.returncode, json.loads(result.stdout)


def real_call(bridge: TestPane, *command: str) -> tuple[int, dict[str, Any]]:
    result = bridge.send("--json", "--", *command)
    return result.returncode, json.loads(result.stdout)


def banners(bridge: TestPane) -> list[str]:
    """The lines of the pane's history that show a call's command."""
    lines = bridge.history().split("\n")
    return [line[line.index("[tmux-send] ") :].rstrip() for line in lines if "[tmux-send] " in line]


# --- good, broken and unknown commands -------------------------------------------------


def test_a_good_command_would_run_and_is_not_run(bridge: TestPane, tmp_path: Path) -> None:
    marker = tmp_path / "made"
    code, document = check(bridge, f"touch {marker}")
    assert code == 0
    assert document["pane"] == bridge.pane("#{pane_id}")
    assert document["shell"] == bridge.shell
    assert (document["parses"], document["parse_error"]) == (True, None)
    assert (document["first_word"], document["resolves_as"]) == ("touch", "file")
    assert (document["ready"], document["reason"], document["would_exit"]) == (True, None, 0)
    assert not marker.exists()
    assert real_call(bridge, f"touch {marker}")[0] == 0
    assert marker.exists()


# What each shell's own parser says about `if then` (see `bash -n` and friends).
PARSE_COMPLAINTS = {"bash": "unexpected token `then'", "zsh": "parse error", "fish": "Missing end"}


def test_a_command_that_does_not_parse(bridge: TestPane, tmp_path: Path) -> None:
    marker = tmp_path / "made"
    command = f"touch {marker}; if then"
    code, document = check(bridge, command)
    assert document["parses"] is False
    assert PARSE_COMPLAINTS[bridge.shell] in document["parse_error"]
    assert str(bridge.runtime) not in document["parse_error"]  # no temporary file names
    assert document["ready"] is True and document["typed_lookup"] is False
    assert document["would_exit"] == code != 0
    real, _ = real_call(bridge, command)
    assert real == code  # the status the real call gives a command its shell cannot parse
    assert not marker.exists()


def test_an_unknown_first_word(bridge: TestPane) -> None:
    code, document = check(bridge, "tb-no-such-command-anywhere --flag")
    assert (document["first_word"], document["resolves_as"]) == (
        "tb-no-such-command-anywhere",
        "not_found",
    )
    assert document["parses"] is True and document["ready"] is True
    assert document["would_exit"] == code
    assert real_call(bridge, "tb-no-such-command-anywhere --flag")[0] == code == 127


def test_several_words_are_checked_as_the_real_call_quotes_them(bridge: TestPane) -> None:
    closer = "end" if bridge.shell == "fish" else "fi"  # a word that ends no block here
    code, document = check(bridge, "echo", "a", ";", closer)
    assert (code, document["parses"], document["first_word"]) == (0, True, "echo")
    assert document["resolves_as"] == "builtin"
    assert real_call(bridge, "echo", "a", ";", closer)[1]["stdout"] == f"a ; {closer}\n"
    code, document = check(bridge, f"echo a ; {closer}")  # one argument: shell code
    assert document["parses"] is False and code != 0


def test_a_word_that_expands_is_not_looked_up(bridge: TestPane) -> None:
    before = bridge.history()
    code, document = check(bridge, "$TB_NOT_SET_ANYWHERE --version")
    assert (code, document["parses"], document["ready"]) == (0, True, True)
    assert (document["first_word"], document["resolves_as"]) == ("$TB_NOT_SET_ANYWHERE", "unknown")
    assert document["typed_lookup"] is False
    assert bridge.history() == before


# --- functions and aliases live in the pane's shell ------------------------------------

DEFINE = {
    "bash": "tbf() { echo in-function; }; alias tba='echo in-alias'",
    "zsh": "tbf() { echo in-function; }; alias tba='echo in-alias'",
    "fish": "function tbf; echo in-function; end; alias tba 'echo in-alias'",
}
# fish's `alias` defines a function (its documentation: "alias is a simple wrapper for
# the function builtin"), and fish's own `type -t tba` says so.
ALIAS_IS = {"bash": "alias", "zsh": "alias", "fish": "function"}


def test_a_function_and_an_alias_defined_earlier_are_found(bridge: TestPane) -> None:
    assert check(bridge, "tbf")[1]["resolves_as"] == "not_found"
    assert bridge.send_text("--", DEFINE[bridge.shell])[0] == 0
    code, document = check(bridge, "tbf")
    assert (code, document["resolves_as"], document["typed_lookup"]) == (0, "function", True)
    code, document = check(bridge, "tba", "extra words")
    assert (code, document["resolves_as"]) == (0, ALIAS_IS[bridge.shell])
    assert bridge.send_text("--", "tbf; tba") == (0, "in-function\nin-alias\n", "")


def test_the_lookup_is_the_one_thing_typed(bridge: TestPane, tmp_path: Path) -> None:
    marker = tmp_path / "tb-unique-7f3"
    before = banners(bridge)
    code, document = check(bridge, f"touch {marker}")
    assert code == 0 and document["typed_lookup"] is True
    new = banners(bridge)[len(before) :]
    assert len(new) == 1 and "touch" in new[0], new  # the lookup of the first word
    assert "tb-unique-7f3" not in bridge.history()
    assert not marker.exists()
    # the real call, by contrast, shows the whole command
    assert real_call(bridge, f"touch {marker}")[0] == 0
    assert "tb-unique-7f3" in bridge.history()


def test_nothing_is_typed_for_a_command_that_does_not_parse(bridge: TestPane) -> None:
    before = bridge.history(), bridge.pane("#{cursor_x} #{cursor_y}")
    assert check(bridge, "echo tb-unique-9c1; if then")[1]["parses"] is False
    assert (bridge.history(), bridge.pane("#{cursor_x} #{cursor_y}")) == before


# --- readiness ---------------------------------------------------------------------------


def test_a_busy_pane_gives_125_like_the_real_call(bridge: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    program = f"sh -c 'while [ ! -e {go} ]; do sleep 0.05; done'"
    bridge.tmux("send-keys", "-t", bridge.target, program, "Enter")
    bridge.wait_for(lambda: bridge.foreground() == "sh", "the person's program to run")
    before = bridge.history()
    code, document = check(bridge, "echo tb-unique-2d8")
    assert (code, document["ready"], document["would_exit"]) == (125, False, 125)
    assert document["error_code"] == "pane_busy" and "`sh`" in document["reason"]
    assert (document["resolves_as"], document["typed_lookup"]) == ("unknown", False)
    assert bridge.history() == before
    real, refusal = real_call(bridge, "echo tb-unique-2d8")
    assert (real, refusal["error_code"]) == (code, document["error_code"])
    # nothing to look up (a command that does not parse): the same readiness checks
    code, document = check(bridge, "echo 'tb-unique-2d8")
    assert (code, document["parses"], document["error_code"]) == (125, False, "pane_busy")
    assert real_call(bridge, "echo 'tb-unique-2d8")[0] == code
    assert bridge.history() == before
    go.touch()
    bridge.wait_for_prompt()
    assert check(bridge, "echo tb-unique-2d8")[0] == 0


def test_an_open_repl_is_in_the_way_as_for_the_real_call(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = make_bridge("bash")
    b.start()
    assert b.send_text("--repl", "python", "--", "python3 -q")[0] == 0
    code, document = check(b, "ls")
    real, refusal = real_call(b, "ls")
    assert (code, document["error_code"]) == (real, refusal["error_code"]) == (125, "repl_mismatch")


def test_no_bridge_is_the_real_calls_error(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    dry = b.send("--check", "--", "ls")
    real = b.send("--", "ls")
    assert (dry.returncode, dry.stdout, dry.stderr) == (125, b"", real.stderr)
    assert real.returncode == 125
    document = json.loads(b.send("--check", "--json", "--", "ls").stdout)
    assert (document["mode"], document["error_code"]) == ("check", "no_bridge")


def test_posix_sh(make_bridge: Callable[[str], TestPane], tmp_path: Path) -> None:
    b = dash_bridge(make_bridge)
    b.start()
    assert b.send_text("--", "tbf() { echo in-function; }; alias tba='echo in-alias'")[0] == 0
    for word, resolves_as in [("tbf", "function"), ("tba", "alias"), ("echo", "builtin")]:
        code, document = check(b, word)
        assert (code, document["shell"], document["resolves_as"]) == (0, "posix", resolves_as)
    marker = tmp_path / "made"
    code, document = check(b, f"touch {marker}")
    assert (code, document["resolves_as"]) == (0, "file")
    code, document = check(b, "tb-no-such-command-anywhere")
    assert (code, document["resolves_as"]) == (
        real_call(b, "tb-no-such-command-anywhere")[0],
        "not_found",
    )
    code, document = check(b, f"touch {marker}; if then")
    assert document["parses"] is False and "then" in document["parse_error"]
    assert real_call(b, f"touch {marker}; if then")[0] == code == 2
    assert not marker.exists()


def test_the_text_form(bridge: TestPane) -> None:
    code, out, err = bridge.send_text("--check", "--", "tb-no-such-command-anywhere")
    assert (code, err) == (127, "")
    assert re.search(r"^first word +'tb-no-such-command-anywhere': not found$", out, re.M), out
    assert re.search(rf"^shell +{bridge.shell}$", out, re.M), out
    assert re.search(r"^would exit +127$", out, re.M), out


def test_the_check_is_in_the_audit_log(bridge: TestPane) -> None:
    check(bridge, "tb-no-such-command-anywhere")
    entries = [json.loads(line) for line in (bridge.runtime / "log.jsonl").read_text().splitlines()]
    entry = entries[-1]
    assert (entry["mode"], entry["command"]) == ("check", "tb-no-such-command-anywhere")
    assert (entry["exit_status"], entry["typed_lookup"]) == (127, True)


class UsageCase(NamedTuple):
    test_id: str
    args: tuple[str, ...]
    says: str


USAGE = [
    UsageCase("keys", ("--check", "--keys", "Enter"), "--check goes with a command"),
    UsageCase("repl", ("--check", "--repl", "python", "--", "1"), "--check goes with a command"),
    UsageCase("screen", ("--check", "--screen"), "--check goes with a command"),
    UsageCase("close", ("--close", "--check"), "--check goes with a command"),
    UsageCase("no-command", ("--check",), "no COMMAND given"),
]


@pytest.mark.parametrize("case", USAGE, ids=[c.test_id for c in USAGE])
def test_check_goes_with_command_mode_only(
    make_bridge: Callable[[str], TestPane], case: UsageCase
) -> None:
    code, out, err = make_bridge("bash").send_text(*case.args)
    assert (code, out) == (2, "")
    assert case.says in err


# --- pure: the first word, and reading the lookup's answer ----------------------------


class WordCase(NamedTuple):
    test_id: str
    kind: ShellKind
    text: str
    word: FirstWord | None


WORDS = [
    WordCase("simple", "bash", "make test", FirstWord("make", True)),
    WordCase("assignments", "bash", "A=1 B='x y' make", FirstWord("make", True)),
    WordCase("comment-first", "zsh", "# note\n\nls -l", FirstWord("ls", True)),
    WordCase("redirection-first", "bash", "2>/dev/null grep x", FirstWord("grep", True)),
    WordCase("dup-redirection", "bash", "2>&1 ls", FirstWord("ls", True)),
    WordCase("subshell", "bash", "(cd /x && make)", FirstWord("cd", True)),
    WordCase("quoted", "bash", "'my cmd' a", FirstWord("my cmd", True)),
    WordCase("backslash", "bash", "ec\\ho", FirstWord("echo", True)),
    WordCase("continuation", "bash", "ec\\\nho x", FirstWord("echo", True)),
    WordCase("variable", "bash", "$EDITOR f", FirstWord("$EDITOR", False)),
    WordCase("quoted-variable", "zsh", '"$x" y', FirstWord('"$x"', False)),
    WordCase("tilde", "bash", "~/bin/x", FirstWord("~/bin/x", False)),
    WordCase("glob", "bash", "l*s", FirstWord("l*s", False)),
    WordCase("bracket-glob", "bash", "x[ab]", FirstWord("x[ab]", False)),
    WordCase("test-bracket", "bash", "[ -f x ]", FirstWord("[", True)),
    WordCase("double-bracket", "zsh", "[[ -f x ]]", FirstWord("[[", True)),
    WordCase("group", "bash", "{ echo; }", FirstWord("{", True)),
    WordCase("braces", "bash", "{a,b}", FirstWord("{a,b}", False)),
    WordCase("keyword", "bash", "if true; then :; fi", FirstWord("if", True)),
    WordCase("zsh-equals", "zsh", "=ls", FirstWord("=ls", False)),
    WordCase("fish-substitution", "fish", "(echo ls) x", FirstWord("(echo", False)),
    WordCase("fish-quote-escape", "fish", "'it\\'s' y", FirstWord("it's", True)),
    WordCase("fish-escape", "fish", "a\\nb", FirstWord("a\\nb", False)),
    WordCase("empty", "bash", "", None),
    WordCase("only-assignment", "bash", "A=1", None),
    WordCase("only-comment", "fish", "# nothing", None),
    WordCase("pipe-first", "bash", "| x", None),
]


@pytest.mark.parametrize("case", WORDS, ids=[c.test_id for c in WORDS])
def test_first_word(case: WordCase) -> None:
    assert first_word(case.kind, case.text) == case.word


class LookupCase(NamedTuple):
    test_id: str
    kind: ShellKind
    output: str
    resolves_as: str


# What each shell printed for the lookup (measured: bash 5.2 `type -t`, zsh 5.9
# `whence -w`, fish 3.6 `type -t`, dash 0.5 `command -V`).
LOOKUPS = [
    LookupCase("bash-function", "bash", "function\n", "function"),
    LookupCase("bash-keyword", "bash", "keyword\n", "keyword"),
    LookupCase("bash-missing", "bash", "", "not_found"),
    LookupCase("zsh-alias", "zsh", "tba: alias\n", "alias"),
    LookupCase("zsh-reserved", "zsh", "if: reserved\n", "keyword"),
    LookupCase("zsh-command", "zsh", "ls: command\n", "file"),
    LookupCase("zsh-hashed", "zsh", "ls: hashed\n", "file"),
    LookupCase("zsh-none", "zsh", "nosuch: none\n", "not_found"),
    LookupCase("fish-builtin", "fish", "builtin\n", "builtin"),
    LookupCase("fish-missing", "fish", "", "not_found"),
    LookupCase("dash-function", "posix", "f is a shell function\n", "function"),
    LookupCase("dash-alias", "posix", "al is an alias for echo x\n", "alias"),
    LookupCase("dash-file", "posix", "ls is /usr/bin/ls\n", "file"),
    LookupCase("dash-hashed", "posix", "ls is a tracked alias for /usr/bin/ls\n", "file"),
    LookupCase("dash-builtin", "posix", "echo is a shell builtin\n", "builtin"),
    LookupCase("dash-keyword", "posix", "if is a shell keyword\n", "keyword"),
    LookupCase("dash-missing", "posix", "nosuch: not found\n", "not_found"),
    LookupCase("busybox-applet", "posix", "sha256sum is sha256sum\n", "file"),
]


@pytest.mark.parametrize("case", LOOKUPS, ids=[c.test_id for c in LOOKUPS])
def test_reading_the_lookup(case: LookupCase) -> None:
    assert read_lookup(case.kind, case.output) == case.resolves_as


def test_help_and_guide_tell_of_the_dry_run() -> None:
    tmux_send = str(BIN / "tmux-send")
    for flag in ("--help", "--guide"):
        result = subprocess.run([tmux_send, flag], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0
        assert "--check" in result.stdout and "would run" in result.stdout, flag
