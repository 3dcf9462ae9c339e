"""The text typed into a far REPL (tmux_bridge/calls/farrepl.py), checked without tmux: the
code's literal round-trips through python's own parser and node's, in pieces that
never cut an escape, printable ASCII only, and the markers never in what is typed."""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess

import pytest

from tmux_bridge.calls.farrepl import (
    PIECE,
    FarReplEval,
    define_line,
    eval_lines,
    literal_pieces,
    start_line,
)
from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.pane.front import Gateway
from tmux_bridge.pane.info import PaneInfo
from tmux_bridge.results import CallRecord, RunOptions
from tmux_bridge.text.farshell import FarLook
from tmux_bridge.text.presets import FAR_REPLS

CORPUS = [
    "",
    "6 * 7",
    'it\'s "q" \\ \\n é → 世界 😀 !x $HOME `ls` %s \t| \x01 \x7f \r\n',
    "def f():\n\treturn '\\''\n",
    "x" * 10_000,
    "é" * 2000 + "😀" * 800,
]


def _random_text(seed: int) -> str:
    rng = random.Random(seed)
    alphabet = "ab'\"\\\n\t %{}é→😀\x00\x1b\x7f\u2028"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 9000)))


TEXTS = CORPUS + [_random_text(seed) for seed in range(20)]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_python_literal_round_trips_in_pieces(text: str) -> None:
    pieces = literal_pieces(text, FAR_REPLS["python"].astral)
    assert all(len(piece) <= PIECE for piece in pieces)
    assert all(c.isascii() and c.isprintable() for piece in pieces for c in piece)
    assert "".join(ast.literal_eval(f"'{piece}'") for piece in pieces) == text


def test_javascript_literal_round_trips_in_node() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    astral = FAR_REPLS["node"].astral
    literals = [[f"'{piece}'" for piece in literal_pieces(text, astral)] for text in TEXTS]
    script = (
        "console.log(JSON.stringify(["
        + ",".join("[" + ",".join(x) + "].join('')" for x in literals)
        + "]))"
    )
    out = subprocess.run(["node", "-"], input=script, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == TEXTS


@pytest.mark.parametrize("name", list(FAR_REPLS))
def test_typed_lines_never_hold_a_marker(name: str) -> None:
    spec = FAR_REPLS[name]
    call_id = "0123456789"
    typed = [define_line(spec, call_id), *eval_lines(spec, call_id, "x = 1\n" * 2000)]
    assert len(typed) > 3  # long code: the literal built first, then the call
    look = FarLook(4, 80, "[tmux-send] x = 1 ...")  # the clean transcript's lines
    long = eval_lines(spec, call_id, "x = 1\n" * 2000, look)  # on the alternate screen
    assert ("?1049h" in long[0], "?1049l" in long[-1]) == (True, True), long
    clean = [define_line(spec, call_id, look), *eval_lines(spec, call_id, "x = 1\n", look), *long]
    for line in clean:
        for kind in ("START", "END", "ERR", "DEF"):
            assert f"TMUXSEND_{kind}_{call_id}" not in line, line
        assert line.isascii() and line.isprintable()
    for line in typed:
        for kind in ("START", "END", "ERR", "DEF"):  # with this call's id: never typed
            assert f"TMUXSEND_{kind}_{call_id}" not in line, line
        assert line.isascii() and line.isprintable()
    assert typed[-1] == f"__tmux_send_far('{call_id}', __tmux_send_c)"


def test_start_line_keeps_the_command_as_printf_text() -> None:
    line = start_line("bash", "0123456789", b"python3 -q 'x'")
    assert line == (
        " __tmux_send_id=0123456789; __tmux_send_err=/dev/null; __tmux_send_pad=;"
        " printf '\\137__TMUXSEND_START_%s___\\n' 0123456789;"
        " eval \"$(printf 'python3 -q \\047x\\047')\"; __tmux_send_end $? END"
    )
    assert "string collect" in start_line("fish", "0123456789", b"python3")


def _evaluation(out: list[bytes]) -> FarReplEval:
    """An evaluation's stream reader, fed by hand (no tmux is asked anything)."""
    me = os.getpid()
    pane = PaneInfo(
        "%0", me, "/dev/null", False, False, False, 80, 24, "ssh", 0, 0, "off", False, True,
        "/", False, 0,
    )  # fmt: skip
    record = CallRecord("repl_eval", "x", pane, RunOptions(), call_id="e0e0e0e0e0")
    sinks = (out.append, lambda _data: None)
    call = FarReplEval(Tmux("unused"), pane, Gateway(me, "ssh", False), record, sinks, print, None)
    call.start_id = "5a5a5a5a5a"
    return call


@pytest.mark.parametrize("split", range(1, 120, 3))
def test_the_far_shell_after_the_repl_exited_is_not_output(split: int) -> None:
    """The REPL killed mid-evaluation: the far shell prints the start call's end marker
    and its prompt. Whichever reads the stream comes in, stdout ends before them."""
    stream = (
        b"\r\n___TMUXSEND_START_e0e0e0e0e0___\r\nbye\r\n\r\n"
        b"___TMUXSEND_END_5a5a5a5a5a 3______TMUXSEND_ERR_5a5a5a5a5a___\r\n$ "
    )
    out: list[bytes] = []
    call = _evaluation(out)
    try:
        call._feed(stream[:split])
        call._feed(stream[split:])
        call._release()
        call._flush_cleaner()
    finally:
        call.close()
    assert call.repl_exited
    assert b"".join(out) == b"bye\n"
