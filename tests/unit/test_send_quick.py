"""tmux-send's two readers of a command line agree: every line the quick reader
(:mod:`tmux_bridge.cli.send_quick`, no click) takes means what the click command
(:mod:`tmux_bridge.cli.send_options`) makes of it, and the lines it leaves alone are the ones
click refuses or reads differently. Pure: no tmux."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import click
import pytest

from tmux_bridge.cli.request import SendRequest
from tmux_bridge.cli.send_options import build_request, cli
from tmux_bridge.cli.send_quick import quick_request

TOKENS = [
    "--", "-", "true", "ls", "-la", "echo hi", "--json", "--raw", "-p", "--pane",
    "--pane=db", "--pane=", "-pdb", "-p=db", "db", "%3", "-t", "--timeout", "--timeout=5",
    "--timeout=0", "-t5", "--max-time", "--max-time=2.5", "--max-time=.5", "5", "0", "-1",
    "2.", "1e3", "nan", "inf", " 5", "5_0", "0x5", "abc", "--check", "--repl", "python",
    "--screen", "--jso", "--json=1", "--raw=no", "-x", "--help", "-h", "-V", "--guide",
    "--background", "--job", "--job=3f6b", "3f6b", "--all", "--wait", "--kill", "--jobs",
    "--on-timeout", "--on-timeout=detach", "detach", "interrupt", "--all=1", "--first",
]  # fmt: skip


def click_reading(argv: Sequence[str]) -> tuple[SendRequest, bool] | None:
    """What the click command makes of ``argv``: the request and --json; None when it
    refuses the line or it asks for help, version or the guide."""
    try:
        with cli.make_context("tmux-send", list(argv)) as ctx:
            if ctx.params["guide"]:
                return None
            return build_request(ctx.params), ctx.params["as_json"]
    except (click.ClickException, click.exceptions.Exit):
        return None


def quick_reading(argv: Sequence[str]) -> tuple[SendRequest, bool] | None:
    quick = quick_request(argv, {})
    if quick is None:
        return None
    request = SendRequest(
        quick.mode, quick.words, quick.options, pane=quick.pane, job=quick.job,
        everything=quick.everything,
    )  # fmt: skip
    return request, quick.as_json


def assert_agree(argv: Sequence[str]) -> bool:
    """Whether the quick reader took ``argv``; fails when it took it and click reads it
    otherwise or refuses it."""
    quick = quick_reading(argv)
    if quick is not None:
        assert quick == click_reading(argv), argv
    return quick is not None


@pytest.mark.parametrize(
    "argv",
    [
        ["--", "true"],
        ["true"],
        ["ls", "-la"],
        ["-"],
        ["--json", "--", "echo hi"],
        ["-p", "db", "--raw", "--", "ls", "--", "-x"],
        ["--pane=%3", "-t", "5", "--max-time", "2.5", "--json", "--", "true"],
        ["--timeout=.5", "--max-time=300", "make", "test"],
        ["ls", "--json"],  # options end at the command's first word
        ["--background", "--", "sleep", "9"],
        ["--job", "3f6b"],
        ["--job=3f6b", "--all", "--json", "-p", "db"],
        ["--wait", "3f6b", "-t", "5", "--max-time", "60"],
        ["--kill", "3f6b"],
        ["--jobs", "--json"],
        ["--on-timeout", "detach", "-t", "2", "--", "make"],
    ],
)
def test_the_common_lines_are_read_without_click_and_as_click_reads_them(
    argv: list[str],
) -> None:
    assert assert_agree(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--json"],
        [
            "--",
        ],
        ["--help"],
        ["-V"],
        ["--guide"],
        ["--check", "--", "true"],
        ["--repl", "python", "--", "python3"],
        ["--screen"],
        ["-pdb", "--", "true"],
        ["-p=db", "--", "true"],
        ["--pane=", "--", "true"],
        ["-p", "--json", "--", "true"],
        ["--timeout=0", "--", "true"],
        ["-t", "-1", "--", "true"],
        ["-t", "1e3", "--", "true"],
        ["-t", "nan", "--", "true"],
        ["-t", " 5", "--", "true"],
        ["--json", "--json", "--", "true"],
        ["-p", "a", "--pane", "b", "--", "true"],
        ["--raw=no", "--", "true"],
        ["--jso", "--", "true"],
        ["-t"],
        ["--job", "a", "--wait", "b"],
        ["--all", "--", "true"],
        ["--jobs", "--", "true"],
        ["--job", "a", "--", "true"],
        ["--background"],
        ["--on-timeout", "never", "--", "true"],
        ["--on-timeout", "detach", "--job", "a"],
        ["--on-timeout", "detach", "--background", "--", "true"],
    ],
)
def test_every_other_line_is_left_to_click(argv: list[str]) -> None:
    assert quick_reading(argv) is None


def test_shell_completion_is_left_to_click() -> None:
    assert quick_request(["--", "true"], {"_TMUX_SEND_COMPLETE": "bash_complete"}) is None


def test_the_readers_agree_on_every_short_line_of_these_tokens() -> None:
    taken = sum(
        assert_agree(argv)
        for length in range(3)
        for argv in itertools.product(TOKENS, repeat=length)
    )
    assert taken > 100  # the check above compared something


def test_the_readers_agree_on_longer_random_lines() -> None:
    rng = random.Random(20261123)
    taken = sum(
        assert_agree([rng.choice(TOKENS) for _ in range(rng.randint(3, 9))]) for _ in range(10000)
    )
    assert taken > 100
