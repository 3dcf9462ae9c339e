"""The original fish tool's own test suite (third_party/seed-suite, unmodified) against
tmux-bridge's tmux-send, on a private /tmp and tmux socket: every test passes but the
one where tmux-bridge differs on purpose (stderr kept apart)."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from ..support.pane import BIN

pytestmark = pytest.mark.tmux
SUITE = Path(__file__).resolve().parents[2] / "third_party" / "seed-suite"
PASSES = {
    "tmux-send shows helpful error when no bridge",
    "Bridge session started",
    "Simple echo command works",
    "Exit status captured for failing command",
    "Multiline output captured",
    "Multiline input preserved with newlines",
    "Semicolons preserved in command",
    "Command with args works",
    "--timeout flag works",
    "No-output timeout works",  # "Timeout:" in the timeout's account
    "Output correctly truncated",  # --first 10 --last 10
    "REPL mode preserves trailing semicolons",  # --prompt REGEX without --repl
    "Python REPL works",  # the start's output ends with the prompt it waited for
}
# `git rev-parse 72166f794144aee15e1ec25d4c7977cd4c5d312f:test/run.fish` (maxeonyx/tmux-bridge)
RUN_FISH_BLOB = "ed1aecfda3a6ae8ef8cc21b77231aca878796cfe"
DIFFERENCES = {
    # stderr stays apart from stdout (the fish tool read both off the pane's screen)
    "Output not captured correctly",
}


def test_the_seed_suite_passes_but_for_the_deliberate_difference(tmp_path: Path) -> None:
    try:
        run = subprocess.run(
            [str(SUITE / "run-isolated")],
            env={
                "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
                "TMUX_SEND": str(BIN / "tmux-send"),
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the seed suite did not end in 300 s:\n{exc.stdout!r}")
    if run.returncode == 77:
        pytest.skip(run.stderr.strip())
    passed = set(re.findall(r"^✓ (.+)$", run.stdout, re.M))
    failed = set(re.findall(r"^✗ (.+)$", run.stdout, re.M))
    assert (passed, failed) == (PASSES, DIFFERENCES), run.stdout + run.stderr


def test_the_suite_is_the_seed_tools_own_unmodified() -> None:
    data = (SUITE / "test" / "run.fish").read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert blob == RUN_FISH_BLOB  # git's id of test/run.fish at the seed commit
