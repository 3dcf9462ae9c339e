"""Pure tests of tmux_bridge/text/echo.py: a REPL's echo and prompts cut out of what it
printed (``without_echo``), and when a REPL without a preset is done (``prompt_after_echo``).

Inputs are what a terminal shows a REPL doing: the prompt, the echo of the typed line
(``\\r\\n`` line ends, colours sometimes), the value, a new prompt.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pytest

from tmux_bridge.text.echo import echo_prompt, prompt_after_echo, without_echo

# the prompt as the REPL mode compiles it for each function: a match at a line's start
# (without_echo), a search in the last line (prompt_after_echo)
NIX = re.compile(echo_prompt("nix-repl> ")).match


class EchoCase(NamedTuple):
    test_id: str
    raw: bytes
    echo_lines: tuple[str, ...]
    expected: bytes


ECHO_CASES = [
    EchoCase(
        "the-value-alone",
        b"nix-repl> 1 + 2\r\n3\r\n\r\nnix-repl> ",
        ("1 + 2",),
        b"3\n",
    ),
    EchoCase(
        "coloured-value",  # what the terminal leaves visible, colours gone
        b"nix-repl> 1 + 2\r\n\x1b[35;1m3\x1b[0m\r\n\r\nnix-repl> ",
        ("1 + 2",),
        b"3\n",
    ),
    EchoCase(
        "a-continuation-line-echoed-indented",
        b"nix-repl> let x = 1;\r\n          in x\r\n1\r\n\r\nnix-repl> ",
        ("let x = 1;", "in x"),
        b"1\n",
    ),
    EchoCase(
        "a-value-equal-to-the-input-is-kept",  # the echo was already taken off
        b"nix-repl> x\r\nx\r\n\r\nnix-repl> ",
        ("x",),
        b"x\n",
    ),
    EchoCase(
        "several-lines-of-value-blank-lines-inside-kept",
        b"nix-repl> f\r\n\r\na\r\n\r\nb\r\n\r\nnix-repl> ",
        ("f",),
        b"a\n\nb\n",
    ),
    EchoCase(
        "the-opening-quote-of-the-end-marker-dropped",
        b'nix-repl> 1\r\n1\r\n"',
        ("1",),
        b"1\n",
    ),
    EchoCase("only-the-echo-and-prompts", b"nix-repl> null\r\n\r\nnix-repl> ", ("null",), b""),
    EchoCase("nothing", b"", ("1",), b""),
]


@pytest.mark.parametrize("case", ECHO_CASES, ids=lambda c: c.test_id)
def test_without_echo(case: EchoCase) -> None:
    assert without_echo(case.raw, case.echo_lines, NIX) == case.expected


def test_without_echo_reads_the_prompt_as_a_pattern_without_its_end_anchor() -> None:
    # a prompt given as a pattern ending in `$` (or ` ?`) still matches at a line's start
    raw = b"calc[7]> 6*7\r\n42\r\ncalc[8]> "
    prompt = re.compile(echo_prompt(r"calc\[\d+\]> ?$")).match
    assert without_echo(raw, ("6*7",), prompt) == b"42\n"


PY_PROMPT = re.compile(r">>> $").search


class DoneCase(NamedTuple):
    test_id: str
    collected: list[bytes]
    typed: tuple[str, ...]
    done: bool


DONE_CASES = [
    DoneCase("echo-output-prompt", [b">>> print(1)\r\n1\r\n>>> "], ("print(1)",), True),
    DoneCase("in-pieces", [b">>> pri", b"nt(1)\r\n", b"1\r\n>>> "], ("print(1)",), True),
    DoneCase("no-output-then-prompt", [b">>> x = 1\r\n>>> "], ("x = 1",), True),
    DoneCase("coloured-echo", [b">>> \x1b[1mprint(1)\x1b[0m\r\n1\r\n>>> "], ("print(1)",), True),
    DoneCase("only-the-prompt", [b">>> "], ("print(1)",), False),
    DoneCase("the-echo-still-on-the-last-line", [b">>> print(1)"], ("print(1)",), False),
    DoneCase("output-but-no-prompt-yet", [b">>> print(1)\r\n1\r\n"], ("print(1)",), False),
    DoneCase(
        "the-last-non-blank-typed-line-counts",
        [b">>> for i in range(2):\r\n...     print(i)\r\n... \r\n0\r\n1\r\n>>> "],
        ("for i in range(2):", "    print(i)", ""),
        True,
    ),
    DoneCase(
        "a-continuation-prompt-is-not-the-prompt",
        [b">>> for i in range(2):\r\n... "],
        ("for i in range(2):", "    print(i)", ""),
        False,
    ),
]


@pytest.mark.parametrize("case", DONE_CASES, ids=lambda c: c.test_id)
def test_prompt_after_echo(case: DoneCase) -> None:
    assert prompt_after_echo(case.collected, case.typed, PY_PROMPT)() is case.done


def test_prompt_after_echo_looks_at_what_was_collected_since() -> None:
    collected = [b">>> print(1)\r\n"]
    done = prompt_after_echo(collected, ("print(1)",), PY_PROMPT)
    assert not done()
    collected.append(b"1\r\n>>> ")
    assert done()
