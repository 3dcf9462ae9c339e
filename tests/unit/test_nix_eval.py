"""The clean nix evaluation's plan (text/presets.py): the expressions around the code
hold no marker in their echo, and each erases exactly the rows its echo takes."""

from __future__ import annotations

import json
import re

import pytest

from tmux_bridge.text.markers import MARK, end_marker, hidden, start_marker
from tmux_bridge.text.presets import NIX_PROMPT, PRESETS, Look, plan_eval

CALL = "0123456789"


def _plan(width: int, code: bytes = b"6 * 7") -> list[str]:
    look = Look(len(NIX_PROMPT), width, "[tmux-send] x")
    return plan_eval(PRESETS["nix"], CALL, code, "/tmp", look).typed.split("\n")


def test_the_code_is_pasted_between_two_expressions_whose_echo_holds_no_marker() -> None:
    start, *code, end = _plan(80, b"let\n  x = 1;\nin x")
    assert code == ["let", "  x = 1;", "in x"]
    assert MARK not in start + end
    values = [json.loads(re.search(r"''(.*)''", expr)[1]) for expr in (start, end)]  # type: ignore[index]
    assert hidden(start_marker(CALL)) in values[0]
    assert hidden(end_marker(CALL)) in values[1]


@pytest.mark.parametrize("width", range(20, 200, 7))
def test_each_expression_erases_the_rows_its_echo_takes(width: int) -> None:
    for expr in (_plan(width)[0], _plan(width)[-1]):
        end = len(NIX_PROMPT) + len(expr)
        assert end % width != 0  # readline would move to a row of its own first
        rows = (end - 1) // width + 1
        assert f"\\u001b[{rows}A\\u001b[{rows + 1}M" in expr


@pytest.mark.parametrize("look", [None, Look(len(NIX_PROMPT), 80, "[tmux-send] x")])
def test_code_the_terminal_may_not_take_at_once_is_typed_a_line_at_a_time(
    look: Look | None,
) -> None:
    short = plan_eval(PRESETS["nix"], CALL, b"let\n  x = 1;\nin x", "/tmp", look)
    assert short.stages == ()  # a few hundred bytes: all in the terminal before nix reads
    code = b"let\n  x = " + b"1 + " * 300 + b"1;\nin x"
    long = plan_eval(PRESETS["nix"], CALL, code, "/tmp", look)
    assert len(long.typed.encode()) > 1024
    assert long.stages == tuple(long.typed.split("\n"))
    assert long.stages[1:4] == ("let", "  x = " + "1 + " * 300 + "1;", "in x")
    assert re.fullmatch(long.reading, NIX_PROMPT) and re.fullmatch(long.reading, " " * 10)
    assert not re.fullmatch(long.reading, NIX_PROMPT + "x")
